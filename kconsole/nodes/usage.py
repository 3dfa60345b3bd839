"""Simulated CPU and memory usage per pod: what metrics-server would report, for the HPA.

Each running pod idles until a load fault says otherwise: its CPU is its containers' steady idle use
(:func:`kconsole.objects.pod.idle_usage`, 1-3m each) whatever it requests, as metrics-server shows
an idle php-apache or nginx; so a HorizontalPodAutoscaler scales an idle workload back in to its
minimum, as upstream's does. Memory a pod requests is held at a fraction of the request drawn from
the cluster's seeded generator when the pod starts (a process keeps its heap while idle); memory
it does not request is its idle use. Static pods' CPU wobbles a little per 15 s sample.
A pod that requests neither publishes nothing while it idles: the metrics API shows the same idle
figures for it, so ``kubectl top`` lists every running pod, as metrics-server does, without a
write per pod (the HPA still refuses to scale on a resource the pod does not request).

The kubelet publishes the sum over containers on the pod as the annotations
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

from kconsole.objects.pod import idle_usage, pod_requests, published_usage, unpublished_usage

PERIOD = 15.0
#: Relative change below which a new sample is not published.
PUBLISH_THRESHOLD = 0.05
MI = 1024 * 1024


@dataclass(slots=True)
class PodUsage:
    """Usage model of one pod: the bases (requests, or idle use where nothing is requested) and the
    fractions of them in use (idle CPU over the CPU request; memory drawn at start; 1.0 for an idle base)."""

    cpu_base_m: int
    memory_base: int
    cpu_fraction: float
    memory_fraction: float
    #: A workload pod's CPU is steady (idle, or as loaded): no wobble, so its figure never moves by itself.
    wobble: bool = True

    def sample(self, rng: random.Random) -> tuple[int, int]:
        """(CPU millicores, memory bytes) for this period."""
        wobble = 1 + rng.uniform(-0.04, 0.04) if self.wobble else 1.0
        cpu = max(1, round(self.cpu_base_m * self.cpu_fraction * wobble))
        mem = max(MI, int(self.memory_base * self.memory_fraction))
        return cpu, mem


def usage_model(pod: dict, rng: random.Random) -> PodUsage:
    """The pod's model: idle CPU, a fraction of requested memory (idle memory when none is requested)."""
    req = pod_requests(pod)
    idle_cpu, idle_mem = idle_usage(pod)
    cpu_m = int(req.get("cpu", 0))
    mem = int(req.get("memory", 0))
    # The base stays the request (a load fault multiplies it); idle, the pod uses only its idle CPU.
    cpu_fraction = idle_cpu / cpu_m if cpu_m > 0 else 1.0
    mem_fraction = rng.uniform(0.3, 0.7) if mem > 0 else 1.0
    return PodUsage(cpu_m or idle_cpu, mem or idle_mem, cpu_fraction, mem_fraction, wobble=False)


def last_published(pod: dict) -> tuple[int, int] | None:
    """(CPU millicores, memory bytes) the pod's metrics show now: its usage annotations, or what the
    metrics API shows without them; a (re)started kubelet writes only what differs from this."""
    published = published_usage(pod)
    if published is None:
        return unpublished_usage(pod)
    return round(published[0] * 1000), int(published[1])


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
