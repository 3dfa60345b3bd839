"""The pod network as a process in a container meets it: cluster DNS and TCP connections.

DNS answers as CoreDNS's kubernetes plugin does from the Services and EndpointSlices it watches
(the fleet's shared informers stand in for CoreDNS's own watches): ``<svc>.<ns>.svc.cluster.local``
is the ClusterIP, or the ready endpoints' addresses for a headless Service;
``<hostname>.<svc>.<ns>.svc.cluster.local`` an endpoint with that hostname (StatefulSet pods);
``a-b-c-d.<ns>.pod.cluster.local`` that address. Names are tried through the pod's resolv.conf search
list (``ndots:5``). Without a ready CoreDNS endpoint behind the kube-dns Service nothing answers.

A connection to a Service's ClusterIP goes through the source node's kube-proxy rules
(:mod:`kconsole.nodes.proxy`): one of the rule's endpoints is picked at random, as iptables'
``statistic`` match does, and the answer says which. A connection to a pod address reaches that
pod's simulated server: nginx (and httpd) answer on port 80 while their container runs, and log the
request as they log probes; anything else refuses, as an empty container would.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from kconsole.client import SharedInformer
from kconsole.clock import Clock
from kconsole.nodes.images import repository
from kconsole.nodes.shell import HttpAnswer

Obj = dict[str, Any]
DOMAIN = "cluster.local"
NGINX_VERSION = "1.27.3"
NGINX_WELCOME = b"""<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""


def _nginx_error(status: str) -> bytes:
    """nginx's built-in error page: every status it answers itself has the same one around its line."""
    return f"""<html>
<head><title>{status}</title></head>
<body>
<center><h1>{status}</h1></center>
<hr><center>nginx/{NGINX_VERSION}</center>
</body>
</html>
""".encode()


NGINX_404 = _nginx_error("404 Not Found")
NGINX_405 = _nginx_error("405 Not Allowed")
HTTPD_PAGE = b"<html><body><h1>It works!</h1></body></html>\n"


def _serve(base: str, method: str, path: str, stamp: str) -> tuple[int, str, list[tuple[str, str]], bytes]:
    """(status, reason, headers, body) a known server image answers ``method path`` with: nginx's static
    files take GET and HEAD (a POST to a file that exists and every other method are 405), httpd's
    default handler answers every method with the page."""
    if base == "httpd":
        found = path in ("/", "/index.html")
        body = HTTPD_PAGE if found else b"<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n" \
            b"<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n</body></html>\n"
        return (200 if found else 404, "OK" if found else "Not Found",
                [("Date", stamp), ("Server", "Apache/2.4.62 (Unix)"), ("Content-Length", str(len(body))),
                 ("Content-Type", "text/html")], body)
    found = path in ("/", "/index.html")
    if method not in ("GET", "HEAD") and (found or method != "POST"):
        return (405, "Not Allowed", [("Server", f"nginx/{NGINX_VERSION}"), ("Date", stamp),
                                     ("Content-Type", "text/html"), ("Content-Length", str(len(NGINX_405))),
                                     ("Connection", "keep-alive")], NGINX_405)
    body = NGINX_WELCOME if found else NGINX_404
    headers = [("Server", f"nginx/{NGINX_VERSION}"), ("Date", stamp), ("Content-Type", "text/html"),
               ("Content-Length", str(len(body))), ("Connection", "keep-alive")]
    if found:
        headers += [("Last-Modified", "Tue, 26 Nov 2024 15:55:00 GMT"), ("ETag", '"6745ef54-267"'),
                    ("Accept-Ranges", "bytes")]
    return (200 if found else 404, "OK" if found else "Not Found", headers, body)


#: Images whose server kconsole knows: they answer HTTP on port 80.
WEB_SERVERS = frozenset(("nginx", "httpd"))


class Network:
    """DNS and connections for every node of a fleet (one instance, shared)."""

    def __init__(self, services: SharedInformer, slices: SharedInformer, pods: SharedInformer,
                 rules: Callable[[str], list[Obj]], access_log: Callable[[Obj, str, str], None],
                 rng: random.Random, clock: Clock) -> None:
        self.services = services
        self.slices = slices
        self.pods = pods
        self.rules = rules
        self.access_log = access_log
        self.rng = rng
        self.clock = clock

    # ------------------------------------------------------------------ DNS

    def dns_serving(self) -> bool:
        """Whether a CoreDNS endpoint is ready behind the cluster DNS address."""
        return any(self._slices_endpoints("kube-system", "kube-dns"))

    def _slices_endpoints(self, namespace: str, service: str) -> list[Obj]:
        out = []
        for sl in self.slices.list_by_index("serviceName", f"{namespace}/{service}"):
            for ep in sl.get("endpoints") or ():
                if (ep.get("conditions") or {}).get("ready") is not False:
                    out.append(ep)
        return out

    def records(self, fqdn: str) -> list[str] | None:
        """A records of a fully qualified name (no trailing dot); None: NXDOMAIN."""
        suffix = f".svc.{DOMAIN}"
        if fqdn.endswith(f".pod.{DOMAIN}"):
            parts = fqdn[:-len(f".pod.{DOMAIN}")].split(".")
            if len(parts) == 2 and re.fullmatch(r"\d+-\d+-\d+-\d+", parts[0]):
                return [parts[0].replace("-", ".")]
            return None
        if not fqdn.endswith(suffix):
            return None
        labels = fqdn[:-len(suffix)].split(".")
        if len(labels) == 2:
            name, namespace = labels
            svc = self.services.get_by_name(namespace, name)
            if svc is None:
                return None
            spec = svc.get("spec") or {}
            ip = spec.get("clusterIP")
            if spec.get("type") == "ExternalName":
                return None
            if ip and ip != "None":
                return [ip]
            return sorted({a for ep in self._slices_endpoints(namespace, name) for a in ep.get("addresses") or ()})
        if len(labels) == 3:
            host, name, namespace = labels
            return sorted({a for ep in self._slices_endpoints(namespace, name) if ep.get("hostname") == host
                           for a in ep.get("addresses") or ()}) or None
        return None

    def resolve(self, name: str, namespace: str) -> tuple[str, list[str]] | None:
        """``name`` through the search list ``<ns>.svc.cluster.local svc.cluster.local cluster.local``."""
        name = name.lower()
        if name.endswith("."):
            candidates = [name[:-1]]
        else:
            search = [f"{name}.{namespace}.svc.{DOMAIN}", f"{name}.svc.{DOMAIN}", f"{name}.{DOMAIN}"]
            candidates = [name, *search] if name.count(".") >= 5 else [*search, name]
        for fqdn in candidates:
            found = self.records(fqdn)
            if found:
                return fqdn, found
        return None

    # ------------------------------------------------------------------ connections

    def pod_at(self, address: str) -> Obj | None:
        for pod in self.pods.list():
            status = pod.get("status") or {}
            if status.get("podIP") == address and status.get("phase") == "Running" \
                    and not (pod.get("spec") or {}).get("hostNetwork"):
                return pod
        return None

    def http(self, node: str, source_ip: str, address: str, port: int, path: str) -> HttpAnswer:
        """GET ``path`` at ``address:port`` from a pod on ``node``."""
        route = ""
        endpoint = f"{address}:{port}"
        for rule in self.rules(node):
            if rule["clusterIP"] == address and rule["port"] == port and rule["protocol"] == "TCP":
                endpoints = rule["endpoints"]
                if not endpoints:
                    return HttpAnswer(endpoint="", error="refused",
                                      route=f"kube-proxy on {node}: Service {rule['service']} has no endpoints "
                                            "(REJECT)")
                endpoint = self.rng.choice(endpoints)
                route = (f"kube-proxy on {node} sent {address}:{port} (Service {rule['service']}) to {endpoint}, "
                         f"one of {len(endpoints)} endpoint{'s' if len(endpoints) != 1 else ''}")
                break
        else:
            if any(r["clusterIP"] == address for r in self.rules(node)):
                return HttpAnswer(error="timeout", route=f"kube-proxy on {node}: no rule for {address}:{port}")
        target_ip, _, target_port = endpoint.rpartition(":")
        pod = self.pod_at(target_ip)
        if pod is None:
            return HttpAnswer(endpoint=endpoint, route=route, error="timeout")
        meta = pod["metadata"]
        route = f"{route} (pod {meta.get('namespace')}/{meta['name']})" if route else \
            f"pod {meta.get('namespace')}/{meta['name']}"
        server = self.server(pod, int(target_port))
        if server is None:
            return HttpAnswer(endpoint=endpoint, route=route, error="refused")
        status, reason, headers, body = self.answer(pod, server, source_ip, "GET", path, "curl/7.88.1")
        return HttpAnswer(endpoint=endpoint, route=route, status=status, reason=reason, headers=headers, body=body)

    @staticmethod
    def server(pod: Obj, port: int) -> tuple[str, str] | None:
        """(image family, container) of the simulated server listening on ``port`` in ``pod``, if any."""
        running = {cs.get("name") for cs in (pod.get("status") or {}).get("containerStatuses") or ()
                   if "running" in (cs.get("state") or {})}
        for container in (pod.get("spec") or {}).get("containers") or ():
            base = repository(str(container.get("image") or "")).rsplit("/", 1)[-1]
            if base in WEB_SERVERS and port == 80 and container.get("name") in running \
                    and not container.get("command"):
                return base, str(container.get("name"))
        return None

    def answer(self, pod: Obj, server: tuple[str, str], source_ip: str, method: str, path: str,
               agent: str) -> tuple[int, str, list[tuple[str, str]], bytes]:
        """The server's answer to one request, logged in the pod's log as the server logs it."""
        base, container = server
        now = self.clock.datetime()
        stamp = now.strftime("%a, %d %b %Y %H:%M:%S GMT")
        status, reason, headers, body = _serve(base, method, path.split("?", 1)[0], stamp)
        if method == "HEAD":
            body_sent = b""
        else:
            body_sent = body
        self.access_log(pod, container, f'{source_ip} - - [{now.strftime("%d/%b/%Y:%H:%M:%S +0000")}] '
                                        f'"{method} {path} HTTP/1.1" {status} {len(body_sent)} "-" "{agent}" "-"')
        return status, reason, headers, body_sent

    def connect(self, pod: Obj, port: int, source_ip: str) -> ServerConnection | None:
        """A connection to ``port`` inside the pod (port-forward), None when nothing listens there."""
        server = self.server(pod, port)
        return ServerConnection(self, pod, server, source_ip) if server is not None else None


class ServerConnection:
    """One TCP connection to a pod's simulated web server: HTTP/1.1 requests in, responses out,
    kept alive until the client asks to close."""

    def __init__(self, network: Network, pod: Obj, server: tuple[str, str], source_ip: str) -> None:
        self.network = network
        self.pod = pod
        self.server = server
        self.source_ip = source_ip
        self._pending = b""
        self.closed = False

    def feed(self, data: bytes) -> bytes:
        """Bytes the client sent -> bytes the server answers (whole responses to whole requests)."""
        self._pending += data
        out = b""
        while b"\r\n\r\n" in self._pending and not self.closed:
            head, self._pending = self._pending.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            parts = lines[0].split()
            fields = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
            if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                out += b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                self.closed = True
                break
            length = fields.get("content-length", "0")
            self._pending = self._pending[int(length) if length.isdigit() else 0:]
            status, reason, headers, body = self.network.answer(self.pod, self.server, self.source_ip, parts[0],
                                                                parts[1], fields.get("user-agent", "-"))
            close = fields.get("connection", "").lower() == "close" or parts[2] == "HTTP/1.0"
            if close:
                headers = [(k, "close" if k == "Connection" else v) for k, v in headers]
            out += (f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
                    + "\r\n").encode() + body
            self.closed = close
        return out

