"""One-line prompts (``:`` kind, ``/`` filter, namespace) and a pick-one list (fault menu)."""

from __future__ import annotations

from textual import events
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
        self._submitted = False
        self._done = False

    def compose(self) -> ComposeResult:
        from textual.suggester import SuggestFromList

        with Vertical():
            yield Input(value=self.value, placeholder=self.label, id="prompt-input",
                        suggester=SuggestFromList(self.suggestions) if self.suggestions else None)
            if self.hint:
                yield Static(self.hint, id="prompt-hint", markup=False)

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.value = self.value
        field.cursor_position = len(self.value)
        field.focus()
        if self._submitted:
            self.call_after_refresh(self._submit)

    def feed(self, text: str) -> None:
        """Type ``text`` into the field as if typed (a newline submits): keys that came in one burst
        with the key that opened the prompt, before the field could take them, or a paste."""
        line, newline, _ = text.partition("\n")
        line = line.rstrip("\r")
        self.value += line
        if self.is_mounted:
            field = self.query_one(Input)
            field.value += line
            field.cursor_position = len(field.value)
        if newline or text.endswith("\r"):
            self._submitted = True
            if self.is_mounted:
                self._submit()

    def _submit(self) -> None:
        self._finish(self.query_one(Input).value)

    def _finish(self, value: str | None) -> None:
        if not self._done:
            self._done = True
            self.dismiss(value)

    def on_key(self, event: events.Key) -> None:
        """A key that reached the screen rather than the field (it arrived before the field had
        focus): typed into the field, never dropped."""
        if self.is_mounted and self.query_one(Input).has_focus:
            return  # the field's own keys bubbling up
        if event.key == "enter":
            self.feed("\n")
        elif event.key == "backspace":
            if self.is_mounted:
                field = self.query_one(Input)
                field.value = field.value[:-1]
            else:
                self.value = self.value[:-1]
        elif event.is_printable and event.character:
            self.feed(event.character)
        else:
            return
        event.stop()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._finish(event.value)

    def action_cancel(self) -> None:
        self._finish(None)


class ChoiceScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ChoiceScreen { align: center middle; }
    ChoiceScreen > Vertical { width: 90; max-width: 100%; height: auto; max-height: 100%; border: thick $primary;
                              background: $surface; padding: 0 1; }
    ChoiceScreen OptionList { height: auto; max-height: 20; }
    ChoiceScreen.-small OptionList { max-height: 1fr; }
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
        self._fit(self.app.size.height)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.height)

    def _fit(self, height: int) -> None:
        """On a short terminal the list takes what the screen has (and scrolls), not 20 lines."""
        self.set_class(height < 26, "-small")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
