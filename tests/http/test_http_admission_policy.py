"""ValidatingAdmissionPolicy with CEL: allow, deny, warn and audit tables, matchConditions, params,
and upstream's messages through the real kubectl."""

from __future__ import annotations

import pytest
import pytest_asyncio

from http_env import Cluster

from kconsole.api.types import UserInfo

pytestmark = pytest.mark.asyncio(loop_scope="module")

POLICY = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"
  validations:
  - expression: object.spec.replicas <= 5
  - expression: object.metadata.name.startsWith('app-')
    messageExpression: "'name ' + object.metadata.name + ' must start with app-'"
    reason: Forbidden
  auditAnnotations:
  - key: replicas
    valueExpression: "string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-binding}
spec:
  policyName: max-replicas
  validationActions: [%s]
  matchResources:
    namespaceSelector:
      matchLabels: {policy: "on"}
"""


async def _wait_cached(cluster: Cluster, resource: str, name: str) -> None:
    for _ in range(200):
        if cluster.api.get_object(resource, None, name) is not None:
            return
        await cluster.clock.advance(0.05)
    raise AssertionError(f"{resource} {name} never reached the cache")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guarded(cluster: Cluster) -> Cluster:
    await cluster.kubectl("create", "namespace", "guarded")
    await cluster.kubectl("label", "namespace", "guarded", "policy=on")
    await cluster.kubectl("create", "namespace", "free")
    return cluster


@pytest.mark.parametrize(("name", "replicas", "labels", "refused"), [
    ("app-small", 3, "", ""),
    ("app-big", 7, "", "failed expression: object.spec.replicas <= 5"),
    ("web", 2, "", "name web must start with app-"),
    ("app-exempt", 9, 'exempt: "yes"', ""),
])
async def test_deny_table(guarded: Cluster, name: str, replicas: int, labels: str, refused: str) -> None:
    cluster = guarded
    await cluster.kubectl("apply", "-f", "-", stdin=POLICY % "Deny")
    await _wait_cached(cluster, "validatingadmissionpolicybindings.admissionregistration.k8s.io",
                       "max-replicas-binding")
    manifest = (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: guarded\n"
                f"  labels: {{{labels}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: x}}}}\n"
                f"  template:\n    metadata: {{labels: {{app: x}}}}\n    spec:\n      containers: [{{name: c, "
                f"image: nginx}}]\n")
    result = await cluster.kubectl("create", "-f", "-", stdin=manifest, check=False)
    if not refused:
        assert result.code == 0, result.err
        return
    assert result.code == 1
    verb = "invalid" if "replicas" in refused else "forbidden"
    if verb == "invalid":
        assert (f'The deployments "{name}" is invalid: : ValidatingAdmissionPolicy \'max-replicas\' with binding '
                f"'max-replicas-binding' denied request: {refused}") in result.err
    else:
        assert (f'deployments.apps "{name}" is forbidden: ValidatingAdmissionPolicy \'max-replicas\' with binding '
                f"'max-replicas-binding' denied request: {refused}") in result.err
    free = manifest.replace("namespace: guarded", "namespace: free")
    assert (await cluster.kubectl("create", "-f", "-", stdin=free, check=False)).code == 0


async def test_warn_and_audit_actions_admit_with_a_warning(guarded: Cluster) -> None:
    cluster = guarded
    await cluster.kubectl("apply", "-f", "-", stdin=POLICY % "Warn, Audit")
    await cluster.clock.advance(0.5)
    manifest = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-warned, namespace: guarded}\n"
                "spec:\n  replicas: 8\n  selector: {matchLabels: {app: x}}\n  template:\n"
                "    metadata: {labels: {app: x}}\n    spec:\n      containers: [{name: c, image: nginx}]\n")
    result = await cluster.kubectl("create", "-f", "-", stdin=manifest)
    assert ("Warning: Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding "
            "'max-replicas-binding': failed expression: object.spec.replicas <= 5") in result.err
    record = [r for r in cluster.api.audit.recent(50) if r.name == "app-warned" and r.verb == "create"][-1]
    assert "admitted by policy max-replicas (binding max-replicas-binding)" in record.message
    assert "max-replicas/replicas=8" in record.message
    assert "validation.policy.admission.k8s.io/validation_failure" in record.message


PARAM_POLICY = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: cm-limit}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets]}
  validations:
  - expression: "size(object.data) <= int(params.data.max)"
    message: too many keys
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: cm-limit-binding}
spec:
  policyName: cm-limit
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: %s}
  matchResources:
    namespaceSelector: {matchLabels: {policy: "on"}}
"""


async def test_params_and_parameter_not_found(guarded: Cluster) -> None:
    cluster = guarded
    await cluster.kubectl("apply", "-f", "-", stdin=PARAM_POLICY % "Deny")
    await cluster.clock.advance(0.5)
    missing = await cluster.kubectl("create", "secret", "generic", "s0", "-n", "guarded", "--from-literal=a=1",
                                    check=False)
    assert ("denied request: failed to configure binding: no params found for policy binding with `Deny` "
            "parameterNotFoundAction") in missing.err
    await cluster.kubectl("create", "configmap", "limits", "--from-literal=max=1")
    await cluster.clock.advance(0.5)
    await cluster.kubectl("create", "secret", "generic", "s1", "-n", "guarded", "--from-literal=a=1")
    refused = await cluster.kubectl("create", "secret", "generic", "s2", "-n", "guarded", "--from-literal=a=1",
                                    "--from-literal=b=2", check=False)
    assert "denied request: too many keys" in refused.err
    await cluster.kubectl("apply", "-f", "-", stdin=PARAM_POLICY % "Allow")


PROTECT = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: protect}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [configmaps]}
  validations:
  - expression: "!has(oldObject.metadata.labels) || oldObject.metadata.labels['protected'] != 'true'"
    message: this ConfigMap is protected
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: protect}
spec:
  policyName: protect
  validationActions: [Deny]
"""


async def test_a_policy_on_delete_sees_the_old_object(guarded: Cluster) -> None:
    cluster = guarded
    await cluster.kubectl("apply", "-f", "-", stdin=PROTECT)
    await cluster.kubectl("create", "configmap", "keep", "-n", "free")
    await cluster.kubectl("label", "configmap", "keep", "-n", "free", "protected=true")
    await cluster.kubectl("create", "configmap", "drop", "-n", "free")
    await cluster.clock.advance(0.5)
    refused = await cluster.kubectl("delete", "configmap", "keep", "-n", "free", check=False)
    assert ('configmaps "keep" is forbidden: ValidatingAdmissionPolicy \'protect\' with binding \'protect\' '
            'denied request: this ConfigMap is protected') in refused.err
    await cluster.kubectl("delete", "configmap", "drop", "-n", "free")
    await cluster.kubectl("delete", "validatingadmissionpolicybinding", "protect")


async def test_kubectl_lists_policies_and_bindings(guarded: Cluster) -> None:
    policies = (await guarded.kubectl("get", "validatingadmissionpolicies")).out.splitlines()
    assert policies[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    rows = {line.split()[0]: line.split() for line in policies[1:]}
    assert rows["max-replicas"][1:3] == ["2", "<unset>"] and rows["cm-limit"][1:3] == ["1", "v1/ConfigMap"]
    bindings = (await guarded.kubectl("get", "validatingadmissionpolicybindings")).out.splitlines()
    assert bindings[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    rows = {line.split()[0]: line.split() for line in bindings[1:]}
    assert rows["cm-limit-binding"][1:3] == ["cm-limit", "default/limits"]


async def test_a_policy_whose_expression_does_not_compile_is_refused(guarded: Cluster) -> None:
    bad = POLICY.split("---")[0].replace("object.spec.replicas <= 5", "object.spec.replicas <=").replace(
        "max-replicas", "broken")
    result = await guarded.kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert result.code == 1
    assert 'spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed' in result.err
    unknown = POLICY.split("---")[0].replace("object.spec.replicas <= 5", "object.spec.replicas.atMost(5)").replace(
        "max-replicas", "unknown")
    result = await guarded.kubectl("apply", "-f", "-", stdin=unknown, check=False)
    assert ('spec.validations[0].expression: Invalid value: "object.spec.replicas.atMost(5)": compilation failed: '
            "ERROR: <input>:1:28: undeclared reference to 'atMost' (in container '')") in result.err


LIBRARIES = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: libraries}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  variables:
  - name: size
    expression: "has(object.data.size) ? quantity(object.data.size) : quantity('0')"
  - name: broken
    expression: "object.data.missing"
  validations:
  - expression: "variables.size.isLessThan(quantity('1Gi'))"
    messageExpression: "'size ' + string(variables.size.asInteger()) + ' is not below 1Gi'"
  - expression: "!has(object.data.useBroken) || variables.broken == 'x'"
  - expression: "!has(object.data.owner) || authorizer.group('apps').resource('deployments')
      .namespace(object.metadata.namespace).name(object.data.owner).check('update').allowed()"
    messageExpression: "'you may not update deployment ' + object.data.owner"
  - expression: "!has(object.data.endpoint) || cidr('10.0.0.0/8').containsIP(url(object.data.endpoint).getHostname())"
    message: endpoint must be inside 10.0.0.0/8
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: libraries}
spec:
  policyName: libraries
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {libraries: "on"}
"""


async def test_quantity_authorizer_url_and_cidr_libraries(guarded: Cluster) -> None:
    """Kubernetes' CEL libraries in a policy: quantities compare by amount, the authorizer answers
    with the cluster's RBAC for the requesting user, url() and cidr() parse."""
    cluster = guarded
    await cluster.kubectl("create", "namespace", "libs")
    await cluster.kubectl("label", "namespace", "libs", "libraries=on")
    await cluster.kubectl("create", "role", "cm-writer", "-n", "libs", "--verb=create,get", "--resource=configmaps")
    await cluster.kubectl("create", "rolebinding", "jane", "-n", "libs", "--role=cm-writer", "--user=jane")
    await cluster.kubectl("apply", "-f", "-", stdin=LIBRARIES)
    await _wait_cached(cluster, "validatingadmissionpolicybindings.admissionregistration.k8s.io", "libraries")
    await cluster.kubectl("create", "configmap", "small", "-n", "libs", "--from-literal=size=1023Mi")
    big = await cluster.kubectl("create", "configmap", "big", "-n", "libs", "--from-literal=size=1.5Gi", check=False)
    assert ("ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: size 1610612736 is "
            "not below 1Gi") in big.err
    broken = await cluster.kubectl("create", "configmap", "broken", "-n", "libs", "--from-literal=useBroken=1",
                                   check=False)
    assert ("denied request: expression '!has(object.data.useBroken) || variables.broken == 'x'' resulted in "
            "error: composited variable \"broken\" fails to evaluate: no such key: missing") in broken.err

    jane = cluster.kubeconfig_for(UserInfo("jane", ("system:authenticated",)))
    refused = await cluster.kubectl("create", "configmap", "by-jane", "-n", "libs", "--from-literal=owner=web",
                                    kubeconfig=jane, check=False)
    assert "denied request: you may not update deployment web" in refused.err
    await cluster.kubectl("create", "role", "deploy-updater", "-n", "libs", "--verb=update",
                          "--resource=deployments.apps", "--resource-name=web")
    await cluster.kubectl("create", "rolebinding", "jane-deploys", "-n", "libs", "--role=deploy-updater",
                          "--user=jane")
    await cluster.clock.advance(0.5)
    await cluster.kubectl("create", "configmap", "by-jane", "-n", "libs", "--from-literal=owner=web", kubeconfig=jane)
    other = await cluster.kubectl("create", "configmap", "by-jane-2", "-n", "libs", "--from-literal=owner=api",
                                  kubeconfig=jane, check=False)
    assert "you may not update deployment api" in other.err

    await cluster.kubectl("create", "configmap", "inside", "-n", "libs",
                          "--from-literal=endpoint=https://10.1.2.3:8443/x")
    outside = await cluster.kubectl("create", "configmap", "outside", "-n", "libs",
                                    "--from-literal=endpoint=https://192.168.0.1/x", check=False)
    assert "denied request: endpoint must be inside 10.0.0.0/8" in outside.err
    await cluster.kubectl("delete", "validatingadmissionpolicybinding", "libraries")
