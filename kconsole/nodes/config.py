"""What a simulated node is made of: capacity, labels, taints, addresses, pod CIDR, speeds.

:func:`default_node_configs` gives the fleet a cluster starts with: control-plane nodes (tainted
``node-role.kubernetes.io/control-plane:NoSchedule``, as kubeadm leaves them) and workers spread
round-robin over the zones. Addresses and pod CIDRs come from the node's index, so they are unique
and the same on every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kconsole.objects.quantity import QuantityError, parse_quantity

CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
CONTROL_PLANE_TAINT = {"key": CONTROL_PLANE_ROLE, "effect": "NoSchedule"}
DEFAULT_REGION = "kconsole"


#: /24s from 10.244.0.0 up to 10.255.255.0 (kubeadm's usual pod network first), then from 10.112.0.0,
#: just past the Service range 10.96.0.0/12, up to 10.243.255.0: unique, valid ranges for 36,864 nodes.
_POD_OCTETS = list(range(244, 256)) + list(range(112, 244))
#: Nodes there is a pod /24 for.
MAX_NODES = len(_POD_OCTETS) * 256


def pod_cidr_for(index: int) -> str:
    """``10.244.N.0/24`` for the first 256 nodes, then ``10.245.*`` ... ``10.255.*``, then
    ``10.112.*`` onwards: one /24 per node, never inside the Service range."""
    block, third = divmod(index, 256)
    if not 0 <= block < len(_POD_OCTETS):
        raise ValueError(f"no pod CIDR for node index {index}: at most {MAX_NODES} nodes")
    return f"10.{_POD_OCTETS[block]}.{third}.0/24"


def address_for(index: int) -> str:
    """The node's InternalIP: ``172.18.X.Y``, as kind's docker network hands them out."""
    return f"172.18.{index // 250}.{index % 250 + 2}"


@dataclass
class NodeConfig:
    """One node's shape. ``delay_factor`` multiplies image-pull and container-start delays (0 makes
    pods start instantly, for benchmarks); ``image_pull_factor`` makes pulls slower (> 1) or faster."""

    name: str
    cpu: str = "4"
    memory: str = "16Gi"
    pods: int = 110
    ephemeral_storage: str = "100Gi"
    extended: dict[str, str] = field(default_factory=dict)
    #: What the kubelet reports as allocatable where it is less than capacity (a copied node's
    #: system and kube reservations); absent resources are allocatable in full.
    allocatable: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    pod_cidr: str = "10.244.0.0/24"
    address: str = "172.18.0.2"
    zone: str = ""
    region: str = DEFAULT_REGION
    control_plane: bool = False
    delay_factor: float = 1.0
    image_pull_factor: float = 1.0

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("node config: name must not be empty")
        for what, text in (("cpu", self.cpu), ("memory", self.memory), ("ephemeral_storage", self.ephemeral_storage),
                           *self.extended.items(), *self.allocatable.items()):
            try:
                parse_quantity(text)
            except QuantityError as err:
                raise ValueError(f"node config {self.name}: {what} {text!r} is not a quantity: {err}") from None
        if self.pods < 0:
            raise ValueError(f"node config {self.name}: pods must be >= 0, got {self.pods}")
        if self.delay_factor < 0 or self.image_pull_factor < 0:
            raise ValueError(f"node config {self.name}: delay factors must be >= 0")
        prefix, _, bits = self.pod_cidr.partition("/")
        if bits != "24" or len(prefix.split(".")) != 4:
            raise ValueError(f"node config {self.name}: pod_cidr must be an IPv4 /24, got {self.pod_cidr!r}")

    def capacity(self) -> dict[str, str]:
        return {"cpu": self.cpu, "memory": self.memory, "pods": str(self.pods),
                "ephemeral-storage": self.ephemeral_storage, "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                **self.extended}

    def all_labels(self) -> dict[str, str]:
        """Labels the kubelet registers with (well-known ones first, config's own last)."""
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": self.name,
            "kubernetes.io/os": "linux",
        }
        if self.zone:
            labels["topology.kubernetes.io/zone"] = self.zone
        if self.region:
            labels["topology.kubernetes.io/region"] = self.region
        if self.control_plane:
            labels[CONTROL_PLANE_ROLE] = ""
            labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
        labels.update(self.labels)
        return labels


def default_node_configs(workers: int, control_planes: int, *, zones: tuple[str, ...] | list[str] = (
        "zone-a", "zone-b", "zone-c"), cpu: str = "4", memory: str = "16Gi") -> list[NodeConfig]:
    """Control-plane nodes ``control-plane-0..`` (``control-plane`` when alone), then ``worker-1..``."""
    if workers < 0 or control_planes < 0:
        raise ValueError(f"node fleet: counts must be >= 0, got workers={workers}, control_planes={control_planes}")
    zones = tuple(zones) or ("zone-a",)
    configs: list[NodeConfig] = []
    for i in range(control_planes):
        name = "control-plane" if control_planes == 1 else f"control-plane-{i}"
        configs.append(NodeConfig(name=name, cpu=cpu, memory=memory, zone=zones[i % len(zones)],
                                  taints=[dict(CONTROL_PLANE_TAINT)], control_plane=True,
                                  pod_cidr=pod_cidr_for(i), address=address_for(i)))
    for j in range(1, workers + 1):
        index = control_planes + j - 1
        configs.append(NodeConfig(name=f"worker-{j}", cpu=cpu, memory=memory, zone=zones[(j - 1) % len(zones)],
                                  pod_cidr=pod_cidr_for(index), address=address_for(index)))
    return configs


#: The fields a ``node-list`` entry may set (the rest are given by position: pod CIDR, address).
NODE_LIST_FIELDS = ("name", "cpu", "memory", "pods", "ephemeral_storage", "extended", "allocatable", "labels",
                    "taints", "zone", "region")


def node_configs_from_list(entries: list[Any]) -> list[NodeConfig]:
    """The fleet a ``node-list`` describes (``kconsole import`` writes one): each entry a mapping of
    :data:`NODE_LIST_FIELDS` (``-`` or ``_``), pod CIDRs and addresses given in order."""
    configs: list[NodeConfig] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"node-list entry {i + 1}: expected a mapping, got {type(entry).__name__}")
        given = {str(k).replace("-", "_"): v for k, v in entry.items()}
        unknown = sorted(set(given) - set(NODE_LIST_FIELDS))
        if unknown:
            raise ValueError(f"node-list entry {i + 1}: unknown key(s) {', '.join(unknown)} "
                             f"(known: {', '.join(NODE_LIST_FIELDS)})")
        name = str(given.get("name") or "")
        if name in seen:
            raise ValueError(f"node-list entry {i + 1}: node {name!r} is listed twice")
        seen.add(name)
        for key in ("extended", "allocatable", "labels"):
            if not isinstance(given.get(key, {}), dict):
                raise ValueError(f"node-list entry {i + 1} ({name}): {key} must be a mapping")
        if not isinstance(given.get("taints", []), list):
            raise ValueError(f"node-list entry {i + 1} ({name}): taints must be a list")
        for key in ("cpu", "memory", "ephemeral_storage", "zone", "region"):
            if key in given:
                given[key] = str(given[key])
        for key in ("extended", "allocatable", "labels"):
            if key in given:
                given[key] = {str(k): str(v) for k, v in given[key].items()}
        try:
            given["pods"] = int(given.get("pods", 110))
        except (TypeError, ValueError):
            raise ValueError(f"node-list entry {i + 1} ({name}): pods must be a whole number") from None
        configs.append(NodeConfig(**given, pod_cidr=pod_cidr_for(i), address=address_for(i)))
    return configs
