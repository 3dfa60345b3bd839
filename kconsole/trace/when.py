"""``REV|TIME`` as the trace, replay and fork commands take it.

A plain integer is a revision. A time is an RFC 3339 timestamp of simulated time
(``2026-01-01T10:00:00Z``) or a duration back from the newest revision (``-90s``, ``-5m``, ``-2h``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

_AGO = re.compile(r"^-(\d+(?:\.\d+)?)(s|m|h)$")
_UNIT = {"s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class When:
    revision: int | None = None
    time: float | None = None  # absolute simulated seconds
    ago: float | None = None  # seconds before the newest revision's time


def parse_when(text: str) -> When:
    """Parse ``REV|TIME``; ValueError names what was given and what is accepted."""
    value = text.strip()
    if re.fullmatch(r"\d+", value):
        revision = int(value)
        if revision < 1:
            raise ValueError(f"revision must be at least 1, got {text!r}")
        return When(revision=revision)
    ago = _AGO.match(value)
    if ago:
        return When(ago=float(ago.group(1)) * _UNIT[ago.group(2)])
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is neither a revision (an integer), an RFC 3339 time "
                         "(2026-01-01T10:00:00Z) nor a duration back from now (-90s, -5m, -2h)") from None
    if stamp.tzinfo is None:
        raise ValueError(f"time {text!r} needs a zone (end it with Z for UTC)")
    return When(time=stamp.timestamp())


async def resolve(when: When, history: object) -> int:
    """The revision ``when`` names, through a HistoryClient (a time: the last revision at or before it)."""
    if when.revision is not None:
        return when.revision
    if when.ago is not None:
        bounds = await history.bounds()  # type: ignore[attr-defined]
        return int(await history.revision_at(bounds.current_time - when.ago))  # type: ignore[attr-defined]
    assert when.time is not None
    return int(await history.revision_at(when.time))  # type: ignore[attr-defined]
