"""Kubernetes' quantity library: ``quantity("500m")``, ``isQuantity``, and on a Quantity ``sign``,
``isInteger``, ``asInteger``, ``asApproximateFloat``, ``add``, ``sub``, ``compareTo``,
``isGreaterThan``, ``isLessThan``. Values are exact (kconsole's resource.Quantity arithmetic)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from kconsole.objects.quantity import QuantityError, format_quantity, is_quantity, parse_quantity

_MAX_INT64 = 2**63 - 1


class Quantity:
    """A CEL Quantity value: equal to another of the same amount (``1`` == ``1000m``)."""

    __slots__ = ("amount",)

    def __init__(self, amount: Fraction) -> None:
        self.amount = amount

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.amount == other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def __str__(self) -> str:
        return format_quantity(self.amount)

    def __repr__(self) -> str:
        return f"Quantity({self})"


def _quantity(text: Any) -> Any:
    try:
        return Quantity(parse_quantity(str(text)))
    except QuantityError as err:
        return CELEvalError(err.reason)


def _amount(value: Any) -> Fraction | None:
    if isinstance(value, Quantity):
        return value.amount
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(int(value))
    return None


def _operand(name: str) -> Callable[[Any, Any], Any]:
    def apply(q: Any, other: Any) -> Any:
        a, b = _amount(q), _amount(other)
        if not isinstance(q, Quantity) or b is None or a is None:
            return CELEvalError("no such overload")
        return Quantity(a + b if name == "add" else a - b)
    return apply


def _compare(q: Any, other: Any) -> int:
    if not isinstance(q, Quantity) or not isinstance(other, Quantity):
        raise TypeError("no such overload")
    return (q.amount > other.amount) - (q.amount < other.amount)


def _as_integer(q: Any) -> Any:
    amount = q.amount
    if amount.denominator != 1 or not -_MAX_INT64 - 1 <= amount.numerator <= _MAX_INT64:
        return CELEvalError("cannot convert value to integer")
    return celtypes.IntType(amount.numerator)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": lambda text: celtypes.BoolType(is_quantity(str(text))),
    "sign": lambda q: celtypes.IntType((q.amount > 0) - (q.amount < 0)),
    "isInteger": lambda q: celtypes.BoolType(q.amount.denominator == 1
                                             and -_MAX_INT64 - 1 <= q.amount.numerator <= _MAX_INT64),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: celtypes.DoubleType(float(q.amount)),
    "add": _operand("add"),
    "sub": _operand("sub"),
    "compareTo": lambda q, other: celtypes.IntType(_compare(q, other)),
    "isGreaterThan": lambda q, other: celtypes.BoolType(_compare(q, other) > 0),
    "isLessThan": lambda q, other: celtypes.BoolType(_compare(q, other) < 0),
}
