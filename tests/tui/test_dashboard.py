"""Pilot tests of the dashboard over a real cluster (virtual clock, seed 1): every panel and key."""

from __future__ import annotations

from typing import Any

import pytest

from kconsole.api.types import UserInfo
from kconsole.client import Client, StatusError
from kconsole.cluster import ADMIN
from kconsole.objects.schedulingdecision import node_rows
from kconsole.tui.app import ConsoleApp
from kconsole.tui.screens import (
    ApiLogScreen,
    ChainScreen,
    ChoiceScreen,
    ConfirmScreen,
    DescribeScreen,
    HelpScreen,
    MatrixScreen,
    ProxyScreen,
    YamlScreen,
)

from tui_helpers import until

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: Small enough to keep each full-screen render cheap, wide enough for every column asserted.
SIZE = (120, 36)


def pod(name: str, cpu: str = "100m", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                     "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}}


def cells(app: ConsoleApp) -> list[tuple[str, ...]]:
    return [r.cells for r in app.resources.table.rows]


async def ready(app: ConsoleApp, clock: Any, pilot: Any) -> None:
    await until(clock, lambda: app.ready, pilot)
    await until(clock, lambda: any("etcd-control-plane-0" in r.key for r in app.resources.table.rows), pilot)
    await app.sample_now()


async def type_in(pilot: Any, text: str) -> None:
    """Fill the open prompt (typing the first character for real) and submit it."""
    from textual.widgets import Input

    field = pilot.app.screen.query_one(Input)
    field.value = ""
    await pilot.press(text[0] if text[0].isalnum() else {"-": "minus", "/": "slash"}.get(text[0], text[0]))
    field.value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_dashboard_panels_show_the_cluster(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        header = app.header.text
        assert "nodes [$success]5/5 Ready" in header
        assert "etcd [$success]quorum ok[/] 3/3 alive, tolerates 1" in header
        assert "leaders etcd etcd-" in header
        assert "cm control-plane-" in header and "sched control-plane-" in header
        # Resources: kubectl's pod columns with the namespace column for all namespaces.
        assert app.resources.table.columns == ("Namespace", "Name", "Ready", "Status", "Restarts", "Age")
        def system() -> list[Any]:
            return [r for r in app.resources.table.rows if r.cells[0] == "kube-system"]

        # The addons' pods (CoreDNS, kube-proxy on every node) start after the static pods show.
        await until(clock, lambda: all(r.state == "running" for r in system()), pilot)
        names = [r.cells[1] for r in system()]
        assert sum(n.startswith("kube-proxy-") for n in names) == 5 and sum(n.startswith("coredns-") for n in names) == 2
        # etcd: three members, one leader, quorum line.
        assert len(app.etcd.table.rows) == 3
        assert sum(r.cells[4] == "true" for r in app.etcd.table.rows) == 1
        assert "quorum ok: 3 alive / 2 needed / tolerates 1" in app.etcd.quorum_line()
        # Leases: both leaders and the node heartbeats.
        lease_rows = {r.cells[0]: r for r in app.leases.table.rows}
        assert lease_rows["kube-system/kube-scheduler"].cells[1].endswith("_kube-scheduler")
        assert lease_rows["node leases"].cells[1] == "5 fresh, 0 stale"
        # Events: newest first by time.
        times = [app.model.watched["events"].informer.get(r.key) for r in app.events_panel.table.rows]
        from kconsole.tui.model import event_time
        assert [event_time(e) for e in times] == sorted((event_time(e) for e in times), reverse=True)
        assert app.manifests.table.empty_text == "folder sync is not running"


async def test_kind_switch_filter_namespace_sort(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("colon")
        await type_in(pilot, "no")
        assert app.resources.group_resource == "nodes"
        assert app.resources.table.columns[:3] == ("Name", "Status", "Roles")
        assert len(app.resources.table.rows) == 5
        await pilot.press("colon")
        await type_in(pilot, "nosuchkind")
        assert app.resources.group_resource == "nodes"  # unchanged, and the console still runs
        assert any("nosuchkind" in n.message for n in app._notifications)

        await pilot.press("colon")
        await type_in(pilot, "po")
        await pilot.press("slash")
        await type_in(pilot, "scheduler")
        assert cells(app) and all("scheduler" in row[1] for row in cells(app))
        await pilot.press("slash")
        await type_in(pilot, "re:^etcd-control-plane-[01]$")
        assert [row[1] for row in cells(app)] == ["etcd-control-plane-0", "etcd-control-plane-1"]
        await pilot.press("slash")
        await type_in(pilot, "re:[")
        assert any("regex" in n.message for n in app._notifications)
        await pilot.press("slash")
        await type_in(pilot, "-l component=etcd")
        assert sorted(row[1] for row in cells(app)) == [f"etcd-control-plane-{i}" for i in range(3)]
        await pilot.press("slash")
        await type_in(pilot, "!-l component=etcd")
        assert cells(app) and not any(row[1].startswith("etcd-") for row in cells(app))
        await pilot.press("slash")
        await type_in(pilot, "!scheduler")
        assert cells(app) and not any("scheduler" in row[1] for row in cells(app))
        assert any(row[1].startswith("etcd-") for row in cells(app))
        every_pod = len(app.model.watched["pods"].informer)
        await pilot.press("escape")  # clears the filter
        assert len(cells(app)) == every_pod

        await pilot.press("n")
        await type_in(pilot, "kube-node-lease")
        assert app.resources.namespace == "kube-node-lease"
        assert app.resources.table.columns[0] == "Name" and cells(app) == []
        assert app.resources.table.empty_text == "No resources found in kube-node-lease namespace."
        await pilot.press("0")
        assert app.resources.namespace is None and len(cells(app)) == every_pod

        await pilot.press("s")
        await pilot.press("s")  # sort by NAME
        names = [row[1] for row in cells(app)]
        assert names == sorted(names)
        await pilot.press("S")
        assert [row[1] for row in cells(app)] == sorted(names, reverse=True)


async def test_rows_marked_when_added_modified_deleted(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        rebuilds = app.resources.rebuilds
        await admin.create(pod("web"))
        await until(clock, lambda: app.resources.table.index_of("default/web") is not None, pilot, step=0.1)
        row = app.resources.table.rows[app.resources.table.index_of("default/web")]
        assert row.mark == "added"
        # Changes move single rows into place; the table is never rebuilt for them.
        assert app.resources.rebuilds == rebuilds and app.resources.updates > 0
        keys = [r.key for r in app.resources.table.rows]
        assert keys == sorted(keys)
        await pilot.press("s", "s", "S")  # by NAME, descending
        await admin.create(pod("aaa-first"))
        await admin.create(pod("zzz-last"))
        await until(clock, lambda: app.resources.table.index_of("default/zzz-last") is not None
                    and app.resources.table.index_of("default/aaa-first") is not None, pilot, step=0.1)
        names = [r.cells[1] for r in app.resources.table.rows]
        assert names == sorted(names, reverse=True) and names[0] == "zzz-last"
        assert app.resources.table.rows[app.resources.table.index_of("default/aaa-first")].cells[1] == "aaa-first"
        for name in ("aaa-first", "zzz-last"):
            await admin.delete("pods", name, "default", grace_period_seconds=0)
        watched = app.resources.watched
        assert watched is not None
        watched.marks.clear()
        await admin.patch("pods", "web", {"metadata": {"labels": {"tier": "x"}}}, "default")
        await until(clock, lambda: watched.mark("default/web") == "modified", pilot, step=0.1)
        await admin.delete("pods", "web", "default", grace_period_seconds=0)
        await until(clock, lambda: watched.mark("default/web") == "deleted", pilot, step=0.1)
        idx = app.resources.table.index_of("default/web")
        assert idx is not None and app.resources.table.rows[idx].mark == "deleted"
        # Marks fade: make the wall clock read three seconds later.
        later = watched.wall() + 3.0
        watched.wall = lambda: later
        app.render_pending()
        assert app.resources.table.index_of("default/web") is None


async def test_row_count_in_the_title_follows_at_most_once_a_second(cluster: Any) -> None:
    from kconsole.tui.panels.resources import TITLE_INTERVAL

    c, clock = cluster
    admin = c.api_client(ADMIN)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.resources
        wall = [1000.0]
        panel.wall = lambda: wall[0]
        await ready(app, clock, pilot)
        wall[0] += TITLE_INTERVAL

        def count() -> int:
            return int(panel.border_title.split("[", 1)[1].split("]", 1)[0])

        async def shown(name: str) -> None:
            await until(clock, lambda: panel.table.index_of(f"default/{name}") is not None, pilot, step=0.1)

        await admin.create(pod("title-a", cpu="10m"))
        await shown("title-a")
        assert count() == len(panel.table.rows)  # the first change in a while retitles at once
        await admin.create(pod("title-b", cpu="10m"))
        await shown("title-b")
        assert count() == len(panel.table.rows) - 1  # a second one within the interval waits
        wall[0] += TITLE_INTERVAL
        app.render_pending()
        assert count() == len(panel.table.rows)  # the next refresh after the interval catches up
        panel.set_filter("title-")  # what is shown changed: the title says so at once
        assert panel.border_title.endswith("[2] /title-")
        for name in ("title-a", "title-b"):
            await admin.delete("pods", name, "default", grace_period_seconds=0)


async def test_describe_yaml_events_and_chain(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": "web", "namespace": "default"},
                        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                                 "template": {"metadata": {"labels": {"app": "web"}},
                                              "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        pods = app.model.watched["pods"]
        await until(clock, lambda: sum(1 for p in pods.informer.list()
                                       if p["metadata"]["name"].startswith("web-")
                                       and p.get("status", {}).get("phase") == "Running") == 2, pilot, limit=120)
        await pilot.press("slash")
        await type_in(pilot, "web-")
        assert len(cells(app)) == 2
        await pilot.press("d")
        assert isinstance(app.screen, DescribeScreen)
        await until(clock, lambda: app.screen.chain is not None, pilot, step=0.1)
        assert app.screen.chain[0].startswith("ReplicaSet default/web-")
        assert app.screen.chain[1].startswith("Deployment default/web")
        assert any(e.get("reason") == "Scheduled" for e in app.screen.events)
        await pilot.press("escape")
        await pilot.press("y")
        assert isinstance(app.screen, YamlScreen)
        # kubectl get -o yaml's layout: keys sorted at every level.
        lines = app.screen.plain_text().splitlines()
        top = [line.split(":")[0] for line in lines if line and not line.startswith(" ")]
        block = lines[lines.index("metadata:") + 1:lines.index("spec:")]
        meta = [line.strip().split(":")[0] for line in block if line[2] != " " and line[2] != "-"]
        assert top == ["apiVersion", "kind", "metadata", "spec", "status"] and meta == sorted(meta)
        assert {"creationTimestamp", "generateName", "name", "ownerReferences", "uid"} <= set(meta)
        await pilot.press("escape")
        # Events of the selected pod only.
        await pilot.press("E")
        selected = app.resources.selected()
        assert selected is not None
        rows = app.events_panel.table.rows
        assert rows and all(r.cells[3] == f"pod/{selected['metadata']['name']}" for r in rows)
        await pilot.press("E")
        assert app.events_panel.about is None
        # On an event row, E narrows to the events of the object that event is about.
        app.events_panel.table.focus()
        app.events_panel.table.select_key(next(r.key for r in app.events_panel.table.rows
                                               if r.cells[3] == f"pod/{selected['metadata']['name']}"))
        await pilot.press("E")
        rows = app.events_panel.table.rows
        assert app.events_panel.border_title == f"Events of pod/{selected['metadata']['name']}"
        assert len(rows) >= 2 and all(r.cells[3] == f"pod/{selected['metadata']['name']}" for r in rows)
        await pilot.press("E")
        app.resources.table.focus()
        # The chain view follows the Deployment down to the kubelet's starts.
        await pilot.press("c")
        await until(clock, lambda: isinstance(app.screen, ChainScreen), pilot, step=0.1)
        await until(clock, lambda: "Started" in app.screen.chain_text().plain, pilot)
        text = app.screen.chain_text().plain
        assert "Deployment default/web" in text and "└ ReplicaSet web-" in text
        assert "scheduling attempt 1: Scheduled" in text and "ScalingReplicaSet" in text
        await pilot.press("escape")


async def test_scheduling_pending_reason_and_matrix(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create(pod("big", cpu="64"))
    await admin.create(pod("small"))
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        sched = app.scheduling.table
        await until(clock, lambda: any(r.key == "pending:default/big" and "Insufficient cpu" in r.cells[6]
                                       for r in sched.rows), pilot)
        row = next(r for r in sched.rows if r.key == "pending:default/big")
        assert row.cells[6].startswith("0/5 nodes are available:")
        await until(clock, lambda: any(r.cells[0] == "default/small" and r.cells[2] == "Scheduled"
                                       for r in sched.rows), pilot)
        app.scheduling.table.focus()
        target = next(r.key for r in sched.rows if r.cells[0] == "default/small" and r.cells[2] == "Scheduled")
        sched.select_key(target)
        await pilot.press("enter")
        assert isinstance(app.screen, MatrixScreen)
        matrix = app.screen.table.rows
        columns = app.screen.table.columns
        winners = [r for r in matrix if r.cells[columns.index("Winner")] == "← winner"]
        assert len(winners) == 1
        record = app.screen.record
        rejected = [r for r in matrix if r.state == "failed"]
        assert len(rejected) == sum(not row["passed"] for row in node_rows(record))
        # The tainted control-plane nodes are shown with the plugin that turned them away.
        assert {r.key for r in rejected} >= {"control-plane-0", "control-plane-1", "control-plane-2"}
        assert all(r.cells[-1].startswith("TaintToleration: ") for r in rejected if r.key.startswith("control-plane"))
        assert len(matrix) - len(rejected) == record["status"]["nodes"]["feasible"]
        assert all(r.cells[-1] == "passed" and r.cells[1].isdigit() for r in matrix if r.state != "failed")
        # v shows each score as raw/normalised/weighted.
        await pilot.press("v")
        assert all("/" in r.cells[3] for r in app.screen.table.rows if r.state != "failed")
        await pilot.press("escape")


async def test_api_log_proxy_help_and_maximise(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    nobody = Client(c.api, c.token_for(UserInfo("nobody")), clock)
    with pytest.raises(StatusError):
        await nobody.list("secrets", "kube-system")
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("a")
        assert isinstance(app.screen, ApiLogScreen)
        denied = [r for r in app.screen.table.rows if r.cells[1] == "nobody"]
        assert denied and denied[0].cells[5] == "403" and denied[0].cells[7] == "authorization"
        await pilot.press("x")
        assert all(int(r.cells[5]) >= 400 for r in app.screen.table.rows)
        await pilot.press("escape")

        await pilot.press("colon")
        await type_in(pilot, "no")
        app.resources.table.select_key("worker-1")
        # The node's rules are its kube-proxy pod's (the addon): they exist once that pod runs.
        await until(clock, lambda: c.proxies["worker-1"].running, pilot)
        await pilot.press("p")
        assert isinstance(app.screen, ProxyScreen)
        body = app.screen.plain_text()
        assert "KUBE-SERVICES" in body and "default/web" in body
        await pilot.press("escape")

        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")

        await pilot.press("z")
        assert app.screen.maximized is app.resources
        await pilot.press("z")
        assert app.screen.maximized is None
        await pilot.press("tab")
        await pilot.press("z")
        assert app.screen.maximized is app.events_panel
        await pilot.press("escape")
        assert app.screen.maximized is None


async def test_fault_keys_confirm_apply_and_heal(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create(pod("victim"))
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        if getattr(c, "faults", None) is None:
            pytest.fail("the console should have a fault catalog (cluster's or its own)")
        await until(clock, lambda: app.resources.table.index_of("default/victim") is not None, pilot)
        app.resources.table.select_key("default/victim")
        await pilot.press("ctrl+k")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # cancelled: nothing happens
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("ctrl+k")
        await pilot.press("y")
        await until(clock, lambda: app.resources.watched.mark("default/victim") == "deleted"
                    or app.resources.watched.informer.get("default/victim") is None, pilot)
        events = app.model.watched["events"].informer.list()
        await until(clock, lambda: any((e.get("source") or {}).get("component") == "kconsole-faults"
                                       for e in app.model.watched["events"].informer.list()), pilot)

        # A reversible fault from the menu on a node, listed in the Faults panel, then healed.
        await pilot.press("colon")
        await type_in(pilot, "no")
        app.resources.table.select_key("worker-1")
        await pilot.press("f")
        assert isinstance(app.screen, ChoiceScreen)
        options = [c[0] for c in app.screen.choices]
        assert "cordon\tworker-1" in options and "apiserver-latency\tapiserver" in options
        app.screen.dismiss("memory-pressure\tworker-1")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await until(clock, lambda: len(app.faults.table.rows) == 1, pilot)
        assert app.faults.table.rows[0].cells[1] == "memory-pressure"
        assert "faults 1" in app.header.text
        await pilot.press("H")
        await until(clock, lambda: len(app.faults.table.rows) == 0, pilot)
        del events

        # From the Events panel, the fault menu targets the object the selected event is about.
        def about_worker() -> str | None:
            for row in app.events_panel.table.rows:
                inv = (app.events_panel._objects.get(row.key) or {}).get("involvedObject") or {}
                if inv.get("kind") == "Node" and inv.get("name") == "worker-1":
                    return row.key
            return None

        await until(clock, lambda: about_worker() is not None, pilot)
        app.events_panel.table.focus()
        app.events_panel.table.select_key(about_worker() or "")
        await pilot.pause()
        assert app.selected_target() == ("Node", "worker-1")
        await pilot.press("f")
        assert isinstance(app.screen, ChoiceScreen)
        assert "cordon\tworker-1" in [c[0] for c in app.screen.choices]
        app.screen.dismiss(None)
        await pilot.pause()


async def test_readonly_disables_dangerous_keys(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        # A badge in the header says so before any key is pressed.
        assert "READ-ONLY" in app.header.text
        for key, what in (("f", "fault"), ("ctrl+k", "kill"), ("H", "heal all"), ("h", "heal"), ("C", "cordon")):
            await pilot.press(key)
            assert app.screen is app.screen_stack[0], key
            # Each disabled key says why in the status line instead of doing nothing.
            assert app.status_line.text.startswith(f"read-only: {what} (")
            assert "disabled (--readonly)" in app.status_line.text
        assert "read-only" in app.status_line.target and "f[/] fault" not in app.status_line.target
        assert app.check_action("fault_menu", ()) is None  # shown dimmed, and says why when pressed
        assert app.check_action("describe", ()) is True
        app.action_fault_menu()
        await pilot.pause()
        assert any("read-only" in n.message for n in app._notifications)
        await pilot.press("question_mark")
        text = app.screen.plain_text()
        assert "fault.menu" in text and "disabled (--readonly)" in text


async def test_keys_remapped_by_binding_id(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False, keymap_overrides={"resource.describe": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("x")
        assert isinstance(app.screen, DescribeScreen)
        await pilot.press("escape")
        await pilot.press("d")  # the old key no longer describes
        assert app.screen is app.screen_stack[0]


async def test_etcd_panel_shows_quorum_loss(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        members = c.etcd.members
        followers = [m for m in members if not m.is_leader]
        # Tolerance counts from the live members: with one of three down the next failure loses quorum.
        assert app.etcd.quorum_line().startswith("quorum ok: 3 alive / 2 needed / tolerates 1")
        assert "quorum ok[/] 3/3 alive, tolerates 1" in app.header.text
        await followers[0].stop()
        await clock.advance(3)
        await app.sample_now()
        assert app.etcd.quorum_line().startswith("quorum ok: 2 alive / 2 needed / tolerates 0")
        assert "quorum ok[/] 2/3 alive, [$warning]tolerates 0[/]" in app.header.text
        await followers[1].stop()
        await clock.advance(3)
        await app.sample_now()
        assert app.etcd.quorum_line().startswith("quorum LOST: 1 alive / 2 needed")
        assert "tolerates" not in app.etcd.quorum_line()
        assert "quorum LOST[/] 1/3 alive, 2 needed" in app.header.text
        stopped = [r for r in app.etcd.table.rows if r.cells[10] == "stopped"]
        assert len(stopped) == 2 and all(r.state == "failed" for r in stopped)
        assert all(r.cells[3:9] == ("-",) * 6 and r.cells[9] == "context deadline exceeded" for r in stopped)
        for m in followers:
            await m.start()
        await until(clock, lambda: (c.etcd.leader() is not None and all(not m.paused for m in members)), pilot)
        # A frozen leader still believes it leads; the panel must not show it as a second leader.
        frozen = c.etcd.leader()
        frozen.pause()
        for _ in range(60):
            await clock.advance(0.5)
            await app.sample_now()
            if any(m.is_leader for m in members if m is not frozen):
                break
        leaders = [r.cells[0] for r in app.etcd.table.rows if r.cells[4] == "true"]
        assert len(leaders) == 1
        assert [r.cells[4:10] for r in app.etcd.table.rows if r.cells[10] == "paused"] == [
            ("-", "-", "-", "-", "-", "context deadline exceeded")]
        frozen.resume()
        # 'd' on a member row: its whole status (not "nothing selected": members are not API objects).
        app.etcd.table.focus()
        app.etcd.table.select_key(frozen.name)
        await pilot.press("d")
        body = app.screen.plain_text()
        assert app.screen.title_text.startswith(f"etcd member {frozen.name} (127.0.0.1:")
        assert "raft_applied_index" in body and "quorum ok" in body
        await pilot.press("escape")
        # The panel sees quorum come back (and the module's shared cluster is whole again).
        for _ in range(60):
            await clock.advance(0.5)
            await app.sample_now()
            if "quorum ok" in app.etcd.quorum_line():
                break
        assert "quorum ok: 3 alive / 2 needed" in app.etcd.quorum_line()


async def test_vtable_draws_only_visible_rows() -> None:
    from textual.app import App

    from kconsole.tui.widgets import Row, VirtualTable

    class One(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield VirtualTable(id="t")

    app = One()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(VirtualTable)
        rows = [Row(f"k{i:05}", (f"pod-{i:05}", "Running", str(i)), "running") for i in range(10_000)]
        table.set_rows(("Name", "Status", "N"), rows)
        await pilot.pause()
        table.paints = 0
        table.painted.clear()
        table.refresh()
        await pilot.pause()
        assert 0 < table.paints <= 30
        table.focus()
        await pilot.press("end")
        await pilot.pause()
        assert "k09999" in table.painted and "k00000" not in table.visible_keys()


async def test_vtable_redraws_only_the_lines_an_edit_changed() -> None:
    from textual.app import App

    from kconsole.tui.widgets import Row, VirtualTable

    class One(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield VirtualTable(id="t")

    app = One()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(VirtualTable)
        rows = [Row(f"k{i:05}", (f"pod-{i:05}", "Running", "1"), "running", tag="1") for i in range(1000)]
        table.set_rows(("Name", "Status", "N"), rows)
        await pilot.pause()

        async def edit(*edits: tuple[str, int, Row]) -> int:
            table.paints = 0
            old = table.cursor_key
            for op, index, row in edits:
                getattr(table, f"{op}_row")(index, row) if op != "remove" else table.remove_row(index)
            table.commit_rows(old)
            await pilot.pause()
            return table.paints

        # A changed row on screen: that line alone is drawn again, with the new cells.
        assert await edit(("replace", 3, Row("k00003", ("pod-00003", "Failed", "1"), "failed", tag="2"))) == 1
        assert table.painted["k00003"] == "2"
        # Off screen: nothing is drawn.
        assert await edit(("replace", 500, Row("k00500", ("pod-00500", "Failed", "1"), "failed", tag="2"))) == 0
        # A row inserted above the bottom shifts every line below it: all lines on screen are drawn.
        assert await edit(("insert", 0, Row("a", ("a", "Running", "1"), "running"))) > 20
        # A cell wider than its column moves every column: all lines again, even from off screen.
        wide = Row("k00600", ("pod-00600", "CrashLoopBackOff", "1"), "failed", tag="2")
        assert await edit(("replace", 601, wide)) > 20


async def test_vtable_row_count_needs_no_layout_and_the_scrollbar_follows() -> None:
    from textual.app import App

    from kconsole.tui.widgets import Row, VirtualTable

    class One(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield VirtualTable(id="t")

    def row(i: int) -> Row:
        return Row(f"k{i:05}", (f"pod-{i:05}", "Running"), "running")

    app = One()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_rows(("Name", "Status"), [row(i) for i in range(5)])
        await pilot.pause()
        assert not table.show_vertical_scrollbar
        # From fitting to overflowing: the scrollbar appears (this one takes a layout pass).
        for i in range(5, 2000):
            table.insert_row(i, row(i))
        table.commit_rows(table.cursor_key)
        await pilot.pause()
        bar = table.vertical_scrollbar
        assert table.show_vertical_scrollbar and bar.window_virtual_size == 2001
        repaints = 0
        repaint = bar.refresh

        def counting(*a: Any, **kw: Any) -> Any:
            nonlocal repaints
            repaints += 1
            return repaint(*a, **kw)

        bar.refresh = counting  # type: ignore[method-assign]
        await pilot.pause()  # the layout passes the scrollbar's appearance asked for
        repaints = 0
        # One row more among 2,000: no layout pass, and a thumb that does not move is not redrawn.
        table.insert_row(2000, row(2000))
        table.commit_rows(table.cursor_key)
        assert not app.screen._layout_required
        await pilot.pause()
        assert bar.window_virtual_size == 2002 and repaints == 0
        # At the bottom, rows going away pull the view up with them and the thumb is redrawn.
        table.focus()
        await pilot.press("end")
        for i in range(2000, 1000, -1):
            table.remove_row(i)
        table.commit_rows(table.cursor_key)
        await pilot.pause()
        assert table.scroll_y == table.max_scroll_y and bar.window_virtual_size == 1002 and repaints > 0
        assert table.cursor_key in table.visible_keys()


async def test_live_console_draws_changes_in_batches_without_a_tick(cluster: Any) -> None:
    import asyncio

    c, clock = cluster
    admin = c.api_client(ADMIN)
    # No periodic tick during the test: only a change can refresh the screen.
    app = ConsoleApp(c, watch_themes=False, refresh_interval=3600, batch_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await until(clock, lambda: app.ready and app.resources.watched is not None
                    and app.resources.watched.informer.has_synced, pilot)
        refreshes = 0
        render = app.render_pending

        def counting(force: bool = False) -> int:
            nonlocal refreshes
            refreshes += 1
            return render(force)

        app.render_pending = counting  # type: ignore[method-assign]
        watched = app.resources.watched
        assert watched is not None
        events_before = watched.version
        names = [f"batch-{i:02}" for i in range(12)]
        await asyncio.gather(*(admin.create(pod(n, cpu="10m")) for n in names))
        table = app.resources.table
        for _ in range(200):
            if all(table.index_of(f"default/{n}") is not None for n in names):
                break
            await clock.advance(0.05)
            await pilot.pause(0.02)
        assert all(table.index_of(f"default/{n}") is not None for n in names)
        events = watched.version - events_before
        assert 0 < refreshes < events, (refreshes, events)
        for n in names:
            await admin.delete("pods", n, "default", grace_period_seconds=0)


async def test_vtable_columns_shrink_when_their_widest_rows_go() -> None:
    from textual.app import App

    from kconsole.tui.widgets import Row, VirtualTable

    class One(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield VirtualTable(id="t")

    app = One()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_rows(("Name", "Status"), [Row(f"k{i}", (f"pod-{i}", "Running")) for i in range(5)])
        assert table.widths == [5, 7]
        old = table.cursor_key
        table.insert_row(5, Row("long", ("a-much-longer-pod-name", "CrashLoopBackOff")))
        table.commit_rows(old)
        assert table.widths == [22, 16]
        # Another row as wide keeps the column wide until it goes too.
        table.replace_row(0, Row("k0", ("pod-0", "ImagePullBackOff")))
        table.commit_rows(old)
        table.remove_row(5)
        table.commit_rows(old)
        assert table.widths == [5, 16]
        table.replace_row(0, Row("k0", ("pod-0", "Running")))
        table.commit_rows(old)
        assert table.widths == [5, 7]
        await pilot.pause()
        assert table.virtual_size.width == 5 + 2 + 7
        # Re-sorting the same rows keeps the counts: the next removal still shrinks the column.
        table.set_rows(("Name", "Status"), list(reversed(table.rows)), keep_widths=True)
        old = table.cursor_key
        table.insert_row(0, Row("wide", ("x" * 30, "Running")))
        table.commit_rows(old)
        assert table.widths == [30, 7]
        table.remove_row(0)
        table.commit_rows(old)
        assert table.widths == [5, 7]


async def test_vtable_ages_move_with_time_alone() -> None:
    from textual.app import App

    from kconsole.tui.widgets import Row, VirtualTable

    class One(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield VirtualTable(id="t")

    app = One()
    now = [1000.0]
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(VirtualTable)
        table.age_column = 1
        table.now = lambda: now[0]
        rows = [Row("young", ("young", "5s"), born=995.0), Row("old", ("old", "2d"), born=1000.0 - 2 * 86400)]
        table.set_rows(("Name", "Age"), rows)
        await pilot.pause()
        assert "5s" in table.render_line(1).text
        table.paints = 0
        table.refresh_ages()  # nothing moved yet: nothing drawn
        await pilot.pause()
        assert table.paints == 0
        now[0] += 10
        table.refresh_ages()
        await pilot.pause()
        # Only the young row's age reads differently ten seconds later.
        assert table.paints == 1 and "15s" in table.render_line(1).text


async def test_marks_expire_by_when_they_were_last_set(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        watched = app.model.watched["pods"]
        watched.marks.clear()
        now = [100.0]
        watched.wall = lambda: now[0]

        def version(name: str, rv: str) -> dict[str, Any]:
            return {"metadata": {"namespace": "marks", "name": name, "resourceVersion": rv}}

        watched._on_update(version("a", "1"), version("a", "2"))
        now[0] = 101.0
        watched._on_update(version("b", "1"), version("b", "2"))
        now[0] = 101.5
        watched._on_update(version("a", "2"), version("a", "3"))  # a changed again, after b
        now[0] = 103.2
        watched.expire()
        assert watched.mark("marks/b") is None and watched.mark("marks/a") == "modified"
        now[0] = 103.6
        watched.expire()
        assert watched.mark("marks/a") is None and not watched.marks


async def test_manifest_errors_show_in_the_title_and_open_in_full(cluster: Any, tmp_path: Any) -> None:
    from kconsole.cluster import SYNC
    from kconsole.sync import ManifestSync
    from kconsole.tui.screens import ManifestScreen

    c, clock = cluster
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "good.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\n")
    bad = folder / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n"
                   "  annotations: {note: a long annotation that pushes nothing}\nspec:\n  containers: []\n")
    sync = ManifestSync(c.api_client(SYNC), folder, data_dir=tmp_path / "data", clock=clock, watch=False)
    await sync.start()
    c.sync = sync
    try:
        app = ConsoleApp(c, live=False, watch_themes=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, clock, pilot)
            # On 80x24 the panel has no room for rows: its title still says a file is broken.
            assert app.manifests.border_title == "Manifests [2] · 1 error"
            row = next(r for r in app.manifests.table.rows if r.key == "bad.yaml")
            assert row.cells[1:] == ("error", "0", '7:3: Pod "bad" is invalid: spec.containers: Required value')
            app.manifests.table.focus()
            app.manifests.table.select_key("bad.yaml")
            await pilot.press("enter")
            assert isinstance(app.screen, ManifestScreen)
            body = app.screen.plain_text()
            assert 'bad.yaml:7:3: Pod "bad" is invalid: spec.containers: Required value [Invalid 422]' in body
            assert "  7 │   containers: []\n    │   ^" in body
            await pilot.press("escape")
            await pilot.press("d")
            assert isinstance(app.screen, ManifestScreen)
            # Fixed on disk: the open view follows the file to what it applied.
            bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n")
            await sync.sync_now({"bad.yaml"})
            app.screen.refresh_body()
            body = app.screen.plain_text()
            assert "Status: applied" in body and "ConfigMap default/bad  uid " in body
            await pilot.press("escape")
            app.render_pending()
            assert app.manifests.border_title == "Manifests [2]"
    finally:
        await sync.stop()
        c.sync = None


async def test_every_offered_kind_name_switches_and_group_qualified_names_work(cluster: Any) -> None:
    from kconsole.tui.app import SHORT_KINDS

    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        # The ':' prompt and the palette offer these names: each must show its kind.
        for name in SHORT_KINDS:
            app.switch_kind_safely(name)
        await pilot.pause()
        assert [n.message for n in app._notifications] == []
        await pilot.press("colon")
        await type_in(pilot, "sec")
        assert app.resources.group_resource == "secrets"
        for name, shown in (("deployment.apps", "deployments.apps"), ("cronjob.v1.batch", "cronjobs.batch"),
                            ("Lease.coordination.k8s.io", "leases.coordination.k8s.io")):
            app.switch_kind_safely(name)
            assert app.resources.group_resource == shown, name
        app.switch_kind_safely("deployment.batch")
        await pilot.pause()
        assert app.resources.group_resource == "leases.coordination.k8s.io"
        assert [n.message for n in app._notifications] == [
            'the server doesn\'t have a resource type "deployment.batch"']


async def test_header_keeps_its_lines_on_a_narrow_terminal(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, clock, pilot)
        await pilot.pause()

        def header_lines(n: int = 3) -> list[str]:
            strips = app.screen._compositor.render_strips()
            return [strips[i].text.strip() for i in range(n)]

        # A small terminal: the panel switcher, the strip (quorum, faults, pending, nodes), the
        # leaders and the clock, and the kubectl line, each on its own line, uncut where it matters.
        first, second, third, fourth = header_lines(4)
        assert fourth.startswith("kubectl: no HTTP front"), (first, second, third, fourth)
        assert first.startswith("kconsole  pods  Events Scheduling Leases etcd Manifests Faults"), first
        pending = len(app.model.pending)  # earlier tests in this module may leave a pod unschedulable
        assert second == f"etcd quorum ok 3/3 alive, tolerates 1 · faults 0 · pending {pending} · nodes 5/5 Ready"
        assert third.startswith("leaders etcd etcd-") and "cm control-plane-" in third
        await pilot.resize_terminal(200, 45)
        await pilot.pause()
        first, second, third = header_lines()
        assert "sched control-plane-" in first and first.endswith("faults 0")
        assert second.startswith("req/s ") and third.startswith("kubectl: no HTTP front")


async def test_a_custom_resource_shows_its_printer_columns_and_is_offered_as_a_kind(cluster: Any) -> None:
    """A CRD applied while the console runs: ':wg' lists Widgets with the CRD's additionalPrinterColumns
    (as kubectl get does), and the palette offers the new kind."""
    from pathlib import Path

    import yaml

    from kconsole.tui.commands import ConsoleCommands

    c, clock = cluster
    admin = c.api_client(ADMIN)
    fixtures = Path(__file__).parent.parent / "crd" / "fixtures"
    crd = yaml.safe_load((fixtures / "crd.yaml").read_text())
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await admin.create(crd)
        await until(clock, lambda: "wg" in app.kinds(), pilot, step=0.1)
        await admin.create(yaml.safe_load((fixtures / "widget.yaml").read_text()))
        app.switch_kind_safely("wg")
        await until(clock, lambda: app.resources.table.index_of("default/w1") is not None, pilot, step=0.1)
        assert app.resources.group_resource == "widgets.example.com"
        # Ready is priority 1 (kubectl's -o wide); all namespaces are shown, so NAMESPACE leads.
        assert app.resources.table.columns == ("Namespace", "Name", "Size", "Color", "Age")
        row = app.resources.table.rows[app.resources.table.index_of("default/w1")]
        assert row.cells[:4] == ("default", "w1", "3", "blue")  # color defaulted by the schema
        offered = [title for title, _, _ in ConsoleCommands(app.screen).commands()]
        assert "Kind: wg" in offered
        await admin.delete("customresourcedefinitions", "widgets.example.com")
        await until(clock, lambda: "wg" not in app.kinds(), pilot, step=0.1, limit=120)
