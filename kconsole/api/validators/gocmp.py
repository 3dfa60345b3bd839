"""The report of Go's ``cmp.Diff`` (github.com/google/go-cmp, as kube-apiserver 1.32 vendors it), for
the refusals that print one: a Pod's and a bound claim's immutable spec.

Upstream diffs the internal Go structs (``core.PodSpec``), so the values here are first read into
that model: :data:`STRUCTS` gives each struct's fields in Go's order with their Go names and types,
zero values stand in for absent fields. The comparison then builds go-cmp's value tree (a struct
record per field, a slice element per index, a map entry per key; pointers, nil slices and maps and
``resource.Quantity`` are leaves) and the reporter prints it as go-cmp does: changed leaves as ``-``
/ ``+`` lines, two equal records of context around each change and the rest as ``... // N identical
fields``, equal values compacted and cut by go-cmp's verbosity limits, keys aligned, types named
where go-cmp names them.

go-cmp marks its output unstable on purpose: each process indents with plain or no-break spaces at
random. kconsole always writes plain spaces (what half of all API server processes print); the
fidelity suite maps no-break spaces to plain ones before comparing.

Two differing strings of 64 bytes or more print as go-cmp's text diff: texts of four lines or more
line by line in its triple-quoted form, others as ``strings.Join({...}, "")`` of 64-byte chunks.
Slice elements, lines and characters are aligned by a longest common subsequence where go-cmp runs
its own edit-script search (which also varies per process); they agree on single insertions,
removals and changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Union

from kconsole.objects.quantity import QuantityError, parse_quantity

#: An absent value (go-cmp's invalid reflect.Value: a map key or slice element only one side has).
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()

# ---------------------------------------------------------------------------- the Go type model


@dataclass
class GoType:
    """A Go type: ``kind`` is struct, ptr, slice, map, string, int, bool or quantity."""

    kind: str
    name: str = ""
    elem: GoType | None = None
    key_stringer: bool = False
    struct: str = ""  # a STRUCTS entry, resolved on use


#: Struct fields as ``GoName json type``; ``json`` ``-`` marks an embedded struct read from the same
#: object. Types: string, int, bool, quantity, ResourceList, StringMap, *T, []T and struct names.
STRUCTS: dict[str, str] = {
    "PodSpec": """Volumes volumes []Volume; InitContainers initContainers []Container;
        Containers containers []Container; EphemeralContainers ephemeralContainers []EphemeralContainer;
        RestartPolicy restartPolicy string; TerminationGracePeriodSeconds terminationGracePeriodSeconds *int;
        ActiveDeadlineSeconds activeDeadlineSeconds *int; DNSPolicy dnsPolicy string;
        NodeSelector nodeSelector StringMap; ServiceAccountName serviceAccountName string;
        AutomountServiceAccountToken automountServiceAccountToken *bool; NodeName nodeName string;
        SecurityContext securityContext *PodSecurityContext; ImagePullSecrets imagePullSecrets []LocalObjectReference;
        Hostname hostname string; Subdomain subdomain string; SetHostnameAsFQDN setHostnameAsFQDN *bool;
        Affinity affinity *Affinity; SchedulerName schedulerName string; Tolerations tolerations []Toleration;
        HostAliases hostAliases []HostAlias; PriorityClassName priorityClassName string; Priority priority *int;
        PreemptionPolicy preemptionPolicy *string; DNSConfig dnsConfig *PodDNSConfig;
        ReadinessGates readinessGates []PodReadinessGate; RuntimeClassName runtimeClassName *string;
        Overhead overhead ResourceList; EnableServiceLinks enableServiceLinks *bool;
        TopologySpreadConstraints topologySpreadConstraints []TopologySpreadConstraint; OS os *PodOS;
        SchedulingGates schedulingGates []PodSchedulingGate; ResourceClaims resourceClaims []PodResourceClaim;
        Resources resources *ResourceRequirements""",
    "Container": """Name name string; Image image string; Command command []string; Args args []string;
        WorkingDir workingDir string; Ports ports []ContainerPort; EnvFrom envFrom []EnvFromSource; Env env []EnvVar;
        Resources resources ResourceRequirements; ResizePolicy resizePolicy []ContainerResizePolicy;
        RestartPolicy restartPolicy *string; VolumeMounts volumeMounts []VolumeMount;
        VolumeDevices volumeDevices []VolumeDevice; LivenessProbe livenessProbe *Probe;
        ReadinessProbe readinessProbe *Probe; StartupProbe startupProbe *Probe; Lifecycle lifecycle *Lifecycle;
        TerminationMessagePath terminationMessagePath string; TerminationMessagePolicy terminationMessagePolicy string;
        ImagePullPolicy imagePullPolicy string; SecurityContext securityContext *SecurityContext;
        Stdin stdin bool; StdinOnce stdinOnce bool; TTY tty bool""",
    "ContainerPort": "Name name string; HostPort hostPort int; ContainerPort containerPort int; "
                     "Protocol protocol string; HostIP hostIP string",
    "EnvVar": "Name name string; Value value string; ValueFrom valueFrom *EnvVarSource",
    "EnvVarSource": "FieldRef fieldRef *ObjectFieldSelector; ResourceFieldRef resourceFieldRef *ResourceFieldSelector; "
                    "ConfigMapKeyRef configMapKeyRef *ConfigMapKeySelector; "
                    "SecretKeyRef secretKeyRef *SecretKeySelector",
    "EnvFromSource": "Prefix prefix string; ConfigMapRef configMapRef *ConfigMapEnvSource; "
                     "SecretRef secretRef *SecretEnvSource",
    "ConfigMapEnvSource": "LocalObjectReference - LocalObjectReference; Optional optional *bool",
    "SecretEnvSource": "LocalObjectReference - LocalObjectReference; Optional optional *bool",
    "ConfigMapKeySelector": "LocalObjectReference - LocalObjectReference; Key key string; Optional optional *bool",
    "SecretKeySelector": "LocalObjectReference - LocalObjectReference; Key key string; Optional optional *bool",
    "ObjectFieldSelector": "APIVersion apiVersion string; FieldPath fieldPath string",
    "ResourceFieldSelector": "ContainerName containerName string; Resource resource string; Divisor divisor quantity",
    "LocalObjectReference": "Name name string",
    "ResourceRequirements": "Limits limits ResourceList; Requests requests ResourceList; Claims claims []ResourceClaim",
    "VolumeMount": "Name name string; ReadOnly readOnly bool; RecursiveReadOnly recursiveReadOnly *string; "
                   "MountPath mountPath string; SubPath subPath string; MountPropagation mountPropagation *string; "
                   "SubPathExpr subPathExpr string",
    "Toleration": "Key key string; Operator operator string; Value value string; Effect effect string; "
                  "TolerationSeconds tolerationSeconds *int",
    "Volume": "Name name string; VolumeSource - VolumeSource",
    "VolumeSource": """HostPath hostPath *HostPathVolumeSource; EmptyDir emptyDir *EmptyDirVolumeSource;
        GCEPersistentDisk gcePersistentDisk *GCEPersistentDiskVolumeSource;
        AWSElasticBlockStore awsElasticBlockStore *AWSElasticBlockStoreVolumeSource;
        GitRepo gitRepo *GitRepoVolumeSource;
        Secret secret *SecretVolumeSource; NFS nfs *NFSVolumeSource; ISCSI iscsi *ISCSIVolumeSource;
        Glusterfs glusterfs *GlusterfsVolumeSource;
        PersistentVolumeClaim persistentVolumeClaim *PersistentVolumeClaimVolumeSource; RBD rbd *RBDVolumeSource;
        Quobyte quobyte *QuobyteVolumeSource; FlexVolume flexVolume *FlexVolumeSource;
        Cinder cinder *CinderVolumeSource;
        CephFS cephfs *CephFSVolumeSource; Flocker flocker *FlockerVolumeSource;
        DownwardAPI downwardAPI *DownwardAPIVolumeSource; FC fc *FCVolumeSource;
        AzureFile azureFile *AzureFileVolumeSource;
        ConfigMap configMap *ConfigMapVolumeSource; VsphereVolume vsphereVolume *VsphereVirtualDiskVolumeSource;
        AzureDisk azureDisk *AzureDiskVolumeSource;
        PhotonPersistentDisk photonPersistentDisk *PhotonPersistentDiskVolumeSource;
        Projected projected *ProjectedVolumeSource; PortworxVolume portworxVolume *PortworxVolumeSource;
        ScaleIO scaleIO *ScaleIOVolumeSource; StorageOS storageos *StorageOSVolumeSource; CSI csi *CSIVolumeSource;
        Ephemeral ephemeral *EphemeralVolumeSource; Image image *ImageVolumeSource""",
    "HostPathVolumeSource": "Path path string; Type type *string",
    "EmptyDirVolumeSource": "Medium medium string; SizeLimit sizeLimit *quantity",
    "SecretVolumeSource": "SecretName secretName string; Items items []KeyToPath; DefaultMode defaultMode *int; "
                          "Optional optional *bool",
    "ConfigMapVolumeSource": "LocalObjectReference - LocalObjectReference; Items items []KeyToPath; "
                             "DefaultMode defaultMode *int; Optional optional *bool",
    "PersistentVolumeClaimVolumeSource": "ClaimName claimName string; ReadOnly readOnly bool",
    "DownwardAPIVolumeSource": "Items items []DownwardAPIVolumeFile; DefaultMode defaultMode *int",
    "DownwardAPIVolumeFile": "Path path string; FieldRef fieldRef *ObjectFieldSelector; "
                             "ResourceFieldRef resourceFieldRef *ResourceFieldSelector; Mode mode *int",
    "KeyToPath": "Key key string; Path path string; Mode mode *int",
    "ProjectedVolumeSource": "Sources sources []VolumeProjection; DefaultMode defaultMode *int",
    "VolumeProjection": "Secret secret *SecretProjection; DownwardAPI downwardAPI *DownwardAPIProjection; "
                        "ConfigMap configMap *ConfigMapProjection; "
                        "ServiceAccountToken serviceAccountToken *ServiceAccountTokenProjection; "
                        "ClusterTrustBundle clusterTrustBundle *ClusterTrustBundleProjection",
    "SecretProjection": "LocalObjectReference - LocalObjectReference; Items items []KeyToPath; Optional optional *bool",
    "ConfigMapProjection": "LocalObjectReference - LocalObjectReference; Items items []KeyToPath; "
                           "Optional optional *bool",
    "DownwardAPIProjection": "Items items []DownwardAPIVolumeFile",
    "ServiceAccountTokenProjection": "Audience audience string; ExpirationSeconds expirationSeconds int; "
                                     "Path path string",
    "PodSecurityContext": """HostNetwork hostNetwork bool; HostPID hostPID bool; HostIPC hostIPC bool;
        ShareProcessNamespace shareProcessNamespace *bool; HostUsers hostUsers *bool;
        SELinuxOptions seLinuxOptions *SELinuxOptions; WindowsOptions windowsOptions *WindowsSecurityContextOptions;
        RunAsUser runAsUser *int; RunAsGroup runAsGroup *int; RunAsNonRoot runAsNonRoot *bool;
        SupplementalGroups supplementalGroups []int; SupplementalGroupsPolicy supplementalGroupsPolicy *string;
        FSGroup fsGroup *int; FSGroupChangePolicy fsGroupChangePolicy *string; Sysctls sysctls []Sysctl;
        SeccompProfile seccompProfile *SeccompProfile; AppArmorProfile appArmorProfile *AppArmorProfile;
        SELinuxChangePolicy seLinuxChangePolicy *string""",
    "SecurityContext": """Capabilities capabilities *Capabilities; Privileged privileged *bool;
        SELinuxOptions seLinuxOptions *SELinuxOptions; WindowsOptions windowsOptions *WindowsSecurityContextOptions;
        RunAsUser runAsUser *int; RunAsGroup runAsGroup *int; RunAsNonRoot runAsNonRoot *bool;
        ReadOnlyRootFilesystem readOnlyRootFilesystem *bool; AllowPrivilegeEscalation allowPrivilegeEscalation *bool;
        ProcMount procMount *string; SeccompProfile seccompProfile *SeccompProfile;
        AppArmorProfile appArmorProfile *AppArmorProfile""",
    "Capabilities": "Add add []string; Drop drop []string",
    "Probe": """ProbeHandler - ProbeHandler; InitialDelaySeconds initialDelaySeconds int;
        TimeoutSeconds timeoutSeconds int;
        PeriodSeconds periodSeconds int; SuccessThreshold successThreshold int; FailureThreshold failureThreshold int;
        TerminationGracePeriodSeconds terminationGracePeriodSeconds *int""",
    "ProbeHandler": "Exec exec *ExecAction; HTTPGet httpGet *HTTPGetAction; TCPSocket tcpSocket *TCPSocketAction; "
                    "GRPC grpc *GRPCAction",
    "ExecAction": "Command command []string",
    "HTTPGetAction": "Path path string; Port port IntOrString; Host host string; Scheme scheme string; "
                     "HTTPHeaders httpHeaders []HTTPHeader",
    "HTTPHeader": "Name name string; Value value string",
    "TCPSocketAction": "Port port IntOrString; Host host string",
    "GRPCAction": "Port port int; Service service *string",
    "Lifecycle": "PostStart postStart *LifecycleHandler; PreStop preStop *LifecycleHandler",
    "LifecycleHandler": "Exec exec *ExecAction; HTTPGet httpGet *HTTPGetAction; TCPSocket tcpSocket *TCPSocketAction; "
                        "Sleep sleep *SleepAction",
    "SleepAction": "Seconds seconds int",
    "IntOrString": "Type type int; IntVal intVal int; StrVal strVal string",
    "PersistentVolumeClaimSpec": """AccessModes accessModes []string; Selector selector *LabelSelector;
        Resources resources VolumeResourceRequirements; VolumeName volumeName string;
        StorageClassName storageClassName *string; VolumeMode volumeMode *string;
        DataSource dataSource *TypedLocalObjectReference; DataSourceRef dataSourceRef *TypedObjectReference;
        VolumeAttributesClassName volumeAttributesClassName *string""",
    "VolumeResourceRequirements": "Limits limits ResourceList; Requests requests ResourceList",
}
#: Go package of the structs that are not ``core``.
PACKAGES = {"LabelSelector": "v1", "IntOrString": "intstr"}
#: Map and slice type names of slices of named strings (their element names are not modelled).
SLICE_NAMES = {("PersistentVolumeClaimSpec", "AccessModes"): "[]core.PersistentVolumeAccessMode"}

_SCALARS = {"string": GoType("string", "string"), "int": GoType("int", "int64"), "bool": GoType("bool", "bool"),
            "quantity": GoType("quantity", "resource.Quantity")}


def go_type(spec: str, owner: str = "", field_name: str = "") -> GoType:
    """The GoType a STRUCTS type string names."""
    if spec in _SCALARS:
        return _SCALARS[spec]
    if spec.startswith("*"):
        elem = go_type(spec[1:])
        return GoType("ptr", "*" + elem.name, elem)
    if spec.startswith("[]"):
        elem = go_type(spec[2:])
        return GoType("slice", SLICE_NAMES.get((owner, field_name), "[]" + elem.name), elem)
    if spec == "ResourceList":
        return GoType("map", "core.ResourceList", _SCALARS["quantity"], key_stringer=True)
    if spec == "StringMap":
        return GoType("map", "map[string]string", _SCALARS["string"])
    return GoType("struct", f"{PACKAGES.get(spec, 'core')}.{spec}", struct=spec)


@dataclass(frozen=True)
class Field:
    go: str
    json: str  # "-": an embedded struct, read from the same object
    type: GoType


_FIELDS: dict[str, tuple[Field, ...]] = {}


def struct_fields(t: GoType, x: Any, y: Any) -> tuple[Field, ...]:
    """A struct's fields; a struct kconsole does not model takes its fields from the values (Go names
    by capitalising the JSON ones, types from the JSON values), in their order."""
    if t.struct in STRUCTS:
        if t.struct not in _FIELDS:
            parts = [p.split() for p in re.split(r";\s*", STRUCTS[t.struct].strip()) if p.strip()]
            _FIELDS[t.struct] = tuple(Field(go, js, go_type(ty, t.struct, go)) for go, js, ty in parts)
        return _FIELDS[t.struct]
    keys: list[str] = []
    for value in (x, y):
        if isinstance(value, dict):
            keys += [k for k in value if k not in keys]
    example = {**(y if isinstance(y, dict) else {}), **(x if isinstance(x, dict) else {})}
    return tuple(Field(k[:1].upper() + k[1:], k, _inferred(k, example[k])) for k in keys)


def _inferred(key: str, value: Any) -> GoType:
    if isinstance(value, bool):
        return _SCALARS["bool"]
    if isinstance(value, int):
        return _SCALARS["int"]
    if isinstance(value, dict):
        name = key[:1].upper() + key[1:]
        return GoType("ptr", f"*core.{name}", GoType("struct", f"core.{name}", struct=name))
    if isinstance(value, list):
        elem = _inferred(key, value[0]) if value else _SCALARS["string"]
        if elem.kind == "ptr" and elem.elem is not None:
            elem = elem.elem
        return GoType("slice", "[]" + elem.name, elem)
    return _SCALARS["string"]


def zero(t: GoType) -> Any:
    """Go's zero value of ``t`` (None for nil)."""
    return {"string": "", "int": 0, "bool": False, "struct": {}}.get(t.kind)


def is_zero(t: GoType, v: Any) -> bool:
    """reflect.Value.IsZero."""
    if v is MISSING or v is None:
        return True
    if t.kind == "struct":
        return all(is_zero(f.type, _field_value(f, v)) for f in struct_fields(t, v, v))
    if t.kind in ("slice", "map", "ptr"):
        return False
    if t.kind == "quantity":
        return False
    return v == zero(t)


def _field_value(f: Field, obj: Any) -> Any:
    if obj is MISSING:
        return MISSING
    if f.json == "-":
        return obj if isinstance(obj, dict) else {}
    value = obj.get(f.json) if isinstance(obj, dict) else None
    if value is None:
        return zero(f.type)
    if f.type.struct == "IntOrString" and not isinstance(value, dict):
        return {"intVal": value} if isinstance(value, int) else {"type": 1, "strVal": str(value)}
    return value


# ---------------------------------------------------------------------------- the value tree


@dataclass
class Node:
    type: GoType
    x: Any
    y: Any
    records: list[tuple[str, Node]] = field(default_factory=list)
    child: Node | None = None  # a pointer's target
    num_same: int = 0
    num_diff: int = 0
    num_children: int = 0
    max_depth: int = 0

    def add(self, key: str, child: Node) -> None:
        self.records.append((key, child))
        self._count(child)

    def _count(self, child: Node) -> None:
        self.num_same += child.num_same
        self.num_diff += child.num_diff
        self.num_children += child.num_children + 1
        self.max_depth = max(self.max_depth, child.max_depth + 1)


def _quantity(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError, ValueError):
        return None


def _leaf(t: GoType, x: Any, y: Any, equal: bool) -> Node:
    node = Node(t, x, y)
    if equal:
        node.num_same = 1
    else:
        node.num_diff = 1
    return node


def compare(t: GoType, x: Any, y: Any) -> Node:
    """go-cmp's walk of two values of type ``t``."""
    if x is MISSING or y is MISSING:
        return _leaf(t, x, y, x is y)
    kind = t.kind
    if kind == "quantity":
        return _leaf(t, x, y, _quantity(x) == _quantity(y) and (_quantity(x) is not None or x == y))
    if kind in ("string", "int", "bool"):
        return _leaf(t, x, y, x == y)
    if kind in ("ptr", "slice", "map") and (x is None or y is None):
        return _leaf(t, x, y, x is None and y is None)
    node = Node(t, x, y)
    if kind == "ptr":
        assert t.elem is not None
        node.child = compare(t.elem, x, y)
        node._count(node.child)
    elif kind == "slice":
        assert t.elem is not None
        for i, j in _edit_script(t.elem, list(x), list(y)):
            node.add("", compare(t.elem, x[i] if i is not None else MISSING, y[j] if j is not None else MISSING))
    elif kind == "map":
        assert t.elem is not None
        for k in sorted(set(x) | set(y)):
            node.add(k, compare(t.elem, x.get(k, MISSING), y.get(k, MISSING)))
    else:
        for f in struct_fields(t, x, y):
            node.add(f.go, compare(f.type, _field_value(f, x), _field_value(f, y)))
    return node


#: Above this many element pairs, elements compare by index (the alignment costs a comparison per pair).
ALIGN_PAIRS = 2500


def _edit_script(t: GoType, xs: list[Any], ys: list[Any]) -> list[tuple[int | None, int | None]]:
    """The slice's elements as go-cmp's edit script pairs them: equal elements aligned (a longest
    common subsequence), elements between them paired as modified while similar (go-cmp's
    ``NumSame+1 >= NumDiff``), the rest removed, then inserted."""
    n, m = len(xs), len(ys)
    if n * m > ALIGN_PAIRS:
        return [(i if i < n else None, i if i < m else None) for i in range(max(n, m))]
    equal = [[compare(t, a, b).num_diff == 0 for b in ys] for a in xs]
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            lcs[i][j] = lcs[i + 1][j + 1] + 1 if equal[i][j] else max(lcs[i + 1][j], lcs[i][j + 1])
    script: list[tuple[int | None, int | None]] = []
    gap_x: list[int] = []
    gap_y: list[int] = []

    def flush() -> None:
        while gap_x and gap_y:
            a, b = gap_x[0], gap_y[0]
            node = compare(t, xs[a], ys[b])
            if node.num_same + 1 < node.num_diff:
                break
            script.append((gap_x.pop(0), gap_y.pop(0)))
        script.extend((a, None) for a in gap_x)
        script.extend((None, b) for b in gap_y)
        gap_x.clear()
        gap_y.clear()

    i = j = 0
    while i < n or j < m:
        if i < n and j < m and equal[i][j]:
            flush()
            script.append((i, j))
            i, j = i + 1, j + 1
        elif j < m and (i == n or lcs[i][j + 1] >= lcs[i + 1][j]):
            gap_y.append(j)
            j += 1
        else:
            gap_x.append(i)
            i += 1
    flush()
    return script


# ---------------------------------------------------------------------------- text nodes


NIL = "nil"
ELLIPSIS = "..."


@dataclass
class Line:
    text: str


@dataclass
class Wrap:
    prefix: str
    value: TextNode
    suffix: str = ""


@dataclass
class Record:
    diff: str = ""  # "", "-" or "+"
    key: str = ""
    value: TextNode | None = None
    elide_comma: bool = False
    comment: Stats | None = None


@dataclass
class TList:
    records: list[Record] = field(default_factory=list)

    def ellipsis(self, stats: Stats | None = None) -> None:
        """AppendEllipsis: one ``...`` at the end, its statistics merged."""
        counted = stats if stats is not None and not stats.empty() else None
        last = self.records[-1] if self.records else None
        if last is None or not (isinstance(last.value, Line) and last.value.text == ELLIPSIS):
            self.records.append(Record(value=Line(ELLIPSIS), elide_comma=True, comment=counted))
        elif counted is not None:
            last.comment = counted if last.comment is None else last.comment.plus(counted)


TextNode = Union[Line, Wrap, TList]


@dataclass
class Stats:
    name: str
    ignored: int = 0
    identical: int = 0
    removed: int = 0
    inserted: int = 0
    modified: int = 0

    def diffs(self) -> int:
        return self.removed + self.inserted + self.modified

    def empty(self) -> bool:
        return not (self.ignored or self.identical or self.removed or self.inserted or self.modified)

    def plus(self, other: Stats) -> Stats:
        return Stats(self.name, self.ignored + other.ignored, self.identical + other.identical,
                     self.removed + other.removed, self.inserted + other.inserted, self.modified + other.modified)

    def __str__(self) -> str:
        labels = ("ignored", "identical", "removed", "inserted", "modified")
        counts = (self.ignored, self.identical, self.removed, self.inserted, self.modified)
        parts = [f"{n} {label}" for label, n in zip(labels, counts) if n > 0]
        name = self.name
        if sum(counts) > 1:
            name += "s"
            if name.endswith("ys"):
                name = name[:-2] + "ies"
        if not parts:
            return ""
        if len(parts) <= 2:
            return " and ".join(parts) + " " + name
        return ", ".join(parts[:-1]) + ", and " + parts[-1] + " " + name


def _length(node: TextNode) -> int:
    if isinstance(node, Line):
        return len(node.text.encode())
    if isinstance(node, Wrap):
        return len(node.prefix) + _length(node.value) + len(node.suffix)
    n = 0
    for i, r in enumerate(node.records):
        n += len(r.key) + (2 if r.key else 0) + (_length(r.value) if r.value is not None else 0)
        if i < len(node.records) - 1:
            n += 2
    return n


# ---------------------------------------------------------------------------- formatting values

EMIT, ELIDE, AUTO = 0, 1, 2


@dataclass(frozen=True)
class Opts:
    mode: str = ""  # "" unknown, " " identical, "-" removed, "+" inserted
    types: int = EMIT
    verbosity: int = 0
    limited: bool = False

    def level(self) -> int:
        return max(0, min(self.verbosity, 16))

    def with_(self, **kw: Any) -> Opts:
        values = {"mode": self.mode, "types": self.types, "verbosity": self.verbosity, "limited": self.limited}
        values.update(kw)
        return Opts(**values)


def go_quote(s: str) -> str:
    """strconv.Quote."""
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif not ch.isprintable():
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def format_string(s: str) -> str:
    """go-cmp's formatString: a quoted string, or a raw one when that is shorter."""
    quoted = go_quote(s)
    if len(quoted) == len(s) + 2:
        return quoted
    if "`" not in s and "\n" not in s and all(c.isprintable() or c == "\t" for c in s):
        return "`" + s + "`"
    return quoted


def format_type(t: GoType, s: TextNode, opts: Opts) -> TextNode:
    if opts.types == AUTO:
        if t.kind not in ("struct", "slice", "map", "quantity"):
            return s
        if isinstance(s, Line) and s.text == NIL:
            return s
        if opts.mode == " ":
            return s
    elif opts.types == ELIDE:
        return s
    if isinstance(s, Wrap) and s.prefix.startswith("{") and s.suffix.endswith("}"):
        return Wrap(t.name, s)
    return Wrap(t.name, Wrap("(", s, ")"))


def _quantity_struct(value: Any) -> tuple[dict[str, Any], str] | None:
    """A Quantity's fields as ParseQuantity leaves them: (int64Amount, cached string, format)."""
    text = str(value).strip()
    m = re.fullmatch(r"([+-]?)(\d*)(?:\.(\d*))?(.*)", text)
    if not m or not (m.group(2) or m.group(3)):
        return None
    sign, num, denom, suffix = m.group(1), m.group(2) or "", m.group(3) or "", m.group(4)
    binary = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
    decimal = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
    if suffix in binary:
        fmt, exponent, mantissa, scale = "BinarySI", binary[suffix], 1 << binary[suffix], 0
    elif suffix in decimal:
        fmt, exponent, mantissa, scale = "DecimalSI", decimal[suffix], 1, decimal[suffix]
    elif re.fullmatch(r"[eE][+-]?\d+", suffix):
        fmt, exponent, mantissa, scale = "DecimalExponent", int(suffix[1:]), 1, int(suffix[1:])
    else:
        return None
    scale -= len(denom)
    shifted = (num + denom).lstrip("+") or "0"
    if scale < -9 or len(shifted) > 18:
        return None
    amount = int(shifted) * mantissa * (-1 if sign == "-" else 1)
    canonical = (fmt == "BinarySI" and exponent % 10 == 0 and int(shifted) & 7 != 0) or (
        fmt != "BinarySI" and scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0")
    return {"value": amount, "scale": scale}, (text if canonical else ""), fmt


def format_value(t: GoType, v: Any, opts: Opts) -> TextNode | None:
    """go-cmp's FormatValue of one value."""
    if v is MISSING:
        return None
    kind = t.kind
    out: TextNode
    if kind == "bool":
        out = Line("true" if v else "false")
    elif kind == "int":
        out = Line(str(int(v)) if isinstance(v, (int, float)) else str(v))
    elif kind == "string":
        s = str(v)
        limit = (1 << opts.level()) << 5 if opts.limited else len(s)
        out = Line(format_string(s[:limit]) + ELLIPSIS if len(s) > limit + 3 else format_string(s))
    elif kind == "quantity":
        return _format_quantity(v, opts)
    elif kind == "ptr":
        if v is None:
            return Line(NIL)
        assert t.elem is not None
        inner = format_value(t.elem, v, opts)
        return Wrap("&", inner if inner is not None else Line(NIL))
    elif kind in ("slice", "map"):
        if v is None:
            out = Line(NIL)
        else:
            assert t.elem is not None
            limit = ((1 << opts.level()) >> 1) << 2 if opts.limited else len(v)
            inner_opts = opts.with_(verbosity=opts.verbosity - 1) if opts.limited else opts
            items = TList()
            keys = sorted(v) if kind == "map" else range(len(v))
            for k in keys:
                if len(items.records) == limit:
                    items.ellipsis()
                    break
                sv = format_value(t.elem, v[k], inner_opts.with_(types=ELIDE))
                items.records.append(Record(key=_map_key(t, k) if kind == "map" else "", value=sv))
            out = Wrap("{", items, "}")
    else:
        fields = struct_fields(t, v, v)
        limit = ((1 << opts.level()) >> 1) << 2 if opts.limited else len(fields)
        inner_opts = opts.with_(verbosity=opts.verbosity - 1) if opts.limited else opts
        items = TList()
        for f in fields:
            fv = _field_value(f, v)
            if is_zero(f.type, fv):
                continue
            if len(items.records) == limit:
                items.ellipsis()
                break
            items.records.append(Record(key=f.go, value=format_value(f.type, fv, inner_opts.with_(types=AUTO))))
        out = Wrap("{", items, "}")
    return format_type(t, out, opts)


def _format_quantity(v: Any, opts: Opts) -> TextNode:
    """A resource.Quantity as go-cmp prints its struct: Quantity has Equal but no value String
    method, so its unexported fields show (``i``, the cached canonical ``s``, ``Format``)."""
    parsed = _quantity_struct(v)
    if parsed is None:
        return Line(format_string(str(v)))
    amount, cached, fmt = parsed
    level = opts.level()
    outer_limit = ((1 << level) >> 1) << 2 if opts.limited else 3
    inner_limit = ((1 << max(level - 1, 0)) >> 1) << 2 if opts.limited else 2
    inner = [f"{k}: {amount[k]}" for k in ("value", "scale") if amount[k]]
    if len(inner) > inner_limit:
        inner = inner[:inner_limit] + [ELLIPSIS]
    amount_text = "{" + ", ".join(inner) + "}"
    if opts.mode != " ":  # a struct field's type is named unless the values are equal
        amount_text = "resource.int64Amount" + amount_text
    fields = []
    if amount["value"] or amount["scale"]:
        fields.append(Record(key="i", value=Line(amount_text)))
    if cached:
        fields.append(Record(key="s", value=Line(format_string(cached))))
    fields.append(Record(key="Format", value=Line(format_string(fmt))))
    items = TList(fields[:outer_limit])
    if len(fields) > outer_limit:
        items.ellipsis()
    return format_type(_SCALARS["quantity"], Wrap("{", items, "}"), opts)


def _map_key(t: GoType, key: str) -> str:
    return ("s" if t.key_stringer else "") + format_string(str(key))


# ---------------------------------------------------------------------------- formatting diffs

CONTEXT_RECORDS = 2
MAX_VERBOSITY_PRESET = 6


def format_diff(v: Node, opts: Opts) -> TextNode | None:
    """go-cmp's FormatDiff."""
    if opts.mode == " ":
        opts = opts.with_(verbosity=1, limited=True)
    elif opts.level() < 3 or not opts.limited:
        opts = opts.with_(verbosity=3, limited=True)
    if v.max_depth == 0:
        if opts.mode in ("", " "):
            if v.num_diff == 0:
                outx = format_value(v.type, v.x, opts)
                outy = format_value(v.type, v.y, opts)
                assert outx is not None and outy is not None
                return outx if _length(outx) < _length(outy) else outy
            items = TList()
            outx = format_value(v.type, v.x, opts.with_(types=ELIDE))
            outy = format_value(v.type, v.y, opts.with_(types=ELIDE))
            if outx is not None:
                items.records.append(Record(diff="-", value=outx))
            if outy is not None:
                items.records.append(Record(diff="+", value=outy))
            return format_type(v.type, items, opts.with_(types=EMIT))
        return format_value(v.type, v.x if opts.mode == "-" else v.y, opts)
    if v.type.kind == "ptr":
        assert v.child is not None
        inner = format_diff(v.child, opts)
        return Wrap("&", inner if inner is not None else Line(NIL))
    return format_type(v.type, _format_list(v.records, v.type, opts), opts)


def _coalesce(name: str, records: list[tuple[str, Node]]) -> list[Stats]:
    groups: list[Stats] = []
    previous = 0
    for _, node in records:
        case = 1 if node.num_diff == 0 else 2
        if case != previous:
            groups.append(Stats(name))
            previous = case
        group = groups[-1]
        if node.num_diff == 0:
            group.identical += 1
        elif node.y is MISSING:
            group.removed += 1
        elif node.x is MISSING:
            group.inserted += 1
        else:
            group.modified += 1
    return groups


#: go-cmp's CanFormatDiffSlice: strings at least this long on both sides are diffed in chunks.
TEXT_DIFF_MIN = 64
TEXT_CHUNK = 64
MAX_TEXT_RECORDS = 32
#: Above this many character pairs a long string prints whole (the alignment's cost).
TEXT_ALIGN_PAIRS = 400_000


def _text_diffable(node: Node, opts: Opts) -> bool:
    """CanFormatDiffSlice for strings: two differing single-line texts of 64 bytes or more."""
    if opts.mode or node.num_diff == 0 or node.type.kind != "string" or node.x is MISSING or node.y is MISSING:
        return False
    x, y = str(node.x), str(node.y)
    if len(x.encode()) < TEXT_DIFF_MIN or len(y.encode()) < TEXT_DIFF_MIN or len(x) * len(y) > TEXT_ALIGN_PAIRS:
        return False
    return all(c.isprintable() or c.isspace() for c in x + y)


def _lined(x: str, y: str) -> bool:
    """isLinedText: four newlines or more in both texts together, no line (as go-cmp measures them
    over the two texts run together) longer than 256 bytes."""
    data = (x + y).encode()
    lines = longest = last = 0
    for i, byte in enumerate(data):
        if byte == 0x0A:
            longest = max(longest, i - last)
            last = i + 1
            lines += 1
    return lines >= 4 and longest <= 256


def _unit_script(x: list[str], y: list[str]) -> list[str]:
    """An edit script over characters or lines: "=" equal, "~" modified, "-" removed, "+" inserted."""
    n, m = len(x), len(y)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lcs[i], lcs[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if x[i] == y[j] else max(below[j], row[j + 1])
    script: list[str] = []
    gap_x = gap_y = 0

    def flush() -> None:
        nonlocal gap_x, gap_y
        paired = min(gap_x, gap_y)
        script.extend("~" * paired + "-" * (gap_x - paired) + "+" * (gap_y - paired))
        gap_x = gap_y = 0

    i = j = 0
    while i < n or j < m:
        if i < n and j < m and x[i] == y[j]:
            flush()
            script.append("=")
            i, j = i + 1, j + 1
        elif j < m and (i == n or lcs[i][j + 1] >= lcs[i + 1][j]):
            gap_y += 1
            j += 1
        else:
            gap_x += 1
            i += 1
    flush()
    return script


def _diff_units(x: list[str], y: list[str], chunk: int, name: str, quote: bool) -> TList:
    """go-cmp's formatDiffSlice: equal runs cut to two chunks of context, changed runs as removed
    and inserted chunks (``chunk`` units to a record), at most 32 records."""
    groups: list[Stats] = []
    for op in _unit_script(x, y):
        equal = op == "="
        if not groups or (groups[-1].diffs() == 0) != equal:
            groups.append(Stats(name))
        g = groups[-1]
        if equal:
            g.identical += 1
        elif op == "~":
            g.modified += 1
        elif op == "-":
            g.removed += 1
        else:
            g.inserted += 1
    merged: list[Stats] = []  # coalesceInterveningIdentical: short equal runs join the changes around them
    for g in groups:
        if len(merged) >= 2 and g.diffs() > 0:
            prev, curr = merged[-2], merged[-1]
            if ((prev.removed or g.removed) and (prev.inserted or g.inserted)) and curr.identical <= chunk // 4:
                merged[-2] = prev.plus(curr).plus(g)
                merged.pop()
                continue
        merged.append(g)
    items = TList()

    def chunks(units: list[str], mode: str) -> None:
        for start in range(0, len(units), chunk):
            piece = "".join(units[start:start + chunk])
            items.records.append(Record(diff=mode, value=Line(format_string(piece) if quote else piece)))

    overflow = Stats(name)
    for i, g in enumerate(merged):
        if len(items.records) >= MAX_TEXT_RECORDS:
            overflow = overflow.plus(g)
            continue
        if g.diffs() == 0:
            equal = g.identical
            lo = min(chunk * CONTEXT_RECORDS, equal) if i != 0 else 0
            hi = min(chunk * CONTEXT_RECORDS, equal - lo) if i != len(merged) - 1 else 0
            if equal - (lo + hi) <= chunk:
                hi = equal - lo
            chunks(x[:lo], " ")
            if equal > lo + hi:
                items.ellipsis(Stats(name, identical=equal - lo - hi))
            chunks(x[equal - hi:equal], " ")
            x, y = x[equal:], y[equal:]
            continue
        nx = g.identical + g.removed + g.modified
        ny = g.identical + g.inserted + g.modified
        chunks(x[:nx], "-")
        chunks(y[:ny], "+")
        x, y = x[nx:], y[ny:]
    if not overflow.empty():
        items.ellipsis(overflow)
    return items


def _format_text_diff(x: str, y: str) -> TextNode:
    """FormatDiffSlice of two texts: a text of four lines or more line by line, in go-cmp's
    triple-quoted form where it can be read unambiguously; a one-line text in 64-byte chunks, as
    ``strings.Join({...}, "")``."""
    if not _lined(x, y):
        return Wrap("strings.Join(", Wrap("{", _diff_units(list(x), list(y), TEXT_CHUNK, "byte", True), "}"), ', "")')
    lines = _diff_units(x.split("\n"), y.split("\n"), 1, "line", False)
    quoted = TList([Record(value=Line('"""'), elide_comma=True)])
    triple = True
    seen: set[str] = set()
    for r in lines.records:
        assert isinstance(r.value, Line)
        if r.value.text != ELLIPSIS:
            line = r.value.text.strip("\r")
            bare = "".join(c for c in line if not c.isspace())
            triple = (triple and not line.startswith('"""') and not line.startswith(ELLIPSIS)
                      and all(c.isprintable() or c == "\t" for c in line) and (r.diff == "" or bare not in seen))
            if not triple:
                break
            r = Record(r.diff, r.key, Line(line), True, r.comment)
            seen.add(bare)
        if r.diff == "":
            seen = set()
        quoted.records.append(r)
    if triple:
        last = quoted.records[-1]
        if last.diff == " " and isinstance(last.value, Line) and last.value.text == "":
            quoted.records.pop()
        quoted.records.append(Record(value=Line('"""'), elide_comma=True))
        return Wrap("(", quoted, ")")
    for r in lines.records:
        if isinstance(r.value, Line) and r.value.text != ELLIPSIS:
            r.value = Line(format_string(r.value.text))
    return Wrap("strings.Join(", Wrap("{", lines, "}"), ', "\\n")')


def _format_list(records: list[tuple[str, Node]], t: GoType, opts: Opts) -> Wrap:
    """go-cmp's formatDiffList."""
    kind = t.kind
    if kind == "struct":
        name, opts = "field", opts.with_(types=AUTO)
    elif kind == "slice":
        name, opts = "element", opts.with_(types=ELIDE)
    else:
        name, opts = "entry", opts.with_(types=ELIDE)

    def key(k: str) -> str:
        return _map_key(t, k) if kind == "map" else k

    limit = -1
    if opts.limited:
        limit = ((1 << opts.level()) >> 1) << 2 if opts.mode == " " else (1 << opts.level()) << 1
        opts = opts.with_(verbosity=opts.verbosity - 1)
    items = TList()
    if opts.mode in (" ", "-", "+"):
        for k, node in records:
            if len(items.records) == limit:
                items.ellipsis()
                break
            if kind == "struct":
                side = {" ": (node.x, node.y), "-": (node.x,), "+": (node.y,)}[opts.mode]
                if any(is_zero(node.type, s) for s in side):
                    continue
            out = format_diff(node, opts)
            if out is not None:
                items.records.append(Record(key=key(k), value=out))
        return Wrap("{", items, "}")

    remaining = list(records)
    groups = _coalesce(name, records)
    overflow = Stats(name)
    diffs = 0
    for i, group in enumerate(groups):
        if limit >= 0 and diffs >= limit:
            overflow = overflow.plus(group)
            continue
        if group.diffs() == 0:
            equal = group.identical
            lo = hi = 0
            while lo < CONTEXT_RECORDS and lo + hi < equal and i != 0:
                lo += 1
            while hi < CONTEXT_RECORDS and lo + hi < equal and i != len(groups) - 1:
                hi += 1
            if equal - (lo + hi) == 1:
                hi += 1
            for k, node in remaining[:lo]:
                items.records.append(Record(key=key(k), value=format_diff(node, opts.with_(mode=" "))))
            if equal > lo + hi:
                items.ellipsis(Stats(name, identical=equal - lo - hi))
            for k, node in remaining[equal - hi:equal]:
                items.records.append(Record(key=key(k), value=format_diff(node, opts.with_(mode=" "))))
            remaining = remaining[equal:]
            continue
        for k, node in remaining[:group.diffs()]:
            if _text_diffable(node, opts):
                items.records.append(Record(key=key(k), value=_format_text_diff(str(node.x), str(node.y))))
            elif node.num_children == node.max_depth:
                outx = format_diff(node, opts.with_(mode="-"))
                outy = format_diff(node, opts.with_(mode="+"))
                for preset in range(MAX_VERBOSITY_PRESET):  # equal once cut: print more until they differ
                    if outx is None or outy is None or _compact(outx, "")[0] != _compact(outy, "")[0]:
                        break
                    more = opts.with_(verbosity=opts.level() + 2 * preset, types=ELIDE)
                    outx = format_diff(node, more.with_(mode="-"))
                    outy = format_diff(node, more.with_(mode="+"))
                if outx is not None:
                    items.records.append(Record(diff="-", key=key(k), value=outx))
                if outy is not None:
                    items.records.append(Record(diff="+", key=key(k), value=outy))
            else:
                items.records.append(Record(key=key(k), value=format_diff(node, opts)))
        remaining = remaining[group.diffs():]
        diffs += group.diffs()
    if not overflow.empty():
        items.ellipsis(overflow)
    return Wrap("{", items, "}")


# ---------------------------------------------------------------------------- text layout

MAX_COLUMN = 80


def _compact(node: TextNode, mode: str) -> tuple[str, TextNode]:
    """formatCompactTo: the one-line text, and the node with the parts that fit on a line as lines."""
    if isinstance(node, Line):
        return node.text, node
    if isinstance(node, Wrap):
        text, inner = _compact(node.value, mode)
        whole = node.prefix + text + node.suffix
        if isinstance(inner, Line):
            return whole, Line(whole)
        return whole, Wrap(node.prefix, inner, node.suffix)
    multi = False
    parts = []
    records = []
    for i, r in enumerate(node.records):
        if r.diff in ("-", "+"):
            multi = True
        text, value = _compact(r.value, r.diff or mode) if r.value is not None else ("", Line(""))
        records.append(Record(r.diff, r.key, value, r.elide_comma, r.comment))
        if not isinstance(value, Line) or r.comment is not None:
            multi = True
        parts.append((r.key + ": " if r.key else "") + text)
    whole = ", ".join(parts)
    if mode in ("-", "+") and len(whole.encode()) > MAX_COLUMN:
        multi = True
    if not multi:
        return whole, Line(whole)
    return whole, TList(records)


def _indent(mode: str, depth: int) -> str:
    return {"-": "- ", "+": "+ "}.get(mode, "  ") + "\t" * depth


def _align(records: list[Record], skip: Any, length: Any) -> list[int]:
    lens = [0] * len(records)
    start = end = longest = 0
    for i, r in enumerate(records):
        if skip(r):
            for j in range(start, end):
                lens[j] = longest - length(records[j])
            start, end, longest = i + 1, i + 1, 0
        else:
            longest = max(longest, length(r))
            end = i + 1
    for j in range(start, end):
        lens[j] = longest - length(records[j])
    return lens


def _expand(node: TextNode, mode: str, depth: int) -> str:
    """formatExpandedTo."""
    if isinstance(node, Line):
        return node.text
    if isinstance(node, Wrap):
        return node.prefix + _expand(node.value, mode, depth) + node.suffix
    records = node.records
    key_pad = _align(records, lambda r: not r.key or not isinstance(r.value, Line), lambda r: len(r.key))
    simple = all(not r.diff and not r.key and isinstance(r.value, Line) and r.comment is None for r in records)
    out = ""
    if simple and records:
        depth += 1
        batch = ""
        for r in records:
            line = r.value.text  # type: ignore[union-attr]
            if len(batch) + len(line) + 2 > MAX_COLUMN and batch:
                out += "\n" + _indent(mode, depth) + batch.rstrip(" ")
                batch = ""
            batch += line + ", "
        if batch:
            out += "\n" + _indent(mode, depth) + batch.rstrip(" ")
        depth -= 1
        return out + "\n" + _indent(mode, depth)
    depth += 1
    for i, r in enumerate(records):
        line_mode = r.diff or mode
        out += "\n" + _indent(line_mode, depth)
        if r.key:
            out += r.key + ": "
        out += " " * key_pad[i]
        out += _expand(r.value, line_mode, depth) if r.value is not None else ""
        if not r.elide_comma:
            out += ","
        if r.comment is not None:
            out += " // " + str(r.comment)
    depth -= 1
    return out + "\n" + _indent(mode, depth)


def render(node: TextNode) -> str:
    """textNode.String: compacted, then laid out from the first line's indent, with a final newline."""
    _, compacted = _compact(node, "")
    return _indent("", 0) + _expand(compacted, "", 0) + "\n"


def diff(type_name: str, old: Any, new: Any) -> str:
    """``cmp.Diff(old, new)`` of two values of the STRUCTS type ``type_name``; "" when equal."""
    t = go_type(type_name)
    root = compare(t, old, new)
    if root.num_diff == 0:
        return ""
    out = format_diff(root, Opts())
    return render(out) if out is not None else ""


# ---------------------------------------------------------------------------- v1 to internal

#: v1 PodSpec fields the internal PodSpec keeps in its PodSecurityContext.
HOST_FIELDS = ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "hostUsers")


def internal_pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A v1 PodSpec as Convert_v1_PodSpec_To_core_PodSpec leaves it: the host namespace fields in
    an always present security context, the deprecated serviceAccount gone."""
    out = {k: v for k, v in spec.items() if k not in HOST_FIELDS and k != "serviceAccount"}
    context = dict(spec.get("securityContext") or {})
    for key in HOST_FIELDS:
        if key in spec:
            context[key] = spec[key]
    out["securityContext"] = context
    return out
