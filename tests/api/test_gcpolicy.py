"""The serving process' collector policy: every collection freezes its survivors; uninstall undoes it."""

from __future__ import annotations

import gc

import pytest

from kconsole.api import gcpolicy


def test_collections_freeze_survivors_and_uninstall_restores() -> None:
    before = gc.get_threshold()
    gcpolicy.install(12_345)
    try:
        assert gcpolicy.installed() and gc.get_threshold()[0] == 12_345
        survivor = [{"kind": "Pod"} for _ in range(1000)]
        gc.unfreeze()
        gc.collect()
        assert gc.get_freeze_count() >= len(survivor), "survivors of a full collection are frozen"
        frozen = gc.get_freeze_count()
        young = [{"kind": "Pod", "spec": {}} for _ in range(500)]
        gc.collect(0)
        assert gc.get_freeze_count() >= frozen + len(young), "survivors of a young collection are frozen too"
        assert not gc.get_objects(generation=1), "nothing is left for the middle generation to walk again"
        garbage: list[object] = []
        garbage.append(garbage)  # a cycle made after the freeze is still collected
        del garbage
        assert gc.collect() >= 1
    finally:
        gcpolicy.uninstall()
    assert not gcpolicy.installed() and gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_nonsense_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="young_threshold"):
        gcpolicy.install(0)
    assert not gcpolicy.installed()
