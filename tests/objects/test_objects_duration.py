import pytest

from kconsole.objects.duration import (
    age_since,
    event_last_seen,
    event_last_time,
    format_age,
    format_duration,
    format_short_age,
    parse_duration,
)
from kconsole.objects.meta import format_time, parse_time

MIN, HOUR, DAY, YEAR = 60, 3600, 86400, 365 * 86400


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1.5, "0s"),
        (0, "0s"),
        (59, "59s"),
        (90, "90s"),
        (119.9, "119s"),
        (2 * MIN, "2m"),
        (3 * MIN + 5, "3m5s"),
        (9 * MIN + 59, "9m59s"),
        (10 * MIN + 30, "10m"),
        (179 * MIN, "179m"),
        (3 * HOUR, "3h"),
        (3 * HOUR + 20 * MIN, "3h20m"),
        (8 * HOUR + 59 * MIN, "8h"),
        (47 * HOUR, "47h"),
        (3 * DAY, "3d"),
        (3 * DAY + 5 * HOUR, "3d5h"),
        (8 * DAY + 5 * HOUR, "8d"),
        (729 * DAY, "729d"),
        (2 * YEAR, "2y"),
        (2 * YEAR + 40 * DAY, "2y40d"),
        (9 * YEAR + 40 * DAY, "9y"),
    ],
)
def test_format_age_is_human_duration(seconds, text):
    assert format_age(seconds) == text


def test_short_age_uses_one_unit():
    assert [format_short_age(s) for s in (30, 90, 2 * HOUR + 1, 3 * DAY, 400 * DAY)] == ["30s", "1m", "2h", "3d", "1y"]


NOW = parse_time("2026-01-01T12:00:00Z")


def test_event_last_seen_shows_repeats():
    event = {
        "count": 3,
        "firstTimestamp": format_time(NOW - 10 * MIN),
        "lastTimestamp": format_time(NOW - 5 * MIN),
    }
    assert event_last_seen(event, NOW) == "5m (x3 over 10m)"
    assert event_last_seen({**event, "count": 1}, NOW) == "5m"
    assert event_last_seen({"firstTimestamp": format_time(NOW - 42)}, NOW) == "42s"
    series = {"eventTime": "2026-01-01T11:00:00.000000Z", "series": {"count": 4, "lastObservedTime": "2026-01-01T11:58:00.000000Z"}}
    assert event_last_seen(series, NOW) == "2m (x4 over 60m)"
    assert age_since(None, NOW) == "<unknown>"


def test_events_sort_by_time_not_text():
    early = {"lastTimestamp": format_time(NOW - 9)}
    late = {"lastTimestamp": format_time(NOW - 10 * MIN)}
    assert event_last_time(late) < event_last_time(early)
    assert sorted([early, late], key=event_last_time) == [late, early]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0), ("1h30m", 5400), ("-1.5s", -1.5), ("300ms", 0.3), ("1m0.5s", 60.5), (".5h", 1800), ("10us", 1e-5)],
)
def test_parse_go_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("abc", 'time: invalid duration "abc"'),
        ("5", 'time: missing unit in duration "5"'),
        ("5d", 'time: unknown unit "d" in duration "5d"'),
        ("1h.m", 'time: invalid duration "1h.m"'),
    ],
)
def test_parse_duration_errors_use_go_wording(text, message):
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert str(info.value) == message


def test_format_duration_matches_go_and_round_trips():
    assert format_duration(5400) == "1h30m0s"
    assert format_duration(0) == "0s"
    assert format_duration(0.3) == "300ms"
    assert format_duration(-61.5) == "-1m1.5s"
    for s in (1, 59.25, 3600, 86400 * 3 + 7):
        assert parse_duration(format_duration(s)) == pytest.approx(s)
