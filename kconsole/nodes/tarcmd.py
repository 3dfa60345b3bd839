"""``tar`` in a simulated container: real archives (Python's tarfile) over the container's filesystem
(:mod:`kconsole.nodes.layer`), which is what ``kubectl cp`` runs: ``tar cf - PATH`` to copy from a
pod, ``tar -xmf - -C DIR`` (``--no-same-permissions --no-same-owner`` with ``--no-preserve``) to
copy into one.

``c``, ``x`` and ``t`` with ``f`` (``-`` or a file), ``-C``, ``m``, ``v``, ``z`` and ``O``, as
GNU tar (Debian-based images) or busybox's tar (busybox, alpine) word their errors: a missing path,
``No space left on device`` when the writable layer is full, ``Read-only file system`` in a mount,
an input that is not an archive. Input is read no further than the layer could hold; symbolic
links and device nodes in an archive are skipped.
"""

from __future__ import annotations

import io
import stat
import tarfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from kconsole.nodes.images import repository
from kconsole.nodes.layer import FsError, parent_of

if TYPE_CHECKING:
    from kconsole.nodes.shell import Shell, Streams

#: Images whose tar is busybox's.
BUSYBOX = frozenset(("busybox", "alpine"))
#: Bytes of archive overhead (headers, padding) read beyond what the layer can still hold.
SLACK = 1 << 20
CHUNK = 32 * 1024


@dataclass(frozen=True, slots=True)
class Words:
    """How one tar implementation words its failures."""

    leading_slash: str
    cannot_stat: str
    cannot_open: str
    cannot_write: str
    bad_archive: str
    truncated: str
    no_dir: str
    no_mode: str
    empty: str
    code: int
    #: GNU tar goes on with the next member after a failed one and says so at the end.
    keeps_going: bool


GNU = Words(
    leading_slash="tar: Removing leading `/' from member names\n",
    cannot_stat="tar: {name}: Cannot stat: {why}\n",
    cannot_open="tar: {name}: Cannot open: {why}\n",
    cannot_write="tar: {name}: Cannot write: {why}\n",
    bad_archive="tar: This does not look like a tar archive\n",
    truncated="tar: Unexpected EOF in archive\ntar: Error is not recoverable: exiting now\n",
    no_dir="tar: {name}: Cannot open: {why}\ntar: Error is not recoverable: exiting now\n",
    no_mode="tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n"
            "Try 'tar --help' or 'tar --usage' for more information.\n",
    empty="tar: Cowardly refusing to create an empty archive\nTry 'tar --help' or 'tar --usage' for more "
          "information.\n",
    code=2, keeps_going=True)
BUSYBOX_WORDS = Words(
    leading_slash="tar: removing leading '/' from member names\n",
    cannot_stat="tar: {name}: {why}\n",
    cannot_open="tar: can't open '{name}': {why}\n",
    cannot_write="tar: write error: {why}\n",
    bad_archive="tar: invalid tar magic\n",
    truncated="tar: short read\n",
    no_dir="tar: can't change directory to '{name}': {why}\n",
    no_mode="BusyBox v1.36.1 multi-call binary.\n\nUsage: tar c|x|t [-ZzJjahmvokO] [-f TARFILE] [-C DIR] "
            "[-T FILE] [-X FILE] [FILE]...\n",
    empty="tar: empty archive\n",
    code=1, keeps_going=False)
FAILED_BEFORE = "tar: Exiting with failure status due to previous errors\n"
#: Option letters that take a value.
_VALUED = frozenset("fCT")
_LONG = {"--extract": "x", "--get": "x", "--create": "c", "--list": "t", "--verbose": "v", "--gzip": "z",
         "--touch": "m", "--to-stdout": "O", "--no-same-permissions": "", "--no-same-owner": "",
         "--same-owner": "", "--preserve-permissions": "", "--numeric-owner": "", "--overwrite": ""}


class TarFailed(Exception):
    """Stops tar: its message is already written; ``code`` is the exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _parse(args: list[str]) -> tuple[str, dict[str, str], list[str]] | str:
    """(flags, values of f/C, operands), or an unknown option's text."""
    flags, values, operands = "", {}, []
    pending: list[str] = []
    if args and args[0] and not args[0].startswith("-"):  # old style: "cf", "xmf"
        letters = args.pop(0)
        flags += "".join(ch for ch in letters if ch not in _VALUED)
        pending += [ch for ch in letters if ch in _VALUED]
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if pending:
            values[pending.pop(0)] = arg
            continue
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            if key in ("--file", "--directory"):
                letter = "f" if key == "--file" else "C"
                if eq:
                    values[letter] = value
                else:
                    pending.append(letter)
            elif key in _LONG:
                flags += _LONG[key]
            else:
                return arg
        elif arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for index, ch in enumerate(letters):
                if ch in _VALUED:
                    rest = letters[index + 1:]
                    if rest:
                        values[ch] = rest
                    else:
                        pending.append(ch)
                    break
                flags += ch
        else:
            operands.append(arg)
    return flags, values, operands


async def tar(sh: Shell, argv: list[str], io_: Streams) -> int:
    words = BUSYBOX_WORDS if repository(sh.m.image).rsplit("/", 1)[-1] in BUSYBOX else GNU
    parsed = _parse(list(argv[1:]))
    if isinstance(parsed, str):
        await io_.err(f"tar: unrecognized option '{parsed}'\n" if words is GNU else f"tar: unrecognized option "
                      f"'{parsed}'\n{words.no_mode}")
        return words.code
    flags, values, operands = parsed
    modes = [m for m in "cxt" if m in flags]
    if len(modes) != 1:
        await io_.err(words.no_mode)
        return words.code
    directory = sh.path(values["C"]) if "C" in values else sh.cwd
    if "C" in values and not sh.m.fs.is_dir(directory):
        why = "Not a directory" if sh.m.fs.exists(directory) else "No such file or directory"
        await io_.err(words.no_dir.format(name=values["C"], why=why))
        return words.code
    run = Tar(sh, io_, words, flags, values.get("f", "-"), directory)
    try:
        if modes[0] == "c":
            return await run.create(operands)
        return await run.extract(listing=modes[0] == "t")
    except TarFailed as failed:
        return failed.code
    except (tarfile.TarError, ValueError, OverflowError, OSError, EOFError, zlib.error) as err:
        await io_.err(f"tar: {err}\n")  # what an archive's odd headers make of tarfile: tar's error, not a crash
        return words.code


class Tar:
    """One tar run."""

    def __init__(self, sh: Shell, io_: Streams, words: Words, flags: str, archive: str, directory: str) -> None:
        self.sh = sh
        self.fs = sh.m.fs
        self.io = io_
        self.words = words
        self.flags = flags
        self.archive = archive
        self.directory = directory
        self.failed = False
        self.warned = False

    async def _fail(self, text: str) -> None:
        """A member failed: busybox stops, GNU tar goes on and fails at the end."""
        await self.io.err(text)
        self.failed = True
        if not self.words.keeps_going:
            raise TarFailed(self.words.code)

    async def _finish(self) -> int:
        if not self.failed:
            return 0
        if self.words.keeps_going:
            await self.io.err(FAILED_BEFORE)
        return self.words.code

    async def _strip(self, name: str) -> str:
        """A member name without its leading slashes (said once, as tar says it)."""
        if name.startswith("/"):
            if not self.warned:
                self.warned = True
                await self.io.err(self.words.leading_slash)
            name = name.lstrip("/")
        return name

    # ------------------------------------------------------------------ c

    async def create(self, operands: list[str]) -> int:
        if not operands:
            await self.io.err(self.words.empty)
            return self.words.code
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w:gz" if "z" in self.flags else "w", format=tarfile.GNU_FORMAT) as archive:
            for operand in operands:
                full = self.sh.path(operand if operand.startswith("/") else f"{self.directory}/{operand}")
                if not self.fs.exists(full):
                    await self._fail(self.words.cannot_stat.format(name=operand, why="No such file or directory"))
                    continue
                name = (await self._strip(operand)).rstrip("/") or "."
                for path in self.fs.walk(full):
                    rel = name + path[len(full):] if full != "/" else (name + path).replace("//", "/")
                    await self._add(archive, path, rel)
        data = out.getvalue()
        if self.archive == "-":
            for start in range(0, len(data), CHUNK):
                await self.io.out(data[start:start + CHUNK])
        else:
            try:
                self.fs.write(self.sh.path(self.archive), data)
            except FsError as err:
                await self._fail(self.words.cannot_open.format(name=self.archive, why=err))
        return await self._finish()

    async def _add(self, archive: tarfile.TarFile, path: str, rel: str) -> None:
        info = tarfile.TarInfo(rel)
        info.mtime = int(self.fs.mtime(path))
        info.uname = info.gname = "root"
        content = self.fs.read(path)
        if content is None:
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(info)
        else:
            info.size, info.mode = len(content), 0o644
            archive.addfile(info, io.BytesIO(content))
        if "v" in self.flags:
            await (self.io.err if self.archive == "-" else self.io.out)(rel + ("/" if content is None else "") + "\n")

    # ------------------------------------------------------------------ x, t

    async def _input(self) -> tuple[bytes, bool]:
        """The archive's bytes and whether reading stopped at the bound (more than the layer can take)."""
        bound = self.fs.free() + SLACK
        if self.archive != "-":
            data = self.fs.read(self.sh.path(self.archive))
            if data is None:
                why = "Is a directory" if self.fs.is_dir(self.sh.path(self.archive)) else "No such file or directory"
                await self.io.err(self.words.cannot_open.format(name=self.archive, why=why)
                                  + ("tar: Error is not recoverable: exiting now\n" if self.words is GNU else ""))
                raise TarFailed(self.words.code)
            return data, False
        chunks, size = [], 0
        while (chunk := await self.io.read()) is not None:
            chunks.append(chunk)
            size += len(chunk)
            if size > bound:
                return b"".join(chunks), True
        return b"".join(chunks), False

    async def extract(self, listing: bool) -> int:
        data, cut = await self._input()
        if not data:
            return 0
        try:
            archive = tarfile.open(fileobj=io.BytesIO(data), mode="r|*")
        except (tarfile.TarError, EOFError, zlib.error, OSError):
            await self.io.err(self.words.bad_archive + (FAILED_BEFORE if self.words is GNU else ""))
            return self.words.code
        try:
            for member in archive:
                if listing:
                    await self._list(member)
                else:
                    await self._member(archive, member)
        except (tarfile.TarError, EOFError, zlib.error, OSError):
            if cut and not listing:
                await self._fail(self.words.cannot_write.format(name=self._last, why="No space left on device"))
                return await self._finish()
            await self.io.err(self.words.truncated)
            return self.words.code
        finally:
            archive.close()
        if cut and not listing:
            await self._fail(self.words.cannot_write.format(name=self._last, why="No space left on device"))
        return await self._finish()

    _last = ""

    async def _list(self, member: tarfile.TarInfo) -> None:
        name = member.name + ("/" if member.isdir() and not member.name.endswith("/") else "")
        if "v" not in self.flags:
            await self.io.out(name + "\n")
            return
        kind = "d" if member.isdir() else "l" if member.issym() else "-"
        stamp = datetime.fromtimestamp(member.mtime, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
        owner = f"{member.uname or member.uid}/{member.gname or member.gid}"
        await self.io.out(f"{kind}{stat.filemode(member.mode)[1:]} {owner} {member.size:>9} {stamp} {name}\n")

    async def _member(self, archive: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        name = await self._strip(member.name)
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts:
            await self._fail(f"tar: {member.name}: Member name contains '..'\n" if self.words is GNU
                             else f"tar: skipping unsafe path '{member.name}'\n")
            return
        if not parts:
            return
        target = ("" if self.directory == "/" else self.directory) + "/" + "/".join(parts)
        self._last = name
        if "v" in self.flags:
            await self.io.out(name + "\n")
        if not member.isdir() and not member.isreg() and not member.islnk():
            return  # symbolic links, devices and fifos are not kept
        try:
            self._parents(target)
            if member.isdir():
                if not self.fs.is_dir(target):
                    self.fs.mkdir(target)
                return
            if member.islnk():
                source = "/".join(p for p in member.linkname.split("/") if p not in ("", "."))
                content = self.fs.read(("" if self.directory == "/" else self.directory) + "/" + source) or b""
            else:
                if member.size > self.fs.free() + len(self.fs.layer.files.get(target, b"")):
                    raise FsError("No space left on device")
                extracted = archive.extractfile(member)
                content = extracted.read() if extracted is not None else b""
            if "O" in self.flags:
                await self.io.out(content)
                return
            self.fs.write(target, content)
            if "m" not in self.flags:
                self.fs.layer.mtimes[target] = float(member.mtime)
        except FsError as err:
            template = self.words.cannot_write if str(err) == "No space left on device" else self.words.cannot_open
            await self._fail(template.format(name=name, why=err))

    def _parents(self, target: str) -> None:
        """Create the directories above ``target`` that do not exist, as tar does."""
        missing = []
        parent = parent_of(target)
        while not self.fs.is_dir(parent):
            if self.fs.exists(parent):
                raise FsError("Not a directory")
            missing.append(parent)
            parent = parent_of(parent)
        for path in reversed(missing):
            self.fs.mkdir(path)
