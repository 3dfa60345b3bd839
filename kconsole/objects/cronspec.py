"""CronJob schedules checked as kube-apiserver checks them: robfig/cron v3's ParseStandard, its
rules and its words (``end of range (61) above maximum (59): 61``). croniter computes the times; it
accepts and words things differently, so it only runs on schedules this module accepted."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The descriptors as the five fields they stand for.
DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
               "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_INT = re.compile(r"[+-]?[0-9]+")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|ms|s|m|h)")


def every_seconds(text: str) -> float:
    """Go's time.ParseDuration for the positive durations ``@every`` takes ("1m", "1h30m", "90s")."""
    parts = _DURATION_PART.findall(text)
    if not text or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"failed to parse duration @every {text}: time: invalid duration \"{text}\"")
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


@dataclass(frozen=True, slots=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


_MONTHS = {name: i + 1 for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
#: minute, hour, day of month, month, day of week: the standard parser's five fields.
FIELDS = (_Bounds(0, 59), _Bounds(0, 23), _Bounds(1, 31), _Bounds(1, 12, _MONTHS), _Bounds(0, 6, _DAYS))


def check(spec: str) -> str | None:
    """Why ``spec`` is not a schedule, in robfig/cron v3's words; None when it is one."""
    if not spec:
        return "empty spec string"
    if spec.startswith("@"):
        return _descriptor(spec)
    fields = spec.split()
    if len(fields) != len(FIELDS):
        return f"expected exactly {len(FIELDS)} fields, found {len(fields)}: [{' '.join(fields)}]"
    for text, bounds in zip(fields, FIELDS):
        for expr in text.split(","):
            why = _range(expr, bounds)
            if why is not None:
                return why
    return None


def _descriptor(spec: str) -> str | None:
    if spec in DESCRIPTORS:
        return None
    if spec.startswith("@every "):
        try:
            every_seconds(spec[len("@every "):])
        except ValueError as err:
            return str(err)
        return None
    return f"unrecognized descriptor: {spec}"


def _range(expr: str, bounds: _Bounds) -> str | None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    try:
        if low_and_high[0] in ("*", "?"):
            start, end = bounds.low, bounds.high
        else:
            start = _int_or_name(low_and_high[0], bounds.names)
            if len(low_and_high) == 1:
                end = start
            elif len(low_and_high) == 2:
                end = _int_or_name(low_and_high[1], bounds.names)
            else:
                return f"too many hyphens: {expr}"
        if len(range_and_step) == 1:
            step = 1
        elif len(range_and_step) == 2:
            step = _int(range_and_step[1])
            if len(low_and_high) == 1:  # "N/step" means "N-max/step"
                end = bounds.high
        else:
            return f"too many slashes: {expr}"
    except ValueError as err:
        return str(err)
    if start < bounds.low:
        return f"beginning of range ({start}) below minimum ({bounds.low}): {expr}"
    if end > bounds.high:
        return f"end of range ({end}) above maximum ({bounds.high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return None


def _int_or_name(text: str, names: dict[str, int] | None) -> int:
    if names is not None and text.lower() in names:
        return names[text.lower()]
    return _int(text)


def _int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise ValueError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if value < 0:
        raise ValueError(f"negative number ({value}) not allowed: {text}")
    return value
