"""ImageLocality: prefer nodes that already hold the pod's images, weighted by how widely each is spread."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import MAX_NODE_SCORE, Plugin, register
from kconsole.scheduler.memo import NodeMemo
from kconsole.scheduler.podinfo import PodInfo

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def _size_batch(image: str, nodes: list[NodeInfo]) -> list[int | None]:
    return [n.images.get(image) for n in nodes]


@register
class ImageLocality(Plugin):
    name = "ImageLocality"

    def __init__(self, handle: Any, args: dict[str, Any]) -> None:
        super().__init__(handle, args)
        cache = getattr(handle, "cache", None)
        # Each image's size by node index, kept current from the cache's change log: once the
        # pod's images are pulled everywhere, every candidate needed a per-node walk per pod.
        self._sizes: NodeMemo[int | None] | None = NodeMemo(cache, _size_batch) if cache is not None else None

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        cache = self.handle.cache
        spread = cache.image_nodes
        images = [img for img in pod.images if img in spread]
        if not images:
            return [0] * len(nodes)
        total_nodes = len(cache.node_list()) or 1
        max_threshold = MAX_CONTAINER_THRESHOLD * len(pod.images)
        if self._sizes is not None:
            return self._score_columns(images, spread, total_nodes, max_threshold, nodes)
        out = []
        for n in nodes:
            s = 0
            for img in images:
                size = n.images.get(img)
                if size is not None:
                    s += int(size * (spread[img] / total_nodes))
            s = min(max(s, MIN_THRESHOLD), max_threshold)
            out.append(MAX_NODE_SCORE * (s - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD))
        return out

    def _score_columns(self, images: list[str], spread: dict[str, int], total_nodes: int, max_threshold: int,
                       nodes: list[NodeInfo]) -> list[int]:
        """The score per distinct combination of image sizes (nodes mostly hold the same image
        at the same size, or not at all) instead of per node."""
        assert self._sizes is not None
        columns = [self._sizes.values(img, img, nodes) for img in images]
        keys: list[Any] = columns[0] if len(columns) == 1 else list(zip(*columns))
        score_of = {}
        for key in dict.fromkeys(keys):
            sizes = (key,) if len(columns) == 1 else key
            s = 0
            for img, size in zip(images, sizes):
                if size is not None:
                    s += int(size * (spread[img] / total_nodes))
            s = min(max(s, MIN_THRESHOLD), max_threshold)
            score_of[key] = MAX_NODE_SCORE * (s - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
        return list(map(score_of.__getitem__, keys))
