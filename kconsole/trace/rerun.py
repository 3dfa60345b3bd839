"""Re-execute a trace's inputs against a fresh cluster on the virtual clock, then compare.

The fresh cluster has the trace's config (optionally changed by another config file: a scheduler
profile, the node pool, controller settings), the trace's seed, and a virtual clock that starts
when the recorded cluster started. It boots as a recorded cluster boots on the virtual clock; then
each input is sent at its simulated time, as the user it was recorded from, with its body and
options, and each fault is applied or healed at its time. After the trace's last time the rerun's
own history is read back and both runs are told as workload outcomes (:mod:`kconsole.trace.outcome`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kconsole.trace.fileformat import Trace, TraceError, config_from_dict
from kconsole.trace.outcome import Workload, compare, outcome

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Config-file keys a rerun may change (everything that shapes behaviour but the seed and size of
#: the control plane stays as recorded unless the file names it).
RERUN_KEYS = ("nodes", "control-planes", "seed", "zones", "node-cpu", "node-memory", "pod-delay-factor",
              "scheduler", "controllers", "addons")
#: Simulated seconds a boot may take before the rerun gives up.
BOOT_TIMEOUT = 120.0


@dataclass
class RerunResult:
    original: dict[str, Workload]
    rerun: dict[str, Workload]
    differences: list[Obj]
    replayed: int = 0
    refused: list[Obj] = field(default_factory=list)
    changed_config: list[str] = field(default_factory=list)

    def to_dict(self) -> Obj:
        return {"original": [w.to_dict() for w in self.original.values()],
                "rerun": [w.to_dict() for w in self.rerun.values()],
                "differences": self.differences,
                "inputs": {"replayed": self.replayed, "refused": self.refused},
                "configChanged": self.changed_config}


def rerun_config(trace: Trace, other: Path | None) -> tuple[Any, list[str]]:
    """The rerun's ClusterConfig: the trace's, with the keys ``other`` sets (validated as a config)."""
    from kconsole.cluster import ClusterConfig

    config = config_from_dict(trace.header["config"], ClusterConfig())
    config.seed = trace.seed
    changed: list[str] = []
    if other is not None:
        loaded = ClusterConfig.from_file(other)  # names a bad key or value
        raw = yaml.safe_load(Path(other).read_text(encoding="utf-8")) or {}
        for key in raw:
            name = str(key).replace("_", "-")
            if name not in RERUN_KEYS:
                from kconsole.cluster import ConfigError

                raise ConfigError(f"config {other}: {key!r} does not change a rerun (it may set: "
                                  f"{', '.join(RERUN_KEYS)})")
            attr = name.replace("-", "_")
            if getattr(config, attr) != getattr(loaded, attr):
                changed.append(name)
            setattr(config, attr, getattr(loaded, attr))
    config.http = False
    config.manifests = None
    config.ephemeral = True
    config.validate()
    return config, changed


async def rerun(trace: Trace, other: Path | None = None) -> RerunResult:
    """Run the trace's inputs on a fresh cluster and compare its workloads with the recording's."""
    from kconsole.client.history import HistoryClient
    from kconsole.cluster import CONSOLE, Cluster
    from kconsole.clock import VirtualClock

    config, changed = rerun_config(trace, other)
    start = trace.header.get("clusterStart")
    if start is None:
        start = float(trace.header["from"]["time"])
    clock = VirtualClock(start=float(start))
    cluster = Cluster(config, clock=clock)  # ephemeral: its own temporary folder, gone when it stops
    try:
        booting = asyncio.ensure_future(cluster.start())
        await clock.run_until(booting.done, timeout=BOOT_TIMEOUT, step=0.1)
        booting.result()
        replayed, refused = await _play(cluster, clock, trace)
        end = float(trace.header["to"]["time"])
        if end > clock.now():
            await clock.advance(end - clock.now())
        history = HistoryClient(cluster.api_client(CONSOLE))
        bounds = await history.bounds()
        changes = [_change(c) for c in await history.changes(bounds.oldest, bounds.current)]
        objects = [{"resource": resource, "group": group, "object": obj}
                   for resource, group in (("replicasets", "apps"), ("pods", ""))
                   for obj in await history.list_at(resource, bounds.oldest, group=group)]
    finally:
        stopping = asyncio.ensure_future(cluster.stop())
        await clock.run_until(stopping.done, timeout=BOOT_TIMEOUT, step=0.1)
    original = outcome(trace.objects, trace.changes)
    again = outcome(objects, changes)
    return RerunResult(original, again, compare(original, again), replayed, refused, changed)


def _change(c: Any) -> Obj:
    return {"revision": c.revision, "time": c.time, "event": c.type, "resource": c.resource, "group": c.group,
            "namespace": c.namespace, "name": c.name, "object": c.object}


async def _play(cluster: Any, clock: Any, trace: Trace) -> tuple[int, list[Obj]]:
    """Send every input and fault at its time; returns (replayed, refused with why)."""
    order = {"input": 0, "fault": 1}
    timed = sorted([*trace.inputs, *trace.faults], key=lambda r: (float(r["time"]), order[r["type"]]))
    ids: dict[str, str] = {}  # recorded fault id -> the rerun's
    replayed = 0
    refused: list[Obj] = []
    for record in timed:
        at = float(record["time"])
        if at > clock.now():
            await clock.advance(at - clock.now())
        try:
            if record["type"] == "input":
                code, why = await _send(cluster, record)
            else:
                code, why = await _fault(cluster, record, ids)
        except Exception as err:  # noqa: BLE001 - one refused input must not end the rerun
            code, why = 500, str(err) or type(err).__name__
        if code < 400:
            replayed += 1
        else:
            what = record.get("fault") or f"{record.get('verb')} {record.get('resource')} {record.get('name') or ''}"
            refused.append({"time": at, "what": what.strip(), "code": code, "message": why})
    return replayed, refused


async def _send(cluster: Any, record: Obj) -> tuple[int, str]:
    from kconsole.api.types import Credentials, Request, UserInfo

    client = cluster.api_client(UserInfo(record["user"], tuple(record.get("groups") or ())))
    request = Request(
        record["verb"], record["resource"], group=record.get("group"), version=record.get("version"),
        namespace=record.get("namespace"), name=record.get("name"), subresource=record.get("subresource"),
        body=record.get("body"), patch_type=record.get("patchType"), field_manager=record.get("fieldManager"),
        force=bool(record.get("force")), propagation_policy=record.get("propagationPolicy"),
        grace_period_seconds=record.get("gracePeriodSeconds"), label_selector=record.get("labelSelector") or "",
        field_selector=record.get("fieldSelector") or "", credentials=Credentials(token=client.token),
        user_agent=record.get("userAgent") or client.user_agent, source="rerun")
    response = await client.entry.handle(request)
    code = getattr(response, "code", 200)
    body = getattr(response, "body", None)
    message = body.get("message", "") if isinstance(body, dict) and code >= 400 else ""
    return code, message


async def _fault(cluster: Any, record: Obj, ids: dict[str, str]) -> tuple[int, str]:
    from kconsole.faults import FaultError

    try:
        if record["action"] == "apply":
            fault = await cluster.faults.apply(record["fault"], record["target"], record.get("params") or {})
            if record.get("id"):
                ids[str(record["id"])] = fault.id
        else:
            mine = ids.get(str(record.get("id")))
            if mine is None:
                return 404, f"fault {record.get('id')} was not applied in this rerun"
            await cluster.faults.heal(mine)
    except FaultError as err:
        return 409, str(err)
    return 200, ""


def check_rerunnable(trace: Trace) -> None:
    """A trace without recorded inputs reruns nothing: say so instead of comparing two empty runs."""
    if not trace.header.get("inputsRecorded") and not trace.inputs and not trace.faults:
        raise TraceError("this trace has no recorded inputs (its data folder kept none), so a rerun would "
                         "replay nothing; replay it as a film instead (without --rerun)")
