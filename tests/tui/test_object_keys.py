"""Pilot tests of a k9s user's keys over a real cluster (virtual clock, seed 1): ``l`` logs, ``d``
describe, ``y`` YAML and its managedFields toggle, ``e`` edit through $EDITOR, ``ctrl+d`` delete,
``0``/``1``-``9`` namespace favourites, and read-only refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_dashboard import SIZE, ready, type_in
from tui_helpers import until

from kconsole.client import StatusError
from kconsole.cluster import ADMIN
from kconsole.tui.app import ConsoleApp
from kconsole.tui.favourites import FILE_NAME
from kconsole.tui.screens import ConfirmScreen, DescribeScreen, HelpScreen, YamlScreen
from kconsole.tui.screens.logs import LogsScreen

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: An $EDITOR that sets the Deployment's spec.replicas (the first ``replicas:`` under ``spec:``).
EDITOR = """
import sys
value, path = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\\n")
start = lines.index("spec:")
i = next(i for i in range(start, len(lines)) if lines[i].startswith("  replicas:"))
lines[i] = "  replicas: " + value
open(path, "w").write("\\n".join(lines))
"""


def messages(app: ConsoleApp) -> list[str]:
    return [n.message for n in app._notifications]


async def select(app: ConsoleApp, pilot: Any, kind: str, name: str) -> None:
    """Show ``kind`` and put the cursor on the row named ``name``."""
    await pilot.press("colon")
    await type_in(pilot, kind)
    await pilot.press("slash")
    await type_in(pilot, name)
    app.resources.table.select_key(next(r.key for r in app.resources.table.rows if r.key.endswith("/" + name)
                                        or r.key == name))


async def test_logs_follow_container_previous_and_wrap(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "talker", "namespace": "default"},
                        "spec": {"containers": [
                            {"name": "a", "image": "busybox",
                             "command": ["sh", "-c", "echo first; sleep 5; echo second; sleep infinity"]},
                            {"name": "b", "image": "busybox", "command": ["sh", "-c", "echo crashed; exit 1"]}]}})
    app = ConsoleApp(c, live=False, watch_themes=False, keymap_overrides={"logs.wrap": "W"})
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await until(clock, lambda: app.resources.table.index_of("default/talker") is not None, pilot)
        await select(app, pilot, "po", "talker")
        await pilot.press("l")
        screen = app.screen
        assert isinstance(screen, LogsScreen) and screen.container == "a" and screen.follow
        await until(clock, lambda: "first" in screen.text(), pilot, step=0.5)
        assert "second" not in screen.text()
        # Following: the line written five simulated seconds later arrives without a key.
        await until(clock, lambda: "second" in screen.text(), pilot, step=0.5)
        assert screen.text().splitlines() == ["first", "second"]
        await pilot.press("W")  # remapped by its binding id
        assert screen.wrap and screen.log_view.wrap
        await pilot.press("c")
        assert screen.container == "b"
        await until(clock, lambda: "crashed" in screen.text(), pilot, step=0.5)
        pods = app.model.watched["pods"]

        def restarted() -> bool:
            found = pods.informer.get_by_name("default", "talker") or {}
            return any(s.get("name") == "b" and s.get("restartCount", 0) >= 1
                       for s in (found.get("status") or {}).get("containerStatuses") or ())

        await until(clock, restarted, pilot)
        await pilot.press("p")
        assert screen.previous
        await until(clock, lambda: screen.state == "" and screen.text() == "crashed", pilot, step=0.5)
        await pilot.press("escape")
        assert app.screen is app.screen_stack[0]
        # l on anything but a pod says why it does nothing.
        await pilot.press("escape")  # clears the filter
        await pilot.press("colon")
        await type_in(pilot, "no")
        await pilot.press("l")
        assert app.screen is app.screen_stack[0]
        assert any(m.startswith("l shows pod logs; node/") and m.endswith(" is not a pod") for m in messages(app))


async def test_describe_is_kubectl_describe_and_yaml_hides_managed_fields(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await select(app, pilot, "no", "worker-1")
        await pilot.press("d")
        screen = app.screen
        assert isinstance(screen, DescribeScreen)
        await until(clock, lambda: screen.related, pilot, step=0.1)
        text = screen.plain_text()
        for section in ("Name:", "Roles:", "Conditions:", "Capacity:", "System Info:", "Non-terminated Pods:",
                        "Allocated resources:", "Lease:"):
            assert section in text, section
        assert "managedFields" not in text and "kube-proxy-" in text
        assert text.rstrip().splitlines()[-1].startswith(("Events:", "  Normal", "  Warning"))
        await pilot.press("escape")
        await pilot.press("y")
        yaml_screen = app.screen
        assert isinstance(yaml_screen, YamlScreen)
        assert "managedFields" not in yaml_screen.plain_text() and "managedFields hidden" in yaml_screen.title_text
        await pilot.press("m")
        assert "managedFields:" in yaml_screen.plain_text()
        await pilot.press("m")
        assert "managedFields" not in yaml_screen.plain_text()


async def test_edit_applies_and_keeps_a_refused_edit_for_retry(cluster: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ed", "namespace": "default"},
                        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "ed"}},
                                 "template": {"metadata": {"labels": {"app": "ed"}},
                                              "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("colon")
        await type_in(pilot, "deploy")
        await until(clock, lambda: app.resources.table.index_of("default/ed") is not None, pilot)
        await select(app, pilot, "deploy", "ed")
        monkeypatch.setenv("EDITOR", f"{sys.executable} {script} -1")
        await pilot.press("e")
        await until(clock, lambda: any("e reopens your edit" in m for m in messages(app)), pilot, step=0.1)
        refused = next(m for m in messages(app) if "e reopens your edit" in m)
        assert "spec.replicas" in refused and "Invalid value" in refused
        kept = app.kept_edits()["deployments.apps/default/ed"].text
        assert kept.startswith("# Please edit the object below.")
        assert '# deployments.apps "ed" was not valid:' in kept and "# * spec.replicas: Invalid value" in kept
        assert "  replicas: -1" in kept and "managedFields" not in kept
        # The retry opens the kept edit (errors on top) and sends the fixed value.
        monkeypatch.setenv("EDITOR", f"{sys.executable} {script} 3")
        await pilot.press("e")
        await until(clock, lambda: "deployment/ed edited" in messages(app), pilot, step=0.1)
        stored = await admin.get("deployments", "ed", "default")
        assert stored["spec"]["replicas"] == 3 and not app.kept_edits()
        # An editor that changes nothing: nothing is sent.
        monkeypatch.setenv("EDITOR", "true")
        await pilot.press("e")
        await until(clock, lambda: "Edit cancelled, no changes made." in messages(app), pilot, step=0.1)
        assert (await admin.get("deployments", "ed", "default"))["metadata"]["resourceVersion"] == \
            stored["metadata"]["resourceVersion"]


async def test_delete_asks_first(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "doomed", "namespace": "default"},
                        "data": {"a": "b"}})
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("colon")
        await type_in(pilot, "cm")
        await until(clock, lambda: app.resources.table.index_of("default/doomed") is not None, pilot)
        await select(app, pilot, "cm", "doomed")
        await pilot.press("ctrl+d")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Delete configmap/doomed in namespace default?" in app.screen.question
        await pilot.press("n")
        assert (await admin.get("configmaps", "doomed", "default"))["data"] == {"a": "b"}
        await pilot.press("ctrl+d")
        await pilot.press("y")
        await until(clock, lambda: 'configmaps "doomed" deleted' in messages(app), pilot, step=0.1)
        with pytest.raises(StatusError) as err:
            await admin.get("configmaps", "doomed", "default")
        assert err.value.code == 404


async def test_namespace_favourites_are_kept_in_the_data_folder(cluster: Any) -> None:
    c, clock = cluster
    stored = Path(c.data_dir) / FILE_NAME
    stored.unlink(missing_ok=True)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("1")
        assert app.resources.namespace is None
        assert any("no namespace on 1 yet" in m for m in messages(app))
        for ns in ("kube-system", "default"):
            await pilot.press("n")
            await type_in(pilot, ns)
        assert json.loads(stored.read_text())["namespaces"] == ["default", "kube-system"]
        await pilot.press("0")
        assert app.resources.namespace is None
        await pilot.press("2")
        assert app.resources.namespace == "kube-system"
        await pilot.press("n")
        await type_in(pilot, "default")  # already a favourite: the digits keep their namespaces
        assert app.favourites().names == ["default", "kube-system"]
    again = ConsoleApp(c, live=False, watch_themes=False)
    async with again.run_test(size=SIZE) as pilot:
        await ready(again, clock, pilot)
        await pilot.press("1")
        assert again.resources.namespace == "default"


async def test_readonly_refuses_edit_and_delete_and_help_lists_the_keys(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("e")
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert "read-only: edit (e) is disabled (--readonly)" in messages(app)
        assert "read-only: delete (ctrl+d) is disabled (--readonly)" in messages(app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.plain_text()
        for binding_id in ("resource.logs", "resource.edit", "resource.delete", "resource.describe", "resource.yaml",
                           "resource.all_namespaces", "namespace.favourite_1", "namespace.favourite_9",
                           "fault.kill", "logs.follow", "logs.container", "logs.previous", "logs.wrap",
                           "yaml.managed_fields"):
            assert binding_id in text, binding_id
        edit_line = next(line for line in text.splitlines() if "resource.edit" in line)
        assert "disabled (--readonly)" in edit_line


async def test_under_churn_panels_without_focus_wait_their_interval(cluster: Any) -> None:
    from kconsole.tui.app import BACKGROUND_INTERVAL

    c, clock = cluster
    admin = c.api_client(ADMIN)
    app = ConsoleApp(c, watch_themes=False, refresh_interval=3600, batch_delay=0.05)  # live: batches only
    async with app.run_test(size=SIZE) as pilot:
        await until(clock, lambda: app.ready and app.resources.watched is not None
                    and app.resources.watched.informer.has_synced, pilot)
        wall = [1000.0]
        app.wall = lambda: wall[0]
        app.resources.table.focus()
        app.render_pending(force=True)
        events_built, events = app.events_panel.rebuilds, app.model.watched["events"]
        version = events.version
        await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "churn", "namespace": "default"},
                            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
        for _ in range(200):  # the batches draw the focused panel; the Events panel waits
            if app.resources.table.index_of("default/churn") is not None and events.version != version:
                break
            await clock.advance(0.05)
            await pilot.pause(0.02)
        assert app.resources.table.index_of("default/churn") is not None and events.version != version
        assert app.events_panel.rebuilds == events_built
        wall[0] += BACKGROUND_INTERVAL
        app.render_pending()
        assert app.events_panel.rebuilds == events_built + 1
        await admin.delete("pods", "churn", "default", grace_period_seconds=0)
