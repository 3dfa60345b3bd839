"""The grammar of the container shell (:mod:`kconsole.nodes.shell`): words and operators, then lists,
pipelines and the compound commands ``for``, ``while``, ``until`` and ``if``.

A word is a list of parts: ``("lit", text)`` (quoted or not), ``("var", name)`` and
``("cmd", script)`` (``$(...)`` or backquotes) outside double quotes, which are split into fields,
``("qvar", name)``, ``("qcmd", script)`` inside them, which are not, and ``("arith", expression)``
for ``$((...))``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Word = list[tuple[str, str]]
OPERATORS = ("&&", "||", ";", "|", "\n", "2>&1", "1>&2", ">&2", ">>", "2>", ">", "<", "&")
_VAR = re.compile(r"\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*|[?$#0-9])")
KEYWORDS = frozenset(("for", "in", "do", "done", "while", "until", "if", "then", "elif", "else", "fi"))


class ParseError(Exception):
    """``incomplete``: the script only ends too early (an interactive shell reads another line)."""

    def __init__(self, message: str, incomplete: bool = False) -> None:
        super().__init__(message)
        self.incomplete = incomplete


def _closing(script: str, start: int) -> int:
    """The index of the ``)`` closing the ``$(`` whose ``(`` is at ``start - 1``."""
    depth, i, quote = 1, start, ""
    while i < len(script):
        ch = script[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ParseError("syntax error: unterminated $(", incomplete=True)


def _dollar(script: str, i: int, quoted: bool) -> tuple[tuple[str, str], int]:
    """The part a ``$`` at ``i`` starts, and where it ends."""
    if script.startswith("$((", i):
        end = _closing(script, i + 3)
        if script.startswith(")", end + 1):
            return ("arith", script[i + 3:end]), end + 2
    if script.startswith("$(", i):
        end = _closing(script, i + 2)
        return ("qcmd" if quoted else "cmd", script[i + 2:end]), end + 1
    m = _VAR.match(script, i)
    if m:
        return ("qvar" if quoted else "var", m.group(1).strip("{}")), m.end()
    return ("lit", "$"), i + 1


def tokenize(script: str) -> list[tuple[str, Any]]:
    """``("word", Word)`` and ``("op", text)`` tokens."""
    tokens: list[tuple[str, Any]] = []
    word: Word = []
    in_word = False
    i, n = 0, len(script)

    def finish() -> None:
        nonlocal word, in_word
        if in_word:
            tokens.append(("word", word))
        word, in_word = [], False

    while i < n:
        ch = script[i]
        if ch in " \t":
            finish()
            i += 1
            continue
        if ch == "#" and not in_word:
            while i < n and script[i] != "\n":
                i += 1
            continue
        op = next((o for o in OPERATORS if script.startswith(o, i)), None)
        if op is not None and not (op[0] in "12" and in_word):
            finish()
            tokens.append(("op", op))
            i += len(op)
            continue
        in_word = True
        if ch == "'":
            end = script.find("'", i + 1)
            if end < 0:
                raise ParseError("unterminated quoted string", incomplete=True)
            word.append(("lit", script[i + 1:end]))
            i = end + 1
        elif ch == '"':
            i += 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise ParseError("unterminated quoted string", incomplete=True)
                c = script[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and script[i + 1] in '"\\$`':
                    buf.append(script[i + 1])
                    i += 2
                elif c == "$":
                    if buf:
                        word.append(("lit", "".join(buf)))
                        buf = []
                    part, i = _dollar(script, i, quoted=True)
                    word.append(part)
                else:
                    buf.append(c)
                    i += 1
            if buf or not word:
                word.append(("lit", "".join(buf)))
        elif ch == "\\":
            if i + 1 < n and script[i + 1] != "\n":
                word.append(("lit", script[i + 1]))
            i += 2
        elif ch == "`":
            end = script.find("`", i + 1)
            if end < 0:
                raise ParseError("unterminated quoted string", incomplete=True)
            word.append(("cmd", script[i + 1:end]))
            i = end + 1
        elif ch == "$":
            part, i = _dollar(script, i, quoted=False)
            word.append(part)
        else:
            j = i
            while j < n and script[j] not in " \t'\"\\$`#|&;<>\n":
                j += 1
            if j == i:  # a '#' inside a word
                j = i + 1
            word.append(("lit", script[i:j]))
            i = j
    finish()
    return tokens


@dataclass(slots=True)
class Command:
    """A simple command (``words``, ``redirects``) or a compound one (``kind`` for, while, until, if)."""

    words: list[Word] = field(default_factory=list)
    #: (operator, target word or None): ">", ">>", "2>", "2>&1", ">&2", "<"
    redirects: list[tuple[str, Word | None]] = field(default_factory=list)
    kind: str = "simple"
    #: for: the loop variable and the words it takes
    var: str = ""
    items: list[Word] = field(default_factory=list)
    #: for: [body]; while/until: [condition, body]; if: [cond, then, cond, then, ..., (else)]
    parts: list[Script] = field(default_factory=list)


#: A list: (operator before it: ";", "&&" or "||"; the pipeline's commands)
Script = list[tuple[str, list[Command]]]


def _keyword(token: tuple[str, Any] | None) -> str:
    if token is None or token[0] != "word" or len(token[1]) != 1 or token[1][0][0] != "lit":
        return ""
    text = token[1][0][1]
    return text if text in KEYWORDS else ""


class _Parser:
    def __init__(self, tokens: list[tuple[str, Any]]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, Any]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def skip_separators(self) -> None:
        while (t := self.peek()) is not None and t[0] == "op" and t[1] in (";", "\n"):
            self.take()

    def expect(self, keyword: str) -> None:
        self.skip_separators()
        token = self.peek()
        if token is None:
            raise ParseError(f'syntax error: unexpected end of file (expecting "{keyword}")', incomplete=True)
        if _keyword(token) != keyword:
            raise ParseError(f'syntax error: unexpected "{_text(token)}" (expecting "{keyword}")')
        self.take()

    def script(self, stops: frozenset[str] = frozenset()) -> Script:
        out: Script = []
        joiner = ";"
        while True:
            if joiner == ";":
                self.skip_separators()
            token = self.peek()
            if token is None or (stops and _keyword(token) in stops):
                if joiner != ";":
                    raise ParseError("syntax error: unexpected end of file", incomplete=True)
                return out
            if token[0] == "op" and token[1] not in ("2>&1", "1>&2", ">&2", ">>", "2>", ">", "<"):
                raise ParseError(f'syntax error: unexpected "{_text(token)}"')
            out.append((joiner, self.pipeline()))
            token = self.peek()
            if token is not None and token[0] == "op" and token[1] in ("&&", "||"):
                joiner = self.take()[1]
                while (t := self.peek()) is not None and t == ("op", "\n"):
                    self.take()
            elif token is not None and token[0] == "op" and token[1] in (";", "\n", "&"):
                self.take()
                joiner = ";"
            elif token is None or (stops and _keyword(token) in stops):
                joiner = ";"
            else:
                raise ParseError(f'syntax error: unexpected "{_text(token)}"')

    def pipeline(self) -> list[Command]:
        commands = [self.command()]
        while (t := self.peek()) is not None and t == ("op", "|"):
            self.take()
            while (t := self.peek()) is not None and t == ("op", "\n"):
                self.take()
            commands.append(self.command())
        return commands

    def command(self) -> Command:
        keyword = _keyword(self.peek())
        if keyword == "for":
            self.take()
            name = self.peek()
            if name is None or name[0] != "word":
                raise ParseError("syntax error: bad for loop variable", incomplete=name is None)
            var = "".join(v for _, v in self.take()[1])
            items: list[Word] = []
            if _keyword(self.peek()) == "in":
                self.take()
                while (t := self.peek()) is not None and t[0] == "word":
                    items.append(self.take()[1])
            self.expect("do")
            body = self.script(frozenset(("done",)))
            self.expect("done")
            return Command(kind="for", var=var, items=items, parts=[body])
        if keyword in ("while", "until"):
            self.take()
            condition = self.script(frozenset(("do",)))
            self.expect("do")
            body = self.script(frozenset(("done",)))
            self.expect("done")
            return Command(kind=keyword, parts=[condition, body])
        if keyword == "if":
            self.take()
            parts: list[Script] = []
            while True:
                parts.append(self.script(frozenset(("then",))))
                self.expect("then")
                parts.append(self.script(frozenset(("elif", "else", "fi"))))
                self.skip_separators()
                nxt = _keyword(self.peek())
                if nxt == "elif":
                    self.take()
                    continue
                if nxt == "else":
                    self.take()
                    parts.append(self.script(frozenset(("fi",))))
                self.expect("fi")
                return Command(kind="if", parts=parts)
        if keyword in KEYWORDS - {"in"}:
            raise ParseError(f'syntax error: unexpected "{keyword}"')
        command = Command()
        while (token := self.peek()) is not None:
            if token[0] == "word":
                command.words.append(self.take()[1])
            elif token[1] in ("2>&1", "1>&2", ">&2"):
                command.redirects.append((self.take()[1], None))
            elif token[1] in (">", ">>", "2>", "<"):
                op = self.take()[1]
                target = self.peek()
                if target is None or target[0] != "word":
                    raise ParseError("syntax error: unexpected newline")
                command.redirects.append((op, self.take()[1]))
            else:
                break
        if not command.words and not command.redirects:
            token = self.peek()
            raise ParseError(f'syntax error: unexpected "{_text(token)}"' if token is not None
                             else "syntax error: unexpected end of file", incomplete=token is None)
        return command


def _text(token: tuple[str, Any]) -> str:
    if token[0] == "op":
        return "newline" if token[1] == "\n" else str(token[1])
    return "".join(v for _, v in token[1])


def parse(script: str) -> Script:
    return _Parser(tokenize(script)).script()
