"""Go's words for bytes that are not what a Go decoder expects, for messages clients compare with
upstream's (``illegal base64 data at input byte 3``, ``invalid character 'x' looking for beginning
of value``). Python's decoders fail at the same places with other words."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

_RAW_URL = re.compile(r"[A-Za-z0-9_-]*")


def b64decode_raw_url(text: str) -> bytes:
    """base64.RawURLEncoding.DecodeString: unpadded, URL alphabet; ValueError with Go's message."""
    bad = _RAW_URL.match(text).end()  # type: ignore[union-attr]
    if bad < len(text):
        raise ValueError(f"illegal base64 data at input byte {bad}")
    if len(text) % 4 == 1:
        raise ValueError(f"illegal base64 data at input byte {len(text) - 1}")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def loads(data: bytes | str) -> Any:
    """json.Unmarshal's syntax errors: ValueError with encoding/json's message."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(syntax_error(err)) from None


def syntax_error(err: json.JSONDecodeError) -> str:
    doc, pos = err.doc, err.pos
    while pos < len(doc) and doc[pos] in " \t\r\n" and err.msg != "Extra data":
        pos += 1
    if pos >= len(doc) or err.msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    char = doc[pos]
    shown = repr(char)[1:-1] if char != "'" else "\\'"
    context = {
        "Expecting value": "looking for beginning of value",
        "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
        "Expecting ':' delimiter": "after object key",
        "Extra data": "after top-level value",
    }.get(err.msg)
    if context is None and err.msg == "Expecting ',' delimiter":
        context = "after array element" if _innermost(doc, pos) == "[" else "after object key:value pair"
    if context is None:
        context = "in string literal"
    return f"invalid character '{shown}' {context}"


def _innermost(doc: str, pos: int) -> str:
    """Whether ``pos`` sits in an array or an object (strings skipped)."""
    stack: list[str] = []
    in_string = escaped = False
    for char in doc[:pos]:
        if in_string:
            escaped = not escaped and char == "\\"
            in_string = escaped or char != '"'
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            stack.append(char)
        elif char in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""
