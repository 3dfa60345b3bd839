"""cel-go's strings extension as Kubernetes enables it (version 2): ``charAt``, ``indexOf``,
``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``, ``split``, ``substring``, ``trim``,
``join``, ``quote``, ``reverse``, ``format``; and Kubernetes' regex library: ``find``, ``findAll``."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError


def _s(value: Any) -> str:
    return str(value)


def _split(text: Any, sep: Any, limit: Any = None) -> celtypes.ListType:
    if limit is not None and int(limit) == 0:
        return celtypes.ListType([])
    parts = _s(text).split(_s(sep)) if limit is None or int(limit) < 0 else _s(text).split(_s(sep), int(limit) - 1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _range_error(index: int, size: int) -> CELEvalError:
    return CELEvalError(f"index out of range: {index}")


def _substring(text: Any, start: Any, end: Any = None) -> Any:
    value = _s(text)
    begin = int(start)
    stop = len(value) if end is None else int(end)
    if begin < 0 or begin > len(value):
        return _range_error(begin, len(value))
    if stop < 0 or stop > len(value):
        return _range_error(stop, len(value))
    if stop < begin:
        return CELEvalError(f"invalid substring range. start: {begin}, end: {stop}")
    return celtypes.StringType(value[begin:stop])


def _char_at(text: Any, index: Any) -> Any:
    value, i = _s(text), int(index)
    if i < 0 or i > len(value):
        return _range_error(i, len(value))
    return celtypes.StringType(value[i:i + 1])


def index_of(text: Any, sub: Any, offset: Any = 0) -> Any:
    value, start = _s(text), int(offset)
    if start < 0 or start > len(value):
        return _range_error(start, len(value))
    return celtypes.IntType(value.find(_s(sub), start))


def last_index_of(text: Any, sub: Any, offset: Any = None) -> Any:
    value = _s(text)
    if offset is None:
        return celtypes.IntType(value.rfind(_s(sub)))
    end = int(offset)
    if end < 0 or end >= len(value):
        return _range_error(end, len(value))
    return celtypes.IntType(value.rfind(_s(sub), 0, end + len(_s(sub))))


def _replace(text: Any, old: Any, new: Any, limit: Any = None) -> celtypes.StringType:
    count = -1 if limit is None else int(limit)
    return celtypes.StringType(_s(text).replace(_s(old), _s(new), count))


def _compile(pattern: Any) -> re.Pattern[str] | CELEvalError:
    try:
        return re.compile(_s(pattern))
    except re.error as err:
        return CELEvalError(f"error parsing regexp: {err}")


def _find(text: Any, pattern: Any) -> Any:
    """``"abc 123".find('[0-9]+')``: the first match, or ``""``."""
    compiled = _compile(pattern)
    if isinstance(compiled, CELEvalError):
        return compiled
    found = compiled.search(_s(text))
    return celtypes.StringType(found.group(0) if found else "")


def _find_all(text: Any, pattern: Any, limit: Any = -1) -> Any:
    """``"123 abc 456".findAll('[0-9]+')``: every match (at most ``limit`` when not negative)."""
    compiled = _compile(pattern)
    if isinstance(compiled, CELEvalError):
        return compiled
    count = int(limit)
    if count == 0:
        return celtypes.ListType([])
    out = [celtypes.StringType(m.group(0)) for m in compiled.finditer(_s(text))]
    return celtypes.ListType(out if count < 0 else out[:count])


def _quote(text: Any) -> celtypes.StringType:
    return celtypes.StringType(json.dumps(_s(text), ensure_ascii=False))


def go_float(value: float) -> str:
    """A double as cel-go's ``string()`` writes it (Go's ``strconv.FormatFloat(f, 'g', -1, 64)``):
    the shortest digits, in exponent form below 1e-4 and from 1e6 (``1.610612736e+09``, ``100``)."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    count = len(text)
    point = count + int(exponent)
    power = point - 1
    neg = "-" if sign else ""
    if power < -4 or power >= 6:
        mantissa = text[0] + ("." + text[1:] if count > 1 else "")
        return f"{neg}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{neg}0.{'0' * -point}{text}"
    if point >= count:
        return f"{neg}{text}{'0' * (point - count)}"
    return f"{neg}{text[:point]}.{text[point:]}"


def display(value: Any) -> str:
    """A value as ``%s`` and ``string()`` print it in cel-go."""
    if isinstance(value, celtypes.BoolType):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, celtypes.ListType):
        return "[" + ", ".join(display(v) for v in value) + "]"
    if isinstance(value, celtypes.MapType):
        return "{" + ", ".join(f"{display(k)}: {display(v)}" for k, v in value.items()) + "}"
    if isinstance(value, celtypes.DoubleType):
        return go_float(float(value))
    return str(value)


_VERB = re.compile(r"%(?:\.(\d+))?([sdfeboxX%])")


def _format(template: Any, args: Any) -> Any:
    """``"%s has %d replicas".format([name, n])``: cel-go's format verbs (s, d, f, e, b, o, x, X)."""
    values = list(args) if isinstance(args, list) else []
    out: list[str] = []
    position = 0
    index = 0
    text = _s(template)
    for match in _VERB.finditer(text):
        out.append(text[position:match.start()])
        position = match.end()
        precision, verb = match.group(1), match.group(2)
        if verb == "%":
            out.append("%")
            continue
        if index >= len(values):
            return CELEvalError(f"index {index} out of range")
        value = values[index]
        index += 1
        try:
            if verb == "s":
                out.append(display(value))
            elif verb == "d":
                out.append(str(int(value)) if not isinstance(value, float) else _bad(verb, value))
            elif verb in "fe":
                digits = 6 if precision is None else int(precision)
                out.append(format(float(value), f".{digits}{verb}"))
            elif verb in "boxX":
                number = int(value) if not isinstance(value, (str, bytes)) else None
                if number is None:
                    out.append(value.hex() if isinstance(value, bytes) else _s(value).encode().hex())
                else:
                    out.append(format(number, verb))
        except (TypeError, ValueError) as err:
            return CELEvalError(str(err))
    out.append(text[position:])
    return celtypes.StringType("".join(out))


def _bad(verb: str, value: Any) -> str:
    raise ValueError("error during formatting: decimal clause can only be used on integers, was given double")


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lowerAscii": lambda s: celtypes.StringType("".join(c.lower() if c.isascii() else c for c in _s(s))),
    "upperAscii": lambda s: celtypes.StringType("".join(c.upper() if c.isascii() else c for c in _s(s))),
    "trim": lambda s: celtypes.StringType(_s(s).strip()),
    "split": _split,
    "join": lambda items, sep="": celtypes.StringType(_s(sep).join(_s(i) for i in items)),
    "replace": _replace,
    "substring": _substring,
    "charAt": _char_at,
    "reverse": lambda s: celtypes.StringType(_s(s)[::-1]),
    "quote": _quote,
    "format": _format,
    "find": _find,
    "findAll": _find_all,
}
