"""The referee: checkers that watch a run and report a violation with the history that shows it.

Attach it to a running cluster; it records through the API (:mod:`.record`) until detached, then
judges the recording with every checker of :mod:`.checks`. A cluster restart ends one recording and
starts the next (a restored snapshot rewinds revisions: each store epoch is judged on its own).

Use::

    referee = Referee(seed=1)
    await referee.attach(cluster, origin=clock.now())
    ...                                   # the run
    await referee.detach()                # caught up, last reads, checkers
    report = referee.report()             # report.passed, report.violations
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kconsole.client import StatusError
from kconsole.drills.referee.checks import CHECKERS, Violation, final_state
from kconsole.drills.referee.record import WATCHED, Recorder

__all__ = ["CHECKERS", "Referee", "Report", "Violation"]

#: Simulated seconds the watches get at the end to reach the store's revision.
CATCH_UP = 30.0


@dataclass(slots=True)
class Report:
    """The referee's verdict over a run: what it watched and every violation found."""

    violations: list[Violation] = field(default_factory=list)
    checks: tuple[str, ...] = tuple(CHECKERS)
    events: int = 0  # watch events recorded
    answers: int = 0  # acknowledged requests recorded
    probes: int = 0  # resumption probes (of which some answered 410)
    expired_probes: int = 0
    epochs: int = 0

    @property
    def passed(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        probes = f"{self.probes} resumed watches ({self.expired_probes} answered 410)"
        head = (f"referee: {len(self.checks)} checks over {self.events} watch events, {self.answers} answers, "
                f"{probes}")
        if self.passed:
            return f"{head}: no violation"
        return f"{head}: {len(self.violations)} violation(s)"

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": list(self.checks), "events": self.events, "answers": self.answers,
                "probes": self.probes, "expired_probes": self.expired_probes, "epochs": self.epochs,
                "violations": [v.to_dict() for v in self.violations]}


class Referee:
    def __init__(self, *, seed: int = 1, resources: tuple[str, ...] = WATCHED, probes: bool = True) -> None:
        self.seed = seed
        self.resources = resources
        self.probes = probes
        self.recorder: Recorder | None = None
        self._report = Report(violations=[])

    @property
    def attached(self) -> bool:
        return self.recorder is not None

    async def attach(self, cluster: Any, *, origin: float, client: Any = None) -> None:
        """Start recording ``cluster`` (through its API server and an admin client)."""
        assert self.recorder is None, "the referee is attached already"
        rec = Recorder(cluster.api, client or cluster.api_client(), cluster.clock, origin=origin,
                       seed=self.seed + self._report.epochs, resources=self.resources, probes=self.probes)
        await rec.start()
        self.recorder = rec

    async def detach(self) -> list[Violation]:
        """Let the watches catch up, read everything once more, stop recording and judge. Returns this
        epoch's violations (the report keeps them all). Awaited while simulated time moves."""
        rec, self.recorder = self.recorder, None
        if rec is None:
            return []
        found: list[Violation] = []
        try:
            found += await self._last_reads(rec)
        finally:
            await rec.stop()
        for checker in CHECKERS.values():
            found += checker(rec)
        found.sort(key=lambda v: v.time)
        r = self._report
        r.violations += found
        r.events += sum(len(log.changes) for log in rec.logs.values())
        r.answers += len(rec.acks)
        r.probes += sum(log.probes for log in rec.logs.values())
        r.expired_probes += sum(log.expired_probes for log in rec.logs.values())
        r.epochs += 1
        return found

    async def _last_reads(self, rec: Recorder) -> list[Violation]:
        """Each watched resource listed once more: its watch must reach the list's revision, and the
        history there must be what the list says."""
        out = []
        for resource, rlog in rec.logs.items():
            try:
                items, rv = await rec.client.list_pages(resource)
            except StatusError:
                continue  # the API cannot answer now (a fault the run left in place): nothing to compare
            target = int(rv or 0)
            done = False
            try:
                done = await rec.clock.wait_for(self._reach(rec, rlog, target), CATCH_UP)
            except TimeoutError:
                pass
            if not done:
                out.append(Violation("watch stalled", f"the watch on {resource} did not reach rv {target}, the "
                                     f"revision of a last list, within {CATCH_UP:g} s (it stopped at rv {rlog.head})",
                                     rec.now(), [str(c) for c in rlog.changes[-5:]]))
                continue
            out += final_state(rlog, items, target, rec.now())
        return out

    @staticmethod
    async def _reach(rec: Recorder, rlog: Any, target: int) -> bool:
        """Ask for progress until the recording has everything up to ``target`` (a stream that
        restarted meanwhile asks again)."""
        while not await rec.progress(rlog, target):
            await rec.clock.sleep(1.0)
        return True

    def report(self) -> Report:
        return self._report
