"""The container shell's grammar and commands, over a Machine built by hand (no cluster): what each
script prints and its exit status."""

from __future__ import annotations

import asyncio

import pytest

from kconsole.nodes.layer import Layer
from kconsole.nodes.shell import HttpAnswer, Machine, Streams, run

pytestmark = pytest.mark.asyncio


def machine(slept: list[float]) -> Machine:
    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    def resolve(name: str) -> tuple[str, list[str]] | None:
        return ("web.default.svc.cluster.local", ["10.96.0.20"]) if name == "web" else None

    def http(address: str, port: int, path: str) -> HttpAnswer:
        if port != 80:
            return HttpAnswer(error="timeout" if port == 81 else "refused")
        return HttpAnswer(endpoint="10.244.1.5:80", route="kube-proxy on node-1 sent ...", status=200, reason="OK",
                          headers=[("Content-Length", "3")], body=b"hi\n")
    return Machine(hostname="box", env={"PATH": "/bin", "HOSTNAME": "box", "MODE": "fast"},
                   files={"/etc/cfg/a.txt": b"alpha\nbeta\n", "/etc/cfg/b.txt": b"B"}, read_only=("/etc/cfg",),
                   overlay=Layer(), image="busybox", now=lambda: 1_700_000_000.0, sleep=sleep, resolve=resolve, http=http,
                   missing=frozenset({"curl"}))


async def execute(m: Machine, argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    out: list[bytes] = []
    err: list[bytes] = []
    chunks = [stdin] if stdin else []

    async def read() -> bytes | None:
        return chunks.pop(0) if chunks else None

    async def write_out(data: bytes) -> None:
        out.append(data)

    async def write_err(data: bytes) -> None:
        err.append(data)
    code = await run(m, argv, Streams(read, write_out, write_err))
    return code, b"".join(out).decode(), b"".join(err).decode()


SCRIPTS = [
    ("echo $HOSTNAME; exit 3", 3, "box\n", ""),
    ("false && echo no || echo yes", 0, "yes\n", ""),
    ("echo 'a  $MODE' \"b $MODE\" c\\ d", 0, "a  $MODE b fast c d\n", ""),
    ("X=1; echo ${X}2 $?", 0, "12 0\n", ""),
    ("nosuch arg; echo $?", 0, "127\n", "sh: nosuch: not found\n"),
    ("curl web", 127, "", "sh: curl: not found\n"),
    ("cat /etc/cfg/a.txt | grep -c a", 0, "2\n", ""),
    ("ls /etc/cfg; ls /nope", 1, "a.txt  b.txt\n", "ls: /nope: No such file or directory\n"),
    ("echo x > /etc/cfg/new", 1, "", "sh: can't create /etc/cfg/new: Read-only file system\n"),
    ("echo kept > /tmp/f; cat /tmp/f; cat /nope 2>/dev/null; echo $?", 0, "kept\n1\n", ""),
    ("echo err >&2; echo out 2>&1", 0, "out\n", "err\n"),
    ("echo > ", 2, "", "sh: syntax error: unexpected newline\n"),
    ("echo 'open", 2, "", "sh: unterminated quoted string\n"),
    ("env | grep MODE; printenv MODE", 0, "MODE=fast\nfast\n", ""),
    ("export Y=2; env | grep Y=; sh -c 'echo $Y'", 0, "Y=2\n2\n", ""),
    ("sleep 2m; date +%s", 0, "1700000000\n", ""),
    ("nslookup web", 0, "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n"
                       "Name:\tweb.default.svc.cluster.local\nAddress: 10.96.0.20\n\n", ""),
    ("wget -qO- web", 0, "hi\n", ""),
    ("printf 'a b\\nc' | wc; echo hi | wc -c", 0, "      1       3       5\n3\n", ""),
    ("wc -l /etc/cfg/a.txt /etc/cfg/b.txt", 0, "2 /etc/cfg/a.txt\n0 /etc/cfg/b.txt\n2 total\n", ""),
    ("echo -n 'This is a test string' | gzip | wc -c; echo hi | gzip | gunzip; gzip -dc /etc/cfg/a.txt", 1,
     "39\nhi\n", "gzip: invalid magic\n"),
    ("echo hi > /tmp/f; gzip /tmp/f; ls /tmp; zcat /tmp/f.gz; gunzip /tmp/f.gz; cat /tmp/f; gzip /etc/cfg/a.txt", 1,
     "f.gz\nhi\nhi\n", "gzip: /etc/cfg/a.txt: Read-only file system\n"),
    ("wget -qO- web:8080", 1, "", "wget: can't connect to remote host (10.96.0.20): Connection refused\n"),
    ("head -n 1 /etc/cfg/a.txt; tail -1 /etc/cfg/a.txt; wc -l /etc/cfg/a.txt", 0, "alpha\nbeta\n2 /etc/cfg/a.txt\n", ""),
    ("printf '%s-%d\\n' a 7", 0, "a-7\n", ""),
    ("exit 300", 44, "", ""),
]


@pytest.mark.parametrize(("script", "code", "out", "err"), SCRIPTS)
async def test_script(script: str, code: int, out: str, err: str) -> None:
    assert await execute(machine([]), ["sh", "-c", script]) == (code, out, err)


async def test_sleep_and_timeouts_wait_on_the_clock() -> None:
    slept: list[float] = []
    m = machine(slept)
    assert (await execute(m, ["sh", "-c", "sleep 1.5 2"]))[0] == 0
    code, _, err = await execute(m, ["wget", "-q", "web:81"])
    assert code == 1 and err.endswith("Connection timed out\n")
    assert slept == [3.5, 130.0]


async def test_stdin_runs_line_by_line() -> None:
    assert await execute(machine([]), ["sh"], b"echo one\nexit 4\necho never\n") == (4, "one\n", "")
    assert await execute(machine([]), ["cat"], b"piped") == (0, "piped", "")


async def test_a_terminal_echoes_and_edits() -> None:
    out: list[bytes] = []
    typed = [b"echo hx\x7fi\r", b"\x03", b"exit 2\r"]

    async def read() -> bytes | None:
        return typed.pop(0) if typed else None

    async def write(data: bytes) -> None:
        out.append(data)
    code = await run(machine([]), ["sh"], Streams(read, write, write), tty=True)
    assert code == 2
    assert b"".join(out) == b"# echo hx\x08 \x08i\r\nhi\r\n# ^C\r\n# exit 2\r\n"


LOOPS = [
    ("for i in 1 2 3; do echo n$i; done", 0, "n1\nn2\nn3\n", ""),
    ("for f in $(ls /etc/cfg); do echo [$f]; done", 0, "[a.txt]\n[b.txt]\n", ""),
    ("n=0; while [ $n -lt 3 ]; do n=$(expr $n + 1) ; echo $n; done", 0, "1\n2\n3\n", ""),
    ("if [ -f /etc/cfg/a.txt ]; then echo yes; else echo no; fi", 0, "yes\n", ""),
    ("if test \"$MODE\" = slow; then echo slow; elif [ -n \"$MODE\" ]; then echo $MODE; fi", 0, "fast\n", ""),
    ("echo \"$(hostname) has $(seq 2 | wc -l) lines\"", 0, "box has 2 lines\n", ""),
    ("X=\"a b\"; for w in $X; do echo $w; done; for w in \"$X\"; do echo $w; done", 0, "a\nb\na b\n", ""),
    ("for i in 1 2; do", 2, "", "sh: syntax error: unexpected end of file (expecting \"done\")\n"),
    ("done", 2, "", "sh: syntax error: unexpected \"done\"\n"),
    ("echo $((1 + 2 * 3)) $(( (7 - 1) / 4 ))", 0, "7 1\n", ""),
    ("uptime | grep -c 'load average'", 0, "1\n", ""),
    ("while true; do echo yes; done | head -2; echo $?", 0, "yes\nyes\n0\n", ""),
    ("exit 3 | cat; echo $?", 0, "0\n", ""),
    ("printf 'b\\na\\nb\\n' | sort | uniq -c", 0, "      1 a\n      2 b\n", ""),
    ("echo 'x pod a/b-1 y' | grep -o 'pod [a-z/0-9-]*'", 0, "pod a/b-1\n", ""),
]


@pytest.mark.parametrize(("script", "code", "out", "err"), LOOPS)
async def test_compound_commands(script: str, code: int, out: str, err: str) -> None:
    assert await execute(machine([]), ["sh", "-c", script]) == (code, out, err)


async def test_an_unfinished_loop_waits_for_its_next_line() -> None:
    assert await execute(machine([]), ["sh"], b"for i in 1 2\ndo echo $i\ndone\n") == (0, "1\n2\n", "")


async def test_ctrl_c_interrupts_a_loop_on_a_terminal() -> None:
    out: list[bytes] = []
    typed = [b"while true; do sleep 1; done\r", b"\x03", b"echo $?\r", b"exit\r"]

    async def read() -> bytes | None:
        await asyncio.sleep(0)
        return typed.pop(0) if typed else None

    async def write(data: bytes) -> None:
        out.append(data)
    code = await run(machine([]), ["sh"], Streams(read, write, write), tty=True)
    assert code == 0
    assert b"".join(out).endswith(b"done\r\n^C\r\n# echo $?\r\n130\r\n# exit\r\n")
