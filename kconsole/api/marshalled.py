"""Marshalled bytes of a write's sections, handed from the step that made them to the stored encoding.

Validation (its verdicts), managedFields (its trees) and the encoder (the sections' JSON text) all
remember by a section's marshalled bytes, and marshalling is most of what a lookup costs: without
this a Pod's spec was marshalled once for each. Validation of a write runs after mutating admission,
and nothing changes its spec between it and the encoding of that write (validating admission only
reads, managedFields live in metadata), nor the managedFields between their computation and the
encoding, all in one synchronous stretch of the request. So a later step uses the bytes an earlier
one made, for that very object only (held here, so its id is not reused), and the encoder takes them
once. The server clears what a request left untaken (a write refused after validation) before the
next one is admitted.
"""

from __future__ import annotations

from typing import Any

#: At most a few sections of the one write being admitted, by id (the object itself is held).
_handed: dict[int, tuple[Any, bytes]] = {}
_HANDED_SIZE = 8


def remember(value: Any, data: bytes) -> None:
    """``data`` is ``marshal.dumps(value)`` (or the bytes of an object of equal content)."""
    if len(_handed) >= _HANDED_SIZE:
        _handed.clear()
    _handed[id(value)] = (value, data)


def peek(value: Any) -> bytes | None:
    """The remembered bytes when ``value`` is the very object they were handed with."""
    hit = _handed.get(id(value))
    return hit[1] if hit is not None and hit[0] is value else None


def take(value: Any) -> bytes | None:
    """:func:`peek`, then forgotten."""
    hit = _handed.get(id(value))
    if hit is None or hit[0] is not value:
        return None
    del _handed[id(value)]
    return hit[1]


def forget() -> None:
    _handed.clear()
