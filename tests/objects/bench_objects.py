"""Per-call cost of the objects helpers on the hot paths (watch filtering, scheduling, caching).

Run: ``python tests/objects/bench_objects.py``. Prints microseconds per call; not a test.
"""

from __future__ import annotations

import copy
import timeit

from kconsole.objects.meta import deep_copy
from kconsole.objects.pod import RequiredNodeAffinity, find_untolerated_taint, pod_requests
from kconsole.objects.quantity import cpu_millis, memory_bytes, parse_quantity
from kconsole.objects.selectors import parse_field_selector, parse_label_selector

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-7d4b8c6f5-abc12",
        "namespace": "default",
        "uid": "0b6f7a1e-1234-4bcd-9def-0123456789ab",
        "resourceVersion": "12345",
        "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d4b8c6f5"},
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b8c6f5", "uid": "x", "controller": True}
        ],
        "creationTimestamp": "2026-01-01T00:00:00Z",
    },
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            },
            {"name": "sidecar", "image": "envoy", "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}},
        ],
        "nodeName": "node-1",
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
    },
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "podIP": "10.0.0.5"},
}
NODE = {"metadata": {"name": "node-1", "labels": {"disk": "ssd", "topology.kubernetes.io/zone": "a"}}}
TAINTS = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]


def per_call_us(fn, number: int = 20000) -> float:
    return round(min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6, 3)


def main() -> None:
    eq = parse_label_selector("app=web,tier=frontend")
    mixed = parse_label_selector("app in (web,api),tier!=backend,!canary")
    fields = parse_field_selector("spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed")
    labels = POD["metadata"]["labels"]
    affinity = RequiredNodeAffinity(POD)
    figures = {
        "label selector match, equality (us)": per_call_us(lambda: eq.matches(labels)),
        "label selector match, set-based (us)": per_call_us(lambda: mixed.matches(labels)),
        "field selector match, 3 terms (us)": per_call_us(lambda: fields.matches(POD)),
        "label selector parse, cached (us)": per_call_us(lambda: parse_label_selector("app=web,tier=frontend")),
        "label selector parse, uncached (us)": per_call_us(
            lambda: parse_label_selector.__wrapped__("app in (web,api),tier!=backend,!canary"), 5000
        ),
        "parse_quantity cached (us)": per_call_us(lambda: parse_quantity("128Mi")),
        "cpu_millis + memory_bytes (us)": per_call_us(lambda: (cpu_millis("100m"), memory_bytes("128Mi"))),
        "pod_requests, 2 containers (us)": per_call_us(lambda: pod_requests(POD)),
        "required node affinity match (us)": per_call_us(lambda: affinity.matches(NODE)),
        "find_untolerated_taint (us)": per_call_us(
            lambda: find_untolerated_taint(TAINTS, POD["spec"]["tolerations"], ("NoSchedule", "NoExecute"))
        ),
        "deep_copy pod (us)": per_call_us(lambda: deep_copy(POD)),
        "copy.deepcopy pod (us)": per_call_us(lambda: copy.deepcopy(POD), 5000),
    }
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
