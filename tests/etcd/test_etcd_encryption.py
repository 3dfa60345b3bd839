"""Encryption at rest: providers, prefixes, key file, rotation, and no Secret plaintext on disk."""

from __future__ import annotations

import asyncio
import base64
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from kconsole.api.encryption import (
    DecryptError,
    EncryptionConfigError,
    load_transformers,
    parse_config,
    rewrite,
)
from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, UserInfo
from kconsole.clock import VirtualClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Delete, Put

KEY1 = base64.b64encode(b"1" * 32).decode()
KEY2 = base64.b64encode(b"2" * 32).decode()


def config(*providers: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
            "resources": [{"resources": ["secrets", "configmaps"], "providers": list(providers)}]}


def test_default_key_is_generated_private_and_reused(tmp_path: Path) -> None:
    t = load_transformers(tmp_path)["secrets"]
    key_file = tmp_path / "encryption-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    stored = t.to_storage(b'{"data":{"password":"hunter2"}}')
    assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:") and b"hunter2" not in stored
    again = load_transformers(tmp_path)["secrets"]  # same key from the file
    assert again.from_storage(stored) == b'{"data":{"password":"hunter2"}}'
    assert again.from_storage(b"plain") == b"plain"  # identity reads pre-encryption values


@pytest.mark.parametrize("provider", ["aesgcm", "secretbox"])
def test_providers_round_trip_with_upstream_prefix(provider: str) -> None:
    t = parse_config(config({provider: {"keys": [{"name": "k1", "secret": KEY1}]}}))["secrets"]
    out = t.to_storage(b"secret-bytes")
    assert out.startswith(f"k8s:enc:{provider}:v1:k1:".encode())
    assert t.from_storage(out) == b"secret-bytes"
    assert t.to_storage(b"secret-bytes") != out  # a fresh nonce per write
    with pytest.raises(DecryptError, match="identity provider is not configured"):
        t.from_storage(b"plaintext")


def test_wrong_or_missing_key_is_named() -> None:
    writer = parse_config(config({"aesgcm": {"keys": [{"name": "k1", "secret": KEY1}]}}))["secrets"]
    other = parse_config(config({"aesgcm": {"keys": [{"name": "k1", "secret": KEY2}]}}))["secrets"]
    stranger = parse_config(config({"aesgcm": {"keys": [{"name": "k9", "secret": KEY1}]}}))["secrets"]
    data = writer.to_storage(b"x")
    with pytest.raises(DecryptError, match="fails to authenticate"):
        other.from_storage(data)
    with pytest.raises(DecryptError, match="aesgcm:v1:k1"):
        stranger.from_storage(data)


@pytest.mark.parametrize("doc, message", [
    ({"kind": "Secret"}, "kind: must be EncryptionConfiguration"),
    (config({"kms": {}}), "unsupported provider 'kms'"),
    (config({"aesgcm": {"keys": []}}), "at least one key"),
    (config({"aesgcm": {"keys": [{"name": "k", "secret": "!!"}]}}), "not valid base64"),
    (config({"aesgcm": {"keys": [{"name": "k", "secret": base64.b64encode(b"short").decode()}]}}), "16, 24 or 32-byte"),
    (config({"secretbox": {"keys": [{"name": "k", "secret": base64.b64encode(b"1" * 16).decode()}]}}), "32-byte key"),
])
def test_bad_configuration_names_the_field(doc: Any, message: str) -> None:
    with pytest.raises(EncryptionConfigError, match=message):
        parse_config(doc)


async def run(clock: VirtualClock, aw: Any) -> Any:
    task = asyncio.ensure_future(aw)
    await clock.run_until(task.done, 30, step=0.05)
    return task.result()


async def test_secrets_never_hit_the_disk_in_plaintext_and_rotate(tmp_path: Path) -> None:
    clock = VirtualClock()
    data = tmp_path / "data"
    cluster = await EtcdCluster.open(data, clock=clock, members=3, seed=5, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    api = APIServer(cluster, clock, seed=5, transformers=load_transformers(data))
    await run(clock, api.start())
    admin = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    plaintext = "correct-horse-battery-staple"
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
              "data": {"password": base64.b64encode(plaintext.encode()).decode()}, "type": "Opaque"}
    resp = await run(clock, api.handle(Request("create", "secrets", namespace="default", body=secret,
                                               credentials=admin)))
    assert resp.code == 201, resp.body
    got = await run(clock, api.handle(Request("get", "secrets", namespace="default", name="db", credentials=admin)))
    assert base64.b64decode(got.body["data"]["password"]).decode() == plaintext
    await clock.run_until(lambda: len({m.machine.revision for m in cluster.members}) == 1, 5)
    raw = (await run(clock, cluster.range("/registry/secrets/default/db"))).kvs[0].value
    assert raw.startswith(b"k8s:enc:aesgcm:v1:key1:")

    # Rotation: a new key first, the old one still readable; re-write; then the old key can go.
    cfg = tmp_path / "enc.yaml"
    old = (data / "encryption-key").read_text().strip()
    cfg.write_text(yaml.safe_dump(config({"aesgcm": {"keys": [{"name": "key2", "secret": KEY2},
                                                               {"name": "key1", "secret": old}]}})))
    rotated = load_transformers(data, cfg)["secrets"]
    assert await run(clock, rewrite(cluster, rotated)) == 1
    raw = (await run(clock, cluster.range("/registry/secrets/default/db"))).kvs[0].value
    assert raw.startswith(b"k8s:enc:aesgcm:v1:key2:")
    cfg.write_text(yaml.safe_dump(config({"aesgcm": {"keys": [{"name": "key2", "secret": KEY2}]}})))
    assert base64.b64encode(plaintext.encode()) in load_transformers(data, cfg)["secrets"].from_storage(raw)
    await run(clock, api.stop())
    await cluster.close()

    needles = [plaintext.encode(), base64.b64encode(plaintext.encode())]
    files = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.name == "db.sqlite" for p in files) and any(p.suffix == ".wal" for p in files)
    for path in files:
        blob = path.read_bytes()
        for needle in needles:
            assert needle not in blob, f"Secret plaintext found in {path.relative_to(tmp_path)}"


async def test_identity_first_stores_plaintext(tmp_path: Path) -> None:
    t = parse_config(config({"identity": {}}, {"aesgcm": {"keys": [{"name": "k1", "secret": KEY1}]}}))["secrets"]
    enc = parse_config(config({"aesgcm": {"keys": [{"name": "k1", "secret": KEY1}]}}))["secrets"].to_storage(b"v")
    assert t.to_storage(b"v") == b"v" and t.from_storage(enc) == b"v"
    assert os.path.exists(tmp_path)
    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path, clock=clock, members=1, seed=1)
    await clock.run_until(lambda: cluster.leader() is not None, 5)
    await run(clock, cluster.txn([], [Put("/registry/secrets/ns/a", enc)]))
    assert await run(clock, rewrite(cluster, t)) == 1
    assert (await run(clock, cluster.range("/registry/secrets/ns/a"))).kvs[0].value == b"v"
    await cluster.close()


async def test_a_served_cluster_takes_an_encryption_configuration_from_its_config_file(tmp_path: Path) -> None:
    """``encryption-config:`` in ``--config`` (relative to that file), like kube-apiserver's flag."""
    from kconsole.cluster import Cluster, ClusterConfig, ConfigError

    (tmp_path / "enc.yaml").write_text(yaml.safe_dump(config({"aesgcm": {"keys": [{"name": "mine", "secret": KEY1}]}})))
    conf = tmp_path / "kconsole.yaml"
    conf.write_text("nodes: 0\ncontrol-planes: 1\nencryption-config: enc.yaml\n")
    cfg = ClusterConfig.from_file(conf)
    assert cfg.encryption_config == tmp_path / "enc.yaml"
    cfg.http, cfg.data_dir = False, tmp_path / "data"
    clock = VirtualClock()
    cluster = Cluster(cfg, clock=clock)
    await run(clock, cluster.start())
    try:
        admin = cluster.api_client()
        await run(clock, admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                       "data": {"k": "v"}}, namespace="default"))
        assert cluster.etcd is not None
        raw = (await run(clock, cluster.etcd.range("/registry/configmaps/default/c"))).kvs[0].value
        assert raw.startswith(b"k8s:enc:aesgcm:v1:mine:")
        assert not (tmp_path / "data" / "encryption-key").exists()
    finally:
        await run(clock, cluster.stop())

    (tmp_path / "enc.yaml").write_text("kind: Nope\n")
    with pytest.raises(ConfigError, match=r"encryption-config .*enc\.yaml: kind: must be EncryptionConfiguration"):
        ClusterConfig.from_file(conf)
    conf.write_text("encryption-config: missing.yaml\n")
    with pytest.raises(ConfigError, match=r"cannot read encryption-config .*missing\.yaml"):
        ClusterConfig.from_file(conf)


async def test_a_server_without_the_key_starts_and_answers_upstreams_500_for_those_secrets(tmp_path: Path) -> None:
    """A restore without the source's key, or a rotation that dropped a key still in use: the API
    server starts, everything else is served, and reading an unreadable Secret (alone or in a list)
    is upstream's 'Internal error occurred: unable to transform key ...'."""
    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path / "etcd", clock=clock, members=1, seed=5, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)

    def secret(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"k": "dg=="}}

    async def serve(key: str) -> tuple[APIServer, Credentials]:
        api = APIServer(cluster, clock, seed=5,
                        transformers=parse_config(config({"aesgcm": {"keys": [{"name": "k", "secret": key}]}})))
        await run(clock, api.start())
        return api, Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))

    def call(api: APIServer, admin: Credentials, verb: str, resource: str, **kw: Any) -> Any:
        return run(clock, api.handle(Request(verb, resource, namespace="default", credentials=admin, **kw)))

    api, admin = await serve(KEY1)
    assert (await call(api, admin, "create", "secrets", body=secret("old"))).code == 201
    await run(clock, api.stop())

    api, admin = await serve(KEY2)  # before this change: the watch cache's list raised, no server
    try:
        got = await call(api, admin, "get", "secrets", name="old")
        assert got.code == 500 and got.body["reason"] == "InternalError"
        assert got.body["message"].startswith(
            'Internal error occurred: unable to transform key "/registry/secrets/default/old": ')
        assert (await call(api, admin, "list", "secrets")).code == 500
        assert (await call(api, admin, "create", "secrets", body=secret("new"))).code == 201
        assert (await call(api, admin, "get", "secrets", name="new")).code == 200
        assert (await call(api, admin, "list", "configmaps")).code == 200
        await run(clock, cluster.txn([], [Delete("/registry/secrets/default/old")]))
        await clock.run_until(lambda: not api.storage.caches["secrets"].undecodable, 5, step=0.1)
        assert (await call(api, admin, "get", "secrets", name="old")).code == 404
        listed = await call(api, admin, "list", "secrets")
        assert listed.code == 200 and [o["metadata"]["name"] for o in listed.body["items"]] == ["new"]
    finally:
        await run(clock, api.stop())
        await cluster.close()
