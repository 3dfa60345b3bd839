"""The static cost estimate of CRD rules, against upstream's published boundaries: the rule
``self.all(x, x.contains('gpu'))`` on a list of strings is accepted up to the largest ``maxItems``
a real API server (apiextensions ValidateCustomResourceDefinition) accepts for each ``maxLength``,
and refused one item later; without bounds it is refused with upstream's three errors."""

from __future__ import annotations

import pytest

from kconsole.api.crd.schema import structural_causes

RULE = "self.all(x, x.contains('gpu'))"
ROOT = "spec.validation.openAPIV3Schema"
RULE_PATH = f"{ROOT}.properties[spec].properties[tags].x-kubernetes-validations[0].rule"


def _schema(tags: dict[str, object]) -> dict[str, object]:
    tags = {"type": "array", "x-kubernetes-validations": [{"rule": RULE}], **tags}
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"tags": tags}}}}


@pytest.mark.parametrize(("max_length", "max_items"), [(16, 909_090), (63, 333_333), (253, 94_339), (1024, 24_154)])
def test_the_largest_accepted_list_is_upstreams(max_length: int, max_items: int) -> None:
    items = {"type": "string", "maxLength": max_length}
    assert structural_causes(_schema({"maxItems": max_items, "items": items}), ROOT) == []
    refused = structural_causes(_schema({"maxItems": max_items + 1, "items": items}), ROOT)
    assert [c["field"] for c in refused] == [RULE_PATH]
    assert refused[0]["message"].startswith("Forbidden: estimated rule cost exceeds budget by factor of 1.0000")


def test_an_unbounded_list_gives_upstreams_three_errors() -> None:
    causes = structural_causes(_schema({"items": {"type": "string"}}), ROOT)
    assert [(c["field"], c["message"]) for c in causes] == [
        (RULE_PATH, "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the "
                    "rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are "
                    "declared)"),
        (RULE_PATH, "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 "
                    "schema"),
        (ROOT, "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds "
               "budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and "
               "maxLength where arrays, maps, and strings are declared)"),
    ]


def test_a_message_expression_has_its_own_estimate() -> None:
    schema = _schema({"items": {"type": "string"}})
    rules = schema["properties"]["spec"]["properties"]["tags"]["x-kubernetes-validations"]  # type: ignore[index]
    rules[0]["messageExpression"] = "self.map(x, self.filter(y, y.contains(x))).join(',')"
    causes = structural_causes(schema, ROOT)
    where = RULE_PATH.replace(".rule", ".messageExpression")
    assert (where, "Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x (try "
                   "simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
                   "strings are declared)") in [(c["field"], c["message"]) for c in causes]
