"""The container shell's commands over the container's filesystem (:mod:`kconsole.nodes.layer`):
``mkdir``, ``rm``, ``rmdir``, ``touch``, ``cp``, ``mv``, and ``df`` for what the writable layer holds
against its cap, worded as busybox words them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kconsole.nodes.layer import FsError, parent_of

if TYPE_CHECKING:
    from kconsole.nodes.shell import Shell, Streams


def split_args(argv: list[str]) -> tuple[str, list[str]]:
    """(flag letters, operands); ``--`` ends the flags."""
    flags, operands = "", []
    ended = False
    for arg in argv[1:]:
        if not ended and arg == "--":
            ended = True
        elif not ended and arg.startswith("-") and len(arg) > 1:
            flags += {"--parents": "p", "--recursive": "r", "--force": "f"}.get(arg, arg[1:])
        else:
            operands.append(arg)
    return flags, operands


async def _missing(io: Streams, tool: str) -> int:
    await io.err(f"BusyBox v1.36.1 multi-call binary.\n\nUsage: {tool} [OPTIONS] FILE...\n")
    return 1


async def mkdir(sh: Shell, argv: list[str], io: Streams) -> int:
    flags, operands = split_args(argv)
    if not operands:
        return await _missing(io, "mkdir")
    code = 0
    for name in operands:
        full = sh.path(name)
        try:
            if "p" in flags:
                chain = []
                path = full
                while not sh.m.fs.is_dir(path):
                    chain.append(path)
                    path = parent_of(path)
                for path in reversed(chain):
                    sh.m.fs.mkdir(path)
            else:
                sh.m.fs.mkdir(full)
        except FsError as err:
            await io.err(f"mkdir: can't create directory '{name}': {err}\n")
            code = 1
    return code


async def rm(sh: Shell, argv: list[str], io: Streams) -> int:
    flags, operands = split_args(argv)
    recursive, force = bool(set(flags) & set("rR")), "f" in flags
    if not operands and not force:
        return await _missing(io, "rm")
    code = 0
    for name in operands:
        full = sh.path(name)
        fs = sh.m.fs
        if not fs.exists(full):
            if not force:
                await io.err(f"rm: can't remove '{name}': No such file or directory\n")
                code = 1
            continue
        if fs.is_dir(full) and not recursive:
            await io.err(f"rm: '{name}' is a directory\n")
            code = 1
            continue
        for path in reversed(fs.walk(full)):
            try:
                fs.remove(path)
            except FsError as err:
                if str(err) != "Directory not empty":  # a child already said why
                    shown = name if path == full else path
                    await io.err(f"rm: can't remove '{shown}': {err}\n")
                code = 1
    return code


async def rmdir(sh: Shell, argv: list[str], io: Streams) -> int:
    _, operands = split_args(argv)
    if not operands:
        return await _missing(io, "rmdir")
    code = 0
    for name in operands:
        full = sh.path(name)
        try:
            if sh.m.fs.exists(full) and not sh.m.fs.is_dir(full):
                raise FsError("Not a directory")
            sh.m.fs.remove(full)
        except FsError as err:
            await io.err(f"rmdir: '{name}': {err}\n")
            code = 1
    return code


async def touch(sh: Shell, argv: list[str], io: Streams) -> int:
    _, operands = split_args(argv)
    if not operands:
        return await _missing(io, "touch")
    code = 0
    for name in operands:
        try:
            sh.m.fs.touch(sh.path(name))
        except FsError as err:
            await io.err(f"touch: {name}: {err}\n")
            code = 1
    return code


async def cp(sh: Shell, argv: list[str], io: Streams) -> int:
    """``cp SRC... DEST`` (``-r`` for directories); ``mv`` is a copy then a removal."""
    tool = argv[0].rsplit("/", 1)[-1]
    flags, operands = split_args(argv)
    if len(operands) < 2:
        return await _missing(io, tool)
    fs = sh.m.fs
    *sources, dest = operands
    dest_full = sh.path(dest)
    into = fs.is_dir(dest_full)
    if len(sources) > 1 and not into:
        await io.err(f"{tool}: '{dest}' is not a directory\n")
        return 1
    code = 0
    for name in sources:
        full = sh.path(name)
        if not fs.exists(full):
            await io.err(f"{tool}: can't stat '{name}': No such file or directory\n")
            code = 1
            continue
        if fs.is_dir(full) and tool == "cp" and not set(flags) & set("rRa"):
            await io.err(f"cp: omitting directory '{name}'\n")
            code = 1
            continue
        target = (dest_full.rstrip("/") + "/" + full.rsplit("/", 1)[-1]) if into else dest_full
        if target == full or target.startswith(full + "/"):
            await io.err(f"{tool}: can't copy a directory into itself\n")
            code = 1
            continue
        try:
            for path in fs.walk(full):
                copy = target + path[len(full):]
                content = fs.read(path)
                if content is None:
                    if not fs.is_dir(copy):
                        fs.mkdir(copy)
                else:
                    fs.write(copy, content)
            if tool == "mv":
                for path in reversed(fs.walk(full)):
                    fs.remove(path)
        except FsError as err:
            await io.err(f"{tool}: can't create '{dest}': {err}\n")
            code = 1
    return code


def _human(size: int) -> str:
    """busybox's ``-h`` sizes: 4.0K, 32.0M."""
    value = float(size)
    for unit in ("", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{value:.1f}{unit}" if unit else str(int(value))
        value /= 1024
    return str(size)


async def df(sh: Shell, argv: list[str], io: Streams) -> int:
    """The root filesystem is the writable layer: its cap is the size, what it holds is used."""
    layer = sh.m.fs.layer
    used, size = layer.used, layer.limit
    percent = -(-used * 100 // size) if size else 0
    if "-h" in argv[1:]:
        await io.out("Filesystem                Size      Used Available Use% Mounted on\n"
                     f"overlay              {_human(size):>9} {_human(used):>9} {_human(size - used):>9} "
                     f"{percent:>3}% /\n")
        return 0
    await io.out("Filesystem           1K-blocks      Used Available Use% Mounted on\n"
                 f"overlay              {size // 1024:>9} {-(-used // 1024):>9} {(size - used) // 1024:>9} "
                 f"{percent:>3}% /\n")
    return 0
