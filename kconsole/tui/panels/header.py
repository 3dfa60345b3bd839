"""The header: cluster health at a glance and where kubectl can reach the same cluster.

Three lines that never wrap (a wrapped first line pushed the ``export KUBECONFIG=...`` line out of
the box on terminals under ~130 columns); on a narrow terminal the health figures come first and
the rest is cut with an ellipsis.

On a small terminal (the console's compact layout) the header carries what the hidden panels
would: a panel switcher (the panel shown, the others one click or ``tab`` away) and a strip of what
matters most (quorum, leaders, pending pods, active faults)."""

from __future__ import annotations

import re

from rich.markup import escape
from textual.widgets import Static

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
        #: Shown as a badge: keys that change the cluster are off.
        self.readonly = False
        #: ``LIVE``, or where in the history the panels are (``at rev N · time · n behind``).
        self.where = "LIVE"
        #: Compact layout: (label, panel id, shown) per panel for the switcher; empty on the dashboard.
        self.switcher: list[tuple[str, str, bool]] = []

    def _quorum(self) -> str:
        """Quorum as the live members give it: alive of all, further failures tolerated."""
        q = self.model.quorum
        if q is None:
            return "etcd ?"
        if not q.ok:
            return f"etcd [$error]quorum LOST[/] {q.alive}/{q.members} alive, {q.needed} needed"
        tol = "[$warning]tolerates 0[/]" if q.failures_tolerated == 0 else f"tolerates {q.failures_tolerated}"
        return f"etcd [$success]quorum ok[/] {q.alive}/{q.members} alive, {tol}"

    def _etcd(self) -> str:
        q = self.model.quorum
        if q is None or not q.ok:
            return self._quorum()
        leader = next((st.name for st in self.model.etcd_members if st.is_leader), "none")
        return f"{self._quorum()} · leader {leader}"

    def _kubeconfig(self) -> str:
        kubeconfig = getattr(self.model.cluster, "kubeconfig_path", None)
        return (f"export KUBECONFIG={escape(str(kubeconfig))}" if kubeconfig
                else "kubectl: no HTTP front") + (f" · {escape(self.status)}" if self.status else "")

    def _badge(self, live: str = " [$success]LIVE[/]") -> str:
        where = live if self.where == "LIVE" else f" [reverse $warning] {escape(self.where)} [/]"
        return where + (" [reverse $warning] READ-ONLY [/]" if self.readonly else "")

    def compact_text(self) -> str:
        """Switcher, strip, leaders and clock, kubectl: four lines that stand in for the panels not shown."""
        m = self.model
        tabs = " ".join(f"[@click=app.show_panel('{pid}')][reverse b] {label} [/][/]" if shown
                        else f"[@click=app.show_panel('{pid}')]{label}[/]" for label, pid, shown in self.switcher)
        line1 = f"[b]kconsole[/]{self._badge(live='')} {tabs}"
        width = self.content_region.width
        if not width or _cells(line1) + 7 <= width:
            line1 += "  [dim]tab ⇥[/]"
        ready, total = m.node_counts()
        node_state = "$success" if ready == total else "$error"
        faults = len(m.active_faults())
        fault_text = f"[$error]faults {faults}[/]" if faults else "faults 0"
        pending = len(m.pending)
        pending_text = f"[$warning]pending {pending}[/]" if pending else "pending 0"
        line2 = f"{self._quorum()} · {fault_text} · {pending_text} · nodes [{node_state}]{ready}/{total} Ready[/]"
        leader = next((st.name for st in m.etcd_members if st.is_leader), "none")
        clock = m.clock
        speed = "paused" if clock.paused else f"×{clock.speed:g}"
        line3 = (f"leaders etcd {leader} · cm {m.leader_of('kube-controller-manager')} · "
                 f"sched {m.leader_of('kube-scheduler')} · {clock.datetime().strftime('%H:%M:%S')} {speed}")
        return f"{line1}\n{line2}\n{line3}\n{self._kubeconfig()}"

    def compose_text(self) -> str:
        if self.switcher:
            return self.compact_text()
        m = self.model
        ready, total = m.node_counts()
        node_state = "$success" if ready == total else "$error"
        phases = m.pod_phases()
        pods = " ".join(f"{p} {phases[p]}" for p in PHASE_ORDER if phases.get(p)) or "none"
        etcd = self._etcd()
        faults = len(m.active_faults())
        fault_text = f"[$error]faults {faults}[/]" if faults else "faults 0"
        leaders = f"cm {m.leader_of('kube-controller-manager')} · sched {m.leader_of('kube-scheduler')}"
        nodes = f"nodes [{node_state}]{ready}/{total} Ready[/]"
        line1 = f"[b]kconsole[/]{self._badge()} · {nodes} · pods {pods} · {etcd} · {leaders} · {fault_text}"
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
            line1 = f"[b]kconsole[/]{self._badge()} · {nodes} · {fault_text} · {etcd} · pods {pods}"
            line2 = f"{when} · {leaders} · {rates}"
        line3 = self._kubeconfig()
        return f"{line1}\n{line2}\n{line3}"

    def on_resize(self) -> None:
        self.text = ""
        self.sync()

    def sync(self) -> None:
        text = self.compose_text()
        if text != self.text:
            self.text = text
            self.update(text, layout=False)  # three lines in a fixed-height box: a layout pass would redo the screen
