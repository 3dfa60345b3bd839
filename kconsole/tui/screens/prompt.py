"""One-line prompts (``:`` kind, ``/`` filter, namespace) and a pick-one list (fault menu)."""

from __future__ import annotations

import weakref

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


class PromptField(Input):
    """The prompt's field. It notes the keys it saw, so the screen can tell a key bubbling up from
    the field from one that reached the screen before the field had focus (asking whether the field
    has focus when the screen gets round to the key dropped those: it usually has by then)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.seen: weakref.WeakSet[events.Key] = weakref.WeakSet()

    def on_key(self, event: events.Key) -> None:
        self.seen.add(event)  # Input's own handler runs next (Textual calls each class's in turn)


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
        #: Typed before the field existed.
        self._early = ""

    def compose(self) -> ComposeResult:
        from textual.suggester import SuggestFromList

        with Vertical():
            yield PromptField(value=self.value, placeholder=self.label, id="prompt-input",
                        suggester=SuggestFromList(self.suggestions) if self.suggestions else None)
            if self.hint:
                yield Static(self.hint, id="prompt-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        if self._early or self._submitted:
            self.call_after_refresh(self._apply_early)

    def feed(self, text: str) -> None:
        """Type ``text`` into the field as if typed (a newline submits): keys that came in one burst
        with the key that opened the prompt, before the field could take them, or a paste."""
        line, newline, _ = text.partition("\n")
        self._early += line.rstrip("\r")
        if newline or text.endswith("\r"):
            self._submitted = True
        self.call_after_refresh(self._apply_early)

    def _apply_early(self) -> None:
        """Put what was typed early into the field (once it is there), then submit if asked."""
        if self._done or not self.is_mounted:
            return
        field = self.query_one(Input)
        if self._early:
            field.value += self._early
            field.cursor_position = len(field.value)
            self._early = ""
        if self._submitted:
            self._finish(field.value)

    def _finish(self, value: str | None) -> None:
        if not self._done:
            self._done = True
            self.dismiss(value)

    def on_key(self, event: events.Key) -> None:
        self.take_key(event)

    def take_key(self, event: events.Key, from_below: bool = False) -> None:
        """A key that reached the screen rather than the field, or (``from_below``) was sent in the
        same burst as the key that opened the prompt and went to the screen underneath: typed into
        the field, never dropped."""
        if self._done or (not from_below and self.is_mounted and event in self.query_one(PromptField).seen):
            return  # the field's own keys bubbling up
        if event.key == "enter":
            self.feed("\n")
        elif event.key == "backspace":
            if self._early:
                self._early = self._early[:-1]
            else:
                field = self.query_one(Input)
                field.value = field.value[:-1]
        elif event.is_printable and event.character:
            self.feed(event.character)
        else:
            return
        event.stop()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self._early or self._submitted:  # a burst: the keys not yet in the field go first
            self._submitted = True
            self.call_after_refresh(self._apply_early)
            return
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
