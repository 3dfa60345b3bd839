"""The HTTPS client's credentials, read from kubeconfigs as kubectl reads them: bearer token,
token file, client certificate alone, and an exec plugin (run for real, cached, re-run after a 401)."""

from __future__ import annotations

import asyncio
import base64
import json
import stat
from pathlib import Path

import pytest
import yaml

from kconsole.api.server import APIServer
from kconsole.api.types import StatusError, UserInfo
from kconsole.client import Client
from kconsole.client.https import MAX_RETRIES, HTTPSEntry, connect
from kconsole.clock import VirtualClock
from kconsole.http.server import HTTPFront
from kconsole.client.kubeconfig import KubeconfigError, RestConfig, load
from kconsole.kubeconfig import ADMIN_CERT, ADMIN_KEY, CA_CERT
from kconsole.store.revlog import RevisionLog


def _kubeconfig(env, tmp_path: Path, user: dict) -> Path:
    assert env.entry is not env.api, "HTTPS only"
    data = env.entry.config
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "k", "cluster": {"server": data.server,
                                                  "certificate-authority-data": base64.b64encode(data.ca_pem).decode()}}],
           "users": [{"name": "u", "user": user}],
           "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "team"}}]}
    path = tmp_path / "kc.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


async def _whoami(env, path: Path) -> str:
    client = await connect(path, clock=env.clock)
    try:
        review = await client.create({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview",
                                      "metadata": {}})
        return review["status"]["userInfo"]["username"]
    finally:
        await client.entry.close()


@pytest.fixture
def https_env(env):
    if env.entry is env.api:
        pytest.skip("credentials are an HTTPS matter")
    return env


async def test_token_and_token_file(https_env, tmp_path: Path) -> None:
    env = https_env
    token = env.api.tokens.issue(UserInfo("alice", ("devs",)))
    assert await _whoami(env, _kubeconfig(env, tmp_path, {"token": token})) == "alice"
    (tmp_path / "tok").write_text(env.api.tokens.issue(UserInfo("bob")) + "\n")
    assert await _whoami(env, _kubeconfig(env, tmp_path, {"tokenFile": "tok"})) == "bob"


async def test_client_certificate_alone(https_env, tmp_path: Path) -> None:
    env = https_env
    data = tmp_path / "data"  # where the env fixture's HTTP front keeps its PKI
    user = {"client-certificate": str(data / ADMIN_CERT), "client-key": str(data / ADMIN_KEY)}
    assert (data / CA_CERT).exists()
    assert await _whoami(env, _kubeconfig(env, tmp_path, user)) == "admin"


async def test_exec_plugin_runs_and_is_cached(https_env, tmp_path: Path) -> None:
    env = https_env
    token = env.api.tokens.issue(UserInfo("carol", ("ops",)))
    calls = tmp_path / "calls"
    plugin = tmp_path / "plugin.sh"
    cred = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": token}}
    plugin.write_text(f"#!/bin/sh\necho run >> {calls}\ntest -n \"$KUBERNETES_EXEC_INFO\" || exit 3\n"
                      f"echo '{json.dumps(cred)}'\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "./plugin.sh",
                     "interactiveMode": "Never"}}
    path = _kubeconfig(env, tmp_path, user)
    client = await connect(path, clock=env.clock)
    try:
        review = await client.create({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview",
                                      "metadata": {}})
        assert review["status"]["userInfo"]["username"] == "carol"
        with pytest.raises(StatusError) as err:  # carol has no role: RBAC applies to her
            await client.list("secrets", "kube-system")
        assert err.value.code == 403
    finally:
        await client.entry.close()
    assert calls.read_text().count("run") == 1, "the credential is cached until it expires"


async def test_exec_plugin_failure_is_a_clear_error(https_env, tmp_path: Path) -> None:
    plugin = tmp_path / "bad.sh"
    plugin.write_text("#!/bin/sh\necho 'no login' >&2\nexit 1\n")
    plugin.chmod(0o755)
    path = _kubeconfig(https_env, tmp_path, {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                                      "command": str(plugin)}})
    with pytest.raises(KubeconfigError, match="exit 1.*no login"):
        await HTTPSEntry.connect(path, clock=https_env.clock)


def test_kubeconfig_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="does not exist"):
        load([tmp_path / "missing"])
    path = tmp_path / "kc"
    path.write_text(yaml.safe_dump({"contexts": [{"name": "a", "context": {"cluster": "x"}}], "current-context": "a"}))
    with pytest.raises(KubeconfigError, match="names cluster 'x'"):
        load([path])
    with pytest.raises(KubeconfigError, match="context 'b' is not in the kubeconfig"):
        load([path], "b")


async def test_a_request_refused_with_retry_after_is_sent_again_as_client_go_does(tmp_path: Path) -> None:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    front = HTTPFront(api, port=0, tls=True, data_dir=tmp_path / "data", clock=clock,
                      max_mutating_requests_inflight=0)
    await front.start()
    assert front.kubeconfig_path is not None
    admin = load([front.kubeconfig_path])
    # alice's token alone (no admin certificate): not in system:masters, so the limits apply to her
    rest = RestConfig(context="alice", server=admin.server, namespace="default", ca_pem=admin.ca_pem,
                      token=api.tokens.issue(UserInfo("alice")))
    entry = HTTPSEntry(rest, clock)
    await entry.open()
    alice = Client(entry, "", clock)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}
    try:
        # Refused (429, Retry-After: 1): the client waits its second and asks again.
        asking = asyncio.ensure_future(alice.create(cm))
        await clock.settle()
        assert not asking.done()
        front.inflight_limits["mutating"] = 200
        await clock.advance(1)
        with pytest.raises(StatusError) as err:
            await asking
        assert err.value.code == 403  # it got through the limit to the authorizer

        # Still refused after ten retries: the caller gets the 429.
        front.inflight_limits["mutating"] = 0
        began = clock.now()
        asking = asyncio.ensure_future(alice.create(cm))
        for _ in range(MAX_RETRIES):
            await clock.settle()
            assert not asking.done()
            await clock.advance(1)
        with pytest.raises(StatusError) as err:
            await asking
        assert err.value.code == 429 and clock.now() - began == MAX_RETRIES
    finally:
        await entry.close()
        await front.stop()
        await api.stop()
        await kv.close()
