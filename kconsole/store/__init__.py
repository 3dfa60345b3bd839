"""store layer; see ../shared/DESIGN.md.

What an acknowledged write means. A single revision log (:mod:`kconsole.store.revlog`, one
member) acknowledges a transaction once the SQLite group commit holding it returned and, with
``synchronous=FULL``, once the group commit's record is on the device in the log's journal
(:mod:`kconsole.store.journal`, etcd's WAL in small: one direct, synchronous write per group commit;
SQLite itself commits without fsync and is fsynced before the journal reuses its space). So an
acknowledged write survives ``kill -9`` through SQLite alone, and power loss through SQLite's
synced state plus the journal, which a reopened log replays. A Raft-replicated cluster (:mod:`kconsole.store.facade`) acknowledges it,
as etcd does, once its Raft entry is in the WAL of a majority of members (fdatasynced when fsync
is on) and the leader applied it to its revision log's in-memory state: key index, value cache,
watch events. The members' SQLite files commit after that (``publish_early``): what was applied
within 100 ms goes into one group commit (``commit_interval``, etcd's backend batch interval), so a
writer never waits for them; reads that must go to SQLite (past revisions, watch history, uncached
values, snapshots) commit what is held at once and wait until the commits caught up. Each member records in its WAL the
newest Raft index its SQLite file already holds (etcd's consistent index) and, after a crash,
replays the Raft log from there; a failed SQLite commit after answering stops the member, which
recovers the same way.
"""
