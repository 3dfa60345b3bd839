"""The folder applied through the API server: what lands, what a broken file reports and keeps,
and what removing a document or a file deletes."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from rich.console import Console

from kconsole.client import StatusError
from kconsole.sync.manifestsync import DEFINITION_WAIT
from kconsole.tui.screens.manifest import manifest_body

from sync_env import Env

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: {image}
"""

NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n"


def cm(name: str, value: str = "1", namespace: str | None = None) -> str:
    ns = f"\n  namespace: {namespace}" if namespace else ""
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}{ns}\ndata:\n  k: \"{value}\"\n"


async def get(env: Env, resource: str, name: str, ns: str | None = "default") -> dict[str, Any] | None:
    try:
        return await env.admin.get(resource, name, ns)
    except StatusError as err:
        if err.code == 404:
            return None
        raise


async def test_folder_is_applied_in_dependency_order_and_reported(env: Env, started: Any) -> None:
    # The Deployment's file sorts before the Namespace it needs; a List and a JSON file come along.
    env.write("a-web.yaml", DEPLOY.format(replicas=2, image="nginx:1.25"))
    env.write("z-namespace.yml", NAMESPACE)
    env.write("lists/config.yaml", "apiVersion: v1\nkind: List\nitems:\n"
                                   "- {apiVersion: v1, kind: ConfigMap, metadata: {name: one}}\n"
                                   "- {apiVersion: v1, kind: ConfigMap, metadata: {name: two}}\n")
    env.write("extra.json", '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-json"}}')
    env.write(".hidden.yaml", cm("hidden"))
    env.write("web.yaml.swp", cm("swap"))
    env.write("notes.txt", cm("text"))
    env.write(".kconsole/leftover.yaml", cm("data-dir"))
    sync = await started()

    assert sorted(sync.files) == ["a-web.yaml", "extra.json", "lists/config.yaml", "z-namespace.yml"]
    assert all(st.status == "applied" for st in sync.files.values()), [st.summary() for st in sync.files.values()]
    deploy = await get(env, "deployments", "web", "demo")
    assert deploy is not None and deploy["spec"]["replicas"] == 2
    [applied] = sync.files["a-web.yaml"].objects
    assert (applied.kind, applied.namespace, applied.name) == ("Deployment", "demo", "web")
    assert applied.resource_version == deploy["metadata"]["resourceVersion"]
    assert [o.name for o in sync.files["lists/config.yaml"].objects] == ["one", "two"]
    for name in ("one", "two", "from-json"):
        assert await get(env, "configmaps", name) is not None
    for name in ("hidden", "swap", "text", "data-dir"):
        assert await get(env, "configmaps", name) is None
    managers = [m["manager"] for m in deploy["metadata"].get("managedFields", [])]
    assert "kconsole-sync" in managers


async def test_fields_the_kind_lacks_are_dropped_and_shown_beside_the_file(env: Env, started: Any) -> None:
    """The server drops a typo'd field as kubectl's default --validate=warn does; the file shows why."""
    env.write("typo.yaml", cm("typo") + "dta:\n  k: v\n")
    sync = await started()
    st = sync.files["typo.yaml"]
    assert st.status == "applied" and st.warnings == ['ConfigMap default/typo: unknown field "dta"']
    stored = await get(env, "configmaps", "typo")
    assert stored is not None and "dta" not in stored

    console = Console(width=120, record=True)
    console.print(manifest_body(st, None))
    assert 'Warning: ConfigMap default/typo: unknown field "dta"' in console.export_text()


BROKEN = [
    # (what, file text, expected line, expected column, words in the message)
    ("yaml syntax", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: [a\n", 6, 1,
     "YAML syntax error"),
    ("unknown kind", "apiVersion: apps/v1\nkind: Deploymnt\nmetadata:\n  name: web\n  namespace: demo\n", 2, 1,
     'no matches for kind "Deploymnt"'),
    ("invalid object", DEPLOY.format(replicas=-1, image="nginx:1.26"), 7, 3, "spec.replicas"),
    ("admission denial", DEPLOY.format(replicas=1, image="nginx:1.26").replace("namespace: demo", "namespace: nope"),
     2, 1, 'namespaces "nope" not found'),
]


@pytest.mark.parametrize("what,text,line,column,words", BROKEN, ids=[b[0] for b in BROKEN])
async def test_broken_file_reports_position_and_keeps_what_it_applied(
        env: Env, started: Any, what: str, text: str, line: int, column: int, words: str) -> None:
    env.write("ns.yaml", NAMESPACE)
    env.write("web.yaml", DEPLOY.format(replicas=2, image="nginx:1.25") + "---\n" + cm("web-config", namespace="demo"))
    sync = await started()
    before = await get(env, "deployments", "web", "demo")
    assert before is not None

    # A broken version drops the ConfigMap and changes the Deployment: neither may happen.
    env.write("web.yaml", text)
    await sync.sync_now({"web.yaml"})
    st = sync.files["web.yaml"]
    assert st.status == "error"
    err = st.error
    assert err is not None and (err.line, err.column) == (line, column), str(err)
    assert words in err.message and str(err).startswith(f"web.yaml:{line}:{column}: ")
    after = await get(env, "deployments", "web", "demo")
    assert after is not None and after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert await get(env, "configmaps", "web-config", "demo") is not None
    assert {o.name for o in st.objects} == {"web", "web-config"}
    assert sync.files["ns.yaml"].status == "applied"

    # Fixed: applied again, and only now the dropped ConfigMap goes.
    env.write("web.yaml", DEPLOY.format(replicas=3, image="nginx:1.26"))
    await sync.sync_now({"web.yaml"})
    assert sync.files["web.yaml"].status == "applied", sync.files["web.yaml"].summary()
    fixed = await get(env, "deployments", "web", "demo")
    assert fixed is not None and fixed["spec"]["replicas"] == 3
    assert await get(env, "configmaps", "web-config", "demo") is None


async def test_conflict_with_another_field_manager_is_reported_not_forced(env: Env, started: Any) -> None:
    env.write("ns.yaml", NAMESPACE)
    env.write("web.yaml", DEPLOY.format(replicas=2, image="nginx:1.25"))
    sync = await started()
    # Someone else takes spec.replicas over (as `kubectl apply --server-side --force-conflicts` would).
    taken = await env.admin.apply({"apiVersion": "apps/v1", "kind": "Deployment",
                                   "metadata": {"name": "web", "namespace": "demo"}, "spec": {"replicas": 5}},
                                  field_manager="kubectl", force=True)
    env.write("web.yaml", DEPLOY.format(replicas=4, image="nginx:1.26"))
    await sync.sync_now({"web.yaml"})
    err = sync.files["web.yaml"].error
    assert err is not None and err.reason == "Conflict" and err.code == 409
    assert (err.line, err.column) == (7, 3)  # the replicas line
    assert 'conflict with "kubectl"' in err.message
    now = await get(env, "deployments", "web", "demo")
    assert now is not None and now["metadata"]["resourceVersion"] == taken["metadata"]["resourceVersion"]
    assert now["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"


async def test_removing_a_document_or_file_deletes_exactly_its_objects(env: Env, started: Any) -> None:
    await env.admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "adopted"}})
    await env.admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bystander"}})
    env.write("a.yaml", cm("keep") + "---\n" + cm("drop") + "---\n" + cm("adopted", "2"))
    env.write("b.yaml", cm("moving"))
    sync = await started()
    assert (await get(env, "configmaps", "adopted") or {})["data"] == {"k": "2"}
    assert [o.created for o in sync.files["a.yaml"].objects] == [True, True, False]

    env.write("a.yaml", cm("keep") + "---\n" + cm("adopted", "2"))
    await sync.sync_now({"a.yaml"})
    assert await get(env, "configmaps", "drop") is None
    assert await get(env, "configmaps", "keep") is not None

    # A document moved from b.yaml into a.yaml in one pass is not deleted.
    moving_uid = (await get(env, "configmaps", "moving") or {})["metadata"]["uid"]
    env.write("a.yaml", cm("keep") + "---\n" + cm("adopted", "2") + "---\n" + cm("moving"))
    (env.folder / "b.yaml").unlink()
    await sync.sync_now({"a.yaml", "b.yaml"})
    assert (await get(env, "configmaps", "moving") or {}).get("metadata", {}).get("uid") == moving_uid
    assert "b.yaml" not in sync.files

    # The whole file goes: what it created goes; what it adopted and what it never declared stay.
    (env.folder / "a.yaml").unlink()
    await sync.sync_now({"a.yaml"})
    assert await get(env, "configmaps", "keep") is None
    assert await get(env, "configmaps", "moving") is None
    assert await get(env, "configmaps", "adopted") is not None
    assert await get(env, "configmaps", "bystander") is not None
    assert sync.files == {}


async def test_object_recreated_by_hand_is_not_pruned(env: Env, started: Any) -> None:
    env.write("a.yaml", cm("mine"))
    sync = await started()
    await env.admin.delete("configmaps", "mine", "default")
    await env.admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mine"}})
    (env.folder / "a.yaml").unlink()
    await sync.sync_now({"a.yaml"})
    assert await get(env, "configmaps", "mine") is not None


async def test_same_object_in_two_files_is_an_error_for_the_newcomer(env: Env, started: Any) -> None:
    env.write("a.yaml", cm("shared", "a"))
    sync = await started()
    env.write("b.yaml", "# comment\n" + cm("shared", "b"))
    await sync.sync_now({"b.yaml"})
    err = sync.files["b.yaml"].error
    assert err is not None and "also declared in a.yaml" in err.message and (err.line, err.column) == (5, 3)
    assert (await get(env, "configmaps", "shared") or {})["data"] == {"k": "a"}


async def test_inventory_survives_a_restart_and_prunes_files_removed_meanwhile(env: Env, started: Any) -> None:
    env.write("a.yaml", cm("one"))
    env.write("b.yaml", cm("two"))
    first = await started()
    await first.stop()
    (env.folder / "b.yaml").unlink()
    second = await started()
    assert sorted(second.files) == ["a.yaml"]
    assert await get(env, "configmaps", "two") is None
    assert await get(env, "configmaps", "one") is not None
    assert (env.data_dir / "sync-inventory.json").exists()


async def test_file_waiting_for_a_namespace_from_a_broken_file_recovers_when_it_is_fixed(
        env: Env, started: Any) -> None:
    env.write("a-web.yaml", DEPLOY.format(replicas=1, image="nginx"))
    env.write("b-ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n  labels: {a: [}\n")
    sync = await started()
    assert sync.files["b-ns.yaml"].status == "error"
    err = sync.files["a-web.yaml"].error
    assert err is not None and err.code == 404 and 'namespaces "demo" not found' in err.message
    env.write("b-ns.yaml", NAMESPACE)
    await sync.sync_now({"b-ns.yaml"})  # the waiting file is retried in the same pass
    assert sync.files["a-web.yaml"].status == "applied"
    assert await get(env, "deployments", "web", "demo") is not None


async def test_damaged_inventory_is_set_aside_and_the_sync_starts(env: Env, started: Any) -> None:
    env.data_dir.mkdir(parents=True)
    (env.data_dir / "sync-inventory.json").write_text("{not json")
    env.write("a.yaml", cm("fresh"))
    sync = await started()
    assert sync.files["a.yaml"].status == "applied"
    assert (env.data_dir / "sync-inventory.json.damaged").read_text() == "{not json"
    assert "a.yaml" in (env.data_dir / "sync-inventory.json").read_text()


async def test_alias_bomb_is_a_file_error_and_the_rest_of_the_pass_applies(env: Env, started: Any) -> None:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: lol", "data:",
             "  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    env.write("bomb.yaml", "\n".join(lines) + "\n")
    env.write("good.yaml", cm("good"))
    sync = await asyncio.wait_for(started(), 30)  # a copy of the expanded bomb never finishes
    err = sync.files["bomb.yaml"].error
    assert err is not None and err.line == 9 and "excessive aliasing" in err.message  # at a3's first alias
    assert sync.files["good.yaml"].status == "applied"
    assert await get(env, "configmaps", "good") is not None


async def test_a_retried_error_is_logged_once_until_it_changes(env: Env, started: Any,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    env.write("web.yaml", cm("web", namespace="later"))
    with caplog.at_level(logging.WARNING, logger="kconsole.sync.manifestsync"):
        sync = await started()
        for _ in range(4):  # four retries on the back-off, each failing the same way
            await sync.sync_now()
        assert sync.files["web.yaml"].attempts == 5
        said = [r.getMessage() for r in caplog.records if "web.yaml" in r.getMessage()]
        assert len(said) == 1 and 'namespaces "later" not found' in said[0]
        env.write("web.yaml", cm("web", value="2", namespace="other"))
        await sync.sync_now({"web.yaml"})
        said = [r.getMessage() for r in caplog.records if "web.yaml" in r.getMessage()]
        assert len(said) == 2 and 'namespaces "other" not found' in said[1]


async def test_a_vanished_folder_prunes_nothing_and_the_sync_resumes_when_it_is_back(env: Env, started: Any) -> None:
    env.write("a.yaml", cm("one"))
    env.write("b.yaml", cm("two", namespace="later"))  # a server-side error: retried on the back-off
    sync = await started()
    uid = (await get(env, "configmaps", "one"))["metadata"]["uid"]
    moved = env.folder.with_name("moved")
    env.folder.rename(moved)
    await sync.sync_now()  # what the retry timer (or the console's re-apply) runs
    assert (await get(env, "configmaps", "one"))["metadata"]["uid"] == uid
    err = sync.files["a.yaml"].error
    assert err is not None and err.reason == "FolderMissing" and "is missing" in err.message
    assert [o.name for o in sync.files["a.yaml"].objects] == ["one"]
    assert not env.folder.exists()  # nothing written to the old place meanwhile
    moved.rename(env.folder)
    await sync.sync_now()
    assert sync.files["a.yaml"].status == "applied"
    assert (await get(env, "configmaps", "one"))["metadata"]["uid"] == uid


async def test_each_change_of_a_files_state_is_logged_once_fixed_and_removed_too(
        env: Env, started: Any, caplog: pytest.LogCaptureFixture) -> None:
    """What ``kconsole serve`` prints: a user saving files headless learns that a fix took and a
    removal pruned, not only that something failed."""
    env.write("a.yaml", cm("one"))
    with caplog.at_level(logging.INFO, logger="kconsole.sync.manifestsync"):
        sync = await started()
        env.write("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
        await sync.sync_now({"a.yaml"})
        await sync.sync_now()  # a pass that changes nothing says nothing
        env.write("a.yaml", cm("one", value="2"))
        await sync.sync_now({"a.yaml"})
        (env.folder / "a.yaml").unlink()
        await sync.sync_now({"a.yaml"})
    rv = [r.getMessage() for r in caplog.records]
    said = [(r.levelname, r.getMessage().split("@")[0]) for r in caplog.records if "a.yaml" in r.getMessage()]
    assert said == [
        ("INFO", "manifest sync: a.yaml: applied ConfigMap default/one"),
        ("WARNING", "manifest sync: a.yaml:4:1: YAML syntax error: did not find expected node content"),
        ("INFO", "manifest sync: a.yaml: applied ConfigMap default/one"),
        ("INFO", "manifest sync: a.yaml: removed; the objects it created were deleted"),
    ], rv
    assert await get(env, "configmaps", "one") is None


GIZMO_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""


def gizmo(name: str) -> str:
    return f"apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: {name}\nspec:\n  size: 3\n"


async def test_custom_resources_wait_for_their_definition_in_the_same_pass(env: Env) -> None:
    # The resources sort before their definition, one file holds both: all land in the first pass.
    env.write("a-gizmo.yaml", gizmo("one"))
    env.write("bundle.yaml", GIZMO_CRD + "---\n" + gizmo("two"))
    env.write("c-typo.yaml", gizmo("three").replace("kind: Gizmo", "kind: Gizmoo"))
    # A definition the server refuses: its resources fail at once instead of waiting for it.
    env.write("d-bad-crd.yaml", GIZMO_CRD.replace("gizmo", "doohickey").replace("Gizmo", "Doohickey")
              .replace("scope: Namespaced", "scope: Sideways"))
    env.write("e-doohickey.yaml", gizmo("four").replace("Gizmo", "Doohickey"))
    sync = env.new_sync()
    start = asyncio.ensure_future(sync.start())
    try:
        took = await env.clock.run_until(start.done, 30, step=0.1)
        await start
        assert took < DEFINITION_WAIT
        assert sync.passes == 1
        assert sync.files["a-gizmo.yaml"].status == "applied", sync.files["a-gizmo.yaml"].summary()
        assert [o.kind for o in sync.files["bundle.yaml"].objects] == ["CustomResourceDefinition", "Gizmo"]
        for name in ("one", "two"):
            found = await get(env, "gizmos.example.com", name)
            assert found is not None and found["metadata"]["namespace"] == "default"
        assert sync.files["c-typo.yaml"].status == "error"
        assert 'no matches for kind "Gizmoo"' in sync.files["c-typo.yaml"].summary()
        assert "spec.scope" in sync.files["d-bad-crd.yaml"].summary()
        assert 'no matches for kind "Doohickey"' in sync.files["e-doohickey.yaml"].summary()
    finally:
        await sync.stop()
