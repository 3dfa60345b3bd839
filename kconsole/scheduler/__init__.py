"""kube-scheduler: queue, batched filter/score framework, upstream's default plugins, decision records.

Layer rule: imports only ``kconsole.client``, ``kconsole.objects`` and ``kconsole.clock``.

Entry point for the composition root (``cluster.py``)::

    from kconsole.scheduler import SchedulerReplica, SchedulerConfig, load_config

    replica = SchedulerReplica(client, clock, identity="control-plane-1", rng=random.Random(seed),
                               config=None)            # client acts as user system:kube-scheduler
    await replica.start()        # competes for Lease kube-system/kube-scheduler
    await replica.stop()         # leaves the election; the Lease expires for the others (failure keys)
    replica.running, replica.is_leader
    replica.scheduler            # the Scheduler while leading, else None
    replica.scheduler.decisions  # latest SchedulingDecision records (dicts), newest last
    replica.scheduler.pending_reasons()   # {"ns/pod": last FailedScheduling message}

``SchedulerConfig()`` is upstream's default profile; ``load_config(path_or_yaml)`` reads a
KubeSchedulerConfiguration-shaped YAML (see :mod:`kconsole.scheduler.config`), including
``decisionRecords: {enabled: false}`` for scale runs.

Modules: :mod:`.queue` (active/back-off/unschedulable queues), :mod:`.framework` (extension
points, plugin registry, nodes-to-score cut-off), :mod:`.cache` (NodeInfo + assume cache),
:mod:`.memo` (incremental per-node results), :mod:`.plugins` (one module per plugin),
:mod:`.diagnosis` (FailedScheduling message), :mod:`.decisions` (SchedulingDecision records),
:mod:`.scheduler` (run loop), :mod:`.replicas` (leader election).
"""

from kconsole.scheduler.config import SchedulerConfig, load_config, parse_config
from kconsole.scheduler.replicas import SchedulerReplica
from kconsole.scheduler.scheduler import Scheduler

__all__ = ["Scheduler", "SchedulerConfig", "SchedulerReplica", "load_config", "parse_config"]
