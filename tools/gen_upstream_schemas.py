"""Regenerate ``kconsole/http/upstream_schemas.json.gz``: upstream's 1.32 descriptions and schema
extensions for every type kconsole's field table knows.

The source is Kubernetes 1.32's OpenAPI definitions as the ``kubernetes-validate`` wheel ships them
(``kubernetes-json-schema/v1.32.0-local/_definitions.json``, converted from the release's
``api/openapi-spec/swagger.json``: the Go doc comments of k8s.io/api and k8s.io/apimachinery). The
wheel is fetched with ``pip download`` into a scratch folder; it is not a dependency of kconsole.

Which definition a table type is (``Container`` -> ``io.k8s.api.core.v1.Container``) is not guessed
from names: the walk starts at each served kind's definition (its ``x-kubernetes-group-version-kind``)
and follows the field table and upstream's ``$ref`` s side by side, so a type gets the name of the
definition its field refers to. Kept per definition: the description, ``required``, the type's
``x-kubernetes-*`` keys and, per field, the description and the ``x-kubernetes-*`` keys (patch
strategy and merge key, list type and map keys, map type); every field upstream's definition has
is listed, so a field the table has from a later release is left out of 1.32's documents. Field
types stay kconsole's own.

Enum values are not in the swagger 2.0 spec (upstream publishes them only in its OpenAPI v3
documents, ``api/openapi-spec/v3/*.json``, with "Possible enum values" in the descriptions). Given
those files (``--v3 FILE...``), each field's ``enum`` and its v3 description (``v3description``,
where it differs) are added; ``/openapi/v3`` serves them and ``/openapi/v2`` keeps the v2 text.

Run: ``python tools/gen_upstream_schemas.py`` (optionally ``--definitions PATH`` to skip the download,
``--v3 api__v1_openapi.json apis__apps__v1_openapi.json ...`` for enums).
"""

from __future__ import annotations

import argparse
import gzip
import json
import pathlib
import subprocess
import sys
import tempfile
import zipfile
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kconsole.api import fieldschema  # noqa: E402
from kconsole.api.registry import TABLE  # noqa: E402
from kconsole.http.schemas import refs  # noqa: E402

WHEEL = "kubernetes-validate==1.32.0"
MEMBER = "kubernetes_validate/kubernetes-json-schema/v1.32.0-local/_definitions.json"
OUT = ROOT / "kconsole" / "http" / "upstream_schemas.json.gz"


def _download() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "-q", "-d", scratch],
                       check=True)
        wheel = next(pathlib.Path(scratch).glob("*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            return json.loads(zf.read(MEMBER))


def _ref_name(prop: dict[str, Any]) -> str | None:
    """The definition a property names, through list items and map values."""
    for key in ("items", "additionalProperties"):
        inner = prop.get(key)
        if isinstance(inner, dict):
            return _ref_name(inner)
    ref = prop.get("$ref")
    return ref.rsplit("/", 1)[1] if isinstance(ref, str) else None


def _bare(ref: str) -> str:
    while ref[:2] in ("[]", "{}"):
        ref = ref[2:]
    return ref


def build(defs: dict[str, Any]) -> dict[str, Any]:
    by_gvk: dict[tuple[str, str, str], str] = {}
    for name, schema in defs.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            by_gvk.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    names: dict[str, str] = {}
    conflicts: list[str] = []
    queue: list[str] = []
    for spec in TABLE:
        info = spec.info
        table_type = fieldschema.root_type(info.group, info.kind)
        upstream = by_gvk.get((info.group, info.version, info.kind))
        if table_type is None or upstream is None or table_type in names:
            continue
        names[table_type] = upstream
        queue.append(table_type)
    for (group, kind), table_type in fieldschema.GROUP_KINDS.items():
        upstream = by_gvk.get((group, "v1", kind))
        if upstream is not None and table_type not in names:
            names[table_type] = upstream
            queue.append(table_type)
    while queue:
        table_type = queue.pop(0)
        upstream = defs[names[table_type]]
        props = upstream.get("properties", {})
        for field, ref in fieldschema.fields(table_type).items():
            inner = _bare(ref)
            if inner not in fieldschema.TYPES or field not in props:
                continue
            target = _ref_name(props[field])
            if target is None or target not in defs:
                continue
            if inner not in names:
                names[inner] = target
                queue.append(inner)
            elif names[inner] != target:
                conflicts.append(f"{table_type}.{field}: {inner} is {names[inner]}, here {target}")
    out_defs: dict[str, Any] = {}
    for upstream in sorted(set(names.values())):
        schema = defs[upstream]
        entry: dict[str, Any] = {}
        if schema.get("description"):
            entry["description"] = schema["description"]
        if schema.get("required"):
            entry["required"] = schema["required"]
        for key, value in schema.items():
            if key.startswith("x-kubernetes-"):
                entry[key] = value
        fields: dict[str, Any] = {}
        for field, prop in schema.get("properties", {}).items():
            fields[field] = {k: v for k, v in prop.items() if k == "description" or k.startswith("x-kubernetes-")}
        entry["properties"] = fields
        out_defs[upstream] = entry
    verbatim: dict[str, Any] = {}
    wanted = [name + "List" for name in sorted(set(names.values())) if name + "List" in defs] + list(_META_VERBATIM)
    # Kinds served in a second version (autoscaling/v1 HorizontalPodAutoscaler over the stored v2):
    # their own upstream definitions, and the definitions those name.
    served = {(s.info.group, s.info.version, s.info.kind) for s in TABLE}
    for (group, version, kind), name in sorted(by_gvk.items()):
        if fieldschema.root_type(group, kind) in names and names[fieldschema.root_type(group, kind)] != name \
                and (group, version, kind) not in served and (group, kind) in _SECOND_VERSIONS:
            wanted += _closure(defs, name, set(names.values()))
    for name in wanted:
        verbatim[name] = _normalized(defs[name])
    for line in conflicts:
        print("conflict (first kept):", line, file=sys.stderr)
    return {"source": f"{WHEEL}: {MEMBER}", "names": dict(sorted(names.items())), "definitions": out_defs,
            "verbatim": verbatim}


#: Kinds kconsole serves in a version besides the one its field table describes.
_SECOND_VERSIONS = {("autoscaling", "HorizontalPodAutoscaler")}


def _closure(defs: dict[str, Any], name: str, known: set[str]) -> list[str]:
    """``name``, its list, and every definition they name that ``known`` does not hold already."""
    out: list[str] = []
    todo = [name, name + "List"]
    while todo:
        current = todo.pop()
        if current in out or current in known or current not in defs:
            continue
        out.append(current)
        todo += [ref.rsplit("/", 1)[1] for ref in refs(defs[current])]
    return out


#: Definitions the documents' paths name besides the kinds: meta types and subresource bodies (lists
#: come per kind).
_META_VERBATIM = (
    "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails", "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.api.autoscaling.v1.Scale", "io.k8s.api.autoscaling.v1.ScaleSpec", "io.k8s.api.autoscaling.v1.ScaleStatus",
    "io.k8s.api.core.v1.Binding", "io.k8s.api.policy.v1.Eviction",
    "io.k8s.api.authentication.v1.TokenRequest", "io.k8s.api.authentication.v1.TokenRequestSpec",
    "io.k8s.api.authentication.v1.TokenRequestStatus", "io.k8s.api.authentication.v1.BoundObjectReference",
)


def _normalized(schema: Any) -> Any:
    """A definition as swagger 2.0 spells it: ``$ref`` s to ``#/definitions/``, one ``type``, no
    ``enum`` s (the JSON-schema conversion added them to apiVersion and kind; upstream has none)."""
    if isinstance(schema, list):
        return [_normalized(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "enum":
            continue
        if key == "type" and isinstance(value, list):
            value = next(v for v in value if v != "null")
        elif key == "$ref":
            value = "#/definitions/" + value.rsplit("/", 1)[1]
        elif key in ("properties",):
            value = {k: _normalized(v) for k, v in value.items()}
        else:
            value = _normalized(value)
        out[key] = value
    return out


def add_v3(data: dict[str, Any], documents: list[dict[str, Any]]) -> int:
    """Enums and v3 descriptions from upstream's v3 documents into ``data``; the number of fields."""
    v3: dict[str, Any] = {}
    for doc in documents:
        v3.update(doc.get("components", {}).get("schemas", {}))
    count = 0
    for name, entry in data["definitions"].items():
        props = v3.get(name, {}).get("properties", {})
        for field, kept in entry["properties"].items():
            prop = props.get(field, {})
            enum = prop.get("enum") or prop.get("items", {}).get("enum")
            if enum:
                kept["enum"] = enum
                count += 1
            if prop.get("description") and prop["description"] != kept.get("description"):
                kept["v3description"] = prop["description"]
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=pathlib.Path, help="a _definitions.json already downloaded")
    parser.add_argument("--v3", type=pathlib.Path, nargs="*", default=[],
                        help="upstream 1.32's api/openapi-spec/v3/*.json, for enums")
    args = parser.parse_args()
    raw = json.loads(args.definitions.read_text()) if args.definitions else _download()
    data = build(raw.get("$defs") or raw.get("definitions") or raw)
    if args.v3:
        print(f"enums for {add_v3(data, [json.loads(p.read_text()) for p in args.v3])} fields", file=sys.stderr)
    body = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    OUT.write_bytes(gzip.compress(body, compresslevel=9, mtime=0))
    print(f"{OUT.relative_to(ROOT)}: {len(data['names'])} table types, {len(data['definitions'])} definitions, "
          f"{len(data['verbatim'])} lists and meta types, "
          f"{OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
