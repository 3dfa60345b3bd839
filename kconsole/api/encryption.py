"""Encryption at rest, configured like the kube-apiserver's ``--encryption-provider-config``.

An ``EncryptionConfiguration`` (``apiserver.config.k8s.io/v1``) lists, per group-resource
(``secrets``, ``configmaps``, ``deployments.apps``...), providers in order: the first one encrypts
new writes, every one of them can read. Stored values carry upstream's prefix
``k8s:enc:<provider>:v1:<key name>:`` so a reader knows which key to use; ``identity`` stores
plaintext (no prefix) and reads anything that carries no known prefix.

Providers:

- ``aesgcm``: AES-GCM with a 16, 24 or 32-byte key; value = prefix + 12-byte random nonce +
  ciphertext + tag (upstream's layout), the value's store key authenticated as additional data (as
  upstream's transformers bind it): a ciphertext copied under another key fails to decrypt.
- ``secretbox``: upstream uses NaCl's XSalsa20-Poly1305, which ``cryptography`` does not offer;
  kconsole uses ChaCha20-Poly1305 (same key size, 32 bytes, same AEAD family) with a 12-byte nonce.
  The configuration and prefix are upstream's; the bytes are not interchangeable with a real
  apiserver's.
- ``identity``: no encryption.

Values written before kconsole bound them to their key stay readable until migrated: at start the
API server re-writes every such value bound (:func:`migrate_unbound`), then records in the data
folder (``encryption-bound``) that none is left, and from then on refuses unbound ciphertexts.

Without a configuration file, :func:`load_transformers` encrypts Secrets with ``aesgcm`` under a
32-byte key generated once into ``<data dir>/encryption-key`` (mode 0600). Key rotation is
upstream's procedure: put the new key first, restart, then re-write every object
(:func:`rewrite`, like ``kubectl get secrets -A -o json | kubectl replace -f -``).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from kconsole.store.kv import KV, Compare, Put, prefix_end

PREFIX = b"k8s:enc:"
KEY_FILE = "encryption-key"
#: Present once every value of the data folder is bound to its key (see the module docstring).
BOUND_MARKER = "encryption-bound"
API_VERSIONS = ("apiserver.config.k8s.io/v1",)
NONCE = 12


class EncryptionConfigError(ValueError):
    """The EncryptionConfiguration is malformed; the message names the field."""


class DecryptError(ValueError):
    """A stored value cannot be decrypted with any configured key."""


@dataclass(frozen=True, slots=True)
class _Key:
    provider: str  # aesgcm | secretbox
    name: str
    aead: Any

    @property
    def prefix(self) -> bytes:
        return PREFIX + f"{self.provider}:v1:{self.name}:".encode()


class PrefixTransformer:
    """The Transformer the API server's storage calls: encrypt with the first provider, read any.
    ``key`` is the value's store key, authenticated as additional data."""

    def __init__(self, keys: list[_Key | None], marker: Path | None = None) -> None:
        if not keys:
            raise EncryptionConfigError("providers: at least one provider is required")
        self.write = keys[0]  # None = identity
        self.keys = [k for k in keys if k is not None]
        self.identity = any(k is None for k in keys)
        #: Where the data folder records that no unbound value is left; while it is absent, values
        #: encrypted without their key as additional data (older kconsole) are still read.
        self.marker = marker
        self.unbound_readable = marker is not None and not marker.exists()

    def to_storage(self, data: bytes, key: str) -> bytes:
        write = self.write
        if write is None:
            return data
        nonce = os.urandom(NONCE)
        return write.prefix + nonce + write.aead.encrypt(nonce, data, key.encode())

    def _open(self, data: bytes, key: str) -> tuple[bytes, bool]:
        """(plaintext, bound to ``key``)."""
        if data.startswith(PREFIX):
            for k in self.keys:
                prefix = k.prefix
                if data.startswith(prefix):
                    body = data[len(prefix):]
                    try:
                        return k.aead.decrypt(body[:NONCE], body[NONCE:], key.encode()), True
                    except InvalidTag:
                        pass
                    if self.unbound_readable:
                        try:
                            return k.aead.decrypt(body[:NONCE], body[NONCE:], None), False
                        except InvalidTag:
                            pass
                    raise DecryptError(f"value encrypted with {k.provider} key {k.name!r} fails to authenticate "
                                       "(wrong key material, or a value moved from another key?)")
            head = data[len(PREFIX): len(PREFIX) + 64].split(b":")
            named = ":".join(h.decode("ascii", "replace") for h in head[:3])
            raise DecryptError(f"no configured key can read a value encrypted with {named!r}")
        if self.identity:
            return data, True
        raise DecryptError("value is stored unencrypted but the identity provider is not configured")

    def from_storage(self, data: bytes, key: str) -> bytes:
        return self._open(data, key)[0]

    def is_current(self, data: bytes, key: str) -> bool:
        """Whether ``data`` is already written with the first provider and bound to ``key`` (nothing
        to rotate or migrate)."""
        if self.write is None:
            return not data.startswith(PREFIX)
        return data.startswith(self.write.prefix) and self._open(data, key)[1]


def _decode_key(provider: str, where: str, raw: Any) -> _Key:
    if not isinstance(raw, dict):
        raise EncryptionConfigError(f"{where}: a key must be a mapping with name and secret")
    name, secret = raw.get("name"), raw.get("secret")
    if not isinstance(name, str) or not name or ":" in name:
        raise EncryptionConfigError(f"{where}.name: required, and must not contain ':'")
    if not isinstance(secret, str):
        raise EncryptionConfigError(f"{where}.secret: required (base64 of the key bytes)")
    try:
        material = base64.b64decode(secret, validate=True)
    except (binascii.Error, ValueError):
        raise EncryptionConfigError(f"{where}.secret: not valid base64") from None
    if provider == "aesgcm":
        if len(material) not in (16, 24, 32):
            raise EncryptionConfigError(f"{where}.secret: aesgcm needs a 16, 24 or 32-byte key, got {len(material)}")
        return _Key(provider, name, AESGCM(material))
    if len(material) != 32:
        raise EncryptionConfigError(f"{where}.secret: secretbox needs a 32-byte key, got {len(material)}")
    return _Key(provider, name, ChaCha20Poly1305(material))


def parse_config(doc: Any, marker: Path | None = None) -> dict[str, PrefixTransformer]:
    """group-resource -> transformer, from a parsed EncryptionConfiguration document; ``marker``:
    see :class:`PrefixTransformer` (None: unbound values are never read)."""
    if not isinstance(doc, dict) or doc.get("kind") != "EncryptionConfiguration":
        raise EncryptionConfigError("kind: must be EncryptionConfiguration")
    if doc.get("apiVersion") not in API_VERSIONS:
        raise EncryptionConfigError(f"apiVersion: must be one of {', '.join(API_VERSIONS)}")
    rules = doc.get("resources")
    if not isinstance(rules, list) or not rules:
        raise EncryptionConfigError("resources: at least one rule is required")
    out: dict[str, PrefixTransformer] = {}
    for i, rule in enumerate(rules):
        where = f"resources[{i}]"
        if not isinstance(rule, dict):
            raise EncryptionConfigError(f"{where}: must be a mapping")
        names = rule.get("resources")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise EncryptionConfigError(f"{where}.resources: a list of group-resources is required")
        providers = rule.get("providers")
        if not isinstance(providers, list) or not providers:
            raise EncryptionConfigError(f"{where}.providers: at least one provider is required")
        keys: list[_Key | None] = []
        for j, prov in enumerate(providers):
            pwhere = f"{where}.providers[{j}]"
            if not isinstance(prov, dict) or len(prov) != 1:
                raise EncryptionConfigError(f"{pwhere}: exactly one of aesgcm, secretbox, identity")
            (kind, body), = prov.items()
            if kind == "identity":
                keys.append(None)
                continue
            if kind not in ("aesgcm", "secretbox"):
                raise EncryptionConfigError(f"{pwhere}: unsupported provider {kind!r} "
                                            "(kconsole supports aesgcm, secretbox, identity)")
            entries = (body or {}).get("keys") if isinstance(body, dict) or body is None else None
            if not isinstance(entries, list) or not entries:
                raise EncryptionConfigError(f"{pwhere}.{kind}.keys: at least one key is required")
            keys.extend(_decode_key(kind, f"{pwhere}.{kind}.keys[{k}]", e) for k, e in enumerate(entries))
        transformer = PrefixTransformer(keys, marker)
        for name in names:
            if name in out:
                raise EncryptionConfigError(f"{where}.resources: {name!r} is configured twice")
            out[name.removesuffix(".")] = transformer
    return out


def ensure_key(data_dir: str | os.PathLike[str]) -> bytes:
    """The data folder's default key, generated on first use with mode 0600."""
    path = Path(data_dir) / KEY_FILE
    if path.exists():
        try:
            key = base64.b64decode(path.read_text().strip(), validate=True)
        except (binascii.Error, ValueError):
            raise EncryptionConfigError(f"{path}: not a base64 key") from None
        if len(key) != 32:
            raise EncryptionConfigError(f"{path}: expected a 32-byte key, got {len(key)} bytes")
        return key
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    key = os.urandom(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(base64.b64encode(key).decode() + "\n")
    return key


def load_transformers(data_dir: str | os.PathLike[str],
                      config_path: str | os.PathLike[str] | None = None) -> dict[str, PrefixTransformer]:
    """What ``APIServer(kv, clock, transformers=...)`` takes: from the YAML file if given, else
    Secrets under the data folder's own aesgcm key (identity kept for reading older plaintext)."""
    if config_path is not None:
        try:
            doc = yaml.safe_load(Path(config_path).read_text())
        except yaml.YAMLError as err:
            raise EncryptionConfigError(f"{config_path}: not valid YAML: {err}") from None
        return parse_config(doc, Path(data_dir) / BOUND_MARKER)
    key = ensure_key(data_dir)
    return {"secrets": PrefixTransformer([_Key("aesgcm", "key1", AESGCM(key)), None], Path(data_dir) / BOUND_MARKER)}


async def rewrite(kv: KV, transformer: PrefixTransformer, prefix: str = "/registry/secrets/",
                  on_progress: Callable[[int], None] | None = None) -> int:
    """Re-write every value under ``prefix`` with the first provider (key rotation); returns how
    many were re-written. Each write is a compare-and-swap, so concurrent updates win."""
    done = 0
    listing = await kv.range(prefix, prefix_end(prefix))
    for item in listing.kvs:
        if transformer.is_current(item.value, item.key):
            continue
        fresh = transformer.to_storage(transformer.from_storage(item.value, item.key), item.key)
        res = await kv.txn([Compare(item.key, "mod", "=", item.mod_revision)], [Put(item.key, fresh, item.lease)])
        if res.succeeded:
            done += 1
            if on_progress:
                on_progress(done)
    return done


async def migrate_unbound(kv: KV, transformers: dict[str, PrefixTransformer], prefixes: dict[str, str]) -> int:
    """Re-write every value of the configured resources (group-resource -> store prefix) that an
    older kconsole encrypted unbound to its key, then record that none is left; returns how many."""
    pending = {gr: t for gr, t in transformers.items() if getattr(t, "unbound_readable", False) and gr in prefixes}
    done = 0
    for gr, transformer in pending.items():
        done += await rewrite(kv, transformer, prefixes[gr])
    for transformer in {id(t): t for t in pending.values()}.values():
        if transformer.marker is not None:
            transformer.marker.write_text("every encrypted value is bound to its key\n")
        transformer.unbound_readable = False
    return done
