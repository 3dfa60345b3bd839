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
#: Store keys, which encryption authenticates as additional data.
KEY_A, KEY_B = "/registry/secrets/ns/a", "/registry/secrets/ns/b"


def config(*providers: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
            "resources": [{"resources": ["secrets", "configmaps"], "providers": list(providers)}]}


def test_default_key_is_generated_private_and_reused(tmp_path: Path) -> None:
    t = load_transformers(tmp_path)["secrets"]
    key_file = tmp_path / "encryption-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    stored = t.to_storage(b'{"data":{"password":"hunter2"}}', KEY_A)
    assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:") and b"hunter2" not in stored
    again = load_transformers(tmp_path)["secrets"]  # same key from the file
    assert again.from_storage(stored, KEY_A) == b'{"data":{"password":"hunter2"}}'
    assert again.from_storage(b"plain", KEY_A) == b"plain"  # identity reads pre-encryption values


@pytest.mark.parametrize("provider", ["aesgcm", "secretbox"])
def test_providers_round_trip_with_upstream_prefix(provider: str) -> None:
    t = parse_config(config({provider: {"keys": [{"name": "k1", "secret": KEY1}]}}))["secrets"]
    out = t.to_storage(b"secret-bytes", KEY_A)
    assert out.startswith(f"k8s:enc:{provider}:v1:k1:".encode())
    assert t.from_storage(out, KEY_A) == b"secret-bytes"
    assert t.to_storage(b"secret-bytes", KEY_A) != out  # a fresh nonce per write
    with pytest.raises(DecryptError, match="identity provider is not configured"):
        t.from_storage(b"plaintext", KEY_A)
    # The key is authenticated: the same bytes stored under another key do not decrypt.
    with pytest.raises(DecryptError, match="a value moved from another key"):
        t.from_storage(out, KEY_B)


def test_wrong_or_missing_key_is_named() -> None:
    writer = parse_config(config({"aesgcm": {"keys": [{"name": "k1", "secret": KEY1}]}}))["secrets"]
    other = parse_config(config({"aesgcm": {"keys": [{"name": "k1", "secret": KEY2}]}}))["secrets"]
    stranger = parse_config(config({"aesgcm": {"keys": [{"name": "k9", "secret": KEY1}]}}))["secrets"]
    data = writer.to_storage(b"x", KEY_A)
    with pytest.raises(DecryptError, match="fails to authenticate"):
        other.from_storage(data, KEY_A)
    with pytest.raises(DecryptError, match="aesgcm:v1:k1"):
        stranger.from_storage(data, KEY_A)


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
    assert base64.b64encode(plaintext.encode()) in load_transformers(data, cfg)["secrets"].from_storage(
        raw, "/registry/secrets/default/db")
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
    enc = parse_config(config({"aesgcm": {"keys": [{"name": "k1", "secret": KEY1}]}}))["secrets"].to_storage(
        b"v", "/registry/secrets/ns/a")
    assert t.to_storage(b"v", KEY_A) == b"v" and t.from_storage(enc, "/registry/secrets/ns/a") == b"v"
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


async def test_a_ciphertext_moved_under_another_key_does_not_decrypt(tmp_path: Path) -> None:
    """Swapping two Secrets' stored values in the database is detected: each value is bound to its
    key (upstream's authenticated data), so both reads fail instead of answering each other's data."""
    clock = VirtualClock()
    data = tmp_path / "data"
    cluster = await EtcdCluster.open(data / "etcd", clock=clock, members=1, seed=5, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    api = APIServer(cluster, clock, seed=5, transformers=load_transformers(data))
    await run(clock, api.start())
    admin = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    for name, word in (("alice", "YWxpY2U="), ("mallory", "bWFsbG9yeQ==")):
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"k": word}}
        assert (await run(clock, api.handle(Request("create", "secrets", namespace="default", body=body,
                                                    credentials=admin)))).code == 201
    await run(clock, api.stop())
    keys = ["/registry/secrets/default/alice", "/registry/secrets/default/mallory"]
    values = [(await run(clock, cluster.range(k))).kvs[0].value for k in keys]
    await run(clock, cluster.txn([], [Put(keys[0], values[1]), Put(keys[1], values[0])]))
    api = APIServer(cluster, clock, seed=5, transformers=load_transformers(data))
    await run(clock, api.start())
    admin = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    for name in ("alice", "mallory"):
        got = await run(clock, api.handle(Request("get", "secrets", namespace="default", name=name,
                                                  credentials=admin)))
        assert got.code == 500
        assert got.body["message"].startswith(f'Internal error occurred: unable to transform key '
                                              f'"/registry/secrets/default/{name}"')
    await run(clock, api.stop())
    await cluster.close()


async def test_values_of_an_older_data_folder_are_bound_at_start_then_unbound_ones_refused(tmp_path: Path) -> None:
    """Older kconsole versions encrypted without binding the key: a start re-writes those values bound
    and records it (encryption-bound); from then on an unbound value is refused like a moved one."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    clock = VirtualClock()
    data = tmp_path / "data"
    key = load_transformers(data)["secrets"].keys[0].aead  # generates the folder's key
    assert isinstance(key, AESGCM)

    def unbound(text: bytes) -> bytes:
        nonce = b"\0" * 12
        return b"k8s:enc:aesgcm:v1:key1:" + nonce + key.encrypt(nonce, text, None)

    old = b'{"apiVersion":"v1","kind":"Secret","metadata":{"name":"old","namespace":"default"},"data":{"k":"dg=="}}'
    cluster = await EtcdCluster.open(data / "etcd", clock=clock, members=1, seed=5, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    await run(clock, cluster.txn([], [Put("/registry/secrets/default/old", unbound(old))]))
    transformers = load_transformers(data)
    assert transformers["secrets"].unbound_readable
    api = APIServer(cluster, clock, seed=5, transformers=transformers)
    await run(clock, api.start())
    admin = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    got = await run(clock, api.handle(Request("get", "secrets", namespace="default", name="old", credentials=admin)))
    assert got.code == 200 and got.body["data"] == {"k": "dg=="}
    assert (data / "encryption-bound").exists() and not transformers["secrets"].unbound_readable
    raw = (await run(clock, cluster.range("/registry/secrets/default/old"))).kvs[0].value
    assert load_transformers(data)["secrets"].from_storage(raw, "/registry/secrets/default/old") == old
    await run(clock, api.stop())

    await run(clock, cluster.txn([], [Put("/registry/secrets/default/planted", unbound(old))]))
    api = APIServer(cluster, clock, seed=5, transformers=load_transformers(data))
    await run(clock, api.start())
    admin = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    planted = await run(clock, api.handle(Request("get", "secrets", namespace="default", name="planted",
                                                  credentials=admin)))
    assert planted.code == 500 and "a value moved from another key" in planted.body["message"]
    assert (await run(clock, api.handle(Request("get", "secrets", namespace="default", name="old",
                                                credentials=admin)))).code == 200
    await run(clock, api.stop())
    await cluster.close()
