"""The kube-proxy rules view writes chains as iptables-save shows kube-proxy's."""

from __future__ import annotations

import re

from kconsole.tui.screens.proxy import iptables_lines


def test_each_service_port_and_protocol_has_chains_of_its_own() -> None:
    """kube-dns serves 53 over UDP and TCP from the same pods: upstream names the chains after the
    port name and protocol, so the UDP and TCP DNAT rules never share a KUBE-SEP chain."""
    rules = [{"service": "kube-system/kube-dns", "type": "ClusterIP", "clusterIP": "10.96.0.10", "port": 53,
              "protocol": proto, "portName": name, "nodePort": None, "endpoints": ["10.244.3.2:53"],
              "localOnly": False} for name, proto in (("dns", "UDP"), ("dns-tcp", "TCP"))]
    lines = iptables_lines(rules)
    dnat = [line for line in lines if "DNAT" in line]
    chains = {re.match(r"-A (KUBE-SEP-\w+) -p (\w+)", line).groups() for line in dnat}  # type: ignore[union-attr]
    assert len(dnat) == 2 and len({chain for chain, _ in chains}) == 2
    assert {proto for _, proto in chains} == {"udp", "tcp"}
    services = [line for line in lines if line.startswith("-A KUBE-SERVICES")]
    assert len({line.rsplit("-j ", 1)[1] for line in services}) == 2
