"""The manifest file view's source excerpt: the lines around an error with a caret under its column."""

from __future__ import annotations

from pathlib import Path

from kconsole.tui.screens.manifest import MAX_LINE, source_excerpt


def test_excerpt_points_at_the_column_and_windows_a_minified_line(tmp_path: Path) -> None:
    small = tmp_path / "a.yaml"
    small.write_text("a: 1\nbb: 22\nc: 3\nd: 4\n")
    assert [t.plain for t in source_excerpt(small, 2, 4)] == [
        "  1 │ a: 1", "  2 │ bb: 22", "    │    ^", "  3 │ c: 3", "  4 │ d: 4"]
    # A one-line JSON file of 40,000 characters: a window around the column, the caret still under it.
    line = '{"items": [' + '"x",' * 10_000 + " oops]}"
    big = tmp_path / "b.json"
    big.write_text(line + "\n")
    column = line.index("oops") + 1
    shown, caret = [t.plain for t in source_excerpt(big, 1, column)]
    assert len(shown) < MAX_LINE + 20 and shown.startswith("  1 │ …")
    assert shown[caret.index("^")] == "o" and shown[caret.index("^"):].startswith("oops")
    assert source_excerpt(big, 5, 1) == []  # a line past the end: nothing to show
