"""Kubernetes' CEL libraries on top of cel-python: what upstream's API server declares for
ValidatingAdmissionPolicies, matchConditions and CRD rules.

celpy finds a function or method by its name alone, so each name is registered once and the
functions of a name that several libraries share (``indexOf`` on strings and lists) dispatch on
their receiver. Errors are returned as CEL error values with upstream's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kconsole.api.cellib import authz, lists, net, quantity, sets, strings, urls

FUNCTIONS: dict[str, Callable[..., Any]] = {
    **strings.FUNCTIONS, **lists.FUNCTIONS, **quantity.FUNCTIONS, **net.FUNCTIONS, **urls.FUNCTIONS,
    **authz.FUNCTIONS, **sets.FUNCTIONS,
    "indexOf": lambda target, *args: (lists.index_of if isinstance(target, list) else strings.index_of)(target, *args),
    "lastIndexOf": lambda target, *args: (lists.last_index_of if isinstance(target, list) else
                                          strings.last_index_of)(target, *args),
}
