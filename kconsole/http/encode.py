"""Response bodies as compact JSON bytes, with the sections objects repeat encoded once.

The pods of one template answer with the same spec, and the writes of one manager within a second with
the same managedFields: C-encoding those sections was most of the ~25 us a created Pod's answer cost.
A section is looked up by its marshalled bytes (equal bytes, equal value: marshal reads back what it
wrote, in dict order) and its JSON text reused; the result is byte for byte what encoding the whole
object gives.
"""

from __future__ import annotations

import json
import marshal
from typing import Any

from kconsole.api.storage import key_encoder

#: Compact, and without the circular-reference check: API objects are JSON trees (decoded from bytes or built
#: as plain dicts), and skipping the per-container bookkeeping saves ~12% of encoding a pod.
_ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)
_quote = json.encoder.encode_basestring_ascii
#: The C encoder behind ``_ENCODER``, made once: JSONEncoder.encode builds one per call, which is most of
#: the cost of encoding a small value (a name, a label map).
_C_ENCODE = json.encoder.c_make_encoder(None, _ENCODER.default, _quote, None, ":", ",", False, False, True) \
    if json.encoder.c_make_encoder is not None else None

#: Sections remembered (marshalled bytes -> JSON text); cleared when full.
SECTIONS_KEPT = 2048
#: A section larger than this is encoded each time (a rare big ConfigMap is not worth keeping).
SECTION_MAX_BYTES = 16 * 1024

_sections: dict[bytes, str] = {}
_key = key_encoder(_quote)


def _encode(value: Any) -> str:
    if type(value) is str:
        return _quote(value)
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def dumps(body: Any) -> bytes:
    """Compact JSON of any value (a Status, a list, a watch event)."""
    return _encode(body).encode()


def dumps_object(obj: Any) -> bytes:
    """Compact JSON of an API object, byte for byte :func:`dumps`, its repeated sections from memory."""
    if type(obj) is not dict:
        return dumps(obj)
    parts = []
    for key, value in obj.items():
        if type(key) is not str:
            return dumps(obj)
        if type(value) is dict and value:
            if key == "metadata":
                text = _metadata(value)
                if text is None:
                    return dumps(obj)
            else:
                text = _section(value)
        else:
            text = _encode(value)
        parts.append(_key(key) + text)
    return ("{" + ",".join(parts) + "}").encode()


def dumps_list(body: dict[str, Any]) -> bytes:
    """A list of a built-in kind as upstream's typed lists write it: items without ``kind`` and
    ``apiVersion`` (Go's item structs are typed; only unstructured lists, such as a CRD's, carry them).
    Byte for byte :func:`dumps_object` of the list less those two keys of each item."""
    items = body.get("items")
    if type(items) is not list:
        return dumps_object(body)
    bare = []
    for item in items:
        if type(item) is dict:
            item = item.copy()  # shallow: the cache's objects are shared
            item.pop("kind", None)
            item.pop("apiVersion", None)
        bare.append(item)
    return dumps_object({**body, "items": bare})


def _metadata(meta: dict[Any, Any]) -> str | None:
    parts = []
    for key, value in meta.items():
        if type(key) is not str:
            return None
        parts.append(_key(key) + (_section(value) if key == "managedFields" and value else _encode(value)))
    return "{" + ",".join(parts) + "}"


def _section(value: Any) -> str:
    try:
        packed = marshal.dumps(value)
    except ValueError:
        return _encode(value)
    text = _sections.get(packed)
    if text is None:
        text = _encode(value)
        if len(packed) <= SECTION_MAX_BYTES:
            if len(_sections) >= SECTIONS_KEPT:
                _sections.clear()
            _sections[packed] = text
    return text


class WatchLines:
    """Watch events as newline-ended JSON, each event encoded once however many watchers send it.

    The watch cache hands every watcher without selectors the same event dict (``CacheEvent.wire``),
    so its bytes are kept by the dict's identity (the dict itself kept with them, so the identity is
    not reused while remembered), as upstream's cachingObject keeps an event's serialization.
    """

    def __init__(self, kept: int = 4096) -> None:
        self.kept = kept
        self._lines: dict[int, tuple[Any, bytes]] = {}

    def line(self, event: Any) -> bytes:
        hit = self._lines.get(id(event))
        if hit is not None and hit[0] is event:
            return hit[1]
        data = dumps(event) + b"\n"
        if len(self._lines) >= self.kept:
            del self._lines[next(iter(self._lines))]
        self._lines[id(event)] = (event, data)
        return data
