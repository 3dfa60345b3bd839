"""The history read client: the cluster at any kept revision, and what changed between two.

Over any client with the :class:`~kconsole.client.client.Client` interface (the in-process one, or
one over HTTP): each call creates a ``HistoryQuery`` of the ``history.kconsole.io`` group, which the
API server answers from the history the store keeps beside compaction (see
:mod:`kconsole.api.history` and docs/history.md). A revision older than the history raises the
client's 410 error (Expired), naming the oldest kept revision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kconsole.api.types import StatusError, status_body

API_VERSION = "history.kconsole.io/v1"
KIND = "HistoryQuery"


class _Creates(Protocol):
    async def create(self, obj: dict[str, Any], **kwargs: Any) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Change:
    revision: int
    time: float  # simulated seconds (the clock's epoch), when the revision was written
    type: str  # "ADDED" | "MODIFIED" | "DELETED"
    resource: str  # plural resource, e.g. "pods"
    group: str  # "" for core
    namespace: str | None
    name: str
    object: dict[str, Any] | None  # the object after the change (None for DELETED)
    previous: dict[str, Any] | None  # the object before (None for ADDED)


@dataclass(frozen=True, slots=True)
class Bounds:
    oldest: int  # oldest revision a history read can serve
    current: int  # the store's revision now
    oldest_time: float
    current_time: float


@dataclass(frozen=True, slots=True)
class Write:
    """A write request recorded for one object: who made it, and what became of it."""

    time: float
    user: str
    verb: str
    subresource: str
    code: int
    stage: str  # the pipeline stage that refused it ("" when it succeeded)
    message: str
    revision: int  # the revision it wrote (0 when refused or unknown)
    field_manager: str


class HistoryClient:
    """History reads as one user (the client's)."""

    def __init__(self, client: _Creates) -> None:
        self.client = client

    async def _ask(self, op: str, **spec: Any) -> dict[str, Any]:
        body = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {},
                "spec": {"op": op, **{k: v for k, v in spec.items() if v is not None}}}
        answer = await self.client.create(body)
        status = answer.get("status") if isinstance(answer, dict) else None
        if not isinstance(status, dict):
            raise StatusError.internal(f"a {KIND} came back without a status")
        return status

    async def bounds(self) -> Bounds:
        s = await self._ask("bounds")
        return Bounds(s["oldest"], s["current"], s["oldestTime"], s["currentTime"])

    async def changes(self, after: int, upto: int, *, resource: str | None = None, group: str | None = None,
                      namespace: str | None = None, name: str | None = None, limit: int = 0,
                      name_prefix: str | None = None) -> list[Change]:
        """Writes in revisions ``(after, upto]``, oldest first; filters optional; ``limit`` 0 = all."""
        if upto < after:
            raise StatusError(status_body(400, "BadRequest", f"upto ({upto}) must not be below after ({after})"))
        s = await self._ask("changes", after=after, upto=upto, resource=resource, group=group,
                            namespace=namespace, name=name, namePrefix=name_prefix, limit=limit or None)
        return [Change(c["revision"], c["time"], c["type"], c["resource"], c["group"], c["namespace"], c["name"],
                       c["object"], c["previous"]) for c in s["changes"]]

    async def list_at(self, resource: str, revision: int, *, group: str = "",
                      namespace: str | None = None) -> list[dict[str, Any]]:
        """Every object of ``resource`` as it was at ``revision``."""
        s = await self._ask("listAt", resource=resource, group=group, namespace=namespace, revision=revision)
        return list(s["items"])

    async def revision_at(self, time: float) -> int:
        """The last revision written at or before simulated ``time``."""
        return int((await self._ask("revisionAt", time=time))["revision"])

    async def time_of(self, revision: int) -> float:
        return float((await self._ask("timeOf", revision=revision))["time"])

    async def writes(self, resource: str, name: str, *, group: str = "", namespace: str | None = None) -> list[Write]:
        """The write requests recorded for one object, oldest first (who wrote each revision, and
        the stage that refused the writes that failed)."""
        s = await self._ask("writes", resource=resource, group=group, namespace=namespace, name=name)
        return [Write(w["time"], w["user"], w["verb"], w["subresource"], w["code"], w["stage"], w["message"],
                      w["revision"], w["fieldManager"]) for w in s["writes"]]
