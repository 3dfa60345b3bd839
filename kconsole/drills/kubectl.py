"""A kubectl-like command line, run in process through the API client as a given user.

Not kubectl: a small subset with kubectl's words, outputs and ``Error from server (Reason): ...``
lines, so a drill can show what a user would type without a network round trip:

* ``get KIND [NAME...] [-n NS | -A] [-l SELECTOR] [-o name|wide|json|yaml|jsonpath=TEMPLATE]``
* ``apply -f FILE`` — a workspace file or one of the drill's held-back ``files``, sent with
  server-side apply (field manager ``kubectl``)
* ``delete KIND NAME... | -l SELECTOR [-n NS] [--grace-period N]``
* ``scale KIND/NAME | KIND NAME --replicas N [-n NS]``
* ``cordon NODE``, ``uncordon NODE``
* ``taint nodes NODE KEY[=VALUE]:EFFECT ...`` and ``KEY[:EFFECT]-`` to remove
* ``auth can-i VERB RESOURCE[/NAME] [-n NS]`` — a SelfSubjectAccessReview; ``yes`` exits 0, ``no`` 1

Exit codes follow kubectl: 0 done, 1 refused by the server or bad usage.
"""

from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kconsole.api.crd.printers import PathError, compile_path, evaluate
from kconsole.client import Client, StatusError
from kconsole.objects.printers import printer_for

Obj = dict[str, Any]
FIELD_MANAGER = "kubectl"
#: Beside the workspace: the drill's held-back files, which ``apply -f`` may name too.
HELD_BACK = "files"


@dataclass(slots=True)
class Result:
    code: int
    output: str


class UsageError(Exception):
    """A command line this subset does not understand."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="kubectl", add_help=False)
    p.add_argument("words", nargs="*")
    p.add_argument("-n", "--namespace", default=None)
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("-o", "--output", default="")
    p.add_argument("-f", "--filename", default=None)
    p.add_argument("--replicas", type=int, default=None)
    p.add_argument("--grace-period", type=int, default=None)
    p.add_argument("--as", dest="as_user", default=None)
    return p


COMMANDS = ("get", "apply", "delete", "scale", "cordon", "uncordon", "taint", "auth")


async def run(client_for: Any, user: str, line: str, workspace: Path) -> Result:
    """Run ``line`` (without the word ``kubectl``) as ``user``; ``client_for(user)`` gives a Client."""
    try:
        words = shlex.split(line)
        if words and words[0] == "kubectl":
            words = words[1:]
        args = _parser().parse_args(words)
        if not args.words or args.words[0] not in COMMANDS:
            raise UsageError(f"unknown command {args.words[0] if args.words else ''!r}; this kubectl subset "
                             f"knows: {', '.join(COMMANDS)}")
        client = client_for(args.as_user or user)
        handler = _HANDLERS[args.words[0]]
        return await handler(client, args, args.words[1:], workspace)
    except UsageError as err:
        return Result(1, f"error: {err}")
    except ValueError as err:  # shlex: an unclosed quote
        return Result(1, f"error: {err}")
    except StatusError as err:
        return Result(1, f"Error from server ({err.reason or err.code}): {err.message}")


def _namespace(args: argparse.Namespace) -> str | None:
    return None if args.all_namespaces else (args.namespace or "default")


def _ref(client: Client, kind: str) -> tuple[str, Any]:
    """``pods`` -> ("pods", info); ``deployment/web`` handled by the callers."""
    info = client.resource_info(kind)
    return (info.resource if not info.group else f"{info.resource}.{info.group}"), info


def _type_name(info: Any, name: str) -> str:
    kind = info.kind.lower()
    return f"{kind}.{info.group}/{name}" if info.group else f"{kind}/{name}"


async def _get(client: Client, args: argparse.Namespace, words: list[str], workspace: Path) -> Result:
    if not words:
        raise UsageError("get needs a kind: kubectl get pods")
    kinds = words[0].split("/", 1)
    resource, info = _ref(client, kinds[0])
    names = ([kinds[1]] if len(kinds) == 2 else []) + words[1:]
    ns = _namespace(args) if info.namespaced else None
    if names:
        items = [await client.get(resource, n, ns) for n in names]
    else:
        items = await client.list_all(resource, ns, label_selector=args.selector)
    out = args.output
    if out == "name":
        return Result(0, "\n".join(_type_name(info, o["metadata"]["name"]) for o in items))
    if out in ("json", "yaml"):
        doc: Obj = items[0] if names and len(items) == 1 else {"apiVersion": "v1", "kind": "List", "items": items}
        return Result(0, json.dumps(doc, indent=4) if out == "json" else yaml.safe_dump(doc, sort_keys=False))
    if out.startswith("jsonpath="):
        template = out.split("=", 1)[1]
        try:
            steps = compile_path(template)
        except PathError as err:
            raise UsageError(f"jsonpath: {err}") from None
        doc = items[0] if names and len(items) == 1 else {"items": items}
        values = evaluate(steps, doc)
        return Result(0, " ".join(v if isinstance(v, str) else json.dumps(v) for v in values))
    if out not in ("", "wide"):
        raise UsageError(f"unable to match a printer suitable for the output format {out!r}; "
                         f"this subset prints: name, wide, json, yaml, jsonpath=...")
    if not items:
        where = f" in {ns} namespace" if ns else ""
        return Result(0, f"No resources found{where}.")
    printer = printer_for(info.group_resource)
    columns = [c for c in printer.columns if out == "wide" or c.priority == 0]
    keep = [i for i, c in enumerate(printer.columns) if out == "wide" or c.priority == 0]
    rows = [[c.name.upper() for c in columns]]
    if args.all_namespaces and info.namespaced:
        rows[0].insert(0, "NAMESPACE")
    now = client.clock.now()
    for obj in items:
        cells = printer.cells(obj, now)
        row = ["<none>" if cells[i] in (None, "") else str(cells[i]) for i in keep]
        if args.all_namespaces and info.namespaced:
            row.insert(0, obj["metadata"].get("namespace", ""))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return Result(0, "\n".join("   ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows))


async def _apply(client: Client, args: argparse.Namespace, words: list[str], workspace: Path) -> Result:
    if not args.filename:
        raise UsageError("apply needs -f FILE (a file in the drill's workspace or its files)")
    path = (workspace / args.filename).resolve()
    if workspace.resolve() not in path.parents:
        raise UsageError(f"{args.filename}: only the drill's own files can be applied")
    text = None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        held = workspace.parent / HELD_BACK / args.filename
        if not held.is_file():
            return Result(1, f"error: the path \"{args.filename}\" does not exist ({err.strerror})")
        text = held.read_text(encoding="utf-8")
    try:
        docs = [d for d in yaml.safe_load_all(text) if d]
    except yaml.YAMLError as err:
        return Result(1, f"error: error parsing {args.filename}: {err}")
    lines = []
    for obj in docs:
        if args.namespace and not (obj.get("metadata") or {}).get("namespace"):
            obj.setdefault("metadata", {})["namespace"] = args.namespace
        applied = await client.apply(obj, field_manager=FIELD_MANAGER)
        info = client.resource_info(applied["kind"], applied["apiVersion"])
        lines.append(f"{_type_name(info, applied['metadata']['name'])} serverside-applied")
    return Result(0, "\n".join(lines))


async def _delete(client: Client, args: argparse.Namespace, words: list[str], workspace: Path) -> Result:
    if not words:
        raise UsageError("delete needs a kind and names, or -l SELECTOR")
    kinds = words[0].split("/", 1)
    resource, info = _ref(client, kinds[0])
    names = ([kinds[1]] if len(kinds) == 2 else []) + words[1:]
    ns = (args.namespace or "default") if info.namespaced else None
    if not names:
        if not args.selector:
            raise UsageError("resource(s) were provided, but no name was specified")
        names = [o["metadata"]["name"] for o in await client.list_all(resource, ns, label_selector=args.selector)]
        if not names:
            return Result(0, f"No resources found{f' in {ns} namespace' if ns else ''}.")
    lines = []
    for name in names:
        await client.delete(resource, name, ns, grace_period_seconds=args.grace_period)
        lines.append(f"{_type_name(info, name)} deleted")
    return Result(0, "\n".join(lines))


async def _scale(client: Client, args: argparse.Namespace, words: list[str], workspace: Path) -> Result:
    if args.replicas is None:
        raise UsageError("required flag(s) \"replicas\" not set")
    if len(words) == 1 and "/" in words[0]:
        kind, name = words[0].split("/", 1)
    elif len(words) == 2:
        kind, name = words
    else:
        raise UsageError("scale needs KIND/NAME or KIND NAME")
    resource, info = _ref(client, kind)
    await client.patch(resource, name, {"spec": {"replicas": args.replicas}}, args.namespace or "default",
                       subresource="scale")
    return Result(0, f"{_type_name(info, name)} scaled")


async def _cordon(client: Client, args: argparse.Namespace, words: list[str], workspace: Path,
                  value: bool = True) -> Result:
    if len(words) != 1:
        raise UsageError("cordon and uncordon take one node name")
    node = await client.get("nodes", words[0])
    if bool((node.get("spec") or {}).get("unschedulable")) == value:
        return Result(0, f"node/{words[0]} already {'cordoned' if value else 'uncordoned'}")
    await client.patch("nodes", words[0], {"spec": {"unschedulable": value or None}})
    return Result(0, f"node/{words[0]} {'cordoned' if value else 'uncordoned'}")


async def _uncordon(client: Client, args: argparse.Namespace, words: list[str], workspace: Path) -> Result:
    return await _cordon(client, args, words, workspace, value=False)


async def _taint(client: Client, args: argparse.Namespace, words: list[str], workspace: Path) -> Result:
    if len(words) < 3 or client.resource_info(words[0]).resource != "nodes":
        raise UsageError("taint needs: nodes NODE KEY[=VALUE]:EFFECT (or KEY[:EFFECT]- to remove)")
    node = await client.get("nodes", words[1])
    taints: list[Obj] = list((node.get("spec") or {}).get("taints") or [])
    for spec in words[2:]:
        if spec.endswith("-"):
            key, _, effect = spec[:-1].partition(":")
            key = key.split("=", 1)[0]
            kept = [t for t in taints if not (t.get("key") == key and (not effect or t.get("effect") == effect))]
            if len(kept) == len(taints):
                return Result(1, f"error: taint {spec[:-1]!r} not found")
            taints = kept
            continue
        kv, sep, effect = spec.rpartition(":")
        if not sep or effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise UsageError(f"invalid taint spec: {spec}, unknown taint effect (NoSchedule, PreferNoSchedule, "
                             f"NoExecute)")
        key, _, value = kv.partition("=")
        taint: Obj = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        taints = [t for t in taints if not (t.get("key") == key and t.get("effect") == effect)] + [taint]
    node.setdefault("spec", {})["taints"] = taints
    await client.update(node)
    return Result(0, f"node/{words[1]} {'untainted' if all(w.endswith('-') for w in words[2:]) else 'tainted'}")


async def _auth(client: Client, args: argparse.Namespace, words: list[str], workspace: Path) -> Result:
    if len(words) != 3 or words[0] != "can-i":
        raise UsageError("this subset knows `auth can-i VERB RESOURCE[/NAME]`")
    verb, target = words[1], words[2]
    resource, _, name = target.partition("/")
    attrs: Obj = {"verb": verb}
    try:
        info = client.resource_info(resource)
        attrs.update(resource=info.resource, group=info.group)
        if info.namespaced:
            attrs["namespace"] = args.namespace or "default"
    except StatusError:
        attrs.update(resource=resource, group="")  # kubectl warns and asks anyway
    if name:
        attrs["name"] = name
    review = await client.create({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
                                  "spec": {"resourceAttributes": attrs}})
    allowed = bool((review.get("status") or {}).get("allowed"))
    return Result(0 if allowed else 1, "yes" if allowed else "no")


_HANDLERS = {"get": _get, "apply": _apply, "delete": _delete, "scale": _scale, "cordon": _cordon,
             "uncordon": _uncordon, "taint": _taint, "auth": _auth}
