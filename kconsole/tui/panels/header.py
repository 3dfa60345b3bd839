"""The header: cluster health at a glance and where kubectl can reach the same cluster.

Three lines that never wrap (a wrapped first line pushed the ``export KUBECONFIG=...`` line out of
the box on terminals under ~130 columns); on a narrow terminal the health figures come first and
the rest is cut with an ellipsis."""

from __future__ import annotations

import re

from rich.markup import escape
from textual.widgets import Static

from kconsole.tui import faultview
from kconsole.tui.model import ClusterModel
from kconsole.tui.widgets import sparkline

PHASE_ORDER = ("Running", "Pending", "Succeeded", "Failed", "Terminating", "Unknown")


def _cells(markup: str) -> int:
    """Width of a header line once its style tags are gone (the text between them has no brackets)."""
    return len(_TAG.sub("", markup))


_TAG = re.compile(r"\[/?[^\]]*\]")


class HeaderPanel(Static):
    DEFAULT_CSS = """
    HeaderPanel { height: 3; padding: 0 1; background: $panel; color: $foreground;
                  text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, model: ClusterModel, *, id: str | None = "header") -> None:
        super().__init__("kconsole · starting the cluster…", id=id, markup=True)
        self.model = model
        self.status = "starting the cluster…"
        self.text = ""

    def compose_text(self) -> str:
        m = self.model
        cluster = m.cluster
        ready, total = m.node_counts()
        node_state = "$success" if ready == total else "$error"
        phases = m.pod_phases()
        pods = " ".join(f"{p} {phases[p]}" for p in PHASE_ORDER if phases.get(p)) or "none"
        q = m.quorum
        if q is None:
            etcd = "etcd ?"
        else:
            leader = next((st.name for st in m.etcd_members if st.is_leader), "none")
            etcd = (f"etcd [$success]ok[/] leader {leader}" if q.ok
                    else f"etcd [$error]quorum lost[/] ({q.alive}/{q.needed})")
        faults = len(faultview.active_faults(cluster))
        fault_text = f"[$error]faults {faults}[/]" if faults else "faults 0"
        leaders = f"cm {m.leader_of('kube-controller-manager')} · sched {m.leader_of('kube-scheduler')}"
        nodes = f"nodes [{node_state}]{ready}/{total} Ready[/]"
        line1 = f"[b]kconsole[/] · {nodes} · pods {pods} · {etcd} · {leaders} · {fault_text}"
        clock = m.clock
        speed = "paused" if clock.paused else f"×{clock.speed:g}"
        when = f"{clock.datetime().strftime('%Y-%m-%d %H:%M:%S')} {speed}"
        rates = (f"req/s {sparkline(m.requests_per_s, 20)} {m.requests_per_s[-1]:.0f} · "
                 f"writes/s {sparkline(m.writes_per_s, 20)} {m.writes_per_s[-1]:.0f}")
        line2 = f"{rates} · {when}"
        width = self.content_region.width
        if width and _cells(line1) > width:
            # Narrow terminal: health first (the faults count must not be the part cut off), the
            # leaders move down beside the clock, and every line keeps its own row.
            line1 = f"[b]kconsole[/] · {nodes} · {fault_text} · {etcd} · pods {pods}"
            line2 = f"{when} · {leaders} · {rates}"
        kubeconfig = getattr(cluster, "kubeconfig_path", None)
        line3 = (f"export KUBECONFIG={escape(str(kubeconfig))}" if kubeconfig
                 else "kubectl: no HTTP front") + (f" · {escape(self.status)}" if self.status else "")
        return f"{line1}\n{line2}\n{line3}"

    def on_resize(self) -> None:
        self.text = ""
        self.sync()

    def sync(self) -> None:
        text = self.compose_text()
        if text != self.text:
            self.text = text
            self.update(text, layout=False)  # three lines in a fixed-height box: a layout pass would redo the screen
