"""A CertificateSigningRequest's ``spec.request``, parsed as upstream's ParseCSR reads it: shared by
the API server's validation and the signing controller, which must agree on what a request is."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509


def parse_request(encoded: Any) -> x509.CertificateSigningRequest | str:
    """The CSR of ``spec.request`` (base64 of PEM), or upstream's ParseCSR error."""
    try:
        pem = base64.b64decode(encoded or "", validate=False)
    except (binascii.Error, ValueError):
        return "PEM block type must be CERTIFICATE REQUEST"
    if b"-----BEGIN CERTIFICATE REQUEST-----" not in pem:
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        csr = x509.load_pem_x509_csr(pem)
    except ValueError as err:
        return f"x509: malformed certificate request: {err}"
    if not csr.is_signature_valid:
        return "x509: ECDSA verification failure"
    return csr
