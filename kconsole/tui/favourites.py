"""Namespace favourites (``1``-``9``), k9s-style: each namespace the user switches to joins the front
of the list (one already there keeps its place, so its digit stays), at most nine, kept in the data
folder so the next console over the same cluster has them."""

from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

#: Digits 1-9.
MAX_FAVOURITES = 9
FILE_NAME = "console-namespaces.json"


class NamespaceFavourites:
    """The list, read from and written to ``<data dir>/console-namespaces.json`` (None: kept in memory)."""

    def __init__(self, data_dir: Path | None) -> None:
        self.path = data_dir / FILE_NAME if data_dir is not None else None
        self.names: list[str] = []
        self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            log.warning("namespace favourites %s unreadable, starting empty: %s", self.path, err)
            return
        names = raw.get("namespaces") if isinstance(raw, dict) else None
        if isinstance(names, list):
            self.names = [n for n in names if isinstance(n, str) and n][:MAX_FAVOURITES]

    def add(self, namespace: str) -> None:
        """Record a namespace the user switched to."""
        if not namespace or namespace in self.names:
            return
        self.names = [namespace, *self.names][:MAX_FAVOURITES]
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"namespaces": self.names}, indent=2) + "\n", encoding="utf-8")
        except OSError as err:
            log.warning("cannot save namespace favourites to %s: %s", self.path, err)

    def at(self, digit: int) -> str | None:
        """The namespace on digit ``1``-``9``, None when there is none yet."""
        return self.names[digit - 1] if 1 <= digit <= len(self.names) else None

    def hint(self) -> str:
        """``1 default  2 kube-system`` for prompts and the status line."""
        return "  ".join(f"{i} {name}" for i, name in enumerate(self.names, 1))
