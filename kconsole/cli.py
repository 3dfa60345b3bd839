"""Entry point: ``kconsole [DIR]`` opens the console; other commands are table entries.

Each entry of :data:`COMMANDS` names a module with ``add_arguments(parser)`` and ``run(args) -> int``,
and optionally ``shorthand(argv) -> argv`` rewriting its short forms before parsing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: name -> (module, one-line help). Adding a command is one line here plus its module.
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("kconsole.serve", "run the cluster headless until SIGINT/SIGTERM"),
    "bench": ("kconsole.bench.cli", "run a benchmark and print its figures"),
    "etcd": ("kconsole.store.etcdcmd", "run a local real etcd cluster on loopback with TLS: etcd up --members 3"),
    "etcdctl": ("kconsole.store.etcdctl", "etcd member status from a data folder: endpoint status|health, member list, quorum"),
    "snapshot": ("kconsole.store.snapshot", "save, inspect or restore a snapshot of the store"),
    "kubeconfig": ("kconsole.http.kubeconfig_cmd", "print the kubeconfig of a cluster's data folder"),
    "fault": ("kconsole.faultcmd", "list, apply and heal faults on a running cluster (kconsole fault list)"),
    "history": ("kconsole.history.cmd", "one object's story: each revision, its diff, who wrote it, its Events"),
    "screenshot": ("kconsole.screenshot", "render a console view of a fresh example cluster to SVG"),
    "drill": ("kconsole.drills.cmd", "run, validate and list drills: rehearsals with expectations (kconsole drill list)"),
    "web": ("kconsole.web", "serve the console to a browser on 127.0.0.1, behind a token in the URL"),
    "trace": ("kconsole.trace.exportcmd", "export a cluster's history and recorded inputs as a trace file (JSON lines)"),
    "replay": ("kconsole.trace.replaycmd", "play a trace as a film, or --rerun its inputs on a fresh cluster and compare"),
    "fork": ("kconsole.trace.fork", "a new data folder whose cluster starts as it was at a past revision"),
    "import": ("kconsole.importer", "copy a cluster's nodes and objects into a new folder: kconsole DIR opens its twin"),
    "fidelity": ("kconsole.fidelity.cmd", "run kubectl scenarios against any kubeconfig and diff with upstream's output"),
    "attach": ("kconsole.attach", "the console over any cluster through its kubeconfig (read-only unless --allow-writes)"),
}


def add_cluster_flags(p: argparse.ArgumentParser) -> None:
    """Flags shared by every command that builds a cluster."""
    p.add_argument("--nodes", type=int, default=3, help="worker nodes (default 3)")
    p.add_argument("--control-planes", type=int, default=3, help="control-plane replicas and etcd members (default 3)")
    p.add_argument("--speed", type=float, default=1.0, help="simulated seconds per wall second (default 1)")
    p.add_argument("--seed", type=int, default=1, help="seed for names, ties and jitter (default 1)")
    p.add_argument("--port", type=int, default=6443, help="HTTPS port for kubectl (0 = any free port)")
    p.add_argument("--address", default="127.0.0.1", help="address to serve on (default loopback only)")
    p.add_argument("--insecure-http", action="store_true", help="serve plain HTTP (a token is still required)")
    p.add_argument("--data-dir", default=None, help="data folder (default DIR/.kconsole)")
    p.add_argument("--ephemeral", action="store_true",
                   help="keep the cluster in a temporary folder, deleted on exit; its writes are not synced to disk")
    p.add_argument("--config", default=None, help="cluster config YAML")
    p.add_argument("--etcd", choices=("embedded", "local"), default=None,
                   help="store objects in kconsole's own etcd members (embedded, default) or in a real etcd "
                        "cluster run in the data folder (local: needs the etcd binary, Debian's etcd-server)")
    p.add_argument("--etcd-servers", default=None, metavar="URL[,URL...]",
                   help="store objects in this real etcd cluster (kube-apiserver's --etcd-servers)")
    p.add_argument("--etcd-cafile", default=None, help="CA bundle that signed the etcd servers' certificates")
    p.add_argument("--etcd-certfile", default=None, help="client certificate for etcd")
    p.add_argument("--etcd-keyfile", default=None, help="client key for etcd")
    p.add_argument("--etcd-binary", default=None, help="etcd binary for --etcd local (default: etcd on PATH)")
    p.add_argument("--processes", type=int, default=0,
                   help="run the worker nodes' kubelets in N processes over HTTPS (default 0: in this process)")
    p.add_argument("--replica-processes", action="store_true",
                   help="run each scheduler and controller-manager replica as its own process over HTTPS")
    p.add_argument("--member-processes", action="store_true",
                   help="run each etcd member as its own process (Raft over loopback sockets, fsyncs and "
                        "CPU spread over cores)")


def console_parser() -> argparse.ArgumentParser:
    commands = "\n".join(f"  {name:<12}{help_text}" for name, (_, help_text) in COMMANDS.items())
    p = argparse.ArgumentParser(
        prog="kconsole",
        description="Open the console on a manifest folder.",
        epilog=f"other commands (kconsole COMMAND --help):\n{commands}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", nargs="?", default=".", help="manifest folder (default: current folder)")
    add_cluster_flags(p)
    p.add_argument("--theme", default=None, help="theme name or themes/*.yaml file")
    p.add_argument("--readonly", action="store_true", help="disable the dangerous keys")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        module_name, help_text = COMMANDS[argv[0]]
        module = importlib.import_module(module_name)
        parser = argparse.ArgumentParser(prog=f"kconsole {argv[0]}", description=help_text)
        module.add_arguments(parser)
        rest = argv[1:]
        if hasattr(module, "shorthand"):  # a command's own short forms (``kconsole drill NAME``)
            rest = module.shorthand(rest)
        return int(module.run(parser.parse_args(rest)) or 0)
    args = console_parser().parse_args(argv)
    from kconsole.tui.launch import run_console

    return int(run_console(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
