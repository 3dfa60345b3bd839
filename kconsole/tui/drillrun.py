"""A drill in the console: the runner over the console's clock and cluster, predictions as dialogs,
steps that wait for the learner.

``kconsole drill NAME`` builds a :class:`DrillSession`: the runner writes the drill's workspace in
its own data folder and builds the cluster (the workspace is the folder the cluster's sync watches,
so an edit there applies as it does for ``kconsole DIR``); the console starts the cluster and then
the session. The runner never moves time: the console's clock runs (``+``/``-`` change its speed).

A prediction opens a dialog with the choices; the step runs after the answer and the panel says
whether it was right. A step whose action a learner can do (apply, delete, patch, scale, kubectl,
fault, heal) waits: its expectations are looked at once per simulated second until they hold (the
learner did it, by key, kubectl or an edit in the workspace) or the learner presses ``x`` (the drill
does it). Every verdict lands in the Drill panel as it is decided.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from kconsole.clock import Clock
from kconsole.drills.runner import DrillRunner, RunResult, StepState
from kconsole.drills.spec import Drill, Prediction, Step

log = logging.getLogger(__name__)

DONE = ("passed", "failed", "skipped")


class DrillSession:
    """One drill run in the console. ``version`` moves whenever the panel would show something new."""

    def __init__(self, drill: Drill, root: Path, clock: Clock, *, seed: int | None = None, watch: bool = True,
                 **config: Any) -> None:
        self.drill = drill
        self.runner = DrillRunner(drill, seed=seed, clock=clock, listener=self._changed,
                                  predictor=self._predict, by_hand=self._wait_for_learner)
        #: The cluster the console shows (built, not started: the console starts it).
        self.cluster = self.runner.prepare(root, watch=watch, **config)
        self.root = root
        self.version = 0
        self.current: StepState | None = None
        #: Step index -> the choice picked (0-based; None: the dialog was closed without one).
        self.answers: dict[int, int | None] = {}
        self.hints: set[int] = set()  # steps whose hint the learner asked for
        self.result: RunResult | None = None
        self.error = ""
        self._go: asyncio.Future[None] | None = None
        self._app: Any = None

    @property
    def workspace(self) -> Path:
        return self.runner.workspace

    @property
    def states(self) -> list[StepState]:
        return self.runner.states

    @property
    def waiting(self) -> bool:
        """A step waits for the learner (or for ``x``)."""
        return self._go is not None and not self._go.done()

    def start(self, app: Any) -> None:
        """Run the drill on ``app``'s loop (the cluster is up: the console started it)."""
        self._app = app
        app.run_worker(self._run(), group="drill", exclusive=True)

    async def _run(self) -> None:
        try:
            self.result = await self.runner.run()
        except Exception as err:  # noqa: BLE001 - the console stays up and says why
            log.exception("drill %s stopped", self.drill.name)
            self.error = f"the drill stopped: {type(err).__name__}: {err}"
            self._say(self.error, "error")
        else:
            if self.result.setup_errors:
                self.error = "setup failed: " + "; ".join(self.result.setup_errors)
                self._say(self.error, "error")
            else:
                failed = sum(s.status == "failed" for s in self.result.steps)
                self._say(f"drill {self.drill.name} " + ("PASSED" if self.result.passed else
                                                        f"FAILED ({failed} of {len(self.result.steps)} steps)"),
                          "information" if self.result.passed else "warning")
        self._bump()

    def _bump(self) -> None:
        self.version += 1

    def _say(self, text: str, severity: str = "information") -> None:
        if self._app is not None:
            self._app.notify(text, severity=severity, timeout=8, markup=False)

    def _changed(self, state: StepState) -> None:
        self.current = state
        if state.status in DONE and state.ended is not None:
            failed = [v for v in state.verdicts if not v.passed]
            text = f"step {state.step.index} {state.status}"
            if state.status == "failed":
                text += ": " + (failed[0].text if failed else state.detail.splitlines()[-1] if state.detail else "")
            self._say(text, "warning" if state.status == "failed" else "information")
        self._bump()

    async def _predict(self, step: Step, prediction: Prediction) -> int | None:
        """Ask in a dialog; the step runs once it is answered (escape: skipped)."""
        from kconsole.tui.screens import ChoiceScreen

        answer: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()

        def answered(value: str | None) -> None:
            if not answer.done():
                answer.set_result(None if value is None else int(value))

        choices = [(str(i), f"{i + 1}. {text}") for i, text in enumerate(prediction.choices)]
        self._app.push_screen(ChoiceScreen(f"Predict (step {step.index}): {prediction.question}", choices),
                              answered)
        picked = await answer
        self.answers[step.index] = picked
        if picked is None:
            self._say(f"step {step.index}: prediction skipped")
        else:
            right = picked == prediction.answer
            self._say(f"you predicted {prediction.choices[picked]!r}: "
                      + ("right" if right else f"wrong, it is {prediction.choices[prediction.answer]!r}")
                      + "; watch the step run", "information" if right else "warning")
        self._bump()
        return picked

    async def _wait_for_learner(self, state: StepState) -> None:
        self._go = asyncio.get_running_loop().create_future()
        self._bump()
        try:
            await self._go
        finally:
            self._go = None
            self._bump()

    def act(self) -> str:
        """``x``: the drill does the waiting step's action. Returns what to tell the learner."""
        if self._go is None or self._go.done():
            if self.current is not None and self.current.status in ("running", "waiting"):
                return f"step {self.current.step.index} runs by itself; nothing waits for you"
            return "no drill step is waiting"
        self._go.set_result(None)
        return f"the drill does step {self.current.step.index if self.current else '?'}"

    def hint(self) -> str:
        """``i``: the current step's hint (it stays in the panel)."""
        state = self.current
        if state is None:
            return "the drill has not started yet"
        if not state.step.hint:
            return f"step {state.step.index} has no hint"
        self.hints.add(state.step.index)
        self._bump()
        return f"hint: {' '.join(state.step.hint.split())}"
