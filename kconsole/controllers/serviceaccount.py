"""ServiceAccounts controller: a ``default`` ServiceAccount in every active namespace.

Pods run as ``default`` unless they name another account, so every namespace needs one; deleting
it brings it back. Terminating namespaces are left alone (their content is on its way out).
"""

from __future__ import annotations

from typing import Any

from kconsole.client import is_already_exists, is_forbidden, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import is_being_deleted

DEFAULT_ACCOUNTS = ("default",)


class ServiceAccountsController(Controller):
    name = "serviceaccount-controller"
    component = ""  # upstream records no events here
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.accounts: tuple[str, ...] = tuple(self.settings().get("accounts", DEFAULT_ACCOUNTS))
        self.namespaces = self.informer("namespaces")
        self.service_accounts = self.informer("serviceaccounts")
        self.namespaces.add_event_handler(on_add=self._on_namespace,
                                          on_update=lambda old, new: self._on_namespace(new))
        self.service_accounts.add_event_handler(on_delete=self._on_account_deleted)

    def _on_namespace(self, ns: dict[str, Any]) -> None:
        self.queue.add(ns["metadata"]["name"])

    def _on_account_deleted(self, sa: dict[str, Any]) -> None:
        meta = sa["metadata"]
        if meta.get("name") in self.accounts and meta.get("namespace"):
            self.queue.add(meta["namespace"])

    async def sync(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if ns is None or is_being_deleted(ns) or (ns.get("status") or {}).get("phase") == "Terminating":
            return
        for account in self.accounts:
            if self.service_accounts.get_by_name(key, account) is not None:
                continue
            try:
                await self.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                          "metadata": {"name": account, "namespace": key}})
            except Exception as err:
                # Already there (our cache lags), or the namespace went away / started terminating.
                if is_already_exists(err) or is_not_found(err) or is_forbidden(err):
                    continue
                raise
