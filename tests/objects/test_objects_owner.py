import pytest

from kconsole.objects.meta import controller_of, owner_ref
from kconsole.objects.owner import (
    AlreadyControlledError,
    controlled_by,
    dependents_index,
    has_owner,
    is_orphan,
    owner_uids,
    remove_owner_ref,
    set_controller_ref,
)

RS1 = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "uid": "u1"}}
RS2 = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-2", "uid": "u2"}}


def test_adopt_orphan_then_refuse_second_controller():
    pod: dict = {"metadata": {"name": "p"}}
    assert is_orphan(pod)
    assert set_controller_ref(pod, RS1)
    assert not set_controller_ref(pod, RS1)
    assert controller_of(pod)["uid"] == "u1"
    with pytest.raises(AlreadyControlledError, match="already owned by another ReplicaSet controller web-1"):
        set_controller_ref(pod, RS2)
    assert owner_uids(pod) == ["u1"]


def test_adoption_upgrades_a_plain_reference():
    pod = {"metadata": {"name": "p", "ownerReferences": [owner_ref(RS1, controller=False)]}}
    assert set_controller_ref(pod, RS1)
    assert len(pod["metadata"]["ownerReferences"]) == 1
    assert controller_of(pod)["uid"] == "u1"


def test_release_removes_reference_and_empty_list():
    pod = {"metadata": {"ownerReferences": [owner_ref(RS1)]}}
    assert not remove_owner_ref(pod, "other")
    assert remove_owner_ref(pod, "u1")
    assert "ownerReferences" not in pod["metadata"]
    assert is_orphan(pod)


def test_dependents_lookup():
    a = {"metadata": {"name": "a", "ownerReferences": [owner_ref(RS1)]}}
    b = {"metadata": {"name": "b", "ownerReferences": [owner_ref(RS1, controller=False), owner_ref(RS2)]}}
    c = {"metadata": {"name": "c"}}
    index = dependents_index([a, b, c])
    assert index == {"u1": [a, b], "u2": [b]}
    assert controlled_by([a, b, c], RS1) == [a]
    assert controlled_by([a, b, c], RS2) == [b]
    assert has_owner(b, "u1") and not has_owner(c, "u1")
