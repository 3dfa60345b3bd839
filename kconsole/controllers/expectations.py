"""upstream's ControllerExpectations: what a controller is waiting to see in its informer.

A controller that creates 3 pods must not create 3 more on its next sync just because its pod
informer has not caught up yet. Before writing it records how many creations (and which
deletions) it expects; handlers lower the count as the informer reports them; ``sync`` acts only
once the expectations are satisfied — or have expired (5 minutes), so a lost event never wedges it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kconsole.client import WorkQueue
from kconsole.clock import Clock
from kconsole.objects.meta import is_being_deleted, object_key

#: upstream ExpectationsTimeout.
EXPECTATIONS_TTL = 300.0


@dataclass(slots=True)
class _Expectation:
    adds: int
    deletes: set[str] = field(default_factory=set)
    stamp: float = 0.0


class Expectations:
    """Per controller key: pending creations (a count) and deletions (the pods' keys)."""

    def __init__(self, clock: Clock, ttl: float = EXPECTATIONS_TTL) -> None:
        self.clock = clock
        self.ttl = ttl
        self._items: dict[str, _Expectation] = {}

    def satisfied(self, key: str) -> bool:
        """Nothing pending, never recorded, or expired (then the controller re-observes)."""
        exp = self._items.get(key)
        if exp is None:
            return True
        if exp.adds <= 0 and not exp.deletes:
            return True
        return self.clock.now() - exp.stamp > self.ttl

    def expect_creations(self, key: str, n: int) -> None:
        self._items[key] = _Expectation(max(0, n), set(), self.clock.now())

    def expect_deletions(self, key: str, pod_keys: list[str]) -> None:
        self._items[key] = _Expectation(0, set(pod_keys), self.clock.now())

    def creation_observed(self, key: str) -> None:
        exp = self._items.get(key)
        if exp is not None and exp.adds > 0:
            exp.adds -= 1

    def lower_creations(self, key: str, n: int) -> None:
        """Creations that will never be observed (the write failed or was skipped)."""
        exp = self._items.get(key)
        if exp is not None:
            exp.adds = max(0, exp.adds - n)

    def deletion_observed(self, key: str, pod_key: str) -> None:
        exp = self._items.get(key)
        if exp is not None:
            exp.deletes.discard(pod_key)

    def pending(self, key: str) -> tuple[int, int]:
        exp = self._items.get(key)
        return (exp.adds, len(exp.deletes)) if exp else (0, 0)

    def forget(self, key: str) -> None:
        self._items.pop(key, None)


class ExpectationHandlers:
    """Pod handlers of the controllers that own pods through :class:`Expectations` (ReplicaSet, DaemonSet, Job).

    An owned pod's arrival or removal settles part of its owner's expectations and queues the owner;
    the controller says which owner a pod has (``_owner_key``) and when an event counts.
    """

    expectations: Expectations
    queue: WorkQueue

    def _owner_key(self, pod: dict[str, Any]) -> str | None:
        raise NotImplementedError

    def _owned_pod_seen(self, key: str, pod: dict[str, Any]) -> None:
        """A new pod of ``key``: the creation it answers, or — already terminating — the deletion."""
        if is_being_deleted(pod):
            self.expectations.deletion_observed(key, object_key(pod))
        else:
            self.expectations.creation_observed(key)
        self.queue.add(key)

    def _pod_deleted(self, pod: dict[str, Any]) -> None:
        key = self._owner_key(pod)
        if key is None:
            return
        self.expectations.deletion_observed(key, object_key(pod))
        self.queue.add(key)
