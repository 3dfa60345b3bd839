"""GET /metrics: upstream's apiserver_* families, counted per request, scraped in Prometheus' text format."""

from __future__ import annotations

import re

import pytest
from api_helpers import Client, pod

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, Response, StatusError, UserInfo

Labels = frozenset[tuple[str, str]]
_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Scrape:
    """One exposition, checked against the text format's rules as it is read."""

    def __init__(self, text: str) -> None:
        self.types: dict[str, str] = {}
        self.samples: dict[tuple[str, Labels], float] = {}
        family = ""
        assert text.endswith("\n")
        for line in text.splitlines():
            if line.startswith("# HELP "):
                family = line.split(" ")[2]
                assert family not in self.types, f"{family} appears twice"
                self.types[family] = ""
            elif line.startswith("# TYPE "):
                _, _, name, kind = line.split(" ")
                assert name == family and kind in ("counter", "gauge", "histogram")
                self.types[name] = kind
            else:
                match = _SAMPLE.fullmatch(line)
                assert match, f"not a sample line: {line!r}"
                name, labels, value = match[1], match[2] or "", match[3]
                suffixes = ("_bucket", "_sum", "_count") if self.types[family] == "histogram" else ()
                assert name == family or name in {family + s for s in suffixes}, f"{name} outside its family"
                parsed = frozenset(_LABEL.findall(labels))
                assert ",".join(f'{k}="{v}"' for k, v in sorted(parsed)) == labels, f"labels of {line!r}"
                assert (name, parsed) not in self.samples, f"{line!r} twice"
                self.samples[(name, parsed)] = float(value)

    def get(self, name: str, **labels: str) -> float:
        """The one sample of ``name`` whose labels are exactly ``labels`` (0 when absent)."""
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def request(self, verb: str, resource: str, scope: str, code: int, *, dry_run: str = "",
                subresource: str = "", group: str = "", version: str = "v1") -> float:
        return self.get("apiserver_request_total", code=str(code), component="apiserver", dry_run=dry_run,
                        group=group, resource=resource, scope=scope, subresource=subresource, verb=verb,
                        version=version)

    def histogram(self, **labels: str) -> tuple[list[float], float, float]:
        """(cumulative bucket counts in ``le`` order, sum, count) of one request-duration series."""
        name = "apiserver_request_duration_seconds"
        buckets = sorted(((float(dict(k)["le"]), v) for (n, k), v in self.samples.items()
                          if n == name + "_bucket" and {**dict(k), "le": ""} == {**labels, "le": ""}))
        return ([v for _, v in buckets], self.get(name + "_sum", **labels), self.get(name + "_count", **labels))


async def scrape(api: APIServer, who: Client) -> Scrape:
    return Scrape(await api.metrics(who.creds))


async def test_requests_are_counted_by_verb_scope_code_and_dry_run_and_timed(api: APIServer, admin: Client) -> None:
    before = await scrape(api, admin)
    for name in ("a", "b", "c"):
        await admin.ok("create", "pods", namespace="default", body=pod(name))
    assert (await admin.do("create", "pods", namespace="default", body=pod("a"))).code == 409
    await admin.ok("create", "pods", namespace="default", body=pod("d"), dry_run=True)
    await admin.ok("list", "pods", namespace="default")
    await admin.ok("list", "pods")
    await admin.ok("get", "pods", namespace="default", name="a")
    await admin.ok("patch", "pods", namespace="default", name="a", patch_type="merge",
                   body={"metadata": {"labels": {"x": "y"}}})
    await admin.ok("patch", "pods", namespace="default", name="b", patch_type="apply", field_manager="t",
                   body={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "labels": {"x": "y"}}})
    assert (await admin.do("get", "pods", namespace="default", name="zz")).code == 404
    watch = await admin.do("watch", "pods", namespace="default")
    assert not isinstance(watch, Response)
    after = await scrape(api, admin)

    def delta(*args: object, **kw: str) -> float:
        return after.request(*args, **kw) - before.request(*args, **kw)  # type: ignore[arg-type]

    assert delta("POST", "pods", "resource", 201) == 3
    assert delta("POST", "pods", "resource", 409) == 1
    assert delta("POST", "pods", "resource", 201, dry_run="All") == 1
    assert delta("LIST", "pods", "namespace", 200) == 1
    assert delta("LIST", "pods", "cluster", 200) == 1
    assert delta("GET", "pods", "resource", 200) == 1
    assert delta("GET", "pods", "resource", 404) == 1
    assert delta("PATCH", "pods", "resource", 200) == 1
    assert delta("APPLY", "pods", "resource", 200) == 1
    assert delta("WATCH", "pods", "namespace", 200) == 1

    posts = {"component": "apiserver", "dry_run": "", "group": "", "resource": "pods", "scope": "resource",
             "subresource": "", "verb": "POST", "version": "v1"}
    buckets, seconds, count = after.histogram(**posts)
    assert len(buckets) == 24 and count == 4 and buckets[-1] == count and seconds > 0
    assert buckets == sorted(buckets), "buckets are cumulative"
    assert after.histogram(**{**posts, "verb": "WATCH", "scope": "namespace"})[2] == 0, "a watch is not timed"

    assert after.get("apiserver_storage_objects", resource="pods") == 3
    assert after.get("apiserver_longrunning_requests", component="apiserver", group="", resource="pods",
                     scope="namespace", subresource="", verb="WATCH", version="v1") == 1
    received = after.get("apiserver_watch_cache_events_received_total", resource="pods")
    assert received - before.get("apiserver_watch_cache_events_received_total", resource="pods") == 5
    assert after.get("apiserver_watch_cache_resource_version", resource="pods") > 0
    assert after.get("apiserver_storage_size_bytes", storage_cluster_id="etcd-0") > 0
    assert after.get("process_resident_memory_bytes") > 0
    assert after.types["apiserver_request_total"] == "counter"
    assert after.types["apiserver_request_duration_seconds"] == "histogram"

    await watch.close()
    final = await scrape(api, admin)
    assert final.get("apiserver_longrunning_requests", component="apiserver", group="", resource="pods",
                     scope="namespace", subresource="", verb="WATCH", version="v1") == 0
    metrics_path = {"dry_run": "", "group": "", "resource": "", "scope": "", "subresource": "/metrics",
                    "verb": "GET", "version": ""}
    assert final.request("GET", "", "", 200, subresource="/metrics", version="") == \
        before.request("GET", "", "", 200, subresource="/metrics", version="") + 2
    assert final.histogram(component="apiserver", **metrics_path)[2] >= 2
    assert final.get("apiserver_audit_event_total") == api.audit.total - 1, "the scrape is audited once answered"


async def test_metrics_need_a_user_rbac_lets_get_the_path(api: APIServer, admin: Client) -> None:
    with pytest.raises(StatusError) as anonymous:
        await api.metrics(Credentials())
    assert anonymous.value.code == 401
    jane = Client(api, api.tokens.issue(UserInfo("jane", ("system:authenticated",))))
    with pytest.raises(StatusError) as denied:
        await api.metrics(jane.creds)
    assert denied.value.code == 403
    assert denied.value.message == 'forbidden: User "jane" cannot get path "/metrics"'
    record = api.audit_recent(1)[0]
    assert (record.user, record.resource, record.code, record.stage) == ("jane", "/metrics", 403, "authorization")

    prometheus = Client(api, api.tokens.issue(UserInfo("prometheus", ("system:authenticated", "system:monitoring"))))
    text = await api.metrics(prometheus.creds)
    assert Scrape(text).request("GET", "", "", 403, subresource="/metrics", version="") == 1
    assert (await api.handle(Request("list", "pods", credentials=prometheus.creds))).code == 403, \
        "system:monitoring reads /metrics, not objects"
