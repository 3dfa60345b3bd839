"""Kubernetes' lists library: ``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError


def _sorted(items: Any) -> celtypes.BoolType:
    values = list(items)
    return celtypes.BoolType(all(a <= b for a, b in zip(values, values[1:])))


def _sum(items: Any) -> Any:
    values = list(items)
    if not values:
        return celtypes.IntType(0)
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[[Any], Any]:
    def extreme(items: Any) -> Any:
        values = list(items)
        if not values:
            return CELEvalError(f"{name}(list) argument must not be empty")
        return pick(values)
    return extreme


def index_of(items: Any, wanted: Any) -> celtypes.IntType:
    for i, value in enumerate(items):
        if value == wanted:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def last_index_of(items: Any, wanted: Any) -> celtypes.IntType:
    values = list(items)
    for i in range(len(values) - 1, -1, -1):
        if values[i] == wanted:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "isSorted": _sorted,
    "sum": _sum,
    "min": _extreme("min", min),
    "max": _extreme("max", max),
}
