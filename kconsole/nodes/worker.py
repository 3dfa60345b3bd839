"""A kubelet worker process: a share of the simulated nodes, reaching the API server over HTTPS.

``python -m kconsole.nodes.worker`` reads one JSON spec on stdin (server URL, CA, the bearer token
of each identity it acts as, the simulated time and speed, the node configs), runs a
:class:`~kconsole.nodes.fleet.NodeFleet` over one shared HTTPS connection pool with one Client per
identity, so every kubelet writes as its own ``system:node:<name>`` (Node authorizer and
NodeRestriction apply as in-process), prints ``ready`` once its nodes are registered, and runs until
stdin closes or SIGTERM. The spec holds tokens: it is never written to disk.
"""

from __future__ import annotations

import asyncio
import base64
import random
import signal
from dataclasses import asdict, fields
from typing import Any

from kconsole.client import Client
from kconsole.client.https import HTTPSEntry
from kconsole.client.kubeconfig import RestConfig
from kconsole.clock import RealClock
from kconsole.clockpipe import follow_stdin, read_spec
from kconsole.nodes.config import NodeConfig
from kconsole.nodes.fleet import AGENT_USER, NodeFleet


def spec_for(server: str, ca_pem: bytes | None, tokens: dict[str, str], now: float, speed: float, seed: int,
             configs: list[NodeConfig], *, delay_factor: float = 1.0, proxy_pods: bool = False) -> dict[str, Any]:
    """The JSON a worker reads on stdin."""
    return {"server": server, "ca": base64.b64encode(ca_pem).decode() if ca_pem else "", "tokens": tokens,
            "now": now, "speed": speed, "seed": seed, "delay_factor": delay_factor, "proxy_pods": proxy_pods,
            "nodes": [asdict(c) for c in configs]}


def identities(configs: list[NodeConfig]) -> list[str]:
    """Who a worker acts as: the fleet's shared reader, and each node."""
    return [AGENT_USER, *(f"system:node:{c.name}" for c in configs)]


async def serve(spec: dict[str, Any], pending: bytes = b"") -> None:
    clock = RealClock(float(spec["speed"]), start=float(spec["now"]))
    tokens: dict[str, str] = spec["tokens"]
    # Discovery goes out as the shared reader; every other request carries its Client's own token.
    rest = RestConfig(context="kubelet-worker", server=spec["server"], namespace="default",
                      ca_pem=base64.b64decode(spec["ca"]) if spec["ca"] else None, token=tokens[AGENT_USER])
    entry = HTTPSEntry(rest, clock)
    await entry.open()
    clients: dict[str, Client] = {}

    def client_for(user: Any) -> Client:
        name = user if isinstance(user, str) else user.name
        if name not in clients:
            if name not in tokens:
                raise KeyError(f"kubelet worker: no credentials for {name}")
            clients[name] = Client(entry, tokens[name], clock, user_agent="kubelet/kconsole-worker")
        return clients[name]

    known = {f.name for f in fields(NodeConfig)}
    configs = [NodeConfig(**{k: v for k, v in c.items() if k in known}) for c in spec["nodes"]]
    fleet = NodeFleet(client_for, clock, configs, rng=random.Random(int(spec["seed"])),
                      delay_factor=float(spec["delay_factor"]), proxy_pods=bool(spec["proxy_pods"]),
                      own_only=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    follower = loop.create_task(follow_stdin(clock, stop, pending), name="clock-follower")
    try:
        await fleet.start()
        print("ready", flush=True)
        await stop.wait()
    finally:
        follower.cancel()
        await fleet.stop()
        await entry.close()


def main() -> int:
    spec, pending = read_spec()
    asyncio.run(serve(spec, pending))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
