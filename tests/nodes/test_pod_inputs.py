"""What a pod needs from the API before its containers start: ConfigMap and Secret volumes keep it in
ContainerCreating with FailedMount until they exist, claims must be Bound, and env references to a
missing ConfigMap, Secret or key leave the container in CreateContainerConfigError."""

from __future__ import annotations

from typing import Any

from node_env import NodeEnv, pod

Obj = dict[str, Any]


def with_volumes(name: str, *volumes: Obj) -> Obj:
    p = pod(name)
    p["spec"]["volumes"] = list(volumes)
    return p


def config_map(name: str, **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": data}


async def waiting(env: NodeEnv, name: str) -> Obj:
    return ((await env.pod(name))["status"]["containerStatuses"][0]["state"]).get("waiting") or {}


async def messages(env: NodeEnv, name: str, reason: str) -> list[str]:
    return [e["message"] for e in await env.events(name) if e["reason"] == reason]


async def running(env: NodeEnv, name: str) -> bool:
    return (await env.pod(name))["status"].get("phase") == "Running"


async def test_a_missing_config_map_volume_holds_the_pod_in_container_creating_until_it_exists(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(with_volumes("web", {"name": "cfg", "configMap": {"name": "app-config"}},
                                        {"name": "opt", "secret": {"secretName": "nope", "optional": True}}))
    await env.clock.advance(130)
    p = await env.pod("web")
    assert p["status"]["phase"] == "Pending" and (await waiting(env, "web"))["reason"] == "ContainerCreating"
    assert not p["status"].get("podIP"), "no sandbox before the volumes are set up"
    failed = await messages(env, "web", "FailedMount")
    assert failed[0] == 'MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found'
    assert ("Unable to attach or mount volumes: unmounted volumes=[cfg], unattached volumes=[], "
            "failed to process volumes=[]: context deadline exceeded") in failed, "after two minutes"
    assert not await messages(env, "web", "Pulling"), "the optional Secret is no problem; nothing pulled yet"

    await env.admin.create(config_map("app-config", mode="prod"))
    took = await env.wait(lambda: running(env, "web"), timeout=130)
    assert took <= 123, "the next retry (back-off at most 2m2s) mounts it"


async def test_a_listed_key_must_exist_and_claims_must_be_bound(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(config_map("app-config", mode="prod"))
    await env.admin.create(with_volumes("keys", {"name": "cfg", "configMap": {
        "name": "app-config", "items": [{"key": "missing", "path": "m"}]}}))
    await env.admin.create(with_volumes("db", {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}))
    await env.clock.advance(5)
    assert (await messages(env, "keys", "FailedMount"))[0] == (
        'MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: missing')
    assert (await messages(env, "db", "FailedMount"))[0] == (
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process "
        "volumes=[data]: error processing PVC default/data: failed to fetch PVC from API server: "
        'persistentvolumeclaims "data" not found')
    assert not await running(env, "db")


async def test_env_from_a_missing_config_map_or_key_is_a_create_container_config_error(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("api", env=[{"name": "MODE", "valueFrom": {
        "configMapKeyRef": {"name": "settings", "key": "mode"}}}]))
    await env.admin.create(pod("worker", envFrom=[{"secretRef": {"name": "creds"}}]))
    await env.wait(lambda: _reason(env, "api", "CreateContainerConfigError"), timeout=20)
    state = await waiting(env, "api")
    assert state["message"] == 'configmap "settings" not found'
    assert 'Error: configmap "settings" not found' in await messages(env, "api", "Failed")
    await env.wait(lambda: _reason(env, "worker", "CreateContainerConfigError"), timeout=20)
    assert (await waiting(env, "worker"))["message"] == 'secret "creds" not found'

    await env.admin.create(config_map("settings", other="x"))
    await env.clock.advance(11)
    assert (await waiting(env, "api"))["message"] == "couldn't find key mode in ConfigMap default/settings"
    await env.admin.patch("configmaps", "settings", {"data": {"mode": "prod"}}, "default")
    took = await env.wait(lambda: running(env, "api"), timeout=20)
    assert took <= 11, "the pod worker retries every 10 s"
    assert (await env.pod("worker"))["status"]["phase"] == "Pending"


async def _reason(env: NodeEnv, name: str, reason: str) -> bool:
    return (await waiting(env, name)).get("reason") == reason
