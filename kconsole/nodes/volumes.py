"""What a pod needs from the API before its containers start, as a kubelet finds out.

The volume manager mounts a pod's volumes before its sandbox: a ConfigMap or Secret volume whose
object (or a listed key) is missing fails ``MountVolume.SetUp`` and the pod waits in
ContainerCreating, retried with back-off, until it appears (or the volume is ``optional``); a
claim that is missing or not Bound cannot even be processed. Then, as each container is created,
its environment is resolved: a ``configMapKeyRef``/``secretKeyRef`` or ``envFrom`` naming a
missing object or key leaves it waiting in ``CreateContainerConfigError``. Messages are upstream's.
The volumes hold nothing: the pods run no processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kconsole.client import SharedInformer
from kconsole.objects.storage import volume_claim

Obj = dict[str, Any]
#: (resource, namespace, name) -> the object from the kubelet's cache, or None
Lookup = Callable[[str, str, str], Obj | None]


@dataclass(slots=True)
class MountProblems:
    #: (volume, error) for volumes whose SetUp failed: a FailedMount event each try
    setup: list[tuple[str, str]] = field(default_factory=list)
    #: (volume, error) for volumes that could not be processed at all (claims)
    unprocessed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def volumes(self) -> list[str]:
        return [v for v, _ in self.setup + self.unprocessed]


def _has_key(obj: Obj, key: str) -> bool:
    return key in (obj.get("data") or {}) or key in (obj.get("binaryData") or {})


def _source_error(kind: str, source: Obj, namespace: str, lookup: Lookup) -> str:
    """A ConfigMap or Secret volume (or projection) source's error, "" when it can be mounted."""
    resource, noun = ("configmaps", "configmap") if kind == "configMap" else ("secrets", "secret")
    name = source.get("name") if kind == "configMap" else source.get("secretName", source.get("name"))
    optional = bool(source.get("optional"))
    obj = lookup(resource, namespace, name or "")
    if obj is None:
        return "" if optional else f'{noun} "{name}" not found'
    for item in source.get("items") or ():
        key = item.get("key", "")
        if not _has_key(obj, key) and not optional:
            return (f"configmap references non-existent config key: {key}" if kind == "configMap"
                    else f"secret references non-existent secret key: {key}")
    return ""


def mount_problems(pod: Obj, lookup: Lookup) -> MountProblems | None:
    """Why the pod's volumes cannot all be mounted now; None when they can."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    namespace = meta.get("namespace") or "default"
    volumes = spec.get("volumes") or ()
    if not volumes:
        return None
    found = MountProblems()
    for vol in volumes:
        name = vol.get("name", "")
        is_claim = volume_claim(meta.get("name", ""), vol)
        if is_claim is not None:
            claim_name = is_claim[0]
            claim = lookup("persistentvolumeclaims", namespace, claim_name)
            if claim is None:
                found.unprocessed.append((name, f"error processing PVC {namespace}/{claim_name}: failed to fetch PVC "
                                                f'from API server: persistentvolumeclaims "{claim_name}" not found'))
            elif (claim.get("status") or {}).get("phase") != "Bound":
                found.unprocessed.append((name, f"error processing PVC {namespace}/{claim_name}: PVC is not bound"))
            continue
        errors = [_source_error(kind, vol[kind], namespace, lookup) for kind in ("configMap", "secret") if kind in vol]
        for source in (vol.get("projected") or {}).get("sources") or ():
            errors += [_source_error(kind, source[kind], namespace, lookup)
                       for kind in ("configMap", "secret") if kind in source]
        errors = [e for e in errors if e]
        if errors:
            found.setup.append((name, ", ".join(errors)))
    return found if found.setup or found.unprocessed else None


def env_error(namespace: str, container: Obj, lookup: Lookup) -> str:
    """Why the container's environment cannot be made (makeEnvironmentVariables), "" when it can."""
    for source in container.get("envFrom") or ():
        for kind, resource, noun in (("configMapRef", "configmaps", "configmap"), ("secretRef", "secrets", "secret")):
            ref = source.get(kind)
            if ref is not None and not ref.get("optional") and lookup(resource, namespace, ref.get("name", "")) is None:
                return f'{noun} "{ref.get("name", "")}" not found'
    for var in container.get("env") or ():
        value_from = var.get("valueFrom") or {}
        for kind, resource, noun, title in (("configMapKeyRef", "configmaps", "configmap", "ConfigMap"),
                                            ("secretKeyRef", "secrets", "secret", "Secret")):
            ref = value_from.get(kind)
            if ref is None or ref.get("optional"):
                continue
            name, key = ref.get("name", ""), ref.get("key", "")
            obj = lookup(resource, namespace, name)
            if obj is None:
                return f'{noun} "{name}" not found'
            if not _has_key(obj, key):
                return f"couldn't find key {key} in {title} {namespace}/{name}"
    return ""


class PodObjects:
    """The kubelet's ConfigMap, Secret and claim managers: caches of the objects pods refer to, fed
    by watches (one set for the whole fleet, see :mod:`kconsole.nodes.fleet`)."""

    RESOURCES = ("configmaps", "secrets", "persistentvolumeclaims")

    def __init__(self, client: Any, clock: Any) -> None:
        self.informers = {r: SharedInformer(client, r, clock=clock) for r in self.RESOURCES}

    async def start(self) -> None:
        for informer in self.informers.values():
            await informer.start()
        for informer in self.informers.values():
            await informer.wait_synced()

    async def stop(self) -> None:
        for informer in self.informers.values():
            await informer.stop()

    def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        return self.informers[resource].get_by_name(namespace, name)
