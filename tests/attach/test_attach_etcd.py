"""``kconsole attach --etcd-endpoints``: the etcd panel shows the members' own status (endpoint, ID,
version, db size, leader, raft term and index, health) from etcd's maintenance API, read from real
members that ``kconsole etcd up`` runs in another process; bad endpoints or files are refused."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from attach_env import eventually, read_until

from kconsole.attached import AttachedCluster
from kconsole.store.etcdgw import TLSFiles
from kconsole.tui.app import ConsoleApp

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("etcd") is None,
                                reason="no etcd binary on PATH (CI installs Debian's etcd-server)")


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], TLSFiles]]:
    """Three real members run by ``kconsole etcd up``, in their own process."""
    folder = tmp_path_factory.mktemp("etcd-up") / "etcd"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "kconsole", "etcd", "up", "--members", "3", "--data-dir",
                             str(folder)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        out = read_until(proc, "--etcd-keyfile", 120)
        line = next((x for x in out.splitlines() if x.startswith("kconsole serve --etcd-servers")), "")
        assert line, f"kconsole etcd up did not start:\n{out}"
        words = line.split()
        flag = {words[i]: words[i + 1] for i in range(2, len(words) - 1, 2)}
        yield flag["--etcd-servers"].split(","), TLSFiles(Path(flag["--etcd-cafile"]), Path(flag["--etcd-certfile"]),
                                                          Path(flag["--etcd-keyfile"]))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def rows(panel) -> list:  # type: ignore[no-untyped-def]
    return panel.table.rows


async def test_the_etcd_panel_shows_the_members_own_status(served, members) -> None:  # type: ignore[no-untyped-def]
    endpoints, tls = members
    cluster = AttachedCluster(served.kubeconfig, etcd_endpoints=endpoints, etcd_tls=tls)
    app = ConsoleApp(cluster, readonly=True)
    async with app.run_test(size=(220, 70)) as pilot:
        await eventually(lambda: app.ready, "the console connects", pilot=pilot)
        await eventually(lambda: len(rows(app.etcd)) == 3 and all(r.cells[10] == "healthy" for r in rows(app.etcd))
                         and [r.cells[4] for r in rows(app.etcd)].count("true") == 1
                         and app.etcd.quorum_line().startswith("quorum ok: 3 alive / 2 needed / tolerates 1 · rev "),
                         "three healthy members, one leader, quorum ok", pilot=pilot)
        cells = [r.cells for r in rows(app.etcd)]
        assert sorted(c[0] for c in cells) == sorted(endpoints)
        assert all(c[2].startswith("3.") and int(c[6]) >= 2 and int(c[7]) > 0 and c[3] != "-" for c in cells)
        statuses = await cluster.etcd.member_status()
        assert sorted(s.name for s in statuses) == ["etcd-0", "etcd-1", "etcd-2"]  # as etcd's member list names them
        assert len({s.id for s in statuses}) == 3 and all(s.db_size > 0 for s in statuses)
        with pytest.raises(Exception, match="not run by this cluster"):
            await cluster.etcd.members[0].stop()  # seen, not broken: somebody else runs them


def test_bad_endpoints_and_files_are_named(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                          "current-context: x\n")
    for extra, says in ((["--etcd-endpoints", "127.0.0.1:2379"], "--etcd-endpoints: '127.0.0.1:2379' is not an etcd"),
                        (["--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-cafile", str(tmp_path / "nope")],
                         "--etcd-cafile: no file")):
        done = subprocess.run([sys.executable, "-m", "kconsole", "attach", "--kubeconfig", str(kubeconfig), *extra],
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 2 and says in done.stderr, done.stderr
