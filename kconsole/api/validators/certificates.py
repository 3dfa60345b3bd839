"""certificates.k8s.io: CertificateSigningRequests, as upstream's pkg/apis/certificates/validation.

The request must be a PEM ``CERTIFICATE REQUEST`` whose signature verifies, with a signer and at
least one known usage; ``Approved`` and ``Denied`` exclude each other and neither may be removed
once set.
"""

from __future__ import annotations

import base64
from typing import Any

from kconsole.api.validators.field import Cause, GoLiteral, forbidden, invalid, not_supported, required
from kconsole.objects.csr import parse_request

Obj = dict[str, Any]

USAGES = ("signing", "digital signature", "content commitment", "key encipherment", "key agreement",
          "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
          "server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
          "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc")
CONDITION_TYPES = ("Approved", "Denied", "Failed")
#: The shortest certificate a request may ask for (upstream's 10 minutes).
MIN_EXPIRATION = 600


def _bytes_literal(data: bytes) -> GoLiteral:
    """A []byte as Go's %#v prints it (upstream's field.Invalid value for spec.request)."""
    return GoLiteral("[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}")


def validate_csr(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes: list[Cause] = []
    request = spec.get("request")
    if not request:
        causes.append(required("spec.request"))
    else:
        parsed = parse_request(request)
        if isinstance(parsed, str):
            raw = base64.b64decode(request, validate=False) if isinstance(request, str) else b""
            causes.append(invalid("spec.request", _bytes_literal(raw), parsed))
    signer = spec.get("signerName")
    if not signer:
        causes.append(required("spec.signerName"))
    elif "/" not in signer:
        causes.append(invalid("spec.signerName", signer, "must be a fully qualified domain and path of the form "
                              "'example.com/signer-name'"))
    usages = spec.get("usages") or []
    if not usages:
        causes.append(required("spec.usages", "usages must be provided"))
    for i, usage in enumerate(usages):
        if usage not in USAGES:
            causes.append(not_supported(f"spec.usages[{i}]", usage, USAGES))
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < MIN_EXPIRATION:
        causes.append(invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 600 "
                              "seconds (10 minutes)"))
    causes += _conditions(obj)
    return causes


def _conditions(obj: Obj) -> list[Cause]:
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    causes: list[Cause] = []
    seen: dict[str, int] = {}
    for i, cond in enumerate(status.get("conditions") or ()):
        kind = (cond or {}).get("type") if isinstance(cond, dict) else None
        path = f"status.conditions[{i}]"
        if not kind:
            causes.append(required(f"{path}.type"))
            continue
        if kind in seen and kind in CONDITION_TYPES:
            causes.append({"reason": "FieldValueDuplicate", "field": f"{path}.type",
                           "message": f'Duplicate value: "{kind}"'})
        seen.setdefault(kind, i)
        if cond.get("status") not in ("True", "False", "Unknown"):
            causes.append(not_supported(f"{path}.status", cond.get("status"), ("False", "True", "Unknown")))
        if kind in ("Approved", "Denied") and cond.get("status") != "True":
            causes.append(not_supported(f"{path}.status", cond.get("status"), ("True",)))
    if "Approved" in seen and "Denied" in seen:
        later = max(seen["Approved"], seen["Denied"])
        causes.append(invalid(f"status.conditions[{later}].type", status["conditions"][later]["type"],
                              "Approved and Denied conditions are mutually exclusive"))
    return causes


def validate_csr_update(obj: Obj, old: Obj) -> list[Cause]:
    """Approval, denial and failure are for good: a condition of those types is never removed."""
    new_types = {c.get("type") for c in ((obj.get("status") or {}).get("conditions") or ()) if isinstance(c, dict)}
    causes: list[Cause] = []
    for cond in (old.get("status") or {}).get("conditions") or ():
        kind = cond.get("type") if isinstance(cond, dict) else None
        if kind in CONDITION_TYPES and kind not in new_types:
            causes.append(forbidden("status.conditions", f'updates may not remove a condition of type "{kind}"'))
    return causes
