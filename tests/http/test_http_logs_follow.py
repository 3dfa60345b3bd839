"""kubectl logs -f against the served cluster: a followed log with --limit-bytes ends after exactly that
many bytes, as the kubelet's LimitWriter cuts it, even when the cut falls inside a line or inside a
UTF-8 character (a plain ``kubectl logs`` too)."""

from __future__ import annotations

import pytest

from http_env import Cluster

from kconsole.nodes.logs import LogBuffer

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


async def test_follow_with_limit_bytes_writes_exactly_the_limit(cluster: Cluster) -> None:
    await cluster.kubectl("run", "chatty", "--image=busybox")
    log = LogBuffer(cluster.clock.now)
    log.write("early")
    log.write("middle")
    cluster.api.set_log_source(lambda ns, name, container, options:
                               log.follow(options) if options.follow else log.text(options))
    try:
        assert (await cluster.kubectl("logs", "-f", "chatty", "--limit-bytes=8")).out == "early\nmi"
        assert (await cluster.kubectl("logs", "-f", "chatty", "--limit-bytes=6")).out == "early\n"
        assert (await cluster.kubectl("logs", "-f", "chatty", "--limit-bytes=1")).out == "e"
        log.write("héllo")  # "é" is two bytes: a cut between them sends the first, as upstream
        for limit, want in ((15, b"early\nmiddle\nh\xc3"), (16, "early\nmiddle\nhé".encode())):
            for follow in (["-f"], []):
                out = (await cluster.kubectl("logs", *follow, "chatty", f"--limit-bytes={limit}")).out
                assert out.encode(errors="surrogateescape") == want, (follow, limit)
        log.close()
        assert (await cluster.kubectl("logs", "-f", "chatty", "--limit-bytes=100")).out == "early\nmiddle\nhéllo\n"
        assert (await cluster.kubectl("logs", "-f", "chatty")).out == "early\nmiddle\nhéllo\n"
    finally:
        cluster.api.set_log_source(None)
