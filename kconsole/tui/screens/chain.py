"""The chain view: one Deployment through its ReplicaSets, their Pods, each Pod's scheduling
attempts and kubelet starts, with the resourceVersion and the event of every step.

Everything comes from the console's informer caches (Deployments and ReplicaSets are watched
from the moment the view opens) and is redrawn once a second while it is open.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from kconsole.objects.printers import parse_time
from kconsole.tui.model import ClusterModel, event_time
from kconsole.tui.screens.base import TextScreen

Obj = dict[str, Any]


def _owned_by(items: list[Obj], uid: str) -> list[Obj]:
    return sorted((o for o in items if any(r.get("uid") == uid for r in (o.get("metadata") or {}).get(
        "ownerReferences") or ())), key=lambda o: parse_time(o["metadata"].get("creationTimestamp")) or 0.0)


def _rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


class ChainScreen(TextScreen):
    def __init__(self, model: ClusterModel, namespace: str, deployment: str) -> None:
        super().__init__(f"Chain · Deployment {namespace}/{deployment}")
        self.model = model
        self.namespace = namespace
        self.deployment = deployment
        self.deployments = model.watch("deployments")
        self.replicasets = model.watch("replicasets")

    def on_mount(self) -> None:
        self.reload()
        self.set_interval(1.0, self.reload)

    def _events(self, lines: Text, obj: Obj, indent: str) -> None:
        for ev in sorted(self.model.events_for(obj), key=event_time):
            src = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or ""
            style = "bold red" if ev.get("type") == "Warning" else "dim"
            count = f" x{ev['count']}" if (ev.get("count") or 1) > 1 else ""
            lines.append(f"{indent}· {ev.get('reason')}{count} ({src}) rv {_rv(ev)}: {ev.get('message', '')}\n",
                         style=style)

    def chain_text(self) -> Text:
        lines = Text()
        dep = self.deployments.informer.get_by_name(self.namespace, self.deployment)
        if dep is None:
            synced = self.deployments.informer.has_synced
            lines.append("loading…" if not synced else f"Deployment {self.namespace}/{self.deployment} not found")
            return lines
        spec, status = dep.get("spec") or {}, dep.get("status") or {}
        lines.append(f"Deployment {self.namespace}/{self.deployment}", style="bold")
        lines.append(f"  rv {_rv(dep)}  generation {dep['metadata'].get('generation')}  replicas "
                     f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)} ready\n")
        self._events(lines, dep, "  ")
        pods_watched = self.model.watched.get("pods")
        pods = pods_watched.informer.list_by_index("namespace", self.namespace) if pods_watched else []
        decisions_w = self.model.watched.get("schedulingdecisions.kconsole.dev")
        decisions = decisions_w.informer.list_by_index("namespace", self.namespace) if decisions_w else []
        for rs in _owned_by(self.replicasets.informer.list_by_index("namespace", self.namespace), dep["metadata"]["uid"]):
            rss = rs.get("status") or {}
            lines.append(f"  └ ReplicaSet {rs['metadata']['name']}", style="bold")
            lines.append(f"  rv {_rv(rs)}  revision "
                         f"{(rs['metadata'].get('annotations') or {}).get('deployment.kubernetes.io/revision', '?')}  "
                         f"{rss.get('readyReplicas', 0)}/{(rs.get('spec') or {}).get('replicas', 0)} ready\n")
            self._events(lines, rs, "      ")
            for pod in _owned_by(pods, rs["metadata"]["uid"]):
                pstatus = pod.get("status") or {}
                node = (pod.get("spec") or {}).get("nodeName") or "<unscheduled>"
                lines.append(f"      └ Pod {pod['metadata']['name']}", style="bold")
                lines.append(f"  rv {_rv(pod)}  {pstatus.get('phase', 'Pending')} on {node}\n")
                mine = sorted((d for d in decisions if (d.get("spec") or {}).get("pod") == pod["metadata"]["name"]),
                              key=lambda d: (d.get("spec") or {}).get("attempt", 0))
                for d in mine:
                    ds = d.get("status") or {}
                    nodes = ds.get("nodes") or {}
                    lines.append(f"          ⋯ scheduling attempt {(d.get('spec') or {}).get('attempt')}: "
                                 f"{ds.get('result')} → {ds.get('node') or '-'} "
                                 f"({nodes.get('feasible', '?')}/{nodes.get('evaluated', '?')} feasible) rv {_rv(d)}\n")
                self._events(lines, pod, "          ")
        return lines

    def reload(self) -> None:
        self.set_body(self.chain_text())
