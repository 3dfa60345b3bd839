"""CustomResourceDefinitions served, and the controllers apiextensions-apiserver runs beside them.

:class:`Registration` adds the ``customresourcedefinitions`` resource to the API server's table and
follows its watch cache: a CRD whose names are accepted gets its status (NamesAccepted, Established,
acceptedNames, storedVersions) and its kind served at ``/apis/<group>/<version>/...``; a deleted one
has every object of its kind deleted (finalizer ``customresourcecleanup.apiextensions.k8s.io``, the
Terminating condition) before it goes and its kind stops being served. At start the table is rebuilt
from the stored CRDs, so custom kinds and their objects survive a restart.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from kconsole.api.crd.fields import drop, openapi_schema, unknown_fields
from kconsole.api.crd.definition import GROUP, other_versions, resource_spec, storage_version
from kconsole.api.crd.validation import set_defaults, validate_crd, validate_crd_update
from kconsole.api.filters import compile_filter
from kconsole.api.registry import STANDARD_VERBS, ResourceSpec
from kconsole.api.storage import DeleteOptions, clone
from kconsole.api.types import Request, Response, ResourceInfo, StatusError, status_body
from kconsole.api.validators.field import Cause
from kconsole.store.kv import StoreError

if TYPE_CHECKING:
    from kconsole.api.server import APIServer

log = logging.getLogger(__name__)

Obj = dict[str, Any]

FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
CRD_KIND = "CustomResourceDefinition"
#: Simulated seconds between attempts to delete the last objects of a CRD being deleted.
CLEANUP_RETRY = 5.0


class DefinitionKind:
    """The CRD kind's own hooks in the request pipeline (its ``info.custom``)."""

    strategic_merge = True
    terminating = False

    def __init__(self) -> None:
        #: The CRD kind's own schema, for ``kubectl explain crd``.
        self.openapi = openapi_schema()

    def decode(self, obj: Obj, directive: str, patched: bool = False, before: Obj | None = None) -> list[str]:
        """Defaults, and fieldValidation against the CRD's own fields (refused under Strict)."""
        if not isinstance(obj, dict):
            return []
        unknown = unknown_fields(obj)
        if unknown and before is not None:
            had = set(unknown_fields(before))
            unknown = [p for p in unknown if p not in had]
        set_defaults(obj)
        if not unknown:
            return []
        if directive == "Strict":
            detail = "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in unknown)
            if not patched:
                detail = (f'{CRD_KIND} in version "v1" cannot be handled as a {CRD_KIND}: {detail}')
            raise StatusError.bad_request(detail)
        drop(obj, unknown)
        return [] if directive == "Ignore" else [f'unknown field "{p}"' for p in unknown]

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = validate_crd(obj)
        if old is not None:
            causes += validate_crd_update(obj, old)
        return causes


CRD_SPEC = ResourceSpec(
    info=ResourceInfo(group=GROUP, version="v1", resource="customresourcedefinitions",
                      kind="CustomResourceDefinition", singular="customresourcedefinition", namespaced=False,
                      verbs=STANDARD_VERBS, short_names=("crd", "crds"), categories=("api-extensions",),
                      subresources=("status",), custom=DefinitionKind()),
    list_kind="CustomResourceDefinitionList", has_status=True, field_selectors=("metadata.name",),
    bump_generation=True)


def _condition(kind: str, status: str, reason: str, message: str, now: str, old: Obj | None) -> Obj:
    """A CRD condition; its lastTransitionTime moves only when its status does."""
    since = now
    for cond in ((old or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind and cond.get("status") == status:
            since = cond.get("lastTransitionTime") or now
    return {"type": kind, "status": status, "lastTransitionTime": since, "reason": reason, "message": message}


def _set_condition(status: Obj, cond: Obj) -> None:
    conditions = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]]
    conditions.append(cond)
    status["conditions"] = conditions


def _names(crd: Obj) -> Obj:
    names = dict((crd.get("spec") or {}).get("names") or {})
    kind = names.get("kind", "")
    names.setdefault("singular", kind.lower())
    names.setdefault("listKind", kind + "List")
    return names


class Registration:
    """The apiextensions controllers of one API server (names, establishing, finalizing)."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        server.registry.add(CRD_SPEC)
        self._task: asyncio.Task[None] | None = None
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        self._stopping = False

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Serve every stored CRD's kind before the first request, then follow changes."""
        self._stopping = False
        cache = self.server.storage.caches.get(CRD_SPEC.group_resource)
        if cache is None:
            return
        for crd in cache.values():
            await self._serve(crd)
        self._task = asyncio.get_running_loop().create_task(self._follow(cache.rv), name="crd-registration")

    async def stop(self) -> None:
        self._stopping = True
        tasks = [t for t in (self._task, *self._cleanups.values()) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass
        self._task = None
        self._cleanups.clear()

    async def _follow(self, start_rv: int) -> None:
        """The CRD watch; when it ends (a slow reader is cut off), every CRD is looked at again."""
        flt = compile_filter(CRD_SPEC)
        rv: int | None = start_rv
        while not self._stopping:
            cache = self.server.storage.caches.get(CRD_SPEC.group_resource)
            if cache is None:
                return
            stream = cache.watch(flt, rv)
            rv = None
            try:
                async for event in stream:
                    kind = event.get("type")
                    if kind == "DELETED":
                        await self._unserve(event["object"])
                    elif kind in ("ADDED", "MODIFIED"):
                        await self._sync(event["object"])
            except asyncio.CancelledError:
                await stream.close()
                raise
            except Exception:  # noqa: BLE001 - one bad CRD must not stop the others being served
                log.exception("CRD registration failed; watching again")
                await stream.close()
                await self.server.clock.sleep(1.0)

    # ------------------------------------------------------------------ one CRD

    def _conflict(self, crd: Obj) -> tuple[str, str] | None:
        """(reason, message) when another CRD of the group already uses one of its names."""
        spec = crd.get("spec") or {}
        names = _names(crd)
        cache = self.server.storage.caches.get(CRD_SPEC.group_resource)
        for other in cache.values() if cache is not None else ():
            if other["metadata"]["name"] == crd["metadata"]["name"] or (other.get("spec") or {}).get("group") \
                    != spec.get("group"):
                continue
            accepted = (other.get("status") or {}).get("acceptedNames") or {}
            taken = {accepted.get("plural"), accepted.get("singular"), *(accepted.get("shortNames") or ())} - {None, ""}
            for reason, wanted in (("PluralConflict", (names.get("plural"),)),
                                   ("SingularConflict", (names.get("singular"),)),
                                   ("ShortNamesConflict", tuple(names.get("shortNames") or ()))):
                for name in wanted:
                    if name in taken:
                        return reason, f'"{name}" is already in use'
            kinds = {accepted.get("kind"), accepted.get("listKind")} - {None, ""}
            for name in (names.get("kind"), names.get("listKind")):
                if name in kinds:
                    return ("KindConflict" if name == names.get("kind") else "ListKindConflict",
                            f'"{name}" is already in use')
        return None

    def _wanted_status(self, crd: Obj) -> Obj:
        status = clone(crd.get("status") or {})
        now = self.server.now()
        conflict = self._conflict(crd)
        if conflict is None:
            status["acceptedNames"] = _names(crd)
            _set_condition(status, _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now, crd))
            _set_condition(status, _condition("Established", "True", "InitialNamesAccepted",
                                              "the initial names have been accepted", now, crd))
        else:
            status.setdefault("acceptedNames", {"plural": "", "kind": ""})
            _set_condition(status, _condition("NamesAccepted", "False", conflict[0], conflict[1], now, crd))
            _set_condition(status, _condition("Established", "False", "NotAccepted", "not all names are accepted",
                                              now, crd))
        stored = list(status.get("storedVersions") or ())
        version = storage_version(crd).get("name")
        if version and version not in stored:
            stored.append(version)
        status["storedVersions"] = stored
        return status

    async def _sync(self, crd: Obj) -> None:
        meta = crd["metadata"]
        if meta.get("deletionTimestamp"):
            served = self._served(crd)
            if served is not None:
                served.info.custom.terminating = True
            if FINALIZER in (meta.get("finalizers") or ()) and meta["name"] not in self._cleanups:
                self._cleanups[meta["name"]] = asyncio.get_running_loop().create_task(
                    self._cleanup(meta["name"]), name=f"crd-cleanup-{meta['name']}")
            return
        status = self._wanted_status(crd)
        if status != crd.get("status"):
            await self._write_status(crd, status)
            return  # the write comes back as an event: served then
        await self._serve(crd)

    def _served(self, crd: Obj) -> ResourceSpec | None:
        spec = crd.get("spec") or {}
        names = (crd.get("status") or {}).get("acceptedNames") or {}
        found = self.server.registry.get(spec.get("group", ""), names.get("plural") or "")
        return found if found is not None and found.info.custom is not None else None

    async def _serve(self, crd: Obj) -> None:
        """Serve an Established CRD's kind (or serve its new schema, columns, names)."""
        established = any(c.get("type") == "Established" and c.get("status") == "True"
                          for c in (crd.get("status") or {}).get("conditions") or ())
        if not established:
            return
        spec = resource_spec(crd)
        old = self.server.registry.get(spec.group, spec.resource)
        if old is not None and old.info.custom is None:
            log.warning("CRD %s names built-in resource %s: not served", crd["metadata"]["name"], spec.group_resource)
            return
        self.server.registry.add(spec)
        self.server.versions.remove(spec.group, spec.resource)
        for alternate in other_versions(crd, spec):
            self.server.versions.add(alternate)
        if old is not None and (old.prefix != spec.prefix or old.namespaced != spec.namespaced):
            await self.server.storage.stop_cache(old)
        await self.server.storage.start_cache(spec)
        self.server.resources_changed()

    async def _unserve(self, crd: Obj) -> None:
        spec = self._served(crd)
        if spec is None or spec.info.custom.crd_name != crd["metadata"]["name"]:
            return
        self.server.registry.remove(spec.group, spec.resource)
        self.server.versions.remove(spec.group, spec.resource)
        await self.server.storage.stop_cache(spec)
        self.server.resources_changed()

    async def _write_status(self, crd: Obj, status: Obj) -> Response | None:
        body = clone(crd)
        body["status"] = status
        resp = await self.server.handle(Request("update", CRD_SPEC.resource, group=GROUP, version="v1",
                                                name=crd["metadata"]["name"], subresource="status", body=body,
                                                credentials=self.server.loopback_credentials(),
                                                source="apiextensions"))
        if isinstance(resp, Response) and not resp.ok and resp.code not in (404, 409):
            log.warning("status of CRD %s not written: %s", crd["metadata"]["name"], resp.body.get("message"))
        return resp if isinstance(resp, Response) else None

    # ------------------------------------------------------------------ deletion

    async def mark_deleting(self, name: str, dry_run: bool) -> None:
        """Before a CRD's deletion: the cleanup finalizer and condition, so its objects go first
        (upstream's CRD REST Delete does both in the same update as the deletionTimestamp)."""
        if dry_run:
            return
        now = self.server.now()

        def mark(current: Obj | None) -> Obj:
            if current is None:
                raise StatusError.not_found(CRD_SPEC.group_resource, name, GROUP, CRD_SPEC.resource)
            new = clone(current)
            meta = new["metadata"]
            if meta.get("deletionTimestamp"):
                return current
            finalizers = list(meta.get("finalizers") or ())
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            meta["finalizers"] = finalizers
            status = new.setdefault("status", {})
            _set_condition(status, _condition("Terminating", "True", "InstanceDeletionPending",
                                              "CustomResourceDefinition marked for deletion; CustomResource "
                                              "deletion will begin soon", now, current))
            return new

        await self.server.storage.guaranteed_update(CRD_SPEC, None, name, mark)

    async def _cleanup(self, name: str) -> None:
        """Delete every object of the CRD's kind, then let the CRD go (the finalizer comes off)."""
        try:
            while not self._stopping:
                cache = self.server.storage.caches[CRD_SPEC.group_resource]
                crd = cache.get(None, name)
                if crd is None or FINALIZER not in (crd["metadata"].get("finalizers") or ()):
                    return
                await self._set_terminating(crd, "True", "InstanceDeletionInProgress",
                                            "CustomResource deletion is in progress")
                left = await self._delete_instances(crd)
                if left == 0:
                    crd = self.server.storage.caches[CRD_SPEC.group_resource].get(None, name) or crd
                    await self._set_terminating(crd, "False", "InstanceDeletionCompleted", "removed all instances")
                    await self._drop_finalizer(name)
                    return
                await self._set_terminating(crd, "True", "InstanceDeletionCheck",
                                            f"could not confirm zero CustomResources remaining: {left} remaining")
                await self.server.clock.sleep(CLEANUP_RETRY)
        except StoreError as err:
            log.warning("cleanup of CRD %s interrupted: %s", name, err)
        finally:
            self._cleanups.pop(name, None)

    async def _set_terminating(self, crd: Obj, status: str, reason: str, message: str) -> None:
        wanted = clone(crd.get("status") or {})
        _set_condition(wanted, _condition("Terminating", status, reason, message, self.server.now(), crd))
        if wanted != crd.get("status"):
            await self._write_status(crd, wanted)

    async def _delete_instances(self, crd: Obj) -> int:
        """Delete what is left of the kind; how many objects still exist (finalizers of their own)."""
        spec = self._served(crd)
        if spec is None:
            return 0
        cache = await self.server.storage.fresh_cache(spec)
        for obj in cache.values():
            meta = obj["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            try:
                await self.server.storage.delete(spec, meta.get("namespace"), meta["name"], DeleteOptions())
            except StatusError as err:
                if err.code != 404:
                    log.warning("deleting %s %s: %s", spec.kind, meta["name"], err.message)
        cache = await self.server.storage.fresh_cache(spec)
        return len(cache.values())

    async def _drop_finalizer(self, name: str) -> None:
        def drop(current: Obj | None) -> Obj:
            if current is None:
                raise StatusError.not_found(CRD_SPEC.group_resource, name, GROUP, CRD_SPEC.resource)
            new = clone(current)
            new["metadata"]["finalizers"] = [f for f in new["metadata"].get("finalizers") or () if f != FINALIZER]
            return new

        try:
            await self.server.storage.guaranteed_update(CRD_SPEC, None, name, drop)
        except StatusError as err:
            if err.code != 404:
                raise


def terminating_error() -> StatusError:
    """A create of a kind whose CRD is being deleted (upstream's crdHandler answers 405)."""
    return StatusError(status_body(405, "MethodNotAllowed",
                                   "create not allowed while custom resource definition is terminating"))
