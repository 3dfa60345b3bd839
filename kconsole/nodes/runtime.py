"""What a simulated container does, read from what it would run, and the kubelet's restart rules.

:func:`program_for` turns a container spec (image, command, args, stdin) into a :class:`Program`:

* ``sleep 30`` runs 30 s then exits 0; ``sleep infinity`` / ``tail -f /dev/null`` run forever;
* ``exit 3``, ``sh -c "exit 3"`` or ``false`` fail at once with that code; ``echo`` prints;
* a shell script (``sh -c "echo hi; sleep 5; exit 2"``) runs its steps in order;
* any other program (``nginx -g 'daemon off;'``, ``python app.py``) is a server: it runs forever;
* no command: a server image (nginx, httpd, redis, ...) serves forever, while a shell image
  (busybox, alpine, ubuntu, ...) runs ``sh`` with no stdin and exits 0 at once, as upstream does;
  with ``stdin: true`` it waits for input forever.

Servers listen, so HTTP/TCP probes against them succeed; shells do not. Shells as PID 1 ignore
SIGTERM (they are SIGKILLed when the grace period ends, exit 137), servers stop within a second.

Restart rules follow upstream: ``restartPolicy`` decides whether an exited container runs again;
the first restart is immediate, then CrashLoopBackOff waits 10 s doubling to 300 s, and a
container that ran 600 s before exiting starts over.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from kconsole.nodes.images import repository

BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
BACKOFF_RESET = 600.0
#: How long a server takes to stop on SIGTERM, and SIGKILL's exit code.
SERVER_STOP_SECONDS = 0.5
SIGKILL_EXIT = 137

#: Servers that do not log the kubelet's probe requests (CoreDNS answers /health and /ready silently).
QUIET_SERVERS = {"coredns", "kube-proxy"}
#: What CoreDNS prints for kubeadm's default Corefile.
COREFILE_SHA512 = ("591cf328cccc12bc490481273e738df59329c62c0b729d94e8b61db9961c2fa5"
                   "f046dd37f1cf888b953814040d180f52594972691cd6ff41be96639138a43908")
SHELLS = {"sh", "bash", "ash", "dash", "zsh"}
SHELL_IMAGES = {"busybox", "alpine", "ubuntu", "debian", "centos", "fedora", "bash", "rockylinux", "almalinux"}
INSTANT_COMMANDS = {"echo", "true", "date", "ls", "cat", "printenv", "env", "hostname", "touch", "mkdir", "rm",
                    "cp", "mv", "pwd", "whoami", "id", "uname", "printf", "wget", "curl", "nslookup", "ping", ":"}
FOREVER = float("inf")


@dataclass(slots=True)
class Program:
    """``run_seconds`` is ``inf`` for a container that never exits on its own."""

    run_seconds: float
    exit_code: int
    serves: bool
    ignores_sigterm: bool
    #: (seconds after start, line) written to the container's log.
    output: list[tuple[float, str]] = field(default_factory=list)
    description: str = ""
    #: Whether the kubelet's HTTP probe requests show in the log (web servers log each request).
    logs_probes: bool = True

    @property
    def finite(self) -> bool:
        return self.run_seconds != FOREVER


def _base_name(image: str) -> str:
    return repository(image).rsplit("/", 1)[-1]


def _server_lines(image: str) -> list[tuple[float, str]]:
    base = _base_name(image)
    if base == "nginx":
        return [(0.0, "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration"),
                (0.0, "/docker-entrypoint.sh: Configuration complete; ready for start up"),
                (0.1, "nginx: [notice] 1#1: start worker processes")]
    if base == "redis":
        return [(0.0, "1:M * Server initialized"), (0.0, "1:M * Ready to accept connections tcp")]
    if base == "httpd":
        return [(0.0, "[mpm_event:notice] [pid 1:tid 1] AH00489: Apache/2.4 configured -- resuming normal operations")]
    if base == "coredns":
        return [(0.0, ".:53"), (0.0, f"[INFO] plugin/reload: Running configuration SHA512 = {COREFILE_SHA512}"),
                (0.0, "CoreDNS-1.11.3"), (0.0, "linux/amd64, go1.21.11, a6338e9")]
    return [(0.0, f"[kconsole] {base} started")]


def _sleep_seconds(arg: str) -> float | None:
    """``sleep`` argument as seconds (``30``, ``1.5``, ``2m``, ``infinity``); None when unreadable."""
    if arg == "infinity":
        return FOREVER
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", arg)
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def _split_statements(script: str) -> list[tuple[str, str]]:
    """A script's simple commands with the operator that precedes each (``;``, ``&&`` or ``||``)."""
    out: list[tuple[str, str]] = []
    op = ";"
    for part in re.split(r"(\&\&|\|\||;|\n)", script):
        part = part.strip()
        if part in ("&&", "||"):
            op = part
        elif part in (";", ""):
            if part == ";":
                op = ";"
        else:
            out.append((op, part))
            op = ";"
    return out


def _run_script(statements: list[tuple[str, str]], image: str) -> Program:
    t = 0.0
    code = 0
    lines: list[tuple[float, str]] = []
    loop_forever = False
    for op, stmt in statements:
        if (op == "&&" and code != 0) or (op == "||" and code == 0):
            continue
        try:
            words = shlex.split(stmt)
        except ValueError:
            words = stmt.split()
        if not words:
            continue
        cmd = words[0].rsplit("/", 1)[-1]
        if cmd in ("while", "until", "for", "do", "done"):
            loop_forever = loop_forever or stmt.startswith(("while true", "while :", "until false"))
            continue
        if loop_forever:
            continue
        if cmd == "exit":
            code = int(words[1]) if len(words) > 1 and words[1].lstrip("-").isdigit() else code
            return Program(t, code % 256, False, True, lines, stmt)
        if cmd == "sleep":
            seconds = _sleep_seconds(words[1]) if len(words) > 1 else None
            if seconds is None:
                lines.append((t, f"sleep: invalid number '{words[1] if len(words) > 1 else ''}'"))
                code = 1
                continue
            t += seconds
            code = 0
            if seconds == FOREVER:
                return Program(FOREVER, 0, False, True, lines, stmt)
        elif cmd == "echo":
            lines.append((t, " ".join(w for w in words[1:] if w != "-n")))
            code = 0
        elif cmd == "false":
            code = 1
        elif cmd == "tail" and "-f" in words:
            return Program(FOREVER, 0, False, True, lines, stmt)
        elif cmd in INSTANT_COMMANDS:
            code = 0
        elif cmd in SHELLS:
            inner = _program_for({"image": image, "command": words})
            return Program(t + inner.run_seconds, inner.exit_code, inner.serves, True,
                           lines + [(t + dt, ln) for dt, ln in inner.output], stmt)
        else:
            return Program(FOREVER, 0, True, True, lines + _server_lines(image), stmt)
    if loop_forever:
        return Program(FOREVER, 0, False, True, lines, "loop")
    return Program(t, code, False, True, lines, "script")


def program_for(container: dict[str, Any]) -> Program:
    """The behaviour of a container spec (see the module docstring)."""
    program = _program_for(container)
    if _base_name(str(container.get("image") or "")) in QUIET_SERVERS:
        program.logs_probes = False
    return program


def _program_for(container: dict[str, Any]) -> Program:
    image = str(container.get("image") or "")
    argv = [str(a) for a in (container.get("command") or [])] + [str(a) for a in (container.get("args") or [])]
    stdin = bool(container.get("stdin"))
    if not container.get("command"):
        base = _base_name(image)
        if base in SHELL_IMAGES:
            if not container.get("args"):
                if stdin:
                    return Program(FOREVER, 0, False, True, [], "sh (stdin)")
                return Program(0.0, 0, False, True, [], "sh")
            argv = list(argv)
        else:
            if not argv:
                return Program(FOREVER, 0, True, False, _server_lines(image), "server")
            # Args to a server image's own entrypoint: still that server.
            return Program(FOREVER, 0, True, False, _server_lines(image), "server")
    if not argv:
        return Program(0.0, 0, False, True, [], "empty")
    cmd = argv[0].rsplit("/", 1)[-1]
    if cmd in SHELLS:
        if "-c" in argv[1:]:
            idx = argv.index("-c", 1)
            script = argv[idx + 1] if idx + 1 < len(argv) else ""
            return _run_script(_split_statements(script), image)
        if stdin:
            return Program(FOREVER, 0, False, True, [], "sh (stdin)")
        return Program(0.0, 0, False, True, [], "sh")
    return _run_script([(";", shlex.join(argv))], image)


def should_restart(restart_policy: str, exit_code: int) -> bool:
    """Whether an exited container runs again."""
    if restart_policy == "Never":
        return False
    if restart_policy == "OnFailure":
        return exit_code != 0
    return True


def exit_reason(exit_code: int, oom: bool = False) -> str:
    if oom:
        return "OOMKilled"
    return "Completed" if exit_code == 0 else "Error"


def next_backoff(current: float) -> float:
    """The back-off that follows ``current`` (0 = none yet): 10, 20, 40, ... capped at 300."""
    return BACKOFF_INITIAL if current <= 0 else min(current * 2, BACKOFF_MAX)
