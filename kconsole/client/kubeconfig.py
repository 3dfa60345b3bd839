"""Reading a kubeconfig the way kubectl does: which server, which CA, which credentials.

``KUBECONFIG`` may list several files (first one to name a cluster, user or context wins, as
client-go merges them). Credentials are a bearer token (inline or ``tokenFile``), a client
certificate (inline data or files), basic auth, or an ``exec`` plugin whose ExecCredential is
cached until its ``expirationTimestamp`` and fetched again after a 401.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import os
import ssl
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: ExecCredential versions kubectl accepts, newest first.
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
#: How long an exec plugin may run before the request fails.
EXEC_TIMEOUT = 60.0


class KubeconfigError(ValueError):
    """A kubeconfig that cannot be used, with the reason in words."""


def default_paths() -> list[Path]:
    """``$KUBECONFIG`` (path-separated) or ``~/.kube/config``."""
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path("~/.kube/config").expanduser()]


def _named(docs: list[tuple[Path, dict[str, Any]]], section: str) -> dict[str, tuple[Path, dict[str, Any]]]:
    out: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path, doc in docs:
        for item in doc.get(section) or ():
            if isinstance(item, dict) and item.get("name") and item["name"] not in out:
                inner = item.get(section[:-1]) or {}
                if not isinstance(inner, dict):
                    raise KubeconfigError(f"{path}: {section} entry {item['name']!r} is not a mapping")
                out[item["name"]] = (path, inner)
    return out


def _b64(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=False)
    except (ValueError, TypeError) as err:
        raise KubeconfigError(f"{what} is not valid base64: {err}") from None


def _relative(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else base.parent / p


def _timestamp(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass
class ExecPlugin:
    """A ``users[].user.exec`` entry: a command that prints an ExecCredential."""

    command: str
    args: list[str]
    env: dict[str, str]
    api_version: str
    base: Path
    cluster: dict[str, Any]
    provide_cluster_info: bool = False

    async def run(self) -> dict[str, Any]:
        """The plugin's ``status``: ``token`` or ``clientCertificateData``/``clientKeyData``."""
        command = self.command
        if os.sep in command and not Path(command).is_absolute():
            command = str(self.base.parent / command)
        spec: dict[str, Any] = {"interactive": False}
        if self.provide_cluster_info:
            spec["cluster"] = self.cluster
        info = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        env = dict(os.environ, **self.env, KUBERNETES_EXEC_INFO=json.dumps(info))
        try:
            proc = await asyncio.create_subprocess_exec(
                command, *self.args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env)
            out, err = await asyncio.wait_for(proc.communicate(), EXEC_TIMEOUT)
        except FileNotFoundError:
            raise KubeconfigError(f"exec plugin: executable {self.command} not found") from None
        except TimeoutError:
            raise KubeconfigError(f"exec plugin {self.command}: no answer within {EXEC_TIMEOUT:g} s") from None
        if proc.returncode != 0:
            raise KubeconfigError(f"exec plugin {self.command} failed (exit {proc.returncode}): "
                                  f"{err.decode(errors='replace').strip()}")
        try:
            doc = json.loads(out)
        except ValueError as e:
            raise KubeconfigError(f"exec plugin {self.command}: output is not an ExecCredential: {e}") from None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise KubeconfigError(f"exec plugin {self.command}: output is not an ExecCredential")
        if doc.get("apiVersion") != self.api_version:
            raise KubeconfigError(f"exec plugin {self.command}: answered {doc.get('apiVersion')!r}, "
                                  f"expected {self.api_version!r}")
        status = doc.get("status")
        if not isinstance(status, dict) or not (status.get("token") or status.get("clientCertificateData")):
            raise KubeconfigError(f"exec plugin {self.command}: ExecCredential has neither token nor certificate")
        return status


@dataclass
class RestConfig:
    """What one kubeconfig context says about reaching and authenticating to its API server."""

    context: str
    server: str
    namespace: str
    ca_pem: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    token: str | None = None
    token_file: Path | None = None
    username: str | None = None
    password: str | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    exec_plugin: ExecPlugin | None = None
    _exec_status: dict[str, Any] | None = field(default=None, repr=False)
    _exec_expiry: float | None = field(default=None, repr=False)

    def ssl_context(self, cert_pem: bytes | None = None, key_pem: bytes | None = None) -> ssl.SSLContext | bool:
        """The TLS settings (``False`` for plain http); the client certificate is loaded from private
        temporary files because ``ssl`` reads chains only from files."""
        if not self.server.startswith("https://"):
            return False
        ctx = ssl.create_default_context()
        if self.ca_pem:
            ctx.load_verify_locations(cadata=self.ca_pem.decode())
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        cert_pem, key_pem = cert_pem or self.cert_pem, key_pem or self.key_pem
        if cert_pem and key_pem:
            with tempfile.TemporaryDirectory(prefix="kconsole-tls-") as tmp:
                cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
                for path, data in ((cert, cert_pem), (key, key_pem)):
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "wb") as f:
                        f.write(data)
                try:
                    ctx.load_cert_chain(cert, key)
                except ssl.SSLError as err:
                    raise KubeconfigError(f"context {self.context}: client certificate or key unusable: {err}") \
                        from None
        return ctx

    async def exec_credential(self, *, refresh: bool = False, now: float | None = None) -> dict[str, Any] | None:
        """The exec plugin's cached status, run again when expired or ``refresh`` (after a 401)."""
        if self.exec_plugin is None:
            return None
        wall = now if now is not None else time.time()
        if refresh or self._exec_status is None or (self._exec_expiry is not None and wall >= self._exec_expiry):
            self._exec_status = await self.exec_plugin.run()
            self._exec_expiry = _timestamp(self._exec_status.get("expirationTimestamp"))
        return self._exec_status

    def bearer(self) -> str | None:
        """The static bearer token (``tokenFile`` is read each time: it may be rotated)."""
        if self.token_file is not None:
            try:
                return self.token_file.read_text().strip()
            except OSError as err:
                raise KubeconfigError(f"context {self.context}: cannot read tokenFile {self.token_file}: {err}") \
                    from None
        return self.token


def load(paths: list[Path] | None = None, context: str | None = None) -> RestConfig:
    """The :class:`RestConfig` of ``context`` (default: ``current-context``) from ``paths``."""
    paths = paths or default_paths()
    docs: list[tuple[Path, dict[str, Any]]] = []
    for path in paths:
        try:
            doc = yaml.safe_load(path.read_text())
        except FileNotFoundError:
            if len(paths) == 1:
                raise KubeconfigError(f"kubeconfig {path} does not exist") from None
            continue
        except (OSError, yaml.YAMLError) as err:
            raise KubeconfigError(f"kubeconfig {path}: cannot read: {err}") from None
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise KubeconfigError(f"kubeconfig {path}: not a mapping")
        docs.append((path, doc))
    if not docs:
        raise KubeconfigError(f"no kubeconfig in {', '.join(map(str, paths))}")
    if not context:
        context = next((d.get("current-context") for _, d in docs if d.get("current-context")), None)
        if not context:
            raise KubeconfigError("the kubeconfig has no current-context; pass --context")
    contexts, clusters, users = _named(docs, "contexts"), _named(docs, "clusters"), _named(docs, "users")
    if context not in contexts:
        raise KubeconfigError(f"context {context!r} is not in the kubeconfig (have: {', '.join(sorted(contexts))})")
    _, ctx = contexts[context]
    cluster_name, user_name = ctx.get("cluster"), ctx.get("user")
    if cluster_name not in clusters:
        raise KubeconfigError(f"context {context!r} names cluster {cluster_name!r}, which is not in the kubeconfig")
    cpath, cluster = clusters[cluster_name]
    server = str(cluster.get("server") or "").rstrip("/")
    if not server.startswith(("https://", "http://")):
        raise KubeconfigError(f"cluster {cluster_name!r}: server {server!r} is not an http(s) URL")
    cfg = RestConfig(context=context, server=server, namespace=str(ctx.get("namespace") or "default"),
                     insecure=bool(cluster.get("insecure-skip-tls-verify")),
                     tls_server_name=cluster.get("tls-server-name"))
    if cluster.get("certificate-authority-data"):
        cfg.ca_pem = _b64(cluster["certificate-authority-data"], f"cluster {cluster_name!r} certificate-authority-data")
    elif cluster.get("certificate-authority"):
        cfg.ca_pem = _read(_relative(cpath, cluster["certificate-authority"]), f"cluster {cluster_name!r} CA")
    if user_name is None:
        return cfg
    if user_name not in users:
        raise KubeconfigError(f"context {context!r} names user {user_name!r}, which is not in the kubeconfig")
    upath, user = users[user_name]
    cfg.token = user.get("token") or None
    if user.get("tokenFile") and not cfg.token:
        cfg.token_file = _relative(upath, user["tokenFile"])
    cfg.username, cfg.password = user.get("username"), user.get("password")
    if user.get("client-certificate-data"):
        cfg.cert_pem = _b64(user["client-certificate-data"], f"user {user_name!r} client-certificate-data")
    elif user.get("client-certificate"):
        cfg.cert_pem = _read(_relative(upath, user["client-certificate"]), f"user {user_name!r} client certificate")
    if user.get("client-key-data"):
        cfg.key_pem = _b64(user["client-key-data"], f"user {user_name!r} client-key-data")
    elif user.get("client-key"):
        cfg.key_pem = _read(_relative(upath, user["client-key"]), f"user {user_name!r} client key")
    if bool(cfg.cert_pem) != bool(cfg.key_pem):
        raise KubeconfigError(f"user {user_name!r}: a client certificate needs both certificate and key")
    if user.get("auth-provider"):
        raise KubeconfigError(f"user {user_name!r}: auth-provider plugins were removed from kubectl; "
                              "use an exec plugin")
    ex = user.get("exec")
    if ex:
        if not isinstance(ex, dict) or not ex.get("command"):
            raise KubeconfigError(f"user {user_name!r}: exec needs a command")
        api_version = ex.get("apiVersion") or ""
        if api_version not in EXEC_API_VERSIONS:
            raise KubeconfigError(f"user {user_name!r}: exec apiVersion {api_version!r} is not one of "
                                  f"{', '.join(EXEC_API_VERSIONS)}")
        env = {str(e.get("name")): str(e.get("value", "")) for e in ex.get("env") or () if isinstance(e, dict)}
        cluster_info = {"server": server, "insecure-skip-tls-verify": cfg.insecure}
        if cfg.ca_pem:
            cluster_info["certificate-authority-data"] = base64.b64encode(cfg.ca_pem).decode()
        cfg.exec_plugin = ExecPlugin(str(ex["command"]), [str(a) for a in ex.get("args") or ()], env,
                                     api_version, upath, cluster_info, bool(ex.get("provideClusterInfo")))
    return cfg


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise KubeconfigError(f"{what}: cannot read {path}: {err}") from None
