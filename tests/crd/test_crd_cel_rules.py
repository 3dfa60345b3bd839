"""CRD ``x-kubernetes-validations``: CEL rules on ``self`` and transition rules on ``oldSelf``, with
upstream's messages, through the real kubectl; a rule that does not compile refuses the CRD."""

from __future__ import annotations

import pytest

from crd_env import Served

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: scalers.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: scalers, singular: scaler, kind: Scaler}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.minReplicas <= self.maxReplicas"
              message: minReplicas must not exceed maxReplicas
            - rule: "self.maxReplicas >= oldSelf.maxReplicas"
              messageExpression: "'maxReplicas may not shrink below ' + string(oldSelf.maxReplicas)"
              reason: FieldValueForbidden
            properties:
              minReplicas: {type: integer}
              maxReplicas: {type: integer}
              mode:
                type: string
                x-kubernetes-validations:
                - rule: "self in ['fast', 'slow']"
"""

SCALER = ("apiVersion: example.com/v1\nkind: Scaler\nmetadata: {name: s1}\n"
          "spec: {minReplicas: %d, maxReplicas: %d, mode: %s}\n")


async def test_cel_rules_and_transition_rules(served: Served) -> None:
    await served.kubectl("apply", "-f", "-", stdin=CRD)
    await served.kubectl("wait", "--for", "condition=established", "crd/scalers.example.com", "--timeout=10s")
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=SCALER % (5, 3, "fast"), check=False)
    assert code == 1
    assert ('The Scaler "s1" is invalid: spec: Invalid value: "object": minReplicas must not exceed maxReplicas'
            in err)
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=SCALER % (1, 3, "medium"), check=False)
    assert """spec.mode: Invalid value: "string": failed rule: self in ['fast', 'slow']""" in err
    await served.kubectl("apply", "-f", "-", stdin=SCALER % (1, 5, "fast"))
    await served.kubectl("apply", "-f", "-", stdin=SCALER % (1, 6, "slow"))  # growing is fine
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=SCALER % (1, 4, "slow"), check=False)
    assert code == 1 and "spec: Forbidden: maxReplicas may not shrink below 6" in err


async def test_a_rule_that_does_not_compile_refuses_the_crd(served: Served) -> None:
    broken = CRD.replace("scalers.example.com", "brokens.example.com").replace("plural: scalers", "plural: brokens") \
        .replace("singular: scaler", "singular: broken").replace("kind: Scaler", "kind: Broken") \
        .replace("self.minReplicas <= self.maxReplicas", "self.minReplicas <=")
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=broken, check=False)
    assert code == 1
    assert ("x-kubernetes-validations[0].rule: Invalid value: \"self.minReplicas <=\": compilation failed" in err)


LISTS = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: lists.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: lists, singular: list, kind: List}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.names.all(a, self.names.exists_one(b, a == b))"
              message: names must be unique
            properties:
              names:
                type: array
                %s
                items: {type: string, %s}
"""


async def test_a_rule_estimated_past_the_cost_limit_refuses_the_crd(served: Served) -> None:
    """upstream's static estimate: an unbounded list walked inside itself cannot run within the
    limit; bounding the list and its strings makes the same rule acceptable, and it runs."""
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=LISTS % ("", ""), check=False)
    assert code == 1
    assert ('spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: '
            'estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding '
            'maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)') in err
    assert ("spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total "
            "for entire OpenAPIv3 schema exceeds budget by factor of more than 100x") in err
    await served.kubectl("apply", "-f", "-", stdin=LISTS % ("maxItems: 50", "maxLength: 63"))
    await served.kubectl("wait", "--for", "condition=established", "crd/lists.example.com", "--timeout=10s")
    manifest = "apiVersion: example.com/v1\nkind: List\nmetadata: {name: l1}\nspec: {names: [%s]}\n"
    await served.kubectl("apply", "-f", "-", stdin=manifest % "a, b")
    code, _, err = await served.kubectl("apply", "-f", "-", stdin=manifest % "a, a", check=False)
    assert code == 1 and 'spec: Invalid value: "object": names must be unique' in err
