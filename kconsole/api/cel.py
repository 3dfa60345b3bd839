"""CEL, as Kubernetes evaluates it in ValidatingAdmissionPolicies, webhook matchConditions and CRD
``x-kubernetes-validations``.

The library is ``cel-python`` (``celpy``, maintained by Cloud Custodian): a pure-Python
implementation of the CEL specification with its macros (``has``, ``all``, ``exists``,
``exists_one``, ``map``, ``filter``), so no native toolchain is needed where kconsole runs. Upstream
adds Kubernetes' string extensions; the common ones are registered here (``lowerAscii``,
``upperAscii``, ``trim``, ``split``, ``join``, ``replace``, ``indexOf``, ``lastIndexOf``,
``substring``). Programs are compiled once per expression text and kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import celpy
from celpy import celtypes


class CELError(Exception):
    """An expression that does not compile, or whose evaluation failed; the text is the message."""


def _s(value: Any) -> str:
    return str(value)


def _split(text: Any, sep: Any, limit: Any = None) -> celtypes.ListType:
    parts = _s(text).split(_s(sep)) if limit is None or int(limit) < 0 else _s(text).split(_s(sep), int(limit) - 1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(text: Any, start: Any, end: Any = None) -> celtypes.StringType:
    value = _s(text)
    return celtypes.StringType(value[int(start):] if end is None else value[int(start):int(end)])


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lowerAscii": lambda s: celtypes.StringType(_s(s).lower()),
    "upperAscii": lambda s: celtypes.StringType(_s(s).upper()),
    "trim": lambda s: celtypes.StringType(_s(s).strip()),
    "split": _split,
    "join": lambda items, sep="": celtypes.StringType(_s(sep).join(_s(i) for i in items)),
    "replace": lambda s, old, new: celtypes.StringType(_s(s).replace(_s(old), _s(new))),
    "indexOf": lambda s, sub: celtypes.IntType(_s(s).find(_s(sub))),
    "lastIndexOf": lambda s, sub: celtypes.IntType(_s(s).rfind(_s(sub))),
    "substring": _substring,
}

_env = celpy.Environment()
_programs: dict[str, Any] = {}
#: Compiled programs kept (expressions come from a cluster's few policies).
_MAX_PROGRAMS = 2048


def compile_expression(text: str) -> Any:
    """The program for ``text``; CELError with upstream's "compilation failed" wording otherwise."""
    program = _programs.get(text)
    if program is None:
        if not isinstance(text, str) or not text.strip():
            raise CELError("compilation failed: ERROR: <input>:1:1: Syntax error: mismatched input '<EOF>'")
        try:
            program = _env.program(_env.compile(text), functions=FUNCTIONS)
        except celpy.CELParseError as err:
            detail = str(err).strip().splitlines()
            where = getattr(err, "column", None)
            column = f"1:{where}" if where else "1:1"
            raise CELError(f"compilation failed: ERROR: <input>:{column}: Syntax error: "
                           f"{detail[0] if detail else 'invalid expression'}") from None
        except (RecursionError, ValueError, TypeError, LookupError) as err:  # the parser's own limits
            raise CELError(f"compilation failed: ERROR: <input>:1:1: {type(err).__name__}: "
                           f"expression too complex") from None
        if len(_programs) >= _MAX_PROGRAMS:
            _programs.clear()
        _programs[text] = program
    return program


def to_cel(value: Any) -> Any:
    """A JSON value (object, list, string, number, bool, null) as CEL sees it."""
    return celpy.json_to_cel(value)


def evaluate(text: str, variables: dict[str, Any]) -> Any:
    """Evaluate ``text`` over ``variables`` (already CEL values, see :func:`to_cel`); the result as a
    plain Python value. CELError when it fails (a missing field, no matching overload)."""
    program = compile_expression(text)
    try:
        result = program.evaluate(variables)
    except celpy.CELEvalError as err:
        raise CELError(_eval_message(err)) from None
    except (TypeError, ValueError, KeyError, ZeroDivisionError, RecursionError) as err:
        raise CELError(str(err) or type(err).__name__) from None
    if isinstance(result, celpy.CELEvalError):
        raise CELError(_eval_message(result))
    return _plain(result)


def _eval_message(err: Exception) -> str:
    text = err.args[0] if err.args else str(err)
    text = str(text)
    if text.startswith("no such member in mapping: "):
        return "no such key: " + text.removeprefix("no such member in mapping: ").strip("'")
    if text.startswith("found no matching overload"):
        return "no matching overload"
    if text.startswith("undeclared reference to "):
        return text.split(" (in activation", 1)[0] + " (in container '')"
    return text


def _plain(value: Any) -> Any:
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, (celtypes.IntType, celtypes.UintType)):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.ListType):
        return [_plain(v) for v in value]
    if isinstance(value, celtypes.MapType):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value
