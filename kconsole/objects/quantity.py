"""Resource quantities (``500m``, ``1.5Gi``, ``1e3``) exactly as apimachinery's resource.Quantity.

Parsing follows upstream's ParseQuantity character by character: the value is exact, then
rounded *up* (away from zero) to a whole nano unit, so every quantity is an integer number of
nanos; BinarySI values are capped at 2^63-1 as upstream caps them. Values come back as
:class:`fractions.Fraction` (exact, hashable, ordered); the hot paths :func:`cpu_millis` and
:func:`memory_bytes` return ints from a parse cache, since the same few strings (``100m``,
``128Mi``) are read for every pod on every scheduling pass.

Canonical output (:func:`format_quantity`) is upstream's ``Quantity.String()``: decimal
mantissa with trailing zeros moved into an SI suffix whose exponent is a multiple of three, or
for BinarySI values of at least 1024 that are whole numbers, the largest power-of-1024 suffix.
One deliberate difference: a DecimalSI value beyond the ``E`` suffix prints with an exponent
(``1e21``) where upstream would silently drop the suffix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Union

QuantityLike = Union[str, int, float, Fraction]

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

#: upstream's ErrFormatWrong text, which the API server returns verbatim
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_WRONG = "unable to parse quantity's suffix"

NANO = 10**9
_MAX_INT64 = 2**63 - 1
#: decimal exponents beyond this are refused rather than expanded into huge integers
_MAX_EXPONENT = 1000

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXP = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {e // 10: s for s, e in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


class QuantityError(ValueError):
    """A string that is not a quantity. ``reason`` is upstream's message; ``text`` the input."""

    def __init__(self, text: object, reason: str) -> None:
        super().__init__(f"invalid quantity {text!r}: {reason}")
        self.text = text
        self.reason = reason


def _split(text: str) -> tuple[bool, str, str, str]:
    """upstream parseQuantityString -> (positive, num, denom, suffix); digitless numbers read as 0."""
    positive = True
    pos, end = 0, len(text)
    if text[0] == "-":
        positive = False
        pos = 1
    elif text[0] == "+":
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(text, FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(text: str, suffix: str) -> tuple[int, int, str]:
    """Suffix -> (base, exponent, format), as upstream's suffixer.interpret."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp, DECIMAL_SI
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and body.isdigit() and body.isascii():
            value = int(digits)
            if abs(value) > _MAX_EXPONENT:
                raise QuantityError(text, f"exponent {value} is out of the supported range ±{_MAX_EXPONENT}")
            return 10, value, DECIMAL_EXPONENT
    raise QuantityError(text, SUFFIX_WRONG)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@lru_cache(maxsize=8192)
def _parse_str(text: str) -> tuple[int, str]:
    """-> (value in nanos, format)."""
    if not text:
        raise QuantityError(text, FORMAT_WRONG)
    if text == "0":
        return 0, DECIMAL_SI
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(text, suffix)
    mantissa = int(num + denom)
    if base == 10:
        shift = exponent - len(denom) + 9
        if shift >= 0:
            nanos = mantissa * 10**shift
        elif mantissa and -shift > len(str(mantissa)) + 1:
            nanos = 1
        else:
            nanos = _ceil_div(mantissa, 10**-shift)
    else:
        nanos = _ceil_div(mantissa * (1 << exponent) * NANO, 10 ** len(denom))
        nanos = min(nanos, _MAX_INT64 * NANO)
        if 0 < nanos < NANO:
            fmt = DECIMAL_SI
    return (nanos if positive else -nanos), fmt


def _nanos(q: QuantityLike) -> int:
    if isinstance(q, str):
        return _parse_str(q)[0]
    if isinstance(q, bool):
        raise QuantityError(q, FORMAT_WRONG)
    if isinstance(q, int):
        return q * NANO
    if isinstance(q, Fraction):
        scaled = q * NANO
        return _ceil_div(scaled.numerator, scaled.denominator) if scaled >= 0 else -_ceil_div(
            -scaled.numerator, scaled.denominator
        )
    if isinstance(q, float):
        if q != q or q in (float("inf"), float("-inf")):
            raise QuantityError(q, FORMAT_WRONG)
        return _parse_str(repr(q))[0]
    raise QuantityError(q, FORMAT_WRONG)


def parse_quantity(q: QuantityLike) -> Fraction:
    """Exact value of a quantity string (or a JSON number), rounded up to a nano unit as upstream.

    Raises :class:`QuantityError` (a ValueError) naming the input and upstream's reason.
    """
    return Fraction(_nanos(q), NANO)


def quantity_format(text: str) -> str:
    """The format a string parses as: ``DecimalSI``, ``BinarySI`` or ``DecimalExponent``."""
    return _parse_str(text)[1]


def is_quantity(text: object) -> bool:
    try:
        _nanos(text)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


def milli_value(q: QuantityLike) -> int:
    """The value in thousandths, rounded up (upstream MilliValue): cpu ``"1.5"`` -> 1500."""
    return _ceil_div(_nanos(q), 10**6)


def value(q: QuantityLike) -> int:
    """The value rounded up to an integer (upstream Value): memory ``"1Ki"`` -> 1024."""
    return _ceil_div(_nanos(q), NANO)


def cpu_millis(text: QuantityLike) -> int:
    """Millicores of a cpu quantity: ``"250m"`` -> 250, ``"2"`` -> 2000."""
    return _ceil_div(_nanos(text), 10**6)


def memory_bytes(text: QuantityLike) -> int:
    """Bytes of a memory quantity: ``"128Mi"`` -> 134217728, ``"1G"`` -> 10**9."""
    return _ceil_div(_nanos(text), NANO)


def resource_amount(resource: str, q: QuantityLike) -> int:
    """How the scheduler counts a resource: cpu in millicores, everything else in whole units."""
    return milli_value(q) if resource == "cpu" else value(q)


# --- formatting ---------------------------------------------------------------------------------


def _format_decimal(nanos: int, fmt: str) -> str:
    sign = "-" if nanos < 0 else ""
    mantissa, exp = abs(nanos), -9
    while mantissa >= 10 and mantissa % 10 == 0:
        mantissa //= 10
        exp += 1
    r = exp % 3
    if r:
        mantissa *= 10**r
        exp -= r
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{mantissa}" + (f"e{exp}" if exp else "")
    suffix = _DECIMAL_BY_EXP.get(exp)
    if suffix is None:
        return f"{sign}{mantissa}e{exp}"
    return f"{sign}{mantissa}{suffix}"


def _format_nanos(nanos: int, fmt: str) -> str:
    if nanos == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 * NANO < nanos < 1024 * NANO or nanos % NANO:
            return _format_decimal(nanos, DECIMAL_SI)
        whole = abs(nanos) // NANO
        power = 0
        while power < 6 and whole >= 1024 and whole % 1024 == 0:
            whole //= 1024
            power += 1
        return f"{'-' if nanos < 0 else ''}{whole}{_BINARY_BY_POWER.get(power, '')}"
    return _format_decimal(nanos, fmt)


def format_quantity(q: QuantityLike, fmt: str | None = None) -> str:
    """Canonical string of a quantity, as the API server stores and kubectl shows it.

    A string keeps the format it was written in (``"1.5Gi"`` -> ``"1536Mi"``, ``"1000"`` ->
    ``"1k"``). A number without ``fmt`` reads as BinarySI when it is a whole multiple of 1024
    (``1073741824`` -> ``"1Gi"``) and DecimalSI otherwise (``0.5`` -> ``"500m"``).
    """
    if fmt is not None and fmt not in (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT):
        raise ValueError(f"unknown quantity format {fmt!r}; expected DecimalSI, BinarySI or DecimalExponent")
    if isinstance(q, str):
        nanos, parsed_fmt = _parse_str(q)
        return _format_nanos(nanos, fmt or parsed_fmt)
    nanos = _nanos(q)
    if fmt is None:
        fmt = BINARY_SI if nanos % (1024 * NANO) == 0 else DECIMAL_SI
    return _format_nanos(nanos, fmt)


# --- resource lists -----------------------------------------------------------------------------

ResourceList = Mapping[str, QuantityLike]


def add_resource_lists(*lists: ResourceList | None) -> dict[str, Fraction]:
    """Sum of resource lists (``{"cpu": "100m", "memory": "1Gi"}``); a name missing from one counts as 0."""
    total: dict[str, int] = {}
    for rl in lists:
        if not rl:
            continue
        for res, q in rl.items():
            total[res] = total.get(res, 0) + _nanos(q)
    return {res: Fraction(n, NANO) for res, n in total.items()}


def subtract_resource_lists(a: ResourceList | None, b: ResourceList | None) -> dict[str, Fraction]:
    """``a - b`` per resource; names only in ``b`` appear negated (upstream quota.Subtract)."""
    out = {res: _nanos(q) for res, q in (a or {}).items()}
    for res, q in (b or {}).items():
        out[res] = out.get(res, 0) - _nanos(q)
    return {res: Fraction(n, NANO) for res, n in out.items()}


def max_resource_lists(*lists: ResourceList | None) -> dict[str, Fraction]:
    """Per-resource maximum, as upstream's MaxResourceList (init containers vs. app containers)."""
    out: dict[str, int] = {}
    for rl in lists:
        for res, q in (rl or {}).items():
            n = _nanos(q)
            if res not in out or n > out[res]:
                out[res] = n
    return {res: Fraction(n, NANO) for res, n in out.items()}


def insufficient_resources(requests: ResourceList | None, allocatable: ResourceList | None) -> list[str]:
    """Names whose positive request exceeds what is allocatable (absent counts as 0), sorted."""
    alloc = allocatable or {}
    short = []
    for res, q in (requests or {}).items():
        need = _nanos(q)
        if need > 0 and need > _nanos(alloc.get(res, 0)):
            short.append(res)
    return sorted(short)


def fits(requests: ResourceList | None, allocatable: ResourceList | None) -> bool:
    """Whether every requested resource is within ``allocatable``."""
    return not insufficient_resources(requests, allocatable)


def format_resource_list(rl: ResourceList, fmt: str | None = None) -> dict[str, str]:
    """Canonical strings for every entry (wire form of a ResourceList)."""
    return {res: format_quantity(q, fmt) for res, q in rl.items()}


def resource_list_amounts(rl: ResourceList | None) -> dict[str, int]:
    """``{"cpu": millicores, "memory": bytes, other: units}``, the scheduler's integer view."""
    return {res: resource_amount(res, q) for res, q in (rl or {}).items()}


def sum_quantities(quantities: Iterable[QuantityLike]) -> Fraction:
    return Fraction(sum(_nanos(q) for q in quantities), NANO)
