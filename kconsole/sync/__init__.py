"""The watched manifest folder: every ``*.yaml``/``*.yml``/``*.json`` under DIR, applied as the
``system:kconsole-sync`` user with server-side apply (field manager ``kconsole-sync``).

What the composition root and the console use::

    sync = ManifestSync(client, folder, data_dir=data_dir, clock=clock)   # client acts as system:kconsole-sync
    await sync.start()          # applies the whole folder, then follows saves (within 500 ms)
    sync.files                  # relative path -> FileState(status "applied"|"error"|"pending",
                                #   objects [AppliedObject(kind, namespace, name, uid, resource_version)],
                                #   errors [SyncError(path, line, column, message, reason, code)])
    sync.subscribe(callback)    # callback() after each pass; returns an unsubscribe function
    sync.version                # grows on every change, for pollers
    ChangeLines(sync.report)    # .take(): (status, line) per file whose state changed; the sync logs them
    await sync.sync_now()       # a pass over the whole folder (the console's "re-apply")
    await sync.stop()

Modules: ``parse`` (documents with file:line:column), ``folder`` (which files, watchfiles),
``apply`` (dry run, server-side apply, error positions), ``prune`` (the inventory in
``DATA_DIR/sync-inventory.json`` and deletions), ``report`` (per-file state),
``manifestsync`` (the passes). Layer rule: imports only ``kconsole.client``, ``kconsole.objects``
and ``kconsole.clock``.
"""

from kconsole.sync.manifestsync import ManifestSync
from kconsole.sync.parse import Document, ObjectKey, ParsedFile, Position, SyncError, parse_file, parse_text
from kconsole.sync.report import AppliedObject, ChangeLines, FileState

__all__ = [
    "AppliedObject",
    "ChangeLines",
    "Document",
    "FileState",
    "ManifestSync",
    "ObjectKey",
    "ParsedFile",
    "Position",
    "SyncError",
    "parse_file",
    "parse_text",
]
