"""The real-etcd client's pieces that need no etcd: kube-apiserver's key layout, etcd's error texts
as store errors, the flags' checks; and ``kconsole etcd up`` as a user runs it (real members)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kconsole.cluster import ClusterConfig, ConfigError
from kconsole.store.etcdgw import parse_servers, store_error
from kconsole.store.etcdkeys import KeyLayout
from kconsole.store.kv import CompactedError, NoSpaceError, StoreError, UnavailableError, prefix_end

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("ours, upstream", [
    ("/registry/pods/default/web-1", "/registry/pods/default/web-1"),
    ("/registry/deployments.apps/default/web", "/registry/deployments/default/web"),
    ("/registry/nodes/worker-1", "/registry/minions/worker-1"),
    ("/registry/services/default/kubernetes", "/registry/services/specs/default/kubernetes"),
    ("/registry/endpoints/default/kubernetes", "/registry/services/endpoints/default/kubernetes"),
    ("/registry/ingresses.networking.k8s.io/default/i", "/registry/ingress/default/i"),
    ("/registry/clusterroles.rbac.authorization.k8s.io/admin", "/registry/clusterroles/admin"),
    ("/registry/apiservices.apiregistration.k8s.io/v1.apps", "/registry/apiregistration.k8s.io/apiservices/v1.apps"),
    ("/registry/example.com/widgets/default/w", "/registry/example.com/widgets/default/w"),
    ("/registry/services/specs/svc", "/registry/services/specs/specs/svc"),  # a namespace named "specs"
    ("compact_rev_key", "compact_rev_key"),
])
def test_keys_are_kube_apiservers_and_map_back(ours: str, upstream: str) -> None:
    layout = KeyLayout()
    assert layout.to_etcd(ours) == upstream
    assert layout.from_etcd(upstream) == ours


def test_prefix_ranges_map_to_prefix_ranges() -> None:
    layout = KeyLayout()
    for prefix in ("/registry/deployments.apps/", "/registry/services/default/", "/registry/pods/"):
        mapped = layout.to_etcd(prefix)
        assert layout.end_to_etcd(prefix_end(prefix)) == prefix_end(mapped)
    assert layout.end_to_etcd("\0") == "\0"
    # A continue token's start (the last key plus "\0") stays inside the mapped range.
    start = layout.to_etcd("/registry/deployments.apps/default/web\0")
    assert layout.to_etcd("/registry/deployments.apps/") <= start < prefix_end("/registry/deployments/")


@pytest.mark.parametrize("text, kind", [
    ("etcdserver: mvcc: required revision has been compacted", CompactedError),
    ("etcdserver: mvcc: database space exceeded", NoSpaceError),
    ("etcdserver: no leader", UnavailableError),
    ("etcdserver: request timed out", UnavailableError),
    ("etcdserver: too many requests", UnavailableError),
    ("etcdserver: leader changed", UnavailableError),
    ("etcdserver: something new", StoreError),
])
def test_etcds_errors_become_the_store_errors_the_api_server_maps(text: str, kind: type) -> None:
    err = store_error(text)
    assert type(err) is kind
    assert str(err).startswith("etcdserver:")


def test_bad_servers_and_files_are_named() -> None:
    assert parse_servers("https://127.0.0.1:2379, http://h:1") == ["https://127.0.0.1:2379", "http://h:1"]
    for bad in ("", "127.0.0.1:2379", "ftp://h:1", "https://h:1/v3"):
        with pytest.raises(ValueError, match="--etcd-servers"):
            parse_servers(bad)
    with pytest.raises(ConfigError, match="etcd-servers"):
        ClusterConfig(etcd_servers=("nope",)).validate()
    with pytest.raises(ConfigError, match="etcd-cafile: no file"):
        ClusterConfig(etcd_servers=("https://127.0.0.1:2379",), etcd_cafile=Path("/no/such/ca.crt")).validate()
    with pytest.raises(ConfigError, match="'embedded' or 'local'"):
        ClusterConfig(etcd="remote").validate()


@pytest.mark.skipif(shutil.which("etcd") is None, reason="no etcd binary on PATH (CI installs Debian's etcd-server)")
def test_etcd_up_runs_members_until_interrupted(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "kconsole", "etcd", "up", "--members", "1", "--data-dir",
                             str(tmp_path / "etcd")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        lines = []
        deadline = time.monotonic() + 120
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("kconsole serve --etcd-servers https://127.0.0.1:"):
                break
        assert lines and lines[-1].startswith("kconsole serve --etcd-servers"), (lines, proc.stderr.read())
        assert "--etcd-cafile" in lines[-1] and (tmp_path / "etcd" / "pki" / "client.key").exists()
        assert oct((tmp_path / "etcd" / "pki" / "client.key").stat().st_mode & 0o777) == "0o600"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    log = (tmp_path / "etcd" / "etcd-0.log").read_text()
    assert "etcd-0" in log


needs_etcd = pytest.mark.skipif(shutil.which("etcd") is None,
                                reason="no etcd binary on PATH (CI installs Debian's etcd-server)")


async def _next(stream, what: str, limit: float = 60.0):  # type: ignore[no-untyped-def]
    import asyncio

    try:
        return await asyncio.wait_for(stream.__aiter__().__anext__(), limit)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what}: nothing within {limit:g} s") from None


@needs_etcd
async def test_a_watch_is_settled_by_own_writes_elsewhere_and_waits_for_anyone_elses(tmp_path: Path) -> None:
    from kconsole.store.etcdgw import RealEtcd, TLSFiles
    from kconsole.store.etcdreal import open_real
    from kconsole.store.kv import Put

    etcd = await open_real(local_dir=tmp_path / "etcd", members=3)
    other = RealEtcd(etcd.servers, tls=TLSFiles(*etcd.local.tls_files()), compaction_interval=0)
    try:
        await other.start()
        pods = "/registry/pods/"
        first = await etcd.create(pods + "default/a", b"{}")
        stream = etcd.watch(pods, prefix_end(pods), start_revision=first.revision + 1, progress_notify=True)
        assert stream.settled()  # its reader listed up to the start
        await etcd.txn([], [Put("/registry/configmaps/default/c", b"{}")])
        assert stream.settled()  # one revision more, this client's, outside the range
        await etcd.create(pods + "default/b", b"{}")
        assert not stream.settled()  # a write in the range: not until the stream delivered it
        got = await _next(stream, "the pod's event")
        assert [e.kv.key for e in got.events] == [pods + "default/b"] and stream.settled()
        await other.txn([], [Put("/registry/configmaps/default/d", b"{}")])
        await etcd.range("/registry/configmaps/default/d")  # this client now knows the revision
        assert not stream.settled()  # someone else's revision: the stream must say
        progress = await _next(stream, "a progress notification")
        assert progress.progress and stream.settled()
        await stream.aclose()
    finally:
        await other.close()
        await etcd.close()


@needs_etcd
async def test_writes_go_to_the_leader_and_come_back_as_the_values_written(tmp_path: Path) -> None:
    """Over gRPC the client sends to the member that leads (a follower would forward every write),
    and its watches hand back its own writes' very value objects, so the API server's storage knows
    them without parsing them again; anyone else's write comes back as etcd sent it."""
    from kconsole.store.etcdgw import RealEtcd, TLSFiles
    from kconsole.store.etcdreal import open_real
    from kconsole.store.kv import Put

    etcd = await open_real(local_dir=tmp_path / "etcd", members=3)
    other = RealEtcd(etcd.servers, tls=TLSFiles(*etcd.local.tls_files()), compaction_interval=0)
    try:
        await other.start()
        await etcd.poll()
        leader = etcd.leader()
        assert leader is not None and etcd.servers[other._current] == leader.endpoint
        pods = "/registry/pods/"
        mine, theirs = b'{"kind": "Pod", "n": 1}', b'{"kind": "Pod", "n": 2}'
        first = await etcd.create(pods + "default/mine", mine)
        stream = etcd.watch(pods, prefix_end(pods), start_revision=first.revision)
        got = await _next(stream, "this client's create")
        assert got.events[0].kv.value is mine
        await other.txn([], [Put(pods + "default/theirs", theirs)])
        got = await _next(stream, "the other client's write")
        assert got.events[0].kv.value == theirs and got.events[0].kv.value is not theirs
        await stream.aclose()
    finally:
        await other.close()
        await etcd.close()


@needs_etcd
async def test_a_watch_moves_to_another_member_and_misses_nothing(tmp_path: Path) -> None:
    from kconsole.store.etcdreal import open_real

    etcd = await open_real(local_dir=tmp_path / "etcd", members=3)
    try:
        pods = "/registry/pods/"
        start = (await etcd.create(pods + "default/p0", b"0")).revision
        stream = etcd.watch(pods, prefix_end(pods), start_revision=start, progress_notify=True)
        seen: list[str] = []
        while not seen:
            got = await _next(stream, "the first event")
            seen += [e.kv.key for e in got.events]
        watched = etcd.members[etcd._current]
        await watched.stop()
        for i in range(1, 6):
            while True:
                try:
                    await etcd.create(pods + f"default/p{i}", str(i).encode())
                    break
                except StoreError:  # a write in flight when its member stopped: etcd says so, try again
                    continue
        while len(seen) < 6:
            got = await _next(stream, "the events after the member stopped")
            seen += [e.kv.key for e in got.events]
        assert seen == [pods + f"default/p{i}" for i in range(6)]
        await watched.start()
        await stream.aclose()
    finally:
        await etcd.close()


@needs_etcd
async def test_kube_apiservers_compactor_compacts_what_it_saw_an_interval_ago(tmp_path: Path) -> None:
    from kconsole.store.etcdreal import open_real
    from kconsole.store.kv import Put

    etcd = await open_real(local_dir=tmp_path / "etcd", members=1)
    try:
        for i in range(3):
            await etcd.txn([], [Put(f"/registry/configmaps/default/c{i}", b"{}")])
        version, seen = await etcd.compact_once(0, 0)  # the first round only records the revision
        assert version == 1 and etcd.compactions == 0
        await etcd.txn([], [Put("/registry/configmaps/default/later", b"{}")])
        version, _ = await etcd.compact_once(version, seen)
        assert version == 2 and etcd.compactions == 1 and (await etcd.status()).compact_revision == seen
        with pytest.raises(CompactedError):
            await etcd.range("/registry/configmaps/", prefix_end("/registry/configmaps/"), revision=seen - 1)
        stream = etcd.watch("/registry/configmaps/", prefix_end("/registry/configmaps/"), start_revision=2)
        got = await _next(stream, "the compacted watch's cancellation")
        assert got.canceled and got.compact_revision == seen
    finally:
        await etcd.close()
