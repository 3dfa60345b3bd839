"""Subresources and review kinds: scale, pods/binding, pods/eviction, pods/log, namespaces/finalize,
and the access reviews answered from the authorizer without being stored.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kconsole.api import componentstatus, metrics, proxy
from kconsole.api.decodetypes import check_patched_types
from kconsole.api.filters import format_selector, selector_matches
from kconsole.api.patch import apply_patch, parse_patch
from kconsole.api.registry import SCALE_INFO, ResourceSpec
from kconsole.api.satoken import BOUND_KINDS, ISSUER, token_claims
from kconsole.api.stages import Attributes
from kconsole.api.storage import DeleteOptions, clone
from kconsole.api.types import (
    Credentials,
    ExecStream,
    LogStream,
    PortForwardStream,
    ProxiedError,
    ProxiedResponse,
    Response,
    StatusError,
    UserInfo,
    status_body,
)
from kconsole.objects.meta import parse_time
from kconsole.objects.podlog import LogOptions

if TYPE_CHECKING:
    from kconsole.api.server import APIServer, _Call

Obj = dict[str, Any]

PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def success(code: int, kind: str | None = None, name: str | None = None) -> Obj:
    """A Success Status, its fields in metav1.Status's order (details before code)."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if name is not None:
        body["details"] = {"name": name, "kind": kind}
    body["code"] = code
    return body


async def dispatch(server: APIServer, call: _Call, spec: ResourceSpec,
                   sub: str) -> Response | LogStream | ExecStream | PortForwardStream | ProxiedResponse:
    verb = call.req.verb
    if sub == "scale" and verb in ("get", "update", "patch"):
        return await scale(server, call, spec)
    if sub == "binding" and verb == "create":
        return await bind(server, call, spec)
    if sub == "eviction" and verb == "create":
        return await evict(server, call, spec)
    if sub == "log" and verb == "get":
        return await pod_log(server, call, spec)
    if sub in ("exec", "attach") and verb in ("create", "get") and spec.group_resource == "pods":
        return await pod_stream(server, call, spec, sub)
    if sub == "portforward" and verb in ("create", "get") and spec.group_resource == "pods":
        return await pod_port_forward(server, call, spec)
    if sub == "proxy" and verb == "get" and spec.group_resource == "nodes":
        return await node_proxy(server, call, spec)
    if sub == "proxy" and spec.group_resource == "pods":
        return await proxy.pod_proxy(server, call, spec)
    if sub == "proxy" and spec.group_resource == "services":
        return await proxy.service_proxy(server, call, spec)
    if sub == "token" and verb == "create":
        return await token_request(server, call, spec)
    if sub in ("finalize", "approval") and verb == "update":
        return await server._update(call, spec, sub)
    raise StatusError.method_not_supported(f"{spec.group_resource}/{sub}", verb)


# --------------------------------------------------------------------------- scale


def _dig(obj: Obj, path: str) -> Any:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _selector(value: Any) -> str:
    """A built-in kind's label selector object, or a custom resource's labelSelectorPath string as is."""
    return value if isinstance(value, str) else format_selector(value if isinstance(value, dict) else None)


def to_scale(spec: ResourceSpec, obj: Obj) -> Obj:
    """autoscaling/v1 Scale of a Deployment/ReplicaSet/StatefulSet."""
    assert spec.scale is not None
    meta = obj["metadata"]
    return {
        "kind": "Scale",
        "apiVersion": SCALE_INFO.api_version,
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if k in meta},
        "spec": {"replicas": int(_dig(obj, spec.scale.spec_replicas_path) or 0)},
        "status": {"replicas": int(_dig(obj, spec.scale.status_replicas_path) or 0),
                   "selector": _selector(_dig(obj, spec.scale.selector_path))},
    }


async def scale(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    req = call.req
    if req.verb == "get":
        obj = await server.read(spec, req.namespace, req.name or "", req.resource_version)
        return Response(200, to_scale(spec, obj))
    assert spec.scale is not None
    path = spec.scale.spec_replicas_path.split(".")
    if req.verb == "patch":
        doc = parse_patch(req.patch_type, req.body)
        if req.patch_type == "apply":
            raise StatusError.unsupported_media_type("server-side apply is not supported on the scale subresource")
    elif not isinstance(req.body, dict):
        raise StatusError.bad_request("the request body must be a Scale object")
    name = req.name or ""

    def try_update(current: Obj | None) -> Obj:
        if current is None:
            raise StatusError.not_found(spec.group_resource, name, spec.group, spec.resource)
        before = to_scale(spec, current)
        if req.verb == "patch":
            wanted = apply_patch(req.patch_type or "", clone(before), doc, "Scale")
            check_patched_types(wanted, "Scale", name, "autoscaling")
        else:
            wanted = clone(req.body)
        rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if rv and rv != current["metadata"].get("resourceVersion"):
            raise StatusError.conflict(spec.group_resource, name, spec.group)
        replicas = (wanted.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise StatusError.invalid("Scale", name, [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                                       "message": f"Invalid value: {replicas}: must be greater "
                                                                  "than or equal to 0"}], "autoscaling")
        old = clone(current)
        new = clone(current)
        node = new
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = replicas
        server.admit_update(call, spec, new, old, current, "scale")
        return new

    result, _ = await server.storage.guaranteed_update(spec, req.namespace, name, try_update, dry_run=req.dry_run)
    return Response(200, to_scale(spec, result))


# --------------------------------------------------------------------------- binding


async def bind(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    req = call.req
    body = req.body if isinstance(req.body, dict) else None
    target = (body or {}).get("target") or {}
    node = target.get("name")
    name = req.name or ((body or {}).get("metadata") or {}).get("name") or ""
    call.name = name
    if not node:
        raise StatusError.invalid("Binding", name, [{"reason": "FieldValueRequired", "field": "target.name",
                                                     "message": "Required value"}])
    if target.get("kind") not in (None, "", "Node"):
        raise StatusError.invalid("Binding", name, [{"reason": "FieldValueNotSupported", "field": "target.kind",
                                                     "message": f'Unsupported value: "{target.get("kind")}": '
                                                                'supported values: "Node"'}])
    annotations = ((body or {}).get("metadata") or {}).get("annotations") or {}
    gr = f"{spec.group_resource}/binding"

    def try_update(current: Obj | None) -> Obj:
        if current is None:
            raise StatusError.not_found(spec.group_resource, name, spec.group, spec.resource)
        meta = current["metadata"]
        if meta.get("deletionTimestamp"):
            raise StatusError.conflict(gr, name, spec.group, f"pod {name} is being deleted, cannot be assigned to "
                                                             "a host")
        assigned = (current.get("spec") or {}).get("nodeName")
        if assigned:
            raise StatusError(status_body(409, "Conflict", f'Operation cannot be fulfilled on {gr} "{name}": pod '
                                          f'{name} is already assigned to node "{assigned}"', name=name,
                                          kind="pods"))
        new = clone(current)
        new.setdefault("spec", {})["nodeName"] = node
        if annotations:
            new["metadata"].setdefault("annotations", {}).update(annotations)
        status = new.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                           "lastTransitionTime": server.now()})
        status["conditions"] = conditions
        call.stage = "storage"
        return new

    await server.storage.guaranteed_update(spec, req.namespace, name, try_update, dry_run=req.dry_run)
    return Response(201, success(201))


# --------------------------------------------------------------------------- eviction


async def evict(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    req = call.req
    body = req.body if isinstance(req.body, dict) else {}
    name = req.name or (body.get("metadata") or {}).get("name") or ""
    call.name = name
    server.admit_subresource(call, spec, "eviction", body)
    pod = await server.read(spec, req.namespace, name)
    raw = body.get("deleteOptions") or {}
    options = DeleteOptions(raw.get("gracePeriodSeconds"), raw.get("propagationPolicy"), raw.get("preconditions"),
                            req.dry_run or bool(raw.get("dryRun")))
    phase = (pod.get("status") or {}).get("phase")
    if not (phase in ("Succeeded", "Failed") or pod["metadata"].get("deletionTimestamp")):
        await _take_disruption(server, call, pod)
    await server.delete_object(call, spec, req.namespace, name, options)
    return Response(201, success(201))


async def _take_disruption(server: APIServer, call: _Call, pod: Obj) -> None:
    """Spend one of the matching PodDisruptionBudget's allowed disruptions, or refuse with 429."""
    pdbs_spec = server.registry.get("policy", "poddisruptionbudgets")
    assert pdbs_spec is not None
    ns = pod["metadata"].get("namespace")
    cache = await server.storage.fresh_cache(pdbs_spec)
    labels = pod["metadata"].get("labels") or {}
    matching = [p for p in (cache.objects.get(ns or "", {}).values())
                if selector_matches((p.get("spec") or {}).get("selector"), labels)]
    if not matching:
        return
    if len(matching) > 1:
        raise StatusError.internal("This pod has more than one PodDisruptionBudget, which the eviction subresource "
                                   "does not support.")
    pdb_name = matching[0]["metadata"]["name"]
    pod_name = pod["metadata"]["name"]

    def try_update(current: Obj | None) -> Obj:
        if current is None:
            raise StatusError.not_found(pdbs_spec.group_resource, pdb_name, pdbs_spec.group)
        status = current.get("status") or {}
        meta = current["metadata"]
        if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
            raise _violation(pdb_name, "The disruption budget is still being processed by the server.")
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed <= 0:
            raise _violation(pdb_name, f"The disruption budget {pdb_name} needs "
                                       f"{int(status.get('desiredHealthy') or 0)} healthy pods and has "
                                       f"{int(status.get('currentHealthy') or 0)} currently")
        new = clone(current)
        nstatus = new.setdefault("status", {})
        nstatus["disruptionsAllowed"] = allowed - 1
        nstatus.setdefault("disruptedPods", {})[pod_name] = server.now()
        return new

    call.stage = "storage"
    try:
        await server.storage.guaranteed_update(pdbs_spec, ns, pdb_name, try_update, dry_run=call.req.dry_run)
    except StatusError as err:
        if err.code != 404:  # 404: the budget was deleted meanwhile and protects nothing
            raise


def _violation(pdb: str, message: str) -> StatusError:
    err = StatusError.too_many_requests(PDB_VIOLATION, retry_after=10)
    err.status["details"]["causes"] = [{"reason": "DisruptionBudget", "message": message}]
    return err


# --------------------------------------------------------------------------- token

#: Upstream's defaults: an hour, at least ten minutes, at most 2^32 seconds.
TOKEN_SECONDS = 3600
TOKEN_MIN_SECONDS = 600
TOKEN_MAX_SECONDS = 1 << 32


async def _bound_object(server: APIServer, namespace: str, account: str, ref: Any) -> tuple[str, Obj, Obj | None]:
    """(kind, object, the Pod's node) a token is bound to, with upstream's refusals."""
    if not isinstance(ref, dict):
        raise StatusError.bad_request("spec.boundObjectRef must be an object")
    kind, api_version, name = ref.get("kind"), ref.get("apiVersion") or "v1", str(ref.get("name") or "")
    resource = BOUND_KINDS.get(str(kind)) if api_version == "v1" else None
    if resource is None:
        group, _, version = str(api_version).rpartition("/")
        raise StatusError.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    bound_spec = server.registry.resolve(resource)
    obj = await server.read(bound_spec, namespace if bound_spec.namespaced else None, name)
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName") != account:
        raise StatusError.bad_request(f'cannot bind token for serviceaccount "{account}" to pod running with '
                                      "different serviceaccount name.")
    if ref.get("uid") and ref["uid"] != obj["metadata"].get("uid"):
        raise StatusError.conflict(str(kind), name, "", why=(
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in record. "
            "The object might have been deleted and then recreated"))
    node_name = (obj.get("spec") or {}).get("nodeName") if kind == "Pod" else None
    node = server.get_object("nodes", None, node_name) if node_name else None
    return str(kind), obj, node


async def token_request(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    """serviceaccounts/token (``kubectl create token``): a signed JWT that authenticates as the account
    (see kconsole.api.satoken), so RBAC drills can act as it, until it expires on the simulated clock
    or the account, or the Pod/Secret/Node it is bound to, is gone."""
    req = call.req
    name = req.name or ""
    account = await server.read(spec, req.namespace, name)
    body = req.body if isinstance(req.body, dict) else {}
    if body.get("kind") not in (None, "TokenRequest"):
        raise StatusError.bad_request(f"expected a TokenRequest in the request body, got kind {body.get('kind')!r}")
    server.admit_subresource(call, spec, "token", body)
    rspec = dict(body.get("spec") or {})
    seconds = rspec.get("expirationSeconds")
    seconds = TOKEN_SECONDS if seconds is None else seconds
    problem = ("may not specify a duration less than 10 minutes" if not isinstance(seconds, int) or
               seconds < TOKEN_MIN_SECONDS else "may not specify a duration larger than 2^32 seconds"
               if seconds > TOKEN_MAX_SECONDS else "")
    if problem:
        raise StatusError.invalid("TokenRequest", name, [{
            "reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
            "message": f"Invalid value: {seconds}: {problem}"}], "authentication.k8s.io")
    rspec["expirationSeconds"] = seconds
    rspec["audiences"] = rspec.get("audiences") or [ISSUER]
    bound = node = None
    if rspec.get("boundObjectRef") is not None:
        kind, obj, node = await _bound_object(server, req.namespace or "", name, rspec["boundObjectRef"])
        bound = (kind, obj)
        rspec["boundObjectRef"] = {**rspec["boundObjectRef"], "uid": obj["metadata"].get("uid", "")}
    else:
        rspec["boundObjectRef"] = None
    now = server.clock.now()
    claims = token_claims(account, list(rspec["audiences"]), now, seconds, str(uuid.uuid4()), bound, node)
    token = "" if req.dry_run else server.sa_signer.sign(claims)
    meta = {"name": name, "namespace": req.namespace, "creationTimestamp": server.now()}
    return Response(201, {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "metadata": meta,
                          "spec": rspec, "status": {"token": token,
                                                    "expirationTimestamp": server.clock.rfc3339(int(now) + seconds)}})


# --------------------------------------------------------------------------- log


async def pod_log(server: APIServer, call: _Call, spec: ResourceSpec) -> Response | LogStream:
    req = call.req
    name = req.name or ""
    pod = await server.read(spec, req.namespace, name)
    pspec = pod.get("spec") or {}
    kinds = {kind: [str(c.get("name")) for c in pspec.get(field) or [] if isinstance(c, dict)]
             for kind, field in (("", "containers"), ("init ", "initContainers"),
                                 ("ephemeral ", "ephemeralContainers"))}
    container = req.params.get("container") or ""
    if not container:
        containers = kinds[""]
        if len(containers) != 1:  # upstream's ValidateContainer, word for word
            choices = f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
            for kind in ("init ", "ephemeral "):
                if kinds[kind]:
                    choices += f" or one of the {kind}containers: [{' '.join(kinds[kind])}]"
            raise StatusError.bad_request(choices)
        container = containers[0]
    elif not any(container in names for names in kinds.values()):
        raise StatusError.bad_request(f"container {container} is not valid for pod {name}")
    options = _log_options(req.params, server.clock.now())
    if options.previous and not _terminated_before(pod, container):  # the kubelet's validateContainerLogStatus
        raise StatusError.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    source = server._log_source
    out = source(req.namespace or "", name, container, options) if source is not None else None
    if out is None:
        raise StatusError.bad_request(f'container "{container}" in pod "{name}" is not available')
    if isinstance(out, str):
        return Response(200, out)
    return out


async def pod_stream(server: APIServer, call: _Call, spec: ResourceSpec, sub: str) -> Response | ExecStream:
    """pods/exec and pods/attach: upstream's checks (streamLocation's words), then the pod's kubelet
    starts the process; a kubelet's refusal comes back as its plain text, as the proxied upgrade does."""
    req = call.req
    name = req.name or ""
    options = req.body if isinstance(req.body, dict) else {}
    command = [str(c) for c in options.get("command") or ()]
    if sub == "exec" and not command:
        raise StatusError.bad_request("you must specify at least 1 command")
    streams = {k: options.get(k) is True for k in ("stdin", "stdout", "stderr")}
    if not any(streams.values()):
        raise StatusError.bad_request("you must specify at least one of stdin, stdout, stderr")
    tty = options.get("tty") is True
    if tty and streams["stderr"]:
        raise StatusError.bad_request("tty and stderr cannot both be true")
    pod = await server.read(spec, req.namespace, name)
    pspec = pod.get("spec") or {}
    container = str(options.get("container") or "")
    names = {kind: [str(c.get("name")) for c in pspec.get(field) or [] if isinstance(c, dict)]
             for kind, field in (("", "containers"), ("init", "initContainers"), ("ephemeral", "ephemeralContainers"))}
    if not container:
        if len(names[""]) != 1:
            text = f"a container name must be specified for pod {name}"
            if names[""]:
                text += f", choose one of: [{' '.join(names[''])}]"
                if names["init"]:
                    text += f" or one of the init containers: [{' '.join(names['init'])}]"
            raise StatusError.bad_request(text)
        container = names[""][0]
    elif not any(container in found for found in names.values()):
        raise StatusError.bad_request(f"container {container} is not valid for pod {name}")
    if not pspec.get("nodeName"):
        raise StatusError.bad_request(f"pod {name} does not have a host assigned")
    source = server._exec_source
    if source is None:
        raise StatusError.internal(f"error dialing backend: dial tcp: lookup {pspec['nodeName']}: no such host")
    try:
        if sub == "exec":
            return source.exec(req.namespace or "", name, container, command, tty, streams["stdin"])
        return source.attach(req.namespace or "", name, container, tty, streams["stdin"])
    except ProxiedError as refused:
        return Response(refused.code, refused.text)


async def pod_port_forward(server: APIServer, call: _Call, spec: ResourceSpec) -> Response | PortForwardStream:
    """pods/portforward: the pod must have a node, whose kubelet then makes the connections."""
    req = call.req
    name = req.name or ""
    pod = await server.read(spec, req.namespace, name)
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise StatusError.bad_request(f"pod {name} does not have a host assigned")
    source = server._exec_source
    if source is None:
        raise StatusError.internal(f"error dialing backend: dial tcp: lookup {node}: no such host")
    try:
        return source.portforward(req.namespace or "", name)
    except ProxiedError as refused:
        return Response(refused.code, refused.text)


async def node_proxy(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    """GET nodes/<name>/proxy/<path>: the node's kubelet answers (its read-only endpoints). A node
    whose kubelet does not answer gets upstream's 503 for a refused connection to port 10250."""
    req = call.req
    node = await server.read(spec, None, req.name or "")
    path = req.params.get("path") or "/"
    source = server._kubelet_endpoints
    try:
        out = source(req.name or "", path) if source is not None else None
    except LookupError:
        raise StatusError(status_body(404, "NotFound", "404 page not found")) from None
    if out is None:
        address = next((a.get("address") for a in (node.get("status") or {}).get("addresses") or ()
                        if a.get("type") == "InternalIP"), req.name)
        raise StatusError(status_body(503, "ServiceUnavailable", f"error trying to reach service: dial tcp "
                                      f"{address}:10250: connect: connection refused"))
    return Response(200, out)


def _flag(params: dict[str, str], key: str) -> bool:
    return params.get(key, "").lower() in ("true", "1")


def _int_param(params: dict[str, str], key: str, minimum: int) -> int | None:
    """An integer option; upstream's field error when it does not parse or is below ``minimum``."""
    text = params.get(key)
    if text in (None, ""):
        return None
    try:
        value = int(text)
    except ValueError:
        raise StatusError.bad_request(f'{key}: Invalid value: "{text}": must be an integer') from None
    if value < minimum:
        bound = "greater than 0" if minimum == 1 else f"greater than or equal to {minimum}"
        raise StatusError.bad_request(f"{key}: Invalid value: {value}: must be {bound}")
    return value


def _log_options(params: dict[str, str], now: float) -> LogOptions:
    """PodLogOptions from the query, validated as upstream's ValidatePodLogOptions."""
    since_seconds = _int_param(params, "sinceSeconds", 1)
    since_time = params.get("sinceTime") or None
    if since_seconds is not None and since_time is not None:
        raise StatusError.bad_request("at most one of `sinceTime` or `sinceSeconds` may be specified")
    since: float | None = None
    if since_seconds is not None:
        since = now - since_seconds
    elif since_time is not None:
        try:
            since = parse_time(since_time)
        except ValueError as e:
            raise StatusError.bad_request(f"sinceTime: Invalid value: {since_time!r}: {e}") from None
    return LogOptions(follow=_flag(params, "follow"), previous=_flag(params, "previous"),
                      tail_lines=_int_param(params, "tailLines", 0), since=since,
                      timestamps=_flag(params, "timestamps"), limit_bytes=_int_param(params, "limitBytes", 1))


def _terminated_before(pod: Obj, container: str) -> bool:
    """Whether ``container`` has a previous, terminated instance (``kubectl logs --previous``)."""
    status = pod.get("status") or {}
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        if isinstance(cs, dict) and cs.get("name") == container:
            return bool((cs.get("lastState") or {}).get("terminated"))
    return False


# --------------------------------------------------------------------------- reviews


def review(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    """Access reviews: answered from the authorizer, never stored (and the metrics API and
    ComponentStatus, computed on each read)."""
    req = call.req
    if spec.group == "metrics.k8s.io":
        return metrics.answer(server, call, spec)
    if spec.kind == "ComponentStatus":
        return componentstatus.answer(server, call, spec)
    if req.verb != "create":
        raise StatusError.method_not_supported(spec.group_resource, req.verb)
    body = req.body if isinstance(req.body, dict) else None
    if body is None:
        raise StatusError.bad_request(f"the request body must be a {spec.kind} object")
    out = clone(body)
    out["apiVersion"], out["kind"] = spec.api_version, spec.kind
    out.setdefault("metadata", {})
    rspec = out.get("spec") or {}
    assert call.user is not None
    if spec.kind == "SelfSubjectReview":
        user_info: Obj = {"username": call.user.name, "groups": list(call.user.groups)}
        if call.user.uid:
            user_info["uid"] = call.user.uid
        if call.user.extra:
            user_info["extra"] = {key: list(values) for key, values in call.user.extra}
        out["status"] = {"userInfo": user_info}
        return Response(201, out)
    if spec.kind == "TokenReview":
        return Response(201, _token_review(server, out, rspec))
    if spec.kind == "SelfSubjectRulesReview":
        namespace = rspec.get("namespace") or ""
        rules, urls, incomplete = server.authorizer.rules_for(call.user, namespace)
        out["status"] = {"resourceRules": rules, "nonResourceRules": urls, "incomplete": incomplete}
        if incomplete:
            out["status"]["evaluationError"] = "node authorizer does not support user rule resolution"
        return Response(201, out)
    if spec.kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
        if not rspec.get("user") and not rspec.get("groups"):
            raise StatusError.invalid(spec.kind, "", [{"reason": "FieldValueInvalid", "field": "spec.user",
                                                       "message": 'Invalid value: "": at least one of user or '
                                                                  "group must be specified"}], spec.group)
        extra = rspec.get("extra") if isinstance(rspec.get("extra"), dict) else {}
        user = UserInfo(rspec.get("user") or "", tuple(rspec.get("groups") or ()), rspec.get("uid") or "",
                        tuple(sorted((str(k), tuple(str(v) for v in (vs or ()))) for k, vs in extra.items())))
    else:
        user = call.user
    res = rspec.get("resourceAttributes")
    non = rspec.get("nonResourceAttributes")
    if spec.kind == "LocalSubjectAccessReview":
        _local_attributes(out, res, non, call.req.namespace or "")
    if res:
        attrs = Attributes(user=user, verb=res.get("verb") or "", group=res.get("group") or "",
                           version=res.get("version") or "", resource=res.get("resource") or "",
                           subresource=res.get("subresource") or "", namespace=res.get("namespace") or "",
                           name=res.get("name") or "",
                           field_selector=(res.get("fieldSelector") or {}).get("rawSelector") or "")
    elif non:
        attrs = Attributes(user=user, verb=non.get("verb") or "", resource_request=False, path=non.get("path") or "")
    else:
        raise StatusError.invalid(spec.kind, "", [{"reason": "FieldValueRequired", "field": "spec.resourceAttributes",
                                                   "message": "Required value: exactly one of nonResourceAttributes "
                                                              "or resourceAttributes must be specified"}], spec.group)
    allowed, reason = server.authorizer.authorize(attrs)
    status: Obj = {"allowed": bool(allowed)}
    if reason:
        status["reason"] = reason
    out["status"] = status
    return Response(201, out)


def _local_attributes(out: Obj, res: Obj | None, non: Obj | None, namespace: str) -> None:
    """A LocalSubjectAccessReview asks about its own namespace only (upstream's validation, then its
    REST check): the attributes must name the request's namespace, and no non-resource URL."""
    meta = out["metadata"]
    meta["namespace"] = meta.get("namespace") or namespace
    if meta["namespace"] != namespace:
        raise StatusError.bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    causes = []
    if res is not None and (res.get("namespace") or "") != namespace:
        causes.append({"reason": "FieldValueInvalid", "field": "spec.resourceAttributes.namespace",
                       "message": f'Invalid value: "{res.get("namespace") or ""}": must match metadata.namespace'})
    if non is not None:
        causes.append({"reason": "FieldValueInvalid", "field": "spec.nonResourceAttributes",
                       "message": "Invalid value: \"object\": disallowed on this kind of request"})
    if causes:
        raise StatusError.invalid("LocalSubjectAccessReview", "", causes, "authorization.k8s.io")


def _token_review(server: APIServer, out: Obj, rspec: Obj) -> Obj:
    """Who a bearer token belongs to, asked by a webhook or an aggregated server: the same authenticators
    as a request's Authorization header, without acting as that user."""
    token = rspec.get("token")
    if not isinstance(token, str) or not token:
        raise StatusError.bad_request("token is required for TokenReview in authentication")
    try:
        user = server.tokens.authenticate(Credentials(token=token))
    except StatusError:
        out["status"] = {"user": {}}
        return out
    info: Obj = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = {key: list(values) for key, values in user.extra}
    audiences = rspec.get("audiences") or [ISSUER]
    out["status"] = {"authenticated": True, "user": info, "audiences": list(audiences)}
    return out
