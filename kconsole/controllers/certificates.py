"""CertificateSigningRequest signing: approved requests signed by the cluster CA.

As kube-controller-manager's csrsigning controller with ``--cluster-signing-cert-file`` and
``--cluster-signing-key-file`` (the settings ``cluster_signing_cert_file``/``_key_file``, which the
cluster points at the CA its HTTPS front trusts): a request that is Approved, not Failed and not
yet issued, for one of the built-in signers, gets ``status.certificate``. The certificate keeps the
request's subject (for ``kubernetes.io/kube-apiserver-client`` the CN is the user and each O a
group, so it works as a kubeconfig identity), its usages, and lasts ``spec.expirationSeconds`` or
the signing duration (a year), never past the CA's own expiry. Certificates carry real wall-clock
validity: TLS peers check them against real time. A request whose signer cannot be honoured (the
client signer asked for server auth) gets the ``Failed`` condition with upstream's reason.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID

from kconsole.objects.csr import parse_request
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import deep_copy

log = logging.getLogger(__name__)

CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
#: The signers kube-controller-manager's signing controller serves, with the usages each allows.
SIGNERS: dict[str, frozenset[str]] = {
    CLIENT_SIGNER: frozenset(("digital signature", "key encipherment", "client auth")),
    "kubernetes.io/kube-apiserver-client-kubelet": frozenset(("digital signature", "key encipherment",
                                                              "client auth")),
    "kubernetes.io/kubelet-serving": frozenset(("digital signature", "key encipherment", "server auth")),
    "kubernetes.io/legacy-unknown": frozenset(("digital signature", "key encipherment", "client auth",
                                               "server auth")),
}
#: Upstream's --cluster-signing-duration default (8760h).
SIGNING_DURATION = 365 * 24 * 3600
#: Upstream backdates certificates by five minutes for clock skew.
BACKDATE = dt.timedelta(minutes=5)

_EXTENDED = {"client auth": ExtendedKeyUsageOID.CLIENT_AUTH, "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
             "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
             "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
             "timestamping": ExtendedKeyUsageOID.TIME_STAMPING, "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING}


def _condition(status: dict[str, Any], kind: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"
               for c in status.get("conditions") or ())


class CSRSigningController(Controller):
    name = "certificatesigningrequest-signing-controller"
    component = ""
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        settings = self.settings()
        cert_file, key_file = settings.get("cluster_signing_cert_file"), settings.get("cluster_signing_key_file")
        self.duration = int(settings.get("cluster_signing_duration", SIGNING_DURATION))
        self.ca: x509.Certificate | None = None
        self.key: CertificateIssuerPrivateKeyTypes | None = None
        if not cert_file or not key_file:
            log.info("%s: no cluster signing CA (the API server serves no TLS): requests stay unsigned", self.name)
            return
        self.ca = x509.load_pem_x509_certificate(Path(cert_file).read_bytes())
        key = serialization.load_pem_private_key(Path(key_file).read_bytes(), password=None)
        self.key = key  # type: ignore[assignment]
        self.csrs = self.informer("certificatesigningrequests.certificates.k8s.io")
        self.csrs.add_event_handler(on_add=self.enqueue, on_update=lambda old, new: self.enqueue(new))

    async def sync(self, key: str) -> None:
        csr = self.csrs.get(key)
        if csr is None or self.ca is None:
            return
        spec, status = csr.get("spec") or {}, csr.get("status") or {}
        if status.get("certificate") or not _condition(status, "Approved") or _condition(status, "Failed"):
            return
        signer = spec.get("signerName")
        allowed = SIGNERS.get(signer or "")
        if allowed is None:
            return  # another signer's request: not ours to sign
        usages = list(spec.get("usages") or ())
        wrong = [u for u in usages if u not in allowed]
        if wrong:
            await self._fail(csr, "SignerValidationFailure",
                             f"invalid usage for client certificate: {wrong[0]}" if signer == CLIENT_SIGNER
                             else f"invalid usage for {signer}: {wrong[0]}")
            return
        parsed = parse_request(spec.get("request"))
        if isinstance(parsed, str):
            await self._fail(csr, "SignerValidationFailure", parsed)
            return
        pem = self._sign(parsed, usages, spec.get("expirationSeconds"))
        new = deep_copy(csr)
        new.setdefault("status", {})["certificate"] = base64.b64encode(pem).decode("ascii")
        await self.client.update_status(new)

    def _sign(self, request: x509.CertificateSigningRequest, usages: list[str], seconds: Any) -> bytes:
        assert self.ca is not None and self.key is not None
        now = dt.datetime.now(dt.timezone.utc)
        duration = self.duration if not isinstance(seconds, int) else min(self.duration, max(seconds, 600))
        not_after = min(now + dt.timedelta(seconds=duration), self.ca.not_valid_after_utc)
        builder = (x509.CertificateBuilder().subject_name(request.subject).issuer_name(self.ca.subject)
                   .public_key(request.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - BACKDATE).not_valid_after(not_after)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                       self.ca.public_key()), critical=False))  # type: ignore[arg-type]
        if "digital signature" in usages or "key encipherment" in usages:  # Go omits an empty KeyUsage
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature="digital signature" in usages, content_commitment=False,
                key_encipherment="key encipherment" in usages, data_encipherment=False, key_agreement=False,
                key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        extended = [_EXTENDED[u] for u in usages if u in _EXTENDED]
        if extended:
            builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
        try:
            sans = request.extensions.get_extension_for_class(x509.SubjectAlternativeName)
            builder = builder.add_extension(sans.value, critical=False)
        except x509.ExtensionNotFound:
            pass
        cert = builder.sign(self.key, hashes.SHA256())  # type: ignore[arg-type]
        return cert.public_bytes(serialization.Encoding.PEM)

    async def _fail(self, csr: dict[str, Any], reason: str, message: str) -> None:
        new = deep_copy(csr)
        conditions = new.setdefault("status", {}).setdefault("conditions", [])
        now = self.clock.rfc3339()
        conditions.append({"type": "Failed", "status": "True", "reason": reason, "message": message,
                           "lastUpdateTime": now, "lastTransitionTime": now})
        await self.client.update_status(new)
