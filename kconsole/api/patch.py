"""Patch application by patch type: JSON patch, JSON merge patch, strategic merge patch, apply.

JSON patch (RFC 6902) is ``rfc6902.py`` (upstream's rules and messages); merge patch (RFC 7386) is here;
strategic merge patch and server-side apply live in their own modules (``strategicpatch.py``,
``apply.py``), imported on first use so the server answers 415 while they are absent.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import yaml

from kconsole.api import rfc6902
from kconsole.api.decodetypes import json_type
from kconsole.api.types import StatusError, status_body
from kconsole.objects import yamlload

PATCH_TYPES = ("json", "merge", "strategic", "apply")

#: The content types the HTTP front maps to patch types.
CONTENT_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}


def parse_patch(patch_type: str | None, body: Any) -> Any:
    """The patch document as JSON values; 400 naming the problem when it does not parse."""
    if patch_type not in PATCH_TYPES:
        raise StatusError.unsupported_media_type(
            f"the patch type {patch_type!r} is not supported; use one of: json, merge, strategic, apply")
    doc = body
    if isinstance(doc, (bytes, bytearray)):
        try:
            doc = doc.decode()
        except UnicodeDecodeError:
            raise StatusError.bad_request("the patch is not valid UTF-8") from None
    if isinstance(doc, str):
        try:
            doc = yamlload.load(doc) if patch_type == "apply" else json.loads(doc)
        except (ValueError, RecursionError, yaml.YAMLError) as err:
            raise StatusError.bad_request(f"error decoding patch: {err}") from None
    if patch_type == "json":
        if not isinstance(doc, list):  # jsonpatch.DecodePatch's error, as kube-apiserver answers it
            raise StatusError.bad_request(f"json: cannot unmarshal {json_type(doc)} into Go value of type "
                                          "jsonpatch.Patch")
    elif not isinstance(doc, dict):
        raise StatusError.bad_request(f"{patch_type} patch must be a JSON object, got {type(doc).__name__}")
    return doc


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def apply_patch(patch_type: str, original: dict[str, Any], patch: Any, kind: str) -> dict[str, Any]:
    """The patched object; ``original`` must be a private copy (it may be changed or reused).

    422 when a well-formed patch cannot apply (a failed ``test``, a missing path).
    """
    if patch_type == "json":
        try:
            result = rfc6902.apply(original, patch)
        except rfc6902.PatchError:
            raise StatusError(_patch_rejected()) from None
        except rfc6902.MalformedPatch as err:
            raise StatusError.bad_request(str(err)) from None
    elif patch_type == "merge":
        result = merge_patch(original, patch)
    elif patch_type == "strategic":
        module = _optional("kconsole.api.strategicpatch")
        result = module.apply_strategic_patch(original, patch, kind)
    else:
        raise StatusError.bad_request("apply patches go through server_side_apply")
    if not isinstance(result, dict):
        raise StatusError.bad_request("the patch must leave an object")
    return result


def _patch_rejected() -> dict[str, Any]:
    """upstream's answer to a JSON patch that does not apply (a failed ``test``, a missing path):
    NewGenericServerResponse(422), whose text says nothing of why, with empty details; kubectl
    prints "The request is invalid: the server rejected our request due to an error in our request"."""
    body = status_body(422, "Invalid", "the server rejected our request due to an error in our request")
    code = body.pop("code")
    body["details"] = {}
    body["code"] = code
    return body


def server_side_apply(live: dict[str, Any] | None, applied: dict[str, Any], manager: str, force: bool, now: str,
                      kind: str, subresource: str = "") -> dict[str, Any]:
    module = _optional("kconsole.api.apply")
    return module.server_side_apply(live, applied, manager, force, now, kind, subresource)


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        raise StatusError.unsupported_media_type("the patch type is not supported yet") from None
