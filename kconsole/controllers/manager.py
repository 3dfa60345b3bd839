"""kube-controller-manager: every controller in one process, active only while holding the Lease.

Several replicas run at once; each competes for ``kube-system/kube-controller-manager`` (lease
15 s, renew deadline 10 s, retry 2 s — upstream's defaults). The holder builds a fresh
:class:`ControllerContext` (its own informers, recorders), constructs every selected controller,
waits for the caches and starts them; losing the Lease or :meth:`ControllerManagerReplica.stop`
tears all of it down. Nothing survives a hand-over but what is in the API: the next leader
re-lists and converges, which is what level-triggered controllers are for.

:data:`CONTROLLERS` maps upstream's controller names (``kube-controller-manager --controllers``,
v1.28+ spelling) to classes. Classes are imported lazily by ``module:Class`` so the table works
while some modules are missing; :func:`unavailable_controllers` says which and why.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import random
from collections.abc import Iterator, Mapping
from typing import Any

from kconsole.client import Client, InformerFactory, LeaderElectedReplica, LeaderElector
from kconsole.clock import Clock
from kconsole.controllers.base import Controller, ControllerContext

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-system"
LEASE_NAME = "kube-controller-manager"
#: How long the new leader waits for its informers before starting controllers anyway (simulated s).
CACHE_SYNC_TIMEOUT = 60.0

#: Upstream controller name -> "module:Class", in start order.
CONTROLLER_PATHS: dict[str, str] = {
    "serviceaccount-controller": "kconsole.controllers.serviceaccount:ServiceAccountsController",
    "root-ca-certificate-publisher-controller": "kconsole.controllers.rootcacertpublisher:RootCACertPublisher",
    "certificatesigningrequest-signing-controller": "kconsole.controllers.certificates:CSRSigningController",
    "namespace-controller": "kconsole.controllers.namespace:NamespaceController",
    "clusterrole-aggregation-controller": "kconsole.controllers.clusterroleaggregation:ClusterRoleAggregationController",
    "garbage-collector-controller": "kconsole.controllers.garbagecollector:GarbageCollector",
    "node-lifecycle-controller": "kconsole.controllers.nodelifecycle:NodeLifecycleController",
    "taint-eviction-controller": "kconsole.controllers.nodelifecycle:TaintEvictionController",
    "pod-garbage-collector-controller": "kconsole.controllers.podgc:PodGCController",
    "endpointslice-controller": "kconsole.controllers.endpointslice:EndpointSliceController",
    "endpoints-controller": "kconsole.controllers.endpointslice:EndpointsController",
    "deployment-controller": "kconsole.controllers.deployment:DeploymentController",
    "replicaset-controller": "kconsole.controllers.replicaset:ReplicaSetController",
    "daemonset-controller": "kconsole.controllers.daemonset:DaemonSetsController",
    "statefulset-controller": "kconsole.controllers.statefulset:StatefulSetController",
    "job-controller": "kconsole.controllers.job:JobController",
    "cronjob-controller": "kconsole.controllers.cronjob:CronJobController",
    "ttl-after-finished-controller": "kconsole.controllers.ttlafterfinished:TTLAfterFinishedController",
    "disruption-controller": "kconsole.controllers.disruption:DisruptionController",
    "horizontal-pod-autoscaler-controller": "kconsole.controllers.hpa:HorizontalController",
    "resourcequota-controller": "kconsole.controllers.resourcequota:ResourceQuotaController",
    "persistentvolume-binder-controller": "kconsole.controllers.persistentvolume:PersistentVolumeController",
    "kconsole-volume-provisioner": "kconsole.controllers.volumeprovisioner:VolumeProvisioner",
    "ephemeral-volume-controller": "kconsole.controllers.ephemeralvolume:EphemeralVolumeController",
    "persistentvolumeclaim-protection-controller": "kconsole.controllers.volumeprotection:PVCProtectionController",
    "persistentvolume-protection-controller": "kconsole.controllers.volumeprotection:PVProtectionController",
}

_unavailable: dict[str, str] = {}


def _load(name: str) -> type[Controller] | None:
    """The class for ``name``, or None when its module or class does not exist (yet)."""
    module_name, _, class_name = CONTROLLER_PATHS[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and module_name.startswith(err.name):
            _unavailable[name] = f"module {module_name} does not exist"
            return None
        raise
    except Exception as err:  # noqa: BLE001 - a broken module must not take the other controllers down
        log.exception("controller %s: importing %s failed", name, module_name)
        _unavailable[name] = f"importing {module_name} failed: {err}"
        return None
    cls = getattr(module, class_name, None)
    if cls is None:
        _unavailable[name] = f"{module_name} has no class {class_name}"
        return None
    _unavailable.pop(name, None)
    return cls  # type: ignore[no-any-return]


class _ControllerTable(Mapping[str, type[Controller]]):
    """Upstream name -> controller class, importing on access; lists only importable controllers."""

    def __getitem__(self, name: str) -> type[Controller]:
        if name not in CONTROLLER_PATHS:
            raise KeyError(f"unknown controller {name!r}; known: {', '.join(CONTROLLER_PATHS)}")
        cls = _load(name)
        if cls is None:
            raise KeyError(f"controller {name!r} is not available: {_unavailable.get(name, '')}")
        return cls

    def __iter__(self) -> Iterator[str]:
        return (name for name in CONTROLLER_PATHS if _load(name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in CONTROLLER_PATHS and _load(name) is not None


CONTROLLERS: Mapping[str, type[Controller]] = _ControllerTable()


def unavailable_controllers() -> dict[str, str]:
    """Known controllers that cannot be loaded, with the reason."""
    return {name: _unavailable[name] for name in CONTROLLER_PATHS if _load(name) is None}


class ControllerManagerReplica(LeaderElectedReplica):
    """One kube-controller-manager process: leader election plus, while leading, every controller."""

    def __init__(self, client: Client, clock: Clock, *, identity: str, rng: random.Random,
                 settings: dict[str, dict[str, Any]] | None = None, controllers: list[str] | None = None,
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0) -> None:
        if controllers is None:
            names = list(CONTROLLERS)
        else:
            unknown = [n for n in controllers if n not in CONTROLLER_PATHS]
            if unknown:
                raise ValueError(f"unknown controller(s) {', '.join(unknown)}; known: {', '.join(CONTROLLER_PATHS)}")
            missing = [n for n in controllers if n not in CONTROLLERS]
            if missing:
                raise ValueError("controller(s) not available: "
                                 + "; ".join(f"{n}: {_unavailable.get(n, '')}" for n in missing))
            names = list(dict.fromkeys(controllers))
        unknown_settings = [k for k in (settings or {}) if k not in CONTROLLER_PATHS]
        if unknown_settings:
            raise ValueError(f"settings for unknown controller(s): {', '.join(unknown_settings)}")
        self.client = client
        self.clock = clock
        self.identity = identity
        self.rng = rng
        self.settings = {k: dict(v) for k, v in (settings or {}).items()}
        self.names = names
        self.context: ControllerContext | None = None
        self._active: dict[str, Controller] = {}
        super().__init__(
            LeaderElector(client, clock, namespace=LEASE_NAMESPACE, name=LEASE_NAME, identity=identity,
                          lease_duration=lease_duration, renew_deadline=renew_deadline, retry_period=retry_period,
                          on_started_leading=self._lead, on_stopped_leading=self._stopped_leading),
            task_name=f"kcm-elector:{identity}")

    # ------------------------------------------------------------------ handle

    @property
    def active(self) -> dict[str, Controller]:
        """Controllers running now (empty unless leading and started)."""
        return dict(self._active)

    # ------------------------------------------------------------------ leading

    def _settings_for(self, classes: dict[str, type[Controller]]) -> dict[str, dict[str, Any]]:
        """Settings under both the table name and the class's own ``name`` (what ``Controller.settings`` reads)."""
        out = {k: dict(v) for k, v in self.settings.items()}
        for table_name, cls in classes.items():
            if table_name in out and cls.name and cls.name != table_name:
                out.setdefault(cls.name, out[table_name])
        return out

    async def _lead(self) -> None:
        classes = {name: CONTROLLERS[name] for name in self.names if name in CONTROLLERS}
        ctx = ControllerContext(self.client, InformerFactory(self.client), self.clock, self.rng,
                                settings=self._settings_for(classes))
        self.context = ctx
        built: dict[str, Controller] = {}
        try:
            for name, cls in classes.items():
                try:
                    built[name] = cls(ctx)
                except Exception:  # noqa: BLE001 - one broken controller must not stop the rest
                    log.exception("controller-manager %s: constructing %s failed", self.identity, name)
            await ctx.informers.start_all()
            try:
                await ctx.informers.wait_for_cache_sync(CACHE_SYNC_TIMEOUT)
            except TimeoutError as err:
                log.warning("controller-manager %s: %s; starting controllers anyway", self.identity, err)
            for name, controller in built.items():
                try:
                    await controller.start()
                except Exception:  # noqa: BLE001
                    log.exception("controller-manager %s: starting %s failed", self.identity, name)
                    continue
                self._active[name] = controller
            await ctx.informers.start_all()  # informers a controller created while starting
            log.info("controller-manager %s: leading with %d controllers", self.identity, len(self._active))
            await asyncio.Event().wait()
        finally:
            await self._teardown(ctx, built)

    async def _teardown(self, ctx: ControllerContext, built: dict[str, Controller]) -> None:
        self._active.clear()
        for name, controller in built.items():
            try:
                await controller.stop()
            except Exception:  # noqa: BLE001
                log.exception("controller-manager %s: stopping %s failed", self.identity, name)
        await ctx.informers.stop_all()
        for recorder in list(ctx.recorders.values()):
            await recorder.close()
        if self.context is ctx:
            self.context = None

    def _stopped_leading(self) -> None:
        log.info("controller-manager %s: stopped leading", self.identity)
