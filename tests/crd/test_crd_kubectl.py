"""A user's first CRD with the real kubectl: apply the CRD, wait for Established, apply a Widget, then
get (printer columns, -o wide, short name, `get all`), explain, validation errors, patches, scale,
status conditions and deletion of the CRD with its objects."""

from __future__ import annotations

import json

import pytest

from crd_env import FIXTURES, Served

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


async def _established(served: Served) -> None:
    await served.kubectl("apply", "-f", str(FIXTURES / "crd.yaml"))
    await served.kubectl("wait", "--for", "condition=established", "crd/widgets.example.com", "--timeout=10s")


async def test_crd_is_established_and_its_kind_served(served: Served) -> None:
    await _established(served)
    _, out, _ = await served.kubectl("get", "crd", "widgets.example.com", "-o", "json")
    status = json.loads(out)["status"]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions["NamesAccepted"] == ("True", "NoConflicts")
    assert conditions["Established"] == ("True", "InitialNamesAccepted")
    assert status["acceptedNames"]["listKind"] == "WidgetList"
    assert status["storedVersions"] == ["v1"]
    _, out, _ = await served.kubectl("api-resources", "--api-group=example.com")
    assert out.splitlines()[1].split() == ["widgets", "wg", "example.com/v1", "true", "Widget"]

    await served.kubectl("apply", "-f", str(FIXTURES / "widget.yaml"))
    _, out, _ = await served.kubectl("get", "widgets")
    assert out.splitlines()[0].split() == ["NAME", "SIZE", "COLOR", "AGE"]
    assert out.splitlines()[1].split()[:3] == ["w1", "3", "blue"]  # color defaulted by the schema
    _, wide, _ = await served.kubectl("get", "wg", "-o", "wide")
    assert wide.splitlines()[0].split() == ["NAME", "SIZE", "COLOR", "READY", "AGE"]
    _, everything, _ = await served.kubectl("get", "all")
    assert "widget.example.com/w1" in everything
    _, out, _ = await served.kubectl("get", "widget", "w1", "-o", "json")
    obj = json.loads(out)
    assert obj["spec"]["extra"] == {"anything": [1, 2]}  # preserved unknown fields
    assert obj["spec"]["port"] == "http" and obj["metadata"]["generation"] == 1


async def test_explain_reads_the_crd_schema(served: Served) -> None:
    await _established(served)
    _, out, _ = await served.kubectl("explain", "widget.spec")
    assert "What the widget should be." in out
    assert "size\t<integer> -required-" in out
    _, out, _ = await served.kubectl("explain", "widget.spec.size")
    assert "How big the widget is." in out
    _, out, _ = await served.kubectl("explain", "crd.spec.versions")
    assert "additionalPrinterColumns\t<[]Object>" in out and "served\t<boolean>" in out
    assert "There must be exactly one version with storage=true." in out


async def test_openapi_v2_carries_the_crd_as_upstream_names_it(served: Served) -> None:
    """helm and kubectl's v2 explain read custom kinds from /openapi/v2 (definition named by the group
    reversed, as apiextensions-apiserver publishes it)."""
    await _established(served)
    _, out, _ = await served.kubectl("get", "--raw", "/openapi/v2")
    doc = json.loads(out)
    widget = doc["definitions"]["com.example.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert widget["properties"]["metadata"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    listed = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets"]["get"]
    assert listed["operationId"] == "listExampleComV1NamespacedWidget"
    assert listed["responses"]["200"]["schema"] == {"$ref": "#/definitions/com.example.v1.WidgetList"}
    _, out, _ = await served.kubectl("explain", "widget.spec", "--output=plaintext-openapiv2")
    assert "What the widget should be." in out


async def test_schema_errors_in_upstream_words(served: Served) -> None:
    await _established(served)
    bad = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: big\n"
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert code == 1
    assert ('The Widget "w2" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type '
            'integer: "string"') in err
    bad = ("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w3\nspec:\n  size: 30\n  color: pink\n"
           "  name: ABC\n")
    _, _, err = await served.kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert 'spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"' in err
    assert "spec.size: Invalid value: 30: spec.size in body should be less than or equal to 10" in err
    assert "spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'" in err
    typo = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w4\nspec:\n  size: 2\n  sise: 3\n"
    _, _, err = await served.kubectl("apply", "-f", "-", stdin=typo, check=False)
    assert ('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field '
            '"spec.sise"') in err
    code, _, err = await served.kubectl("apply", "--validate=warn", "-f", "-", stdin=typo, check=False)
    assert code == 0 and 'unknown field "spec.sise"' in err
    _, out, _ = await served.kubectl("get", "widget", "w4", "-o", "jsonpath={.spec}")
    assert "sise" not in out  # pruned


async def test_patches_scale_and_status(served: Served) -> None:
    await _established(served)
    await served.kubectl("apply", "-f", str(FIXTURES / "widget.yaml"))
    code, _, err = await served.kubectl("patch", "widget", "w1", "-p", '{"spec":{"size":4}}', check=False)
    assert code == 1 and "application/strategic-merge-patch+json is not supported" in err
    await served.kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"size":5}}')
    await served.kubectl("patch", "widget", "w1", "--type=json", "-p",
                         '[{"op":"replace","path":"/spec/color","value":"red"}]')
    await served.kubectl("scale", "widget", "w1", "--replicas=4")
    _, out, _ = await served.kubectl("get", "widget", "w1", "-o", "json")
    obj = json.loads(out)
    assert (obj["spec"]["size"], obj["spec"]["color"], obj["spec"]["replicas"]) == (5, "red", 4)
    assert obj["metadata"]["generation"] == 4
    # status is a subresource: a main-resource patch cannot set it, a status patch can.
    await served.kubectl("patch", "widget", "w1", "--type=merge", "-p", '{"status":{"replicas":9}}')
    await served.kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
                         '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}')
    _, out, _ = await served.kubectl("get", "widget", "w1", "-o", "json")
    status = json.loads(out).get("status")
    assert status == {"conditions": [{"type": "Ready", "status": "True"}]}
    _, wide, _ = await served.kubectl("get", "widget", "w1", "-o", "wide")
    assert wide.splitlines()[1].split()[:4] == ["w1", "5", "red", "True"]
    await served.kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
                         '{"status":{"replicas":4,"selector":"app=w1"}}')
    code, _, err = await served.kubectl("patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
                                        '{"status":{"replicas":"many"}}', check=False)
    assert code == 1 and 'status.replicas in body must be of type integer: "string"' in err
    _, out, _ = await served.kubectl("get", "--raw", "/apis/example.com/v1/namespaces/default/widgets/w1/scale")
    scale = json.loads(out)
    assert (scale["kind"], scale["spec"], scale["status"]) == ("Scale", {"replicas": 4},
                                                               {"replicas": 4, "selector": "app=w1"})
    await served.kubectl("apply", "--server-side", "-f", str(FIXTURES / "widget.yaml"), "--force-conflicts")


async def test_deleting_the_crd_deletes_its_objects_and_stops_serving(served: Served) -> None:
    await _established(served)
    await served.kubectl("apply", "-f", str(FIXTURES / "widget.yaml"))
    await served.kubectl("delete", "crd", "widgets.example.com", "--timeout=20s")
    code, _, _ = await served.kubectl("get", "crd", "widgets.example.com", check=False)
    assert code == 1
    code, _, err = await served.kubectl("get", "widgets.example.com", check=False)
    assert code == 1
    keys = await served.api.kv.range("/registry/example.com/", "/registry/example.com0")
    assert keys.kvs == []


async def test_every_served_version_is_served(served: Served) -> None:
    await served.kubectl("apply", "-f", str(FIXTURES / "gadgets.yaml"))
    await served.kubectl("wait", "--for", "condition=established", "crd/gadgets.example.com", "--timeout=10s")
    old = "apiVersion: example.com/v1beta1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  level: 2\n"
    await served.kubectl("apply", "-f", "-", stdin=old)
    _, out, _ = await served.kubectl("get", "gadgets.v1beta1.example.com", "g1", "-o", "json")
    assert json.loads(out)["apiVersion"] == "example.com/v1beta1"
    _, out, _ = await served.kubectl("get", "gadget", "g1", "-o", "json")  # the preferred version: v1
    assert json.loads(out)["apiVersion"] == "example.com/v1" and json.loads(out)["spec"] == {"level": 2}
    keys = await served.api.kv.range("/registry/example.com/gadgets/g1")
    assert json.loads(keys.kvs[0].value)["apiVersion"] == "example.com/v1"  # stored in the storage version
    _, out, _ = await served.kubectl("api-versions")
    assert "example.com/v1" in out.split() and "example.com/v1beta1" in out.split()


async def test_a_typo_in_a_crd_is_refused(served: Served) -> None:
    text = (FIXTURES / "gadgets.yaml").read_text().replace("name: gadgets.example.com", "name: things.example.com") \
        .replace("plural: gadgets", "plural: things").replace("kind: Gadget", "kind: Thing") \
        .replace("                level:\n                  type: integer",
                 "                level:\n                  type: integer\n                  minimun: 1")
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=text, check=False)
    assert code == 1
    assert ('CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: strict '
            'decoding error: unknown field "spec.versions[1].schema.openAPIV3Schema.properties[spec].'
            'properties[level].minimun"') in err
    code, _, err = await served.kubectl("apply", "--validate=warn", "-f", "-", stdin=text, check=False)
    assert code == 0 and "minimun" in err
    _, out, _ = await served.kubectl("get", "crd", "things.example.com", "-o", "jsonpath={.spec}")
    assert "minimun" not in out and '"level":{"type":"integer"}' in out  # dropped
