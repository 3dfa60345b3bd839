"""``kconsole replay FILE`` as a film: the console's panels follow the recording, keys move it."""

from __future__ import annotations

from pathlib import Path

from kconsole.trace.fileformat import read_trace
from kconsole.trace.film import Film
from kconsole.trace.filmapp import FilmApp

from trace_samples import sample, written


async def test_keys_move_the_film_and_the_panels_follow(tmp_path: Path) -> None:
    film = Film(read_trace(written(sample(), tmp_path)))
    app = FilmApp(film, name="t.jsonl", frame=3600)  # frames only when a key asks
    async with app.run_test(size=(160, 48)) as pilot:
        assert len(app.resources.table.rows) == 0
        await pilot.press("end")
        assert film.position == film.length
        assert [r.key for r in app.resources.table.rows] == ["default/a"]
        assert [r.key for r in app.events_panel.table.rows] == ["default/a.1"]
        assert "rev 14" in app.status_text() and "paused" in app.status_text()
        await pilot.press("home")
        assert film.position == 0  # the pod is gone: shown with the console's deleted mark until it fades
        assert [(r.key, r.mark) for r in app.resources.table.rows] == [("default/a", "deleted")]
        await pilot.press("n")  # the first input: alice's create, before any change
        assert film.position == 0 and film.now == film.start_time + 9  # it came before the first change
        assert app.log_lines() == ["›     +9.0s  alice create pods default/a"]
        await pilot.press("right", "right")
        assert film.position == 2
        assert app.log_lines()[0].startswith("›") and "alice create pods" in app.log_lines()[0]
        await pilot.press("left")
        assert film.position == 1
        await pilot.press("plus", "space")
        assert film.playing and film.speed == 30.0
        await pilot.press("space", "k")
        assert not film.playing and app.resources.group_resource == "nodes"
        assert [r.key for r in app.resources.table.rows] == ["worker-1"]


async def test_go_to_and_the_scrub_bar(tmp_path: Path) -> None:
    film = Film(read_trace(written(sample(), tmp_path)))
    app = FilmApp(film, name="t.jsonl", frame=3600)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("g", *"+20s", "enter")
        await pilot.pause()
        assert film.position == 3 and film.now == film.start_time + 20
        await pilot.press("g", *"12", "enter")  # a revision
        await pilot.pause()
        assert film.revision == 12 and film.position == 2
        await pilot.press("g", *"soon", "enter")
        await pilot.pause()
        assert film.revision == 12  # refused, and said so
        line = app.scrub.line(41)
        assert line.count("●") == 1 and "!" in line and "›" in line
        await pilot.click("#film-scrub", offset=(2, 0))  # near the start
        assert film.position == 0
