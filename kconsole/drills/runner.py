"""Running a drill headless on the virtual clock: boot, copy manifests, run each step, give verdicts.

The run boots a :class:`~kconsole.cluster.Cluster` on a :class:`~kconsole.clock.VirtualClock` in the
drill's own data folder (a temporary one unless given): ``workspace/`` holds the manifests, which the
folder sync applies as it does for ``kconsole DIR`` (without a file watcher: the runner tells it
which files changed, so runs are deterministic); ``cluster/`` holds the store. The project's files
are never touched.

Each step: its prediction (asked through ``predictor``, recorded as skipped without one), its
action (one handler per action kind in :data:`ACTIONS`, acting through the API, the fault catalog or
the workspace, like a user), then its expectations, polled together once per simulated second.
Anything awaited runs while simulated time moves, so a request that waits for a timeout (etcd without
quorum) does not stall the run.

Observers (the console's Drill panel, the CLI's printer) pass ``listener``: it is called with the
:class:`StepState` whenever a step starts, gets a verdict, or ends.

The console runs the same runner over its own clock and cluster: it passes ``clock`` (the runner then
never moves time, it waits on it: a real clock, or a test's virtual one), builds the cluster with
:meth:`DrillRunner.prepare` and starts it itself; ``by_hand`` lets the learner do a step's action:
the runner watches the step's expectations until they hold, or until ``by_hand`` returns (the
learner asked the drill to act).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from kconsole.api.types import UserInfo
from kconsole.client import Client, StatusError
from kconsole.clock import Clock, VirtualClock
from kconsole.cluster import ADMIN, SYNC, Cluster, ClusterConfig
from kconsole.drills import kubectl
from kconsole.drills.expect import Context, Verdict, Watcher, field_values, observe, when
from kconsole.drills.history import EventLog, Occurrence
from kconsole.drills.referee import Referee, Report, Violation
from kconsole.drills.spec import Drill, Manifest, Prediction, Step

T = TypeVar("T")
Status = Literal["pending", "running", "waiting", "passed", "failed", "skipped"]

#: Simulated seconds between two looks at a step's expectations.
POLL = 1.0
#: Simulated seconds the clock moves per turn while an action or a read is in flight.
DRIVE_STEP = 0.1
#: An action or read still unanswered after this long (simulated) fails its step.
DRIVE_LIMIT = 300.0
#: Simulated seconds allowed for the boot (etcd, API server, leaders elected).
BOOT_LIMIT = 120.0
#: Who reads the cluster to check expectations: its own user, so its reads stay out of what a
#: step's ``request`` expectations count.
CHECKER = UserInfo("kconsole:drill-checker", ("system:masters",))
#: How much of the API server's request log a ``request`` expectation looks back over.
REQUEST_WINDOW = 10_000
#: The actions a learner can do by hand (keys, kubectl, a file in the workspace).
HAND_ACTIONS = frozenset({"apply", "delete", "patch", "scale", "kubectl", "fault", "heal"})


class StepFailed(Exception):
    """A step's action could not be done; the message says why."""


@dataclass(slots=True)
class StepState:
    """What an observer sees of one step."""

    step: Step
    status: Status = "pending"
    detail: str = ""  # what the action did (kubectl's output, the fault id, ...)
    prediction: str = ""  # "skipped", "right", "wrong" (empty without a question)
    verdicts: list[Verdict] = field(default_factory=list)
    started: float | None = None  # simulated seconds since boot
    ended: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.step.index, "name": self.step.name, "status": self.status, "detail": self.detail,
                "prediction": self.prediction, "started": self.started, "ended": self.ended,
                "where": str(self.step.where), "verdicts": [v.to_dict() for v in self.verdicts]}


@dataclass(slots=True)
class RunResult:
    drill: Drill
    seed: int
    steps: list[StepState]
    events: list[Occurrence]
    setup_errors: list[str]
    duration: float  # simulated seconds from boot to the end of the last step
    referee: Report | None = None  # None when the run had no referee

    @property
    def passed(self) -> bool:
        return not self.setup_errors and all(s.status in ("passed", "skipped") for s in self.steps) \
            and (self.referee is None or self.referee.passed)

    def to_dict(self) -> dict[str, Any]:
        return {"drill": self.drill.name, "title": self.drill.title, "seed": self.seed, "passed": self.passed,
                "simulated_seconds": self.duration, "setup_errors": self.setup_errors,
                "steps": [s.to_dict() for s in self.steps], "events": [e.to_dict() for e in self.events],
                "referee": self.referee.to_dict() if self.referee is not None else None}


Listener = Callable[[StepState], None]
Predictor = Callable[[Step, Prediction], Awaitable[int | None]]
#: Awaited while a step waits for the learner; returns when the learner asks the drill to act.
ByHand = Callable[[StepState], Awaitable[None]]


def by_hand_possible(step: Step) -> bool:
    """A step the learner may do: an action a user can do, expectations that show it was done, and
    no ``notBefore`` or expected refusal (a bound from the drill's own action, which then never ran)."""
    args = step.args
    refusal = (isinstance(args, dict) and "error" in args) or bool(getattr(args, "error", ""))
    return (step.action in HAND_ACTIONS and bool(step.expect) and not refusal
            and all(not e.not_before for e in step.expect))


class DrillRunner:
    """Runs one drill once. ``predictor`` answers predictions (None: skipped, as headless);
    ``clock``: time moved by someone else (the console), else the runner's own virtual clock; the
    referee (:mod:`kconsole.drills.referee`) watches the run unless ``referee`` is False."""

    def __init__(self, drill: Drill, *, seed: int | None = None, data_dir: Path | None = None,
                 listener: Listener | None = None, predictor: Predictor | None = None,
                 clock: Clock | None = None, by_hand: ByHand | None = None, referee: bool = True) -> None:
        self.drill = drill
        self.seed = drill.seed if seed is None else seed
        self.data_dir = data_dir
        self.listener = listener
        self.predictor = predictor
        self.by_hand = by_hand
        self.states = [StepState(step) for step in drill.steps]
        #: The runner moves its own virtual clock; a clock handed in moves by itself (or by a test).
        self.drives = clock is None
        self.clock: Clock = VirtualClock() if clock is None else clock
        self.cluster: Cluster | None = None
        self._owns_cluster = False
        self.events: EventLog | None = None
        self.workspace = Path(".")
        self.origin = 0.0
        self.faults: dict[str, str] = {}  # the name a step gave -> fault id
        self.referee = Referee(seed=self.seed) if referee else None
        self._mark = 0  # events recorded before the current step began
        self._request_mark = 0  # the API request log's last sequence number before the current step

    # ------------------------------------------------------------------ the run

    async def run(self) -> RunResult:
        """Boot (unless :meth:`prepare` built the cluster for someone else to start), run every step."""
        tempdir = None
        if self.cluster is None:
            if self.data_dir is None:
                tempdir = tempfile.mkdtemp(prefix="kconsole-drill-")
                root = Path(tempdir)
            else:
                root = Path(self.data_dir)
            self.prepare(root)
            self._owns_cluster = True
        try:
            setup_errors = await self._boot()
            if not setup_errors:
                await self.body()
            duration = round(self.now(), 3)
            await self._judge()
            return RunResult(self.drill, self.seed, self.states, list(self.events.occurrences if self.events else []),
                             setup_errors, duration, self.referee.report() if self.referee is not None else None)
        finally:
            if self._owns_cluster:
                await self._shutdown()
            elif self.events is not None:
                await self.events.stop()
            if tempdir is not None:
                shutil.rmtree(tempdir, ignore_errors=True)

    def prepare(self, root: Path, *, watch: bool = False, **config: Any) -> Cluster:
        """Write the drill's workspace and held-back files under ``root`` and build its cluster (not
        started). ``watch``: the cluster's own folder sync follows the workspace, as ``kconsole DIR``
        does (the console: the learner's edits apply); else the runner syncs only what its steps
        changed. ``config``: ClusterConfig fields over the drill's (``http``, ``port``, ...)."""
        if root.is_dir() and any(root.iterdir()):  # a run starts from nothing, or it is not the drill
            raise FileExistsError(f"{root} is not empty; a drill's data folder must be new or empty")
        root.mkdir(parents=True, exist_ok=True)
        self.workspace = root / "workspace"
        self.workspace.mkdir(parents=True, exist_ok=True)
        for m in self.drill.manifests:
            (self.workspace / m.target).write_text(m.text, encoding="utf-8")
        held = root / kubectl.HELD_BACK  # outside the workspace, so the sync never applies them
        held.mkdir(exist_ok=True)
        for m in self.drill.files.values():
            (held / m.name).write_text(m.text, encoding="utf-8")
        settings: dict[str, Any] = {"http": False, **self.drill.cluster, **config}
        config = ClusterConfig(data_dir=root / "cluster", manifests=self.workspace if watch else None,
                               seed=self.seed, **settings)
        config.validate()
        self.cluster = Cluster(config, clock=self.clock)
        return self.cluster

    async def body(self) -> None:
        """What the run does once booted: the drill's steps in order (chaos runs a schedule instead)."""
        for state in self.states:
            await self._run_step(state)

    async def _judge(self) -> None:
        """End the referee's recording of this cluster and judge it."""
        if self.referee is not None and self.referee.attached:
            try:
                await self.drive(self.referee.detach(), DRIVE_LIMIT)
            except StepFailed as err:
                self.referee.report().violations.append(Violation(
                    "referee", f"could not finish judging: {err}", round(self.now(), 3)))

    def now(self) -> float:
        """Simulated seconds since the boot finished."""
        return self.clock.now() - self.origin

    async def drive(self, aw: Coroutine[Any, Any, T], limit: float = DRIVE_LIMIT) -> T:
        """Await ``aw`` while simulated time moves (so timeouts inside it can fire)."""
        task = asyncio.ensure_future(aw)
        try:
            if self.drives:
                assert isinstance(self.clock, VirtualClock)
                await self.clock.run_until(task.done, timeout=limit, step=DRIVE_STEP)
            else:
                await self.clock.wait_for(asyncio.shield(task), limit)
        except TimeoutError:
            task.cancel()
            raise StepFailed(f"no answer within {limit:g} simulated seconds") from None
        return task.result()

    async def advance(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass: move the runner's own clock, or wait on the shared one."""
        if self.drives:
            assert isinstance(self.clock, VirtualClock)
            await self.clock.advance(seconds)
        else:
            await self.clock.sleep(seconds)

    async def until(self, predicate: Callable[[], bool], limit: float, step: float) -> None:
        """Until ``predicate()`` holds, looking every ``step`` simulated seconds; TimeoutError after ``limit``."""
        spent = 0.0
        while not predicate():
            if spent >= limit:
                raise TimeoutError(f"condition not met within {limit} simulated seconds")
            await self.advance(step)
            spent += step

    async def _boot(self) -> list[str]:
        await self._start_cluster()
        self.origin = self.clock.now()
        return await self._observe()

    async def _start_cluster(self) -> None:
        """Start the cluster (unless its owner did), then wait for the leaders."""
        cluster = self.cluster
        assert cluster is not None
        if not cluster.started:
            await self.drive(cluster.start(), BOOT_LIMIT)
        await self.until(lambda: any(s.is_leader for s in cluster.schedulers)
                         and any(m.is_leader for m in cluster.controller_managers), BOOT_LIMIT, 0.5)

    async def _observe(self) -> list[str]:
        """Record events (on from what was recorded before a restart) and sync the workspace."""
        assert self.cluster is not None
        if self.events is None:
            self.events = EventLog(self.client(), self.clock, self.origin)
        else:
            self.events.client = self.client()
        await self.drive(self.events.start())
        if self.referee is not None:
            await self.drive(self.referee.attach(self.cluster, origin=self.origin, client=self.client()))
        from kconsole.sync import ManifestSync

        sync = self.cluster.sync  # a watched workspace: the cluster's own sync applied it at start
        if sync is None:
            sync = ManifestSync(self.cluster.api_client(SYNC), self.workspace, data_dir=self.cluster.data_dir,
                                clock=self.clock, watch=False)
            self.cluster.sync = sync
            await self.drive(sync.start())
        return [str(st.error) for st in sync.files.values() if st.status == "error" and st.error is not None]

    async def restart(self, snapshot: Path | None = None) -> list[str]:
        """Stop the cluster and start it again: on its own store, or on a fresh store restored from
        ``snapshot`` (as ``etcdutl snapshot restore`` into a new folder). Simulated time goes on."""
        assert self.cluster is not None
        if not self._owns_cluster:
            raise StepFailed("restart and restore replace the cluster, and the console shows this one; "
                             f"run them headless: kconsole drill run {self.drill.name}")
        old = self.cluster.data_dir
        await self._shutdown()
        data_dir = old
        if snapshot is not None:
            from kconsole.store import snapshot as snapshots
            from kconsole.store.facade import MEMBERS_DIR

            data_dir = old.with_name(f"{old.name}-restored-{len(list(old.parent.glob(old.name + '-restored-*'))) + 1}")
            data_dir.mkdir()
            for item in old.iterdir():  # keys and the sync's inventory come along; the store does not
                if item.name != MEMBERS_DIR and item.is_file():
                    shutil.copy2(item, data_dir / item.name)
            snapshots.restore(snapshot, data_dir, members=self.cluster.config.control_planes)
        config = dataclasses.replace(self.cluster.config, data_dir=data_dir)
        self.cluster = Cluster(config, clock=self.clock)
        await self._start_cluster()
        return await self._observe()

    async def _shutdown(self) -> None:
        await self._judge()
        if self.events is not None:
            await self.events.stop()
        if self.cluster is not None and self.cluster.started:
            try:
                await self.drive(self.cluster.stop(), 120)
            except StepFailed:
                pass

    def client(self, user: str | None = None) -> Client:
        assert self.cluster is not None
        if user is None or user == ADMIN.name:
            return self.cluster.api_client(ADMIN)
        return self.cluster.api_client(user)  # a node's user gets system:nodes, as kubelets do

    def _requests(self, n: int = REQUEST_WINDOW) -> list[Any]:
        """The last ``n`` records of the API server's request log, oldest first (the console's API log)."""
        api = self.cluster.api if self.cluster is not None else None
        return list(api.audit_recent(n)) if api is not None else []

    def _notify(self, state: StepState) -> None:
        if self.listener is not None:
            self.listener(state)

    async def _run_step(self, state: StepState) -> None:
        step = state.step
        state.status = "running"
        state.started = round(self.now(), 3)
        self._mark = len(self.events.occurrences) if self.events is not None else 0
        last = self._requests(1)
        self._request_mark = last[0].seq if last else 0
        self._notify(state)
        if step.predict is not None:
            answer = await self.predictor(step, step.predict) if self.predictor is not None else None
            state.prediction = "skipped" if answer is None else ("right" if answer == step.predict.answer else "wrong")
            self._notify(state)
        baselines = await self._baselines(step)
        if self.by_hand is not None and by_hand_possible(step) and await self._done_by_hand(state, baselines):
            state.detail = f"done by hand at simulated {when(self.now())}"
            self._notify(state)
        elif step.action is not None:
            refusal = step.args.get("error") if isinstance(step.args, dict) and step.action != "kubectl" else None
            try:
                state.detail = await ACTIONS[step.action](self, step.args)
                if refusal is not None:
                    state.detail += (f"\nexpected the API to refuse with /{refusal}/, but it accepted at "
                                     f"simulated {when(self.now())}")
                    return self._end(state, "failed")
            except StepFailed as err:
                state.detail = str(err)
                return self._end(state, "failed")
            except StatusError as err:
                state.detail = f"the API refused: {err.code} {err.reason}: {err.message}"
                if refusal is None or re.search(str(refusal), state.detail) is None:
                    if refusal is not None:
                        state.detail += f"\nexpected a refusal matching /{refusal}/ at simulated {when(self.now())}"
                    return self._end(state, "failed")
            except Exception as err:  # noqa: BLE001 - one broken step must not hide the others' verdicts
                state.detail = f"the {step.action} action failed: {type(err).__name__}: {err}"
                return self._end(state, "failed")
            self._notify(state)
        if step.expect:
            await self._check(state, baselines)
        if state.verdicts and not all(v.passed for v in state.verdicts):
            return self._end(state, "failed")
        self._end(state, "passed" if step.action or step.expect else "skipped")

    def _end(self, state: StepState, status: Status) -> None:
        state.status = status
        state.ended = round(self.now(), 3)
        self._notify(state)

    async def _baselines(self, step: Step) -> dict[int, list[Any]]:
        """The fields ``changes`` expectations compare against, read before the action."""
        out: dict[int, list[Any]] = {}
        assert self.cluster is not None
        for exp in step.expect:
            if "changes" in exp.compare:
                try:
                    out[id(exp)] = await self.drive(field_values(exp, self.cluster.api_client(CHECKER)))
                except (StatusError, StepFailed):
                    out[id(exp)] = []
        return out

    def _context(self, baselines: dict[int, list[Any]]) -> Context:
        assert self.events is not None and self.cluster is not None
        return Context(self.cluster.api_client(CHECKER), self.events, self._mark, baselines, self._requests,
                       self._request_mark, lambda: self.cluster.proxies if self.cluster is not None else {})

    async def _done_by_hand(self, state: StepState, baselines: dict[int, list[Any]]) -> bool:
        """Wait for the learner: True once every expectation holds after one did not (they did the
        action), False when the learner asks the drill to act, or when all held before anything was
        done (nothing by hand could show)."""
        assert self.by_hand is not None
        ctx = self._context(baselines)
        state.status = "waiting"
        self._notify(state)
        asked = asyncio.ensure_future(self.by_hand(state))
        first = True
        try:
            while not asked.done():
                held = []
                for exp in state.step.expect:
                    try:
                        held.append((await self.drive(observe(exp, ctx)))[0])
                    except StepFailed:
                        held.append(False)
                if all(held):
                    return not first
                first = False
                tick = asyncio.ensure_future(self.advance(POLL))
                await asyncio.wait({asked, tick}, return_when=asyncio.FIRST_COMPLETED)
                tick.cancel()
            return False
        finally:
            asked.cancel()
            state.status = "running"
            self._notify(state)

    async def _check(self, state: StepState, baselines: dict[int, list[Any]]) -> None:
        start = self.now()
        ctx = self._context(baselines)
        watchers = [Watcher(exp, start) for exp in state.step.expect]
        while True:
            for w in watchers:
                if w.verdict is None:
                    try:
                        held, seen = await self.drive(observe(w.exp, ctx))
                    except StepFailed as err:
                        held, seen = False, str(err)
                    w.poll(held, seen, self.now())
                    if w.verdict is not None:
                        state.verdicts.append(w.verdict)
                        self._notify(state)
            if all(w.verdict is not None for w in watchers):
                break
            await self.advance(POLL)
        order = {id(w.exp): i for i, w in enumerate(watchers)}
        state.verdicts.sort(key=lambda v: order[id(v.expectation)])


# --------------------------------------------------------------------------- actions


async def _apply(run: DrillRunner, args: str | Manifest) -> str:
    """Copy the file into the workspace and run the sync over it, as a save in the watched folder."""
    if isinstance(args, Manifest) and args.ref:
        named = run.drill.files.get(args.name) or next(m for m in run.drill.manifests if m.name == args.name)
        manifest = Manifest(named.name, named.text, args.save_as or named.save_as, args.error)
    elif isinstance(args, Manifest):
        manifest = args
    else:
        manifest = run.drill.files.get(args) or next((m for m in run.drill.manifests if m.name == args), None)
        if manifest is None:
            manifest = Manifest(Path(args).name, (run.drill.path.parent / args).read_text(encoding="utf-8"))
    (run.workspace / manifest.target).write_text(manifest.text, encoding="utf-8")
    if not manifest.error:
        return await _sync(run, manifest.target)
    try:
        done = await _sync(run, manifest.target)
    except StepFailed as err:
        if re.search(manifest.error, str(err)) is None:
            raise StepFailed(f"{err}\nexpected a refusal matching /{manifest.error}/ at simulated "
                             f"{when(run.now())}") from None
        return f"refused as expected: {err}"
    raise StepFailed(f"{done}\nexpected the file to be refused with /{manifest.error}/, but it applied at "
                     f"simulated {when(run.now())}")


async def _sync(run: DrillRunner, name: str) -> str:
    assert run.cluster is not None and run.cluster.sync is not None
    sync = run.cluster.sync
    await run.drive(sync.sync_now({name}))
    st = sync.files.get(name)
    if st is None:
        return f"{name}: removed"
    if st.status == "error":
        raise StepFailed(st.summary())
    return st.summary()


def _resource(client: Client, kind: str) -> tuple[str, bool]:
    info = client.resource_info(kind)
    return (f"{info.resource}.{info.group}" if info.group else info.resource), info.namespaced


async def _delete(run: DrillRunner, args: dict[str, Any]) -> str:
    if "file" in args:
        path = run.workspace / str(args["file"])
        if not path.is_file():
            raise StepFailed(f"no file {args['file']!r} in the workspace")
        path.unlink()
        await _sync(run, str(args["file"]))
        return f"removed {args['file']} from the workspace; the sync pruned its objects"
    client = run.client()
    resource, namespaced = _resource(client, str(args["kind"]))
    ns = str(args.get("namespace") or "default") if namespaced else None
    if "selector" in args:
        items = await run.drive(client.list_all(resource, ns, label_selector=str(args["selector"])))
        names = sorted(o["metadata"]["name"] for o in items if not o["metadata"].get("deletionTimestamp"))
        if args.get("limit") is not None:
            names = names[:int(args["limit"])]
        if not names:
            raise StepFailed(f"no {args['kind']} matches -l {args['selector']}"
                             + (f" in {ns}" if ns else ""))
    else:
        names = [str(args["name"])]
    for name in names:
        await run.drive(client.delete(resource, name, ns, grace_period_seconds=args.get("gracePeriod")))
    return f"deleted {args['kind']} {', '.join(names)}"


async def _patch(run: DrillRunner, args: dict[str, Any]) -> str:
    client = run.client()
    resource, namespaced = _resource(client, str(args["kind"]))
    ns = str(args.get("namespace") or "default") if namespaced else None
    obj = await run.drive(client.patch(resource, str(args["name"]), args["patch"], ns,
                                       patch_type=str(args.get("type") or "merge"),
                                       subresource=args.get("subresource")))
    return f"patched {args['kind']} {args['name']} (resourceVersion {obj['metadata'].get('resourceVersion')})"


async def _scale(run: DrillRunner, args: dict[str, Any]) -> str:
    client = run.client()
    resource, _ = _resource(client, str(args["kind"]))
    await run.drive(client.patch(resource, str(args["name"]), {"spec": {"replicas": int(args["replicas"])}},
                                 str(args.get("namespace") or "default"), subresource="scale"))
    return f"scaled {args['kind']} {args['name']} to {args['replicas']}"


async def _kubectl(run: DrillRunner, args: dict[str, Any]) -> str:
    user = str(args.get("as") or ADMIN.name)
    result = await run.drive(kubectl.run(run.client, user, str(args["command"]), run.workspace))
    shown = f"$ kubectl {args['command']}" + (f"   (as {user})" if user != ADMIN.name else "")
    text = f"{shown}\n{result.output}".rstrip()
    want = int(args.get("exitCode", 0))
    if result.code != want:
        raise StepFailed(f"{text}\nexpected exit code {want}, got {result.code} at simulated {when(run.now())}")
    if "output" in args and re.search(str(args["output"]), result.output) is None:
        raise StepFailed(f"{text}\nexpected the output to contain /{args['output']}/ at simulated {when(run.now())}")
    return text


async def _fault(run: DrillRunner, args: dict[str, Any]) -> str:
    from kconsole.faults import FaultError

    assert run.cluster is not None
    params = {str(k): str(v) for k, v in (args.get("params") or {}).items()}
    target = str(args.get("target") or "")
    if "selector" in args:
        ns = str(args.get("namespace") or "default")
        pods = await run.drive(run.client().list_all("pods", ns, label_selector=str(args["selector"])))
        names = sorted(p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp"))
        if not names:
            raise StepFailed(f"no pod in {ns} matches -l {args['selector']} for the fault")
        target = f"{ns}/{names[0]}"
    try:
        fault = await run.drive(run.cluster.faults.apply(str(args["type"]), target, params))
    except FaultError as err:
        raise StepFailed(str(err)) from None
    run.faults[str(args.get("as") or fault.id)] = fault.id
    detail = f" ({fault.detail})" if fault.detail else ""
    return f"fault {fault.id} {fault.type} on {fault.target}{detail}"


async def _heal(run: DrillRunner, name: str) -> str:
    from kconsole.faults import FaultError

    assert run.cluster is not None
    if name == "all":
        healed = await run.drive(run.cluster.faults.heal_all())
        return f"healed {', '.join(f.id for f in healed) or 'nothing (no fault active)'}"
    fid = run.faults.get(name)
    if fid is None:
        raise StepFailed(f"no fault named {name!r} was applied (named: {', '.join(run.faults) or 'none'})")
    try:
        fault = await run.drive(run.cluster.faults.heal(fid))
    except FaultError as err:
        raise StepFailed(str(err)) from None
    return f"healed {fault.id} {fault.type} on {fault.target}"


async def _snapshot(run: DrillRunner, name: str) -> str:
    """``etcdctl snapshot save``: the most advanced member's store, copied while the cluster runs."""
    from kconsole.store import snapshot as snapshots

    assert run.cluster is not None
    folder = run.workspace.parent / "snapshots"
    folder.mkdir(exist_ok=True)
    try:
        st = snapshots.save(run.cluster.data_dir, folder / name)
    except (OSError, ValueError) as err:
        raise StepFailed(f"snapshot save {name}: {err}") from None
    return f"saved snapshot {name}: revision {st.revision}, {st.total_keys} keys"


async def _restore(run: DrillRunner, name: str) -> str:
    path = run.workspace.parent / "snapshots" / name
    if not path.is_file():
        raise StepFailed(f"no snapshot named {name!r} was saved")
    from kconsole.store import snapshot as snapshots

    revision = snapshots.status(path).revision
    errors = await run.restart(path)
    if errors:
        raise StepFailed("restored, but the workspace no longer applies: " + "; ".join(errors))
    return f"restored snapshot {name} (revision {revision}) into a new store; the cluster restarted on it"


async def _restart(run: DrillRunner, _: Any) -> str:
    errors = await run.restart()
    if errors:
        raise StepFailed("restarted, but the workspace no longer applies: " + "; ".join(errors))
    return f"restarted the cluster on its store at simulated {when(run.now())}"


async def _wait(run: DrillRunner, seconds: float) -> str:
    await run.advance(seconds)
    return f"simulated time is now {when(run.now())}"


#: Step action -> handler(runner, args) -> what it did.
ACTIONS: dict[str, Callable[[DrillRunner, Any], Awaitable[str]]] = {
    "apply": _apply, "delete": _delete, "patch": _patch, "scale": _scale, "kubectl": _kubectl,
    "fault": _fault, "heal": _heal, "wait": _wait, "snapshot": _snapshot, "restore": _restore,
    "restart": _restart,
}
