"""kube-apiserver's key layout in real etcd, from kconsole's own.

kconsole keys an object ``/registry/<resource>.<group>/<ns>/<name>`` (``/registry/<resource>/...``
for the core group, ``/registry/<group>/<plural>/...`` for custom resources). kube-apiserver drops
the group of built-in resources (``/registry/deployments/default/web``), keeps it in front for
aggregated and extension APIs (``/registry/apiregistration.k8s.io/apiservices/...``) and renames a
few (``minions``, ``services/specs``, ``services/endpoints``, ``ingress``). Against real etcd the
store client writes and reads upstream's keys, so ``etcdctl get --prefix /registry/deployments``
shows what it shows on a kubeadm cluster; everything above the store keeps kconsole's keys.

Only the resource prefix changes: the order of keys under one prefix is the same in both layouts,
so ranges, continue tokens and prefix watches map one to one.
"""

from __future__ import annotations

from kconsole.store.kv import prefix_end

ROOT = "/registry/"
#: Built-in groups whose resources upstream stores without the group.
BUILTIN_GROUPS = frozenset((
    "apps", "autoscaling", "batch", "policy", "coordination.k8s.io", "discovery.k8s.io", "networking.k8s.io",
    "rbac.authorization.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
    "node.k8s.io", "certificates.k8s.io", "flowcontrol.apiserver.k8s.io",
))
#: Groups upstream stores as ``/registry/<group>/<resource>/``.
PREFIXED_GROUPS = frozenset(("apiregistration.k8s.io", "apiextensions.k8s.io", "kconsole.dev"))
#: kconsole's resource segment -> upstream's path under /registry/.
RENAMED = {"nodes": "minions", "services": "services/specs", "endpoints": "services/endpoints",
           "ingresses.networking.k8s.io": "ingress"}


def _upstream(segment: str) -> str | None:
    """Upstream's path for kconsole's resource segment (None: the same)."""
    if segment in RENAMED:
        return RENAMED[segment]
    resource, dot, group = segment.partition(".")
    if not dot:
        return None
    if group in BUILTIN_GROUPS:
        return resource
    if group in PREFIXED_GROUPS:
        return f"{group}/{resource}"
    return None


class KeyLayout:
    """kconsole key <-> upstream key, remembering each resource prefix it has mapped."""

    def __init__(self) -> None:
        self._out: dict[str, str | None] = {}  # kconsole segment -> upstream path (None: same)
        self._back: dict[str, str] = {}  # upstream "/registry/<path>/" -> kconsole "/registry/<segment>/"

    def _segment(self, segment: str) -> str | None:
        try:
            return self._out[segment]
        except KeyError:
            path = self._out[segment] = _upstream(segment)
            if path is not None:
                self._back[f"{ROOT}{path}/"] = f"{ROOT}{segment}/"
            return path

    def to_etcd(self, key: str) -> str:
        if not key.startswith(ROOT):
            return key
        cut = key.find("/", len(ROOT))
        if cut < 0:
            return key
        path = self._segment(key[len(ROOT):cut])
        return key if path is None else f"{ROOT}{path}{key[cut:]}"

    def end_to_etcd(self, end: str | None) -> str | None:
        """A range end: ``prefix_end(P)`` becomes ``prefix_end(to_etcd(P))``."""
        if end is None or not end.startswith(ROOT) or len(end) <= len(ROOT):
            return end
        last = ord(end[-1])
        if last == 0:
            return self.to_etcd(end)
        before = end[:-1] + chr(last - 1)
        mapped = self.to_etcd(before)
        return end if mapped == before else prefix_end(mapped)

    def from_etcd(self, key: str) -> str:
        if not self._back or not key.startswith(ROOT):
            return key
        first = key.find("/", len(ROOT))
        if first < 0:
            return key
        second = key.find("/", first + 1)
        back = self._back
        if second > 0:
            hit = back.get(key[:second + 1])
            if hit is not None:
                return hit + key[second + 1:]
        hit = back.get(key[:first + 1])
        return key if hit is None else hit + key[first + 1:]
