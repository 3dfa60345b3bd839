"""Simulated CPU and memory usage per pod: what metrics-server would report, for the HPA.

Each running pod with CPU or memory requests gets a steady base load (a fraction of its requests
drawn from the cluster's seeded generator when the pod starts) plus a small wobble per 15 s
sample. The kubelet publishes the sum over containers on the pod as the annotations
``kconsole.dev/cpu-usage`` (``"250m"``) and ``kconsole.dev/memory-usage`` (``"64Mi"``), only when
a value moved by 5 % or more, so a quiet cluster does not write every 15 s. ``Kubelet.set_load``
sets the CPU fraction of a pod (the console's "load" key) to watch the HPA react.

Static pods (etcd, kube-apiserver, ...) use what such components use on an idle small cluster, and
every node has some usage outside pods (kubelet, runtime, OS), fixed per node name; both are what a
``kubectl top`` on a fresh kubeadm cluster shows before any workload runs.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from kconsole.objects.pod import pod_requests

PERIOD = 15.0
#: Relative change below which a new sample is not published.
PUBLISH_THRESHOLD = 0.05
MI = 1024 * 1024


@dataclass(slots=True)
class PodUsage:
    """Usage model of one pod: requests and the base fractions drawn at start."""

    cpu_request_m: int
    memory_request: int
    cpu_fraction: float
    memory_fraction: float

    def sample(self, rng: random.Random) -> tuple[int, int]:
        """(CPU millicores, memory bytes) for this period."""
        wobble = 1 + rng.uniform(-0.04, 0.04)
        cpu = max(1, round(self.cpu_request_m * self.cpu_fraction * wobble)) if self.cpu_request_m else 0
        mem = max(MI, int(self.memory_request * self.memory_fraction)) if self.memory_request else 0
        return cpu, mem


def usage_model(pod: dict, rng: random.Random) -> PodUsage | None:
    """The pod's model, or None when it requests neither CPU nor memory (nothing to scale on)."""
    req = pod_requests(pod)
    cpu_m = int(req.get("cpu", 0))
    mem = int(req.get("memory", 0))
    if cpu_m <= 0 and mem <= 0:
        return None
    return PodUsage(cpu_m, mem, rng.uniform(0.2, 0.6), rng.uniform(0.3, 0.7))


#: (CPU millicores, memory MiB) ranges of each control-plane component at rest, as on a small kubeadm cluster.
STATIC_POD_USAGE = {"etcd": ((20, 45), (40, 90)), "kube-apiserver": ((40, 90), (250, 400)),
                    "kube-controller-manager": ((12, 30), (45, 80)), "kube-scheduler": ((3, 8), (20, 35))}


def static_pod_usage(component: str, rng: random.Random) -> PodUsage | None:
    """A static pod's model: what its component uses, whatever it requests."""
    ranges = STATIC_POD_USAGE.get(component)
    if ranges is None:
        return None
    (cpu_lo, cpu_hi), (mem_lo, mem_hi) = ranges
    return PodUsage(rng.randint(cpu_lo, cpu_hi), rng.randint(mem_lo, mem_hi) * MI, 1.0, 1.0)


def system_usage(node: str) -> tuple[int, int]:
    """(CPU millicores, memory bytes) a node uses outside pods: 40-99m and 400-799Mi, fixed per name."""
    h = zlib.crc32(node.encode())
    return 40 + h % 60, (400 + (h // 60) % 400) * MI


def format_cpu(millis: int) -> str:
    return f"{millis}m"


def format_memory(nbytes: int) -> str:
    return f"{max(1, round(nbytes / MI))}Mi"


def moved(old: int | None, new: int) -> bool:
    if old is None:
        return True
    if old == 0:
        return new != 0
    return abs(new - old) / old >= PUBLISH_THRESHOLD
