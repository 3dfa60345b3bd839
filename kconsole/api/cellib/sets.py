"""cel-go's sets extension as Kubernetes enables it: ``sets.contains(list, sublist)``,
``sets.equivalent(list, list)``, ``sets.intersects(list, list)``.

celpy reads ``sets.contains(a, b)`` as a method call on an identifier ``sets``, so ``sets`` is a
variable of every evaluation (:data:`SETS`) and ``contains`` dispatches on it, leaving a string's
or a list's own ``contains`` as celpy has it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes
from celpy.evaluation import function_contains


class Namespace(celtypes.MapType):
    """The ``sets`` identifier: nothing but a receiver for its functions."""

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


SETS = Namespace({})


def _lists(first: Any, second: Any) -> tuple[list[Any], list[Any]]:
    if not isinstance(first, list) or not isinstance(second, list):
        raise TypeError("no such overload")
    return list(first), list(second)


def _contains(target: Any, *args: Any) -> Any:
    if target is SETS and len(args) == 2:
        whole, part = _lists(*args)
        return celtypes.BoolType(all(item in whole for item in part))
    return function_contains(target, *args)


def _equivalent(target: Any, first: Any, second: Any) -> celtypes.BoolType:
    a, b = _lists(first, second)
    return celtypes.BoolType(all(item in b for item in a) and all(item in a for item in b))


def _intersects(target: Any, first: Any, second: Any) -> celtypes.BoolType:
    a, b = _lists(first, second)
    return celtypes.BoolType(any(item in b for item in a))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": _contains,
    "equivalent": _equivalent,
    "intersects": _intersects,
}
