"""Drill: the steps of the drill being run with their state, the current instruction or question,
a hint on request, and each verdict as it lands (``kconsole drill NAME``)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.widgets import Static

from kconsole.tui.model import ClusterModel
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Fit, Row

COLUMNS = ("#", "Step", "State", "Result")
FITS = {"#": Fit(keep=0), "STEP": Fit(keep=0, shrink_to=16), "STATE": Fit(keep=0),
        "RESULT": Fit(keep=1, shrink_to=16, grow=True)}
#: Step status -> the table's state colour.
STATE = {"pending": None, "running": "pending", "waiting": "warning", "passed": "running", "failed": "failed",
         "skipped": None}
SHOWN = {"waiting": "your turn"}


def step_rows(session: Any) -> list[Row]:
    """One row per step (its state; whether the prediction was right and what its action did), then
    one per verdict under it (ok / FAIL and the verdict's text)."""
    rows: list[Row] = []
    for state in session.states:
        i = state.step.index
        said = [f"predicted {state.prediction}"] if state.prediction in ("right", "wrong") else []
        said += state.detail.splitlines()[:1]
        rows.append(Row(f"step-{i}", (str(i), state.step.name, SHOWN.get(state.status, state.status),
                                      " · ".join(said)), STATE[state.status]))
        for j, v in enumerate(state.verdicts):
            rows.append(Row(f"step-{i}-{j}", ("", "", "ok" if v.passed else "FAIL", " ".join(v.text.split())),
                            "running" if v.passed else "failed"))
    return rows


def guidance(session: Any) -> str:
    """What the learner should read now (markup): the step's instruction, the question's outcome,
    the hint when asked for, and what to do while a step waits."""
    state = session.current
    if state is None:
        return f"[b]{escape(session.drill.title)}[/]\n{escape(' '.join(session.drill.goal.split()))}"
    step = state.step
    lines = [f"[b]step {step.index}/{len(session.states)}: {escape(step.name)}[/]"]
    if step.say:
        lines.append(escape(" ".join(step.say.split())))
    if step.predict is not None:
        picked = session.answers.get(step.index)
        if step.index not in session.answers:
            lines.append(f"predict: {escape(step.predict.question)}")
        elif picked is None:
            lines.append("prediction skipped")
        else:
            right = picked == step.predict.answer
            answer = escape(step.predict.choices[step.predict.answer])
            lines.append(("[b $success]right[/]" if right else f"[b $error]wrong[/]: the answer is {answer}")
                         + (f" · {escape(' '.join(step.predict.explain.split()))}" if step.predict.explain else ""))
    if step.hint and step.index in session.hints:
        lines.append(f"[i]hint: {escape(' '.join(step.hint.split()))}[/]")
    if session.waiting:
        lines.append(f"[b $warning]your turn[/]: do it by hand (keys, kubectl, or a file in "
                     f"{escape(str(session.workspace))}), or [b]x[/] lets the drill do it"
                     + (" · [b]i[/] hint" if step.hint and step.index not in session.hints else ""))
    if session.error:
        lines.append(f"[b $error]{escape(session.error)}[/]")
    elif session.result is not None:
        lines.append("[b $success]drill passed[/]" if session.result.passed else "[b $error]drill failed[/]")
    return "\n".join(lines)


class DrillPanel(Panel):
    title = "Drill"
    fits = FITS
    DEFAULT_CSS = """
    DrillPanel { height: 2fr; }
    DrillPanel > .summary { height: auto; max-height: 10; padding: 0 1; }
    """

    def __init__(self, model: ClusterModel, session: Any, *, id: str | None = "drill") -> None:
        super().__init__(model, id=id)
        self.session = session
        self.summary = Static("", id=f"{id}-summary" if id else None, classes="summary")
        self.table.empty_text = "no steps"

    def compose(self) -> ComposeResult:
        yield self.summary
        yield self.table

    def inputs(self) -> Any:
        return self.session.version

    def rebuild(self) -> None:
        done = sum(s.status in ("passed", "failed", "skipped") for s in self.session.states)
        self.set_title(f"Drill {self.session.drill.name} [{done}/{len(self.session.states)}]")
        self.summary.update(guidance(self.session))
        self.set_rows(COLUMNS, step_rows(self.session))
