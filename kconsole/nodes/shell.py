"""The shell a simulated container runs for ``kubectl exec``: a small POSIX-like ``sh`` and a table of
built-in commands over what the container sees (:class:`Machine`).

What it understands (grammar in :mod:`kconsole.nodes.shellparse`): lists joined by ``;``, ``&&``,
``||`` and newlines, pipes (``|``), ``for``/``while``/``until``/``if``, single and double quotes,
backslashes, ``$VAR``, ``${VAR}``, ``$?``, ``$(...)``, ``$((...))``, ``NAME=value``, ``export``,
``exit N``, comments, and the redirections ``> /dev/null``, ``2>/dev/null``, ``2>&1``, ``>&2`` and
``>``/``>>`` into the container's writable layer. The stages of a pipeline run side by side joined
by :class:`Pipe`. Each command is one entry of :data:`COMMANDS`; a command the table does
not have (or the image lacks, :attr:`Machine.missing`) is ``sh: X: not found``, exit 127, as
busybox's ash says it. Nothing runs on the host: every command reads the :class:`Machine` the kubelet
built from the pod (its environment, mounted files, DNS and the node's kube-proxy rules), and
``sleep`` waits on the simulated clock.
"""

from __future__ import annotations

import ast
import asyncio
import gzip
import re
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from kconsole.nodes import filecmds, tarcmd
from kconsole.nodes.layer import Filesystem, FsError, Layer
from kconsole.nodes.shellparse import Command, ParseError, Script, Word, parse

#: The shells an image may have; exec of one of these runs :class:`Shell`.
SHELLS = frozenset(("sh", "bash", "ash", "dash"))
PROMPT = "# "
#: Bytes ``$(...)`` may produce before its command is stopped.
PIPE_LIMIT = 1 << 20
#: Bytes a pipe holds before its writer waits (Linux's pipe buffer).
PIPE_BUFFER = 64 * 1024
#: Simulated seconds a connection attempt nobody answers takes to fail (Linux's SYN retries).
CONNECT_TIMEOUT = 130.0


class PipeFull(Exception):
    """A write to a pipe (or ``$(...)``) nobody will read any more: the writer ends, as SIGPIPE ends it."""

    def __init__(self, pipe: object) -> None:
        super().__init__("broken pipe")
        self.pipe = pipe


class Pipe:
    """A pipe between two pipeline stages: a writer waits while :data:`PIPE_BUFFER` bytes are unread."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._changed = asyncio.Event()
        self.write_closed = False
        self.read_closed = False

    async def write(self, data: bytes) -> None:
        while not self.read_closed and self._size >= PIPE_BUFFER:
            self._changed.clear()
            await self._changed.wait()
        if self.read_closed:
            raise PipeFull(self)
        self._chunks.append(data)
        self._size += len(data)
        self._changed.set()

    async def read(self) -> bytes | None:
        while not self._chunks and not self.write_closed:
            self._changed.clear()
            await self._changed.wait()
        if not self._chunks:
            return None
        chunk = self._chunks.pop(0)
        self._size -= len(chunk)
        self._changed.set()
        return chunk

    def close_write(self) -> None:
        self.write_closed = True
        self._changed.set()

    def close_read(self) -> None:
        self.read_closed = True
        self._chunks.clear()
        self._size = 0
        self._changed.set()


class ShellExit(Exception):
    """``exit N``: ends the shell it runs in."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass(slots=True)
class HttpAnswer:
    """What a connection to ``address:port`` got: a page, or why there was none."""

    #: The address actually connected to (a Service's ClusterIP is rewritten to an endpoint).
    endpoint: str = ""
    #: e.g. "kube-proxy on node-1 chose 10.244.1.5:80 (pod web-abc), 1 of 3 endpoints"
    route: str = ""
    status: int = 0
    reason: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    #: "refused" (nothing listens, or a Service without endpoints) | "timeout" (nothing answers) | "" (answered)
    error: str = ""


@dataclass(slots=True)
class Machine:
    """A container as a process inside it sees it."""

    hostname: str
    #: The process environment, in order.
    env: dict[str, str]
    #: Absolute path -> content: mounted volumes, /etc/hosts, /etc/resolv.conf, the image's few files.
    files: dict[str, bytes]
    #: Paths (and their parents) that are read-only mounts.
    read_only: tuple[str, ...]
    #: This container instance's writable layer, shared by every exec into it.
    overlay: Layer
    image: str
    now: Callable[[], float]
    sleep: Callable[[float], Awaitable[None]]
    #: DNS through the pod's resolv.conf: name -> (fully qualified name, addresses), None: NXDOMAIN.
    resolve: Callable[[str], tuple[str, list[str]] | None]
    #: An HTTP GET to address:port of path through the node's rules.
    http: Callable[[str, int, str], HttpAnswer]
    #: Commands the image does not ship (busybox has no curl, nginx's Debian no wget).
    missing: frozenset[str] = frozenset()
    nameserver: str = "10.96.0.10"
    #: What PID 1 runs, for ``ps``.
    pid1: str = ""
    #: When the container started (``uptime``).
    started: float = 0.0

    #: The merged filesystem (image, mounts, writable layer) every command reads and changes.
    fs: Filesystem = field(init=False)

    def __post_init__(self) -> None:
        self.fs = Filesystem(self.files, self.read_only, self.overlay, self.now, self.started)

    def read(self, path: str) -> bytes | None:
        return self.fs.read(path)

    def is_dir(self, path: str) -> bool:
        return self.fs.is_dir(path.rstrip("/") or "/")

    def children(self, path: str) -> list[str]:
        return self.fs.children(path.rstrip("/") or "/")


def _create_problem(err: FsError) -> str:
    """Why ash cannot open a redirection's file, in its words."""
    text = str(err)
    return "nonexistent directory" if text == "No such file or directory" else text


class Streams:
    """A command's standard streams: stdin as an async source, stdout/stderr as async sinks."""

    def __init__(self, read: Callable[[], Awaitable[bytes | None]],
                 out: Callable[[bytes], Awaitable[None]], err: Callable[[bytes], Awaitable[None]]) -> None:
        self._read = read
        self._out = out
        self._err = err

    async def read(self) -> bytes | None:
        return await self._read()

    async def read_all(self) -> bytes:
        parts = []
        while (chunk := await self._read()) is not None:
            parts.append(chunk)
        return b"".join(parts)

    async def out(self, text: str | bytes) -> None:
        await self._out(text.encode() if isinstance(text, str) else text)

    async def err(self, text: str | bytes) -> None:
        await self._err(text.encode() if isinstance(text, str) else text)

    def with_(self, read: Callable[[], Awaitable[bytes | None]] | None = None,
              out: Callable[[bytes], Awaitable[None]] | None = None,
              err: Callable[[bytes], Awaitable[None]] | None = None) -> Streams:
        return Streams(read or self._read, out or self._out, err or self._err)


async def _nothing() -> bytes | None:
    return None


async def _discard(data: bytes) -> None:
    return None


def _buffer_reader(data: bytes) -> Callable[[], Awaitable[bytes | None]]:
    chunks = [data] if data else []

    async def read() -> bytes | None:
        return chunks.pop(0) if chunks else None
    return read


# --------------------------------------------------------------------------- the shell

Builtin = Callable[["Shell", list[str], Streams], Awaitable[int]]


class Shell:
    """One ``sh`` process: its variables, last status and working directory."""

    def __init__(self, machine: Machine, env: dict[str, str] | None = None, name: str = "sh") -> None:
        self.m = machine
        self.vars = dict(env if env is not None else machine.env)
        self.status = 0
        self.cwd = "/"
        self.name = name
        #: Variables made environment variables by ``export`` (the machine's own always are).
        self.exported: set[str] = set()
        self._err_sink: Callable[[bytes], Awaitable[None]] = _discard

    def environ(self) -> dict[str, str]:
        """What a child process gets: the environment and exported variables, as they are now."""
        return {k: v for k, v in self.vars.items() if k in self.m.env or k in self.exported}

    def _value(self, name: str) -> str:
        special = {"?": str(self.status), "$": "1", "#": "0", "0": self.name}
        return special[name] if name in special else self.vars.get(name, "")

    async def _substitute(self, script: str) -> str:
        """``$(script)``: its output, trailing newlines removed, run in a subshell."""
        out: list[bytes] = []
        size = 0

        async def collect(chunk: bytes) -> None:
            nonlocal size
            size += len(chunk)
            if size > PIPE_LIMIT:
                raise PipeFull(out)
            out.append(chunk)
        child = Shell(self.m, dict(self.vars), self.name)
        child.cwd, child.exported = self.cwd, set(self.exported)
        try:
            self.status = await child.run_script(script, Streams(_nothing, collect, self._err_sink))
        except ShellExit as done:
            self.status = done.code
        except PipeFull as full:
            if full.pipe is not out:
                raise
            self.status = 141
        return b"".join(out).decode(errors="replace").rstrip("\n")

    async def expand(self, word: Word) -> str:
        """A word as one string (assignments, redirection targets, case words)."""
        parts = []
        for kind, value in word:
            if kind == "lit":
                parts.append(value)
            elif kind in ("var", "qvar"):
                parts.append(self._value(value))
            elif kind == "arith":
                parts.append(self._arith(value))
            else:
                parts.append(await self._substitute(value))
        return "".join(parts)

    def _arith(self, expression: str) -> str:
        """``$((...))``: integer arithmetic over numbers and variables; "0" for what it cannot read."""
        text = re.sub(r"\$?([A-Za-z_][A-Za-z0-9_]*)", lambda m: self._value(m.group(1)) or "0", expression)
        value = arithmetic(text)
        return str(value) if value is not None else "0"

    async def fields(self, word: Word) -> list[str]:
        """A word as the fields it becomes: unquoted expansions are split on blanks."""
        out: list[str] = []
        current: str | None = None
        for kind, value in word:
            if kind in ("var", "cmd"):
                text = self._value(value) if kind == "var" else await self._substitute(value)
                pieces = text.split()
                if not pieces:
                    continue
                if text[:1].isspace() and current is not None:
                    out.append(current)
                    current = None
                current = (current or "") + pieces[0]
                for piece in pieces[1:]:
                    out.append(current)
                    current = piece
                if text[-1:].isspace():
                    out.append(current)
                    current = None
            else:
                text = value if kind == "lit" else (self._value(value) if kind == "qvar" else self._arith(value)
                                                    if kind == "arith" else await self._substitute(value))
                current = (current or "") + text
        if current is not None:
            out.append(current)
        return out

    def path(self, name: str) -> str:
        """An absolute, normalised path for ``name`` relative to the working directory."""
        full = name if name.startswith("/") else f"{self.cwd.rstrip('/')}/{name}"
        parts: list[str] = []
        for part in full.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        return "/" + "/".join(parts)

    async def run_script(self, script: str, io: Streams) -> int:
        """Run ``script``; ShellExit propagates to the caller (who ends this shell)."""
        try:
            program = parse(script)
        except ParseError as err:
            await io.err(f"{self.name}: {err}\n")
            self.status = 2
            return 2
        return await self.run_list(program, io)

    async def run_list(self, program: Script, io: Streams) -> int:
        self._err_sink = io._err
        for joiner, pipeline in program:
            if (joiner == "&&" and self.status != 0) or (joiner == "||" and self.status == 0):
                continue
            self.status = await self._pipeline(pipeline, io)
        return self.status

    async def _compound(self, command: Command, io: Streams) -> int:
        """for, while, until and if; loops yield to the event loop every round."""
        if command.kind == "for":
            items = [f for w in command.items for f in await self.fields(w)]
            code = 0
            for item in items:
                self.vars[command.var] = item
                code = await self.run_list(command.parts[0], io)
                await asyncio.sleep(0)
            return code
        if command.kind in ("while", "until"):
            code = 0
            while True:
                ok = await self.run_list(command.parts[0], io) == 0
                await asyncio.sleep(0)
                if ok != (command.kind == "while"):
                    return code
                code = await self.run_list(command.parts[1], io)
        parts = command.parts
        for index in range(0, len(parts) - 1, 2):
            if await self.run_list(parts[index], io) == 0:
                return await self.run_list(parts[index + 1], io)
        return await self.run_list(parts[-1], io) if len(parts) % 2 else 0

    async def _pipeline(self, commands: list[Command], io: Streams) -> int:
        """One command, or stages running side by side joined by pipes (a stage whose reader has
        ended stops, as SIGPIPE stops it); the status is the last stage's."""
        if len(commands) == 1:
            return await self._command(commands[0], io)
        pipes = [Pipe() for _ in commands[1:]]
        stages = []
        for index, command in enumerate(commands):
            source = pipes[index - 1] if index > 0 else None
            sink = pipes[index] if index < len(pipes) else None
            streams = io.with_(read=source.read if source else None, out=sink.write if sink else None)
            stages.append(asyncio.ensure_future(self._stage(command, streams, source, sink)))
        try:
            codes = await asyncio.gather(*stages)
        finally:
            for stage in stages:
                stage.cancel()
        return codes[-1]

    async def _stage(self, command: Command, io: Streams, source: Pipe | None, sink: Pipe | None) -> int:
        try:
            return await self._command(command, io)
        except PipeFull as full:
            if full.pipe is not sink:
                raise
            return 141
        except ShellExit as done:  # a stage is a subshell: its exit ends only itself
            return done.code
        finally:
            if sink is not None:
                sink.close_write()
            if source is not None:
                source.close_read()

    async def _command(self, command: Command, io: Streams) -> int:
        if command.kind != "simple":
            return await self._compound(command, io)
        raw = list(command.words)
        assignments = []
        while raw and raw[0] and raw[0][0][0] == "lit" and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", raw[0][0][1]):
            name, _, rest = raw[0][0][1].partition("=")
            assignments.append((name, await self.expand([("lit", rest), *raw[0][1:]])))
            raw.pop(0)
        words = [f for w in raw for f in await self.fields(w)]
        if not words:
            for name, value in assignments:
                self.vars[name] = value
            return 0
        writes: dict[str, tuple[str, list[bytes]]] = {}
        for op, target in command.redirects:
            path = await self.expand(target) if target is not None else ""
            if op == "2>&1":
                io = io.with_(err=io._out)
            elif op in ("1>&2", ">&2"):
                io = io.with_(out=io._err)
            elif op == "<":
                content = self.m.read(self.path(path))
                if content is None:
                    await io.err(f"{self.name}: can't open {path}: no such file\n")
                    return 1
                io = io.with_(read=_buffer_reader(content))
            elif path == "/dev/null":
                io = io.with_(out=_discard) if op in (">", ">>") else io.with_(err=_discard)
            else:
                full = self.path(path)
                try:
                    self.m.fs.write(full, b"", append=op == ">>")
                except FsError as err:
                    await io.err(f"{self.name}: can't create {path}: {_create_problem(err)}\n")
                    return 1
                sink: list[bytes] = []
                writes[full] = (op, sink)
                room = [self.m.fs.free()]

                async def write(chunk: bytes, sink: list[bytes] = sink, room: list[int] = room) -> None:
                    if room[0] >= 0:  # past the layer's room the write fails anyway: nothing more is kept
                        sink.append(chunk)
                        room[0] -= len(chunk)
                io = io.with_(out=write) if op in (">", ">>") else io.with_(err=write)
        saved = dict(self.vars)
        for name, value in assignments:
            self.vars[name] = value
        code = 0
        try:
            code = await self.invoke(words, io)
        finally:
            if assignments:
                self.vars = {**saved, **{k: v for k, v in self.vars.items() if k not in dict(assignments)}}
            for full, (op, sink) in writes.items():
                try:
                    self.m.fs.write(full, b"".join(sink), append=True)
                except FsError as err:
                    await io.err(f"{self.name}: write error: {err}\n")
                    code = 1
        return code

    async def invoke(self, argv: list[str], io: Streams) -> int:
        name = argv[0].rsplit("/", 1)[-1] if argv[0].startswith("/") else argv[0]
        builtin = COMMANDS.get(name)
        if builtin is None or (name in self.m.missing and name not in SPECIAL):
            await io.err(f"{self.name}: {argv[0]}: not found\n")
            return 127
        return await builtin(self, argv, io)

    async def interactive(self, io: Streams, tty: bool) -> int:
        """``sh`` reading its commands from stdin: line by line as they arrive (an unfinished ``for``,
        ``while`` or ``if`` waits for more), with a prompt, echo and ^C on a terminal."""
        term = Terminal(io) if tty else None
        pending = b""
        script = ""
        try:
            while True:
                if term is not None:
                    line = await term.readline(PROMPT if not script else "> ")
                    if line is None:
                        await io.out(b"exit\r\n")
                        return self.status
                    script = await self._feed(script + line + "\n", term)
                    continue
                chunk = await io.read()
                if chunk is None:
                    if (script + pending.decode(errors="replace")).strip():
                        await self.run_script(script + pending.decode(errors="replace"), io)
                    return self.status
                pending += chunk
                while b"\n" in pending:
                    line_bytes, pending = pending.split(b"\n", 1)
                    script = await self._feed(script + line_bytes.decode(errors="replace") + "\n", io)
        except ShellExit as done:
            return done.code

    async def _feed(self, text: str, where: Streams | Terminal) -> str:
        """Run ``text`` if it is complete; otherwise keep it for the next line."""
        try:
            parse(text)
        except ParseError as err:
            if err.incomplete:
                return text
        if isinstance(where, Terminal):
            self.status = await where.run(self.run_script(text, where.streams))
        else:
            await self.run_script(text, where)
        return ""


class Terminal:
    """The line discipline of the pty ``kubectl exec -t`` gets: echo, erase, ^C, ^D, CRLF output."""

    def __init__(self, io: Streams) -> None:
        self.io = io
        self._buffer = b""

        async def out(data: bytes) -> None:
            await io._out(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        self.streams = io.with_(read=self._stdin_line, out=out, err=out)

    async def _stdin_line(self) -> bytes | None:
        return None  # a command run from the prompt reads no terminal input here

    async def run(self, work: Awaitable[int]) -> int:
        """Run a command line; a ^C typed meanwhile interrupts it (status 130), other keys wait."""
        task = asyncio.ensure_future(work)
        while not task.done():
            reader = asyncio.ensure_future(self.io.read())
            done, _ = await asyncio.wait({task, reader}, return_when=asyncio.FIRST_COMPLETED)
            if reader not in done:
                reader.cancel()
                break
            chunk = reader.result()
            if task.done():
                self._buffer += chunk or b""
            elif chunk is None:
                await asyncio.wait({task})
            elif b"\x03" in chunk:
                task.cancel()
                self._buffer += chunk.split(b"\x03", 1)[1]
                await self.io.out(b"^C\r\n")
            else:
                self._buffer += chunk
        try:
            return task.result()
        except asyncio.CancelledError:
            return 130

    async def readline(self, prompt: str) -> str | None:
        await self.io.out(prompt)
        line = bytearray()
        while True:
            if not self._buffer:
                chunk = await self.io.read()
                if chunk is None:
                    return None
                self._buffer = chunk
            byte, self._buffer = self._buffer[:1], self._buffer[1:]
            if byte in (b"\r", b"\n"):
                await self.io.out(b"\r\n")
                return line.decode(errors="replace")
            if byte in (b"\x7f", b"\x08"):
                if line:
                    line.pop()
                    await self.io.out(b"\x08 \x08")
            elif byte == b"\x03":
                await self.io.out(b"^C\r\n" + prompt.encode())
                line.clear()
            elif byte == b"\x04":
                if not line:
                    return None
            elif byte == b"\x1b":
                self._buffer = re.sub(rb"^\[[0-9;]*[A-Za-z~]", b"", self._buffer)  # arrow keys: ignored
            elif byte >= b" ":
                line += byte
                await self.io.out(byte)


# --------------------------------------------------------------------------- the commands


async def _sh(sh: Shell, argv: list[str], io: Streams) -> int:
    child = Shell(sh.m, sh.environ(), name=argv[0].rsplit("/", 1)[-1])
    child.cwd = sh.cwd
    args = argv[1:]
    while args and args[0].startswith("-") and args[0] != "-c" and args[0] not in ("-", "--"):
        args = args[1:]  # -e, -x, -i, -l: accepted
    if args and args[0] == "-c":
        if len(args) < 2:
            await io.err(f"{child.name}: -c requires an argument\n")
            return 2
        try:
            return await child.run_script(args[1], io)
        except ShellExit as done:
            return done.code
    if args and args[0] not in ("-", "--"):
        content = sh.m.read(sh.path(args[0]))
        if content is None:
            await io.err(f"{child.name}: can't open '{args[0]}': No such file or directory\n")
            return 2
        try:
            return await child.run_script(content.decode(errors="replace"), io)
        except ShellExit as done:
            return done.code
    return await child.interactive(io, tty=False)


async def _exit(sh: Shell, argv: list[str], io: Streams) -> int:
    code = sh.status
    if len(argv) > 1:
        if not re.fullmatch(r"-?\d+", argv[1]):
            await io.err(f"{sh.name}: exit: Illegal number: {argv[1]}\n")
            code = 2
        else:
            code = int(argv[1]) % 256
    raise ShellExit(code)


async def _true(sh: Shell, argv: list[str], io: Streams) -> int:
    return 0


async def _false(sh: Shell, argv: list[str], io: Streams) -> int:
    return 1


def _unescape(text: str) -> str:
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


async def _echo(sh: Shell, argv: list[str], io: Streams) -> int:
    args = argv[1:]
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or escapes
        args = args[1:]
    text = " ".join(args)
    await io.out((_unescape(text) if escapes else text) + ("\n" if newline else ""))
    return 0


async def _printf(sh: Shell, argv: list[str], io: Streams) -> int:
    if len(argv) < 2:
        await io.err("printf: usage: printf format [arguments]\n")
        return 2
    fmt, args = _unescape(argv[1]), argv[2:]
    out = []
    while True:
        pieces = re.split(r"(%[-0-9.]*[sdc%])", fmt)
        for piece in pieces:
            if piece == "%%":
                out.append("%")
            elif re.fullmatch(r"%[-0-9.]*[sdc]", piece):
                value = args.pop(0) if args else ""
                spec = piece[:-1] + ("s" if piece[-1] in "sc" else "d")
                out.append(spec % (int(value or 0) if piece[-1] == "d" and re.fullmatch(r"-?\d+", value or "0")
                                   else value))
            else:
                out.append(piece)
        if not args or "%" not in fmt:
            break
    await io.out("".join(out))
    return 0


async def _env(sh: Shell, argv: list[str], io: Streams) -> int:
    args = argv[1:]
    env = sh.environ()
    if argv[0] == "printenv":
        if not args:
            await io.out("".join(f"{k}={v}\n" for k, v in env.items()))
            return 0
        found = [env[a] for a in args if a in env]
        await io.out("".join(f"{v}\n" for v in found))
        return 0 if len(found) == len(args) else 1
    while args and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", args[0], re.S):
        key, value = args.pop(0).split("=", 1)
        env[key] = value
    if args:
        child = Shell(sh.m, env)
        return await child.invoke(args, io)
    await io.out("".join(f"{k}={v}\n" for k, v in env.items()))
    return 0


async def _export(sh: Shell, argv: list[str], io: Streams) -> int:
    for arg in argv[1:]:
        name, eq, value = arg.partition("=")
        if eq:
            sh.vars[name] = value
        sh.exported.add(name)
    return 0


async def _unset(sh: Shell, argv: list[str], io: Streams) -> int:
    for name in argv[1:]:
        sh.vars.pop(name, None)
    return 0


async def _hostname(sh: Shell, argv: list[str], io: Streams) -> int:
    await io.out(sh.m.hostname + "\n")
    return 0


async def _cat(sh: Shell, argv: list[str], io: Streams) -> int:
    files = [a for a in argv[1:] if a != "-"] if len(argv) > 1 else []
    if not files:
        while (chunk := await io.read()) is not None:
            await io.out(chunk)
        return 0
    code = 0
    for name in files:
        full = sh.path(name)
        content = sh.m.read(full)
        if content is None:
            if sh.m.is_dir(full):
                await io.err("cat: read error: Is a directory\n")
            else:
                await io.err(f"cat: can't open '{name}': No such file or directory\n")
            code = 1
            continue
        await io.out(content)
    return code


async def _ls(sh: Shell, argv: list[str], io: Streams) -> int:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and len(a) > 1)
    paths = [a for a in argv[1:] if not a.startswith("-") or a == "-"] or ["."]
    show_all = "a" in flags or "A" in flags
    long = "l" in flags
    one_per_line = "1" in flags or long
    code = 0
    fs = sh.m.fs
    for index, name in enumerate(paths):
        full = sh.path(name)
        if fs.read(full) is not None or ("d" in flags and fs.is_dir(full)):
            await io.out((_long_entry(sh, full, name) if long else name) + "\n")
            continue
        if not fs.is_dir(full):
            await io.err(f"ls: {name}: No such file or directory\n")
            code = 1
            continue
        entries = [e for e in fs.children(full) if show_all or not e.startswith(".")]
        if "a" in flags:
            entries = [".", "..", *entries]
        if len(paths) > 1:
            await io.out(("\n" if index else "") + f"{name}:\n")
        if long:
            await io.out(f"total {len(entries)}\n")
            entries = [_long_entry(sh, sh.path(f"{full}/{e}"), e) for e in entries]
        if entries:
            await io.out(("\n".join(entries) if one_per_line else "  ".join(entries)) + "\n")
    return code


def _long_entry(sh: Shell, full: str, shown: str) -> str:
    """One line of ``ls -l`` as busybox prints it (everything belongs to root)."""
    fs = sh.m.fs
    content = fs.read(full)
    mode = "drwxr-xr-x" if content is None else ("-r--r--r--" if fs.read_only_at(full) else "-rw-r--r--")
    size = len(content) if content is not None else 4096
    when = datetime.fromtimestamp(fs.mtime(full), tz=timezone.utc)
    return f"{mode} {2 if content is None else 1:>4} root     root     {size:>9} {_MONTHS[when.month - 1]} " \
           f"{when.day:2d} {when:%H:%M} {shown}"


async def _pwd(sh: Shell, argv: list[str], io: Streams) -> int:
    await io.out(sh.cwd + "\n")
    return 0


async def _cd(sh: Shell, argv: list[str], io: Streams) -> int:
    target = sh.path(argv[1] if len(argv) > 1 else sh.vars.get("HOME", "/"))
    if not sh.m.is_dir(target):
        await io.err(f"{sh.name}: cd: can't cd to {argv[1]}: No such file or directory\n")
        return 2
    sh.cwd = target
    return 0


_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


async def _date(sh: Shell, argv: list[str], io: Streams) -> int:
    now = datetime.fromtimestamp(sh.m.now(), tz=timezone.utc)
    fmt = next((a[1:] for a in argv[1:] if a.startswith("+")), None)
    if fmt is not None:
        text = fmt.replace("%s", str(int(sh.m.now())))
        await io.out(now.strftime(text) + "\n")
        return 0
    await io.out(f"{_WEEKDAYS[now.weekday()]} {_MONTHS[now.month - 1]} {now.day:2d} "
                 f"{now:%H:%M:%S} UTC {now.year}\n")
    return 0


def sleep_seconds(arg: str) -> float | None:
    """``sleep``'s argument in seconds (``30``, ``1.5``, ``2m``, ``infinity``); None when unreadable."""
    if arg == "infinity":
        return float("inf")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", arg)
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


async def _sleep(sh: Shell, argv: list[str], io: Streams) -> int:
    if len(argv) < 2:
        await io.err("sleep: missing operand\n")
        return 1
    total = 0.0
    for arg in argv[1:]:
        seconds = sleep_seconds(arg)
        if seconds is None:
            await io.err(f"sleep: invalid number '{arg}'\n")
            return 1
        total += seconds
    if total == float("inf"):
        await asyncio.Event().wait()
    await sh.m.sleep(total)
    return 0


async def _whoami(sh: Shell, argv: list[str], io: Streams) -> int:
    await io.out("root\n")
    return 0


async def _id(sh: Shell, argv: list[str], io: Streams) -> int:
    await io.out("uid=0(root) gid=0(root) groups=0(root),10(wheel)\n")
    return 0


async def _uname(sh: Shell, argv: list[str], io: Streams) -> int:
    if "-a" in argv:
        await io.out(f"Linux {sh.m.hostname} 6.1.0-kconsole #1 SMP x86_64 GNU/Linux\n")
    elif "-r" in argv:
        await io.out("6.1.0-kconsole\n")
    else:
        await io.out("Linux\n")
    return 0


async def _ps(sh: Shell, argv: list[str], io: Streams) -> int:
    await io.out("PID   USER     TIME  COMMAND\n"
                 f"    1 root      0:00 {sh.m.pid1}\n"
                 f"    7 root      0:00 {sh.name}\n"
                 f"   13 root      0:00 ps\n")
    return 0


async def _lines_of(sh: Shell, files: list[str], io: Streams, tool: str) -> list[str] | None:
    if not files:
        data = await io.read_all()
    else:
        parts = []
        for name in files:
            content = sh.m.read(sh.path(name))
            if content is None:
                await io.err(f"{tool}: {name}: No such file or directory\n")
                return None
            parts.append(content)
        data = b"".join(parts)
    text = data.decode(errors="replace")
    return text.splitlines()


async def _grep(sh: Shell, argv: list[str], io: Streams) -> int:
    args = argv[1:]
    flags = ""
    while args and args[0].startswith("-") and len(args[0]) > 1:
        flags += args.pop(0)[1:]
    if not args:
        await io.err("Usage: grep [-icvoqF] PATTERN [FILE]...\n")
        return 2
    pattern, files = args[0], args[1:]
    try:
        regex = re.compile(pattern if "F" not in flags else re.escape(pattern), re.I if "i" in flags else 0)
    except re.error:
        regex = re.compile(re.escape(pattern), re.I if "i" in flags else 0)
    lines = await _lines_of(sh, files, io, "grep")
    if lines is None:
        return 2
    hits = [ln for ln in lines if bool(regex.search(ln)) != ("v" in flags)]
    if "c" in flags:
        await io.out(f"{len(hits)}\n")
    elif "o" in flags and "v" not in flags:
        await io.out("".join(m.group(0) + "\n" for ln in hits for m in regex.finditer(ln) if m.group(0)))
    elif "q" not in flags:
        await io.out("".join(ln + "\n" for ln in hits))
    return 0 if hits else 1


def _count_flag(args: list[str], default: int) -> tuple[int, list[str]]:
    count, rest = default, []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-n" and i + 1 < len(args):
            count = int(args[i + 1]) if args[i + 1].lstrip("-").isdigit() else default
            i += 2
            continue
        if re.fullmatch(r"-n?\d+", arg):
            count = int(arg.lstrip("-n"))
        else:
            rest.append(arg)
        i += 1
    return count, rest


def _byte_count(args: list[str]) -> tuple[str, list[str]] | None:
    """``-c N``, ``-cN``, ``-c +N``, ``-c+N``: (the count as written, the other arguments); None without ``-c``."""
    for index, arg in enumerate(args):
        if arg == "-c" and index + 1 < len(args):
            return args[index + 1], args[:index] + args[index + 2:]
        if arg.startswith("-c") and len(arg) > 2:
            return arg[2:], args[:index] + args[index + 1:]
    return None


async def _head_bytes(sh: Shell, tool: str, count: str, files: list[str], io: Streams) -> int:
    """``head -c N`` (the first N bytes), ``tail -c N`` (the last N), ``tail -c +N`` (from byte N on):
    streamed, so ``tar cf - X | tail -c+N`` (kubectl cp's retry) passes an archive through."""
    if not re.fullmatch(r"\+?\d+", count):
        await io.err(f"{tool}: invalid number '{count}'\n")
        return 1
    number = int(count)
    if files:
        data = b"".join(sh.m.read(sh.path(f)) or b"" for f in files)
        source: Callable[[], Awaitable[bytes | None]] = _buffer_reader(data)
    else:
        source = io.read
    if tool == "tail" and not count.startswith("+"):
        kept = b""
        while (chunk := await source()) is not None:
            kept = (kept + chunk)[-number:] if number else b""
        await io.out(kept)
        return 0
    skip = max(0, number - 1) if tool == "tail" else 0
    left = number if tool == "head" else -1
    while left != 0 and (chunk := await source()) is not None:
        if skip:
            chunk, skip = chunk[skip:], max(0, skip - len(chunk))
        if left > 0:
            chunk = chunk[:left]
            left -= len(chunk)
        if chunk:
            await io.out(chunk)
    return 0


async def _head(sh: Shell, argv: list[str], io: Streams) -> int:
    in_bytes = _byte_count(argv[1:])
    if in_bytes is not None:
        return await _head_bytes(sh, argv[0], in_bytes[0], in_bytes[1], io)
    count, files = _count_flag(argv[1:], 10)
    if argv[0] == "head" and not files:  # stops reading once it has its lines, as head does
        buffered = b""
        while buffered.count(b"\n") < count and (chunk := await io.read()) is not None:
            buffered += chunk
        await io.out(b"".join(line + b"\n" for line in buffered.split(b"\n")[:count] if buffered))
        return 0
    lines = await _lines_of(sh, files, io, argv[0])
    if lines is None:
        return 1
    chosen = lines[:count] if argv[0] == "head" else (lines[-count:] if count else [])
    await io.out("".join(ln + "\n" for ln in chosen))
    return 0


async def _sort(sh: Shell, argv: list[str], io: Streams) -> int:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and len(a) > 1)
    lines = await _lines_of(sh, [a for a in argv[1:] if not a.startswith("-")], io, "sort")
    if lines is None:
        return 2

    def key(line: str) -> tuple[float, str]:
        m = re.match(r"\s*(-?\d+(?:\.\d+)?)", line)
        return (float(m.group(1)) if m else 0.0, line) if "n" in flags else (0.0, line)
    ordered = sorted(lines, key=key, reverse="r" in flags)
    if "u" in flags:
        ordered = list(dict.fromkeys(ordered))
    await io.out("".join(f"{line}\n" for line in ordered))
    return 0


async def _uniq(sh: Shell, argv: list[str], io: Streams) -> int:
    lines = await _lines_of(sh, [a for a in argv[1:] if not a.startswith("-")], io, "uniq")
    if lines is None:
        return 1
    runs: list[list[str | int]] = []
    for line in lines:
        if runs and runs[-1][0] == line:
            runs[-1][1] = int(runs[-1][1]) + 1
        else:
            runs.append([line, 1])
    count = "-c" in argv
    await io.out("".join(f"{n:>7} {line}\n" if count else f"{line}\n" for line, n in runs))
    return 0


async def _wc(sh: Shell, argv: list[str], io: Streams) -> int:
    flags, files = filecmds.split_args(argv)
    shown = [c for c in "lwc" if c in flags] or ["l", "w", "c"]
    rows: list[tuple[list[int], str]] = []
    for name in files or ["-"]:
        data = await io.read_all() if name == "-" else sh.m.read(sh.path(name))
        if data is None:
            await io.err(f"wc: {name}: No such file or directory\n")
            return 1
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        rows.append(([counts[c] for c in shown], name if files else ""))
    if len(rows) > 1:
        rows.append(([sum(r[0][i] for r in rows) for i in range(len(shown))], "total"))
    # busybox prints one lone count bare, several in 7-wide columns; a file's name follows.
    width = 0 if len(shown) == 1 else 7
    await io.out("".join(" ".join(f"{n:>{width}}" for n in counts) + (f" {name}" if name else "") + "\n"
                         for counts, name in rows))
    return 0


async def _gzip(sh: Shell, argv: list[str], io: Streams) -> int:
    """gzip, gunzip and zcat: a pipe or ``-c`` to stdout, a file in place in the writable layer."""
    tool = argv[0].rsplit("/", 1)[-1]
    flags, files = filecmds.split_args(argv)
    decompress = tool in ("gunzip", "zcat") or "d" in flags
    to_stdout = tool == "zcat" or "c" in flags
    for name in files or ["-"]:
        path = sh.path(name)
        data = await io.read_all() if name == "-" else sh.m.read(path)
        if data is None:
            await io.err(f"{tool}: {name}: No such file or directory\n")
            return 1
        if decompress:
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error):
                await io.err(f"{tool}: invalid magic\n")
                return 1
        else:
            # As gzip -6 on Unix writes it: no name, no time, OS byte 3.
            packed = bytearray(gzip.compress(data, compresslevel=6, mtime=0))
            packed[9] = 3
            data = bytes(packed)
        if name == "-" or to_stdout:
            await io.out(data)
            continue
        if decompress and not path.endswith(".gz"):
            await io.err(f"{tool}: {name}: unknown suffix - ignored\n")
            return 1
        try:
            sh.m.fs.write(path[:-3] if decompress else path + ".gz", data)
            sh.m.fs.remove(path)
        except FsError as err:
            await io.err(f"{tool}: {name}: {err}\n")
            return 1
    return 0


async def _nslookup(sh: Shell, argv: list[str], io: Streams) -> int:
    names = [a for a in argv[1:] if not a.startswith("-")]
    if not names:
        await io.err("Usage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n")
        return 1
    server = sh.m.nameserver
    await io.out(f"Server:\t\t{server}\nAddress:\t{server}:53\n\n")
    found = sh.m.resolve(names[0])
    if found is None:
        await io.out(f"** server can't find {names[0]}: NXDOMAIN\n\n")
        return 1
    fqdn, addresses = found
    for address in addresses:
        await io.out(f"Name:\t{fqdn}\nAddress: {address}\n")
    await io.out("\n")
    return 0


_URL = re.compile(r"^(?:(https?)://)?([^/:?#\s]+)(?::(\d+))?([^\s]*)$")


def _target(sh: Shell, url: str) -> tuple[str, str, int, str, str] | None:
    """(scheme, host, port, path, address) of a URL; address "" when the name does not resolve."""
    m = _URL.match(url)
    if not m:
        return None
    scheme, host, port, path = m.group(1) or "http", m.group(2), m.group(3), m.group(4) or "/"
    if not path.startswith("/"):
        path = "/" + path
    number = int(port) if port else (443 if scheme == "https" else 80)
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", host):
        return scheme, host, number, path, host
    if host == "localhost":
        return scheme, host, number, path, "127.0.0.1"
    found = sh.m.resolve(host)
    return scheme, host, number, path, (found[1][0] if found and found[1] else "")


async def _curl(sh: Shell, argv: list[str], io: Streams) -> int:
    args = argv[1:]
    flags, url, output = "", "", None
    limit = CONNECT_TIMEOUT
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "--output") and i + 1 < len(args):
            output = args[i + 1]
            i += 2
            continue
        if arg in ("-m", "--max-time", "--connect-timeout") and i + 1 < len(args):
            limit = sleep_seconds(args[i + 1]) or limit
            i += 2
            continue
        if arg in ("-H", "--header", "-X", "--request") and i + 1 < len(args):
            i += 2
            continue
        if arg.startswith("--"):
            flags += {"--silent": "s", "--verbose": "v", "--head": "I", "--include": "i", "--fail": "f",
                      "--location": "L", "--show-error": "S"}.get(arg, "")
        elif arg.startswith("-") and len(arg) > 1:
            flags += arg[1:]
        else:
            url = arg
        i += 1
    if not url:
        await io.err("curl: try 'curl --help' or 'curl --manual' for more information\n")
        return 2
    target = _target(sh, url)
    if target is None:
        await io.err("curl: (3) URL rejected: Malformed input to a URL function\n")
        return 3
    scheme, host, port, path, address = target
    loud = "s" not in flags or "S" in flags
    if not address:
        if loud:
            await io.err(f"curl: (6) Could not resolve host: {host}\n")
        return 6
    verbose = "v" in flags
    if verbose:
        await io.err(f"*   Trying {address}:{port}...\n")
    answer = sh.m.http(address, port, path)
    if verbose and answer.route:
        await io.err(f"* {answer.route}\n")
    if answer.error == "timeout":
        await sh.m.sleep(limit)
        if loud:
            await io.err(f"curl: (28) Failed to connect to {host} port {port} after {int(limit * 1000)} ms: "
                         "Connection timed out\n")
        return 28
    if answer.error or scheme == "https":
        if scheme == "https" and not answer.error:
            if loud:
                await io.err("curl: (35) OpenSSL/3.0.15: error:0A00010B:SSL routines::wrong version number\n")
            return 35
        if loud:
            await io.err(f"curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server\n")
        return 7
    if verbose:
        await io.err(f"* Connected to {host} ({address}) port {port}\n> GET {path} HTTP/1.1\n> Host: {host}"
                     f"{'' if port == 80 else f':{port}'}\n> User-Agent: curl/7.88.1\n> Accept: */*\n>\n"
                     f"< HTTP/1.1 {answer.status} {answer.reason}\n"
                     + "".join(f"< {k}: {v}\n" for k, v in answer.headers) + "<\n")
    head = f"HTTP/1.1 {answer.status} {answer.reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers) \
        + "\r\n"
    if "f" in flags and answer.status >= 400:
        if loud:
            await io.err(f"curl: (22) The requested URL returned error: {answer.status}\n")
        return 22
    body = head.encode() if "I" in flags else ((head.encode() if "i" in flags else b"") + answer.body)
    if output is not None and output != "-":
        return await _save(sh, output, answer.body, io, "curl")
    await io.out(body)
    return 0


async def _save(sh: Shell, name: str, data: bytes, io: Streams, tool: str) -> int:
    if name == "/dev/null":
        return 0
    try:
        sh.m.fs.write(sh.path(name), data)
    except FsError as err:
        await io.err(f"{tool}: can't open '{name}': {err}\n")
        return 1
    return 0


async def _wget(sh: Shell, argv: list[str], io: Streams) -> int:
    args = argv[1:]
    quiet, output, headers, url = False, None, False, ""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-O", "-T", "--timeout") and i + 1 < len(args):
            if arg == "-O":
                output = args[i + 1]
            i += 2
            continue
        if arg.startswith("-") and not arg.startswith("--") and "O" in arg:
            letters, _, value = arg[1:].partition("O")
            quiet = quiet or "q" in letters
            headers = headers or "S" in letters
            if value:
                output = value
            elif i + 1 < len(args):
                output = args[i + 1]
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            quiet = quiet or "q" in arg
            headers = headers or "S" in arg
        else:
            url = arg
        i += 1
    if not url:
        await io.err("BusyBox v1.36.1 multi-call binary.\n\nUsage: wget [-cqS] [-O FILE] URL...\n")
        return 1
    target = _target(sh, url)
    if target is None:
        await io.err(f"wget: bad address '{url}'\n")
        return 1
    scheme, host, port, path, address = target
    if not address:
        await io.err(f"wget: bad address '{host}'\n")
        return 1
    if not quiet:
        await io.err(f"Connecting to {host}{'' if port == 80 else f':{port}'} ({address}:{port})\n")
    answer = sh.m.http(address, port, path)
    if answer.error:
        if answer.error == "timeout":
            await sh.m.sleep(CONNECT_TIMEOUT)
        await io.err(f"wget: can't connect to remote host ({address}): "
                     f"{'Connection refused' if answer.error == 'refused' else 'Connection timed out'}\n")
        return 1
    if headers:
        await io.err(f"  HTTP/1.1 {answer.status} {answer.reason}\n"
                     + "".join(f"  {k}: {v}\n" for k, v in answer.headers))
    if answer.status >= 400:
        await io.err(f"wget: server returned error: HTTP/1.1 {answer.status} {answer.reason}\n")
        return 1
    name = output if output is not None else (path.rstrip("/").rsplit("/", 1)[-1] or "index.html")
    if name == "-":
        await io.out(answer.body)
    else:
        code = await _save(sh, name, answer.body, io, "wget")
        if code:
            return code
        if not quiet:
            await io.err(f"saving to '{name}'\n{name}            100% |********************************| "
                         f"{len(answer.body):>5}  0:00:00 ETA\n'{name}' saved\n")
    return 0


async def _which(sh: Shell, argv: list[str], io: Streams) -> int:
    code = 0
    for name in argv[1:]:
        if name in COMMANDS and name not in sh.m.missing and name not in SPECIAL:
            await io.out(f"/bin/{name}\n")
        else:
            code = 1
    return code


_ARITH_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.FloorDiv: lambda a, b: a // b if b else None, ast.Div: lambda a, b: int(a / b) if b else None,
              ast.Mod: lambda a, b: a % b if b else None}
_ARITH_COMPARE = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
                  ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def arithmetic(text: str) -> int | None:
    """An integer expression (+ - * / % and comparisons, parentheses); None when it is not one."""
    if len(text) > 200:
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def walk(node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = walk(node.operand)
            return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_OPS:
            left, right = walk(node.left), walk(node.right)
            if left is None or right is None or abs(left) > 1 << 62 or abs(right) > 1 << 62:
                return None
            return _ARITH_OPS[type(node.op)](left, right)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _ARITH_COMPARE:
            left, right = walk(node.left), walk(node.comparators[0])
            if left is None or right is None:
                return None
            return int(_ARITH_COMPARE[type(node.ops[0])](left, right))
        return None
    return walk(tree)


async def _test(sh: Shell, argv: list[str], io: Streams) -> int:
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            await io.err("sh: missing ]\n")
            return 2
        args = args[:-1]
    negate = bool(args) and args[0] == "!"
    if negate:
        args = args[1:]
    result: bool
    if not args:
        result = False
    elif len(args) == 1:
        result = args[0] != ""
    elif len(args) == 2:
        op, value = args
        full = sh.path(value) if value else ""
        checks = {"-n": lambda: value != "", "-z": lambda: value == "",
                  "-e": lambda: sh.m.read(full) is not None or sh.m.is_dir(full),
                  "-f": lambda: sh.m.read(full) is not None, "-d": lambda: sh.m.is_dir(full),
                  "-s": lambda: bool(sh.m.read(full)), "-r": lambda: sh.m.read(full) is not None}
        if op not in checks:
            await io.err(f"sh: {op}: unknown operand\n")
            return 2
        result = checks[op]()
    elif len(args) == 3 and args[1] in ("=", "==", "!="):
        result = (args[0] == args[2]) != (args[1] == "!=")
    elif len(args) == 3 and args[1] in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
        try:
            a, b = int(args[0]), int(args[2])
        except ValueError:
            bad = args[0] if not re.fullmatch(r"-?\d+", args[0]) else args[2]
            await io.err(f"sh: {bad}: bad number\n")
            return 2
        result = {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[args[1]]
    else:
        await io.err("sh: syntax error: bad test expression\n")
        return 2
    return 0 if result != negate else 1


async def _seq(sh: Shell, argv: list[str], io: Streams) -> int:
    try:
        numbers = [int(a) for a in argv[1:]]
    except ValueError:
        await io.err(f"seq: invalid number '{next(a for a in argv[1:] if not re.fullmatch(r'-?[0-9]+', a))}'\n")
        return 1
    if not 1 <= len(numbers) <= 3:
        await io.err("Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n")
        return 1
    first, step, last = (1, 1, numbers[0]) if len(numbers) == 1 else (
        (numbers[0], 1, numbers[1]) if len(numbers) == 2 else tuple(numbers))
    if step == 0 or abs(last - first) // max(abs(step), 1) > 100_000:
        await io.err("seq: too many numbers\n")
        return 1
    await io.out("".join(f"{n}\n" for n in range(first, last + (1 if step > 0 else -1), step)))
    return 0


async def _expr(sh: Shell, argv: list[str], io: Streams) -> int:
    text = " ".join(argv[1:]).replace("\\*", "*")
    value = arithmetic(text.replace(" / ", " // ").replace(" = ", " == "))
    if value is None:
        if len(argv) == 2:
            await io.out(argv[1] + "\n")
            return 0 if argv[1] not in ("", "0") else 1
        await io.err("expr: syntax error\n")
        return 2
    await io.out(f"{value}\n")
    return 0 if value != 0 else 1


async def _uptime(sh: Shell, argv: list[str], io: Streams) -> int:
    now = datetime.fromtimestamp(sh.m.now(), tz=timezone.utc)
    up = int(max(0.0, sh.m.now() - sh.m.started))
    days, rest = divmod(up, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    span = (f"{days} day{'s' if days != 1 else ''}, " if days else "") + (f"{hours:2d}:{minutes:02d}" if hours
                                                                          else f"{minutes} min")
    await io.out(f" {now:%H:%M:%S} up {span},  load average: 0.00, 0.00, 0.00\n")
    return 0


#: One entry per command a container's shell knows (see the module docstring).
COMMANDS: dict[str, Builtin] = {
    "sh": _sh, "bash": _sh, "ash": _sh, "dash": _sh,
    "exit": _exit, "export": _export, "unset": _unset, "cd": _cd,
    "true": _true, ":": _true, "false": _false,
    "echo": _echo, "printf": _printf,
    "env": _env, "printenv": _env,
    "hostname": _hostname, "whoami": _whoami, "id": _id, "uname": _uname, "ps": _ps, "pwd": _pwd,
    "gzip": _gzip, "gunzip": _gzip, "zcat": _gzip,
    "cat": _cat, "ls": _ls, "grep": _grep, "head": _head, "tail": _head, "wc": _wc, "sort": _sort, "uniq": _uniq,
    "which": _which,
    "date": _date, "sleep": _sleep, "uptime": _uptime,
    "test": _test, "[": _test, "seq": _seq, "expr": _expr,
    "nslookup": _nslookup, "curl": _curl, "wget": _wget,
    "mkdir": filecmds.mkdir, "rm": filecmds.rm, "rmdir": filecmds.rmdir, "touch": filecmds.touch,
    "cp": filecmds.cp, "mv": filecmds.cp, "tar": tarcmd.tar, "df": filecmds.df,
}
#: Shell built-ins: every image with a shell has them.
SPECIAL = frozenset(("exit", "export", "unset", "cd", "true", ":", "false", "echo", "printf", "pwd", "test", "["))


def known(argv0: str, machine: Machine) -> bool:
    """Whether the image has ``argv0`` as a program (what the runtime can exec directly)."""
    name = argv0.rsplit("/", 1)[-1]
    if name in ("exit", "export", "unset", "cd", ":"):
        return False
    return name in COMMANDS and name not in machine.missing


async def run(machine: Machine, argv: list[str], io: Streams, tty: bool = False) -> int:
    """Run ``argv`` as the container's runtime execs it: a shell (its script or, without one, its
    standard input) or one command."""
    name = argv[0].rsplit("/", 1)[-1]
    sh = Shell(machine, name=name if name in SHELLS else "sh")
    if name in SHELLS and len(argv) == 1 or (name in SHELLS and argv[1:] in (["-i"], ["-l"], ["-il"])):
        return await sh.interactive(io, tty)
    target = Terminal(io).streams if tty else io
    try:
        return await sh.invoke(argv, target)
    except ShellExit as done:
        return done.code


def describe(argv: list[str]) -> str:
    """The command as Go's %v prints a []string (containerd's exit error)."""
    return "[" + " ".join(argv) + "]"


__all__ = ["COMMANDS", "HttpAnswer", "Machine", "SHELLS", "Shell", "ShellExit", "Streams", "describe", "known",
           "run", "sleep_seconds"]
