"""The schema builder: upstream's names and descriptions from the shipped data, 1.32's fields only,
and enum values in the v3 documents only (swagger 2.0 has none upstream)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kconsole.http import schemas


@pytest.fixture
def with_enum(monkeypatch: pytest.MonkeyPatch) -> None:
    data = copy.deepcopy(schemas.upstream())
    prop = data["definitions"]["io.k8s.api.core.v1.ServiceSpec"]["properties"]["type"]
    prop["enum"] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
    prop["v3description"] = prop["description"] + "\n\nPossible enum values:\n - `\"ClusterIP\"` ..."
    monkeypatch.setattr(schemas, "upstream", lambda: data)


def _service_spec(flavor: schemas.Flavor) -> dict[str, Any]:
    built: dict[str, Any] = {}
    schemas.kind_schema("", "Service", {"type": "object"}, built, flavor)
    return built["io.k8s.api.core.v1.ServiceSpec"]["properties"]["type"]


def test_enum_values_and_their_text_go_to_v3_only(with_enum: None) -> None:
    v3 = _service_spec(schemas.V3)
    assert v3["enum"] == ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
    assert "Possible enum values" in v3["description"]
    v2 = _service_spec(schemas.V2)
    assert "enum" not in v2 and "Possible enum values" not in v2["description"]


def test_types_are_named_described_and_limited_to_upstreams_fields() -> None:
    built: dict[str, Any] = {}
    pod = schemas.kind_schema("", "Pod", {"type": "object"}, built, schemas.V3)
    assert pod["description"].startswith("Pod is a collection of containers")
    assert pod["properties"]["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    container = built["io.k8s.api.core.v1.Container"]
    assert container["required"] == ["name"]
    assert "restartPolicyRules" not in container["properties"], "a field of a later release"
    assert built["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    assert all(not name.startswith("io.k8s.kconsole.") for name in built)
