"""A container's writable layer and the commands over it (mkdir, rm, touch, cp, mv, tar, redirections),
over a Machine built by hand: what each script prints, its exit status, and the layer's cap."""

from __future__ import annotations

import io
import tarfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconsole.nodes.shell import Streams, run
from test_shell import execute, machine

pytestmark = pytest.mark.asyncio

FILES = [
    ("mkdir -p /tmp/a/b && echo hi > /tmp/a/b/f && ls /tmp/a && cat /tmp/a/b/f", 0, "b\nhi\n", ""),
    ("mkdir /tmp/x/y", 1, "", "mkdir: can't create directory '/tmp/x/y': No such file or directory\n"),
    ("mkdir /etc/cfg/d", 1, "", "mkdir: can't create directory '/etc/cfg/d': Read-only file system\n"),
    ("touch /tmp/t; mkdir /tmp/t", 1, "", "mkdir: can't create directory '/tmp/t': File exists\n"),
    ("mkdir /tmp/d; rm /tmp/d; rm -r /tmp/d; ls /tmp", 0, "", "rm: '/tmp/d' is a directory\n"),
    ("rm /nope; rm -f /nope; echo $?", 0, "0\n", "rm: can't remove '/nope': No such file or directory\n"),
    ("rm /etc/cfg/a.txt", 1, "", "rm: can't remove '/etc/cfg/a.txt': Read-only file system\n"),
    ("echo a > /tmp/f; echo b >> /tmp/f; cp /tmp/f /tmp/g; mv /tmp/g /tmp/h; ls /tmp; cat /tmp/h", 0,
     "f  h\na\nb\n", ""),
    ("cp /etc/cfg /tmp/c", 1, "", "cp: omitting directory '/etc/cfg'\n"),
    ("cp -r /etc/cfg /tmp/c && ls /tmp/c && rmdir /tmp/c", 1, "a.txt  b.txt\n",
     "rmdir: '/tmp/c': Directory not empty\n"),
    ("echo x > /nodir/f", 1, "", "sh: can't create /nodir/f: nonexistent directory\n"),
    ("ls /", 0, "bin  dev  etc  home  lib  mnt  opt  proc  root  run  sbin  srv  sys  tmp  usr  var\n", ""),
    ("echo 12345 > /tmp/n; ls -l /tmp/n", 0, "-rw-r--r--    1 root     root             6 Nov 14 22:13 /tmp/n\n",
     ""),
    ("tar cf - /etc/cfg | tar tf -", 0, "etc/cfg/\netc/cfg/a.txt\netc/cfg/b.txt\n",
     "tar: removing leading '/' from member names\n"),
    ("cd /etc && tar cf - cfg/b.txt | tar xmf - -C /tmp && cat /tmp/cfg/b.txt", 0, "B", ""),
    ("tar cf /tmp/a.tar -C /etc cfg && tar xf /tmp/a.tar -C /root && ls /root/cfg", 0, "a.txt  b.txt\n", ""),
    ("tar czf - /etc/cfg/a.txt 2>/dev/null | tar xzOf -", 0, "alpha\nbeta\n", ""),
    ("tar cf - /nope", 1, "", "tar: /nope: No such file or directory\n"),
    ("echo notatar | tar xf -", 1, "", "tar: invalid tar magic\n"),
    ("tar xf - -C /nope < /etc/cfg/b.txt", 1, "", "tar: can't change directory to '/nope': No such file or directory\n"),
    ("tar cf - /etc/cfg/a.txt 2>/dev/null | tail -c+1 | tar xOf -", 0, "alpha\nbeta\n", ""),
    ("head -c 3 /etc/cfg/a.txt; tail -c 5 /etc/cfg/a.txt; tail -c +8 /etc/cfg/a.txt", 0, "alpbeta\neta\n", ""),
    ("echo hi > /tmp/f; df -h", 0, "Filesystem                Size      Used Available Use% Mounted on\n"
                                   "overlay                  32.0M         9     32.0M   1% /\n", ""),
    ("tar", 1, "", "BusyBox v1.36.1 multi-call binary.\n\nUsage: tar c|x|t [-ZzJjahmvokO] [-f TARFILE] [-C DIR] "
                   "[-T FILE] [-X FILE] [FILE]...\n"),
]


@pytest.mark.parametrize(("script", "code", "out", "err"), FILES)
async def test_files(script: str, code: int, out: str, err: str) -> None:
    assert await execute(machine([]), ["sh", "-c", script]) == (code, out, err)


def archive(*members: tuple[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as out:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_600_000_000
            out.addfile(info, io.BytesIO(data))
    return buf.getvalue()


async def test_kubectl_cp_into_a_container() -> None:
    """What ``kubectl cp local.txt pod:/tmp/x.txt`` runs: ``test -d``, then tar reading stdin."""
    m = machine([])
    assert await execute(m, ["test", "-d", "/tmp/x.txt"]) == (1, "", "")
    stdin = archive(("x.txt", b"copied\n"), ("sub/y.txt", b"y"))
    assert await execute(m, ["tar", "-xmf", "-", "-C", "/tmp"], stdin) == (0, "", "")
    assert await execute(m, ["sh", "-c", "cat /tmp/x.txt /tmp/sub/y.txt"]) == (0, "copied\ny", "")
    assert m.fs.mtime("/tmp/x.txt") != 1_600_000_000  # m: the extraction time, not the archive's
    stdin = archive(("kept.txt", b"k"))
    assert await execute(m, ["tar", "--no-same-permissions", "--no-same-owner", "-xf", "-", "-C", "/tmp"],
                         stdin) == (0, "", "")
    assert m.fs.mtime("/tmp/kept.txt") == 1_600_000_000


async def test_the_layer_is_capped() -> None:
    m = machine([])
    m.overlay.limit = 2000
    assert await execute(m, ["tar", "xf", "-", "-C", "/tmp"], archive(("a", b"a" * 1500))) == (0, "", "")
    assert await execute(m, ["tar", "xf", "-", "-C", "/tmp"], archive(("b", b"b" * 1500))) == (
        1, "", "tar: write error: No space left on device\n")
    assert await execute(m, ["sh", "-c", "seq 1000 > /tmp/c; echo $?"]) == (
        0, "1\n", "sh: write error: No space left on device\n")
    assert m.overlay.used == 1500 + len("/tmp/a") + len("/tmp/c")  # names count too
    assert await execute(m, ["sh", "-c", "rm /tmp/a; seq 3 > /tmp/c; cat /tmp/c"]) == (0, "1\n2\n3\n", "")
    assert m.overlay.used == len("/tmp/c") + 6
    code, _, err = await execute(m, ["sh", "-c", "for i in $(seq 500); do mkdir /tmp/d$i || exit 9; done"])
    assert (code, err) == (9, "mkdir: can't create directory '/tmp/d" + str(len(m.overlay.dirs) + 1)
                           + "': No space left on device\n")


async def test_deep_trees_round_trip() -> None:
    """A tree deeper than Python's stack goes in and out of tar (nothing walks it recursively)."""
    m = machine([])
    deep = "/".join(["d"] * 1200)
    assert await execute(m, ["tar", "xf", "-", "-C", "/tmp"], archive((f"{deep}/leaf", b"x"))) == (0, "", "")
    code, out, err = await execute(m, ["sh", "-c", "tar cf - -C /tmp d | tar tf - | tail -1"])
    assert (code, out, err) == (0, f"{deep}/leaf\n", "")


async def test_input_past_the_cap_is_not_read() -> None:
    """tar stops reading its input once it holds more than the layer could take."""
    m = machine([])
    m.overlay.limit = 1000
    chunks = [b"\0" * 65536] * 1000
    handed: list[int] = []

    async def read() -> bytes | None:
        handed.append(1)
        return chunks.pop() if chunks else None

    async def sink(data: bytes) -> None:
        return None
    code = await run(m, ["tar", "xf", "-"], Streams(read, sink, sink))
    assert code == 1 and len(handed) < 20


async def test_gnu_tar_words_its_errors() -> None:
    m = machine([])
    m.image = "nginx"
    assert await execute(m, ["tar", "xf", "-", "-C", "/etc/cfg"], archive(("f", b"x"))) == (
        2, "", "tar: f: Cannot open: Read-only file system\ntar: Exiting with failure status due to previous "
               "errors\n")
    assert await execute(m, ["tar", "xf", "-"], b"garbage" * 100) == (
        2, "", "tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous "
               "errors\n")
    code, out, err = await execute(m, ["tar", "cf", "-", "/etc/cfg/b.txt"])
    assert code == 0 and err == "tar: Removing leading `/' from member names\n" and out.startswith("etc/cfg/b.txt")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=3000), st.integers(min_value=0, max_value=2999), st.sampled_from(["xvf", "tvf", "xzf"]))
async def test_any_input_is_tars_error_never_a_crash(noise: bytes, at: int, mode: str) -> None:
    """Random bytes, and a real archive with random bytes written over part of it."""
    valid = archive(("a/b.txt", b"content"), ("c", b"x" * 600))
    mangled = valid[:at] + noise + valid[at + len(noise):]
    for stdin in (noise, mangled):
        code, _, _ = await execute(machine([]), ["tar", mode, "-", "-C", "/tmp"], stdin)
        assert code in (0, 1)
