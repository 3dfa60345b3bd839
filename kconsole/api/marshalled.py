"""The marshalled bytes of a Pod's final spec, handed from validation to the stored encoding.

Both remember by a spec's marshalled bytes (validation its verdicts, the encoder the spec's JSON
text): without this the same spec was marshalled once for each. Validation of a write runs after
mutating admission, and nothing changes the spec between it and the encoding of that write
(validating admission only reads, managedFields live in metadata), all in one synchronous stretch
of the request; so the encoder takes the bytes validation made, for that very object only, once.
The server clears what a request left untaken (a write refused after validation) before the next
one is admitted.
"""

from __future__ import annotations

from typing import Any

_slot: list[Any] = [None, b""]


def remember(value: Any, data: bytes) -> None:
    """``data`` is ``marshal.dumps(value)`` as validation computed it."""
    _slot[0] = value
    _slot[1] = data


def take(value: Any) -> bytes | None:
    """The remembered bytes when ``value`` is the very object they were made from (then forgotten)."""
    if _slot[0] is not value or value is None:
        return None
    data = _slot[1]
    _slot[0] = None
    _slot[1] = b""
    return data


def forget() -> None:
    _slot[0] = None
    _slot[1] = b""
