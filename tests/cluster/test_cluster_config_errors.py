"""A malformed ``--config`` is one line on stderr that names the file, line and column."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from kconsole.cli import main


@pytest.mark.parametrize("text, where, problem", [
    ("nodes: 3\nspeed: [1\n", ":3:1:", "expected ',' or ']', but got '<stream end>'"),
    ("nodes: 3\n  speed: 2\n", ":2:8:", "mapping values are not allowed here"),
    ("nodes: 3\n\tspeed: 2\n", ":2:1:", "found character '\\t' that cannot start any token"),
])
def test_serve_names_where_a_config_file_is_not_yaml(tmp_path: Path, text: str, where: str, problem: str) -> None:
    config = tmp_path / "kconsole.yaml"
    config.write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["serve", str(tmp_path / "manifests"), "--config", str(config)])
    assert code == 2
    assert err.getvalue() == f"kconsole serve: config {config}{where} not valid YAML: {problem}\n"
    assert not (tmp_path / "manifests").exists()  # nothing written for a config that did not load
