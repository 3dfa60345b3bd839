"""CronJob schedules accepted and refused as robfig/cron v3's ParseStandard does, in its words."""

from __future__ import annotations

import pytest

from kconsole.objects import cronspec


@pytest.mark.parametrize("spec", ["*/5 * * * *", "0 0 1 1 *", "0 9-17/2 * jan-mar mon-fri", "? * * * SUN",
                                  "0,30 * * * *", "@hourly", "@every 1h30m", "5/15 * * * *", "+5 * * * *"])
def test_accepted(spec: str) -> None:
    assert cronspec.check(spec) is None


@pytest.mark.parametrize(("spec", "why"), [
    ("", "empty spec string"),
    ("every minute", "expected exactly 5 fields, found 2: [every minute]"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("*/2/3 * * * *", "too many slashes: */2/3"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("@every soon", 'failed to parse duration @every soon: time: invalid duration "soon"'),
])
def test_refused_with_robfigs_words(spec: str, why: str) -> None:
    assert cronspec.check(spec) == why
