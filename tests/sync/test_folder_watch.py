"""Real file edits seen through watchfiles: saves applied, junk ignored, deletions pruned.

Waiting for file events is real I/O, so these waits are wall-clock bounded (10 s), never fixed."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from sync_env import Env

from kconsole.client import StatusError


async def until(pred: Callable[[], Any], what: str, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = pred()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


def cm(name: str, value: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: \"{value}\"\n"


async def data_of(env: Env, name: str) -> dict[str, str] | None:
    try:
        return (await env.admin.get("configmaps", name, "default")).get("data")
    except StatusError as err:
        if err.code == 404:
            return None
        raise


async def test_saves_are_applied_and_removals_pruned_through_real_file_events(env: Env, started: Any) -> None:
    env.write("app/one.yaml", cm("one", "a"))
    sync = await started(watch=True)
    await sync.wait_watching()
    assert await data_of(env, "one") == {"k": "a"}

    # Editor debris first, then a real save: once the save is applied, the debris was seen and skipped.
    env.write("app/.one.yaml.swp", cm("swap", "x"))
    env.write("app/one.yaml~", cm("backup", "x"))
    env.write("app/4913", "")
    env.write(".#lock.yaml", cm("lock", "x"))
    env.write("app/one.yaml", cm("one", "b"))
    await until(lambda: _data_is(env, "one", {"k": "b"}), "the edited ConfigMap")
    assert sorted(sync.files) == ["app/one.yaml"]
    for junk in ("swap", "backup", "lock"):
        assert await data_of(env, junk) is None

    # An atomic save (write elsewhere, rename over) as many editors do.
    tmp = env.folder / "app" / "two.tmp"
    tmp.write_text(cm("two", "c"))
    os.replace(tmp, env.folder / "app" / "two.yaml")
    await until(lambda: _data_is(env, "two", {"k": "c"}), "the renamed-in file")

    # A broken save is reported and changes nothing; the fix is picked up.
    env.write("app/two.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two\n")
    await until(lambda: sync.files["app/two.yaml"].status == "error", "the error state")
    err = sync.files["app/two.yaml"].error
    assert err is not None and err.path == "app/two.yaml" and err.line == 4 and "YAML syntax error" in err.message
    assert await data_of(env, "two") == {"k": "c"}

    # Removing a whole folder removes its files' objects.
    (env.folder / "app" / "two.yaml").unlink()
    (env.folder / "app" / "one.yaml").unlink()
    for junk in list((env.folder / "app").iterdir()):
        junk.unlink()
    (env.folder / "app").rmdir()
    await until(lambda: _gone(env, "one"), "ConfigMap one deleted")
    await until(lambda: _gone(env, "two"), "ConfigMap two deleted")
    await until(lambda: not sync.files, "the report emptied")


async def test_listeners_hear_each_pass(env: Env, started: Any) -> None:
    sync = await started(watch=True)
    await sync.wait_watching()
    heard: list[int] = []
    unsubscribe = sync.subscribe(lambda: heard.append(sync.version))
    env.write("x.json", '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}')
    await until(lambda: heard and "x.json" in sync.files and sync.files["x.json"].status == "applied",
                "a notification after the pass")
    unsubscribe()  # type: ignore[operator]
    count = len(heard)
    await sync.sync_now()
    assert len(heard) == count


async def _data_is(env: Env, name: str, want: dict[str, str]) -> bool:
    return await data_of(env, name) == want


async def _gone(env: Env, name: str) -> bool:
    return await data_of(env, name) is None


async def test_a_symlinked_manifest_is_applied_under_its_own_name_when_it_appears(env: Env, started: Any) -> None:
    shared = env.folder.parent / "shared"
    shared.mkdir()
    (shared / "cm.yaml").write_text(cm("shared", "s"))
    sync = await started(watch=True)
    await sync.wait_watching()
    os.symlink(shared / "cm.yaml", env.folder / "linked.yaml")
    await until(lambda: "linked.yaml" in sync.files and sync.files["linked.yaml"].status == "applied",
                "the symlinked file applied while the sync runs")
    assert await data_of(env, "shared") == {"k": "s"}
    # A second name for a file in the folder declares its objects twice: an error naming both files.
    env.write("own.yaml", cm("own", "o"))
    await until(lambda: "own.yaml" in sync.files, "own.yaml applied")
    os.symlink(env.folder / "own.yaml", env.folder / "alias.yaml")
    await until(lambda: "alias.yaml" in sync.files and sync.files["alias.yaml"].status == "error", "the duplicate")
    err = sync.files["alias.yaml"].error
    assert err is not None and "also declared in own.yaml" in err.message
    (env.folder / "alias.yaml").unlink()
    (env.folder / "linked.yaml").unlink()
    await until(lambda: _gone(env, "shared"), "ConfigMap shared pruned with its link")
    assert await data_of(env, "own") == {"k": "o"}
