"""What the sync does with entries it cannot or should not read yet: links that lead nowhere, FIFOs,
folders named like manifests, files past the size cap, files still being written; and where it
reads the others (off the event loop)."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import pytest

from kconsole.client import StatusError
from kconsole.sync.folder import MAX_FILE_BYTES, Looks
from kconsole.sync import manifestsync
from kconsole.sync.manifestsync import ManifestSync
from kconsole.sync.parse import parse_file

from sync_env import Env


def cm(name: str, data: str = "k: v") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  {data}\n"


async def get(env: Env, name: str) -> dict[str, Any] | None:
    try:
        return await env.admin.get("configmaps", name, "default")
    except StatusError as err:
        if err.code == 404:
            return None
        raise


async def test_every_skipped_entry_is_reported_with_its_reason(env: Env, started: Any) -> None:
    env.write("good.yaml", cm("good"))
    os.symlink("nowhere.yaml", env.folder / "dangling.yaml")
    os.symlink("loop-b.yaml", env.folder / "loop-a.yaml")
    os.symlink("loop-a.yaml", env.folder / "loop-b.yaml")
    os.mkfifo(env.folder / "pipe.yaml")
    env.write("folder.yaml/inside.yaml", cm("inside"))
    sync = await asyncio.wait_for(started(), 30)  # a FIFO opened for reading would block forever
    reasons = {rel: (st.status, st.error.reason if st.error else "", st.error.message if st.error else "")
               for rel, st in sync.files.items()}
    assert reasons["good.yaml"][0] == reasons["folder.yaml/inside.yaml"][0] == "applied"
    expected = {"dangling.yaml": "dangling symbolic link (its target nowhere.yaml does not exist)",
                "loop-a.yaml": "symbolic link loop", "loop-b.yaml": "symbolic link loop",
                "pipe.yaml": "a FIFO (named pipe), not a regular file",
                "folder.yaml": "a folder named like a manifest"}
    for rel, words in expected.items():
        status, reason, message = reasons[rel]
        assert status == "error" and reason == "Skipped" and message.startswith("skipped: ") and words in message, \
            (rel, reasons[rel])
    assert await get(env, "good") is not None and await get(env, "inside") is not None


async def test_a_file_past_the_size_cap_is_refused_unread_and_says_the_cap(env: Env, started: Any) -> None:
    filler = "# " + "x" * 1022 + "\n"
    env.write("huge.yaml", cm("huge") + filler * (MAX_FILE_BYTES // len(filler) + 1))
    env.write("small.yaml", cm("small"))
    sync = await started()
    err = sync.files["huge.yaml"].error
    assert err is not None and err.reason == "TooLarge" and "larger than 8 MiB are not read" in err.message
    assert await get(env, "huge") is None and await get(env, "small") is not None


async def test_a_file_still_being_written_waits_until_it_holds_still(env: Env) -> None:
    """The first half of the file is a valid ConfigMap: applied early, it would be applied twice,
    once half-written. Written between the two looks, the file stays pending and is applied whole."""
    path = env.write("grow.yaml", cm("grow", "a: '1'"))
    sync = ManifestSync(env.sync_client, env.folder, data_dir=env.data_dir, clock=env.clock, watch=False,
                        stable_seconds=0.3)
    sync.running = True
    try:
        first = asyncio.ensure_future(sync.sync_now())
        for _ in range(1000):
            if path in sync.looks._seen:
                break
            await asyncio.sleep(0)
        assert path in sync.looks._seen, "the first look was not taken"
        with path.open("a") as f:
            f.write("  b: '2'\n")  # between the two looks
        await first
        assert sync.files["grow.yaml"].status == "pending" and await get(env, "grow") is None
        await asyncio.wait_for(sync._wake.wait(), 10)  # the second look is scheduled by the sync itself
        sync._wake.clear()
        await sync.sync_now(sync._pending)
        created = await get(env, "grow")
        assert created is not None and created["data"] == {"a": "1", "b": "2"}
        assert sync.files["grow.yaml"].status == "applied"
    finally:
        await sync.stop()


async def test_looks_agree_only_across_the_wait(tmp_path: Any) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("a: 1\n")
    looks = Looks(0.05)
    settled, changing = await looks.stable([path])
    assert settled == [path] and changing == []
    settled, changing = await looks.stable([path])
    assert settled == [path], "unchanged since the last look: no second wait needed"
    path.write_text("a: 12\n")
    waiting = asyncio.ensure_future(looks.stable([path]))
    await asyncio.sleep(0)
    path.write_text("a: 123\n")
    settled, changing = await waiting
    assert settled == [] and changing == [path]


async def test_files_are_read_and_parsed_off_the_event_loop(env: Env, started: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A 50 MB file parsed on the loop froze the API for tens of seconds: the sync reads and parses
    on a worker thread (the real parser, observed for the thread it runs on)."""
    threads: list[int] = []

    def observed(*args: Any) -> Any:
        threads.append(threading.get_ident())
        return parse_file(*args)

    monkeypatch.setattr(manifestsync, "parse_file", observed)
    env.write("a.yaml", cm("a"))
    env.write("b.yaml", cm("b"))
    sync = await started()
    assert sync.files["a.yaml"].status == sync.files["b.yaml"].status == "applied"
    assert len(threads) == 2 and threading.get_ident() not in threads
