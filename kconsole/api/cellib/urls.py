"""Kubernetes' URL library: ``url("https://example.com:80/p?q=1")``, ``isURL``, ``getScheme``,
``getHost``, ``getHostname``, ``getPort``, ``getEscapedPath``, ``getQuery``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from celpy import celtypes
from celpy.evaluation import CELEvalError


class URL:
    """A CEL URL value (an absolute URI or an absolute path, as Go's url.ParseRequestURI takes)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __str__(self) -> str:
        return self.text


def _valid(text: str) -> bool:
    if not text or " " in text:
        return False
    if text.startswith("/"):
        return True
    parts = urlsplit(text)
    return bool(parts.scheme) and (bool(parts.netloc) or bool(parts.path) or bool(parts.query))


def _url(value: Any) -> Any:
    text = str(value)
    if not _valid(text):
        return CELEvalError(f"URL parse error during conversion from string: parse {text!r}: invalid URI for request")
    return URL(text)


def _parts(value: Any) -> Any:
    if not isinstance(value, URL):
        raise TypeError("no such overload")
    return urlsplit(value.text)


def _hostname(value: Any) -> str:
    netloc = _parts(value).netloc.rpartition("@")[2]
    if netloc.startswith("["):
        return netloc[1:netloc.index("]")] if "]" in netloc else netloc
    return netloc.rpartition(":")[0] if ":" in netloc else netloc


def _port(value: Any) -> str:
    netloc = _parts(value).netloc.rpartition("@")[2]
    tail = netloc.rpartition("]")[2] if netloc.startswith("[") else netloc
    return tail.rpartition(":")[2] if ":" in tail else ""


def _query(value: Any) -> celtypes.MapType:
    parsed = parse_qs(_parts(value).query, keep_blank_values=True)
    return celtypes.MapType({celtypes.StringType(k): celtypes.ListType([celtypes.StringType(v) for v in vs])
                             for k, vs in parsed.items()})


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "url": _url,
    "isURL": lambda text: celtypes.BoolType(_valid(str(text))),
    "getScheme": lambda value: celtypes.StringType(_parts(value).scheme),
    "getHost": lambda value: celtypes.StringType(_parts(value).netloc.rpartition("@")[2]),
    "getHostname": lambda value: celtypes.StringType(_hostname(value)),
    "getPort": lambda value: celtypes.StringType(_port(value)),
    "getEscapedPath": lambda value: celtypes.StringType(_parts(value).path),
    "getQuery": _query,
}
