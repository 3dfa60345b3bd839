"""Durations as kubectl prints and parses them.

:func:`format_age` reproduces apimachinery's ``duration.HumanDuration`` (the AGE column: about
two significant figures, ``90s``, ``3m5s``, ``8h``, ``3d``), :func:`format_short_age` its
``ShortHumanDuration``; :func:`event_last_seen` the ``LAST SEEN`` cell of ``kubectl get events``
(``5m (x3 over 10m)``). :func:`parse_duration` reads Go duration strings (``1h30m``, ``300ms``)
as flags and manifests write them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kconsole.objects.meta import parse_time


def format_age(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        s = secs % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def format_short_age(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.ShortHumanDuration (one unit only)."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 60:
        return f"{secs}s"
    if secs // 60 < 60:
        return f"{secs // 60}m"
    hours = secs // 3600
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{hours // 24 // 365}y"


def age_since(timestamp: str | None, now: float) -> str:
    """kubectl's translateTimestampSince: ``<unknown>`` when the timestamp is missing."""
    if not timestamp:
        return "<unknown>"
    return format_age(now - parse_time(timestamp))


def format_last_seen(last_age: str, count: int, first_age: str) -> str:
    """``5m (x3 over 10m)`` for repeated events; the plain age for singletons."""
    return f"{last_age} (x{count} over {first_age})" if count > 1 else last_age


def event_last_seen(event: Mapping[str, Any], now: float) -> str:
    """The LAST SEEN cell of ``kubectl get events`` for a core/v1 Event (series-aware)."""
    first = age_since(event.get("firstTimestamp"), now)
    if not event.get("firstTimestamp"):
        first = age_since(event.get("eventTime"), now)
    last = age_since(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    count = int(event.get("count") or 0)
    series = event.get("series")
    if series:
        last = age_since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1
    return format_last_seen(last, count, first)


def event_last_time(event: Mapping[str, Any]) -> float:
    """When an event was last seen, in seconds: the key to sort events by (never the age text)."""
    series = event.get("series")
    for ts in (
        series.get("lastObservedTime") if series else None,
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        (event.get("metadata") or {}).get("creationTimestamp"),
    ):
        if ts:
            return parse_time(ts)
    return 0.0


_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration -> seconds: ``"1h30m"`` -> 5400.0, ``"-1.5s"`` -> -1.5."""
    orig = text
    if not isinstance(text, str):
        raise ValueError(f"time: invalid duration {orig!r}")
    sign = 1.0
    if text[:1] in "+-" and text:
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise ValueError(f'time: invalid duration "{orig}"')
    total = 0.0
    pos = 0
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        number, unit = m.group(1), m.group(2)  # type: ignore[union-attr]
        if not number or number == ".":
            raise ValueError(f'time: invalid duration "{orig}"')
        if not unit:
            raise ValueError(f'time: missing unit in duration "{orig}"')
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{orig}"')
        total += float(number) * _UNITS[unit]
        pos = m.end()  # type: ignore[union-attr]
    return sign * total


def format_duration(seconds: float) -> str:
    """Go's Duration.String for whole and fractional seconds: ``5400`` -> ``"1h30m0s"``."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    s = abs(seconds)
    if s < 1:
        for unit, scale in (("ms", 1e-3), ("\u00b5s", 1e-6), ("ns", 1e-9)):
            if s >= scale:
                return f"{sign}{_trim(s / scale)}{unit}"
        return f"{sign}{_trim(s / 1e-9)}ns"
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    out = sign
    if hours:
        out += f"{int(hours)}h"
    if hours or minutes:
        out += f"{int(minutes)}m"
    return out + f"{_trim(secs)}s"


def _trim(v: float) -> str:
    text = f"{v:.9f}".rstrip("0").rstrip(".")
    return text or "0"
