"""Per-kind object validation (upstream's pkg/apis/*/validation), one module per API group family.

Each validator returns field causes built with :mod:`kconsole.api.validators.field`, whose texts
are upstream's (``Required value``, ``Invalid value: "x": ...``); ``kconsole.api.validation``
dispatches by kind.
"""
