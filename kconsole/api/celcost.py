"""The estimated cost of a CRD's ``x-kubernetes-validations`` rule, checked when the CRD is written
(upstream's ``estimated rule cost exceeds budget by factor of ...``).

cel-go estimates a rule's worst case from its type: how long a string, how many items a list, how
many properties a map can be, from the schema's ``maxLength``, ``maxItems`` and ``maxProperties``,
or, where none is declared, from how many fit in the largest request (3 MiB). This module walks
celpy's parse tree with the same model: an identifier, a selection, an index, an operator or a call
costs 1; a function that traverses a string 1 plus a tenth of its length (``startsWith`` and
``endsWith`` only read their short argument, so they cost 2); a macro (``all``,
``exists``, ``exists_one``, ``map``, ``filter``) its body plus 2 per element. A rule's cost is then
multiplied by how many times it can run (the enclosing lists' and maps' sizes), and the rules of a
schema may cost 100,000,000 together. With strings sized at four bytes per character this meets
upstream's published boundaries (``self.all(x, x.contains('gpu'))`` on strings of ``maxLength``
16 is accepted up to ``maxItems: 909090``), but it is not cel-go's estimator constant for
constant, so a factor printed near a limit can differ from upstream's in its decimals.
"""

from __future__ import annotations

import math
from typing import Any

import lark

Schema = dict[str, Any]

#: upstream's maxRequestSizeBytes: the largest object a request can carry.
MAX_REQUEST_BYTES = 3 * 1024 * 1024
#: upstream's StaticEstimatedCostLimit: what one rule may be estimated to cost.
RULE_COST_LIMIT = 10_000_000
#: upstream's StaticEstimatedCRDCostLimit: what all the rules of one schema may cost together.
SCHEMA_COST_LIMIT = 100_000_000
#: How many of the most expensive rules upstream names when the total is over.
MOST_EXPENSIVE = 4
_MACROS = ("all", "exists", "exists_one", "map", "filter")
_TRAVERSING = ("contains", "matches", "find", "findAll", "split", "lowerAscii",
               "upperAscii", "replace", "trim", "indexOf", "lastIndexOf", "substring", "join", "format", "quote",
               "reverse", "charAt", "url", "isURL", "quantity", "isQuantity")


def min_size(schema: Any) -> int:
    """The fewest bytes a value of ``schema`` takes in JSON (``""``, ``0``, ``{}``, ``[]``, ``true``)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    return {"string": 2, "boolean": 4, "integer": 1, "number": 1, "array": 2, "object": 2}.get(kind or "", 1)


def max_items(schema: Schema) -> int:
    """A list's ``maxItems``, or how many of its smallest items fit in a request."""
    declared = schema.get("maxItems")
    if isinstance(declared, int):
        return declared
    return (MAX_REQUEST_BYTES - 2) // (min_size(schema.get("items")) + 1)


def max_properties(schema: Schema) -> int:
    """A map's ``maxProperties``, or how many ``"": value`` entries fit in a request."""
    declared = schema.get("maxProperties")
    if isinstance(declared, int):
        return declared
    return (MAX_REQUEST_BYTES - 2) // (min_size(schema.get("additionalProperties")) + 4)


def max_length(schema: Any) -> int:
    """A string's size in bytes: four per character of its ``maxLength`` (UTF-8's widest), or what
    fits in a request."""
    if isinstance(schema, dict) and isinstance(schema.get("maxLength"), int):
        return 4 * int(schema["maxLength"])
    return MAX_REQUEST_BYTES - 2


def _elements(shape: Any) -> tuple[Any, int]:
    """(the schema of what a macro iterates over, how many there can be)."""
    if not isinstance(shape, dict):
        return None, 1
    if shape.get("type") == "array":
        return shape.get("items"), max_items(shape)
    if shape.get("type") == "object" and isinstance(shape.get("additionalProperties"), dict):
        return {"type": "string"}, max_properties(shape)
    return None, 1


def _field(shape: Any, name: str) -> Any:
    if not isinstance(shape, dict):
        return None
    props = shape.get("properties")
    if isinstance(props, dict) and name in props:
        return props[name]
    extra = shape.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _call_cost(name: str, receiver: Any) -> int:
    if name in _TRAVERSING and isinstance(receiver, dict) and receiver.get("type") == "string":
        return 1 + math.ceil(0.1 * max_length(receiver))
    return 1


def _args(node: Any) -> list[Any]:
    return [c for c in node.children if isinstance(c, lark.Tree)] if isinstance(node, lark.Tree) else []


def _estimate(node: Any, env: dict[str, Any]) -> tuple[int, Any]:
    """(the most ``node`` can cost, the schema of its value when known)."""
    if not isinstance(node, lark.Tree):
        return 0, None
    data = node.data
    children = node.children
    if data == "primary":
        child = children[0]
        if not isinstance(child, lark.Tree):
            return 0, None
        if child.data == "ident":
            return 1, env.get(str(child.children[0]))
        if child.data == "ident_arg":
            total = 1
            for arg in _args(child.children[1] if len(child.children) > 1 else None):
                cost, shape = _estimate(arg, env)
                total += cost
                if str(child.children[0]) in _TRAVERSING:
                    total += _call_cost(str(child.children[0]), shape) - 1
            return total, None
        if child.data in ("list_lit", "map_lit"):
            return (10 if child.data == "list_lit" else 30) + sum(_estimate(c, env)[0] for c in child.children), None
        return _estimate(child, env)
    if data == "member_dot":
        cost, shape = _estimate(children[0], env)
        return cost + 1, _field(shape, str(children[1]))
    if data == "member_index":
        cost, shape = _estimate(children[0], env)
        index_cost, _ = _estimate(children[1], env)
        element, _ = _elements(shape)
        return cost + index_cost + 1, element
    if data == "member_dot_arg":
        cost, shape = _estimate(children[0], env)
        name = str(children[1])
        args = _args(children[2]) if len(children) > 2 else []
        if name in _MACROS and len(args) == 2:
            element, size = _elements(shape)
            idents = list(args[0].find_data("ident"))
            bound = str(idents[0].children[0]) if idents else ""
            body, _ = _estimate(args[1], {**env, bound: element})
            return cost + 1 + size * (body + 2), None
        return cost + sum(_estimate(a, env)[0] for a in args) + _call_cost(name, shape), None
    total = 0
    shape = None
    trees = [c for c in children if isinstance(c, lark.Tree)]
    for child in trees:
        cost, shape = _estimate(child, env)
        total += cost
    if data.startswith(("relation_", "addition_", "multiplication_", "unary_")):
        total += 1
    return total, shape if len(trees) == 1 else None


def rule_cost(ast: lark.Tree, schema: Schema) -> int:
    """The most one evaluation of a rule on ``self`` (of ``schema``) can cost."""
    return _estimate(ast, {"self": schema, "oldSelf": schema})[0]


def cardinality(schema: Schema, enclosing: int | None) -> int:
    """How many times a rule on ``schema`` can run: the product of the enclosing lists' and maps'
    sizes, or, when one of them is unbounded, how many of the smallest ``schema`` values fit."""
    if enclosing is not None:
        return enclosing
    return MAX_REQUEST_BYTES // (min_size(schema) + 1)


def exceeds_message(cost: int, limit: int = RULE_COST_LIMIT, name: str = "estimated rule cost") -> str:
    """upstream's getCostErrorMessage."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:.6f}x"
    else:
        text = f"{factor:.1f}x"
    return (f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, "
            f"maxProperties, and maxLength where arrays, maps, and strings are declared)")
