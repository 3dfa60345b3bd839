"""Authentication stage: bearer tokens, verified certificate users, the static token file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from api_helpers import Client

from kconsole.api.authn import TokenAuthenticator, TokenFileError, load_token_file, service_account_user
from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, StatusError, UserInfo
from kconsole.clock import VirtualClock
from kconsole.kubeconfig import SA_KEY, service_account_key
from kconsole.store.revlog import RevisionLog

ALICE = UserInfo(name="alice", groups=("dev", "ops"), uid="1001")


@pytest.mark.parametrize("credentials", [Credentials(), Credentials(token="nope"), Credentials(token="")])
def test_missing_or_unknown_credentials_are_401(credentials: Credentials) -> None:
    auth = TokenAuthenticator({"good": ALICE})
    with pytest.raises(StatusError) as err:
        auth.authenticate(credentials)
    assert err.value.code == 401
    assert err.value.reason == "Unauthorized"
    assert err.value.message == "Unauthorized"


def test_known_token_gives_its_user_plus_system_authenticated() -> None:
    auth = TokenAuthenticator({"good": ALICE})
    user = auth.authenticate(Credentials(token="good"))
    assert user.name == "alice"
    assert user.uid == "1001"
    assert user.groups == ("dev", "ops", "system:authenticated")


def test_certificate_user_is_trusted_and_joins_system_authenticated() -> None:
    auth = TokenAuthenticator()
    user = auth.authenticate(Credentials(cert_user=UserInfo("system:node:n1", ("system:nodes",))))
    assert user.name == "system:node:n1"
    assert user.groups == ("system:nodes", "system:authenticated")


def test_issued_tokens_are_random_and_revocable() -> None:
    auth = TokenAuthenticator()
    t1 = auth.issue(UserInfo("bob"))
    t2 = auth.issue(UserInfo("bob"))
    assert t1 != t2 and len(t1) >= 32
    assert auth.authenticate(Credentials(token=t1)).name == "bob"
    auth.revoke(t1)
    with pytest.raises(StatusError):
        auth.authenticate(Credentials(token=t1))
    assert auth.authenticate(Credentials(token=t2)).name == "bob"


def test_service_account_users_get_their_groups() -> None:
    auth = TokenAuthenticator()
    token = auth.issue(UserInfo("system:serviceaccount:team-a:builder"))
    user = auth.authenticate(Credentials(token=token))
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated")
    assert service_account_user("team-a", "builder") == user


def test_token_file_round_trip_is_private(tmp_path) -> None:
    path = tmp_path / "tokens.csv"
    auth = TokenAuthenticator({"t-alice": ALICE, "t-bob": UserInfo("bob", uid="7")})
    auth.write_token_file(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    text = path.read_text()
    assert 't-alice,alice,1001,"dev,ops"' in text.splitlines()
    assert "t-bob,bob,7" in text.splitlines()
    again = TokenAuthenticator()
    again.load_token_file(path)
    assert again.tokens() == auth.tokens()
    assert again.authenticate(Credentials(token="t-alice")).groups == ("dev", "ops", "system:authenticated")


def test_token_file_in_upstream_format_with_spaces_and_blank_lines(tmp_path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text('abc, admin, 1, "system:masters,ops"\n\nxyz,viewer,2\n')
    tokens = load_token_file(path)
    assert tokens["abc"] == UserInfo("admin", ("system:masters", "ops"), "1")
    assert tokens["xyz"] == UserInfo("viewer", (), "2")


def test_short_line_in_token_file_names_file_and_line(tmp_path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("abc,admin,1\nbroken,line\n")
    with pytest.raises(TokenFileError) as err:
        load_token_file(path)
    assert "must have at least 3 columns" in str(err.value)
    assert "line 2" in str(err.value) and str(path) in str(err.value)


def test_missing_token_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(TokenFileError, match="failed to read token file"):
        load_token_file(tmp_path / "absent.csv")


# --------------------------------------------------------------------------- service account JWTs


async def test_a_service_account_token_outlives_the_api_server_that_issued_it(
        tmp_path: Path, kv: RevisionLog, clock: VirtualClock) -> None:
    """The signing key is a 0600 file: a restarted API server (same store, same key) still accepts
    the tokens handed out before, and a server with another key does not."""
    key = service_account_key(tmp_path)
    first = APIServer(kv, clock, seed=7, sa_key=key)
    await first.start()
    admin = Client(first, first.tokens.issue(UserInfo("admin", ("system:masters",))))
    await admin.ok("create", "serviceaccounts", namespace="default", body={"metadata": {"name": "robot"}})
    issued = await admin.ok("create", "serviceaccounts", namespace="default", name="robot", subresource="token",
                            body={"kind": "TokenRequest", "spec": {}})
    token = issued["status"]["token"]
    assert (tmp_path / SA_KEY).stat().st_mode & 0o777 == 0o600
    await first.stop()

    again = APIServer(kv, clock, seed=7, sa_key=service_account_key(tmp_path))
    await again.start()
    try:
        assert again.tokens.authenticate(Credentials(token=token)).name == "system:serviceaccount:default:robot"
        await clock.advance(3600)
        with pytest.raises(StatusError) as err:
            again.tokens.authenticate(Credentials(token=token))
        assert err.value.code == 401, "expired on the simulated clock"
    finally:
        await again.stop()
    stranger = APIServer(kv, clock, seed=7)
    with pytest.raises(StatusError):
        stranger.tokens.authenticate(Credentials(token=token))
