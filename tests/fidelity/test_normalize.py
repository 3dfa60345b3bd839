"""The normaliser: run-specific parts become placeholders, everything else is kept byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from kconsole.fidelity.normalize import normalize
from kconsole.fidelity.runner import compare, dump, load


@pytest.mark.parametrize("raw,want", [
    ("pod/web-7d4b9c5f8d-x2k4p created", "pod/web-<hash>-<id> created"),
    ("replicaset.apps/web-7d4b9c5f8d", "replicaset.apps/web-<hash>"),
    ("uid: 3f2a9c1e-8b7d-4e6f-a1b2-c3d4e5f60718", "uid: <uid>"),
    ('"resourceVersion": "12345",', '"resourceVersion": <rv>,'),
    ("  resourceVersion: \"887\"", "  resourceVersion: <rv>"),
    ("creationTimestamp: \"2024-05-01T10:20:30Z\"", "creationTimestamp: \"<time>\""),
    ("lastTransitionTime: 2024-05-01T10:20:30.123456+02:00", "lastTransitionTime: <time>"),
    ("web   ClusterIP   10.96.12.7   <none>   80/TCP   5s", "web   ClusterIP   <ip>   <none>   80/TCP   <age>"),
    ("web   0/0   0   0   2m3s", "web   0/0   0   0   <age>"),
    ("c   0   3d5h", "c   0   <age>"),
])
def test_run_specific_parts_become_placeholders(raw: str, want: str) -> None:
    assert normalize(raw) == want


@pytest.mark.parametrize("text", [
    "deployment.apps/web created",
    "configmap/c patched (no change)",
    'The Ingress "web" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
    "error: failed to create cronjob: end of range (61) above maximum (59): 61",
    "nginx:1.27 80/TCP 8080 443",
    "web-frontend",
])
def test_everything_else_is_kept(text: str) -> None:
    assert normalize(text) == text


def test_table_padding_and_trailing_blanks_do_not_matter() -> None:
    wide = "NAME                     READY   AGE   \nweb-7d4b9c5f8d-x2k4p     1/1     10s\n"
    narrow = "NAME   READY   AGE\nweb-<hash>-<id>   1/1   <age>\n"
    assert normalize(wide) == narrow


def test_the_namespace_becomes_a_placeholder_only_as_a_whole_word() -> None:
    ns = "fidelity-x-1a2b3c"
    assert normalize(f'No resources found in {ns} namespace.', ns) == "No resources found in <ns> namespace."
    assert normalize(f"{ns}x", ns) == f"{ns}x"


def test_compare_checks_only_the_keys_a_step_gives() -> None:
    actual = {"stdout": "a\n", "stderr": "warn\n", "exit": 0}
    assert compare({"run": "x", "stdout": "a\n"}, actual) == ""
    diff = compare({"run": "x", "stdout": "b\n", "exit": 1}, actual)
    assert "--- expected stdout" in diff and "-b" in diff and "+a" in diff
    assert "-1" in diff and "+0" in diff


def test_a_dumped_scenario_loads_back_unchanged(tmp_path: Path) -> None:
    data = {"about": "x", "steps": [{"run": "get cm", "stdin": "a: 1\nb: 2\n", "stdout": "NAME   DATA\n",
                                     "stderr": "", "exit": 0}]}
    path = tmp_path / "s.yaml"
    path.write_text(dump(data))
    assert load(path) == data
    assert "stdin: |\n" in path.read_text()


def test_a_scenario_without_steps_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("steps: [{stdin: x}]\n")
    with pytest.raises(ValueError, match="bad.yaml: step 1 needs run"):
        load(path)


def test_a_missing_final_newline_is_marked() -> None:
    diff = compare({"run": "x", "stdout": "a"}, {"stdout": "a\n", "stderr": "", "exit": 0})
    assert diff == "--- expected stdout\n+++ actual stdout\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"


def test_go_cmp_no_break_spaces_read_as_plain_ones() -> None:
    """go-cmp picks plain or no-break spaces per process; both normalise to what kconsole prints."""
    assert normalize("-\u00a0\tRestartPolicy:\u00a0\"Always\",\n") == '- \tRestartPolicy: "Always",\n'
