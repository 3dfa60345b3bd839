"""One-line prompts (``:`` kind, ``/`` filter, namespace) and a pick-one list (fault menu)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


class PromptScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PromptScreen { align: center bottom; }
    PromptScreen > Vertical { width: 100%; height: auto; background: $surface; border-top: solid $primary; }
    PromptScreen #prompt-hint { color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(self, label: str, value: str = "", hint: str = "", suggestions: list[str] | None = None) -> None:
        super().__init__()
        self.label = label
        self.value = value
        self.hint = hint
        self.suggestions = suggestions or []

    def compose(self) -> ComposeResult:
        from textual.suggester import SuggestFromList

        with Vertical():
            yield Input(value=self.value, placeholder=self.label, id="prompt-input",
                        suggester=SuggestFromList(self.suggestions) if self.suggestions else None)
            if self.hint:
                yield Static(self.hint, id="prompt-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ChoiceScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ChoiceScreen { align: center middle; }
    ChoiceScreen > Vertical { width: 90; height: auto; max-height: 80%; border: thick $primary;
                              background: $surface; padding: 0 1; }
    ChoiceScreen OptionList { height: auto; max-height: 20; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="choice.cancel")]

    def __init__(self, title: str, choices: list[tuple[str, str]]) -> None:
        """``choices``: (value, label) pairs."""
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, markup=False)
            yield OptionList(*[Option(label, id=value) for value, label in self.choices], id="choices")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
