"""The resource table: every kind the API server serves, and how it is stored.

Adding a kind is one :data:`TABLE` entry (plus its defaulting and validation in the pipeline
stages). Resolution of what a user typed (``po``, ``pod``, ``Pod``, ``deployments.apps``) follows
kubectl's preference: the core group first, then the other groups in table order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kconsole.api.types import ResourceInfo, StatusError, status_body

STANDARD_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)

#: Field selectors every resource supports.
META_FIELDS = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True, slots=True)
class ScaleSpec:
    """Where the autoscaling/v1 Scale subresource reads and writes (upstream's paths)."""

    spec_replicas_path: str = "spec.replicas"
    status_replicas_path: str = "status.replicas"
    #: The Scale's status.selector is this label selector, formatted as a string.
    selector_path: str = "spec.selector"


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A :class:`ResourceInfo` plus what the generic store needs to know about the kind."""

    info: ResourceInfo
    list_kind: str
    has_status: bool = False
    scale: ScaleSpec | None = None
    field_selectors: tuple[str, ...] = META_FIELDS
    #: metadata.generation moves when anything but metadata/status changes (apps, batch, policy).
    bump_generation: bool = False
    #: False for review kinds: created, answered, never persisted.
    stored: bool = True
    #: Pods: deletion is graceful (spec.terminationGracePeriodSeconds, default 30).
    graceful_delete: bool = False
    #: Store key prefix when not ``/registry/<group_resource>/`` (custom resources: ``/registry/<group>/<plural>/``).
    storage_prefix: str = ""

    # Derived from ``info`` once: every request reads them several times, and ResourceInfo's
    # api_version and group_resource format their text anew on each read.
    group: str = field(init=False, repr=False, compare=False)
    resource: str = field(init=False, repr=False, compare=False)
    kind: str = field(init=False, repr=False, compare=False)
    namespaced: bool = field(init=False, repr=False, compare=False)
    api_version: str = field(init=False, repr=False, compare=False)
    group_resource: str = field(init=False, repr=False, compare=False)
    #: Store key prefix of every object of this resource (ends with ``/``).
    prefix: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        info = self.info
        for name, value in (("group", info.group), ("resource", info.resource), ("kind", info.kind),
                            ("namespaced", info.namespaced), ("api_version", info.api_version),
                            ("group_resource", info.group_resource),
                            ("prefix", self.storage_prefix or f"/registry/{info.group_resource}/")):
            object.__setattr__(self, name, value)


def _entry(
    group: str,
    version: str,
    resource: str,
    kind: str,
    *,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    scale: bool = False,
    subresources: tuple[str, ...] = (),
    fields: tuple[str, ...] = (),
    generation: bool = False,
    verbs: tuple[str, ...] = STANDARD_VERBS,
    stored: bool = True,
    graceful: bool = False,
) -> ResourceSpec:
    subs = (("status",) if status else ()) + (("scale",) if scale else ()) + subresources
    info = ResourceInfo(
        group=group,
        version=version,
        resource=resource,
        kind=kind,
        singular=kind.lower(),
        namespaced=namespaced,
        verbs=verbs,
        short_names=short,
        categories=categories,
        subresources=subs,
    )
    return ResourceSpec(
        info=info,
        list_kind=kind + "List",
        has_status=status,
        scale=ScaleSpec() if scale else None,
        field_selectors=(META_FIELDS if namespaced else ("metadata.name",)) + fields,
        bump_generation=generation,
        stored=stored,
        graceful_delete=graceful,
    )


ALL = ("all",)

POD_FIELDS = (
    "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
    "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName",
)
EVENT_FIELDS = (
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
    "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
    "reason", "reportingComponent", "source", "type",
)

TABLE: tuple[ResourceSpec, ...] = (
    # No deletecollection, as upstream: a namespace is deleted one at a time.
    _entry("", "v1", "namespaces", "Namespace", namespaced=False, short=("ns",), status=True,
           subresources=("finalize",), fields=("status.phase",),
           verbs=tuple(v for v in STANDARD_VERBS if v != "deletecollection")),
    _entry("", "v1", "nodes", "Node", namespaced=False, short=("no",), status=True, fields=("spec.unschedulable",),
           subresources=("proxy",)),
    _entry("", "v1", "pods", "Pod", short=("po",), categories=ALL, status=True,
           subresources=("binding", "eviction", "log", "ephemeralcontainers", "exec", "attach", "portforward", "proxy"),
           fields=POD_FIELDS, graceful=True),
    _entry("", "v1", "services", "Service", short=("svc",), categories=ALL, status=True, subresources=("proxy",)),
    _entry("", "v1", "endpoints", "Endpoints", short=("ep",)),
    _entry("", "v1", "configmaps", "ConfigMap", short=("cm",)),
    _entry("", "v1", "secrets", "Secret", fields=("type",)),
    _entry("", "v1", "serviceaccounts", "ServiceAccount", short=("sa",), subresources=("token",)),
    _entry("", "v1", "events", "Event", short=("ev",), fields=EVENT_FIELDS),
    _entry("", "v1", "podtemplates", "PodTemplate"),
    # The older form of pods/binding, create only (the scheduler's RBAC grants both).
    _entry("", "v1", "bindings", "Binding", verbs=CREATE_ONLY, stored=False),
    # Claims and volumes: bound by the persistentvolume-binder-controller, dynamically provisioned by
    # kconsole's local-path provisioner (controllers/persistentvolume.py). kubectl's default --prune
    # allowlist lists them: prune failed with 'no matches for kind "PersistentVolumeClaim"' without them.
    _entry("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short=("pvc",), status=True),
    _entry("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, short=("pv",), status=True),
    _entry("", "v1", "replicationcontrollers", "ReplicationController", short=("rc",), categories=ALL,
           status=True, scale=True, generation=True),
    # Enforced by the LimitRanger and ResourceQuota admission plugins; the resourcequota-controller keeps status.
    _entry("", "v1", "resourcequotas", "ResourceQuota", short=("quota",), status=True),
    _entry("", "v1", "limitranges", "LimitRange", short=("limits",)),
    # Deprecated upstream (v1.19) but served: probed on each read, never stored (api/componentstatus.py).
    _entry("", "v1", "componentstatuses", "ComponentStatus", namespaced=False, short=("cs",), verbs=("get", "list"),
           stored=False),
    _entry("apps", "v1", "deployments", "Deployment", short=("deploy",), categories=ALL, status=True, scale=True,
           generation=True),
    _entry("apps", "v1", "replicasets", "ReplicaSet", short=("rs",), categories=ALL, status=True, scale=True,
           generation=True, fields=("status.replicas",)),
    _entry("apps", "v1", "daemonsets", "DaemonSet", short=("ds",), categories=ALL, status=True, generation=True),
    _entry("apps", "v1", "statefulsets", "StatefulSet", short=("sts",), categories=ALL, status=True, scale=True,
           generation=True),
    # Served for the StatefulSet and DaemonSet controllers' revision history (kubectl rollout history/undo).
    _entry("apps", "v1", "controllerrevisions", "ControllerRevision"),
    _entry("batch", "v1", "jobs", "Job", categories=ALL, status=True, generation=True, fields=("status.successful",)),
    _entry("batch", "v1", "cronjobs", "CronJob", short=("cj",), categories=ALL, status=True, generation=True),
    _entry("coordination.k8s.io", "v1", "leases", "Lease"),
    _entry("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
    _entry("networking.k8s.io", "v1", "ingresses", "Ingress", short=("ing",), status=True, generation=True),
    _entry("networking.k8s.io", "v1", "ingressclasses", "IngressClass", namespaced=False),
    # Enforced by nothing, as on a cluster whose network plugin does not implement NetworkPolicy.
    _entry("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short=("netpol",), generation=True),
    _entry("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _entry("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _entry("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _entry("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False),
    _entry("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", namespaced=False,
           verbs=CREATE_ONLY, stored=False),
    _entry("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False,
           verbs=CREATE_ONLY, stored=False),
    _entry("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", namespaced=False,
           verbs=CREATE_ONLY, stored=False),
    _entry("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview",
           verbs=CREATE_ONLY, stored=False),
    _entry("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", namespaced=False,
           verbs=CREATE_ONLY, stored=False),
    _entry("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", namespaced=False, verbs=CREATE_ONLY,
           stored=False),
    _entry("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short=("hpa",),
           categories=ALL, status=True),
    _entry("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short=("pdb",), status=True,
           generation=True),
    _entry("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False, short=("pc",)),
    _entry("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False, short=("sc",)),
    # Served for CSI drivers and tools that read them; kconsole's local-path provisioner is not a CSI driver,
    # so nothing creates them, as on a cluster without CSI drivers installed.
    _entry("storage.k8s.io", "v1", "csidrivers", "CSIDriver", namespaced=False),
    _entry("storage.k8s.io", "v1", "csinodes", "CSINode", namespaced=False),
    _entry("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity"),
    _entry("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", namespaced=False, status=True),
    # Admission sets a Pod's overhead and scheduling constraints from its RuntimeClass (admission/runtimeclass.py).
    _entry("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False),
    # Approved with kubectl certificate approve (the approval subresource); signed by the csrsigning controller.
    _entry("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", namespaced=False,
           short=("csr",), status=True, subresources=("approval",), fields=("spec.signerName",)),
    # The API Priority and Fairness configuration objects, the defaults created at start (api/flowcontrol.py).
    _entry("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema", namespaced=False, status=True),
    _entry("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "PriorityLevelConfiguration",
           namespaced=False, status=True),
    # Dynamic admission (api/admission/dynamic.py): CEL policies and the user's HTTPS webhooks.
    _entry("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy",
           namespaced=False, status=True, categories=("api-extensions",), generation=True),
    _entry("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
           "ValidatingAdmissionPolicyBinding", namespaced=False, categories=("api-extensions",)),
    _entry("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
           "ValidatingWebhookConfiguration", namespaced=False, categories=("api-extensions",)),
    _entry("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
           namespaced=False, categories=("api-extensions",)),
    _entry("apiregistration.k8s.io", "v1", "apiservices", "APIService", namespaced=False, status=True,
           categories=("api-extensions",)),
    _entry("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", verbs=("get", "list"), stored=False),
    _entry("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", namespaced=False, verbs=("get", "list"),
           stored=False),
    _entry("kconsole.dev", "v1", "schedulingdecisions", "SchedulingDecision", short=("sd",),
           categories=("kconsole",)),
    # History reads (api/history.py): created and answered, never stored, as access reviews are.
    _entry("history.kconsole.io", "v1", "historyqueries", "HistoryQuery", namespaced=False, verbs=CREATE_ONLY,
           stored=False),
)

#: The Scale kind served by every ``*/scale`` subresource (as kubectl's discovery expects).
SCALE_INFO = ResourceInfo(group="autoscaling", version="v1", resource="scale", kind="Scale", singular="scale",
                          namespaced=True, verbs=("get", "patch", "update"))

#: Built-in PriorityClasses created at bootstrap, as upstream.
BUILTIN_PRIORITY_CLASSES = (("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000))


class Registry:
    """Lookup over :data:`TABLE` by (group, resource), kind, or anything a user may type."""

    def __init__(self, table: tuple[ResourceSpec, ...] = TABLE) -> None:
        self._index(table)

    def _index(self, table: tuple[ResourceSpec, ...]) -> None:
        self.specs = table
        self._by_gr: dict[tuple[str, str], ResourceSpec] = {}
        self._by_kind: dict[tuple[str, str], ResourceSpec] = {}
        self._aliases: dict[str, list[ResourceSpec]] = {}
        for spec in table:
            info = spec.info
            self._by_gr[(info.group, info.resource)] = spec
            self._by_kind[(info.group, info.kind)] = spec
            for alias in (info.resource, info.singular, info.kind.lower(), *info.short_names):
                bucket = self._aliases.setdefault(alias, [])
                if spec not in bucket:
                    bucket.append(spec)
        order = {id(spec): i for i, spec in enumerate(table)}
        for bucket in self._aliases.values():
            # Upstream's preference: the legacy core group wins, then table order.
            bucket.sort(key=lambda s: (s.info.group != "", order[id(s)]))

    def add(self, spec: ResourceSpec) -> None:
        """Serve ``spec`` from now on (a custom resource); it replaces one of the same group and resource."""
        kept = tuple(s for s in self.specs if (s.group, s.resource) != (spec.group, spec.resource))
        self._index(kept + (spec,))

    def remove(self, group: str, resource: str) -> ResourceSpec | None:
        """Stop serving a resource added at run time; the spec it had, if any."""
        gone = self._by_gr.get((group, resource))
        if gone is not None:
            self._index(tuple(s for s in self.specs if s is not gone))
        return gone

    def __iter__(self) -> Iterator[ResourceSpec]:
        return iter(self.specs)

    def get(self, group: str, resource: str) -> ResourceSpec | None:
        return self._by_gr.get((group, resource))

    def for_kind(self, api_version: str, kind: str) -> ResourceSpec | None:
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        return self._by_kind.get((group, kind))

    def resolve(self, resource: str, group: str | None = None, version: str | None = None) -> ResourceSpec:
        """The spec for what a request names; 404 NotFound as upstream when nothing matches."""
        spec: ResourceSpec | None = None
        if group is not None:
            spec = self._by_gr.get((group, resource))
            if spec is None:
                for candidate in self._aliases.get(resource.lower(), ()):
                    if candidate.group == group:
                        spec = candidate
                        break
        else:
            name = resource.lower()
            candidates = self._aliases.get(name)
            if candidates:
                spec = candidates[0]
            elif "." in name:
                plural, _, grp = name.partition(".")
                for candidate in self._aliases.get(plural, ()):
                    if candidate.group == grp:
                        spec = candidate
                        break
        if spec is None or (version is not None and version != spec.info.version):
            raise _no_such_resource(resource, group, version)
        return spec

    def resources(self) -> list[ResourceInfo]:
        return [spec.info for spec in self.specs]

    def categories(self, category: str) -> list[ResourceSpec]:
        return [spec for spec in self.specs if category in spec.info.categories]


def _no_such_resource(resource: str, group: str | None, version: str | None) -> StatusError:
    """Upstream answers an unknown resource path with a bare 404 'the server could not find ...'."""
    gv = "/".join(part for part in (group, version) if part)
    what = f'the server doesn\'t have a resource type "{resource}"'
    if gv:
        what += f" in {gv}"
    return StatusError(status_body(404, "NotFound", what, kind=resource))
