"""Scheduler plugins, one module per plugin; importing this package registers them all.

A new plugin is one new module here: a :class:`~kconsole.scheduler.framework.Plugin` subclass
decorated with :func:`~kconsole.scheduler.framework.register`. Profiles then name it in their
configuration.
"""

from __future__ import annotations

import importlib
import pkgutil

for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")
