"""The API server's own loops: the kubernetes Service's Endpoints and EndpointSlice list every API
server of the control plane, and each API server holds an identity Lease, as upstream's do."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from api_helpers import Client

from kconsole.api.controlplane import Instance, identity_lease_name
from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.clock import VirtualClock
from kconsole.objects.meta import parse_time
from kconsole.store.revlog import RevisionLog

INSTANCES = [Instance("control-plane-0", "172.18.0.2"), Instance("control-plane-1", "172.18.0.3"),
             Instance("control-plane-2", "172.18.0.10")]


@pytest.fixture
async def cp(kv: RevisionLog, clock: VirtualClock) -> AsyncIterator[APIServer]:
    server = APIServer(kv, clock, seed=7, instances=INSTANCES)
    await server.start()
    await clock.advance(0.5)
    yield server
    await server.stop()


@pytest.fixture
def root(cp: APIServer) -> Client:
    return Client(cp, cp.tokens.issue(UserInfo("admin", ("system:masters",))))


async def test_the_kubernetes_service_has_every_api_server_behind_it(cp: APIServer, root: Client) -> None:
    ep = await root.ok("get", "endpoints", namespace="default", name="kubernetes")
    # Sorted as strings, as upstream's set of lease addresses is.
    assert ep["subsets"] == [{"addresses": [{"ip": "172.18.0.10"}, {"ip": "172.18.0.2"}, {"ip": "172.18.0.3"}],
                              "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    assert ep["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    eps = await root.ok("get", "endpointslices", namespace="default", name="kubernetes")
    assert eps["addressType"] == "IPv4"
    assert eps["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert [e["addresses"] for e in eps["endpoints"]] == [["172.18.0.10"], ["172.18.0.2"], ["172.18.0.3"]]
    assert all(e["conditions"]["ready"] is True for e in eps["endpoints"])
    assert eps["ports"] == [{"name": "https", "port": 6443, "protocol": "TCP"}]
    records = [r for r in cp.audit_recent() if r.resource in ("endpoints", "endpointslices") and r.verb == "create"]
    assert {r.user for r in records} == {"system:apiserver"}


async def test_edited_or_deleted_endpoints_are_reset_within_ten_seconds_and_left_alone_otherwise(
        cp: APIServer, root: Client, clock: VirtualClock) -> None:
    ep = await root.ok("get", "endpoints", namespace="default", name="kubernetes")
    eps = await root.ok("get", "endpointslices", namespace="default", name="kubernetes")
    await clock.advance(35)  # several passes with nothing to do write nothing
    assert (await root.ok("get", "endpoints", namespace="default", name="kubernetes"))["metadata"][
        "resourceVersion"] == ep["metadata"]["resourceVersion"]
    assert (await root.ok("get", "endpointslices", namespace="default", name="kubernetes"))["metadata"][
        "resourceVersion"] == eps["metadata"]["resourceVersion"]

    ep["subsets"] = [{"addresses": [{"ip": "10.0.0.9"}], "ports": [{"port": 1, "protocol": "TCP"}]}]
    await root.ok("update", "endpoints", namespace="default", name="kubernetes", body=ep)
    await root.ok("delete", "endpointslices", namespace="default", name="kubernetes")
    stray = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
             "metadata": {"name": "kubernetes-extra", "labels": {"kubernetes.io/service-name": "kubernetes"}},
             "addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.9"]}], "ports": []}
    await root.ok("create", "endpointslices", namespace="default", body=stray)

    async def reset() -> bool:
        now = await root.ok("get", "endpoints", namespace="default", name="kubernetes")
        return [a["ip"] for a in now["subsets"][0]["addresses"]] == ["172.18.0.10", "172.18.0.2", "172.18.0.3"] \
            and (await root.do("get", "endpointslices", namespace="default", name="kubernetes")).code == 200 \
            and (await root.do("get", "endpointslices", namespace="default", name="kubernetes-extra")).code == 404

    assert await clock.run_until(reset, timeout=10.5, step=0.5) <= 10.5


async def test_each_api_server_renews_its_identity_lease_and_a_restart_takes_it_over(
        kv: RevisionLog, cp: APIServer, root: Client, clock: VirtualClock) -> None:
    listed = await root.ok("list", "leases", namespace="kube-system",
                           label_selector="apiserver.kubernetes.io/identity=kube-apiserver")
    leases = {item["metadata"]["labels"]["kubernetes.io/hostname"]: item for item in listed["items"]}
    assert sorted(leases) == ["control-plane-0", "control-plane-1", "control-plane-2"]
    for host, lease in leases.items():
        name = lease["metadata"]["name"]
        assert name == identity_lease_name(host) and re.fullmatch(r"apiserver-[a-z2-7]{26}", name)
        assert re.fullmatch(rf"{name}_[0-9a-f]{{8}}-[0-9a-f]{{4}}-4[0-9a-f]{{3}}-[89ab][0-9a-f]{{3}}-[0-9a-f]{{12}}",
                            lease["spec"]["holderIdentity"])
        assert lease["spec"]["leaseDurationSeconds"] == 3600
    assert len({identity_lease_name(i.host) for i in INSTANCES}) == 3

    first = leases["control-plane-0"]
    await clock.advance(20)
    renewed = await root.ok("get", "leases", namespace="kube-system", name=first["metadata"]["name"])
    assert parse_time(renewed["spec"]["renewTime"]) - parse_time(first["spec"]["renewTime"]) >= 19
    assert renewed["spec"]["holderIdentity"] == first["spec"]["holderIdentity"]

    await cp.stop()  # the same hosts come back with new identities, under the same lease names
    again = APIServer(kv, clock, seed=8, instances=INSTANCES)
    await again.start()
    try:
        await clock.advance(0.5)
        taken = await Client(again, again.tokens.issue(UserInfo("admin", ("system:masters",)))).ok(
            "get", "leases", namespace="kube-system", name=first["metadata"]["name"])
        assert taken["metadata"]["uid"] == first["metadata"]["uid"]
        assert taken["spec"]["holderIdentity"] != first["spec"]["holderIdentity"]
        assert taken["spec"]["acquireTime"] == taken["spec"]["renewTime"]
    finally:
        await again.stop()


async def test_identity_leases_of_gone_api_servers_are_collected_hourly(
        cp: APIServer, root: Client, clock: VirtualClock) -> None:
    def lease(name: str, namespace: str, labelled: bool) -> dict[str, object]:
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": namespace,
                             "labels": {"apiserver.kubernetes.io/identity": "kube-apiserver"} if labelled else {}},
                "spec": {"holderIdentity": name, "leaseDurationSeconds": 3600,
                         "renewTime": clock.rfc3339_micro()}}

    await root.ok("create", "leases", namespace="kube-system", body=lease("apiserver-gone", "kube-system", True))
    await root.ok("create", "leases", namespace="kube-system", body=lease("not-identity", "kube-system", False))
    await root.ok("create", "leases", namespace="default", body=lease("apiserver-elsewhere", "default", True))
    await clock.advance(3590)
    assert (await root.do("get", "leases", namespace="kube-system", name="apiserver-gone")).code == 200
    await clock.advance(3620)  # expired after its hour, collected at the next hourly pass

    names = {i["metadata"]["name"] for i in (await root.ok("list", "leases", namespace="kube-system"))["items"]}
    assert "apiserver-gone" not in names and "not-identity" in names
    assert {identity_lease_name(i.host) for i in INSTANCES} <= names  # the live ones are renewed, never collected
    assert (await root.do("get", "leases", namespace="default", name="apiserver-elsewhere")).code == 200


async def test_an_api_server_without_a_control_plane_writes_no_endpoints(api: APIServer, admin: Client,
                                                                        clock: VirtualClock) -> None:
    await clock.advance(25)
    assert (await admin.do("get", "endpoints", namespace="default", name="kubernetes")).code == 404
    listed = await admin.ok("list", "leases", namespace="kube-system")
    assert listed["items"] == []
