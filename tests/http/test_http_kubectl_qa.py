"""The real kubectl where kconsole once differed from a kubeadm cluster: impersonation (--as), errors
for kinds kconsole does not serve, JSON patch failures, rollout undo."""

from __future__ import annotations

import pytest

from http_env import Cluster

from kconsole.api.types import UserInfo

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


async def test_as_user_runs_the_request_as_that_user(cluster: Cluster) -> None:
    await cluster.kubectl("create", "namespace", "imp")
    await cluster.kubectl("create", "role", "pod-reader", "-n", "imp", "--verb=get,list", "--resource=pods")
    await cluster.kubectl("create", "rolebinding", "carol-reads", "-n", "imp", "--role=pod-reader", "--user=carol")
    await cluster.kubectl("create", "serviceaccount", "bot", "-n", "imp")
    await cluster.kubectl("create", "rolebinding", "bot-reads", "-n", "imp", "--role=pod-reader",
                          "--serviceaccount=imp:bot")

    assert (await cluster.kubectl("auth", "can-i", "list", "pods", "-n", "imp", "--as=carol")).out.strip() == "yes"
    denied = await cluster.kubectl("auth", "can-i", "delete", "pods", "-n", "imp", "--as=carol", check=False)
    assert (denied.code, denied.out.strip()) == (1, "no")
    forbidden = await cluster.kubectl("create", "configmap", "x", "-n", "imp", "--as=carol", check=False)
    assert forbidden.code == 1
    assert 'configmaps is forbidden: User "carol" cannot create resource "configmaps" in API group "" in the ' \
           'namespace "imp"' in forbidden.err

    sa = "--as=system:serviceaccount:imp:bot"
    assert (await cluster.kubectl("get", "pods", "-n", "imp", sa, check=False)).code == 0
    sa_denied = await cluster.kubectl("get", "secrets", "-n", "imp", sa, check=False)
    assert 'User "system:serviceaccount:imp:bot" cannot list resource "secrets"' in sa_denied.err
    # A group given with --as-group grants what the group is bound to.
    await cluster.kubectl("create", "rolebinding", "ops-reads", "-n", "imp", "--role=pod-reader", "--group=ops")
    assert (await cluster.kubectl("auth", "can-i", "list", "pods", "-n", "imp", "--as=dave",
                                  "--as-group=ops")).out.strip() == "yes"
    assert (await cluster.kubectl("auth", "can-i", "list", "pods", "-n", "imp", "--as=dave",
                                  check=False)).out.strip() == "no"


async def test_impersonation_needs_the_impersonate_verb(cluster: Cluster) -> None:
    erin = cluster.kubeconfig_for(UserInfo("erin"))
    refused = await cluster.kubectl("get", "pods", "--as=admin", check=False, kubeconfig=erin)
    assert refused.code == 1
    assert 'users "admin" is forbidden: User "erin" cannot impersonate resource "users" in API group "" at the ' \
           'cluster scope' in refused.err
    group = await cluster.kubectl("get", "pods", "--as=erin", "--as-group=system:masters", check=False,
                                  kubeconfig=erin)
    assert 'cannot impersonate resource "users"' in group.err
    await cluster.kubectl("create", "clusterrole", "impersonate-frank", "--verb=impersonate", "--resource=users",
                          "--resource-name=frank")
    await cluster.kubectl("create", "clusterrolebinding", "erin-as-frank", "--clusterrole=impersonate-frank",
                          "--user=erin")
    await cluster.kubectl("create", "clusterrolebinding", "frank-views", "--clusterrole=view", "--user=frank")
    assert (await cluster.kubectl("get", "pods", "--as=frank", kubeconfig=erin)).code == 0
    masters = await cluster.kubectl("get", "pods", "--as=frank", "--as-group=system:masters", check=False,
                                    kubeconfig=erin)
    assert 'groups "system:masters" is forbidden: User "erin" cannot impersonate resource "groups"' in masters.err
