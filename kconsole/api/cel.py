"""CEL, as Kubernetes evaluates it in ValidatingAdmissionPolicies, webhook matchConditions and CRD
``x-kubernetes-validations``.

The library is ``cel-python`` (``celpy``, maintained by Cloud Custodian): a pure-Python
implementation of the CEL specification with its macros (``has``, ``all``, ``exists``,
``exists_one``, ``map``, ``filter``), so no native toolchain is needed where kconsole runs.
Kubernetes' libraries (strings, regex, lists, sets, quantity, URL, IP/CIDR) are in
:mod:`kconsole.api.cellib`; the ``authorizer`` of policies in :mod:`kconsole.api.cellib.authz`.
Programs are compiled once per expression text and kept.

Cost: celpy has no cost tracking, so evaluation runs on a subclass of its tree-walking evaluator
that charges each node as cel-go's runtime cost model does (an identifier, a selection, an
operator or a call 1; a list literal 10, a map literal 30; a macro's body once per element; a
string method a tenth of the characters it walks) and
cancels the evaluation past upstream's limits. The limits are upstream's numbers; celpy is far
slower than cel-go, so an expression near the per-call limit runs for minutes, not 0.1 s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import Evaluator, base_functions

from kconsole.api.cellib import FUNCTIONS as LIBRARY
from kconsole.api.cellib.sets import SETS
from kconsole.api.cellib.strings import go_float


class CELError(Exception):
    """An expression that does not compile, or whose evaluation failed; the text is the message."""


#: upstream's celconfig.PerCallLimit: the cost one evaluation may reach.
PER_CALL_LIMIT = 1_000_000
#: upstream's celconfig.RuntimeCELCostBudget: what all of one policy's (or one object's CRD rules')
#: evaluations may cost together.
RUNTIME_BUDGET = 10_000_000
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"


class CostLimitExceeded(CELError):
    """One evaluation went past its per-call limit (cel-go's cancelled evaluation)."""


class OutOfBudget(CELError):
    """The evaluations sharing one budget spent it all; no further rule is run."""


@dataclass
class Cost:
    """What evaluations have cost so far (kept across the evaluations of one budget); ``stopped``
    once a limit ended them, so that no further rule is run."""

    spent: int = 0
    stopped: bool = False


class _Cancelled(Exception):
    """Raised inside the evaluator when the limit is passed; never leaves this module."""


#: What a node costs, after cel-go's runtime cost model: an identifier, a field selection, an index,
#: an operator or a function call 1, a list literal 10, a map literal 30; literals and the grammar's
#: precedence nodes nothing.
_NODE_COST: dict[str, int] = {
    **dict.fromkeys(("ident", "member_dot", "member_index", "member_dot_arg", "ident_arg", "dot_ident_arg",
                     "dot_ident", "unary_not", "unary_neg"), 1),
    **dict.fromkeys((f"relation_{op}" for op in ("lt", "le", "gt", "ge", "eq", "ne", "in")), 1),
    **dict.fromkeys(("addition_add", "addition_sub", "multiplication_mul", "multiplication_div",
                     "multiplication_mod"), 1),
    "list_lit": 10,
    "map_lit": 30,
}


#: Methods that walk their string receiver (cel-go charges a tenth of its length); ``startsWith`` and
#: ``endsWith`` walk only their argument.
_TRAVERSING = frozenset(("contains", "matches", "lowerAscii", "upperAscii", "split", "replace", "trim", "indexOf",
                         "lastIndexOf", "find", "findAll", "substring", "format", "quote", "reverse"))
_PREFIX = frozenset(("startsWith", "endsWith"))


class _Metered(Evaluator):
    """celpy's tree-walking evaluator, charging each node its :data:`_NODE_COST`. Macro bodies are
    evaluated by sub-evaluators sharing the meter, so ``all``/``map``/``filter`` pay per element, as
    cel-go's comprehensions do."""

    def __init__(self, ast: lark.Tree, activation: Any, cost: Cost, limit: int) -> None:
        super().__init__(ast, activation)
        self.cost = cost
        self.limit = limit

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return _Metered(ast, self.activation, self.cost, self.limit)

    def function_eval(self, name_token: lark.Token, exprlist: Any = None) -> Any:
        """``string(double)`` as cel-go writes a double (celpy writes Python's ``1610612736.0``)."""
        if name_token.value == "string":
            args = list(exprlist or [])
            if len(args) == 1 and isinstance(args[0], celtypes.DoubleType):
                return celtypes.StringType(go_float(float(args[0])))
            exprlist = args
        return super().function_eval(name_token, exprlist)

    def method_eval(self, object: Any, method_ident: lark.Token, exprlist: Any = None) -> Any:
        """A string method pays for the characters it walks, as cel-go's StringTraversalCostFactor."""
        name = method_ident.value
        if name in _TRAVERSING or name in _PREFIX:
            args = list(exprlist or [])
            walked = object if name in _TRAVERSING else (args[0] if args else "")
            if isinstance(walked, str):
                self._charge(math.ceil(0.1 * len(walked)))
            exprlist = args
        return super().method_eval(object, method_ident, exprlist)

    def _charge(self, units: int) -> None:
        self.cost.spent += units
        if self.cost.spent > self.limit:
            raise _Cancelled()

    def _visit_tree(self, tree: lark.Tree) -> Any:
        data = tree.data
        if data == "primary":  # celpy evaluates a primary's ident, call or literal inline
            data = getattr(tree.children[0], "data", "")
        charge = _NODE_COST.get(data)
        if charge:
            self._charge(charge)
        return super()._visit_tree(tree)


FUNCTIONS: dict[str, Callable[..., Any]] = LIBRARY


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
        _check_functions(program.ast)
        if len(_programs) >= _MAX_PROGRAMS:
            _programs.clear()
        _programs[text] = program
    return program


#: Names celpy itself evaluates: the standard functions, conversions and macros.
_BUILTIN_NAMES = frozenset((*base_functions, "has", "dyn", "all", "exists", "exists_one", "map", "filter", "reduce",
                            "min"))


def _check_functions(ast: lark.Tree) -> None:
    """A call of a function no library declares is refused when the expression is compiled, as
    cel-go's checker does (``undeclared reference to 'foo' (in container '')``, at the call's
    opening parenthesis)."""
    for node in ast.iter_subtrees_topdown():
        if node.data == "member_dot_arg":
            token = node.children[1]
        elif node.data in ("ident_arg", "dot_ident_arg"):
            token = node.children[0]
        else:
            continue
        name = str(token)
        if name in _BUILTIN_NAMES or name in FUNCTIONS:
            continue
        line = getattr(token, "line", 1) or 1
        column = (getattr(token, "column", 1) or 1) + len(name)
        raise CELError(f"compilation failed: ERROR: <input>:{line}:{column}: undeclared reference to '{name}' "
                       f"(in container '')")


def to_cel(value: Any) -> Any:
    """A JSON value (object, list, string, number, bool, null) as CEL sees it."""
    return celpy.json_to_cel(value)


def evaluate(text: str, variables: dict[str, Any], cost: Cost | None = None,
             limit: int = PER_CALL_LIMIT, plain: bool = True) -> Any:
    """Evaluate ``text`` over ``variables`` (already CEL values, see :func:`to_cel`); the result as a
    plain Python value (as the CEL value with ``plain=False``). CELError when it fails (a missing
    field, no matching overload); CostLimitExceeded when this evaluation costs more than ``limit``
    (``cost`` adds what it spent)."""
    program = compile_expression(text)
    meter = cost if cost is not None else Cost()
    start = meter.spent
    evaluator = _Metered(program.ast, program.new_activation(), meter, start + limit)
    try:
        result = evaluator.evaluate({"sets": SETS, **variables})
    except _Cancelled:
        raise CostLimitExceeded(COST_LIMIT_EXCEEDED) from None
    except celpy.CELEvalError as err:
        raise CELError(_eval_message(err)) from None
    except (TypeError, ValueError, KeyError, ZeroDivisionError, RecursionError) as err:
        raise CELError(str(err) or type(err).__name__) from None
    if isinstance(result, celpy.CELEvalError):
        raise CELError(_eval_message(result))
    return _plain(result) if plain else result


def evaluate_within(text: str, variables: dict[str, Any], cost: Cost, budget: int = RUNTIME_BUDGET,
                    plain: bool = True) -> Any:
    """:func:`evaluate` under the per-call limit and what remains of ``budget``, checked in upstream's
    order: an evaluation that costs more than what remains is OutOfBudget (whatever else it did),
    then one past the per-call limit is CostLimitExceeded. OutOfBudget stops ``cost``."""
    if cost.stopped:
        raise OutOfBudget(OUT_OF_BUDGET)
    remaining = budget - cost.spent
    start = cost.spent
    try:
        return evaluate(text, variables, cost, limit=min(PER_CALL_LIMIT, max(remaining, 0)), plain=plain)
    except CostLimitExceeded:
        if cost.spent - start > remaining:
            cost.stopped = True
            raise OutOfBudget(OUT_OF_BUDGET) from None
        raise


def _eval_message(err: Exception) -> str:
    text = err.args[0] if err.args else str(err)
    text = str(text)
    if text.startswith("no such member in mapping: "):
        return "no such key: " + text.removeprefix("no such member in mapping: ").strip("'")
    if text.startswith("found no matching overload"):
        return "no matching overload"
    if text.startswith("Attempt to reduce an empty sequence"):  # celpy's own min() on []
        return "min(list) argument must not be empty"
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
