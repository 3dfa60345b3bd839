"""etcd's v3 gRPC API as the API server calls it: one HTTP/2 channel per member, unary calls with
failover to the next member, and the watch stream.

Why gRPC and not etcd's JSON gateway: on a 2-core machine the gateway path cost etcd's
serving member about 0.5 ms of CPU per compare-and-swap (it decodes JSON and calls its own gRPC
server over a second TLS connection) and the client 0.22 ms more (HTTP/1.1, base64, JSON); the same
transactions over gRPC cost 0.21 and 0.15 ms, and reached about twice the rate (see
docs/etcd.md#how-kconsole-talks-to-etcd). The messages are the subset of etcd's protos in
:mod:`kconsole.store.etcdpb`, generated once and committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio

from kconsole.store.etcdpb import etcd_pb2 as pb

#: gRPC metadata that makes a member cut off from its leader refuse at once (``etcdserver: no leader``)
#: instead of waiting for one, as etcd's own client sends it.
REQUIRE_LEADER: tuple[tuple[str, str], ...] = (("hasleader", "true"),)

#: Unary methods by etcd's JSON gateway path (the names the rest of the store speaks), with their
#: request and response messages.
UNARY: dict[str, tuple[str, Any, Any]] = {
    "/v3/kv/range": ("/etcdserverpb.KV/Range", pb.RangeRequest, pb.RangeResponse),
    "/v3/kv/put": ("/etcdserverpb.KV/Put", pb.PutRequest, pb.PutResponse),
    "/v3/kv/deleterange": ("/etcdserverpb.KV/DeleteRange", pb.DeleteRangeRequest, pb.DeleteRangeResponse),
    "/v3/kv/txn": ("/etcdserverpb.KV/Txn", pb.TxnRequest, pb.TxnResponse),
    "/v3/kv/compaction": ("/etcdserverpb.KV/Compact", pb.CompactionRequest, pb.CompactionResponse),
    "/v3/maintenance/status": ("/etcdserverpb.Maintenance/Status", pb.StatusRequest, pb.StatusResponse),
    "/v3/maintenance/alarm": ("/etcdserverpb.Maintenance/Alarm", pb.AlarmRequest, pb.AlarmResponse),
    "/v3/cluster/member/list": ("/etcdserverpb.Cluster/MemberList", pb.MemberListRequest, pb.MemberListResponse),
}
WATCH = "/etcdserverpb.Watch/Watch"

#: Reconnect quickly to a member that comes back (gRPC's default backoff grows to two minutes).
_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.max_receive_message_length", 2 * 1024 * 1024 * 1024 - 1),
    ("grpc.use_local_subchannel_pool", 1),
]
#: Texts of a gRPC failure that happened before the request left this process: safe to send elsewhere.
NEVER_SENT = ("failed to connect", "connections to all backends failing", "Connection refused",
              "DNS resolution failed", "channel closed", "Channel is closed")


@dataclass
class Channel:
    """One member's channel and its method handles (made once: building one costs more than a call)."""

    channel: grpc.aio.Channel
    unary: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def method(self, path: str) -> Callable[..., Any]:
        got = self.unary.get(path)
        if got is None:
            name, req, resp = UNARY[path]
            got = self.channel.unary_unary(name, request_serializer=req.SerializeToString,
                                           response_deserializer=resp.FromString)
            self.unary[path] = got
        return got

    def watch(self) -> Any:
        return self.channel.stream_stream(WATCH, request_serializer=pb.WatchRequest.SerializeToString,
                                          response_deserializer=pb.WatchResponse.FromString)


def target(url: str) -> tuple[str, bool]:
    """``https://host:port`` as gRPC's ``host:port`` and whether it needs TLS."""
    scheme, _, rest = url.partition("://")
    return rest, scheme == "https"


def open_channel(url: str, credentials: grpc.ChannelCredentials | None) -> Channel:
    address, secure = target(url)
    if secure:
        assert credentials is not None
        return Channel(grpc.aio.secure_channel(address, credentials, options=_CHANNEL_OPTIONS))
    return Channel(grpc.aio.insecure_channel(address, options=_CHANNEL_OPTIONS))


def credentials(cafile: str | None, certfile: str | None, keyfile: str | None) -> grpc.ChannelCredentials:
    """kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile as gRPC channel credentials."""

    def read(path: str | None) -> bytes | None:
        if path is None:
            return None
        with open(path, "rb") as f:
            return f.read()

    key = read(keyfile) if keyfile else read(certfile)  # no key file: the key is in the certificate's
    return grpc.ssl_channel_credentials(read(cafile), key if certfile else None, read(certfile))


def failure_text(err: grpc.aio.AioRpcError) -> str:
    """etcd's own error text (``etcdserver: ...``) or gRPC's description of what failed."""
    return err.details() or str(err.code())
