"""One served custom resource: what an Established CustomResourceDefinition makes the API server do.

:func:`resource_spec` turns a CRD into the :class:`ResourceSpec` the generic store serves; its
``info.custom`` is a :class:`CustomResource`, through which the request pipeline prunes, defaults
and validates the kind's objects by the storage version's ``openAPIV3Schema``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from kconsole.api.crd import printers, schema
from kconsole.api.registry import META_FIELDS, STANDARD_VERBS, ResourceSpec, ScaleSpec
from kconsole.api.types import ResourceInfo, StatusError
from kconsole.api.versions import Alternate
from kconsole.api.validators.field import Cause
from kconsole.objects.printers import Printer

Obj = dict[str, Any]

GROUP = "apiextensions.k8s.io"


def storage_version(crd: Obj) -> Obj:
    """The version marked ``storage: true`` (validation guarantees exactly one)."""
    versions = (crd.get("spec") or {}).get("versions") or []
    for version in versions:
        if version.get("storage"):
            return version
    return versions[0]


@dataclass(slots=True)
class CustomResource:
    """A custom kind's schema, columns and state, hung on its ResourceInfo as ``custom``."""

    crd_name: str
    kind: str
    version: str
    openapi: Obj
    columns: tuple[Obj, ...]
    #: The CRD is being deleted: its objects may no longer be created (upstream's 405).
    terminating: bool = False
    printer: Printer = field(init=False)

    def __post_init__(self) -> None:
        self.printer = printers.printer(self.columns)

    #: Strategic merge patch has no meaning for a custom kind (upstream answers 415).
    strategic_merge = False

    def decode(self, obj: Obj, directive: str, patched: bool = False, before: Obj | None = None) -> list[str]:
        """Prune what the schema does not declare, then default (in place); fieldValidation decides
        what the pruned fields mean: refused under Strict, warnings under Warn (or none given)."""
        if not isinstance(obj, dict):
            return []
        dropped = schema.prune(obj, self.openapi)
        if dropped and before is not None:
            had = set(schema.prune(_copy(before), self.openapi))
            dropped = [p for p in dropped if p not in had]
        schema.default(obj, self.openapi)
        if not dropped:
            return []
        if directive == "Strict":
            detail = "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in dropped)
            if not patched:
                detail = f'{self.kind} in version "{self.version}" cannot be handled as a {self.kind}: {detail}'
            raise StatusError.bad_request(detail)
        if directive == "Ignore":
            return []
        return [f'unknown field "{p}"' for p in dropped]

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        return schema.validate(obj, self.openapi, old)


def _copy(obj: Obj) -> Obj:
    import copy  # noqa: PLC0415 - only a patch of an object stored with unknown fields needs it

    return copy.deepcopy(obj)


def _scale(version: Obj) -> ScaleSpec | None:
    scale = (version.get("subresources") or {}).get("scale")
    if not isinstance(scale, dict):
        return None
    return ScaleSpec(spec_replicas_path=str(scale.get("specReplicasPath", ".spec.replicas")).lstrip("."),
                     status_replicas_path=str(scale.get("statusReplicasPath", ".status.replicas")).lstrip("."),
                     selector_path=str(scale.get("labelSelectorPath") or "").lstrip("."))


def _custom(crd: Obj, kind: str, version: Obj) -> CustomResource:
    return CustomResource(crd["metadata"]["name"], kind, version["name"],
                          ((version.get("schema") or {}).get("openAPIV3Schema") or {"type": "object"}),
                          tuple(version.get("additionalPrinterColumns") or ()),
                          terminating=bool(crd["metadata"].get("deletionTimestamp")))


def other_versions(crd: Obj, spec: ResourceSpec) -> list[Alternate]:
    """The CRD's served versions besides the storage one, converted as upstream's ``None`` strategy
    does: only apiVersion changes."""
    stored = spec.api_version
    out = []
    for version in (crd.get("spec") or {}).get("versions") or ():
        if version.get("storage") or not version.get("served"):
            continue
        served = f"{spec.group}/{version['name']}"
        info = replace(spec.info, version=version["name"], custom=_custom(crd, spec.kind, version))
        out.append(Alternate(spec, info, partial(_with_api_version, stored), partial(_with_api_version, served)))
    return out


def _with_api_version(api_version: str, obj: Obj) -> Obj:
    return {**obj, "apiVersion": api_version}


def resource_spec(crd: Obj) -> ResourceSpec:
    """The served resource of an accepted CRD (its storage version)."""
    spec = crd["spec"]
    names = (crd.get("status") or {}).get("acceptedNames") or spec["names"]
    if not names.get("plural"):
        names = spec["names"]
    group, plural, kind = spec["group"], names["plural"], names["kind"]
    version = storage_version(crd)
    subs = version.get("subresources") or {}
    has_status = isinstance(subs.get("status"), dict)
    scale = _scale(version)
    namespaced = spec.get("scope") == "Namespaced"
    custom = _custom(crd, kind, version)
    info = ResourceInfo(
        group=group, version=version["name"], resource=plural, kind=kind,
        singular=names.get("singular") or kind.lower(), namespaced=namespaced, verbs=STANDARD_VERBS,
        short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
        subresources=(("status",) if has_status else ()) + (("scale",) if scale is not None else ()),
        custom=custom,
    )
    return ResourceSpec(info=info, list_kind=names.get("listKind") or kind + "List", has_status=has_status,
                        scale=scale, field_selectors=META_FIELDS if namespaced else ("metadata.name",),
                        bump_generation=True, storage_prefix=f"/registry/{group}/{plural}/")
