"""Cluster credentials on disk: a CA, the API server's serving certificate, the admin's client
certificate and bearer token, and the kubeconfig that kubectl reads.

Everything lives in the data folder so a restarted cluster keeps the same CA and admin identity and an
exported kubeconfig keeps working. Private keys and the kubeconfig are written with mode 0600.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_CERT, CA_KEY = "ca.crt", "ca.key"
SERVING_CERT, SERVING_KEY = "apiserver.crt", "apiserver.key"
ADMIN_CERT, ADMIN_KEY = "admin.crt", "admin.key"
ADMIN_TOKEN = "admin.token"
#: The key service account tokens are signed with (upstream's sa.key)
SA_KEY = "sa.key"
KUBECONFIG = "kubeconfig"
_VALIDITY = dt.timedelta(days=3650)


@dataclass(frozen=True, slots=True)
class PKI:
    """Paths of the generated files (all inside one data folder)."""

    dir: Path

    def path(self, name: str) -> Path:
        return self.dir / name


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` readable by the owner only, replacing the file atomically."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _load(dir: Path, cert_name: str, key_name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    cert_path, key_path = dir / cert_name, dir / key_name
    if not (cert_path.exists() and key_path.exists()):
        return None
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return cert, key


def _issue(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
           issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool = False, server_names: list[str] | None = None,
           client: bool = False, server_and_client: bool = False) -> x509.Certificate:
    now = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + _VALIDITY)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                                      key_encipherment=False, data_encipherment=False,
                                                      key_agreement=False, key_cert_sign=True, crl_sign=True,
                                                      encipher_only=False, decipher_only=False), critical=True)
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    else:
        builder = builder.add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                                      key_encipherment=True, data_encipherment=False,
                                                      key_agreement=False, key_cert_sign=False, crl_sign=False,
                                                      encipher_only=False, decipher_only=False), critical=True)
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else [ExtendedKeyUsageOID.SERVER_AUTH]
        if server_and_client:  # etcd's gateway dials its own gRPC port with its serving certificate
            usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if server_names:
        sans: list[x509.GeneralName] = []
        for name in server_names:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(name)))
            except ValueError:
                sans.append(x509.DNSName(name))
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def ensure_pki(data_dir: Path, *, address: str = "127.0.0.1", admin: str = "admin",
               admin_groups: tuple[str, ...] = ("system:masters",)) -> PKI:
    """Create (or reuse) the CA, serving and admin certificates in ``data_dir``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    loaded = _load(data_dir, CA_CERT, CA_KEY)
    if loaded is None:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kconsole-ca")])
        ca_cert = _issue(ca_name, ca_key, ca_name, ca_key, ca=True)
        _write_private(data_dir / CA_KEY, _key_pem(ca_key))
        (data_dir / CA_CERT).write_bytes(_cert_pem(ca_cert))
        for stale in (SERVING_CERT, ADMIN_CERT):
            (data_dir / stale).unlink(missing_ok=True)
    else:
        ca_cert, ca_key = loaded
    names = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
             "kubernetes.default.svc.cluster.local", "127.0.0.1", "::1", "10.96.0.1"]
    if address not in ("", "0.0.0.0", "::") and address not in names:
        names.append(address)
    serving = _load(data_dir, SERVING_CERT, SERVING_KEY)
    if serving is None or not _covers(serving[0], names):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _issue(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]), key,
                      ca_cert.subject, ca_key, server_names=names)
        _write_private(data_dir / SERVING_KEY, _key_pem(key))
        (data_dir / SERVING_CERT).write_bytes(_cert_pem(cert))
    if _load(data_dir, ADMIN_CERT, ADMIN_KEY) is None:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, admin)]
                            + [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in admin_groups])
        cert = _issue(subject, key, ca_cert.subject, ca_key, client=True)
        _write_private(data_dir / ADMIN_KEY, _key_pem(key))
        (data_dir / ADMIN_CERT).write_bytes(_cert_pem(cert))
    return PKI(data_dir)


def service_account_key(data_dir: Path) -> ec.EllipticCurvePrivateKey:
    """The key in ``data_dir`` that signs service account tokens, made (mode 0600) the first time: the
    tokens handed out keep working after a restart."""
    path = data_dir / SA_KEY
    if path.exists():
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{path}: the service account key must be an ECDSA key")
        return key
    key = ec.generate_private_key(ec.SECP256R1())
    _write_private(path, _key_pem(key))
    return key


def _covers(cert: x509.Certificate, names: list[str]) -> bool:
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have = {str(v) for v in sans.get_values_for_type(x509.DNSName)}
    have |= {str(v) for v in sans.get_values_for_type(x509.IPAddress)}
    return all(str(ipaddress.ip_address(n)) in have if _is_ip(n) else n in have for n in names)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def admin_token(data_dir: Path) -> str:
    """The admin bearer token, created once and kept in the data folder (0600)."""
    path = data_dir / ADMIN_TOKEN
    if path.exists():
        token = path.read_text().strip()
        if token:
            return token
    token = secrets.token_urlsafe(32)
    data_dir.mkdir(parents=True, exist_ok=True)
    _write_private(path, token.encode())
    return token


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def kubeconfig_text(server: str, token: str, pki: PKI | None, *, name: str = "kconsole", user: str = "admin",
                    client_cert: bool = True) -> str:
    """A kubeconfig for ``server``; with ``pki`` it trusts the CA and (``client_cert``) carries the admin's
    client certificate besides the token."""
    cluster: dict[str, str] = {"server": server}
    creds: dict[str, str] = {"token": token}
    if pki is not None:
        cluster["certificate-authority-data"] = _b64(pki.path(CA_CERT))
    if pki is not None and client_cert:
        creds["client-certificate-data"] = _b64(pki.path(ADMIN_CERT))
        creds["client-key-data"] = _b64(pki.path(ADMIN_KEY))
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": user, "user": creds}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def write_kubeconfig(data_dir: Path, text: str) -> Path:
    path = data_dir / KUBECONFIG
    _write_private(path, text.encode())
    return path
