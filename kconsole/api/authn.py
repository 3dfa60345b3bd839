"""Authentication: who is calling, from a bearer token or an already-verified client certificate.

Tokens follow upstream's static token file (``--token-auth-file``): one CSV line per token,
``token,user,uid,"group1,group2"``. Every authenticated user also belongs to
``system:authenticated``; service-account users (``system:serviceaccount:<ns>:<name>``) also get
``system:serviceaccounts`` and ``system:serviceaccounts:<ns>`` as upstream's token authenticator
gives them, so RBAC bindings to those groups work.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path

from kconsole.api.types import Credentials, StatusError, UserInfo

AUTHENTICATED = "system:authenticated"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


class TokenFileError(ValueError):
    """A token file that cannot be read; the message names the file and the line."""


def with_implicit_groups(user: UserInfo) -> UserInfo:
    """The user as RBAC sees it: plus system:authenticated and, for service accounts, their groups."""
    extra: list[str] = []
    if user.name.startswith(SERVICE_ACCOUNT_PREFIX):
        ns, sep, _ = user.name[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
        if sep and ns:
            extra += [SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{ns}"]
    extra.append(AUTHENTICATED)
    missing = [g for g in extra if g not in user.groups]
    if not missing:
        return user
    return UserInfo(name=user.name, groups=user.groups + tuple(missing), uid=user.uid)


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """The user a service account token authenticates as."""
    return with_implicit_groups(UserInfo(name=f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}", uid=uid))


class TokenAuthenticator:
    """Bearer tokens -> users; client-certificate users pass through (the HTTP front verified them)."""

    def __init__(self, tokens: dict[str, UserInfo] | None = None, now: Callable[[], float] | None = None) -> None:
        self._tokens: dict[str, UserInfo] = {}
        #: Tokens that expire (``kubectl create token``), with the (simulated) time they stop working.
        self._expiry: dict[str, float] = {}
        self._now = now
        #: What was added, without implicit groups: what a token file round-trips.
        self._declared: dict[str, UserInfo] = {}
        #: Asked about a token that is not one of these (service account JWTs): a user, None when the
        #: token is not its either, or it raises 401 itself.
        self.fallback: Callable[[str], UserInfo | None] | None = None
        for token, user in (tokens or {}).items():
            self.add(token, user)

    def add(self, token: str, user: UserInfo) -> None:
        if not token:
            raise ValueError("a token must not be empty")
        if not user.name:
            raise ValueError("a token's user must have a name")
        self._declared[token] = user
        self._tokens[token] = with_implicit_groups(user)

    def issue(self, user: UserInfo, expires_at: float | None = None) -> str:
        """A fresh random token for ``user``; with ``expires_at`` it is refused from then on (needs the
        authenticator's ``now``)."""
        token = secrets.token_urlsafe(32)
        self.add(token, user)
        if expires_at is not None:
            if self._now is None:
                raise ValueError("an expiring token needs an authenticator with a clock")
            self._expiry[token] = expires_at
        return token

    def revoke(self, token: str) -> None:
        self._tokens.pop(token, None)
        self._declared.pop(token, None)
        self._expiry.pop(token, None)

    def tokens(self) -> dict[str, UserInfo]:
        """Token -> user as declared (without implicit groups)."""
        return dict(self._declared)

    def token_for(self, user_name: str) -> str | None:
        """Some token that authenticates as ``user_name`` (for building kubeconfigs and clients)."""
        for token, user in self._declared.items():
            if user.name == user_name:
                return token
        return None

    def authenticate(self, credentials: Credentials) -> UserInfo:
        if credentials.cert_user is not None:
            return with_implicit_groups(credentials.cert_user)
        if credentials.token:
            user = self._tokens.get(credentials.token)
            if user is not None:
                if self._expiry and credentials.token in self._expiry and self._expired(credentials.token):
                    raise StatusError.unauthorized()
                return user
            if self.fallback is not None:
                user = self.fallback(credentials.token)
                if user is not None:
                    return user
        raise StatusError.unauthorized()

    def _expired(self, token: str) -> bool:
        assert self._now is not None
        if self._now() < self._expiry[token]:
            return False
        self.revoke(token)
        return True

    def load_token_file(self, path: str | os.PathLike[str]) -> None:
        """Add every token of a static token file (later lines win over earlier duplicates)."""
        for token, user in load_token_file(path).items():
            self.add(token, user)

    def write_token_file(self, path: str | os.PathLike[str]) -> None:
        write_token_file(path, self._declared)


def load_token_file(path: str | os.PathLike[str]) -> dict[str, UserInfo]:
    """Parse upstream's static token CSV; a malformed line raises TokenFileError naming it."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as err:
        raise TokenFileError(f"failed to read token file '{p}': {err.strerror or err}") from None
    tokens: dict[str, UserInfo] = {}
    reader = csv.reader(io.StringIO(text), skipinitialspace=True, strict=True)
    try:
        for record in reader:
            if not record or all(not field.strip() for field in record):
                continue
            line = reader.line_num
            if len(record) < 3:
                raise TokenFileError(
                    f"token file '{p}' must have at least 3 columns (token, user name, user uid), "
                    f"found {len(record)} on line {line}"
                )
            token, name, uid = (field.strip() for field in record[:3])
            if not token:
                raise TokenFileError(f"token file '{p}' has an empty token on line {line}")
            if not name:
                raise TokenFileError(f"token file '{p}' has an empty user name on line {line}")
            groups: tuple[str, ...] = ()
            if len(record) >= 4 and record[3].strip():
                groups = tuple(g.strip() for g in record[3].split(",") if g.strip())
            tokens[token] = UserInfo(name=name, groups=groups, uid=uid)
    except csv.Error as err:
        raise TokenFileError(f"token file '{p}' line {reader.line_num}: {err}") from None
    return tokens


def write_token_file(path: str | os.PathLike[str], tokens: Mapping[str, UserInfo]) -> None:
    """Write tokens atomically with mode 0600: the file is as good as a password list."""
    p = Path(path)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for token, user in tokens.items():
        row = [token, user.name, user.uid]
        if user.groups:
            row.append(",".join(user.groups))
        writer.writerow(row)
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
