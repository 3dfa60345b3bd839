"""``ManifestSync``: the watched folder, applied to the cluster and kept in step with it.

At start every manifest is applied; afterwards each batch of changed files (from the watcher) is
processed in one pass, one pass at a time:

1. parse each changed file; a syntax or shape error marks the file ``error`` and sends nothing;
2. check each document's kind, and that no other file already declares the same object;
3. dry-run every document of the file on the server (admission, validation, conflicts); any
   refusal marks the file ``error`` and sends nothing, so the objects it applied before stay as
   they were;
4. apply the files that passed, all their documents in dependency order (a custom resource whose
   CustomResourceDefinition is in the folder waits for that definition to be served, instead of
   failing with "no matches for kind" until a later pass);
5. prune: objects a file created and no longer declares (or whose file is gone) are deleted,
   unless another file now declares them (a document moved between files is not deleted). A
   pruned Namespace takes other files' objects with it: those files go through another pass.

A folder that is no longer there (moved, deleted) is not a folder of removed files: nothing is
applied or pruned until it is back.

Files are read and parsed on a worker thread, never on the event loop the API server shares; a
file is read only once its size and modification time held still across two looks (see
:class:`~kconsole.sync.folder.Looks`; until then it is ``pending``), and only if it is no larger
than :data:`~kconsole.sync.folder.MAX_FILE_BYTES`. Manifest-named entries that cannot be read (a
dangling or looping symbolic link, a FIFO, a folder named ``x.yaml``) are in the report with the
reason they were skipped.

Files whose error came from the server are tried again on every pass and on a back-off (2 s to
60 s of simulated time), so a file waiting for another file's Namespace, or for etcd to regain
quorum, recovers without being saved again.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from kconsole.client import Client, StatusError, is_not_found
from kconsole.clock import Clock, TimerHandle, io_tracker
from kconsole.sync import apply as applier
from kconsole.sync.folder import MAX_FILE_BYTES, STABLE_SECONDS, FolderFilter, FolderWatcher, Looks, entry_problem, \
    size_problem
from kconsole.sync.parse import Document, ParsedFile, SyncError, parse_file
from kconsole.sync.prune import INVENTORY_FILE, Inventory, InventoryError, delete_objects, identity
from kconsole.sync.report import AppliedObject, ChangeLines, FileState, Listener, Report

log = logging.getLogger(__name__)

RETRY_MIN = 2.0
RETRY_MAX = 60.0
#: Simulated seconds a document waits for the CustomResourceDefinition of its kind, applied in the
#: same pass, to be served; then its file fails with the server's "no matches" and is retried.
DEFINITION_WAIT = 10.0

Key = tuple[str, str, str, str]


class ManifestSync:
    """Observable by the console: :attr:`files` (path -> :class:`FileState`), :meth:`subscribe`
    for a callback after each pass, :attr:`version` for polling."""

    def __init__(self, client: Client, folder: str | Path, *, data_dir: str | Path | None = None, clock: Clock,
                 watch: bool = True, debounce_ms: int | None = None,
                 stable_seconds: float = STABLE_SECONDS) -> None:
        self.client = client
        self.clock = clock
        self.folder = Path(folder)
        self.data_dir = Path(data_dir) if data_dir is not None else None
        exclude = [self.data_dir] if self.data_dir is not None else []
        self.filter = FolderFilter(self.folder, exclude)
        self.report = Report()
        self._changes = ChangeLines(self.report)
        self.report.subscribe(self._log_changes)
        self.inventory = Inventory(self.data_dir / INVENTORY_FILE if self.data_dir is not None else None)
        self.watch = watch
        kwargs = {"debounce_ms": debounce_ms} if debounce_ms is not None else {}
        self.watcher = FolderWatcher(self.filter, self._changed, **kwargs)
        self.looks = Looks(stable_seconds)
        self._relook: asyncio.Task[None] | None = None
        self._relook_paths: set[str] = set()
        self._pending: set[str] = set()
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._worker: asyncio.Task[None] | None = None
        self._retry: TimerHandle | None = None
        self._prepared: dict[str, list[tuple[Document, dict]]] = {}
        #: The pass's documents waiting for their kind's definition, by (file, document index): the
        #: server's refusal of the kind, their error if the definition never comes.
        self._deferred: dict[tuple[str, int], StatusError] = {}
        self._stale: dict[str, list[AppliedObject]] = {}
        #: Namespaces this sync pruned, until they are seen gone or created again: while one is
        #: terminating, applying into it would "succeed" on objects about to be deleted with it.
        self._pruned_namespaces: set[str] = set()
        self.passes = 0
        self.running = False

    # ------------------------------------------------------------------ observing

    @property
    def files(self) -> dict[str, FileState]:
        return self.report.files

    @property
    def version(self) -> int:
        return self.report.version

    def subscribe(self, listener: Listener) -> object:
        """``listener()`` runs after every pass that changed the report; returns an unsubscribe callable."""
        return self.report.subscribe(listener)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Load the inventory, apply the whole folder once, then follow changes."""
        if not self.folder.is_dir():
            raise FileNotFoundError(f"manifest folder {self.folder} does not exist or is not a folder")
        try:
            self.inventory = Inventory.load(self.inventory.path)
        except InventoryError as err:
            # A damaged inventory must not keep the cluster from starting: set it aside, say so.
            assert self.inventory.path is not None
            aside = self.inventory.path.with_name(f"{self.inventory.path.name}.damaged")
            self.inventory.path.replace(aside)
            log.error("manifest sync: %s; moved it to %s and starting with an empty inventory", err, aside)
            self.inventory = Inventory(self.inventory.path)
        self.running = True
        if self.watch:
            await self.watcher.start()
        await self.sync_now()
        self._worker = asyncio.get_running_loop().create_task(self._work(), name="manifest-sync")

    async def stop(self) -> None:
        self.running = False
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._relook is not None:
            self._relook.cancel()
            self._relook = None
        await self.watcher.stop()
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            try:
                await worker
            except asyncio.CancelledError:
                pass

    async def wait_watching(self, timeout: float = 10.0) -> None:
        """Until the file watcher is live (tests write files only after this)."""
        await asyncio.wait_for(self.watcher.ready.wait(), timeout)

    # ------------------------------------------------------------------ passes

    def _changed(self, rels: set[str]) -> None:
        self._pending |= rels
        self._wake.set()

    async def _work(self) -> None:
        while self.running:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending, set()
            try:
                await self.sync_now(batch)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the sync must outlive any one bad pass
                log.exception("manifest sync pass failed")

    async def sync_now(self, changed: set[str] | None = None) -> None:
        """One pass over ``changed`` paths (relative to the folder), or over the whole folder, plus
        every file whose last error came from the server."""
        async with self._lock:
            if not self.folder.is_dir():
                self._folder_missing()
                return
            paths = self._expand(changed)
            paths |= {p for p, st in self.files.items() if st.status == "error" and _retryable(st)}
            if paths:
                await self._pass(paths)

    def _expand(self, changed: set[str] | None) -> set[str]:
        known = set(self.files) | set(self.inventory.files)
        if changed is None:
            return set(self.filter.scan()) | known
        out: set[str] = set()
        for rel in changed:
            absolute = self.folder / rel
            if absolute.is_dir():
                out |= {p for p in self.filter.scan() if p.startswith(rel + "/")}
            out |= {p for p in known if p == rel or p.startswith(rel + "/")}
            if self.filter.is_manifest(rel):
                out.add(rel)
        return out

    async def _pass(self, paths: set[str]) -> None:
        self.passes += 1
        now = self.clock.now()
        parsed, removed = await self._read(paths, now)

        declared_ns = {d.obj["metadata"]["name"] for pf in parsed.values() if not pf.errors
                       for d in pf.documents if d.obj.get("kind") == "Namespace" and d.obj.get("apiVersion") == "v1"}
        declared_kinds = applier.declared_kinds(d for pf in parsed.values() if not pf.errors for d in pf.documents)
        ready: dict[str, list[tuple[Document, dict]]] = {}
        claims: dict[Key, str] = {}
        self._prepared = {}
        self._deferred = {}
        for rel, pf in parsed.items():
            errors = list(pf.errors) or await self._check(pf, removed, parsed, claims, declared_ns, declared_kinds)
            if errors:
                self._fail(rel, errors, now)
                continue
            ready[rel] = self._prepared[rel]

        applied: dict[str, list[AppliedObject]] = {}
        warned: dict[str, list[str]] = {}
        failed: dict[str, list[SyncError]] = {}
        for rel, docs in ready.items():  # a definition that failed its checks is not waited for
            for doc, _ in docs:
                declared = declared_kinds.get((doc.obj.get("apiVersion"), doc.obj.get("kind")))
                refused = self._deferred.get((rel, doc.index))
                if refused is not None and declared is not None and declared[1] not in ready:
                    failed[rel] = [applier.error_for(doc, refused)]
                    break
        owned = {identity(o): o.created for objs in self.inventory.files.values() for o in objs}
        order = sorted(((applier.apply_rank(obj["kind"]), rel, doc.index, doc, obj)
                        for rel, docs in ready.items() for doc, obj in docs), key=lambda t: t[:3])
        for _, rel, _, doc, obj in order:
            if rel in failed:
                continue
            try:
                if (rel, doc.index) in self._deferred:
                    obj = await applier.when_served(self.client, self.clock, doc, DEFINITION_WAIT)
                key = _key(obj)
                created = owned[key] if key in owned else not await applier.existed(self.client, obj)
                applied.setdefault(rel, []).append(
                    await applier.apply_object(self.client, obj, created, warned.setdefault(rel, [])))
            except StatusError as err:
                failed[rel] = [applier.error_for(doc, err)]

        for rel in ready:
            new = applied.get(rel, [])
            if rel in failed:
                # Keep track of everything it ever applied, so nothing leaks; prune nothing.
                old = self.inventory.files.get(rel, [])
                merged = {identity(o): o for o in old} | {identity(o): o for o in new}
                self.inventory.files[rel] = list(merged.values())
                self._fail(rel, failed[rel], now)
            else:
                kept = {identity(n) for n in new}
                self._stale[rel] = [o for o in self.inventory.files.get(rel, []) if identity(o) not in kept]
                self.inventory.files[rel] = new
                st = self.files.setdefault(rel, FileState(rel))
                st.status, st.objects, st.errors, st.updated, st.attempts = "applied", new, [], now, 0
                st.warnings = warned.get(rel, [])
        for rel in removed:
            self._stale[rel] = self.inventory.files.pop(rel, [])
            self.files.pop(rel, None)

        await self._prune(now)
        self._save()
        self._schedule_retry()
        self.report.changed()

    async def _read(self, paths: set[str], now: float) -> tuple[dict[str, ParsedFile], list[str]]:
        """Parse the files of ``paths`` that are there, readable and done being written; the
        others are reported (skipped, too large) or left pending and looked at again."""
        parsed: dict[str, ParsedFile] = {}
        removed: list[str] = []
        readable: list[Path] = []
        for rel in sorted(paths):
            path = self.folder / rel
            if not os.path.lexists(path) or not self.filter.is_manifest(rel):
                removed.append(rel)
                self.looks.forget(path)
                continue
            problem = entry_problem(path)
            if problem is not None:
                self._fail(rel, [SyncError(rel, 1, 1, problem, "Skipped")], now)
                continue
            readable.append(path)
        with io_tracker(self.clock):  # real time (the writer's), which a virtual clock must wait for
            settled, changing = await self.looks.stable(readable)
        done = set(settled)
        for path in readable:
            rel = path.relative_to(self.folder).as_posix()
            if path not in done:
                st = self.files.setdefault(rel, FileState(rel))
                st.status, st.updated = "pending", now
                continue
            try:
                problem = size_problem(path.stat().st_size)
            except OSError as err:
                problem = f"cannot read file: {err.strerror}"
            if problem is not None:
                self._fail(rel, [SyncError(rel, 1, 1, problem, "TooLarge")], now)
                continue
            with io_tracker(self.clock):
                parsed[rel] = await asyncio.to_thread(parse_file, path, rel, MAX_FILE_BYTES)
        if changing:
            self._relook_paths |= {path.relative_to(self.folder).as_posix() for path in changing}
            if self._relook is None:
                self._relook = asyncio.get_running_loop().create_task(self._look_again(), name="manifest-relook")
        return parsed, removed

    async def _look_again(self) -> None:
        """Files still being written: another pass over them once they may have settled."""
        try:
            with io_tracker(self.clock):
                await asyncio.sleep(self.looks.stable_seconds)
        finally:
            self._relook = None
        rels, self._relook_paths = self._relook_paths, set()
        self._changed(rels)

    def _folder_missing(self) -> None:
        """The watched folder was moved or deleted under the sync: its files are not 'removed' (that
        would prune every object they applied), they are unreachable. Each known file says so and
        is retried on the back-off, so the folder coming back resumes the sync."""
        now = self.clock.now()
        for rel in sorted(set(self.files) | set(self.inventory.files)):
            self._fail(rel, [SyncError(rel, 1, 1, f"the watched folder {self.folder} is missing (moved or deleted); "
                                                  "nothing is applied or pruned until it is back",
                                       "FolderMissing", 503)], now)
        self._schedule_retry()
        self.report.changed()

    # ------------------------------------------------------------------ checks

    async def _check(self, pf: ParsedFile, removed: list[str], parsed: dict[str, ParsedFile],
                     claims: dict[Key, str], declared_ns: set[str],
                     declared_kinds: dict[tuple[str, str], tuple[bool, str]]) -> list[SyncError]:
        """Kinds, duplicates and a server dry run for one file; fills ``_prepared`` on success.

        A document of a kind the server does not serve yet, defined by a CustomResourceDefinition
        of this pass, is deferred: no dry run, applied once its definition is served."""
        rel = pf.path
        prepared: list[tuple[Document, dict]] = []
        deferred: dict[tuple[str, int], StatusError] = {}
        seen: dict[Key, Document] = {}
        for doc in pf.documents:
            try:
                obj = applier.prepare(self.client, doc)
            except StatusError as err:
                declared = declared_kinds.get((doc.obj.get("apiVersion"), doc.obj.get("kind")))
                if declared is None:
                    return [applier.error_for(doc, err)]
                obj = applier.prepare_declared(doc, declared[0])
                deferred[(rel, doc.index)] = err
            key = _key(obj)
            if key in seen:
                first = seen[key].position
                return [_at(doc, f"{doc.key} is declared twice in this file (first at line {first.line})")]
            seen[key] = doc
            other = claims.get(key) or self._claimed_elsewhere(key, rel, removed, parsed)
            if other is not None:
                return [_at(doc, f"{doc.key} is also declared in {other}; each object must come from one file")]
            prepared.append((doc, obj))
        going = await self._terminating_namespace(prepared)
        if going is not None:
            return [going]
        for doc, obj in sorted(prepared, key=lambda p: (applier.apply_rank(p[1]["kind"]), p[0].index)):
            if (rel, doc.index) in deferred:
                continue
            try:
                await applier.dry_run(self.client, doc, obj, declared_ns)
            except StatusError as err:
                return [applier.error_for(doc, err)]
        for doc, obj in prepared:
            claims[_key(obj)] = rel
        self._prepared[rel] = prepared
        self._deferred.update(deferred)
        return []

    async def _terminating_namespace(self, prepared: list[tuple[Document, dict]]) -> SyncError | None:
        """An error for the first document that lives in (or is) a Namespace the sync pruned and the
        server is still deleting; None once each such Namespace is gone or active again."""
        for doc, obj in prepared:
            meta = obj["metadata"]
            ns = meta["name"] if obj["kind"] == "Namespace" and obj["apiVersion"] == "v1" else meta.get("namespace")
            if not ns or ns not in self._pruned_namespaces:
                continue
            try:
                found = await self.client.get("namespaces", ns)
            except StatusError as err:
                if not is_not_found(err):
                    return applier.error_for(doc, err)
                self._pruned_namespaces.discard(ns)  # gone: from here on, the usual "not found"
                continue
            if not (found.get("metadata") or {}).get("deletionTimestamp"):
                self._pruned_namespaces.discard(ns)  # created again
                continue
            pos = doc.locate("metadata.namespace" if obj["kind"] != "Namespace" else "metadata.name")
            return SyncError(doc.path, pos.line, pos.column,
                             f"Namespace {ns} is being deleted (its manifest was removed), and what this file "
                             "applied in it with it; applying again once it is gone", "NamespaceTerminating", 409)
        return None

    def _claimed_elsewhere(self, key: Key, rel: str, removed: list[str], parsed: dict[str, ParsedFile]) -> str | None:
        for other, objects in self.inventory.files.items():
            if other == rel or other in removed:
                continue
            if not any(identity(o) == key for o in objects):
                continue
            if other in parsed and not parsed[other].errors:
                # The other file is in this pass: it keeps the object only if it still declares it.
                if not any(self._doc_key(d) == key for d in parsed[other].documents):
                    continue
            return other
        return None

    def _doc_key(self, doc: Document) -> Key | None:
        try:
            return _key(applier.prepare(self.client, doc))
        except StatusError:
            return None

    # ------------------------------------------------------------------ outcomes

    def _fail(self, rel: str, errors: list[SyncError], now: float) -> None:
        st = self.files.setdefault(rel, FileState(rel))
        st.status, st.errors, st.updated = "error", errors, now
        st.objects = list(self.inventory.files.get(rel, []))
        st.attempts += 1

    def _log_changes(self) -> None:
        """Each file's new state, once: ``kconsole serve`` prints this log, the console keeps it."""
        for status, line in self._changes.take():
            log.log(logging.WARNING if status == "error" else logging.INFO, "manifest sync: %s", line)

    async def _prune(self, now: float) -> None:
        stale, self._stale = self._stale, {}
        claimed = self.inventory.claimed()
        for rel, objects in sorted(stale.items()):
            doomed = [o for o in objects if identity(o) not in claimed]
            if not doomed:
                continue
            failed = await delete_objects(self.client, doomed)
            self._follow_namespaces(rel, doomed, failed)
            if failed:
                # Keep them on the books so a later pass deletes them; show why on the file.
                self.inventory.files.setdefault(rel, []).extend(o for o, _ in failed)
                errors = [SyncError(rel, 1, 1, f"cannot delete {o.ref}: {why}", "Prune", 503) for o, why in failed]
                self._fail(rel, errors, now)

    def _follow_namespaces(self, rel: str, deleted: list[AppliedObject],
                           failed: list[tuple[AppliedObject, str]]) -> None:
        """A pruned Namespace takes every object in it, including those other files applied: those
        files are queued for another pass (which waits for the Namespace to go, then says it is
        missing, or applies them again if a file declares it once more) instead of staying
        'applied' over objects that no longer exist."""
        kept = {identity(o) for o, _ in failed}
        gone = {o.name for o in deleted if o.kind == "Namespace" and o.created
                and not o.api_version.rpartition("/")[0] and identity(o) not in kept}
        if not gone:
            return
        self._pruned_namespaces |= gone
        affected = {other for other, objects in self.inventory.files.items()
                    if other != rel and any(o.namespace in gone for o in objects)}
        if affected:
            self._changed(affected)

    def _save(self) -> None:
        try:
            self.inventory.save()
        except OSError as err:
            log.error("manifest sync: cannot save the inventory %s: %s", self.inventory.path, err)

    def _schedule_retry(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        waiting = [st for st in self.files.values() if st.status == "error" and _retryable(st)]
        if not waiting or not self.running:
            return
        delay = min(RETRY_MAX, RETRY_MIN * 2 ** (min(st.attempts for st in waiting) - 1))
        self._retry = self.clock.call_later(delay, lambda: self._changed(set()))


def _retryable(st: FileState) -> bool:
    """Server-side errors may clear without the file changing; local ones wait for a save."""
    return any(e.code for e in st.errors)


def _key(obj: dict) -> Key:
    meta = obj["metadata"]
    return (obj["apiVersion"].rpartition("/")[0], obj["kind"], str(meta.get("namespace") or ""), meta["name"])


def _at(doc: Document, message: str) -> SyncError:
    pos = doc.locate("metadata.name")
    return SyncError(doc.path, pos.line, pos.column, message, "Duplicate")
