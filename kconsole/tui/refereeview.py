"""The referee on request in the console: ``R`` starts it over the running cluster, ``R`` again stops
it, judges what it recorded and shows the report (each violation with the history that shows it, or
"no violation" with what was watched).

In a drill (``kconsole drill NAME``) the drill's own referee watches from the boot: the key shows
what it has so far, and its verdict once the drill ended. The referee records through the API
server as a user of its own, so its reads stay apart from the learner's in the API log.
"""

from __future__ import annotations

import io
from typing import Any

from kconsole.api.types import UserInfo
from kconsole.drills.cmd import print_referee
from kconsole.drills.referee import Referee, Report

#: Who the console's referee reads as (it reads everything; the API log shows it by this name).
REFEREE_USER = UserInfo("kconsole:referee", ("system:masters",))


def report_text(report: Report) -> str:
    """The summary line, then each violation with its history (as ``kconsole drill run`` prints it)."""
    out = io.StringIO()
    print_referee(report, out)
    return out.getvalue().rstrip("\n")


def drill_text(referee: Referee) -> str:
    """What a drill's referee can say now: its recording so far while it watches, its verdict after."""
    report = referee.report()
    rec = referee.recorder
    if rec is None:
        return report_text(report) if report.epochs else "the drill's referee has not started yet"
    events = sum(len(log.changes) for log in rec.logs.values())
    head = (f"referee: watching this drill since it began: {events} watch events and {len(rec.acks)} answers "
            f"recorded so far; it judges them when the drill ends")
    return head + ("\n" + report_text(report) if report.epochs else "")


class ConsoleReferee:
    """One referee run over the console's cluster, between two presses of the key."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.referee: Referee | None = None
        #: Starting or judging: a press meanwhile is refused rather than queued.
        self.busy = False

    @property
    def watching(self) -> bool:
        return self.referee is not None

    def available(self) -> str:
        """Why the referee cannot watch this cluster ("" when it can)."""
        if getattr(self.cluster, "api", None) is None or getattr(self.cluster, "clock", None) is None:
            return "the referee needs the cluster's API server in this console"
        return ""

    async def start(self) -> str:
        """Attach a fresh referee to the cluster; returns what to tell the user."""
        self.busy = True
        try:
            referee = Referee(seed=int(getattr(getattr(self.cluster, "config", None), "seed", 1) or 1))
            await referee.attach(self.cluster, origin=self.cluster.clock.now(),
                                 client=self.cluster.api_client(REFEREE_USER))
            self.referee = referee
        finally:
            self.busy = False
        return "referee watching: press R again to stop it and see its report"

    async def stop(self) -> Report:
        """Let its watches catch up, judge the recording, and forget the referee."""
        assert self.referee is not None
        self.busy = True
        try:
            await self.referee.detach()
            return self.referee.report()
        finally:
            self.referee = None
            self.busy = False

    async def close(self) -> None:
        """The console quits: stop recording without judging."""
        referee, self.referee = self.referee, None
        if referee is not None and referee.recorder is not None:
            rec, referee.recorder = referee.recorder, None
            await rec.stop()
