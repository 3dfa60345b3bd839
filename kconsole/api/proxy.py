"""pods/proxy and services/proxy: the API server forwards an HTTP request to a pod's address.

As upstream's ResourceLocation and UpgradeAwareHandler do it: the name may carry a scheme and a
port (``web``, ``web:80``, ``https:web:443``); a pod without a port uses its first declared
container port (else 80) and must have an IP (``address not allowed``); a Service's port number is
looked up among its ports, then one ready address of its Endpoints carrying that port is picked at
random (``no endpoints available for service "web"``, 503). The connection is the pod network's
(:class:`~kconsole.api.types.PodNetwork`), the same one port-forward and curl inside pods reach;
what it cannot dial is upstream's 503 ``error trying to reach service: dial tcp IP:PORT: ...``.
An empty proxy path is redirected to ``.../proxy/``, as upstream does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kconsole.api.registry import ResourceSpec
from kconsole.api.types import PodConnection, ProxiedResponse, ProxyCall, StatusError, status_body

if TYPE_CHECKING:
    from kconsole.api.server import APIServer, _Call

Obj = dict[str, Any]
#: Headers that belong to one hop, which a proxy does not pass on (Go's httputil.ReverseProxy).
HOP_BY_HOP = frozenset(("connection", "proxy-connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "te", "trailer", "transfer-encoding", "upgrade"))
#: Request headers the API server consumes: credentials never reach the pod.
CONSUMED = frozenset(("authorization", "host", "content-length", "impersonate-user", "impersonate-group",
                      "impersonate-uid"))
#: Ports Go resolves by name when dialing.
NAMED_PORTS = {"http": 80, "https": 443}


def split_scheme_name_port(value: str) -> tuple[str, str, str] | None:
    """``name``, ``name:port`` or ``scheme:name:port`` (upstream's SplitSchemeNamePort); None if invalid."""
    parts = value.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, (name, port) = "", parts
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme or "http", name, port


def unreachable(text: str) -> StatusError:
    """What upstream's proxy transport answers when the dial fails."""
    return StatusError(status_body(503, "ServiceUnavailable", f"error trying to reach service: {text}"))


def _target(call: _Call, what: str) -> tuple[str, str, str]:
    """The request's ``[scheme:]name[:port]``, or upstream's 400 for one it cannot split."""
    parsed = split_scheme_name_port(call.req.name or "")
    if parsed is None:
        raise StatusError.bad_request(f'invalid {what} request "{call.req.name}"')
    return parsed


async def pod_proxy(server: APIServer, call: _Call, spec: ResourceSpec) -> ProxiedResponse:
    req = call.req
    scheme, name, port = _target(call, "pod")
    pod = await server.read(spec, req.namespace, name)
    if not port:
        port = next((str(c["ports"][0].get("containerPort")) for c in (pod.get("spec") or {}).get("containers") or ()
                     if isinstance(c, dict) and c.get("ports")), "")
    ip = str((pod.get("status") or {}).get("podIP") or "")
    if not ip or ip.startswith(("127.", "0.")):
        raise StatusError.bad_request("address not allowed")
    return await _forward(server, call, scheme, ip, port)


async def service_proxy(server: APIServer, call: _Call, spec: ResourceSpec) -> ProxiedResponse:
    req = call.req
    scheme, name, port = _target(call, "service")
    if port.isdigit():
        svc = await server.read(spec, req.namespace, name)
        named = next((p for p in (svc.get("spec") or {}).get("ports") or ()
                      if isinstance(p, dict) and str(p.get("port")) == port), None)
        if named is None:
            raise StatusError(status_body(503, "ServiceUnavailable",
                                          f'no service port {int(port)} found for service "{name}"'))
        port = str(named.get("name") or "")
    endpoints = await server.read(server.registry.resolve("endpoints", ""), req.namespace, name)
    subsets = [s for s in endpoints.get("subsets") or () if isinstance(s, dict)]
    if not subsets:
        raise StatusError(status_body(503, "ServiceUnavailable", f'no endpoints available for service "{name}"'))
    rng = server.rng
    start = rng.randrange(len(subsets))
    for offset in range(len(subsets)):
        subset = subsets[(start + offset) % len(subsets)]
        addresses = [a for a in subset.get("addresses") or () if isinstance(a, dict) and a.get("ip")]
        if not addresses:
            continue
        for subset_port in subset.get("ports") or ():
            if str(subset_port.get("name") or "") != port:
                continue
            first = rng.randrange(len(addresses))
            for attempt in range(len(addresses)):
                address = addresses[(first + attempt) % len(addresses)]
                if await _valid_address(server, req.namespace, address):
                    return await _forward(server, call, scheme, str(address["ip"]), str(subset_port.get("port")))
    raise StatusError(status_body(503, "ServiceUnavailable", f'no endpoints available for service "{req.name}"'))


async def _valid_address(server: APIServer, namespace: str | None, address: Obj) -> bool:
    """Upstream's isValidAddress: an address naming a Pod must be that pod's current IP."""
    ref = address.get("targetRef") or {}
    if ref.get("kind") != "Pod":
        return True
    try:
        pod = await server.read(server.registry.resolve("pods", ""), ref.get("namespace") or namespace,
                                str(ref.get("name") or ""))
    except StatusError:
        return False
    ips = {str(i.get("ip")) for i in (pod.get("status") or {}).get("podIPs") or () if isinstance(i, dict)}
    ips.add(str((pod.get("status") or {}).get("podIP") or ""))
    return address["ip"] in ips


async def _forward(server: APIServer, call: _Call, scheme: str, ip: str, port: str) -> ProxiedResponse:
    """Dial ``ip:port`` on the pod network and pass the request through (or redirect an empty path)."""
    proxied = call.req.body
    if not isinstance(proxied, ProxyCall):
        raise StatusError.bad_request("a proxy request carries an HTTP request")
    if not proxied.path:
        location = proxied.url_path + "/" + (f"?{proxied.query}" if proxied.query else "")
        return ProxiedResponse(301, [("Location", location), ("Content-Length", "0")], b"")
    number = int(port) if port.isdigit() else NAMED_PORTS.get(port or scheme)
    if number is None:
        raise unreachable(f"dial tcp: lookup tcp/{port}: unknown port")
    network = server._pod_network
    conn = network.dial(ip, number) if network is not None else "i/o timeout"
    if isinstance(conn, str):
        raise unreachable(f"dial tcp {ip}:{number}: {conn}")
    if scheme == "https":
        raise unreachable("http: server gave HTTP response to HTTPS client")  # an HTTP server answers the TLS hello
    return exchange(conn, proxied, f"{ip}:{number}")


def exchange(conn: PodConnection, proxied: ProxyCall, host: str) -> ProxiedResponse:
    """One HTTP/1.1 request over ``conn`` and its response, hop-by-hop headers left out both ways."""
    target = proxied.path + (f"?{proxied.query}" if proxied.query else "")
    head = [f"{proxied.method} {target} HTTP/1.1", f"Host: {host}"]
    head += [f"{k}: {v}" for k, v in proxied.headers if k.lower() not in HOP_BY_HOP | CONSUMED]
    head += [f"Content-Length: {len(proxied.body)}", "Connection: close"]
    answer = conn.feed(("\r\n".join(head) + "\r\n\r\n").encode("latin-1", "replace") + proxied.body)
    status_line, _, rest = answer.partition(b"\r\n")
    fields, _, body = rest.partition(b"\r\n\r\n")
    parts = status_line.decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise unreachable("net/http: HTTP/1.x transport connection broken: malformed HTTP response")
    headers = []
    for line in fields.decode("latin-1").split("\r\n") if fields else ():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() not in HOP_BY_HOP:
            headers.append((key.strip(), value.strip()))
    return ProxiedResponse(int(parts[1]), headers, body)
