"""The CustomResourceDefinition's own field table, for fieldValidation: a typo in a CRD (say
``additionalPrinterColums``) is refused under Strict as upstream's strict decoding refuses it, instead
of being stored and silently doing nothing."""

from __future__ import annotations

from typing import Any

#: Field name -> the table of its value ("" = a leaf or a free-form value); "[]T" a list of T, "{}T" a map of T.
Table = dict[str, str]

JSON_SCHEMA_PROPS: Table = {
    name: "" for name in (
        "id", "$schema", "$ref", "description", "type", "format", "title", "default", "maximum", "exclusiveMaximum",
        "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
        "multipleOf", "enum", "maxProperties", "minProperties", "required", "dependencies", "additionalItems",
        "externalDocs", "example", "nullable", "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-validations")
}
JSON_SCHEMA_PROPS.update({"items": "Schema", "allOf": "[]Schema", "oneOf": "[]Schema", "anyOf": "[]Schema",
                          "not": "Schema", "properties": "{}Schema", "additionalProperties": "Schema",
                          "patternProperties": "{}Schema", "definitions": "{}Schema"})

TABLES: dict[str, Table] = {
    "CRD": {"apiVersion": "", "kind": "", "metadata": "", "spec": "Spec", "status": ""},
    "Spec": {"group": "", "names": "Names", "scope": "", "versions": "[]Version", "conversion": "Conversion",
             "preserveUnknownFields": ""},
    "Names": {"plural": "", "singular": "", "shortNames": "", "kind": "", "listKind": "", "categories": ""},
    "Version": {"name": "", "served": "", "storage": "", "deprecated": "", "deprecationWarning": "",
                "schema": "Validation", "subresources": "Subresources", "additionalPrinterColumns": "[]Column",
                "selectableFields": "[]SelectableField"},
    "Validation": {"openAPIV3Schema": "Schema"},
    "Subresources": {"status": "Empty", "scale": "Scale"},
    "Empty": {},
    "Scale": {"specReplicasPath": "", "statusReplicasPath": "", "labelSelectorPath": ""},
    "Column": {"name": "", "type": "", "format": "", "description": "", "priority": "", "jsonPath": ""},
    "SelectableField": {"jsonPath": ""},
    "Conversion": {"strategy": "", "webhook": ""},
    "Schema": JSON_SCHEMA_PROPS,
}


def unknown_fields(obj: Any) -> list[str]:
    """Paths of fields a CRD does not have, as upstream's strict decoder names them."""
    found: list[str] = []
    _walk(obj, "CRD", "", found)
    return found


def _walk(value: Any, table: str, path: str, found: list[str]) -> None:
    if table.startswith("[]"):
        if isinstance(value, list):
            for i, item in enumerate(value):
                _walk(item, table[2:], f"{path}[{i}]", found)
        return
    if table.startswith("{}"):
        if isinstance(value, dict):
            for key, item in value.items():
                _walk(item, table[2:], f"{path}[{key}]", found)
        return
    fields = TABLES.get(table)
    if fields is None or not isinstance(value, dict):
        return
    if table == "Schema" and isinstance(value, bool):
        return
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        if key not in fields:
            found.append(where)
        elif fields[key]:
            _walk(item, fields[key], where, found)


def drop(obj: Any, paths: list[str]) -> None:
    """Remove the fields at ``paths`` (fieldValidation=Warn/Ignore drops what it does not know)."""
    for path in paths:
        node, key = _parent(obj, path)
        if isinstance(node, dict):
            node.pop(key, None)


def _parent(obj: Any, path: str) -> tuple[Any, str]:
    import re  # noqa: PLC0415 - only a CRD with unknown fields gets here

    parts = re.findall(r"\[([^\]]*)\]|([^.\[]+)", path)
    steps = [a or b for a, b in parts]
    node = obj
    for step in steps[:-1]:
        if isinstance(node, list):
            node = node[int(step)] if step.isdigit() and int(step) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(step)
        else:
            return None, ""
    return node, steps[-1]


#: Leaf types where not a string (for ``kubectl explain crd``).
_LEAF_TYPES: dict[str, dict[str, Any]] = {
    **{name: {"type": "boolean"} for name in ("served", "storage", "deprecated", "preserveUnknownFields",
                                              "uniqueItems", "nullable", "exclusiveMaximum", "exclusiveMinimum",
                                              "x-kubernetes-preserve-unknown-fields",
                                              "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string")},
    **{name: {"type": "integer", "format": "int64"} for name in ("priority", "maxLength", "minLength", "maxItems",
                                                                 "minItems", "maxProperties", "minProperties")},
    **{name: {"type": "number"} for name in ("maximum", "minimum", "multipleOf")},
    **{name: {"type": "array", "items": {"type": "string"}}
       for name in ("shortNames", "categories", "required", "x-kubernetes-list-map-keys")},
    **{name: {"type": "object"} for name in ("metadata", "status", "webhook", "default", "example", "enum",
                                             "dependencies", "additionalItems", "externalDocs",
                                             "x-kubernetes-validations")},
}

#: Upstream's descriptions of the fields a CRD author reads most.
_DESCRIPTIONS: dict[str, str] = {
    "spec": "spec describes how the user wants the resources to appear",
    "group": "group is the API group of the defined custom resource. The custom resources are served under "
             "`/apis/<group>/...`. Must match the name of the CustomResourceDefinition (in the form "
             "`<names.plural>.<group>`).",
    "names": "names specify the resource and kind names for the custom resource.",
    "scope": "scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values "
             "are `Cluster` and `Namespaced`.",
    "versions": "versions is the list of all API versions of the defined custom resource. Version names are used "
                "to compute the order in which served versions are listed in API discovery.",
    "additionalPrinterColumns": "additionalPrinterColumns specifies additional columns returned in Table output. "
                                "If no columns are specified, a single column displaying the age of the custom "
                                "resource is used.",
    "schema": "schema describes the schema used for validation, pruning, and defaulting of this version of the "
              "custom resource.",
    "subresources": "subresources specify what subresources this version of the defined custom resource have.",
    "served": "served is a flag enabling/disabling this version from being served via REST APIs",
    "storage": "storage indicates this version should be used when persisting custom resources to storage. There "
               "must be exactly one version with storage=true.",
}


def openapi_schema() -> dict[str, Any]:
    """The CRD kind's schema, from its field table (``kubectl explain crd.spec.versions``)."""
    return _schema("CRD", 0)


def _schema(table: str, depth: int) -> dict[str, Any]:
    if table.startswith("[]"):
        return {"type": "array", "items": _schema(table[2:], depth)}
    if table.startswith("{}"):
        return {"type": "object", "additionalProperties": _schema(table[2:], depth)}
    out: dict[str, Any] = {"type": "object"}
    if table == "Schema" and depth > 1:
        return out  # JSONSchemaProps nests itself: two levels explain it
    props: dict[str, Any] = {}
    for name, sub in TABLES[table].items():
        prop = _schema(sub, depth + (table == "Schema")) if sub else dict(_LEAF_TYPES.get(name, {"type": "string"}))
        if name in _DESCRIPTIONS:
            prop["description"] = _DESCRIPTIONS[name]
        props[name] = prop
    out["properties"] = props
    return out
