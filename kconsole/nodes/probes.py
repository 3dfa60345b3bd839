"""Readiness, liveness and startup probes: upstream's timings and thresholds, simulated results.

A probe first runs ``initialDelaySeconds`` after the container starts, then every
``periodSeconds``. Readiness starts as failed and turns ready after ``successThreshold``
consecutive successes; ``failureThreshold`` consecutive failures make the container unready
(readiness), kill and restart it (liveness) or, for a startup probe that never succeeded, kill it.

Results are simulated from the container's program: HTTP and TCP probes succeed against a
server (it listens) and fail against anything else (``connection refused``); exec and gRPC probes
succeed while the container runs. The per-pod fault hooks (``fail_readiness``) force failures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("startup", "readiness", "liveness")
FIELD = {"startup": "startupProbe", "readiness": "readinessProbe", "liveness": "livenessProbe"}
LABEL = {"startup": "Startup", "readiness": "Readiness", "liveness": "Liveness"}


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    kind: str
    handler: str  # httpGet | tcpSocket | exec | grpc
    initial_delay: float
    period: float
    timeout: float
    success_threshold: int
    failure_threshold: int
    port: str
    path: str
    scheme: str

    def failure_message(self, pod_ip: str, forced: bool) -> str:
        """The Unhealthy event's message, worded as the kubelet's prober."""
        label = LABEL[self.kind]
        if self.handler == "httpGet":
            if forced:
                return f"{label} probe failed: HTTP probe failed with statuscode: 503"
            return (f"{label} probe failed: Get \"{self.scheme.lower()}://{pod_ip}:{self.port}{self.path}\": "
                    f"dial tcp {pod_ip}:{self.port}: connect: connection refused")
        if self.handler == "tcpSocket":
            return f"{label} probe failed: dial tcp {pod_ip}:{self.port}: connect: connection refused"
        if self.handler == "grpc":
            return f"{label} probe failed: service unhealthy (responded with \"NOT_SERVING\")"
        return f"{label} probe errored: command failed with exit code 1"

    def succeeds(self, serves: bool, forced_failure: bool) -> bool:
        if forced_failure:
            return False
        if self.handler in ("httpGet", "tcpSocket"):
            return serves
        return True

    def access_line(self, pod_ip: str, stamp: str) -> str | None:
        """The line a server logs for an HTTP probe request (nginx's combined format)."""
        if self.handler != "httpGet":
            return None
        gateway = pod_ip.rsplit(".", 1)[0] + ".1"
        return f'{gateway} - - [{stamp}] "GET {self.path} HTTP/1.1" 200 615 "-" "kube-probe/1.32" "-"'


def probe_spec(container: dict[str, Any], kind: str) -> ProbeSpec | None:
    """The container's probe of ``kind`` with upstream's defaults filled in, or None."""
    raw = container.get(FIELD[kind])
    if not isinstance(raw, dict):
        return None
    handler = next((h for h in ("httpGet", "tcpSocket", "exec", "grpc") if h in raw), "exec")
    action = raw.get(handler) or {}
    port = str(action.get("port", "")) if isinstance(action, dict) else ""
    path = str(action.get("path") or "/") if isinstance(action, dict) else "/"
    scheme = str(action.get("scheme") or "HTTP") if isinstance(action, dict) else "HTTP"
    success = int(raw.get("successThreshold") or 1)
    if kind != "readiness":
        success = 1
    return ProbeSpec(
        kind=kind, handler=handler, initial_delay=float(raw.get("initialDelaySeconds") or 0),
        period=float(raw.get("periodSeconds") or 10), timeout=float(raw.get("timeoutSeconds") or 1),
        success_threshold=success, failure_threshold=int(raw.get("failureThreshold") or 3),
        port=port, path=path, scheme=scheme)


@dataclass(slots=True)
class ProbeState:
    """Consecutive results of one probe of one container instance."""

    spec: ProbeSpec
    successes: int = 0
    failures: int = 0
    result: bool = False

    def record(self, ok: bool) -> bool | None:
        """Count a result; returns the new overall result when it flips (None when unchanged)."""
        if ok:
            self.successes += 1
            self.failures = 0
            if not self.result and self.successes >= self.spec.success_threshold:
                self.result = True
                return True
        else:
            self.failures += 1
            self.successes = 0
            if self.failures >= self.spec.failure_threshold and (self.result or self.spec.kind != "readiness"):
                self.result = False
                return False
        return None
