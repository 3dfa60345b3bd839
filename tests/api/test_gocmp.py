"""go-cmp's report as kube-apiserver prints it with a refused update, against upstream's own output."""

from __future__ import annotations

from kconsole.api.validators import gocmp


def test_claim_spec_diff_is_upstreams() -> None:
    """As a 1.32 API server refused an update that cleared a bound claim's volumeName and class."""
    old = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "30Gi"}},
           "volumeName": "pvc-1ca14d89-cd6b-45c2-a0f9-f23d8aadab87", "storageClassName": "gp2",
           "volumeMode": "Filesystem"}
    new = {**old, "volumeName": "", "storageClassName": None}
    assert gocmp.diff("PersistentVolumeClaimSpec", old, new) == (
        "  core.PersistentVolumeClaimSpec{\n"
        '  \tAccessModes:      {"ReadWriteOnce"},\n'
        "  \tSelector:         nil,\n"
        '  \tResources:        {Requests: {s"storage": {i: {...}, s: "30Gi", Format: "BinarySI"}}},\n'
        '- \tVolumeName:       "pvc-1ca14d89-cd6b-45c2-a0f9-f23d8aadab87",\n'
        '+ \tVolumeName:       "",\n'
        '- \tStorageClassName: &"gp2",\n'
        "+ \tStorageClassName: nil,\n"
        '  \tVolumeMode:       &"Filesystem",\n'
        "  \tDataSource:       nil,\n"
        "  \t... // 2 identical fields\n"
        "  }\n")
    assert gocmp.diff("PersistentVolumeClaimSpec", old, dict(old)) == ""


def test_a_changed_quantity_prints_its_struct_on_its_own_lines() -> None:
    """A removed or inserted value longer than 80 columns is laid out over several lines."""
    spec = {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "100m"}}}]}
    new = {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "200m"}}}]}
    text = gocmp.diff("PodSpec", gocmp.internal_pod_spec(spec), gocmp.internal_pod_spec(new))
    assert ("- \t\t\t\tLimits: core.ResourceList{\n"
            '- \t\t\t\t\ts"cpu": {i: resource.int64Amount{value: 100, scale: -3}, s: "100m", Format: "DecimalSI"},\n'
            "- \t\t\t\t},\n") in text
    assert '+ \t\t\t\t\ts"cpu": {i: resource.int64Amount{value: 200, scale: -3}, s: "200m", Format: "DecimalSI"},\n' \
        in text


def test_quantities_keep_their_string_only_when_canonical() -> None:
    """ParseQuantity caches the text of a canonical quantity (``s``), not of others."""
    assert gocmp._quantity_struct("512Mi") == ({"value": 536870912, "scale": 0}, "", "BinarySI")
    assert gocmp._quantity_struct("500Mi") == ({"value": 524288000, "scale": 0}, "500Mi", "BinarySI")
    assert gocmp._quantity_struct("1000m") == ({"value": 1000, "scale": -3}, "", "DecimalSI")
    assert gocmp._quantity_struct("2") == ({"value": 2, "scale": 0}, "2", "DecimalSI")


def test_host_namespaces_move_into_the_security_context() -> None:
    spec = gocmp.internal_pod_spec({"hostNetwork": True, "serviceAccount": "x", "securityContext": {"runAsUser": 1}})
    assert spec == {"securityContext": {"runAsUser": 1, "hostNetwork": True}}


def test_embedded_structs_and_int_or_strings_print_as_go_structs() -> None:
    """A probe's handler is the embedded ProbeHandler; an IntOrString port is a struct with Type/IntVal/StrVal."""
    probe = {"httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10}
    old = {"containers": [{"name": "c", "livenessProbe": probe}]}
    new = {"containers": [{"name": "c", "livenessProbe": {**probe, "periodSeconds": 5}}]}
    text = gocmp.diff("PodSpec", gocmp.internal_pod_spec(old), gocmp.internal_pod_spec(new))
    assert ("  \t\t\tLivenessProbe: &core.Probe{\n"
            '  \t\t\t\tProbeHandler:                  {HTTPGet: &{Path: "/", Port: {IntVal: 8080}, Scheme: "HTTP"}},\n'
            "  \t\t\t\tInitialDelaySeconds:           0,\n") in text
    assert "- \t\t\t\tPeriodSeconds:                 10,\n+ \t\t\t\tPeriodSeconds:                 5,\n" in text


def test_a_removed_volume_is_printed_as_upstream_printed_it() -> None:
    """As a 1.32-era API server refused an update dropping a pod's kube-api-access volume."""
    kept = [{"name": n, "emptyDir": {}} for n in "abc"] + [
        {"name": "config", "configMap": {"name": "opensearch-cluster-config", "defaultMode": 420}},
        {"name": "data", "emptyDir": {}}]
    token = {"name": "kube-api-access-xtlsn", "projected": {
        "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}], "defaultMode": 420}}
    text = gocmp.diff("PodSpec", gocmp.internal_pod_spec({"volumes": kept + [token]}),
                      gocmp.internal_pod_spec({"volumes": kept}))
    assert text.startswith(
        "  core.PodSpec{\n"
        "  \tVolumes: []core.Volume{\n"
        "  \t\t... // 3 identical elements\n"
        '  \t\t{Name: "config", VolumeSource: {ConfigMap: &{LocalObjectReference: {Name: "opensearch-cluster-config"}, '
        "DefaultMode: &420}}},\n"
        '  \t\t{Name: "data", VolumeSource: {EmptyDir: &{}}},\n'
        "- \t\t{\n"
        '- \t\t\tName: "kube-api-access-xtlsn",\n'
        "- \t\t\tVolumeSource: core.VolumeSource{\n"
        "- \t\t\t\tProjected: &core.ProjectedVolumeSource{Sources: []core.VolumeProjection{...}, DefaultMode: &420},\n"
        "- \t\t\t},\n"
        "- \t\t},\n"
        "  \t},\n")


def test_equal_context_is_cut_as_upstream_cut_it() -> None:
    """Four items, four non-zero fields per struct, then ``...``, as in an upstream refusal."""
    volumes = [
        {"name": "aws-iam-token", "projected": {"sources": [{"serviceAccountToken": {
            "audience": "sts.amazonaws.com", "expirationSeconds": 86400, "path": "token"}}], "defaultMode": 420}},
        {"name": "istio-envoy", "emptyDir": {"medium": "Memory"}}, {"name": "istio-data", "emptyDir": {}},
        {"name": "istio-podinfo", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}},
            {"path": "annotations", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations"}}],
            "defaultMode": 420}},
        {"name": "istio-token", "emptyDir": {}}]
    init = [{"name": "istio-validation", "image": "docker.io/istio/proxyv2:1.13.4",
             "args": ["istio-iptables", "-p", "15001", "-z", "15006"]}]
    old = {"volumes": volumes, "initContainers": init, "containers": [{"name": "a"}]}
    text = gocmp.diff("PodSpec", gocmp.internal_pod_spec(old),
                      gocmp.internal_pod_spec({**old, "containers": [{"name": "b"}]}))
    assert text.startswith(
        "  core.PodSpec{\n"
        '  \tVolumes:        {{Name: "aws-iam-token", VolumeSource: {Projected: &{Sources: {{ServiceAccountToken: '
        '&{Audience: "sts.amazonaws.com", ExpirationSeconds: 86400, Path: "token"}}}, DefaultMode: &420}}}, '
        '{Name: "istio-envoy", VolumeSource: {EmptyDir: &{Medium: "Memory"}}}, {Name: "istio-data", VolumeSource: '
        '{EmptyDir: &{}}}, {Name: "istio-podinfo", VolumeSource: {DownwardAPI: &{Items: {{Path: "labels", FieldRef: '
        '&{APIVersion: "v1", FieldPath: "metadata.labels"}}, {Path: "annotations", FieldRef: &{APIVersion: "v1", '
        'FieldPath: "metadata.annotations"}}}, DefaultMode: &420}}}, ...},\n'
        '  \tInitContainers: {{Name: "istio-validation", Image: "docker.io/istio/proxyv2:1.13.4", Args: '
        '{"istio-iptables", "-p", "15001", "-z", ...}}},\n')


def test_an_item_added_in_front_is_one_insertion() -> None:
    """Strategic merge patch puts new list items first; go-cmp aligns the equal ones after it."""
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    old = {"containers": [{"name": "c", "env": env}]}
    new = {"containers": [{"name": "c", "env": [{"name": "NEW", "value": "x"}, *env]}]}
    assert ("  \t\t\tEnv: []core.EnvVar{\n"
            '+ \t\t\t\t{Name: "NEW", Value: "x"},\n'
            '  \t\t\t\t{Name: "A", Value: "1"},\n'
            '  \t\t\t\t{Name: "B", Value: "2"},\n'
            "  \t\t\t},\n") in gocmp.diff("PodSpec", old, new)


def test_long_strings_are_diffed_in_chunks() -> None:
    """go-cmp's FormatDiffSlice: one-line strings of 64 bytes or more print as strings.Join of chunks."""
    before = "while true; do echo hello from the pod; sleep 10; done # a comment"
    after = before.replace("the pod", "kconsole")
    old = {"containers": [{"name": "c", "args": ["-c", before]}]}
    new = {"containers": [{"name": "c", "args": ["-c", after]}]}
    assert ("  \t\t\tArgs: []string{\n"
            '  \t\t\t\t"-c",\n'
            "  \t\t\t\tstrings.Join({\n"
            '  \t\t\t\t\t"while true; do echo hello from ",\n'
            '- \t\t\t\t\t"the pod",\n'
            '+ \t\t\t\t\t"kconsole",\n'
            '  \t\t\t\t\t"; sleep 10; done # a comment",\n'
            '  \t\t\t\t}, ""),\n'
            "  \t\t\t},\n") in gocmp.diff("PodSpec", old, new)
    short = gocmp.diff("PodSpec", {"hostname": "a" * 63}, {"hostname": "b" * 63})
    assert '- \tHostname:          "' + "a" * 63 + '",\n' in short


def test_texts_of_several_lines_are_diffed_line_by_line() -> None:
    """go-cmp's triple-quoted form, as its own documentation shows it."""
    script = "set -e\necho one\necho two\necho three\necho four\necho five\necho six\necho seven\n"
    old = {"containers": [{"name": "c", "args": ["-c", script]}]}
    new = {"containers": [{"name": "c", "args": ["-c", script.replace("echo four", "echo FOUR")]}]}
    assert ('  \t\t\t\t"-c",\n'
            "  \t\t\t\t(\n"
            '  \t\t\t\t\t"""\n'
            "  \t\t\t\t\t... // 2 identical lines\n"
            "  \t\t\t\t\techo two\n"
            "  \t\t\t\t\techo three\n"
            "- \t\t\t\t\techo four\n"
            "+ \t\t\t\t\techo FOUR\n"
            "  \t\t\t\t\techo five\n"
            "  \t\t\t\t\techo six\n"
            "  \t\t\t\t\t... // 2 identical lines\n"
            '  \t\t\t\t\t"""\n'
            "  \t\t\t\t),\n") in gocmp.diff("PodSpec", old, new)
