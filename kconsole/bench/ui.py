"""``kconsole bench ui``: the console under churn — key-to-screen and change-to-row latency.

Two phases, each on its own cluster (real clock, the store opened as ``kconsole serve`` opens it)
with Node objects and Pods bound to them through the API, the console running headless over it
(``--phase`` runs one of them):

* steady: ``--nodes``/``--pods`` (1,000 / 10,000) while a writer patches pods at ``--rate`` changes/s
  (200) for ``--seconds``; targets: key p95 <= 100 ms, change p95 <= 250 ms;
* burst: ``--burst-nodes``/``--burst-pods`` (200 / 2,000) while the store takes ``--burst-rate``
  writes/s (1,250) for ``--burst-seconds`` (10): this writer's pod patches, events about pods and
  pods created and deleted, plus what the scheduler and controllers write in answer (the store's
  revisions count them all, as the header's writes/s does; the writer makes up the difference);
  targets: key p95 <= 150 ms, change p95 <= 500 ms. Its figures carry a ``burst_`` prefix.

Measured, in wall milliseconds:

* key to screen: from a key press (sort, reverse, page, jump) until the screen update that follows
  the key's action has been composed (the app's after-refresh callback, asked for once the
  binding's action has run); ``key_to_action`` is its first part, until the action ran;
* change to row: from a write's acknowledgment until the changed row, as the API returned it (same
  resourceVersion), was drawn — for writes aimed at rows on screen (a row a key press sorts or
  scrolls off screen before it was drawn is not a sample; how many is reported; one still on screen
  and not drawn after 5 s counts as 5 s). The churn is label patches on existing pods (cheap
  writes that still go through the whole request pipeline and every watcher).

Change to row is also split at the console's own pods cache (when its informer got the version):
the watch path (watch cache -> client -> informer) and the console's part (batch, rows, paint).

The process CPU spent during the churn (cluster, writer and console together) is reported per
change: on a shared machine it tells a costlier process from busier neighbours.

The process runs under the serving GC policy the console installs at launch (``--default-gc``
keeps CPython's collector settings to compare). Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconsole.bench.common import add_gc_argument, add_store_arguments, percentile, served_cluster_config, \
    store_mode, under_gc_policy
from kconsole.cluster import ADMIN, Cluster

KEYS = ("s", "s", "S", "pagedown", "pagedown", "end", "home", "S", "down", "up")
#: How far behind its pace the writer may fall and still catch up (seconds of writes).
CATCH_UP = 0.1


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=1000, help="Node objects (default 1000)")
    p.add_argument("--pods", type=int, default=10000, help="Pods (default 10000)")
    p.add_argument("--rate", type=float, default=200.0, help="pod changes per second (default 200)")
    p.add_argument("--seconds", type=float, default=15.0, help="measured churn, wall seconds (default 15)")
    p.add_argument("--keys", type=int, default=40, help="key presses measured (default 40)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--burst-nodes", type=int, default=200, help="burst phase: Node objects (default 200)")
    p.add_argument("--burst-pods", type=int, default=2000, help="burst phase: Pods (default 2000)")
    p.add_argument("--burst-rate", type=float, default=1250.0, help="burst phase: writes per second (default 1250)")
    p.add_argument("--burst-seconds", type=float, default=10.0, help="burst phase: wall seconds (default 10)")
    p.add_argument("--phase", choices=("both", "steady", "burst"), default="both",
                   help="steady churn, the burst, or both one after the other (default both)")
    add_store_arguments(p)
    add_gc_argument(p)


def _p95(values: list[float]) -> float:
    return round(percentile(values, 0.95), 1) if values else float("nan")


async def _bounded(coros: list[Any], limit: int = 64) -> None:
    sem = asyncio.Semaphore(limit)

    async def one(c: Any) -> None:
        async with sem:
            await c

    await asyncio.gather(*(one(c) for c in coros))


async def _populate(cluster: Cluster, nodes: int, pods: int) -> None:
    admin = cluster.api_client(ADMIN)
    names = [f"bench-{i:04}" for i in range(nodes)]
    await _bounded([admin.create({"apiVersion": "v1", "kind": "Node",
                                  "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                                  "spec": {}}) for n in names])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            await admin.get("serviceaccounts", "default", "default")
            break
        except Exception:  # noqa: BLE001 - the ServiceAccount controller has not run yet
            await asyncio.sleep(0.1)
    await _bounded([admin.create({"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": f"pod-{i:05}", "namespace": "default",
                                               "labels": {"app": f"app-{i % 50}"}},
                                  "spec": {"nodeName": names[i % len(names)] if names else None,
                                           "containers": [{"name": "c", "image": "nginx:1.27"}]}})
                    for i in range(pods)])


async def run(args: argparse.Namespace) -> dict[str, Any]:
    return await under_gc_policy(args, _run)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"bench": "ui", **store_mode(args).figures()}
    if args.phase in ("both", "steady"):
        figures.update(await _phase(args, Phase(args.nodes, args.pods, args.rate, args.seconds, args.keys, mixed=False)))
    if args.phase in ("both", "burst"):
        burst = await _phase(args, Phase(args.burst_nodes, args.burst_pods, args.burst_rate, args.burst_seconds,
                                         max(10, round(args.keys * args.burst_seconds / max(1.0, args.seconds))),
                                         mixed=True))
        figures.update({f"burst_{k}": v for k, v in burst.items()})
    return figures


@dataclass(frozen=True)
class Phase:
    """One measured run: its cluster's size, the write rate and length, and whether the writes are
    the burst's mix (pod patches, events, pods created and deleted) or label patches only."""

    nodes: int
    pods: int
    rate: float
    seconds: float
    keys: int
    mixed: bool


#: The burst's own writes, by share: pod changes, events about pods, and pods created (or deleted),
#: whose scheduling adds the scheduler's bindings, decisions and events to the API's writes.
BURST_MIX = (("patch", 0.7), ("event", 0.25), ("pod", 0.05))
#: Writes in flight at once (the burst's rate needs more than the steady churn's).
MAX_IN_FLIGHT = 256


async def _phase(args: argparse.Namespace, phase: Phase) -> dict[str, Any]:
    from kconsole.tui.app import ConsoleApp

    folder = Path(tempfile.mkdtemp(prefix="kconsole-bench-ui-"))
    config = served_cluster_config(args, folder, nodes=0, http=False, seed=args.seed, pod_delay_factor=0.0)
    cluster = Cluster(config)
    await cluster.start()
    rng = random.Random(args.seed)
    try:
        await _populate(cluster, phase.nodes, phase.pods)
        app = ConsoleApp(cluster, watch_themes=False)
        async with app.run_test(size=(200, 60)) as pilot:
            table = app.resources.table
            deadline = time.monotonic() + 120
            while len(table.rows) < phase.pods and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            admin = cluster.api_client(ADMIN)
            change_lags: list[float] = []
            pending: dict[str, tuple[str, float]] = {}
            writes = 0
            stop = asyncio.Event()

            in_flight: set[asyncio.Task[None]] = set()
            # The split of change-to-row: when the console's own pods cache got each version.
            arrived: dict[str, tuple[str, float]] = {}
            to_cache: list[float] = []
            cache_to_row: list[float] = []

            def on_update(_old: dict[str, Any], new: dict[str, Any]) -> None:
                meta = new["metadata"]
                arrived[f"{meta.get('namespace')}/{meta['name']}"] = (str(meta["resourceVersion"]), time.monotonic())

            assert app.resources.watched is not None
            app.resources.watched.informer.add_event_handler(on_update=on_update)

            async def write(key: str, seq: int, visible: bool) -> None:
                nonlocal writes
                try:
                    obj = await admin.patch("pods", key.split("/", 1)[1],
                                            {"metadata": {"labels": {"bench-seq": str(seq % 10)}}}, "default")
                except Exception:  # noqa: BLE001 - a failed write is just not measured
                    return
                acknowledged = time.monotonic()
                writes += 1
                if visible:
                    pending[key] = (str(obj["metadata"]["resourceVersion"]), acknowledged)

            born: list[str] = []

            async def other(kind: str, seq: int) -> None:
                """The burst's other writes: an event about a pod, or a pod created (or an earlier one deleted)."""
                nonlocal writes
                try:
                    if kind == "event":
                        target = f"pod-{rng.randrange(phase.pods):05}"
                        now = cluster.clock.rfc3339()
                        await admin.create({
                            "apiVersion": "v1", "kind": "Event",
                            "metadata": {"name": f"{target}.burst{seq}", "namespace": "default"},
                            "involvedObject": {"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": target},
                            "reason": "BackOff", "message": f"Back-off restarting failed container c ({seq})",
                            "type": "Warning", "source": {"component": "kubelet"}, "count": 1,
                            "firstTimestamp": now, "lastTimestamp": now})
                    elif len(born) > 50 and seq % 2:
                        await admin.delete("pods", born.pop(0), "default", grace_period_seconds=0)
                    else:
                        name = f"x-burst-{seq:06}"
                        await admin.create({"apiVersion": "v1", "kind": "Pod",
                                            "metadata": {"name": name, "namespace": "default", "labels": {"app": "burst"}},
                                            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
                        born.append(name)
                except Exception:  # noqa: BLE001 - a failed write is just not measured
                    return
                writes += 1

            def pick() -> str:
                r = rng.random()
                for kind, share in BURST_MIX:
                    if r < share:
                        return kind
                    r -= share
                return BURST_MIX[0][0]

            def store_revision() -> int:
                return int(getattr(cluster.etcd, "revision", 0) or 0)

            async def churn() -> None:
                if phase.mixed:
                    await paced_by_store()
                    return
                interval = 1.0 / phase.rate
                next_at = time.monotonic()
                seq = 0
                while not stop.is_set():
                    seq += 1
                    launch("patch", seq)
                    # Paced like a rate limiter with a burst: a loop turn longer than one interval
                    # (a screen update, a batch of watch events) is made up right after, up to
                    # CATCH_UP seconds of writes; resetting the pace instead lost a slot per late turn.
                    now = time.monotonic()
                    next_at = max(next_at + interval, now - CATCH_UP)
                    await asyncio.sleep(max(0.0, next_at - now))

            async def paced_by_store() -> None:
                """The burst: the store's writes (every client's: this writer's, the scheduler's, the
                controllers', what the header's writes/s counts) kept at the rate; this writer makes up
                whatever the others do not write, every few milliseconds."""
                t0, rev0, seq = time.monotonic(), store_revision(), 0
                while not stop.is_set():
                    due = phase.rate * (time.monotonic() - t0) - (store_revision() - rev0) - len(in_flight)
                    for _ in range(min(int(due), MAX_IN_FLIGHT - len(in_flight))):
                        seq += 1
                        launch(pick(), seq)
                    await asyncio.sleep(0.005)

            def launch(kind: str, seq: int) -> None:
                if len(in_flight) >= (MAX_IN_FLIGHT if phase.mixed else 64):
                    return
                if kind == "patch":
                    visible = table.visible_keys()
                    on_screen = [k for k in visible if k.startswith("default/pod-")]
                    if on_screen and rng.random() < 0.25:
                        key = rng.choice(on_screen)
                    else:
                        key = f"default/pod-{rng.randrange(phase.pods):05}"
                    task = asyncio.create_task(write(key, seq, key in visible))
                else:
                    task = asyncio.create_task(other(kind, seq))
                in_flight.add(task)
                task.add_done_callback(in_flight.discard)

            left_screen = 0

            async def watch_rows() -> None:
                nonlocal left_screen
                while not stop.is_set():
                    now = time.monotonic()
                    visible = set(table.visible_keys()) if pending else set()
                    for key, (rv, started) in list(pending.items()):
                        painted = table.painted.get(key)
                        if painted is not None and painted.isdigit() and int(painted) >= int(rv):
                            change_lags.append((now - started) * 1000)
                            del pending[key]
                            seen = arrived.get(key)
                            if seen is not None and seen[0] == rv:  # the event may beat the write's answer
                                to_cache.append(max(0.0, seen[1] - started) * 1000)
                                cache_to_row.append((now - max(seen[1], started)) * 1000)
                        elif key not in visible:
                            del pending[key]  # a key press sorted or scrolled it off screen: no row to draw
                            left_screen += 1
                        elif now - started > 5:
                            change_lags.append((now - started) * 1000)  # on screen and still not drawn
                            del pending[key]
                    await asyncio.sleep(0.002)

            rev_started = store_revision()
            tasks = [asyncio.create_task(churn()), asyncio.create_task(watch_rows())]
            started_churn = time.monotonic()
            cpu_started = time.process_time()
            key_lags: list[float] = []
            key_to_action: list[float] = []
            await asyncio.sleep(1.0)
            # A key travels through the app's queue, then the focused widget's, before the binding's
            # action runs (App.run_action, for app and widget bindings alike); right after the action,
            # on the app's loop turn, ask for the screen update that follows it and note its time.
            run_action = app.run_action
            waiting: list[tuple[asyncio.Event, list[float]]] = []

            def screen_updated(done: asyncio.Event, at: list[float]) -> None:
                at.append(time.monotonic())
                done.set()

            action_at: list[float] = []

            async def noting_run_action(*a: Any, **kw: Any) -> bool:
                if waiting:
                    action_at.append(time.monotonic())
                try:
                    return await run_action(*a, **kw)
                finally:
                    if waiting:
                        done, at = waiting.pop()
                        app.call_after_refresh(screen_updated, done, at)

            app.run_action = noting_run_action  # type: ignore[method-assign]
            for i in range(phase.keys):
                key = KEYS[i % len(KEYS)]
                composed = asyncio.Event()
                composed_at: list[float] = []
                waiting[:] = [(composed, composed_at)]
                action_at.clear()
                t0 = time.monotonic()
                app.simulate_key(key)  # as a terminal delivers it (Pilot's own idle waits are not the app's)
                try:
                    await asyncio.wait_for(composed.wait(), 10)
                except asyncio.TimeoutError:
                    pass
                waiting.clear()
                key_lags.append(((composed_at[0] if composed_at else time.monotonic()) - t0) * 1000)
                if action_at:
                    key_to_action.append((action_at[0] - t0) * 1000)
                await asyncio.sleep(max(0.0, phase.seconds / max(1, phase.keys) - 0.05))
            remaining = phase.seconds - (time.monotonic() - started_churn)
            if remaining > 0:
                await asyncio.sleep(remaining)
            stop.set()
            elapsed = time.monotonic() - started_churn
            churn_cpu = time.process_time() - cpu_started
            store_writes = store_revision() - rev_started
            for task in tasks:
                await task
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)
            figures = {
                "nodes": phase.nodes,
                "pods": phase.pods,
                "events_per_s": round(writes / elapsed, 1),
                "store_writes_per_s": round(store_writes / elapsed, 1),
                "churn_cpu_s": round(churn_cpu, 2),
                "cpu_ms_per_change": round(churn_cpu * 1000 / max(1, writes), 2),
                "key_to_screen_p95_ms": _p95(key_lags),
                "key_to_action_p95_ms": _p95(key_to_action),
                "change_to_row_p95_ms": _p95(change_lags),
                "ack_to_console_cache_p95_ms": _p95(to_cache),
                "console_cache_to_row_p95_ms": _p95(cache_to_row),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "key_samples": len(key_lags),
                "change_samples": len(change_lags),
                "change_samples_left_screen": left_screen,
                "panel_rebuilds": app.resources.rebuilds,
            }
    finally:
        if cluster.started:
            await cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return figures
