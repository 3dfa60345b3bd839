"""``/healthz``, ``/livez`` and ``/readyz``: upstream 1.32's checks, in its order, answered as
k8s.io/apiserver's healthz handler answers them.

Each endpoint runs its checks in order (``?exclude=NAME`` skips one, printed ``[+]NAME excluded: ok``;
an exclude that names no check adds upstream's ``warn:`` line). ``?verbose`` lists every check and
ends ``<endpoint> check passed``; a failure always lists them, reasons withheld, ending ``<endpoint>
check failed`` with 500. ``/readyz/<check>`` runs one check: ``ok``, or 500 ``internal server error:
<reason>``. The checks that mean something in kconsole come from the API server's
``health_checks()`` (the store's etcd state, the watch caches, the bootstrap) and the front's own
shutdown; the other post-start hooks finish when the API server has started, as upstream's do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

#: Checks of /healthz and /livez, in kube-apiserver 1.32's order (default feature gates).
LIVEZ: tuple[str, ...] = (
    "ping", "log", "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/storage-object-count-tracker-hook",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-apiserver-identity-lease-controller",
    "poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
    "poststarthook/start-legacy-token-tracking-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/bootstrap-controller",
    "poststarthook/aggregator-reload-proxy-client-cert",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-status-local-available-controller",
    "poststarthook/apiservice-status-remote-available-controller",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-discovery-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
)
#: /readyz adds etcd-readiness and informer-sync after etcd, and shutdown last.
READYZ: tuple[str, ...] = LIVEZ[:3] + ("etcd-readiness", "informer-sync") + LIVEZ[3:] + ("shutdown",)
ENDPOINTS: dict[str, tuple[str, ...]] = {"healthz": LIVEZ, "livez": LIVEZ, "readyz": READYZ}
#: Checks that read another check's state: etcd-readiness is etcd with the readiness timeout.
_SAME_AS = {"etcd-readiness": "etcd"}
#: What a post-start hook says until the API server has started.
_NOT_FINISHED = "not finished"


def results(endpoint: str, reported: Mapping[str, tuple[bool, str]], started: bool,
            closing: bool) -> list[tuple[str, bool, str]]:
    """Every check of ``endpoint``: (name, ok, reason). ``reported``: the API server's own checks."""
    out: list[tuple[str, bool, str]] = []
    for name in ENDPOINTS[endpoint]:
        if name == "shutdown":
            ok, reason = (not closing, "process is shutting down" if closing else "ok")
        elif name in reported or _SAME_AS.get(name) in reported:
            ok, reason = reported.get(name) or reported[_SAME_AS[name]]
        elif name.startswith("poststarthook/") or name == "autoregister-completion":
            ok, reason = (started, "ok" if started else _NOT_FINISHED)
        else:
            ok, reason = True, "ok"
        out.append((name, bool(ok), reason or "ok"))
    return out


def answer(endpoint: str, single: str | None, verbose: bool, excluded: Iterable[str],
           checks: Callable[[], list[tuple[str, bool, str]]]) -> tuple[int, str]:
    """The status and body of one health request (``single``: the check named after the endpoint)."""
    listed = checks()
    if single is not None:
        for name, ok, reason in listed:
            if name == single:
                return (200, "ok") if ok else (500, f"internal server error: {reason}\n")
        return 404, "404 page not found\n"
    skip = set(excluded)
    lines: list[str] = []
    failed = False
    for name, ok, _ in listed:
        if name in skip:
            skip.discard(name)
            lines.append(f"[+]{name} excluded: ok")
        elif ok:
            lines.append(f"[+]{name} ok")
        else:
            failed = True
            lines.append(f"[-]{name} failed: reason withheld")
    if skip:
        quoted = ", ".join(f'"{name}"' for name in sorted(skip))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    if failed:
        return 500, "\n".join(lines) + f"\n{endpoint} check failed\n"
    if not verbose:
        return 200, "ok"
    return 200, "\n".join(lines) + f"\n{endpoint} check passed\n"
