"""``kconsole fault list|apply|heal|active``: the fault catalog, headless, for scripted drills.

``list`` prints the catalog (no cluster needed). The other actions talk to a running ``kconsole
serve`` (or console) through its admin endpoint, found in the data folder's ``admin.json``
(``--data-dir``, or ``DIR/.kconsole`` with ``--dir``, default the current folder). That endpoint
acts on component handles, so it answers even while etcd has no quorum.

Exit status: 0 done; 1 the cluster refused (unknown fault id, bad target); 2 bad usage; 3 no
running cluster for that data folder.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kconsole.faults import CATALOG

#: The endpoint file the admin server (kconsole/admin.py) writes in the data folder. Defined here so
#: the command does not import the server side (aiohttp) just to read it.
ADMIN_FILE = "admin.json"


class NoCluster(Exception):
    """No running cluster answers for the data folder; the message says what was tried."""


class Refused(Exception):
    """The admin endpoint answered with an error."""


def _common(p: argparse.ArgumentParser, suppress: bool) -> None:
    """The shared options, accepted before or after the action (``kconsole fault active --data-dir D``)."""
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    p.add_argument("--data-dir", default=default(None),
                   help="the running cluster's data folder (default DIR/.kconsole)")
    p.add_argument("--dir", default=default("."), help="manifest folder whose .kconsole to use (default: .)")
    p.add_argument("--json", action="store_true", default=default(False), help="print JSON instead of text")


def add_arguments(p: argparse.ArgumentParser) -> None:
    _common(p, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _common(common, suppress=True)
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    sub.add_parser("list", parents=[common], help="print each fault type with its target kind and description")
    apply = sub.add_parser("apply", parents=[common], help="apply a fault; prints its id")
    apply.add_argument("type", help="fault type (see `kconsole fault list`)")
    apply.add_argument("target", nargs="?", help="ns/pod, node name, etcd member or 'leader', 'apiserver' "
                                                "(may be left out for the leader and apiserver faults)")
    apply.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                       help="fault parameter, e.g. -p seconds=2 (repeatable)")
    heal = sub.add_parser("heal", parents=[common], help="heal one fault by id, or --all")
    heal.add_argument("id", nargs="?", help="fault id as printed by apply (f1, f2, ...)")
    heal.add_argument("--all", action="store_true", help="heal every active fault")
    sub.add_parser("active", parents=[common], help="list the faults applied now")


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "list":
            return _list(args)
        endpoint = find_endpoint(Path(args.data_dir) if args.data_dir else Path(args.dir) / ".kconsole")
        if args.action == "apply":
            params = _params(args.param)
            target = args.target if args.target is not None else _implicit_target(args.type)
            fault = call(endpoint, "POST", "/v1/faults", {"type": args.type, "target": target, "params": params})
            if args.json:
                print(json.dumps(fault))
            else:
                print(fault["id"])
                detail = f" ({fault['detail']})" if fault.get("detail") else ""
                print(f"applied {fault['type']} on {fault['target']}{detail}", file=sys.stderr)
            return 0
        if args.action == "heal":
            if args.all == bool(args.id):
                print("kconsole fault heal: give a fault id or --all (not both)", file=sys.stderr)
                return 2
            healed = (call(endpoint, "DELETE", "/v1/faults")["healed"] if args.all
                      else [call(endpoint, "DELETE", f"/v1/faults/{args.id}")])
            if args.json:
                print(json.dumps(healed))
            for f in [] if args.json else healed:
                print(f"healed {f['id']} {f['type']} on {f['target']}")
            if not healed and not args.json:
                print("no active faults")
            return 0
        active = call(endpoint, "GET", "/v1/faults")
        if args.json:
            print(json.dumps(active))
        else:
            print(_active_table(active))
        return 0
    except _Usage as err:
        print(f"kconsole fault: {err}", file=sys.stderr)
        return 2
    except Refused as err:
        print(f"kconsole fault: {err}", file=sys.stderr)
        return 1
    except NoCluster as err:
        print(f"kconsole fault: {err}", file=sys.stderr)
        return 3


class _Usage(Exception):
    pass


#: Faults whose target follows from the fault itself, so the command line may leave it out.
_IMPLICIT_TARGETS = {"controller-manager": "leader", "scheduler": "leader", "apiserver": "apiserver"}


def _implicit_target(fault_type: str) -> str:
    ftype = CATALOG.get(fault_type)
    if ftype is None:
        return ""  # the cluster answers with its unknown-type message
    if fault_type == "etcd-kill-leader":
        return "leader"
    implicit = _IMPLICIT_TARGETS.get(ftype.target_kind)
    if implicit is None:
        raise _Usage(f"{fault_type} needs a target: {_TARGET_HINTS.get(ftype.target_kind, ftype.target_kind)}")
    return implicit


_TARGET_HINTS = {"pod": "a pod as namespace/name", "node": "a node name, e.g. worker-1",
                 "etcd-member": "an etcd member (etcd-0, etcd-1, ...) or 'leader'"}


def _params(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _Usage(f"--param takes KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _list(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps([t.to_dict() for t in CATALOG.values()]))
        return 0
    width = max(len(name) for name in CATALOG)
    for t in CATALOG.values():
        params = "".join(f" [{p.name}={p.default}]" for p in t.params)
        print(f"{t.name:<{width}}  {t.target_kind:<18}  {t.description}{params}")
    return 0


def _active_table(faults: list[dict[str, Any]]) -> str:
    if not faults:
        return "no active faults"
    rows = [("ID", "TYPE", "TARGET", "DETAIL")]
    rows += [(f["id"], f["type"], f["target"], f.get("detail") or "") for f in faults]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip() for r in rows)


def find_endpoint(data_dir: Path) -> dict[str, str]:
    path = data_dir / ADMIN_FILE
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NoCluster(f"no running cluster for data folder {data_dir} ({path} does not exist); "
                        "start one with `kconsole serve`, or point --data-dir at its folder") from None
    except (OSError, ValueError) as err:
        raise NoCluster(f"cannot read {path}: {err}") from None
    if not isinstance(info, dict) or "url" not in info or "token" not in info:
        raise NoCluster(f"{path} is not an admin endpoint file")
    return {"url": str(info["url"]), "token": str(info["token"]), "file": str(path)}


def call(endpoint: dict[str, str], method: str, path: str, body: Any = None, timeout: float = 30.0) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(endpoint["url"] + path, data=data, method=method,
                                 headers={"Authorization": f"Bearer {endpoint['token']}",
                                          "Content-Type": "application/json"})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read()).get("error") or err.reason
        except (ValueError, AttributeError):
            message = err.reason
        raise Refused(str(message)) from None
    except (urllib.error.URLError, ConnectionError, TimeoutError) as err:
        waited = time.monotonic() - started
        reason = getattr(err, "reason", err)
        raise NoCluster(f"the cluster of {endpoint['file']} does not answer at {endpoint['url']} ({reason}, "
                        f"after {waited:.1f} s); is `kconsole serve` still running?") from None
