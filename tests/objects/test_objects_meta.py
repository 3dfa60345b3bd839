import copy

import pytest

from kconsole.objects.meta import (
    add_finalizer,
    annotations,
    api_group_version,
    condition_status,
    controller_of,
    creation_timestamp,
    deep_copy,
    deletion_timestamp,
    format_micro_time,
    format_time,
    generation,
    get_condition,
    has_finalizer,
    is_being_deleted,
    is_controlled_by,
    labels,
    name,
    namespace,
    object_key,
    owner_ref,
    parse_time,
    remove_condition,
    remove_finalizer,
    resource_version,
    set_annotation,
    set_condition,
    set_label,
    split_key,
    uid,
)

T0 = parse_time("2026-01-01T00:00:00Z")

RS = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web-abc", "namespace": "default", "uid": "rs-uid", "resourceVersion": "7", "generation": 3},
}


def test_accessors_read_missing_metadata_as_empty():
    bare = {"kind": "Pod"}
    assert (name(bare), namespace(bare), uid(bare), resource_version(bare)) == ("", "", "", "")
    assert labels(bare) == {} and annotations(bare) == {}
    assert generation(bare) == 0
    assert not is_being_deleted(bare)
    assert deletion_timestamp(bare) is None
    assert (name(RS), namespace(RS), uid(RS), resource_version(RS), generation(RS)) == (
        "web-abc",
        "default",
        "rs-uid",
        "7",
        3,
    )


def test_setters_create_the_maps_they_need():
    o: dict = {}
    set_label(o, "app", "web")
    set_annotation(o, "note", "x")
    assert o == {"metadata": {"labels": {"app": "web"}, "annotations": {"note": "x"}}}


def test_owner_ref_and_controller_lookup():
    ref = owner_ref(RS)
    assert ref == {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web-abc",
        "uid": "rs-uid",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert list(ref) == ["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"]
    pod = {"metadata": {"ownerReferences": [owner_ref(RS, controller=False), ref]}}
    assert controller_of(pod) is ref
    assert is_controlled_by(pod, RS)
    assert not is_controlled_by(pod, {"metadata": {"uid": "other"}})
    assert controller_of({"metadata": {"ownerReferences": [owner_ref(RS, controller=False)]}}) is None
    assert "controller" not in owner_ref(RS, controller=False, block_owner_deletion=False)


def test_keys_follow_client_go():
    assert object_key(RS) == "default/web-abc"
    assert object_key({"metadata": {"name": "node-1"}}) == "node-1"
    assert split_key("default/web-abc") == ("default", "web-abc")
    assert split_key("node-1") == ("", "node-1")
    with pytest.raises(ValueError, match='unexpected key format: "a/b/c"'):
        split_key("a/b/c")


def test_api_group_version():
    assert api_group_version(RS) == ("apps", "v1")
    assert api_group_version({"apiVersion": "v1"}) == ("", "v1")
    assert api_group_version("coordination.k8s.io/v1") == ("coordination.k8s.io", "v1")
    with pytest.raises(ValueError):
        api_group_version("a/b/c")


def test_finalizers_add_once_and_remove_cleanly():
    o: dict = {"metadata": {}}
    assert add_finalizer(o, "kubernetes.io/pvc-protection")
    assert not add_finalizer(o, "kubernetes.io/pvc-protection")
    assert has_finalizer(o, "kubernetes.io/pvc-protection")
    assert not remove_finalizer(o, "other")
    assert remove_finalizer(o, "kubernetes.io/pvc-protection")
    assert "finalizers" not in o["metadata"]


def test_set_condition_moves_transition_time_only_on_status_change():
    status: dict = {}
    assert set_condition(status, "Ready", "False", "KubeletNotReady", "starting", now=T0)
    cond = get_condition(status, "Ready")
    assert cond["lastTransitionTime"] == "2026-01-01T00:00:00Z"

    assert set_condition(status, "Ready", "False", "KubeletNotReady", "still starting", now=T0 + 30)
    assert get_condition(status, "Ready")["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert get_condition(status, "Ready")["message"] == "still starting"

    assert not set_condition(status, "Ready", "False", "KubeletNotReady", "still starting", now=T0 + 40)

    assert set_condition(status, "Ready", "True", "KubeletReady", "ok", now=T0 + 60)
    assert get_condition(status, "Ready")["lastTransitionTime"] == "2026-01-01T00:01:00Z"
    assert len(status["conditions"]) == 1


def test_conditions_on_whole_objects():
    pod = {"kind": "Pod", "metadata": {"name": "p"}}
    set_condition(pod, "PodScheduled", "False", "Unschedulable", "0/3 nodes are available", now=T0)
    assert pod["status"]["conditions"][0]["type"] == "PodScheduled"
    assert condition_status(pod, "PodScheduled") == "False"
    assert condition_status(pod, "Ready") == ""
    assert remove_condition(pod, "PodScheduled")
    assert get_condition(pod, "PodScheduled") is None


def test_deep_copy_shares_nothing_mutable():
    pod = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "ports": [{"p": 1}]}]}}
    dup = deep_copy(pod)
    assert dup == pod
    dup["metadata"]["labels"]["a"] = "changed"
    dup["spec"]["containers"][0]["ports"].append({"p": 2})
    assert pod == {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "ports": [{"p": 1}]}]}}
    assert deep_copy(pod) == copy.deepcopy(pod)


def test_timestamps_round_trip_and_accept_offsets():
    assert format_time(T0 + 5.9) == "2026-01-01T00:00:05Z"
    assert parse_time("2026-01-01T00:00:05Z") == T0 + 5
    assert parse_time("2026-01-01T01:00:05+01:00") == T0 + 5
    assert parse_time("2026-01-01T00:00:05.250000Z") == T0 + 5.25
    assert format_micro_time(T0 + 5.25) == "2026-01-01T00:00:05.250000Z"
    assert parse_time(format_micro_time(T0 + 1.000001)) == pytest.approx(T0 + 1.000001)
    assert creation_timestamp({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}}) == T0
    for bad in ("yesterday", "2026-01-01", "2026-01-01T00:00:00", 5):
        with pytest.raises(ValueError, match="RFC 3339"):
            parse_time(bad)
