"""VolumeRestrictions: a ReadWriteOncePod claim is used by one pod at a time, cluster-wide, and a
read-write disk (GCE PD, EBS, iSCSI, RBD) is mounted by one pod per node."""

from __future__ import annotations

from typing import Any

from tests.scheduler.conftest import Env, pod
from tests.scheduler.test_volume_binding import claim, failed_scheduling, storage_class, vols, with_claims

__all__ = ["vols"]  # the fixture, shared with the VolumeBinding tests

Obj = dict[str, Any]


async def test_a_read_write_once_pod_claim_serves_one_pod(vols: Env) -> None:
    env = vols
    await env.admin.create(storage_class("local-path"))
    solo = claim("solo", "local-path")
    solo["spec"]["accessModes"] = ["ReadWriteOncePod"]
    await env.admin.create(solo)
    await env.admin.create(claim("shared", "local-path"))
    await env.scheduler()
    await env.admin.create(with_claims("first", "solo", "shared"))
    await env.wait_bound("first")
    await env.admin.create(with_claims("other", "shared"))
    await env.wait_bound("other")
    await env.admin.create(with_claims("second", "solo"))
    await env.wait(lambda: failed_scheduling(env, "second"))
    assert (await failed_scheduling(env, "second"))[0].startswith(
        "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode.")
    assert not await env.node_of("second")

    await env.admin.delete("pods", "first", "default")
    assert (await env.wait_bound("second"))["second"], "the claim's only user went: the next one may have it"


async def test_a_read_write_disk_is_mounted_by_one_pod_per_node(vols: Env) -> None:
    env = vols
    on_n1 = {"kubernetes.io/hostname": "n1"}

    def disk_pod(name: str, read_only: bool = False) -> Obj:
        return pod(name, nodeSelector=on_n1, volumes=[
            {"name": "d", "gcePersistentDisk": {"pdName": "orders", "fsType": "ext4", "readOnly": read_only}}])

    await env.scheduler()
    await env.admin.create(disk_pod("writer"))
    assert (await env.wait_bound("writer"))["writer"] == "n1"
    await env.admin.create(disk_pod("second-writer"))
    await env.wait(lambda: failed_scheduling(env, "second-writer"))
    message = (await failed_scheduling(env, "second-writer"))[0]
    assert message.startswith("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                              "1 node(s) had no available disk."), message

    await env.admin.delete("pods", "writer", "default")
    await env.admin.delete("pods", "second-writer", "default")
    await env.admin.create(disk_pod("reader-a", read_only=True))
    await env.admin.create(disk_pod("reader-b", read_only=True))
    assert await env.wait_bound("reader-a", "reader-b") == {"reader-a": "n1", "reader-b": "n1"}, \
        "read-only mounts of one disk share a node"


async def test_an_ephemeral_volume_still_waiting_for_its_claim_says_so(vols: Env) -> None:
    """VolumeRestrictions runs first and must not answer for ephemeral claims (upstream reads only
    persistentVolumeClaim volumes): VolumeBinding's message is the one a user needs."""
    env = vols
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "nowhere",
                         "resources": {"requests": {"storage": "1Gi"}}}}
    await env.scheduler()
    await env.admin.create(pod("cache", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": template}}]))
    await env.wait(lambda: failed_scheduling(env, "cache"))
    assert "waiting for ephemeral volume controller to create the persistentvolumeclaim \"cache-scratch\"" in (
        await failed_scheduling(env, "cache"))[0]
