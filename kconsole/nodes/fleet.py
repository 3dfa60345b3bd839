"""The node fleet: every simulated kubelet and kube-proxy of the process, sharing their watches.

Upstream each kubelet watches its own pods (``fieldSelector=spec.nodeName=<node>``) and each
kube-proxy watches all Services and EndpointSlices. With 1,000 nodes in one process that is 1,000
watches fanning out every pod change; instead the fleet keeps ONE pods informer (indexed by node)
and ONE Services/EndpointSlices pair (and one set of ConfigMap/Secret/claim caches for the pods'
references), and dispatches each pod change to the kubelet it is bound
to. Likewise ONE nodes informer stands in for each kubelet's informer on its own Node, which its
status loop reads instead of GETting the Node every 10 s (upstream's first try does the same).

Those shared watches stand in for the per-node watches the Node authorizer allows each kubelet (its
own pods by ``spec.nodeName``, its own Node, the objects its pods name), and the kube-proxies' watches
of Services and EndpointSlices. No node identity may list those cluster-wide, so they read as the
component user ``system:kconsole-node-agents`` (bound to a read-only role, never in ``system:nodes``);
a kubelet looks up only objects its own pods name. Every write, and every single-object read, still
goes out as the node's own user (``system:node:<name>``), one Client per node, so the Node authorizer
and NodeRestriction admission apply to each kubelet exactly as upstream.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from kconsole.client import Client, SharedInformer, StatusError, index_by_node_name
from kconsole.clock import Clock
from kconsole.nodes.config import NodeConfig
from kconsole.nodes.kubelet import NODE_INDEX, Kubelet
from kconsole.nodes.logs import LogFollower
from kconsole.nodes.network import Network, ServerConnection
from kconsole.nodes.streaming import AttachProcess, ExecProcess, PortForwarder
from kconsole.objects.podlog import LogOptions
from kconsole.nodes.proxy import KubeProxy, ServiceTable
from kconsole.nodes.volumes import PodObjects

Obj = dict[str, Any]
#: The user the shared read-only watches act as (see the module docstring).
AGENT_USER = "system:kconsole-node-agents"
#: Informers list in pages of this size (big fleets have many pods).
PAGE = 500


class NodeFleet:
    """Kubelets and kube-proxies for a list of node configs (see the package docstring)."""

    def __init__(self, client_for: Callable[[Any], Client], clock: Clock, configs: list[NodeConfig], *,
                 rng: random.Random, delay_factor: float = 1.0,
                 static_pod_status: Callable[[], dict[str, dict[str, bool]]] | None = None,
                 proxy_pods: bool = False, own_only: bool = False) -> None:
        """``own_only``: cache only this fleet's Nodes and the pods bound to them, as its kubelets' own
        watches (``metadata.name=<node>``, ``spec.nodeName=<node>``) would see them. A worker process
        sets it: nothing there serves another process's nodes, and a 5,000-node cluster's every Node
        and pod in each worker is gigabytes. The cluster's own fleet keeps all: the API server reaches
        pods (logs, dial) through it."""
        if delay_factor < 0:
            raise ValueError(f"node fleet: delay_factor must be >= 0, got {delay_factor}")
        dupes = sorted(n for n, k in Counter(c.name for c in configs).items() if k > 1)
        if dupes:
            raise ValueError(f"node fleet: duplicate node names: {', '.join(dupes)}")
        self.client_for = client_for
        self.clock = clock
        self.configs = list(configs)
        self.rng = rng
        self.delay_factor = delay_factor
        self.static_pod_status = static_pod_status
        #: Each node's kube-proxy is its kube-proxy-* pod (the addon), not a part of the machine.
        self.proxy_pods = proxy_pods
        self.kubelets: dict[str, Kubelet] = {}
        self.proxies: dict[str, KubeProxy] = {}
        self.started = False
        reader = client_for(AGENT_USER)
        self._names = {c.name for c in configs}
        self.pod_informer = SharedInformer(reader, "pods", indexers={NODE_INDEX: index_by_node_name}, clock=clock,
                                           keep=self._on_own_node if own_only else None)
        self.node_informer = SharedInformer(reader, "nodes", clock=clock, keep=self._is_own if own_only else None)
        self.service_informer = SharedInformer(reader, "services", clock=clock)
        self.slice_informer = SharedInformer(reader, "endpointslices", clock=clock)
        self.objects = PodObjects(reader, clock)
        self.table = ServiceTable(self.service_informer, self.slice_informer)
        self.network = Network(self.service_informer, self.slice_informer, self.pod_informer, self._rules,
                               self._access_log, random.Random(rng.random()), clock)
        self.pod_informer.add_event_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                            on_delete=self._pod_deleted)

    # ------------------------------------------------------------------ dispatch

    def _on_own_node(self, pod: Obj) -> bool:
        return (pod.get("spec") or {}).get("nodeName") in self._names

    def _is_own(self, node: Obj) -> bool:
        return node["metadata"].get("name") in self._names

    def _pod_added(self, pod: Obj) -> None:
        kubelet = self.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
        if kubelet is not None:
            kubelet.on_pod(pod)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        self._pod_added(pod)

    def _pod_deleted(self, pod: Obj) -> None:
        kubelet = self.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
        if kubelet is not None:
            kubelet.on_pod_deleted(pod)

    # ------------------------------------------------------------------ lifecycle

    def _static_for(self, name: str) -> Callable[[], dict[str, bool]] | None:
        source = self.static_pod_status
        if source is None:
            return None
        return lambda: source().get(name, {})

    def _build(self, config: NodeConfig) -> Kubelet:
        if config.name in self.kubelets:
            raise ValueError(f"node fleet: node {config.name!r} already exists")
        kubelet = Kubelet(self.client_for(f"system:node:{config.name}"), self.clock, node=config,
                          rng=random.Random(self.rng.random()),
                          static_pod_status=self._static_for(config.name) if config.control_plane else None,
                          delay_factor=self.delay_factor, pod_informer=self.pod_informer,
                          node_informer=self.node_informer, objects=self.objects)
        proxy = KubeProxy(config.name, self.table, as_pod=self.proxy_pods)
        kubelet.partition_listeners.append(proxy.set_partitioned)
        if self.proxy_pods:
            kubelet.container_listeners.append(proxy.container_changed)
        kubelet.network = self.network
        self.kubelets[config.name] = kubelet
        self.proxies[config.name] = proxy
        return kubelet

    async def start(self) -> None:
        if self.started:
            return
        self.started = True
        informers = (self.pod_informer, self.node_informer, self.service_informer, self.slice_informer)
        for informer in informers:
            await informer.start()
        await asyncio.gather(*(i.wait_synced() for i in informers))
        await self.objects.start()
        kubelets = [self._build(c) for c in self.configs if c.name not in self.kubelets]
        await asyncio.gather(*(k.start() for k in kubelets))

    async def stop(self) -> None:
        if not self.started:
            return
        self.started = False
        await asyncio.gather(*(k.stop() for k in self.kubelets.values()), return_exceptions=True)
        for proxy in self.proxies.values():
            await proxy.stop()
        for informer in (self.pod_informer, self.node_informer, self.service_informer, self.slice_informer):
            await informer.stop()
        await self.objects.stop()

    async def add_node(self, config: NodeConfig) -> Kubelet:
        """A new node joins: its kubelet registers and starts taking pods."""
        kubelet = self._build(config)
        self.configs.append(config)
        self._names.add(config.name)
        if self.started:
            await kubelet.start()
        return kubelet

    async def remove_node(self, name: str) -> None:
        """The node's machine goes away (kubelet and kube-proxy stop). The Node object stays, as
        with a powered-off VM, until someone deletes it (``kubectl delete node``)."""
        kubelet = self.kubelets.pop(name, None)
        if kubelet is None:
            raise LookupError(f"node fleet: no node named {name!r}")
        await kubelet.stop()
        proxy = self.proxies.pop(name, None)
        if proxy is not None:
            await proxy.stop()
        self.configs = [c for c in self.configs if c.name != name]
        self._names.discard(name)

    # ------------------------------------------------------------------ the pod network

    def _rules(self, node: str) -> list[Obj]:
        proxy = self.proxies.get(node)
        return proxy.rules() if proxy is not None else []

    def _access_log(self, pod: Obj, container: str, line: str) -> None:
        """A simulated server logs a request it answered, on whichever node runs it."""
        kubelet = self.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
        worker = kubelet.workers.get(pod["metadata"].get("uid") or "") if kubelet is not None else None
        c = worker.container(container) if worker is not None and hasattr(worker, "container") else None
        if c is not None and c.log is not None:
            c.log.write(line)

    # ------------------------------------------------------------------ pods/log, exec, attach

    def kubelet_endpoint(self, node: str, path: str) -> str | dict[str, Any] | None:
        """The API server's nodes/<name>/proxy source: the node's kubelet, None when no machine runs it."""
        kubelet = self.kubelets.get(node)
        return kubelet.endpoint(path) if kubelet is not None else None

    def logs(self, namespace: str, pod: str, container: str, options: LogOptions) -> str | LogFollower | None:
        """The API server's pods/log source: the log of the container on the node running it."""
        obj = self.pod_informer.get_by_name(namespace, pod)
        node = ((obj or {}).get("spec") or {}).get("nodeName") or ""
        if obj is None:
            raise StatusError.bad_request(f'pod "{pod}" is not running on any node yet')
        if not node:
            raise StatusError.bad_request(f'container "{container}" in pod "{pod}" is waiting to start: '
                                          "pod is not scheduled")
        kubelet = self.kubelets.get(node)
        if kubelet is None:
            return None
        try:
            return kubelet.logs(namespace, pod, container, options)
        except LookupError:
            raise StatusError.bad_request(f'container "{container}" in pod "{pod}" is waiting to start: '
                                          "ContainerCreating") from None

    def _kubelet_for(self, namespace: str, pod: str) -> Kubelet:
        obj = self.pod_informer.get_by_name(namespace, pod)
        node = ((obj or {}).get("spec") or {}).get("nodeName") or ""
        kubelet = self.kubelets.get(node)
        if kubelet is None:
            raise StatusError.internal(f"error dialing backend: dial tcp: lookup {node or pod}: no such host")
        return kubelet

    def exec(self, namespace: str, pod: str, container: str, command: list[str], tty: bool,
             stdin: bool) -> ExecProcess:
        """The API server's pods/exec source: the node's kubelet starts the process."""
        return self._kubelet_for(namespace, pod).exec(namespace, pod, container, command, tty=tty, stdin=stdin)

    def attach(self, namespace: str, pod: str, container: str, tty: bool, stdin: bool) -> AttachProcess:
        """The API server's pods/attach source."""
        return self._kubelet_for(namespace, pod).attach(namespace, pod, container, tty=tty, stdin=stdin)

    def dial(self, address: str, port: int) -> ServerConnection | str:
        """The API server's pod network (pods/proxy, services/proxy): a connection to ``address:port``
        from the control plane, or the dial's error (nothing at that address times out, a port nothing
        listens on refuses)."""
        pod = self.network.pod_at(address)
        if pod is None:  # a sandbox still starting refuses; an address no sandbox holds does not answer
            starting = any((p.get("status") or {}).get("podIP") == address
                           and (p.get("status") or {}).get("phase") == "Pending" for p in self.pod_informer.list())
            return "connect: connection refused" if starting else "i/o timeout"
        conn = self.network.connect(pod, port, self._control_plane_ip())
        return conn if conn is not None else "connect: connection refused"

    def _control_plane_ip(self) -> str:
        """Where the API server's connections come from: its node's address."""
        return next((k.node_ip for k in self.kubelets.values() if k.config.control_plane),
                    next((k.node_ip for k in self.kubelets.values()), "127.0.0.1"))

    def portforward(self, namespace: str, pod: str) -> PortForwarder:
        """The API server's pods/portforward source."""
        return self._kubelet_for(namespace, pod).portforward(namespace, pod)
