"""Root CA certificate publisher: ConfigMap ``kube-root-ca.crt`` in every namespace.

It holds the cluster's CA (``ca.crt``), so a pod can verify the API server it reaches at
``kubernetes.default.svc``: the service-account volume of every pod mounts it upstream. Deleted
or edited, it is put back (its data and its description annotation; other annotations and labels
a user added stay). Terminating namespaces are left alone.

The CA comes from the controller's setting ``root_ca_file`` (upstream's ``--root-ca-file``), which
the cluster points at the CA its HTTPS front serves with. Without one (no TLS front) there is no CA
to publish, and this controller does nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from kconsole.client import is_already_exists, is_forbidden, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import deep_copy, is_being_deleted

log = logging.getLogger(__name__)

CONFIGMAP = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")


class RootCACertPublisher(Controller):
    name = "root-ca-certificate-publisher-controller"
    component = ""  # upstream records no events here
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        path = self.settings().get("root_ca_file")
        self.root_ca = Path(path).read_text(encoding="ascii") if path else ""
        if not self.root_ca:  # nothing to publish: no informers either (no cluster-wide ConfigMap watch)
            log.info("%s: no root CA (the API server serves no TLS): %s is not published", self.name, CONFIGMAP)
            return
        self.namespaces = self.informer("namespaces")
        self.configmaps = self.informer("configmaps")
        self.namespaces.add_event_handler(on_add=self._on_namespace,
                                          on_update=lambda old, new: self._on_namespace(new))
        self.configmaps.add_event_handler(on_update=lambda old, new: self._on_configmap(new),
                                          on_delete=self._on_configmap)

    def _on_namespace(self, ns: dict[str, Any]) -> None:
        self.queue.add(ns["metadata"]["name"])

    def _on_configmap(self, cm: dict[str, Any]) -> None:
        meta = cm["metadata"]
        if meta.get("name") == CONFIGMAP and meta.get("namespace"):
            self.queue.add(meta["namespace"])

    async def sync(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if ns is None or is_being_deleted(ns) or (ns.get("status") or {}).get("phase") == "Terminating":
            return
        data = {"ca.crt": self.root_ca}
        current = self.configmaps.get_by_name(key, CONFIGMAP)
        try:
            if current is None:
                await self.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": CONFIGMAP, "namespace": key,
                                                       "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                                          "data": data})
                return
            annotations = current["metadata"].get("annotations") or {}
            if current.get("data") == data and annotations.get(DESCRIPTION_ANNOTATION):
                return
            cm = deep_copy(current)
            cm["data"] = data
            cm["metadata"]["annotations"] = {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}
            await self.client.update(cm)
        except Exception as err:
            # Our cache lags (already there), or the namespace went away / started terminating.
            if is_already_exists(err) or is_not_found(err) or is_forbidden(err):
                return
            raise
