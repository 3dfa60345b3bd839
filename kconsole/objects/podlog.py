"""PodLogOptions as the kubelet's log endpoint honours them: the API server parses and validates
a pods/log read's query into :class:`LogOptions`; the simulated kubelet applies them to the lines
it keeps. Stdlib only."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LogOptions:
    follow: bool = False
    #: The previous (terminated) instance of the container instead of the current one.
    previous: bool = False
    tail_lines: int | None = None
    #: Epoch seconds; lines written before it are left out (sinceSeconds / sinceTime).
    since: float | None = None
    #: Each line prefixed with its RFC 3339 (nanosecond) write time and a space.
    timestamps: bool = False
    limit_bytes: int | None = None
