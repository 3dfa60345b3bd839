"""The user-level inputs of a running cluster, kept beside its store for ``kconsole trace export``.

An input is what came from outside the control plane: a successful write (create, update, patch,
delete, deletecollection; not a dry run) by a user who is not a component, and every fault applied or
healed. Components are the known system users (:data:`COMPONENT_USERS`, :data:`COMPONENT_PREFIXES`);
everyone else is a user: the manifest-folder sync (``system:kconsole-sync``), the person at the
console (``system:kconsole-console``), kubectl through a kubeconfig, any other identity. The
console's own writes made on behalf of a fault (a cordon, a drain's evictions) belong to the fault
and are not inputs of their own, and neither are Events (components' notes, never intent) nor the
creates of review kinds that store nothing (access reviews, history queries).

The API server's taps hand every answer to :meth:`InputRecorder.tap` with the request as it was
sent, so an input is kept with its body, field manager and options, the user it acted as (after
impersonation), its simulated time and the revision it wrote. Lines go to :data:`INPUTS_FILE` in the
data folder as JSON lines (the same record shapes as the trace file, docs/history.md "Traces"), one
``start`` line each time a cluster starts on the folder. Secret values are never written.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import IO, Any

from kconsole.api.types import Credentials, Request, Response, StatusError, UserInfo
from kconsole.trace.fileformat import config_to_dict, input_record, redact_secret

log = logging.getLogger(__name__)

#: The data folder's file of recorded inputs.
INPUTS_FILE = "trace-inputs.jsonl"
#: Users that are parts of the control plane: their writes are its reactions, not inputs.
COMPONENT_USERS = frozenset({"system:kube-scheduler", "system:kube-controller-manager", "system:apiserver",
                             "system:kube-proxy"})
COMPONENT_PREFIXES = ("system:node:", "system:serviceaccount:kube-system:")
#: The console's user: a fault's own writes go through it too.
CONSOLE_USER = "system:kconsole-console"
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
#: Resources whose writes are never inputs.
NOT_INPUTS = frozenset({"events", "events.events.k8s.io"})


def is_component(user: str) -> bool:
    return user in COMPONENT_USERS or user.startswith(COMPONENT_PREFIXES)


class InputRecorder:
    """Appends a cluster's inputs to ``path``; install with :meth:`attach`, stop with :meth:`close`."""

    def __init__(self, path: Path, api: Any, clock: Any) -> None:
        self.path = path
        self.api = api
        self.clock = clock
        self.faults: Any = None
        self._file: IO[str] | None = None
        self._users: dict[str, UserInfo | None] = {}
        self._seen_faults: set[tuple[str, str]] = set()
        self._unsubscribe: Any = None
        self.written = 0

    def attach(self, config: Any, started_at: float) -> None:
        """Open the file, note this start (config, seed, start time) and tap the API server."""
        self._file = self.path.open("a", encoding="utf-8")
        from kconsole import __version__

        self._write({"type": "start", "time": self.clock.now(), "clusterStart": started_at,
                     "kconsole": __version__, "seed": config.seed, "config": config_to_dict(config)})
        self.api.taps.append(self.tap)

    def watch_faults(self, faults: Any) -> None:
        """Record every fault the catalog applies or heals (it exists only once the cluster runs)."""
        self.faults = faults
        self._unsubscribe = faults.subscribe(self._on_faults)

    def close(self) -> None:
        if self.tap in self.api.taps:
            self.api.taps.remove(self.tap)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        try:
            self._file.write(json.dumps(record, separators=(",", ":"), sort_keys=True, default=str) + "\n")
            self._file.flush()
            self.written += 1
        except OSError as err:  # a full disk must not fail the request that was already answered
            log.warning("cannot record an input in %s: %s", self.path, err)

    # ------------------------------------------------------------------ the API server's tap

    def tap(self, request: Request, result: Any, began: int) -> None:
        if request.verb not in WRITE_VERBS or request.dry_run:
            return
        try:
            self._record(request, result)
        except Exception:  # noqa: BLE001 - the request was answered; a body we cannot keep must not fail it
            log.exception("cannot record an input (%s %s)", request.verb, request.resource)

    def _record(self, request: Request, result: Any) -> None:
        if not isinstance(result, Response) or result.code >= 400:
            return
        user = self._user(request.credentials)
        if user is None or is_component(user.name):
            return
        resource = request.resource if not request.group else f"{request.resource}.{request.group}"
        if resource in NOT_INPUTS or request.resource in NOT_INPUTS:
            return
        if user.name == CONSOLE_USER and self._fault_at_work(request):
            return
        revision = _revision_of(result.body)
        if request.verb == "create" and not revision and not request.subresource:
            return  # a review (access reviews, history queries): answered, never stored, changes nothing
        body = request.body
        if isinstance(body, (bytes, bytearray)):
            body = bytes(body).decode("utf-8", errors="replace")
        elif request.verb in ("create", "update") and isinstance(body, dict):
            body = as_sent(body)
        if request.resource.split(".")[0] == "secrets":
            body = redact_secret(body)
        self._write(input_record(self.clock.now(), revision, user, request, body))

    def _user(self, credentials: Credentials) -> UserInfo | None:
        """Who a request acted as: the impersonated user when there is one."""
        if credentials.impersonate_user is not None:
            return UserInfo(credentials.impersonate_user, tuple(credentials.impersonate_groups))
        if credentials.cert_user is not None:
            return credentials.cert_user
        token = credentials.token or ""
        if token not in self._users:
            try:
                self._users[token] = self.api.tokens.authenticate(credentials)
            except StatusError:
                return None
        return self._users[token]

    def _fault_at_work(self, request: Request) -> bool:
        """A console write made by the fault catalog (while it applies or heals, or a drain's eviction)."""
        faults = self.faults
        if faults is None:
            return False
        if request.subresource == "eviction":
            return True
        lock = getattr(faults, "_lock", None)
        return bool(lock is not None and lock.locked())

    # ------------------------------------------------------------------ faults

    def _on_faults(self) -> None:
        for fault in list(self.faults.history):
            if ("apply", fault.id) not in self._seen_faults:
                self._seen_faults.add(("apply", fault.id))
                self._write({"type": "fault", "action": "apply", "time": fault.applied_at, "id": fault.id,
                             "fault": fault.type, "target": fault.target, "params": dict(fault.params),
                             "oneShot": fault.id not in self.faults.active and fault.healed_at == fault.applied_at})
            if fault.healed_at is not None and fault.id not in self.faults.active \
                    and ("heal", fault.id) not in self._seen_faults and fault.healed_at != fault.applied_at:
                self._seen_faults.add(("heal", fault.id))
                self._write({"type": "fault", "action": "heal", "time": fault.healed_at, "id": fault.id,
                             "fault": fault.type, "target": fault.target, "params": dict(fault.params)})


#: Metadata the API server sets on an object it stores (into the very dict it was sent, as the
#: pipeline fills in a create): dropped from a recorded create or update, so a rerun sends what a
#: client sends. An update goes again without its resourceVersion (revisions differ between runs).
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
              "deletionTimestamp", "deletionGracePeriodSeconds")


def as_sent(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of a create or update body without what the server set on it."""
    out = json.loads(json.dumps(body, default=str))
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in SERVER_SET:
            meta.pop(key, None)
    return out


def _revision_of(body: Any) -> int:
    try:
        return int(((body or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except (AttributeError, TypeError, ValueError):
        return 0
