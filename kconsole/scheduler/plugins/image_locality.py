"""ImageLocality: prefer nodes that already hold the pod's images, weighted by how widely each is spread."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import MAX_NODE_SCORE, Plugin, register
from kconsole.scheduler.podinfo import PodInfo

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


@register
class ImageLocality(Plugin):
    name = "ImageLocality"

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        cache = self.handle.cache
        spread = cache.image_nodes
        images = [img for img in pod.images if img in spread]
        if not images:
            return [0] * len(nodes)
        total_nodes = len(cache.node_list()) or 1
        max_threshold = MAX_CONTAINER_THRESHOLD * len(pod.images)
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
