"""One pod's life on a simulated node: sandbox, image pulls, init containers, containers, probes,
restarts with CrashLoopBackOff, graceful termination — and the status the kubelet reports for it.

A :class:`PodWorker` is a state machine driven by clock timers, not a task: 10,000 pods cost
10,000 small objects and a few heap entries. Two kinds of timers exist, as two processes do on a
real node: the *runtime's* (a container's program ends; a stopping container exits) keep going
while the kubelet is stopped, the *kubelet's* (pull finished, start, back-off over, probe due) are
cancelled with it and re-planned by :meth:`PodWorker.resume` when it comes back.

Zero delays (the benchmark's ``delay_factor=0``) run the steps synchronously, so a pod goes from
bound to Running in one call and its status is written once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kconsole.clock import TimerHandle
from kconsole.nodes import images as img
from kconsole.nodes.layer import Layer
from kconsole.nodes.logs import LogBuffer
from kconsole.nodes.probes import KINDS, ProbeState, probe_spec
from kconsole.nodes.runtime import (
    BACKOFF_INITIAL,
    BACKOFF_RESET,
    SERVER_STOP_SECONDS,
    SIGKILL_EXIT,
    Program,
    exit_reason,
    next_backoff,
    program_for,
    should_restart,
)
from kconsole.nodes.volumes import env_error, mount_problems
from kconsole.objects.meta import format_time, parse_time

if TYPE_CHECKING:
    from kconsole.nodes.kubelet import Kubelet

Obj = dict[str, Any]

#: Unscaled seconds to create+start a container and to set up a pod sandbox.
CREATE_SECONDS = 0.3
SANDBOX_SECONDS = 0.2
#: Conditions the kubelet owns; others (PodScheduled, DisruptionTarget, gates) are kept as found.
OWNED_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"
#: The volume manager's retries (upstream's exponential back-off, 500 ms doubling to 2m2s) and how
#: long a pod waits for its volumes before the kubelet reports it (podAttachAndMountTimeout).
MOUNT_BACKOFF_INITIAL, MOUNT_BACKOFF_MAX, MOUNT_TIMEOUT = 0.5, 122.0, 120.0
#: The pod worker's retry after a failed sync (a container's config could not be made).
SYNC_RETRY_SECONDS = 10.0


def _pull_policy(container: Obj) -> str:
    policy = container.get("imagePullPolicy")
    if policy in PULL_POLICIES:
        return str(policy)
    ref = img.normalize(str(container.get("image") or ""))
    return "Always" if ref.endswith(":latest") and "@" not in ref else "IfNotPresent"


class Container:
    """A container of the pod: spec, what the runtime has, and how far the kubelet got."""

    __slots__ = ("name", "spec", "init", "image", "program", "status", "waiting_reason", "waiting_message",
                 "started_at", "finished_at", "exit_code", "term_reason", "last_state", "restart_count",
                 "container_id", "image_id", "ready", "started", "backoff", "pull_backoff", "instance", "log",
                 "prev_log", "probes", "stage", "kubelet_timer", "exit_timer", "probe_timers", "crash", "sidecar",
                 "ephemeral", "overlay")

    def __init__(self, spec: Obj, init: bool, ephemeral: bool = False) -> None:
        self.name: str = spec.get("name") or ""
        self.spec = spec
        self.init = init
        #: A debug container (``kubectl debug``): started once the sandbox is up, never restarted,
        #: and outside the pod's phase and readiness.
        self.ephemeral = ephemeral
        #: A restartable init container (native sidecar, KEP-753): started in init order, then kept
        #: running (restarted whatever the pod's policy) beside the main containers.
        self.sidecar = init and spec.get("restartPolicy") == "Always"
        self.image: str = str(spec.get("image") or "")
        self.program: Program = program_for(spec)
        self.status = "waiting"  # waiting | running | terminated
        self.waiting_reason = "PodInitializing"
        self.waiting_message = ""
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.exit_code = 0
        self.term_reason = ""
        self.last_state: Obj | None = None
        self.restart_count = 0
        self.container_id = ""
        self.image_id = ""
        self.ready = False
        self.started = False
        self.backoff = 0.0
        self.pull_backoff = 0.0
        self.instance = 0
        self.log: LogBuffer | None = None
        self.prev_log: LogBuffer | None = None
        self.probes: dict[str, ProbeState] = {}
        #: idle | pulling | creating | running | exited | backoff | done | stopping | blocked
        self.stage = "idle"
        self.kubelet_timer: TimerHandle | None = None
        self.exit_timer: TimerHandle | None = None
        self.probe_timers: dict[str, TimerHandle] = {}
        self.crash = False
        #: Files written by processes exec'd into this instance (its writable layer).
        self.overlay = Layer()

    def cancel_kubelet_timers(self) -> None:
        if self.kubelet_timer is not None:
            self.kubelet_timer.cancel()
            self.kubelet_timer = None
        for t in self.probe_timers.values():
            t.cancel()
        self.probe_timers.clear()

    @property
    def succeeded(self) -> bool:
        return self.status == "terminated" and self.exit_code == 0 and self.stage == "done"

    def terminated_state(self) -> Obj:
        out: Obj = {"exitCode": self.exit_code, "reason": self.term_reason,
                    "startedAt": format_time(self.started_at or 0), "finishedAt": format_time(self.finished_at or 0)}
        if self.container_id:
            out["containerID"] = self.container_id
        return out

    def status_dict(self) -> Obj:
        if self.status == "running":
            state: Obj = {"running": {"startedAt": format_time(self.started_at or 0)}}
        elif self.status == "terminated" and self.stage not in ("backoff",):
            state = {"terminated": self.terminated_state()}
        else:
            waiting: Obj = {"reason": self.waiting_reason}
            if self.waiting_message:
                waiting["message"] = self.waiting_message
            state = {"waiting": waiting}
        out: Obj = {"name": self.name, "state": state,
                    "lastState": {"terminated": self.last_state} if self.last_state else {},
                    "ready": self.ready and not self.ephemeral, "restartCount": self.restart_count, "image": self.image,
                    "imageID": self.image_id, "started": self.started and self.status == "running"}
        if self.container_id:
            out["containerID"] = self.container_id
        return out


class PodWorker:
    """Runs one pod bound to the kubelet's node."""

    def __init__(self, kubelet: Kubelet, pod: Obj) -> None:
        self.k = kubelet
        self.pod = pod
        meta = pod["metadata"]
        self.uid: str = meta.get("uid") or ""
        self.namespace: str = meta.get("namespace") or "default"
        self.name: str = meta["name"]
        spec = pod.get("spec") or {}
        self.restart_policy: str = spec.get("restartPolicy") or "Always"
        self.host_network = bool(spec.get("hostNetwork"))
        self.init = [Container(c, True) for c in spec.get("initContainers") or ()]
        self.main = [Container(c, False) for c in spec.get("containers") or ()]
        for c in self.main if not self.init else self.init[:1]:
            c.waiting_reason = "ContainerCreating"
        self.ephemeral: list[Container] = []
        self._add_ephemeral(spec)
        self.ip = ""
        self.sandbox = False
        self.sandbox_timer: TimerHandle | None = None
        self.start_time: float | None = None
        self.terminating = False
        self.grace_deadline = 0.0
        self.deleting = False
        self.removed = False
        self.fail_readiness = False
        self.usage_model: Any = None
        self.published_usage: tuple[int, int] | None = None
        self.cpu_load: float | None = None
        #: spec.activeDeadlineSeconds ran out (the kubelet's activeDeadlineHandler): the pod failed.
        self.deadline_exceeded = False
        self.deadline_timer: TimerHandle | None = None
        #: Every init container done (regular ones succeeded, sidecars started) once: phase and the
        #: Initialized condition never go back, as upstream.
        self.initialized = not self.init
        #: Volumes set up (their ConfigMaps, Secrets and claims are there); the sandbox waits for it.
        self.mounted = not spec.get("volumes")
        self.mount_timer: TimerHandle | None = None
        self.mount_backoff = 0.0
        self.mount_waiting_since: float | None = None

    # ------------------------------------------------------------------ helpers

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def consuming(self) -> bool:
        """A main container runs: the pod uses CPU and memory (the kubelet's usage loop publishes it)."""
        return any(c.status == "running" for c in self.main)

    @property
    def containers(self) -> list[Container]:
        return self.init + self.main + self.ephemeral

    def container(self, name: str | None) -> Container | None:
        if not name:
            return self.main[0] if self.main else None
        return next((c for c in self.containers if c.name == name), None)

    def _now(self) -> float:
        return self.k.clock.now()

    def _after(self, delay: float, fn: Callable[[], None]) -> TimerHandle | None:
        """Run ``fn`` after ``delay`` simulated seconds; at once (synchronously) for zero delays."""
        if delay <= 0:
            fn()
            return None
        return self.k.clock.call_later(delay, fn)

    def _event(self, type_: str, reason: str, message: str, container: Container | None = None) -> None:
        ref = {"apiVersion": "v1", "kind": "Pod", "namespace": self.namespace, "name": self.name, "uid": self.uid}
        if container is not None:
            field = ("ephemeralContainers" if container.ephemeral else "initContainers" if container.init
                     else "containers")
            ref["fieldPath"] = f"spec.{field}{{{container.name}}}"
        self.k.event(ref, type_, reason, message)

    def _dirty(self) -> None:
        self.k.mark_dirty(self)

    def _pod_ref(self) -> str:
        return f"{self.name}_{self.namespace}({self.uid})"

    # ------------------------------------------------------------------ inputs

    def update(self, pod: Obj) -> None:
        """A newer copy of the pod from the API (status writes, deletion, ...)."""
        gates_before = self._gate_conditions()
        self.pod = pod
        meta = pod["metadata"]
        if self._add_ephemeral(pod.get("spec") or {}) and not self.terminating:
            self._dirty()
            self.sync()
        elif self._gate_conditions() != gates_before and not self.terminating:
            self._dirty()  # another writer set a readiness gate's condition: Ready is recomputed, as upstream
        if meta.get("deletionTimestamp") and not self.terminating:
            grace = meta.get("deletionGracePeriodSeconds")
            spec_grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
            self.begin_termination(float(grace if grace is not None else spec_grace if spec_grace is not None else 30))

    def _gate_conditions(self) -> tuple[str, ...]:
        """The status of each readiness gate's condition ("" when missing), in the gates' order."""
        gates = (self.pod.get("spec") or {}).get("readinessGates") or ()
        if not gates:
            return ()
        found = {c.get("type"): c.get("status") for c in (self.pod.get("status") or {}).get("conditions") or ()}
        return tuple(str(found.get(g.get("conditionType")) or "") for g in gates)

    def _add_ephemeral(self, spec: Obj) -> bool:
        """Debug containers the pod gained (they are only ever added); True when there were any."""
        wanted = spec.get("ephemeralContainers") or ()
        if len(wanted) == len(self.ephemeral):
            return False
        known = {c.name for c in self.ephemeral}
        for ec in wanted:
            if isinstance(ec, dict) and ec.get("name") not in known:
                c = Container(ec, False, ephemeral=True)
                c.waiting_reason = "ContainerCreating"
                self.ephemeral.append(c)
        return True

    def removed_from_api(self) -> None:
        """The pod object is gone (force-deleted, or our own final delete): stop everything silently."""
        self.removed = True
        for c in self.containers:
            c.cancel_kubelet_timers()
            if c.exit_timer is not None:
                c.exit_timer.cancel()
                c.exit_timer = None
            if c.status == "running":
                self._exited(c, SIGKILL_EXIT, report=False)
            if c.log is not None:
                c.log.close()
        if self.sandbox_timer is not None:
            self.sandbox_timer.cancel()
        self._cancel_mount()
        if self.deadline_timer is not None:
            self.deadline_timer.cancel()
            self.deadline_timer = None
        self.k.release_ip(self)

    # ------------------------------------------------------------------ kubelet stop/start

    def suspend(self) -> None:
        """The kubelet stopped: its own timers go; running programs keep running."""
        for c in self.containers:
            c.cancel_kubelet_timers()
        if self.deadline_timer is not None:
            self.deadline_timer.cancel()
            self.deadline_timer = None
        if self.sandbox_timer is not None:
            self.sandbox_timer.cancel()
            self.sandbox_timer = None
        self._cancel_mount()

    def resume(self) -> None:
        """The kubelet is back: re-plan from what the runtime has now."""
        for c in self.containers:
            if c.stage in ("pulling", "creating"):
                c.stage = "idle"
            elif c.stage == "backoff":
                c.stage = "exited"
                c.backoff = max(c.backoff / 2, 0)  # the back-off in progress is re-applied, not doubled
            if c.status == "running":
                self._schedule_probes(c, resumed=True)
        self._arm_deadline()
        self.sync()
        self._dirty()

    # ------------------------------------------------------------------ kubelet restart

    def adopt(self, status: Obj) -> bool:
        """A restarted kubelet finds this pod running from before (a kconsole restart): take the
        stored status as what the runtime has, as upstream's kubelet re-reads its containers from the
        runtime: running containers are left alone (no Pulling/Created/Started again, restartCount and
        startedAt kept), the rest carry their restart count on. False when nothing ran yet."""
        if status.get("phase") != "Running":
            return False
        stored = {c.get("name"): c for key in ("initContainerStatuses", "containerStatuses",
                                               "ephemeralContainerStatuses") for c in status.get(key) or ()}
        if not any("running" in ((c.get("state") or {})) for c in stored.values()):
            return False
        self.sandbox = True
        self.initialized = True
        if status.get("startTime"):
            self.start_time = parse_time(status["startTime"])
        self.ip = self.k.node_ip if self.host_network else self.k.allocate_ip(self, status.get("podIP") or "")
        for c in self.containers:
            self._adopt_container(c, stored.get(c.name) or {})
        self._arm_deadline()
        return True

    def _adopt_container(self, c: Container, st: Obj) -> None:
        state = st.get("state") or {}
        c.restart_count = int(st.get("restartCount") or 0)
        c.container_id = st.get("containerID") or ""
        c.image_id = st.get("imageID") or ""
        last = (st.get("lastState") or {}).get("terminated")
        c.last_state = dict(last) if last else None
        ran = bool(c.container_id or last)
        c.instance = c.restart_count + 1 if ran else 0
        if "running" in state:
            now = self._now()
            c.status = c.stage = "running"
            self.k.container_changed(c.image, True)
            c.waiting_reason = ""
            c.started_at = parse_time(state["running"].get("startedAt") or format_time(now))
            c.log = LogBuffer(self.k.clock.now)
            c.probes = {kind: ProbeState(spec, result=(kind == "liveness") or bool(st.get("ready")))
                        for kind in KINDS if (spec := probe_spec(c.spec, kind))}
            c.started = bool(st.get("started", True))
            c.ready = bool(st.get("ready"))
            self._schedule_probes(c, resumed=True)
            run, code = c.program.run_seconds, c.program.exit_code
            if run != float("inf"):
                left = max(c.started_at + run - now, 0.0)
                c.exit_timer = self._runtime_after(left, lambda: self._exited(c, code))
        elif "terminated" in state and (c.init and not c.sidecar and state["terminated"].get("exitCode") == 0):
            term = state["terminated"]
            c.status, c.stage = "terminated", "done"
            c.exit_code = 0
            c.term_reason = term.get("reason") or "Completed"
            c.started_at = parse_time(term["startedAt"]) if term.get("startedAt") else None
            c.finished_at = parse_time(term["finishedAt"]) if term.get("finishedAt") else None
        elif c.instance and "terminated" in state:
            term = state["terminated"]
            c.status, c.stage = "terminated", "exited"
            c.exit_code = int(term.get("exitCode") or 0)
            c.term_reason = term.get("reason") or ""
            c.started_at = parse_time(term["startedAt"]) if term.get("startedAt") else None
            c.finished_at = parse_time(term["finishedAt"]) if term.get("finishedAt") else None

    # ------------------------------------------------------------------ the main loop

    def sync(self) -> None:
        if self.removed or not self.k.running:
            return
        if self.terminating:
            self._maybe_finish_termination()
            return
        if self.deadline_exceeded:
            return
        if not self.sandbox:
            if not self.mounted:
                if self.mount_timer is None:
                    self._mount()
                if not self.mounted:
                    return
            if self.sandbox_timer is None:
                self.sandbox_timer = self._after(SANDBOX_SECONDS * self.k.delay_factor, self._sandbox_ready)
                if self.sandbox_timer is None:
                    return
            return
        if self.ephemeral and self.phase() not in ("Succeeded", "Failed"):
            for c in self.ephemeral:
                self._drive(c)
        for c in self.init:
            if c.sidecar:
                if self.main_finished():
                    continue
                self._drive(c)
                if not self.initialized and not (c.status == "running" and c.started):
                    return
                continue
            if c.succeeded:
                continue
            if c.stage == "done":
                return  # a failed init container under restartPolicy Never: the pod failed
            if self.initialized:
                continue
            self._drive(c)
            if not c.succeeded:
                return
        if not self.initialized:
            self.initialized = True
            self._dirty()
        for c in self.main:
            self._drive(c)
        if self.main_finished() and not any(c.status == "running" for c in self.containers):
            self.k.release_ip(self)

    def main_finished(self) -> bool:
        """Every main container ended for good (restartPolicy Never/OnFailure): the pod is over, and
        its sidecars are stopped rather than kept or restarted."""
        return bool(self.main) and all(c.status == "terminated" and c.stage == "done" for c in self.main)

    def _stop_sidecars(self) -> None:
        for c in reversed(self.init):
            if c.sidecar and c.status == "running":
                c.cancel_kubelet_timers()
                self._kill(c, self._grace_seconds())
            elif c.sidecar:
                c.cancel_kubelet_timers()
                c.stage = "done"

    def _sandbox_ready(self) -> None:
        self.sandbox_timer = None
        if self.removed or self.terminating or not self.k.running:
            return
        self.sandbox = True
        self.start_time = self.start_time or self._now()
        self.ip = self.k.node_ip if self.host_network else self.k.allocate_ip(self)
        self._arm_deadline()
        self._dirty()
        self.sync()

    # ------------------------------------------------------------------ volumes

    def _mount(self) -> None:
        """Set up the pod's volumes, or report why not and try again after back-off: each failed
        SetUp is a FailedMount event, and every two minutes of waiting (at once for a claim that
        cannot be processed) the kubelet says which volumes it is still waiting for."""
        problems = mount_problems(self.pod, self.k.lookup)
        if problems is None:
            self.mounted = True
            self.mount_waiting_since = None
            return
        now = self._now()
        if self.mount_waiting_since is None:
            self.mount_waiting_since = now
        for volume, error in problems.setup:
            self._event("Warning", "FailedMount", f'MountVolume.SetUp failed for volume "{volume}" : {error}')
        if problems.unprocessed or now - self.mount_waiting_since >= MOUNT_TIMEOUT:
            self.mount_waiting_since = now
            unmounted = " ".join(problems.volumes)
            unprocessed = " ".join(v for v, _ in problems.unprocessed)
            cause = "; ".join(e for _, e in problems.unprocessed) or "context deadline exceeded"
            self._event("Warning", "FailedMount", f"Unable to attach or mount volumes: unmounted volumes=[{unmounted}], "
                                                  f"unattached volumes=[], failed to process volumes=[{unprocessed}]: "
                                                  f"{cause}")
        self.mount_backoff = min(max(self.mount_backoff * 2, MOUNT_BACKOFF_INITIAL), MOUNT_BACKOFF_MAX)
        self.mount_timer = self.k.clock.call_later(self.mount_backoff, self._mount_retry)

    def _mount_retry(self) -> None:
        self.mount_timer = None
        if self.removed or self.terminating or not self.k.running:
            return
        self.sync()

    def _cancel_mount(self) -> None:
        if self.mount_timer is not None:
            self.mount_timer.cancel()
            self.mount_timer = None

    # ------------------------------------------------------------------ activeDeadlineSeconds

    def _arm_deadline(self) -> None:
        """Fail the pod ``spec.activeDeadlineSeconds`` after it started on this node."""
        deadline = (self.pod.get("spec") or {}).get("activeDeadlineSeconds")
        if deadline is None or self.start_time is None or self.deadline_exceeded or self.deadline_timer is not None:
            return
        self.deadline_timer = self.k.clock.call_later(max(self.start_time + float(deadline) - self._now(), 0.0),
                                                      self._deadline_over)

    def _deadline_over(self) -> None:
        """Upstream: phase Failed, reason DeadlineExceeded at once; the containers are stopped with
        the pod's grace period and not restarted."""
        self.deadline_timer = None
        if self.removed or self.terminating or not self.k.running or self.phase() in ("Succeeded", "Failed"):
            return
        self.deadline_exceeded = True
        self._event("Warning", "DeadlineExceeded", DEADLINE_MESSAGE)
        for c in self.containers:
            if c.status == "running":
                c.cancel_kubelet_timers()
                self._kill(c, self._grace_seconds())
            elif c.stage in ("pulling", "creating", "backoff", "idle", "blocked", "exited"):
                c.cancel_kubelet_timers()
                c.stage = "done"
        self.k.release_ip(self)
        self._dirty()

    def _drive(self, c: Container) -> None:
        if c.stage == "idle":
            if c.waiting_reason == "PodInitializing":
                c.waiting_reason = "ContainerCreating"
            self._start_pull(c)
        elif c.stage == "exited":
            self._decide_restart(c)

    # ------------------------------------------------------------------ image pull

    def _start_pull(self, c: Container) -> None:
        image = c.image
        policy = _pull_policy(c.spec)
        store = self.k.images_store
        present = store.has(image)
        if policy == "Never" and not present:
            c.stage = "blocked"
            c.waiting_reason = "ErrImageNeverPull"
            c.waiting_message = f'Container image "{image}" is not present with pull policy of Never'
            self._event("Warning", "ErrImageNeverPull", c.waiting_message, c)
            self._dirty()
            return
        if present and policy != "Always":
            self._event("Normal", "Pulled", f'Container image "{image}" already present on machine', c)
            self._create(c)
            return
        self._event("Normal", "Pulling", f'Pulling image "{image}"', c)
        c.stage = "pulling"
        factor = self.k.pull_factor
        if img.image_missing(image):
            c.kubelet_timer = self._after(img.LATENCY * factor, lambda: self._pull_failed(c))
            return
        plan = store.plan_pull(image, self._now(), factor)

        def pulled() -> None:
            c.kubelet_timer = None
            if self.removed or self.terminating:
                return
            store.finish_pull(image)
            self.k.images_changed()
            self._event("Normal", "Pulled", (
                f'Successfully pulled image "{image}" in {img.format_seconds(plan.pull_seconds)} '
                f"({img.format_seconds(plan.total_seconds)} including waiting). Image size: {plan.size} bytes."), c)
            c.pull_backoff = 0.0
            self._create(c)

        c.kubelet_timer = self._after(plan.done_at - self._now(), pulled)

    def _pull_failed(self, c: Container) -> None:
        c.kubelet_timer = None
        ref = img.normalize(c.image)
        reason = (f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
                  f"{ref}: not found")
        self._event("Warning", "Failed", f'Failed to pull image "{c.image}": rpc error: code = NotFound desc = {reason}', c)
        self._event("Warning", "Failed", "Error: ErrImagePull", c)
        c.pull_backoff = next_backoff(c.pull_backoff)
        delay = c.pull_backoff
        c.stage = "pulling"
        c.waiting_reason = "ErrImagePull"
        c.waiting_message = f"rpc error: code = NotFound desc = {reason}"
        self._dirty()

        def backoff() -> None:
            c.waiting_reason = "ImagePullBackOff"
            c.waiting_message = f'Back-off pulling image "{c.image}"'
            self._event("Normal", "BackOff", c.waiting_message, c)
            self._event("Warning", "Failed", "Error: ImagePullBackOff", c)
            self._dirty()

            def retry() -> None:
                c.kubelet_timer = None
                c.stage = "idle"
                self.sync()

            c.kubelet_timer = self.k.clock.call_later(delay, retry)

        c.kubelet_timer = self.k.clock.call_later(0.001, backoff)

    # ------------------------------------------------------------------ create / start / exit

    def _create(self, c: Container) -> None:
        c.stage = "creating"
        error = env_error(self.namespace, c.spec, self.k.lookup)
        if error:
            # generateContainerConfig failed: the container waits, and the pod worker tries again
            c.waiting_reason, c.waiting_message = "CreateContainerConfigError", error
            self._event("Warning", "Failed", f"Error: {error}", c)
            self._dirty()

            def retry() -> None:
                c.kubelet_timer = None
                if self.removed or self.terminating or not self.k.running:
                    return
                c.stage = "idle"
                self.sync()

            c.kubelet_timer = self.k.clock.call_later(SYNC_RETRY_SECONDS, retry)
            return

        def created() -> None:
            c.kubelet_timer = None
            if self.removed or self.terminating or not self.k.running:
                return
            self._start(c)

        c.kubelet_timer = self._after(CREATE_SECONDS * self.k.delay_factor, created)

    def _start(self, c: Container) -> None:
        now = self._now()
        if c.instance > 0:
            c.restart_count += 1
        c.instance += 1
        digest = hashlib.sha256(f"{self.uid}/{c.name}/{c.instance}".encode()).hexdigest()
        c.container_id = f"containerd://{digest}"
        c.image_id = img.image_id(c.image)
        self._event("Normal", "Created", f"Created container: {c.name}", c)
        self._event("Normal", "Started", f"Started container {c.name}", c)
        c.status = "running"
        c.stage = "running"
        c.waiting_reason = ""
        c.waiting_message = ""
        c.started_at = now
        self.k.container_changed(c.image, True)
        c.finished_at = None
        c.prev_log, c.log = c.log, LogBuffer(self.k.clock.now)
        c.overlay = Layer()
        run = c.program.run_seconds
        code = c.program.exit_code
        if c.crash:
            run, code = min(run, 1.0), 1
        for offset, line in c.program.output:
            if offset <= 0:
                c.log.write(line)
            elif offset < run:
                buf = c.log
                self.k.clock.call_later(offset, lambda b=buf, ln=line: b.write(ln))
        # Probes (and so readiness) first: a program that ends at once exits right here, and that
        # must leave the container not ready, not have readiness set on it afterwards.
        self._schedule_probes(c)
        if run != float("inf"):
            c.exit_timer = self._runtime_after(run, lambda: self._exited(c, code))
        self._dirty()
        if c.sidecar and c.started and c.status == "running":
            self.sync()  # a started sidecar lets the next init container go

    def _runtime_after(self, delay: float, fn: Callable[[], None]) -> TimerHandle | None:
        """A runtime timer (survives a kubelet stop); zero delays run at once."""
        if delay <= 0:
            fn()
            return None
        return self.k.clock.call_later(delay, fn)

    def exec_ended(self, c: Container, code: int) -> None:
        """The container's own shell, attached to, read ``exit``: its process ends with that code."""
        self._exited(c, code)

    def _exited(self, c: Container, code: int, *, report: bool = True) -> None:
        """The runtime saw the container's process end (on its own, or killed)."""
        if c.status != "running":
            return
        if c.exit_timer is not None:
            c.exit_timer.cancel()
            c.exit_timer = None
        for t in c.probe_timers.values():
            t.cancel()
        c.probe_timers.clear()
        c.status = "terminated"
        self.k.container_changed(c.image, False)
        c.exit_code = code
        c.term_reason = exit_reason(code)
        c.finished_at = self._now()
        c.ready = False
        c.started = False
        c.stage = "exited"
        if c.log is not None:  # the exit code is in the status, not the log (scripts read `kubectl logs`)
            c.log.close()
        if not report:
            return
        self._dirty()
        if self.terminating:
            self._maybe_finish_termination()
        elif self.k.running:
            self.sync()

    def _decide_restart(self, c: Container) -> None:
        if c.ephemeral:
            c.stage = "done"
            self._dirty()
            return
        if c.sidecar:
            restart = not self.main_finished()
        elif c.init:
            restart = c.exit_code != 0 and self.restart_policy != "Never"
        else:
            restart = should_restart(self.restart_policy, c.exit_code)
        if not restart:
            c.stage = "done"
            self._dirty()
            if not c.init and self.main_finished():
                self._stop_sidecars()
            if self.phase() in ("Succeeded", "Failed") and not any(x.status == "running" for x in self.containers):
                self.k.release_ip(self)
            if c.init and c.exit_code == 0:
                nxt = next((i for i in self.init if not i.succeeded), None)
                for other in [nxt] if nxt is not None else self.main:
                    if other.stage == "idle":
                        other.waiting_reason = "ContainerCreating"
                self.sync()
            return
        if c.finished_at is not None and c.started_at is not None and c.finished_at - c.started_at >= BACKOFF_RESET:
            c.backoff = 0.0
        c.last_state = c.terminated_state()
        if c.backoff <= 0:
            c.backoff = BACKOFF_INITIAL
            c.stage = "idle"
            self._start_pull(c)
            return
        delay = c.backoff
        c.backoff = next_backoff(c.backoff)
        c.stage = "backoff"
        c.waiting_reason = "CrashLoopBackOff"
        c.waiting_message = f"back-off {delay:g}s restarting failed container={c.name} pod={self._pod_ref()}"
        self._event("Warning", "BackOff", f"Back-off restarting failed container {c.name} in pod {self._pod_ref()}", c)
        self._dirty()

        def over() -> None:
            c.kubelet_timer = None
            if self.removed or self.terminating:
                return
            c.stage = "idle"
            self._start_pull(c)

        c.kubelet_timer = self.k.clock.call_later(delay, over)

    # ------------------------------------------------------------------ probes

    def _schedule_probes(self, c: Container, resumed: bool = False) -> None:
        specs = {kind: probe_spec(c.spec, kind) for kind in KINDS}
        if not resumed:
            c.probes = {kind: ProbeState(s, result=(kind == "liveness")) for kind, s in specs.items() if s}
            c.started = "startup" not in c.probes
            c.ready = c.started and "readiness" not in c.probes
        started_at = c.started_at or self._now()
        for kind, state in c.probes.items():
            if kind != "startup" and not c.started:
                continue
            if kind == "startup" and c.started:
                continue
            due = max(started_at + state.spec.initial_delay, self._now())
            self._arm_probe(c, kind, due - self._now())

    def _arm_probe(self, c: Container, kind: str, delay: float) -> None:
        old = c.probe_timers.pop(kind, None)
        if old is not None:
            old.cancel()
        instance = c.instance
        c.probe_timers[kind] = self.k.clock.call_later(max(delay, 0.0), lambda: self._probe(c, kind, instance))

    def _probe(self, c: Container, kind: str, instance: int) -> None:
        c.probe_timers.pop(kind, None)
        if c.status != "running" or c.instance != instance or self.terminating or not self.k.running:
            return
        state = c.probes[kind]
        spec = state.spec
        forced = kind == "readiness" and self.fail_readiness
        ok = spec.succeeds(c.program.serves, forced)
        if ok and c.log is not None and c.program.serves and c.program.logs_probes:
            line = spec.access_line(self.ip, self.k.clock.datetime().strftime("%d/%b/%Y:%H:%M:%S +0000"))
            if line:
                c.log.write(line)
        flip = state.record(ok)
        if not ok:
            self._event("Warning", "Unhealthy", spec.failure_message(self.ip, forced), c)
        if kind == "readiness":
            if flip is not None:
                c.ready = flip
                self._dirty()
            self._arm_probe(c, kind, spec.period)
        elif kind == "startup":
            if flip is True:
                c.started = True
                c.ready = "readiness" not in c.probes
                self._dirty()
                self._schedule_probes(c, resumed=True)
                if c.sidecar:
                    self.sync()
            elif flip is False:
                self._event("Normal", "Killing", f"Container {c.name} failed startup probe, will be restarted", c)
                self._kill(c, grace=self._grace_seconds())
            else:
                self._arm_probe(c, kind, spec.period)
        else:
            if flip is False:
                self._event("Normal", "Killing", f"Container {c.name} failed liveness probe, will be restarted", c)
                self._kill(c, grace=self._grace_seconds())
            else:
                self._arm_probe(c, kind, spec.period)

    def _grace_seconds(self) -> float:
        grace = (self.pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        return float(grace if grace is not None else 30)

    # ------------------------------------------------------------------ stopping containers

    def _kill(self, c: Container, grace: float) -> None:
        """SIGTERM (after a preStop hook), then SIGKILL when the grace period runs out. The container
        keeps its readiness until it exits, as upstream's (``1/1 Terminating``; its endpoint stays
        serving while terminating)."""
        if c.status != "running" or c.stage == "stopping":
            return
        c.stage = "stopping"
        for t in c.probe_timers.values():
            t.cancel()
        c.probe_timers.clear()
        pre_stop = 0.0
        hook = ((c.spec.get("lifecycle") or {}).get("preStop") or {})
        command = (hook.get("exec") or {}).get("command") or []
        if command:
            pre_stop = program_for({"image": c.image, "command": command}).run_seconds
        if hook.get("sleep"):
            pre_stop = float((hook.get("sleep") or {}).get("seconds") or 0)
        if c.program.ignores_sigterm or pre_stop == float("inf"):
            stop_after, code = grace, SIGKILL_EXIT
        else:
            stop_after, code = pre_stop + SERVER_STOP_SECONDS * self.k.delay_factor, 0
            if stop_after > grace:
                stop_after, code = grace, SIGKILL_EXIT
        if c.exit_timer is not None:
            c.exit_timer.cancel()
        c.exit_timer = self._runtime_after(stop_after, lambda: self._exited(c, code))

    def kill_container(self, name: str | None) -> bool:
        """Fault hook: the container's process dies (SIGKILL); the kubelet restarts it per policy."""
        targets = [c for c in self.containers if c.status == "running" and (name is None or c.name == name)]
        for c in targets[:1] if name is None else targets:
            self._exited(c, SIGKILL_EXIT)
        return bool(targets)

    def set_crash_loop(self, on: bool) -> None:
        for c in self.main:
            c.crash = on
        if on:
            for c in self.main:
                if c.status == "running":
                    self._exited(c, 1)

    def set_fail_readiness(self, on: bool) -> None:
        self.fail_readiness = on
        for c in self.main:
            if c.status != "running" or not c.started:
                continue
            if "readiness" not in c.probes:
                if on != (not c.ready):
                    c.ready = not on
                    if on:
                        self._event("Warning", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", c)
                    self._dirty()

    # ------------------------------------------------------------------ graceful termination

    def begin_termination(self, grace: float) -> None:
        self.terminating = True
        self.grace_deadline = self._now() + grace
        if self.sandbox_timer is not None:
            self.sandbox_timer.cancel()
            self.sandbox_timer = None
        self._cancel_mount()
        for c in self.containers:
            if c.stage in ("pulling", "creating", "backoff", "idle", "blocked"):
                c.cancel_kubelet_timers()
                c.stage = "done"
            if c.status == "running":
                self._event("Normal", "Killing", f"Stopping container {c.name}", c)
                c.cancel_kubelet_timers()
                self._kill(c, grace)
        self._dirty()
        self._maybe_finish_termination()

    def _maybe_finish_termination(self) -> None:
        if self.deleting or self.removed:
            return
        if any(c.status == "running" for c in self.containers):
            return
        self.deleting = True
        self.k.release_ip(self)
        self.k.request_delete(self)

    # ------------------------------------------------------------------ status

    def phase(self) -> str:
        if self.deadline_exceeded:
            return "Failed"
        for c in self.init if not self.initialized else ():
            if c.succeeded or (c.sidecar and c.status == "running" and c.started):
                continue
            if c.status == "terminated" and c.stage == "done":
                return "Failed"
            return "Pending"
        running = waiting = stopped = succeeded = 0
        for c in self.main:
            if c.status == "running":
                running += 1
            elif c.status == "terminated" and c.stage not in ("backoff",) and c.stage != "idle":
                stopped += 1
                succeeded += c.exit_code == 0
            elif c.last_state is not None:
                stopped += 1
            else:
                waiting += 1
        if waiting:
            return "Pending"
        if running:
            return "Running"
        if stopped:
            if self.restart_policy == "Always":
                return "Running"
            if stopped == succeeded and all(c.stage == "done" for c in self.main):
                return "Succeeded"
            if self.restart_policy == "Never":
                return "Failed"
            return "Running"
        return "Pending"

    def build_status(self) -> Obj:
        """The full pod status the kubelet would write now (foreign conditions kept as found)."""
        now = self._now()
        current: Obj = self.pod.get("status") or {}
        phase = self.phase()
        terminal = phase in ("Succeeded", "Failed")
        status: Obj = {k: v for k, v in current.items() if k not in ("reason", "message")}
        status["phase"] = phase
        if self.deadline_exceeded:
            status["reason"], status["message"] = "DeadlineExceeded", DEADLINE_MESSAGE
        found = {c.get("type"): c for c in current.get("conditions") or ()}
        stamp = format_time(now)

        def cond(ctype: str, ok: bool, reason: str = "", message: str = "") -> Obj:
            value = "True" if ok else "False"
            old = found.get(ctype)
            out: Obj = {"type": ctype, "status": value, "lastProbeTime": None,
                        "lastTransitionTime": old.get("lastTransitionTime") if old and old.get("status") == value
                        else stamp}
            if reason:
                out["reason"] = reason
            if message:
                out["message"] = message
            return out

        pending_init = [] if self.initialized else [c.name for c in self.init if not c.succeeded and not (
            c.sidecar and c.status == "running" and c.started)]
        unready = [c.name for c in self.init if c.sidecar and not c.ready] + [c.name for c in self.main if not c.ready]
        gates = [g.get("conditionType") for g in (self.pod.get("spec") or {}).get("readinessGates") or ()]
        gate_missing = [g for g in gates if (found.get(g) or {}).get("status") != "True"]
        if terminal:
            not_ready_reason = "PodCompleted"
        else:
            not_ready_reason = "ContainersNotReady"
        unready_msg = f"containers with unready status: [{' '.join(unready)}]" if unready and not terminal else ""
        owned = [
            cond("PodReadyToStartContainers", self.sandbox and not terminal),
            cond("Initialized", not pending_init, "" if not pending_init else "ContainersNotInitialized",
                 f"containers with incomplete status: [{' '.join(pending_init)}]" if pending_init else ""),
            cond("ContainersReady", not unready and not terminal, "" if not unready and not terminal
                 else not_ready_reason, unready_msg),
        ]
        ready = not unready and not terminal and not gate_missing
        if ready or unready or terminal:
            owned.append(cond("Ready", ready, "" if ready else not_ready_reason, unready_msg))
        else:
            owned.append(cond("Ready", False, "ReadinessGatesNotReady",
                              f'corresponding condition of pod readiness gate "{gate_missing[0]}" does not exist.'))
        others = [c for c in current.get("conditions") or () if c.get("type") not in OWNED_CONDITIONS]
        if "PodScheduled" not in found:
            # Bound by nodeName at creation, never through the scheduler: the kubelet says so.
            others.insert(0, {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": format_time(self.start_time or now)})
        order = {"PodReadyToStartContainers": 0, "Initialized": 1, "Ready": 2, "ContainersReady": 3}
        status["conditions"] = sorted(owned, key=lambda c: order[c["type"]]) + others
        status["hostIP"] = self.k.node_ip
        status["hostIPs"] = [{"ip": self.k.node_ip}]
        if self.ip:
            status["podIP"] = self.ip
            status["podIPs"] = [{"ip": self.ip}]
        if self.start_time is not None:
            status["startTime"] = format_time(self.start_time)
        if self.init:
            status["initContainerStatuses"] = [c.status_dict() for c in self.init]
        status["containerStatuses"] = [c.status_dict() for c in self.main]
        if self.ephemeral:
            status["ephemeralContainerStatuses"] = [c.status_dict() for c in self.ephemeral]
        return status
