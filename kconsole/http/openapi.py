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

from kconsole.api.types import ResourceInfo
from kconsole.http import schemas as schemas_table

_QUERY = ("dryRun", "fieldManager", "fieldValidation", "force", "pretty")


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
    group = info.group or "core"
    return f"io.k8s.api.{group}.{info.version}.{info.kind}"


def group_version_document(infos: Sequence[ResourceInfo]) -> dict[str, Any]:
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
        schemas[_schema_name(info)] = schemas_table.kind_schema(info.group, info.kind, {
            "type": "object",
            "description": f"{info.kind} ({info.api_version}), served by kconsole.",
            "properties": {
                "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this "
                               "representation of an object."},
                "kind": {"type": "string", "description": "Kind is a string value representing the REST resource "
                         "this object represents."},
                "metadata": {"type": "object", "description": "Standard object's metadata."},
                "spec": {"type": "object", "description": f"Specification of the desired behavior of the "
                         f"{info.kind}."},
                "status": {"type": "object", "description": f"Most recently observed status of the {info.kind}."},
            },
            "x-kubernetes-group-version-kind": [{"group": info.group, "version": info.version, "kind": info.kind}],
        }, schemas)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


@cache
def _object_meta_schemas() -> dict[str, Any]:
    """ObjectMeta and the types it names, as the built-in kinds' documents carry them."""
    scratch: dict[str, Any] = {}
    schemas_table.kind_schema("", "ConfigMap", {"type": "object", "properties": {}}, scratch)
    return scratch


def _custom_schema(info: ResourceInfo, schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """A custom resource's schema for ``kubectl explain``: its CRD's openAPIV3Schema, with the standard
    apiVersion, kind and metadata (ObjectMeta) that every object has."""
    out = copy.deepcopy(schema)
    props = out.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of this "
                           "representation of an object. Servers should convert recognized schemas to the latest "
                           "internal value, and may reject unrecognized values."}
    props["kind"] = {"type": "string", "description": "Kind is a string value representing the REST resource this "
                     "object represents. Servers may infer this from the endpoint the client submits requests to. "
                     "Cannot be updated. In CamelCase."}
    meta_schemas = _object_meta_schemas()
    meta_name = schemas_table.TYPES["ObjectMeta"][0]
    props["metadata"] = {"allOf": [{"$ref": f"#/components/schemas/{meta_name}"}],
                         "description": "Standard object's metadata. More info: "
                         "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
    for name, value in meta_schemas.items():
        schemas.setdefault(name, value)
    out["x-kubernetes-group-version-kind"] = [{"group": info.group, "version": info.version, "kind": info.kind}]
    return out


class OpenAPI:
    """The index and per-group-version documents, encoded once with content hashes."""

    def __init__(self, resources: Sequence[ResourceInfo]) -> None:
        by_gv: dict[str, list[ResourceInfo]] = {}
        for info in resources:
            key = f"api/{info.version}" if not info.group else f"apis/{info.group}/{info.version}"
            by_gv.setdefault(key, []).append(info)
        self.documents: dict[str, bytes] = {}
        index: dict[str, Any] = {}
        for key, infos in by_gv.items():
            body = json.dumps(group_version_document(infos), separators=(",", ":")).encode()
            self.documents[key] = body
            digest = hashlib.sha512(body).hexdigest()[:128].upper()
            index[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
        self.index = json.dumps({"paths": index}, separators=(",", ":")).encode()

    def document(self, path: str) -> bytes | None:
        """``path`` is what follows ``/openapi/v3/`` (``api/v1``, ``apis/apps/v1``)."""
        return self.documents.get(path.strip("/"))


#: ``/openapi/v2``: a Swagger 2.0 document with no definitions. kubectl asks it only for a kind the v3
#: documents lack (one kconsole does not serve): with no v2 either, it stopped with "failed to download
#: openapi ... turn validation off"; with an empty one it skips schema validation for that kind and
#: reports what upstream does, 'no matches for kind "ResourceQuota" in version "v1"'.
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
OPENAPI_V2_PROTOBUF_BODY = b"\n\x032.0"  # openapi_v2.Document{swagger: "2.0"}
OPENAPI_V2_JSON = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": {},
                   "definitions": {}}
