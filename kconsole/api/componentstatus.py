"""v1 ComponentStatus (``kubectl get componentstatuses``, ``cs``): the health of the scheduler, the
controller-manager and etcd, probed on every read and never stored, as upstream's componentstatus
REST answers it. Deprecated upstream since v1.19 yet still served; every answer carries the
deprecation warning kubectl prints.

Upstream lists ``controller-manager`` and ``scheduler`` (their ``/healthz`` on the API server's own
host, ports 10257 and 10259) and ``etcd-0`` (one entry per storage backend: one here, however many
members it has). One kconsole API server stands for every control-plane node, so a component is
healthy while any of its replicas runs: the cluster hands the server a probe
(:meth:`APIServer.set_component_probe`), as it hands it the kubelets' log endpoint. ``etcd-0`` is
healthy while a leader leads a majority (replicated members) or while the store answers (one
member); a failed probe says what upstream's etcd client says when its request times out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kconsole.api.types import Response, StatusError

if TYPE_CHECKING:
    from kconsole.api.registry import ResourceSpec
    from kconsole.api.server import APIServer, _Call

Obj = dict[str, Any]

#: Which components run (any replica): name -> running. Set by the cluster; absent components are
#: not listed (a bare API server in tests has no scheduler or controller-manager).
ComponentProbe = Callable[[], dict[str, bool]]

DEPRECATION = "v1 ComponentStatus is deprecated in v1.19+"

#: The /healthz address upstream probes for each component (its default secure port on loopback).
HEALTHZ = {"controller-manager": "127.0.0.1:10257", "scheduler": "127.0.0.1:10259"}

#: What etcd's client reports when no leader can serve the probe before its deadline.
ETCD_UNREACHABLE = "context deadline exceeded"


def _etcd_error(server: APIServer) -> str:
    """Empty when etcd is healthy, else the probe's error."""
    kv = server.kv
    leader = getattr(kv, "leader", None)
    quorum = getattr(kv, "quorum", None)
    if callable(leader) and callable(quorum):
        return "" if leader() is not None and quorum().ok else ETCD_UNREACHABLE
    ok, message = server.health_checks()["etcd"]  # the last store error /readyz reports
    return "" if ok else message


def statuses(server: APIServer) -> list[Obj]:
    """Every component's ComponentStatus, in upstream's usual order."""
    probe = server._component_probe  # set by the cluster (set_component_probe)
    running = probe() if probe is not None else {}
    out = []
    for name, address in HEALTHZ.items():
        if name in running:
            # An HTTP probe that cannot connect is "Unknown" upstream; kubectl prints it Unhealthy.
            error = "" if running[name] else \
                f'Get "https://{address}/healthz": dial tcp {address}: connect: connection refused'
            out.append(_status(name, error, "Unknown"))
    out.append(_status("etcd-0", _etcd_error(server), "False"))
    return out


def _status(name: str, error: str, failed: str) -> Obj:
    condition: Obj = {"type": "Healthy", "status": failed if error else "True"}
    if error:
        condition["error"] = error
    else:
        condition["message"] = "ok"
    return {"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": name}, "conditions": [condition]}


def answer(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    """get or list; selectors are ignored, as upstream ignores them."""
    req = call.req
    if req.verb not in ("get", "list"):
        raise StatusError.method_not_supported(spec.group_resource, req.verb)
    items = statuses(server)
    if req.verb == "get":
        found = [item for item in items if item["metadata"]["name"] == req.name]
        if not found:
            raise StatusError.not_found(spec.group_resource, req.name or "", spec.group, spec.resource)
        resp = Response(200, found[0])
    else:
        resp = Response(200, {"kind": spec.list_kind, "apiVersion": spec.api_version, "metadata": {},
                              "items": items})
    resp.warnings.append(DEPRECATION)
    return resp
