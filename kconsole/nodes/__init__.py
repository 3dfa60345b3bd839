"""Simulated nodes: kubelets and kube-proxies that act only through the API server.

What the composition root (``kconsole/cluster.py``) uses:

* :func:`default_node_configs(workers, control_planes, *, zones=("zone-a", "zone-b", "zone-c"), cpu="4",
  memory="16Gi") -> list[NodeConfig]` — control-plane nodes ``control-plane-0..`` (``control-plane``
  when there is one) with the control-plane label and ``NoSchedule`` taint, then ``worker-1..``
  round-robin over the zones; pod CIDRs ``10.244.N.0/24`` and InternalIPs unique per node.
* :class:`NodeConfig` — name, cpu, memory, pods (110), ephemeral_storage, extended resources,
  labels, taints, pod_cidr, address, zone, region, control_plane, delay_factor (0 = instant pulls
  and starts), image_pull_factor.
* :class:`NodeFleet(client_for, clock, configs, *, rng, delay_factor=1.0, static_pod_status=None,
  proxy_pods=False) <kconsole.nodes.fleet.NodeFleet>` — ``client_for("system:node:<name>")`` is
  called once per node; with ``proxy_pods`` a node's kube-proxy runs while its ``kube-proxy-*``
  pod's container does (the addon);
  ``static_pod_status()`` maps a control-plane node name to ``{"etcd": running, "kube-apiserver": ..,
  "kube-scheduler": .., "kube-controller-manager": ..}``. ``async start()`` / ``async stop()``;
  ``kubelets: dict[str, Kubelet]``, ``proxies: dict[str, KubeProxy]``; ``logs(namespace, pod,
  container, follow, tail_lines) -> str | LogStream`` (the API server's pods/log source);
  ``exec(ns, pod, container, command, tty, stdin)``, ``attach(ns, pod, container, tty, stdin)`` and
  ``portforward(ns, pod)`` (its pods/exec, pods/attach and pods/portforward source,
  :mod:`kconsole.nodes.streaming`);
  ``async add_node(config)``, ``async remove_node(name)``. One pods informer, one nodes informer
  and one Services/EndpointSlices pair serve every node.
* :class:`Kubelet(client, clock, *, node, rng, static_pod_status=None, delay_factor=1.0,
  pod_informer=None, node_informer=None, objects=None) <kconsole.nodes.kubelet.Kubelet>` — standalone
  it watches its own pods and GETs its Node for each status report; the ConfigMaps, Secrets and
  claims its pods name come from ``objects`` (a ``PodObjects`` over a client that may list them: the
  Node authorizer lets no node identity list them cluster-wide, so a standalone kubelet needs one).
  ``async start()``, ``async stop()`` (crash-like), ``partition()`` / ``heal()``,
  ``set_pressure("memory"|"disk", on)``, ``slow_image_pulls(factor)``, per pod
  ``kill_container(ns, pod, container=None)``, ``crash_loop(ns, pod, on=True)``,
  ``fail_readiness(ns, pod, on=True)``, ``set_load(ns, pod, cpu_fraction)``; properties ``name``,
  ``running``, ``partitioned``, ``pods`` (``ns/name``), ``images``; ``logs(...)``.
* :class:`KubeProxy <kconsole.nodes.proxy.KubeProxy>` — ``rules() -> list[dict]``: per Service
  port ``{"service", "type", "clusterIP", "port", "protocol", "portName", "nodePort", "endpoints",
  "localOnly"}``.

Modules: config (node shapes), runtime (what a container does), images (pulls, sizes),
podworker (one pod's lifecycle and status), probes, logs, usage (CPU/memory for the HPA),
staticpods (control-plane mirror pods), link (the partitionable API connection), kubelet, proxy,
fleet.
"""

from kconsole.nodes.config import NodeConfig, default_node_configs
from kconsole.nodes.fleet import NodeFleet
from kconsole.nodes.kubelet import Kubelet
from kconsole.nodes.proxy import KubeProxy

__all__ = ["Kubelet", "KubeProxy", "NodeConfig", "NodeFleet", "default_node_configs"]
