"""The default/kubernetes Service is the API server's to keep, as upstream's bootstrap controller does."""

from __future__ import annotations

import logging

import pytest

from api_helpers import Client

from kconsole.api.server import APIServer
from kconsole.clock import VirtualClock


async def test_a_deleted_kubernetes_service_comes_back_within_ten_seconds(api: APIServer, admin: Client,
                                                                        clock: VirtualClock) -> None:
    first = await admin.ok("get", "services", namespace="default", name="kubernetes")
    await admin.ok("delete", "services", namespace="default", name="kubernetes")
    assert (await admin.do("get", "services", namespace="default", name="kubernetes")).code == 404

    async def back() -> bool:
        return (await admin.do("get", "services", namespace="default", name="kubernetes")).code == 200

    assert await clock.run_until(back, timeout=10.5, step=0.5) <= 10.5
    again = await admin.ok("get", "services", namespace="default", name="kubernetes")
    assert again["metadata"]["uid"] != first["metadata"]["uid"]
    assert again["spec"]["clusterIP"] == first["spec"]["clusterIP"] == "10.96.0.1"
    assert again["spec"]["ports"] == first["spec"]["ports"]


async def test_a_held_kubernetes_ip_is_reported_once_not_every_ten_seconds(
        api: APIServer, admin: Client, clock: VirtualClock, caplog: pytest.LogCaptureFixture) -> None:
    await admin.ok("delete", "services", namespace="default", name="kubernetes")
    await admin.ok("create", "services", namespace="default", body={
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "squatter"},
        "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}})
    with caplog.at_level(logging.WARNING, logger="kconsole.api.server"):
        await clock.advance(65)
    failures = [r for r in caplog.records if "bootstrap of services kubernetes failed" in r.getMessage()]
    assert len(failures) == 1 and "provided IP is already allocated" in failures[0].getMessage()
    await admin.ok("delete", "services", namespace="default", name="squatter")
    assert await clock.run_until(lambda: api.get_object("services", "default", "kubernetes") is not None,
                                 timeout=10.5, step=0.5) <= 10.5
