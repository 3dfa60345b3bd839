"""ServiceAccount admission: every new Pod runs as a service account, "default" unless named.

A Pod naming an account that does not exist in its namespace is refused with upstream's Forbidden
("error looking up service account ns/name: serviceaccount "name" not found"): the classic typo a
ReplicaSet then reports as FailedCreate. Unlike upstream, a missing ``default`` account is not
refused: kconsole's API server also runs without the controller-manager that creates it (tests,
benchmarks). Mirror pods (a kubelet's static pods) are left alone, as upstream leaves them.

Where the cluster has a root CA (``AdmissionContext.token_volumes``), a Pod whose account exists
and does not opt out (``automountServiceAccountToken: false`` on the Pod, else on the account) gets
upstream's projected ``kube-api-access-<suffix>`` volume (a bound token, ``kube-root-ca.crt`` and
the namespace), mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount in every
container that does not mount something there already. Its kubelet waits for the ConfigMap as
upstream's does; the simulated containers never read the token, so no token is requested for it.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError
from kconsole.objects.names import GENERATED_SUFFIX_LENGTH, NAME_ALPHABET
from kconsole.objects.pod import is_mirror_pod

DEFAULT_ACCOUNT = "default"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
#: upstream's warnOnlyBoundTokenExpirationSeconds: an hour plus seven seconds.
TOKEN_VOLUME_SECONDS = 3607


def token_volume(name: str) -> dict[str, Any]:
    """upstream's TokenVolumeSource, as the API server stores it (defaults filled in)."""
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_VOLUME_SECONDS, "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}}


def volume_suffix(pod: dict[str, Any]) -> str:
    """Five characters of the names alphabet, from the uid of the Pod's controller (else its own).

    Upstream draws one per Pod. Here the pods of one ReplicaSet or Job share it, because a name per
    Pod makes every spec unique, and the API server remembers validation, managedFields and stored
    encodings by spec bytes for the pods of one template: per-Pod names cut pod creates from ~3,100
    to ~1,100/s. Taken from a uid, not the cluster's seeded generator, so a seed replays the same
    names with or without the volume."""
    meta = pod.get("metadata") or {}
    owner = next((ref.get("uid") for ref in meta.get("ownerReferences") or ()
                  if isinstance(ref, dict) and ref.get("controller") and ref.get("uid")), None)
    digest = hashlib.sha256(str(owner or meta.get("uid") or "").encode()).digest()
    return "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in digest[:GENERATED_SUFFIX_LENGTH])


def mount_token(pod: dict[str, Any]) -> None:
    """upstream's mountServiceAccountToken: mount in every init and regular container lacking a mount
    at the path; add the volume when one of them needed it and the Pod has none of that name yet."""
    spec = pod["spec"]
    volumes = spec.get("volumes") or []
    name = next((v.get("name") for v in volumes if isinstance(v, dict)
                 and str(v.get("name") or "").startswith(TOKEN_VOLUME_PREFIX)), None)
    has_volume = name is not None
    name = name or TOKEN_VOLUME_PREFIX + volume_suffix(pod)
    needed = False
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or ():
            if not isinstance(c, dict):
                continue
            mounts = c.get("volumeMounts") or []
            if any(isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue
            c["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]
            needed = True
    if needed and not has_volume:
        spec["volumes"] = [*volumes, token_volume(name)]


def named_account(pod: dict[str, Any]) -> str | None:
    """The account a new Pod names that admission must find, if any (not "default", not a mirror pod)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if not account or account == DEFAULT_ACCOUNT or not isinstance(account, str):
        return None
    if is_mirror_pod(pod):
        return None
    return account


class ServiceAccount:
    name = "ServiceAccount"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Pod")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.operation != "CREATE" or ctx.subresource or ctx.info.group != "" or ctx.info.kind != "Pod":
            return
        spec = obj.get("spec")
        if not isinstance(spec, dict) or is_mirror_pod(obj):
            return  # upstream leaves a mirror pod's spec alone: the kubelet compares it with its static pod
        named = named_account(obj)
        if named is not None and ctx.get_object("serviceaccounts", ctx.namespace, named) is None:
            meta = obj.get("metadata") or {}
            # Upstream admits before a name is generated from generateName, so its error names the prefix.
            raise StatusError.forbidden("pods", meta.get("generateName") or meta.get("name") or None,
                                        f"error looking up service account {ctx.namespace}/{named}: "
                                        f'serviceaccount "{named}" not found')
        account = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_ACCOUNT
        spec["serviceAccountName"] = account
        spec["serviceAccount"] = account
        if not ctx.token_volumes:
            return
        sa = ctx.get_object("serviceaccounts", ctx.namespace, account)
        if sa is None:
            return
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = sa.get("automountServiceAccountToken")
        if automount is not False:
            mount_token(obj)
