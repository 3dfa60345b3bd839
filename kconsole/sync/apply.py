"""Sending documents to the API server with server-side apply, as the sync's own user.

Every document goes through ``client.apply(obj, field_manager="kconsole-sync")`` without force: a
field another manager owns (``kubectl scale``, an HPA) is a conflict to report, not to overwrite.
A file is applied only after every one of its documents passed a server-side dry run, so a broken
document never half-changes what its file applied before. Documents go in dependency order
(Namespaces, then RBAC and config, then workloads), like Helm's install order.

API errors become :class:`~kconsole.sync.parse.SyncError` pointing at the field the server
named (``spec.replicas``), or at the document's first line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kconsole.client import Client, StatusError, is_not_found
from kconsole.clock import Clock
from kconsole.objects.meta import deep_copy
from kconsole.sync.parse import Document, SyncError
from kconsole.sync.report import AppliedObject

FIELD_MANAGER = "kconsole-sync"
#: Simulated seconds between two looks for a kind whose definition the pass just applied.
SERVED_POLL = 0.1

#: Apply order by kind (unlisted kinds go after these, before workloads that use them).
KIND_ORDER = (
    "Namespace", "PriorityClass", "CustomResourceDefinition", "NetworkPolicy", "ResourceQuota", "LimitRange",
    "PodDisruptionBudget", "ServiceAccount", "Secret", "ConfigMap", "StorageClass", "PersistentVolume",
    "PersistentVolumeClaim", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service",
    "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler",
    "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
)
_RANK = {kind: i for i, kind in enumerate(KIND_ORDER)}
_UNLISTED = _RANK["Service"]  # after config and RBAC, before workloads


def apply_rank(kind: str) -> int:
    return _RANK.get(kind, _UNLISTED)


def prepare(client: Client, doc: Document) -> dict[str, Any]:
    """The object as it will be sent: namespace filled in ("default") or dropped as the kind's
    scope says. Raises StatusError for a kind the server does not serve."""
    info = client.resource_info(doc.obj["kind"], doc.obj["apiVersion"])
    return prepare_declared(doc, info.namespaced)


def declared_kinds(docs: Iterable[Document]) -> dict[tuple[str, str], tuple[bool, str]]:
    """(apiVersion, kind) -> (namespaced, file of the definition), for each served version of the
    CustomResourceDefinitions among ``docs``: documents of those kinds wait for their definition
    instead of failing."""
    kinds: dict[tuple[str, str], tuple[bool, str]] = {}
    for doc in docs:
        obj = doc.obj
        if obj.get("kind") != "CustomResourceDefinition" or not str(obj.get("apiVersion", "")).startswith(
                "apiextensions.k8s.io/"):
            continue
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
        versions = spec.get("versions") if isinstance(spec.get("versions"), list) else []
        for version in versions:
            if isinstance(version, dict) and version.get("served", True) and names.get("kind"):
                kinds[(f"{spec.get('group')}/{version.get('name')}", str(names["kind"]))] = (
                    spec.get("scope") != "Cluster", doc.path)
    return kinds


def prepare_declared(doc: Document, namespaced: bool) -> dict[str, Any]:
    """:func:`prepare` with the kind's scope given (its definition is in the folder, not served yet)."""
    obj = deep_copy(doc.obj)
    meta = obj["metadata"]
    if namespaced:
        meta["namespace"] = meta.get("namespace") or "default"
    else:
        meta.pop("namespace", None)
    return obj


async def when_served(client: Client, clock: Clock, doc: Document, timeout: float) -> dict[str, Any]:
    """:func:`prepare` once the server serves the document's kind (its definition was just applied
    and becomes Established shortly); the server's "no matches" error after ``timeout`` simulated s."""
    waited = 0.0
    while True:
        try:
            return prepare(client, doc)
        except StatusError:
            if waited >= timeout:
                raise
        await clock.sleep(SERVED_POLL)
        waited += SERVED_POLL


def error_for(doc: Document, err: StatusError) -> SyncError:
    """The server's answer as ``path:line:column: message``, at the first field it names."""
    field = next((c.get("field", "") for c in err.causes if c.get("field")), "")
    pos = doc.locate(field) if field else doc.locate("kind")
    message = " ".join(line.strip() for line in err.message.splitlines() if line.strip())
    return SyncError(doc.path, pos.line, pos.column, message or err.reason or f"HTTP {err.code}",
                     err.reason, err.code)


def missing_namespace(err: StatusError) -> str | None:
    """The namespace a create was refused for because it does not exist (yet)."""
    details = err.status.get("details") or {}
    if is_not_found(err) and details.get("kind") == "namespaces":
        return str(details.get("name") or "")
    return None


async def dry_run(client: Client, doc: Document, obj: dict[str, Any], declared_namespaces: set[str]) -> None:
    """Server-side dry run; a missing namespace that another document declares counts as fine
    (it will exist by the time this document is applied for real)."""
    try:
        await client.apply(deep_copy(obj), field_manager=FIELD_MANAGER, dry_run=True)
    except StatusError as err:
        if missing_namespace(err) in declared_namespaces:
            return
        raise


async def existed(client: Client, obj: dict[str, Any]) -> bool:
    """Whether the object is already there (then the sync adopts it instead of owning it)."""
    info = client.resource_info(obj["kind"], obj["apiVersion"])
    meta = obj["metadata"]
    resource = f"{info.resource}.{info.group}" if info.group else info.resource
    try:
        await client.get(resource, meta["name"], meta.get("namespace"))
    except StatusError as err:
        if is_not_found(err):
            return False
        raise
    return True


async def apply_object(client: Client, obj: dict[str, Any], created: bool,
                       warnings: list[str] | None = None) -> AppliedObject:
    """Apply ``obj``; the server's warnings (fields its kind does not have, dropped as kubectl's
    default ``--validate`` would have them dropped) go to ``warnings`` naming the object."""
    said: list[str] = []
    result = await client.apply(deep_copy(obj), field_manager=FIELD_MANAGER, field_validation="Warn", warnings=said)
    meta = result.get("metadata") or {}
    applied = AppliedObject(
        api_version=str(result.get("apiVersion") or obj["apiVersion"]), kind=str(result.get("kind") or obj["kind"]),
        namespace=str(meta.get("namespace") or ""), name=str(meta.get("name") or obj["metadata"]["name"]),
        uid=str(meta.get("uid") or ""), resource_version=str(meta.get("resourceVersion") or ""), created=created)
    if warnings is not None:
        where = f"{applied.namespace}/" if applied.namespace else ""
        warnings.extend(f"{applied.kind} {where}{applied.name}: {text}" for text in said)
    return applied
