"""go-humanize's sizes, as etcdctl prints DB SIZE: the console's etcd panel and ``kconsole etcdctl``
show the same figure the same way."""

from __future__ import annotations

import math

_SI = ("B", "kB", "MB", "GB", "TB", "PB", "EB")


def human_bytes(n: int | float) -> str:
    """``humanize.Bytes``: SI units, one decimal below 10 (``9 B``, ``1.2 MB``, ``25 kB``)."""
    n = int(n or 0)
    if n < 10:
        return f"{n} B"
    e = math.floor(math.log(n, 1000))
    val = math.floor(n / 1000**e * 10 + 0.5) / 10
    return f"{val:.1f} {_SI[e]}" if val < 10 else f"{val:.0f} {_SI[e]}"
