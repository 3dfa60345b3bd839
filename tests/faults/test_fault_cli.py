"""`kconsole fault ...` as a separate process against the cluster's admin endpoint, including while
etcd has lost quorum (the endpoint acts on handles, not through the API)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import stat
import sys
from pathlib import Path

from fault_env import fault_events, vclock

from kconsole.cli import main
from kconsole.client import StatusError
from kconsole.cluster import Cluster


async def process(*args: str) -> tuple[int, str, str]:
    """The real command line, as a separate process."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "kconsole", *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def kconsole(*args: str) -> tuple[int, str, str]:
    """The same entry point in a thread (real HTTP to the endpoint; no interpreter start-up per call)."""
    def run() -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:
                code = int(exit_.code or 0)
        return code, out.getvalue(), err.getvalue()

    return await asyncio.to_thread(run)


async def test_drill_through_the_cli_while_etcd_has_no_quorum(cluster: Cluster) -> None:
    data = str(cluster.data_dir)
    admin_file = Path(data) / "admin.json"
    assert stat.S_IMODE(admin_file.stat().st_mode) == 0o600
    etcd, clock = cluster.etcd, vclock(cluster)
    assert etcd is not None

    code, out, _ = await process("fault", "list")
    assert code == 0
    lines = out.splitlines()
    assert any(line.split()[:2] == ["etcd-stop", "etcd-member"] for line in lines)
    assert len(lines) >= 21

    code, first, err = await process("fault", "apply", "etcd-stop", "etcd-0", "--data-dir", data)
    assert code == 0 and first.strip() == "f1" and "applied etcd-stop on etcd-0" in err
    code, second, _ = await kconsole("fault", "apply", "etcd-stop", "etcd-1", "--data-dir", data)
    assert code == 0 and second.strip() == "f2"
    assert not etcd.quorum().ok

    # Without quorum the API cannot write ...
    write = asyncio.create_task(cluster.api_client().create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "blocked"}}))
    await clock.run_until(write.done, timeout=30, step=0.5)
    assert isinstance(write.exception(), StatusError) and write.exception().code in (503, 504)  # type: ignore
    # ... but the admin endpoint still answers.
    code, out, _ = await process("fault", "active", "--data-dir", data)
    assert code == 0
    assert [line.split()[:3] for line in out.splitlines()[1:]] == [["f1", "etcd-stop", "etcd-0"],
                                                                  ["f2", "etcd-stop", "etcd-1"]]
    code, out, _ = await kconsole("fault", "--json", "active", "--data-dir", data)
    assert [f["id"] for f in json.loads(out)] == ["f1", "f2"]

    code, out, _ = await kconsole("fault", "heal", "f2", "--data-dir", data)
    assert code == 0 and out.strip() == "healed f2 etcd-stop on etcd-1"
    await clock.run_until(lambda: etcd.quorum().ok and etcd.leader() is not None, timeout=30, step=0.2)
    code, out, _ = await kconsole("fault", "heal", "--all", "--data-dir", data)
    assert code == 0 and out.strip() == "healed f1 etcd-stop on etcd-0"
    code, out, _ = await kconsole("fault", "active", "--data-dir", data)
    assert out.strip() == "no active faults"

    # The Events of faults applied while nothing could be written arrive once etcd is back.
    injected = [e["message"] for e in await fault_events(cluster, "FaultInjected")]
    assert any("Fault f1 etcd-stop on etcd-0" in m for m in injected)
    assert any("Fault f2 etcd-stop on etcd-1" in m for m in injected)


async def test_cli_errors(cluster: Cluster, tmp_path: Path) -> None:
    data = str(cluster.data_dir)
    code, _, err = await kconsole("fault", "heal", "f42", "--data-dir", data)
    assert code == 1 and "no active fault 'f42'" in err
    code, _, err = await kconsole("fault", "apply", "etcd-stop", "etcd-7", "--data-dir", data)
    assert code == 1 and "no etcd member 'etcd-7'" in err
    code, _, err = await kconsole("fault", "apply", "etcd-slow-disk", "etcd-0", "-p", "seconds", "--data-dir", data)
    assert code == 2 and "--param takes KEY=VALUE" in err
    code, _, err = await kconsole("fault", "heal", "--data-dir", data)
    assert code == 2 and "give a fault id or --all" in err
    code, _, err = await kconsole("fault", "apply", "kubelet-stop", "--data-dir", data)
    assert code == 2 and "kubelet-stop needs a target: a node name, e.g. worker-1" in err
    # A leader fault's target follows from the fault: it may be left out.
    code, out, err = await kconsole("fault", "apply", "kill-scheduler-leader", "--data-dir", data)
    assert code == 0 and "applied kill-scheduler-leader on control-plane-" in err, err
    code, out, _ = await kconsole("fault", "heal", "--all", "--data-dir", data)
    assert code == 0 and "kill-scheduler-leader" in out
    code, _, err = await kconsole("fault", "active", "--data-dir", str(tmp_path / "elsewhere"))
    assert code == 3 and "no running cluster for data folder" in err
    # A wrong token is refused.
    (tmp_path / "fake").mkdir()
    real = json.loads((cluster.data_dir / "admin.json").read_text())
    (tmp_path / "fake" / "admin.json").write_text(json.dumps({**real, "token": "guess"}))
    code, _, err = await kconsole("fault", "active", "--data-dir", str(tmp_path / "fake"))
    assert code == 1 and "wrong admin token" in err
