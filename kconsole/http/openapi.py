"""``/openapi/v3`` documents generated from the resource table.

``kubectl apply -f`` and ``kubectl create -f`` validate by default. kubectl 1.32 first asks the server
whether it validates itself: it reads the ``/openapi/v3`` index, fetches the group-version document
and looks for the kind's PATCH operation (tagged ``x-kubernetes-group-version-kind``) with a
``fieldValidation`` query parameter. When found, it sends ``?fieldValidation=Strict`` and lets the
server validate; that is what these documents are for. PATCH operations carry no strategic-merge
request body, so kubectl computes client-side apply patches from its compiled-in types, as it does
for any built-in kind. Field descriptions for ``kubectl explain`` come from :mod:`kconsole.http.schemas`.
"""

from __future__ import annotations

import copy
import hashlib
import json
from functools import cache
from collections.abc import Sequence
from typing import Any

from kconsole.api import fieldschema
from kconsole.api.types import ResourceInfo
from kconsole.http import openapiv2pb, schemas as schemas_table

_QUERY = ("dryRun", "fieldManager", "fieldValidation", "force", "pretty")
_API_VERSION = ("APIVersion defines the versioned schema of this representation of an object. Servers should "
                "convert recognized schemas to the latest internal value, and may reject unrecognized values. More "
                "info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
_KIND = ("Kind is a string value representing the REST resource this object represents. Servers may infer this "
         "from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
         "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")


def _param(name: str, where: str = "query", required: bool = False) -> dict[str, Any]:
    p: dict[str, Any] = {"name": name, "in": where, "schema": {"type": "string", "uniqueItems": True}}
    if required:
        p["required"] = True
    return p


def _op(action: str, info: ResourceInfo, query: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "operationId": f"{action}{info.kind}",
        "parameters": [_param(q) for q in query],
        "responses": {"200": {"description": "OK", "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/{_schema_name(info)}"}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": info.group, "version": info.version, "kind": info.kind},
    }


def _schema_name(info: ResourceInfo) -> str:
    """Upstream's definition name of the kind (``io.k8s.api.core.v1.Pod``); a kind the field table
    does not know gets the name its group would give it."""
    if info.custom is not None:  # apiextensions-apiserver: the group's labels reversed
        return ".".join([*reversed(info.group.split(".")), info.version, info.kind])
    root = fieldschema.root_type(info.group, info.kind)
    own = f"io.k8s.api.{info.group or 'core'}.{info.version}.{info.kind}"
    if root is not None and root in schemas_table.upstream()["names"]:
        name = schemas_table.definition_name(root)
        if name.endswith(f".{info.version}.{info.kind}") or own not in schemas_table.upstream()["verbatim"]:
            return name
    return own


def _second_version(info: ResourceInfo) -> bool:
    """A kind the field table does not describe in this version (autoscaling/v1 HPA over the stored
    v2, the create-only Binding): upstream's own definition of it is used."""
    return info.custom is None and _schema_name(info) in schemas_table.upstream()["verbatim"]


def _generic(info: ResourceInfo) -> dict[str, Any]:
    """The schema of a kind neither table knows: the fields every object has."""
    return {
        "type": "object",
        "description": f"{info.kind} ({info.api_version}), served by kconsole.",
        "properties": {
            "apiVersion": {"type": "string", "description": _API_VERSION},
            "kind": {"type": "string", "description": _KIND},
            "metadata": {"type": "object", "description": "Standard object's metadata."},
            "spec": {"type": "object", "description": f"Specification of the desired behavior of the {info.kind}."},
            "status": {"type": "object", "description": f"Most recently observed status of the {info.kind}."},
        },
        "x-kubernetes-group-version-kind": [{"group": info.group, "version": info.version, "kind": info.kind}],
    }


def group_version_document(infos: Sequence[ResourceInfo], version: str = "v1.32.0") -> dict[str, Any]:
    """The OpenAPI document of one group-version."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for info in infos:
        prefix = f"/api/{info.version}" if not info.group else f"/apis/{info.group}/{info.version}"
        scope = f"{prefix}/namespaces/{{namespace}}" if info.namespaced else prefix
        collection = f"{scope}/{info.resource}"
        item = f"{collection}/{{name}}"
        verbs = set(info.verbs)
        coll_ops: dict[str, Any] = {"parameters": [_param("namespace", "path", True)] if info.namespaced else []}
        if "list" in verbs:
            coll_ops["get"] = _op("list", info, ("labelSelector", "fieldSelector", "limit", "continue",
                                                  "resourceVersion", "watch"))
        if "create" in verbs:
            coll_ops["post"] = _op("post", info, ("dryRun", "fieldManager", "fieldValidation", "pretty"))
        if "deletecollection" in verbs:
            coll_ops["delete"] = _op("deletecollection", info, ("dryRun", "labelSelector", "fieldSelector"))
        paths[collection] = coll_ops
        item_ops: dict[str, Any] = {"parameters": [_param("name", "path", True)]
                                    + ([_param("namespace", "path", True)] if info.namespaced else [])}
        if "get" in verbs:
            item_ops["get"] = _op("get", info, ("pretty",))
        if "update" in verbs:
            item_ops["put"] = _op("put", info, ("dryRun", "fieldManager", "fieldValidation", "pretty"))
        if "patch" in verbs:
            item_ops["patch"] = _op("patch", info, _QUERY)
        if "delete" in verbs:
            item_ops["delete"] = _op("delete", info, ("dryRun", "gracePeriodSeconds", "propagationPolicy"))
        paths[item] = item_ops
        for sub in info.subresources:
            if sub in ("status", "scale"):
                sub_ops: dict[str, Any] = {"parameters": item_ops["parameters"]}
                sub_ops["get"] = _op("get", info, ("pretty",))
                sub_ops["put"] = _op("put", info, ("dryRun", "fieldManager", "fieldValidation"))
                paths[f"{item}/{sub}"] = sub_ops
        custom_schema = getattr(info.custom, "openapi", None)
        if custom_schema is not None:
            schemas[_schema_name(info)] = _custom_schema(info, custom_schema, schemas)
            continue
        if _second_version(info):
            schemas_table.add_verbatim(_schema_name(info), schemas_table.V3, schemas)
            continue
        schemas[_schema_name(info)] = schemas_table.kind_schema(info.group, info.kind, _generic(info), schemas)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": paths,
        "components": {"schemas": schemas},
    }


@cache
def _object_meta_schemas() -> dict[str, Any]:
    """ObjectMeta and the types it names, as the built-in kinds' documents carry them."""
    scratch: dict[str, Any] = {}
    builder = schemas_table.Builder(schemas_table.V3, scratch)
    scratch[schemas_table.definition_name("ObjectMeta")] = builder.type_schema("ObjectMeta")
    builder.drain()
    return scratch


def _custom_schema(info: ResourceInfo, schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """A custom resource's schema for ``kubectl explain``: its CRD's openAPIV3Schema, with the standard
    apiVersion, kind and metadata (ObjectMeta) that every object has."""
    out = copy.deepcopy(schema)
    props = out.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": _API_VERSION}
    props["kind"] = {"type": "string", "description": _KIND}
    meta_schemas = _object_meta_schemas()
    meta_name = schemas_table.definition_name("ObjectMeta")
    props["metadata"] = {"allOf": [{"$ref": f"#/components/schemas/{meta_name}"}],
                         "description": "Standard object's metadata. More info: "
                         "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
    for name, value in meta_schemas.items():
        schemas.setdefault(name, value)
    out["x-kubernetes-group-version-kind"] = [{"group": info.group, "version": info.version, "kind": info.kind}]
    return out


class OpenAPI:
    """The v3 index and per-group-version documents, encoded once with content hashes, and the v2
    document, built and encoded on first request (most clients never ask) with its ETag."""

    def __init__(self, resources: Sequence[ResourceInfo], version: str = "v1.32.0") -> None:
        self.resources = list(resources)
        self.version = version
        self._v2: dict[str, Any] | None = None
        self._v2_bodies: dict[bool, tuple[bytes, str]] = {}
        by_gv: dict[str, list[ResourceInfo]] = {}
        for info in resources:
            key = f"api/{info.version}" if not info.group else f"apis/{info.group}/{info.version}"
            by_gv.setdefault(key, []).append(info)
        self.documents: dict[str, bytes] = {}
        index: dict[str, Any] = {}
        for key, infos in by_gv.items():
            body = json.dumps(group_version_document(infos, version), separators=(",", ":")).encode()
            self.documents[key] = body
            digest = hashlib.sha512(body).hexdigest()[:128].upper()
            index[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
        self.index = json.dumps({"paths": index}, separators=(",", ":")).encode()

    def document(self, path: str) -> bytes | None:
        """``path`` is what follows ``/openapi/v3/`` (``api/v1``, ``apis/apps/v1``)."""
        return self.documents.get(path.strip("/"))

    def swagger_cached(self, protobuf: bool = False) -> tuple[bytes, str] | None:
        """The document if it has been built already."""
        return self._v2_bodies.get(protobuf)

    def swagger(self, protobuf: bool = False) -> tuple[bytes, str]:
        """``/openapi/v2``'s body (JSON, or gnostic's protobuf) and its ETag (quoted, as upstream
        sends it); built on first request, then served from here."""
        cached = self._v2_bodies.get(protobuf)
        if cached is None:
            if self._v2 is None:
                self._v2 = swagger_document(self.resources, self.version)
            body = openapiv2pb.document(self._v2) if protobuf else \
                json.dumps(self._v2, separators=(",", ":")).encode()
            cached = body, '"' + hashlib.sha512(body).hexdigest()[:128].upper() + '"'
            self._v2_bodies[protobuf] = cached
        return cached


#: ``/openapi/v2`` in protobuf, as kube-openapi names it (kubectl asks for ``...spec.v2@v1.0+protobuf``).
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_PRODUCES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/cbor"]
_WATCH_PRODUCES = _PRODUCES + ["application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch",
                               "application/cbor-seq"]
_PATCH_CONSUMES = ["application/json-patch+json", "application/merge-patch+json",
                   "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                   "application/apply-patch+cbor"]
#: Query parameters as upstream's swagger declares them: name -> (type, extra keys).
_V2_PARAMS: dict[str, dict[str, Any]] = {
    "allowWatchBookmarks": {"type": "boolean"}, "continue": {"type": "string"}, "dryRun": {"type": "string"},
    "fieldManager": {"type": "string"}, "fieldSelector": {"type": "string"}, "fieldValidation": {"type": "string"},
    "force": {"type": "boolean"}, "gracePeriodSeconds": {"type": "integer"},
    "ignoreStoreReadErrorWithClusterBreakingPotential": {"type": "boolean"}, "labelSelector": {"type": "string"},
    "limit": {"type": "integer"}, "orphanDependents": {"type": "boolean"}, "pretty": {"type": "string"},
    "propagationPolicy": {"type": "string"}, "resourceVersion": {"type": "string"},
    "resourceVersionMatch": {"type": "string"}, "sendInitialEvents": {"type": "boolean"},
    "timeoutSeconds": {"type": "integer"}, "watch": {"type": "boolean"},
    "container": {"type": "string"}, "follow": {"type": "boolean"},
    "insecureSkipTLSVerifyBackend": {"type": "boolean"}, "limitBytes": {"type": "integer"},
    "previous": {"type": "boolean"}, "sinceSeconds": {"type": "integer"}, "tailLines": {"type": "integer"},
    "timestamps": {"type": "boolean"}, "command": {"type": "string"}, "stderr": {"type": "boolean"},
    "stdin": {"type": "boolean"}, "stdout": {"type": "boolean"}, "tty": {"type": "boolean"},
    "ports": {"type": "integer"}, "path": {"type": "string"},
}
#: The query parameters of the subresources that read or stream rather than take a body.
_SUB_QUERY: dict[str, tuple[str, ...]] = {
    "log": ("container", "follow", "insecureSkipTLSVerifyBackend", "limitBytes", "previous", "sinceSeconds",
            "tailLines", "timestamps"),
    "exec": ("command", "container", "stderr", "stdin", "stdout", "tty"),
    "attach": ("container", "stderr", "stdin", "stdout", "tty"),
    "portforward": ("ports",),
    "proxy": ("path",),
}
_LIST_QUERY = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
               "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_DELETE_QUERY = ("dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
                 "orphanDependents", "propagationPolicy")
_WRITE_QUERY = ("dryRun", "fieldManager", "fieldValidation")


def _v2_query(name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"in": "query", "name": name, **_V2_PARAMS[name]}
    out["uniqueItems"] = True
    return out


def _v2_body(schema: str, required: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"in": "body", "name": "body", "schema": {"$ref": f"#/definitions/{schema}"}}
    if required:
        out["required"] = True
    return out


def _operation_group(info: ResourceInfo) -> tuple[str, str]:
    """Upstream's operation-id infix and tag of a group-version: ``CoreV1``/``core_v1``,
    ``RbacAuthorizationV1``/``rbacAuthorization_v1``."""
    parts = (info.group.removesuffix(".k8s.io") or "core").split(".")
    camel = "".join(p[:1].upper() + p[1:] for p in parts)
    version = info.version[:1].upper() + info.version[1:]
    return camel + version, camel[:1].lower() + camel[1:] + "_" + info.version


def _v2_paths(info: ResourceInfo, kind_def: str, list_def: str | None, paths: dict[str, Any]) -> None:
    """The paths of one resource, with upstream's operation ids, actions and parameters."""
    infix, tag = _operation_group(info)
    gvk = {"group": info.group, "kind": info.kind, "version": info.version}
    prefix = f"/api/{info.version}" if not info.group else f"/apis/{info.group}/{info.version}"
    scope = f"{prefix}/namespaces/{{namespace}}" if info.namespaced else prefix
    spaced = "Namespaced" if info.namespaced else ""
    verbs = set(info.verbs)

    def op(action: str, verb: str, description: str, schema: str | None, params: list[dict[str, Any]],
           codes: tuple[str, ...] = ("200",), produces: list[str] = _PRODUCES,
           consumes: list[str] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"consumes": consumes or ["*/*"], "description": description,
                               "operationId": f"{verb}{infix}{spaced}{info.kind}", "parameters": params,
                               "produces": produces, "responses": {}, "schemes": ["https"], "tags": [tag],
                               "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk}
        if not params:
            del out["parameters"]
        for code in codes:
            out["responses"][code] = {"description": {"200": "OK", "201": "Created", "202": "Accepted"}[code],
                                      **({"schema": {"$ref": f"#/definitions/{schema}"}} if schema else {})}
        out["responses"]["401"] = {"description": "Unauthorized"}
        return out

    namespace = {"description": "object name and auth scope, such as for teams and projects", "in": "path",
                 "name": "namespace", "required": True, "type": "string", "uniqueItems": True}
    name = {"description": f"name of the {info.kind}", "in": "path", "name": "name", "required": True,
            "type": "string", "uniqueItems": True}
    pretty = _v2_query("pretty")
    scope_params = [namespace] if info.namespaced else []
    collection: dict[str, Any] = {}
    if "deletecollection" in verbs:
        collection["delete"] = op("deletecollection", "delete", f"delete collection of {info.kind}",
                                  _META + "Status", [_v2_body(_META + "DeleteOptions", False)] + [
                                      _v2_query(q) for q in sorted({*_LIST_QUERY, *_DELETE_QUERY} - {
                                          "watch", "allowWatchBookmarks"})])
        collection["delete"]["operationId"] = f"delete{infix}Collection{spaced}{info.kind}"
    if "list" in verbs and list_def is not None:
        collection["get"] = op("list", "list", f"list or watch objects of kind {info.kind}", list_def,
                               [_v2_query(q) for q in _LIST_QUERY], produces=_WATCH_PRODUCES)
    collection["parameters"] = scope_params + [pretty]
    if "create" in verbs:
        collection["post"] = op("post", "create", f"create a{'n' if info.kind[0] in 'AEIOU' else ''} {info.kind}",
                                kind_def, [_v2_body(kind_def)] + [_v2_query(q) for q in _WRITE_QUERY],
                                codes=("200", "201", "202"))
    if len(collection) > 1:
        paths[f"{scope}/{info.resource}"] = collection
    item: dict[str, Any] = {}
    if "delete" in verbs:
        item["delete"] = op("delete", "delete", f"delete a{'n' if info.kind[0] in 'AEIOU' else ''} {info.kind}",
                            _META + "Status", [_v2_body(_META + "DeleteOptions", False)]
                            + [_v2_query(q) for q in _DELETE_QUERY], codes=("200", "202"))
    if "get" in verbs:
        item["get"] = op("get", "read", f"read the specified {info.kind}", kind_def, [])
    item["parameters"] = [name] + scope_params + [pretty]
    if "patch" in verbs:
        item["patch"] = op("patch", "patch", f"partially update the specified {info.kind}", kind_def,
                           [{"in": "body", "name": "body", "required": True, "schema": {
                               "$ref": f"#/definitions/{_META}Patch"}}]
                           + [_v2_query(q) for q in (*_WRITE_QUERY, "force")], codes=("200", "201"),
                           consumes=_PATCH_CONSUMES)
    if "update" in verbs:
        item["put"] = op("put", "replace", f"replace the specified {info.kind}", kind_def,
                         [_v2_body(kind_def)] + [_v2_query(q) for q in _WRITE_QUERY], codes=("200", "201"))
    if len(item) > 1:
        paths[f"{scope}/{info.resource}/{{name}}"] = item
    _v2_subresource_paths(info, f"{scope}/{info.resource}/{{name}}", op, name, scope_params, pretty, paths)
    for sub in info.subresources:
        if sub != "status":
            continue
        ops: dict[str, Any] = {}
        ops["get"] = op("get", "read", f"read status of the specified {info.kind}", kind_def, [])
        ops["parameters"] = [name] + scope_params + [pretty]
        ops["patch"] = op("patch", "patch", f"partially update status of the specified {info.kind}", kind_def,
                          [{"in": "body", "name": "body", "required": True, "schema": {
                              "$ref": f"#/definitions/{_META}Patch"}}]
                          + [_v2_query(q) for q in (*_WRITE_QUERY, "force")], codes=("200", "201"),
                          consumes=_PATCH_CONSUMES)
        ops["put"] = op("put", "replace", f"replace status of the specified {info.kind}", kind_def,
                        [_v2_body(kind_def)] + [_v2_query(q) for q in _WRITE_QUERY], codes=("200", "201"))
        for verb_op in ("get", "patch", "put"):
            ops[verb_op]["operationId"] = ops[verb_op]["operationId"] + "Status"
        paths[f"{scope}/{info.resource}/{{name}}/status"] = ops
    if info.namespaced and "list" in verbs and list_def is not None:
        paths[f"{prefix}/{info.resource}"] = {
            "get": {**op("list", "list", f"list or watch objects of kind {info.kind}", list_def, [],
                         produces=_WATCH_PRODUCES), "operationId": f"list{infix}{info.kind}ForAllNamespaces"},
            "parameters": [_v2_query(q) for q in sorted((*_LIST_QUERY, "pretty"))],
        }


#: Subresources other than status: verbs and the body they take or answer (None: plain text or a
#: stream), as upstream's swagger lists them. ``connect`` operations take no body.
_SUBRESOURCES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "scale": (("get", "read", "io.k8s.api.autoscaling.v1.Scale"), ("put", "replace", "io.k8s.api.autoscaling.v1.Scale"),
              ("patch", "patch", "io.k8s.api.autoscaling.v1.Scale")),
    "binding": (("post", "create", "io.k8s.api.core.v1.Binding"),),
    "eviction": (("post", "create", "io.k8s.api.policy.v1.Eviction"),),
    "token": (("post", "create", "io.k8s.api.authentication.v1.TokenRequest"),),
    "log": (("get", "read", ""),),
    "ephemeralcontainers": (("get", "read", "="), ("put", "replace", "="), ("patch", "patch", "=")),
    "approval": (("get", "read", "="), ("put", "replace", "="), ("patch", "patch", "=")),
    "finalize": (("put", "replace", "="),),
    "exec": (("get", "connect", ""), ("post", "connect", "")),
    "attach": (("get", "connect", ""), ("post", "connect", "")),
    "portforward": (("get", "connect", ""), ("post", "connect", "")),
    "proxy": (("get", "connect", ""), ("put", "connect", ""), ("post", "connect", ""), ("patch", "connect", ""),
              ("delete", "connect", ""), ("head", "connect", ""), ("options", "connect", "")),
}


#: Operation-id verb -> the request's ``x-kubernetes-action``.
_ACTIONS = {"read": "get", "replace": "put", "create": "post", "patch": "patch", "connect": "connect"}


def _v2_subresource_paths(info: ResourceInfo, item_path: str, op: Any, name: dict[str, Any],
                          scope_params: list[dict[str, Any]], pretty: dict[str, Any], paths: dict[str, Any]) -> None:
    """Paths of a resource's subresources (``pods/{name}/log``, ``deployments/{name}/scale``, ...)."""
    kind_def = _schema_name(info)
    for sub in info.subresources:
        verbs = _SUBRESOURCES.get(sub)
        if verbs is None:
            continue
        camel = sub[:1].upper() + sub[1:]
        ops: dict[str, Any] = {}
        for http_verb, action, body in verbs:
            schema = kind_def if body == "=" else body
            verb = action if action != "connect" else f"connect{http_verb.capitalize()}"
            params: list[dict[str, Any]] = []
            if action in ("create", "replace") and schema:
                params = [_v2_body(schema)] + [_v2_query(q) for q in _WRITE_QUERY]
            elif action == "patch":
                params = [{"in": "body", "name": "body", "required": True, "schema": {
                    "$ref": f"#/definitions/{_META}Patch"}}] + [_v2_query(q) for q in (*_WRITE_QUERY, "force")]
            if action == "connect":
                description = f"connect {http_verb.upper()} requests to {sub} of {info.kind}"
            else:
                description = f"{action} {sub} of the specified {info.kind}"
            entry = op(_ACTIONS[action], verb, description, schema or None, params,
                       produces=["*/*"] if action == "connect" else _PRODUCES)
            if not schema:
                entry["responses"]["200"] = {"description": "OK", "schema": {"type": "string"}}
            entry["operationId"] = entry["operationId"] + camel
            ops[http_verb] = entry
        ops["parameters"] = [name] + scope_params + [_v2_query(q) for q in _SUB_QUERY.get(sub, ())] + (
            [] if "connect" in {v[1] for v in verbs} else [pretty])
        paths[f"{item_path}/{sub}"] = dict(sorted(ops.items()))


def _v2_custom_schema(info: ResourceInfo, schema: dict[str, Any]) -> dict[str, Any]:
    """A CRD's schema as upstream publishes it in swagger 2.0: what 2.0 cannot say (``nullable``,
    ``anyOf``/``oneOf``/``not``, CEL rules) left out, metadata as ObjectMeta."""
    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(v) for v in node]
        if not isinstance(node, dict):
            return node
        return {k: strip(v) for k, v in node.items()
                if k not in ("nullable", "anyOf", "oneOf", "not", "x-kubernetes-validations")}
    out = strip(schema)
    props = out.setdefault("properties", {})
    props["apiVersion"] = {"description": _API_VERSION, "type": "string"}
    props["kind"] = {"description": _KIND, "type": "string"}
    props["metadata"] = {"$ref": f"#/definitions/{schemas_table.definition_name('ObjectMeta')}",
                         "description": "Standard object's metadata. More info: "
                         "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
    out["x-kubernetes-group-version-kind"] = [{"group": info.group, "kind": info.kind, "version": info.version}]
    return out


def _v2_custom_list(info: ResourceInfo, kind_def: str) -> dict[str, Any]:
    return {"description": f"{info.kind}List is a list of {info.kind}", "required": ["items"], "type": "object",
            "properties": {
                "apiVersion": {"description": _API_VERSION, "type": "string"},
                "items": {"description": f"List of {info.resource.lower()}. More info: "
                          "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                          "items": {"$ref": f"#/definitions/{kind_def}"}, "type": "array"},
                "kind": {"description": _KIND, "type": "string"},
                "metadata": {"$ref": f"#/definitions/{_META}ListMeta", "description": "Standard list metadata. "
                             "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                             "api-conventions.md#types-kinds"}},
            "x-kubernetes-group-version-kind": [{"group": info.group, "kind": f"{info.kind}List",
                                                 "version": info.version}]}


def swagger_document(resources: Sequence[ResourceInfo], version: str) -> dict[str, Any]:
    """``/openapi/v2``: the Swagger 2.0 document of every built-in resource served, from the same
    field table and upstream data as the v3 documents. Custom resources are left to ``/openapi/v3``."""
    definitions: dict[str, Any] = {}
    verbatim = schemas_table.upstream()["verbatim"]
    paths: dict[str, Any] = {}
    for info in sorted(resources, key=lambda i: (i.group, i.version, i.resource)):
        if "/" in info.resource:
            continue
        kind_def = _schema_name(info)
        custom_schema = getattr(info.custom, "openapi", None)
        list_def: str | None = kind_def + "List"
        if custom_schema is not None:
            definitions[kind_def] = _v2_custom_schema(info, custom_schema)
            definitions[kind_def + "List"] = _v2_custom_list(info, kind_def)
        elif _second_version(info):
            schemas_table.add_verbatim(kind_def, schemas_table.V2, definitions)
            if kind_def + "List" in verbatim:
                schemas_table.add_verbatim(kind_def + "List", schemas_table.V2, definitions)
            else:
                list_def = None
        else:
            if kind_def not in definitions:
                definitions[kind_def] = schemas_table.kind_schema(info.group, info.kind, _generic(info), definitions,
                                                                  schemas_table.V2)
            if kind_def + "List" in verbatim:
                definitions[kind_def + "List"] = verbatim[kind_def + "List"]
            else:
                list_def = None
        _v2_paths(info, kind_def, list_def, paths)
    for name, schema in verbatim.items():
        if not name.endswith("List"):
            definitions.setdefault(name, schema)
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "in": "header",
                                                "name": "authorization", "type": "apiKey"}},
        "security": [{"BearerToken": []}],
    }
