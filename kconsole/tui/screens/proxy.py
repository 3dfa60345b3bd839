"""kube-proxy rules of one node, written the way ``iptables-save -t nat`` shows kube-proxy's chains.

The rules come from the node's kube-proxy handle (``cluster.proxies[node].rules()``); a stopped or
partitioned proxy keeps its last rules, which is exactly what this view makes visible.
"""

from __future__ import annotations

import hashlib
from typing import Any

from rich.text import Text

from kconsole.tui.screens.base import TextScreen

Obj = dict[str, Any]


def _chain(prefix: str, *parts: Any) -> str:
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest().upper()
    return f"{prefix}-{digest[:16]}"


def iptables_lines(rules: list[Obj]) -> list[str]:
    """KUBE-SERVICES -> KUBE-SVC-* (random split) -> KUBE-SEP-* (DNAT), per Service port."""
    lines = ["*nat", ":KUBE-SERVICES - [0:0]", ":KUBE-NODEPORTS - [0:0]"]
    for rule in rules:
        svc, port, proto = rule.get("service", ""), rule.get("port"), str(rule.get("protocol", "TCP")).lower()
        name = f"{svc}:{rule['portName']}" if rule.get("portName") else svc
        svc_chain = _chain("KUBE-SVC", name, proto)  # upstream hashes the service port name and protocol
        lines.append(f'-A KUBE-SERVICES -d {rule.get("clusterIP")}/32 -p {proto} -m comment --comment '
                     f'"{name} cluster IP" -m {proto} --dport {port} -j {svc_chain}')
        if rule.get("nodePort"):
            lines.append(f'-A KUBE-NODEPORTS -p {proto} -m comment --comment "{name}" -m {proto} '
                         f'--dport {rule["nodePort"]} -j {svc_chain}')
        endpoints = list(rule.get("endpoints") or ())
        if not endpoints:
            lines.append(f'-A KUBE-SERVICES -d {rule.get("clusterIP")}/32 -p {proto} -m comment --comment '
                         f'"{name} has no endpoints" -m {proto} --dport {port} -j REJECT')
            continue
        for i, ep in enumerate(endpoints):
            sep = _chain("KUBE-SEP", name, proto, ep)
            remaining = len(endpoints) - i
            if remaining > 1:
                lines.append(f'-A {svc_chain} -m comment --comment "{name} -> {ep}" -m statistic --mode random '
                             f'--probability {1 / remaining:.11f} -j {sep}')
            else:
                lines.append(f'-A {svc_chain} -m comment --comment "{name} -> {ep}" -j {sep}')
            lines.append(f'-A {sep} -p {proto} -m comment --comment "{name}" -m {proto} -j DNAT --to-destination {ep}')
    lines.append("COMMIT")
    return lines


class ProxyScreen(TextScreen):
    def __init__(self, cluster: Any, node: str) -> None:
        super().__init__(f"kube-proxy rules · {node}")
        self.cluster = cluster
        self.node = node

    def on_mount(self) -> None:
        self.reload()
        self.set_interval(1.0, self.reload)

    def reload(self) -> None:
        proxy = (getattr(self.cluster, "proxies", None) or {}).get(self.node)
        if proxy is None:
            self.set_body(Text(f"no kube-proxy on node {self.node}", style="dim"))
            return
        state = []
        if not getattr(proxy, "running", True):
            state.append("stopped: rules frozen")
        if getattr(proxy, "partitioned", False):
            state.append("partitioned: rules frozen")
        text = Text("\n".join(iptables_lines(proxy.rules())))
        if state:
            text = Text("# " + "; ".join(state) + "\n", style="bold") + text
        self.set_body(text)
