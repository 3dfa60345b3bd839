"""What components use to talk to the API server (client-go's roles, in Python).

* :class:`Client` — requests through the API server's one entry, as one user; errors raise
  :class:`~kconsole.api.types.StatusError` (predicates in :mod:`kconsole.client.errors`).
* :class:`SharedInformer` / :class:`InformerFactory` — list+watch caches with indexes and handlers.
* :class:`WorkQueue` / :func:`run_workers` — deduplicating, rate-limited work queue for controllers.
* :class:`LeaderElector` — leader election over coordination.k8s.io/v1 Leases;
  :class:`LeaderElectedReplica` — a replica's start/stop around one (scheduler, controller-manager).
* :class:`EventRecorder` — core/v1 Events with upstream's aggregation and spam filter.

:class:`~kconsole.api.types.ResourceInfo` (what :meth:`Client.resource_info` hands out) and
:class:`StatusError` are re-exported so components above need not import ``kconsole.api``.

Layer rule: imports only ``kconsole.api.types``, ``kconsole.objects`` and ``kconsole.clock``.
"""

from kconsole.api.types import ProxiedError, ResourceInfo, StatusError

from .client import DEFAULT_PAGE_SIZE, Client
from .errors import (
    is_already_exists,
    is_conflict,
    is_forbidden,
    is_gone,
    is_invalid,
    is_not_found,
    is_server_unavailable,
    is_too_many_requests,
    retry_on_conflict,
)
from .events import EventRecorder
from .informer import (
    InformerFactory,
    SharedInformer,
    index_by_namespace,
    index_by_node_name,
    index_by_owner_uid,
    object_key,
)
from .leaderelection import LeaderElectedReplica, LeaderElector
from .workqueue import QueueShutDown, WorkQueue, run_workers

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "Client",
    "EventRecorder",
    "InformerFactory",
    "LeaderElectedReplica",
    "LeaderElector",
    "ProxiedError",
    "QueueShutDown",
    "ResourceInfo",
    "SharedInformer",
    "StatusError",
    "WorkQueue",
    "index_by_namespace",
    "index_by_node_name",
    "index_by_owner_uid",
    "is_already_exists",
    "is_conflict",
    "is_forbidden",
    "is_gone",
    "is_invalid",
    "is_not_found",
    "is_server_unavailable",
    "is_too_many_requests",
    "object_key",
    "retry_on_conflict",
    "run_workers",
]
