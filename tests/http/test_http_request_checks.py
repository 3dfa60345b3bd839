"""What the HTTPS front refuses as upstream's kube-apiserver does: plain HTTP on the TLS port (Go's
400), Accept types it cannot answer (406), query integers Go cannot parse (400, strconv's words), and
Impersonate-Extra-* headers the caller may not impersonate (403); allowed extras reach the user."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from http_env import Cluster, start_cluster, stop_cluster

from kconsole.api.types import UserInfo
from kconsole.kubeconfig import CA_CERT

pytestmark = pytest.mark.asyncio(loop_scope="module")

CM = "/api/v1/namespaces/default/configmaps"
REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tls(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("checks"), tls=True)
    yield c
    await stop_cluster(c)


def _ssl(cluster: Cluster) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cluster.front.data_dir / CA_CERT))


async def _call(cluster: Cluster, method: str, path: str, token: str | None = None, body: Any = None,
                **headers: str) -> tuple[int, dict[str, Any]]:
    auth = {"Authorization": f"Bearer {token or cluster.front.admin_token}"}
    async with aiohttp.ClientSession(cluster.front.url, headers=auth) as session:
        async with session.request(method, path, headers=headers, json=body, ssl=_ssl(cluster)) as resp:
            return resp.status, await resp.json(content_type=None)


async def test_plain_http_on_the_tls_port_gets_gos_400(tls: Cluster) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", tls.front.port)
    for part in (b"GE", b"T /version HTTP/1.1\r\nHost: x\r\n\r\n"):  # the 5 bytes looked at may come split
        writer.write(part)
        await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert answer == b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
    # TLS on the same port still works.
    assert (await _call(tls, "GET", "/version"))[0] == 200


async def test_accept_types_the_server_cannot_answer_are_406(tls: Cluster) -> None:
    code, body = await _call(tls, "GET", CM, Accept="text/html")
    assert (code, body["reason"], body["message"]) == (406, "NotAcceptable", (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"))
    for accept in ("text/html,application/xhtml+xml,*/*;q=0.8", "application/json", "application/*",
                   "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"):
        assert (await _call(tls, "GET", CM, Accept=accept))[0] == 200, accept
    assert (await _call(tls, "GET", CM, token="wrong", Accept="text/html"))[0] == 401


@pytest.mark.parametrize(("query", "message"), [
    ("limit=1e23", 'strconv.ParseInt: parsing "1e23": invalid syntax'),
    ("limit=99999999999999999999", 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("limit=1_0", 'strconv.ParseInt: parsing "1_0": invalid syntax'),
    ("watch=true&timeoutSeconds=nan", 'strconv.ParseInt: parsing "nan": invalid syntax'),
    ("watch=true&timeoutSeconds=inf", 'strconv.ParseInt: parsing "inf": invalid syntax'),
    ("watch=true&timeoutSeconds=1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
])
async def test_query_integers_are_parsed_as_go_parses_them(tls: Cluster, query: str, message: str) -> None:
    code, body = await _call(tls, "GET", f"{CM}?{query}")
    assert (code, body["reason"], body["message"]) == (400, "BadRequest", message)


async def test_negative_limit_and_timeout_mean_what_they_mean_upstream(tls: Cluster) -> None:
    """Upstream accepts both: a limit below 1 is no limit; a watch whose timeout is negative is over."""
    code, body = await _call(tls, "GET", f"{CM}?limit=-5")
    assert code == 200 and "continue" not in body["metadata"]
    auth = {"Authorization": f"Bearer {tls.front.admin_token}"}
    async with aiohttp.ClientSession(tls.front.url, headers=auth) as session:
        async with session.get(f"{CM}?watch=true&timeoutSeconds=-1", ssl=_ssl(tls)) as resp:
            assert resp.status == 200
            await asyncio.wait_for(resp.read(), 10)  # the stream ends by itself


async def test_impersonated_extras_need_the_impersonate_verb_and_reach_the_user(tls: Cluster) -> None:
    admin = {"Impersonate-User": "jane", "Impersonate-Extra-Scopes": "view",
             "Impersonate-Extra-Acme.com%2Fproject": "apollo"}
    code, body = await _call(tls, "POST", REVIEWS, body=REVIEW, **admin)
    assert code == 201, body
    assert body["status"]["userInfo"]["username"] == "jane"
    assert body["status"]["userInfo"]["extra"] == {"acme.com/project": ["apollo"], "scopes": ["view"]}

    erin = tls.api.tokens.issue(UserInfo("erin", ("system:authenticated",)))
    await tls.admin("create", "clusterroles", group="rbac.authorization.k8s.io", body={
        "metadata": {"name": "impersonate-jane"},
        "rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"], "resourceNames": ["jane"]},
                  {"verbs": ["impersonate"], "apiGroups": ["authentication.k8s.io"],
                   "resources": ["userextras/scopes"], "resourceNames": ["view"]}]})
    await tls.admin("create", "clusterrolebindings", group="rbac.authorization.k8s.io", body={
        "metadata": {"name": "erin-as-jane"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "impersonate-jane"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "erin"}]})
    allowed = {"Impersonate-User": "jane", "Impersonate-Extra-Scopes": "view"}
    code, body = await _call(tls, "POST", REVIEWS, token=erin, body=REVIEW, **allowed)
    assert code == 201 and body["status"]["userInfo"]["extra"] == {"scopes": ["view"]}
    code, body = await _call(tls, "GET", CM, token=erin, **{"Impersonate-User": "jane",
                                                            "Impersonate-Extra-Scopes": "admin"})
    assert (code, body["message"]) == (403, (
        'userextras.authentication.k8s.io "admin" is forbidden: User "erin" cannot impersonate resource '
        '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'))
    code, body = await _call(tls, "GET", CM, **{"Impersonate-Extra-Scopes": "view"})
    assert code == 400 and "without impersonating a user" in body["message"]
