"""CustomResourceDefinition defaulting and validation, with apiextensions-apiserver's messages."""

from __future__ import annotations

from typing import Any

from kconsole.api.crd import schema
from kconsole.api.validators.field import Cause, GoLiteral, duplicate, immutable, invalid, not_supported, required
from kconsole.objects.names import is_dns1035_label, is_dns1123_subdomain

Obj = dict[str, Any]

SCOPES = ("Cluster", "Namespaced")


def set_defaults(crd: Obj) -> None:
    """Upstream's SetDefaults_CustomResourceDefinition: singular and listKind from the kind, the None
    conversion strategy, an empty status."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        if not names.get("singular"):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind"):
            names["listKind"] = names["kind"] + "List"
    if not isinstance(spec.get("conversion"), dict):
        spec["conversion"] = {"strategy": "None"}
    for version in spec.get("versions") or ():
        if isinstance(version, dict) and "served" not in version:
            version["served"] = True


def _versions_literal(versions: Any) -> GoLiteral:
    names = [v.get("name", "") if isinstance(v, dict) else "" for v in versions or ()]
    inner = ", ".join(f'apiextensions.CustomResourceDefinitionVersion{{Name:"{n}", ...}}' for n in names)
    return GoLiteral("[]apiextensions.CustomResourceDefinitionVersion{" + inner + "}")


def _dns1035(path: str, value: Any, mixed_case: bool = False) -> list[Cause]:
    if not isinstance(value, str) or not value:
        return []
    errs = is_dns1035_label(value.lower() if mixed_case else value)
    if not errs:
        return []
    detail = ",".join(errs)
    if mixed_case:
        detail = "may have mixed case, but should otherwise match: " + detail
    return [invalid(path, value, detail)]


def _names(names: Any, path: str) -> list[Cause]:
    if not isinstance(names, dict):
        return [required(path)]
    causes: list[Cause] = []
    if not names.get("plural"):
        causes.append(required(f"{path}.plural"))
    causes += _dns1035(f"{path}.plural", names.get("plural"))
    if not names.get("singular"):
        causes.append(required(f"{path}.singular"))
    causes += _dns1035(f"{path}.singular", names.get("singular"))
    if not names.get("kind"):
        causes.append(required(f"{path}.kind"))
    causes += _dns1035(f"{path}.kind", names.get("kind"), mixed_case=True)
    if not names.get("listKind"):
        causes.append(required(f"{path}.listKind"))
    causes += _dns1035(f"{path}.listKind", names.get("listKind"), mixed_case=True)
    for i, short in enumerate(names.get("shortNames") or ()):
        causes += _dns1035(f"{path}.shortNames[{i}]", short)
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        causes.append(invalid(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or ()):
        causes += _dns1035(f"{path}.categories[{i}]", category)
    return causes


def _columns(columns: Any, path: str) -> list[Cause]:
    from kconsole.api.crd.printers import PathError, compile_path  # noqa: PLC0415 - only CRD writes need it

    causes: list[Cause] = []
    for i, column in enumerate(columns or ()):
        where = f"{path}[{i}]"
        if not isinstance(column, dict):
            causes.append(invalid(where, column, "must be an object"))
            continue
        if not column.get("name"):
            causes.append(required(f"{where}.name"))
        kind = column.get("type")
        if not kind:
            causes.append(required(f"{where}.type"))
        elif kind not in ("integer", "number", "string", "boolean", "date"):
            causes.append(not_supported(f"{where}.type", kind, ("boolean", "date", "integer", "number", "string")))
        if not column.get("jsonPath"):
            causes.append(required(f"{where}.JSONPath"))
        else:
            try:
                compile_path(column["jsonPath"])
            except PathError as err:
                causes.append(invalid(f"{where}.JSONPath", column["jsonPath"], str(err)))
    return causes


def _versions(versions: Any, path: str) -> list[Cause]:
    if not isinstance(versions, list) or not versions:
        return [invalid(path, _versions_literal(versions), "must have exactly one version marked as storage version")]
    causes: list[Cause] = []
    seen: set[str] = set()
    storage = 0
    for i, version in enumerate(versions):
        where = f"{path}[{i}]"
        if not isinstance(version, dict):
            causes.append(invalid(where, version, "must be an object"))
            continue
        name = version.get("name")
        if not name:
            causes.append(required(f"{where}.name"))
        elif name in seen:
            causes.append(duplicate(f"{where}.name", name))
        else:
            seen.add(name)
            causes += _dns1035(f"{where}.name", name)
        if version.get("storage"):
            storage += 1
        openapi = (version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version.get("schema"), dict) \
            else None
        if openapi is None:
            causes.append(required(f"{where}.schema.openAPIV3Schema", "schemas are required"))
        else:
            causes += schema.structural_causes(openapi, f"{where}.schema.openAPIV3Schema")
        causes += _columns(version.get("additionalPrinterColumns"), f"{where}.additionalPrinterColumns")
        scale = (version.get("subresources") or {}).get("scale") if isinstance(version.get("subresources"), dict) \
            else None
        if isinstance(scale, dict):
            for key in ("specReplicasPath", "statusReplicasPath"):
                value = scale.get(key)
                if not value:
                    causes.append(required(f"{where}.subresources.scale.{key}"))
                elif not str(value).startswith("."):
                    causes.append(invalid(f"{where}.subresources.scale.{key}", value,
                                          "should be a json path under .spec" if key.startswith("spec")
                                          else "should be a json path under .status"))
    if storage != 1:
        causes.append(invalid(path, _versions_literal(versions), "must have exactly one version marked as "
                              "storage version"))
    if not any(isinstance(v, dict) and v.get("served") for v in versions):
        causes.append(invalid(path, _versions_literal(versions), "must have at least one served version"))
    return causes


def validate_crd(crd: Obj) -> list[Cause]:
    """ValidateCustomResourceDefinition (names, group, scope, versions and their schemas)."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    causes: list[Cause] = []
    group = spec.get("group")
    if not group:
        causes.append(required("spec.group"))
    elif not isinstance(group, str) or is_dns1123_subdomain(group):
        causes.append(invalid("spec.group", group, ",".join(is_dns1123_subdomain(str(group)))))
    elif "." not in group:
        causes.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    names = spec.get("names")
    causes += _names(names, "spec.names")
    scope = spec.get("scope")
    if not scope:
        causes.append(required("spec.scope"))
    elif scope not in SCOPES:
        causes.append(not_supported("spec.scope", scope, SCOPES))
    causes += _versions(spec.get("versions"), "spec.versions")
    name = (crd.get("metadata") or {}).get("name", "")
    plural = names.get("plural") if isinstance(names, dict) else None
    if plural and group and name != f"{plural}.{group}":
        causes.insert(0, invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    return causes


def validate_crd_update(new: Obj, old: Obj) -> list[Cause]:
    """What may not change: the group and the scope; stored versions stay declared."""
    causes: list[Cause] = []
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if spec.get("scope") != old_spec.get("scope"):
        causes.append(immutable("spec.scope", spec.get("scope")))
    if spec.get("group") != old_spec.get("group"):
        causes.append(immutable("spec.group", spec.get("group")))
    declared = {v.get("name") for v in spec.get("versions") or () if isinstance(v, dict)}
    for i, stored in enumerate((old.get("status") or {}).get("storedVersions") or ()):
        if stored not in declared:
            causes.append(invalid(f"status.storedVersions[{i}]", stored,
                                  "must appear in spec.versions"))
    return causes
