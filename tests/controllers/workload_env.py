"""Test environment for the workload controllers: a real API server on a real SQLite revision log
and a virtual clock, controllers acting as ``system:kube-controller-manager``, and a
:class:`PodRunner` that plays the kubelet's part through ``pods/status`` (so controllers see pods
become Running, Ready, Succeeded or Failed exactly as they would from a kubelet)."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.client import Client, InformerFactory, StatusError
from kconsole.clock import VirtualClock
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.daemonset import DaemonSetsController
from kconsole.objects.meta import deep_copy, format_time
from kconsole.scheduler.scheduler import Scheduler
from kconsole.store.revlog import RevisionLog

Obj = dict[str, Any]

_EXIT = re.compile(r"\bexit\s+(\d+)")
_SLEEP = re.compile(r"\bsleep\s+(\d+(?:\.\d+)?)")


def container_plan(pod: Obj) -> tuple[float, int] | None:
    """What the first container's command would do: ``sleep N`` exits 0 after N s, ``exit N`` fails
    at once with N; anything else runs forever (None)."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    words = " ".join(str(w) for w in (containers[0].get("command") or []) + (containers[0].get("args") or []))
    sleep = _SLEEP.search(words)
    code = _EXIT.search(words)
    if sleep is None and code is None:
        return None
    return (float(sleep.group(1)) if sleep else 0.0, int(code.group(1)) if code else 0)


class PodRunner:
    """Marks new pods Running+Ready after ``ready_after`` simulated seconds, and finishes those
    whose command ends; writes only through the API, as a kubelet would."""

    def __init__(self, client: Client, clock: VirtualClock, ready_after: float = 1.0,
                 only: Callable[[Obj], bool] | None = None) -> None:
        self.client = client
        self.clock = clock
        self.ready_after = ready_after
        self.only = only
        self.factory = InformerFactory(client)
        self.informer = self.factory.informer("pods")
        self._seen: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._ip = 0
        self.informer.add_event_handler(on_add=self._saw, on_update=lambda old, new: self._saw(new))

    async def start(self) -> None:
        await self.factory.start_all()
        await self.factory.wait_for_cache_sync()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.factory.stop_all()

    def _saw(self, pod: Obj) -> None:
        uid = pod["metadata"].get("uid", "")
        if uid in self._seen or pod["metadata"].get("deletionTimestamp"):
            return
        if (pod.get("status") or {}).get("phase", "Pending") != "Pending":
            return
        if self.only is not None and not self.only(pod):
            return
        self._seen.add(uid)
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.clock.call_later(self.ready_after, lambda: self._spawn(self._start(ns, name, uid)))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start(self, ns: str, name: str, uid: str) -> None:
        pod = await self._fresh(ns, name, uid)
        if pod is None:
            return
        plan = container_plan(pod)
        if plan is not None and plan[0] <= 0:
            await self.finish(pod, plan[1])
            return
        self._ip += 1
        now = format_time(self.clock.now())
        containers = pod["spec"].get("containers") or []
        pod["status"] = {
            "phase": "Running", "podIP": f"10.244.0.{self._ip % 250 + 2}", "startTime": now,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                           for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"name": c["name"], "image": c.get("image", ""), "ready": True, "restartCount": 0,
                                   "started": True, "state": {"running": {"startedAt": now}}} for c in containers],
        }
        await self._write(pod)
        if plan is not None:
            self.clock.call_later(plan[0], lambda: self._spawn(self._finish_later(ns, name, uid, plan[1])))

    async def _finish_later(self, ns: str, name: str, uid: str, code: int) -> None:
        pod = await self._fresh(ns, name, uid)
        if pod is not None:
            await self.finish(pod, code)

    async def finish(self, pod: Obj, code: int) -> None:
        now = format_time(self.clock.now())
        pod = deep_copy(pod)
        reason = "Completed" if code == 0 else "Error"
        pod["status"] = {
            "phase": "Succeeded" if code == 0 else "Failed",
            "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": now, "reason": "PodCompleted"}],
            "containerStatuses": [{"name": c["name"], "ready": False, "restartCount": 0, "state": {
                "terminated": {"exitCode": code, "reason": reason, "finishedAt": now}}}
                for c in pod["spec"].get("containers") or []],
        }
        await self._write(pod)

    async def set_ready(self, ns: str, name: str, ready: bool) -> None:
        pod = await self.client.get("pods", name, ns)
        for cond in pod["status"].get("conditions") or []:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond["status"] = "True" if ready else "False"
                cond["lastTransitionTime"] = format_time(self.clock.now())
        await self._write(pod)

    async def _fresh(self, ns: str, name: str, uid: str) -> Obj | None:
        try:
            pod = await self.client.get("pods", name, ns)
        except StatusError:
            return None
        if pod["metadata"].get("uid") != uid or pod["metadata"].get("deletionTimestamp"):
            return None
        return pod

    async def _write(self, pod: Obj) -> None:
        try:
            await self.client.update_status(pod)
        except StatusError:
            pass  # deleted or changed meanwhile: the next event brings it back if it matters


@dataclass
class Env:
    clock: VirtualClock
    kv: RevisionLog
    api: APIServer
    admin: Client
    cm: Client
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    factory: InformerFactory | None = None
    controllers: list[Controller] = field(default_factory=list)
    runners: list[PodRunner] = field(default_factory=list)
    extra: list[Any] = field(default_factory=list)

    async def start(self, *classes: type[Controller], settings: dict[str, dict[str, Any]] | None = None
                    ) -> list[Controller]:
        """Start controllers as the manager does: build them, start and sync informers, start workers."""
        if self.factory is None:
            self.factory = InformerFactory(self.cm)
        ctx = ControllerContext(client=self.cm, informers=self.factory, clock=self.clock, rng=self.rng,
                                settings=settings or {})
        made = [cls(ctx) for cls in classes]
        await self.factory.start_all()
        await self.factory.wait_for_cache_sync()
        for c in made:
            await c.start()
        self.controllers.extend(made)
        return made

    async def runner(self, ready_after: float = 1.0, only: Callable[[Obj], bool] | None = None) -> PodRunner:
        r = PodRunner(self.admin, self.clock, ready_after, only)
        await r.start()
        self.runners.append(r)
        return r

    async def wait(self, predicate: Callable[[], Any], timeout: float = 60.0, step: float = 0.5) -> float:
        return await self.clock.run_until(predicate, timeout, step=step)

    async def pods(self, ns: str = "default", selector: str = "") -> list[Obj]:
        items = await self.admin.list_all("pods", ns, label_selector=selector)
        return [p for p in items if not p["metadata"].get("deletionTimestamp")]

    async def get(self, resource: str, name: str, ns: str = "default") -> Obj:
        return await self.admin.get(resource, name, ns)

    async def events(self, reason: str | None = None, ns: str = "default") -> list[Obj]:
        for c in self.controllers:
            if c.recorder is not None:
                await c.recorder.flush()
        evs = await self.admin.list_all("events", ns)
        evs.sort(key=lambda e: (e.get("firstTimestamp") or "", e["metadata"]["name"]))
        return [e for e in evs if reason is None or e["reason"] == reason]

    async def close(self) -> None:
        for c in self.controllers:
            await c.stop()
            if c.recorder is not None:
                await c.recorder.close()
        for r in self.runners:
            await r.stop()
        for x in self.extra:
            await x.stop()
        if self.factory is not None:
            await self.factory.stop_all()


def pod_template(labels: dict[str, str], image: str = "nginx:1.25", command: list[str] | None = None,
                 cpu: str | None = None, **spec: Any) -> Obj:
    container: Obj = {"name": "app", "image": image}
    if command:
        container["command"] = command
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [container], "terminationGracePeriodSeconds": 0, **spec}}


def statefulset(name: str, replicas: int, **spec: Any) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": labels},
                     "template": pod_template(labels), **spec}}


def node(name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None,
         ready: bool = True) -> Obj:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    obj: Obj = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                "spec": {},
                "status": {"allocatable": alloc, "capacity": alloc,
                           "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                           "reason": "KubeletReady"}]}}
    if taints:
        obj["spec"]["taints"] = taints
    return obj


@pytest.fixture
async def wl(tmp_path: Path) -> AsyncIterator[Env]:
    """The workload controllers' environment (import it into a test module to use it)."""
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "wl.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
    cm = Client(api, api.tokens.issue(UserInfo("system:kube-controller-manager")), clock,
                user_agent="kube-controller-manager")
    e = Env(clock, kv, api, admin, cm)
    try:
        yield e
    finally:
        await e.close()
        await api.stop()
        await kv.close()


class WatchLog:
    """Every change to some resources from a watch, merged into one history in revision order."""

    def __init__(self, client: Client, resources: tuple[str, ...], namespace: str = "default") -> None:
        self.client = client
        self.resources = resources
        self.namespace = namespace
        self.events: list[tuple[int, str, str, Obj]] = []
        self.initial: dict[str, dict[str, Obj]] = {}
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        for res in self.resources:
            items, rv = await self.client.list_pages(res, self.namespace)
            self.initial[res] = {o["metadata"]["name"]: o for o in items}
            self._tasks.append(asyncio.create_task(self._follow(res, rv)))

    async def _follow(self, resource: str, rv: str) -> None:
        async with self.client.watch(resource, self.namespace, resource_version=rv,
                                     allow_watch_bookmarks=False) as stream:
            async for ev in stream:
                obj = ev["object"]
                self.events.append((int(obj["metadata"]["resourceVersion"]), resource, ev["type"], obj))

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def history(self) -> list[tuple[str, str, Obj]]:
        return [(res, typ, obj) for _, res, typ, obj in sorted(self.events, key=lambda e: e[0])]


async def run_daemonsets(wl: Env) -> None:
    """The DaemonSet controller with a scheduler beside it (DaemonSet pods are bound by the default
    scheduler, as upstream) and the pod runner."""
    sched = Scheduler(Client(wl.api, wl.api.tokens.issue(UserInfo("system:kube-scheduler")), wl.clock), wl.clock,
                      rng=random.Random(3), identity="test")
    await sched.start()
    wl.extra.append(sched)
    await wl.start(DaemonSetsController)
    await wl.runner(ready_after=1)
