"""Service account tokens: JWTs signed with the cluster's service-account key, as kube-apiserver
issues them (``--service-account-signing-key-file``), and their authenticator.

A token from ``kubectl create token`` is then what a kubeadm cluster hands out: three base64url
parts whose claims (issuer, audiences, expiry, the account and what the token is bound to) a user
can decode and read. Like upstream's, it keeps working across API server restarts (the cluster
keeps the key in its data folder, see kconsole.kubeconfig) until it expires on the simulated clock, the account is
deleted or recreated, or the Pod or Secret it is bound to goes; then it is refused with 401.
The key is ECDSA P-256 (ES256, which kube-apiserver accepts), like the rest of kconsole's PKI.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from kconsole.api.authn import service_account_user
from kconsole.api.types import StatusError, UserInfo

Obj = dict[str, Any]
SigningKey = ec.EllipticCurvePrivateKey
#: upstream's default --service-account-issuer and --api-audiences (which default to the issuer)
ISSUER = "https://kubernetes.default.svc.cluster.local"
#: Kinds a token may be bound to (upstream's TokenRequest boundObjectRef), by their resource.
BOUND_KINDS = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}
#: Where kube-apiserver serves the issuer's OpenID discovery document and its keys (KEP-1393).
OIDC_CONFIGURATION_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
_COORDINATE = 32  # P-256: r and s are 32 bytes each in a JWS signature
_MAX_VERIFIED = 10_000


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenSigner:
    """Signs and verifies the cluster's service account JWTs."""

    def __init__(self, key: SigningKey | None = None) -> None:
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.public = self.key.public_key()
        der = self.public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        #: upstream's keyIDFromPublicKey: the base64url SHA-256 of the DER public key
        self.kid = _b64(hashlib.sha256(der).digest())
        self._header = _b64(json.dumps({"alg": "ES256", "kid": self.kid}, separators=(",", ":")).encode())

    def sign(self, claims: Obj) -> str:
        payload = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
        signing_input = f"{self._header}.{payload}".encode("ascii")
        r, s = decode_dss_signature(self.key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        return f"{self._header}.{payload}.{_b64(r.to_bytes(_COORDINATE, 'big') + s.to_bytes(_COORDINATE, 'big'))}"

    def verify(self, token: str) -> Obj | None:
        """The claims of a token this key signed; None for anything else (not a JWT, another key)."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header = json.loads(_unb64(parts[0]))
            signature = _unb64(parts[2])
            if not isinstance(header, dict) or header.get("alg") != "ES256" or len(signature) != 2 * _COORDINATE:
                return None
            der = encode_dss_signature(int.from_bytes(signature[:_COORDINATE], "big"),
                                       int.from_bytes(signature[_COORDINATE:], "big"))
            self.public.verify(der, f"{parts[0]}.{parts[1]}".encode("ascii"), ec.ECDSA(hashes.SHA256()))
            claims = json.loads(_unb64(parts[1]))
        except (ValueError, InvalidSignature, UnicodeError):
            return None
        return claims if isinstance(claims, dict) else None


def _ref(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    return {"name": meta.get("name", ""), "uid": meta.get("uid", "")}


def token_claims(account: Obj, audiences: list[str], now: float, seconds: int, jti: str,
                 bound: tuple[str, Obj] | None = None, node: Obj | None = None) -> Obj:
    """upstream's serviceaccount.Claims: who, for whom, how long, and what it is bound to (a Pod's
    token also names the Pod's node, as ServiceAccountTokenPodNodeInfo adds)."""
    meta = account["metadata"]
    private: Obj = {"namespace": meta.get("namespace", ""), "serviceaccount": _ref(account)}
    if bound is not None:
        kind, obj = bound
        private[kind.lower()] = _ref(obj)
        if node is not None:
            private["node"] = _ref(node)
    return {"aud": audiences, "exp": int(now) + seconds, "iat": int(now), "iss": ISSUER, "jti": jti,
            "kubernetes.io": private, "nbf": int(now),
            "sub": f"system:serviceaccount:{meta.get('namespace', '')}:{meta.get('name', '')}"}


@dataclass(frozen=True, slots=True)
class _Verified:
    user: UserInfo
    expires: float
    #: (resource, namespace or None, name, uid) that must still exist: the account, then what it is bound to
    refs: tuple[tuple[str, str | None, str, str], ...]


class ServiceAccountTokenAuthenticator:
    """Bearer JWTs -> service account users (upstream's service account token authenticator)."""

    def __init__(self, signer: TokenSigner, now: Callable[[], float],
                 get_object: Callable[[str, str | None, str], Obj | None]) -> None:
        self.signer = signer
        self._now = now
        self._get = get_object
        self._verified: dict[str, _Verified] = {}

    def authenticate(self, token: str) -> UserInfo | None:
        """The account's user; None when the token is not one of ours; 401 when it is but no longer
        holds (expired, or the account or bound object is gone or was recreated)."""
        found = self._verified.get(token)
        if found is None:
            found = self._check(token)
            if found is None:
                return None
            if len(self._verified) >= _MAX_VERIFIED:
                self._verified.clear()
            self._verified[token] = found
        if self._now() >= found.expires:
            raise StatusError.unauthorized()
        for resource, namespace, name, uid in found.refs:
            obj = self._get(resource, namespace, name)
            if obj is None or (uid and obj["metadata"].get("uid") != uid) or obj["metadata"].get("deletionTimestamp"):
                raise StatusError.unauthorized()
        return found.user

    def _check(self, token: str) -> _Verified | None:
        claims = self.signer.verify(token)
        if claims is None or claims.get("iss") != ISSUER:
            return None
        audiences = claims.get("aud")
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict) or not isinstance(audiences, list) or ISSUER not in audiences:
            return None
        namespace = str(private.get("namespace") or "")
        account = private.get("serviceaccount") or {}
        refs = [("serviceaccounts", namespace, str(account.get("name") or ""), str(account.get("uid") or ""))]
        for kind, resource in BOUND_KINDS.items():
            ref = private.get(kind.lower())
            if not isinstance(ref, dict) or (resource == "nodes" and "pod" in private):
                continue  # a Pod-bound token's node is information, not a binding
            refs.append((resource, None if resource == "nodes" else namespace, str(ref.get("name") or ""),
                         str(ref.get("uid") or "")))
        user = service_account_user(namespace, refs[0][2], refs[0][3])
        return _Verified(user, float(claims.get("exp") or 0), tuple(refs))


def openid_configuration(base_url: str) -> Obj:
    """The discovery document a relying party (a cloud's workload identity, Vault) reads, as
    kube-apiserver writes it: the JWKS address is the API server's own URL."""
    return {"issuer": ISSUER, "jwks_uri": base_url.rstrip("/") + JWKS_PATH, "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["ES256"]}


def jwks(signer: TokenSigner) -> Obj:
    """The public key that verifies service account tokens, as a JSON Web Key Set (RFC 7517)."""
    numbers = signer.public.public_numbers()
    return {"keys": [{"use": "sig", "kty": "EC", "kid": signer.kid, "crv": "P-256", "alg": "ES256",
                      "x": _b64(numbers.x.to_bytes(_COORDINATE, "big")),
                      "y": _b64(numbers.y.to_bytes(_COORDINATE, "big"))}]}
