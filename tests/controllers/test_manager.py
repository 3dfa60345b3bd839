"""Controller-manager replicas: one leader holds the Lease and reconciles; stopping it hands over."""

from __future__ import annotations

import random

import pytest

from kconsole.controllers.manager import CONTROLLER_PATHS, CONTROLLERS, ControllerManagerReplica

from ctrl_env import Ctrl, ctrl  # noqa: F401 - ctrl is the fixture


async def lease_holder(ctrl: Ctrl) -> str:
    lease = await ctrl.admin.get("leases", "kube-controller-manager", "kube-system")
    return lease["spec"]["holderIdentity"]


async def test_table_names_upstream_controllers_and_loads_lazily() -> None:
    for name in ("garbage-collector-controller", "node-lifecycle-controller", "endpointslice-controller",
                 "namespace-controller", "serviceaccount-controller", "pod-garbage-collector-controller"):
        assert name in CONTROLLERS
        assert CONTROLLERS[name].__name__ in CONTROLLER_PATHS[name]
    assert "deployment-controller" in CONTROLLER_PATHS  # listed even before its module lands
    with pytest.raises(KeyError, match="unknown controller"):
        CONTROLLERS["no-such-controller"]


async def test_bad_configuration_is_refused_by_name(ctrl: Ctrl) -> None:
    with pytest.raises(ValueError, match="unknown controller.*bogus"):
        ControllerManagerReplica(ctrl.cm, ctrl.clock, identity="x", rng=random.Random(1), controllers=["bogus"])
    with pytest.raises(ValueError, match="settings for unknown controller.*nodes"):
        ControllerManagerReplica(ctrl.cm, ctrl.clock, identity="x", rng=random.Random(1), settings={"nodes": {}})


async def test_failover_hands_the_lease_over_and_reconciliation_continues(ctrl: Ctrl) -> None:
    replicas = [await ctrl.manager("serviceaccount-controller", "garbage-collector-controller",
                                  identity=f"cm-{i}", seed=i, wait=False) for i in range(3)]
    await ctrl.wait(lambda: sum(r.is_leader for r in replicas) == 1 and any(r.active for r in replicas))
    leader = next(r for r in replicas if r.is_leader)
    assert await lease_holder(ctrl) == leader.identity
    assert sorted(leader.active) == ["garbage-collector-controller", "serviceaccount-controller"]
    assert all(not r.active for r in replicas if r is not leader)

    # The leader reconciles: a new namespace gets its default ServiceAccount.
    await ctrl.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    await ctrl.wait(lambda: ctrl.exists("serviceaccounts", "default", "team-a"), timeout=10)

    await leader.stop()
    assert not leader.running and not leader.is_leader and not leader.active
    stopped_at = ctrl.clock.now()
    # Meanwhile the cluster changes; nobody is reconciling until the Lease expires.
    await ctrl.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}})
    await ctrl.wait(lambda: any(r.is_leader and r.active for r in replicas if r is not leader), timeout=30)
    took = ctrl.clock.now() - stopped_at
    assert 15 <= took <= 15 + 2 + 2.5, took  # lease 15 s, noticed within one retry period
    new_leader = next(r for r in replicas if r.is_leader)
    assert await lease_holder(ctrl) == new_leader.identity != leader.identity
    lease = await ctrl.admin.get("leases", "kube-controller-manager", "kube-system")
    assert lease["spec"]["leaseTransitions"] >= 1
    await ctrl.wait(lambda: ctrl.exists("serviceaccounts", "default", "team-b"), timeout=10)

    # The stopped replica can come back; it stands by while the new leader renews.
    await leader.start()
    await ctrl.clock.advance(30)
    assert leader.running and not leader.is_leader
    assert new_leader.is_leader and await lease_holder(ctrl) == new_leader.identity


async def test_a_restarted_leader_converges_on_what_changed_while_it_was_down(ctrl: Ctrl) -> None:
    m = await ctrl.manager("serviceaccount-controller")
    await m.stop()
    await ctrl.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "late"}})
    await ctrl.clock.advance(5)
    assert not await ctrl.exists("serviceaccounts", "default", "late")
    await m.start()
    await ctrl.wait(lambda: ctrl.exists("serviceaccounts", "default", "late"), timeout=30)


async def test_a_pod_deleted_during_failover_is_replaced_by_the_next_leader(ctrl: Ctrl) -> None:
    replicas = [await ctrl.manager(identity=f"cm-{i}", seed=i, wait=False) for i in range(3)]
    await ctrl.wait(lambda: any(r.is_leader and r.active for r in replicas))
    leader = next(r for r in replicas if r.is_leader)
    assert "replicaset-controller" in leader.active and "garbage-collector-controller" in leader.active
    labels = {"app": "web"}
    await ctrl.admin.create({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}})
    await ctrl.wait(lambda: _count(ctrl.names("pods", selector="app=web"), 3), timeout=10)
    before = await ctrl.names("pods", selector="app=web")

    await leader.stop()
    stopped_at = ctrl.clock.now()
    await ctrl.admin.delete("pods", before[0], "default", grace_period_seconds=0)
    await ctrl.clock.advance(10)
    assert len(await ctrl.names("pods", selector="app=web")) == 2  # nobody is reconciling yet
    await ctrl.wait(lambda: _count(ctrl.names("pods", selector="app=web"), 3), timeout=30)
    assert ctrl.clock.now() - stopped_at <= 15 + 2 + 3
    after = await ctrl.names("pods", selector="app=web")
    assert before[0] not in after and set(before[1:]) <= set(after)
    assert await lease_holder(ctrl) != leader.identity


async def _count(aw: object, n: int) -> bool:
    return len(await aw) == n  # type: ignore[misc, arg-type]
