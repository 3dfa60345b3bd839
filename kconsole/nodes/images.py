"""Container images on a simulated node: names as containerd resolves them, sizes, digests and pulls.

Everything about an image is derived from its name, so the same image has the same size, digest
and pull time on every node and every run. Pulls on one node are serialised (the kubelet's
``serializeImagePulls`` default): a pull queued behind another reports the wait, as upstream's
"Successfully pulled image ... in 1.2s (3.4s including waiting)". Names that say the image does not
exist (a tag or repository containing ``doesnotexist``, ``nonexistent`` or ``invalid``) fail to
pull, so ``ErrImagePull`` / ``ImagePullBackOff`` can be rehearsed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

#: Simulated registry bandwidth (bytes/s) and per-pull latency (s).
BANDWIDTH = 40_000_000
LATENCY = 0.4
#: node.status.images keeps the largest 50, as the kubelet's nodeStatusMaxImages.
MAX_STATUS_IMAGES = 50
#: Rough compressed sizes of well-known images, in MB; others get 20-400 MB from their name's hash.
KNOWN_SIZES_MB = {
    "nginx": 72, "httpd": 58, "redis": 45, "busybox": 2, "alpine": 4, "ubuntu": 29, "debian": 49,
    "postgres": 155, "mysql": 170, "memcached": 32, "python": 380, "node": 390, "golang": 280,
    "registry.k8s.io/pause": 1, "registry.k8s.io/etcd": 57, "registry.k8s.io/kube-apiserver": 28,
    "registry.k8s.io/kube-scheduler": 19, "registry.k8s.io/kube-controller-manager": 26,
    "registry.k8s.io/kube-proxy": 27, "registry.k8s.io/coredns/coredns": 18,
}
MISSING_MARKERS = ("doesnotexist", "nonexistent", "invalid")


def normalize(image: str) -> str:
    """containerd's fully qualified reference: ``nginx`` -> ``docker.io/library/nginx:latest``."""
    ref = image.strip()
    name, digest = (ref.split("@", 1) + [""])[:2]
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and not digest:
        name += ":latest"
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    return f"{name}@{digest}" if digest else name


def repository(image: str) -> str:
    """``docker.io/library/nginx`` for ``nginx:1.25``."""
    full = normalize(image).split("@", 1)[0]
    head, _, tail = full.rpartition("/")
    return f"{head}/{tail.split(':', 1)[0]}" if head else tail.split(":", 1)[0]


def _short_repo(image: str) -> str:
    repo = repository(image)
    for prefix in ("docker.io/library/", "docker.io/"):
        if repo.startswith(prefix):
            return repo[len(prefix):]
    return repo


def _hash(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def image_size(image: str) -> int:
    """Bytes, stable for a name: a known family's size plus up to 10 % that depends on the tag."""
    ref = normalize(image)
    h = int.from_bytes(_hash(ref)[:4], "big")
    base = KNOWN_SIZES_MB.get(_short_repo(image))
    if base is None:
        base = 20 + h % 381
    return int(base * 1_000_000 * (1 + (h % 1000) / 10_000))


def image_digest(image: str) -> str:
    return "sha256:" + hashlib.sha256(normalize(image).encode()).hexdigest()


def image_id(image: str) -> str:
    """What containerStatuses[].imageID shows: the repository at its digest."""
    return f"{repository(image)}@{image_digest(image)}"


def pull_seconds(image: str) -> float:
    """Unscaled pull time of a fresh pull."""
    return LATENCY + image_size(image) / BANDWIDTH


def image_missing(image: str) -> bool:
    lowered = image.lower()
    return any(marker in lowered for marker in MISSING_MARKERS)


@dataclass(frozen=True, slots=True)
class PullPlan:
    """When a pull that starts now finishes, and what the Pulled event reports."""

    done_at: float
    pull_seconds: float
    total_seconds: float
    size: int


class ImageStore:
    """The images present on one node, and its serialised pull queue."""

    def __init__(self) -> None:
        self.present: dict[str, int] = {}
        self._busy_until = 0.0
        self._in_flight: dict[str, float] = {}

    def has(self, image: str) -> bool:
        return normalize(image) in self.present

    def plan_pull(self, image: str, now: float, factor: float) -> PullPlan:
        """Queue a pull; a pull of the same image already queued is joined rather than repeated."""
        ref = normalize(image)
        size = image_size(ref)
        joined = self._in_flight.get(ref)
        if joined is not None and joined >= now:
            wait = joined - now
            return PullPlan(joined, round(wait, 3), round(wait, 3), size)
        start = max(now, self._busy_until)
        duration = pull_seconds(ref) * factor
        done = start + duration
        self._busy_until = done
        self._in_flight[ref] = done
        return PullPlan(done, round(duration, 3), round(done - now, 3), size)

    def finish_pull(self, image: str) -> None:
        ref = normalize(image)
        self._in_flight.pop(ref, None)
        self.present[ref] = image_size(ref)

    def abort_pulls(self) -> None:
        """The kubelet stopped: queued pulls are gone with it."""
        self._in_flight.clear()
        self._busy_until = 0.0

    def status_images(self) -> list[dict[str, object]]:
        """node.status.images: the largest first, each under its digest and tag names."""
        out = []
        for ref, size in sorted(self.present.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_STATUS_IMAGES]:
            out.append({"names": [image_id(ref), ref], "sizeBytes": size})
        return out


def format_seconds(seconds: float) -> str:
    """Go's time.Duration String for the Pulled event: ``1.234s``, ``850ms``, ``2m3.5s``."""
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        ms = round(seconds * 1000, 3)
        return f"{ms:g}ms"
    if seconds < 60:
        return f"{round(seconds, 3):g}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{round(rest, 3):g}s"
