"""Conversion delay profiles: parsed from what a buyer writes (errors say where and what),
and estimated from one export whose freshest days are short of their conversions."""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pandas as pd
import pytest

from toolkit.rules.delay import NO_DELAY, Delay, estimate_delay

AS_OF = dt.date(2026, 3, 30)


def test_a_mapping_fills_missing_ages_linearly_and_known_reads_it_by_age():
    d = Delay.parse({0: 0.55, 1: 0.8, 3: 0.95, 7: 1.0})
    assert d.shares == pytest.approx((0.55, 0.8, 0.875, 0.95, 0.9625, 0.975, 0.9875, 1.0))
    assert d.days == 7
    ages = np.array([-3, -1, 0, 1, 2, 2.7, 7, 8, 100])
    expected = [0.0, 0.0, 0.55, 0.8, 0.875, 0.875, 1.0, 1.0, 1.0]
    assert d.known(ages) == pytest.approx(expected)
    assert d.known(1).item() == 0.8
    assert np.isnan(d.known([np.nan])[0])


def test_lists_strings_and_profiles_parse_to_the_same_profile():
    assert Delay.parse([0.5, 0.9, 1.0]) == Delay.parse({"0": 0.5, "1": 0.9, "2": 1})
    assert Delay.parse([0.5, 0.9, 1.0, 1.0]).shares == (0.5, 0.9, 1.0)
    assert Delay.parse("none") is NO_DELAY
    assert Delay.parse(" None ") is NO_DELAY
    assert Delay.parse(None) is NO_DELAY
    assert Delay.parse([1.0]) is NO_DELAY
    assert Delay.parse({0: 1.0, 3: 1.0}) is NO_DELAY
    profile = Delay((0.4, 1.0))
    assert Delay.parse(profile) is profile
    assert NO_DELAY.known([0, 5]).tolist() == [1.0, 1.0]
    assert str(NO_DELAY) == "no delay"
    assert str(profile) == "delay {0: 0.40, 1: 1.00}"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("auto", "'auto' is estimated from an export"),
        ("soon", "'soon' is not a delay profile"),
        (0.8, "0.8 (float) is not a delay profile"),
        ({0: 0.5, 2: 0.9}, "the last share is 0.9 at age 2; a profile ends at 1.0"),
        ({1: 0.8, 3: 1.0}, "no share at age 0"),
        ({0: 0.5, -1: 0.2, 2: 1.0}, "-1 is not an age"),
        ({0: 0.5, "two": 1.0}, "'two' is not an age"),
        ({0: 0.5, 1.5: 1.0}, "1.5 is not an age"),
        ({0: 0.5, 1: 1.2}, "where[1]: 1.2 is not a share"),
        ([0.5, "x", 1.0], "where[1]: 'x' is not a share"),
        ([0.5, True, 1.0], "where[1]: True is not a share"),
        ([0.8, 0.6, 1.0], "falls from 0.8 at age 0 to 0.6 at age 1"),
        ([0.5, float("nan"), 1.0], "where[1]: nan is not a share"),
        ({}, "an empty profile"),
        ([], "an empty profile"),
    ],
)
def test_a_bad_profile_names_where_and_what(value, says):
    with pytest.raises(ValueError) as raised:
        Delay.parse(value, where="where")
    message = str(raised.value)
    assert message.startswith("where"), message
    assert says in message, message


def test_a_profile_built_directly_is_checked_too():
    with pytest.raises(ValueError, match="the last share is 0.9"):
        Delay((0.5, 0.9))


def _export(delay: Delay, *, days=30, items=40, clicks=3000, seed=1) -> pd.DataFrame:
    """An export downloaded on AS_OF: each click day's conversions thinned by what ``delay``
    says is known at its age; items with rates from 0.5 % to 3 %."""
    rng = np.random.default_rng(seed)
    rows = []
    rates = rng.uniform(0.005, 0.03, items)
    for i in range(days):
        day = AS_OF - dt.timedelta(days=days - 1 - i)
        n = rng.poisson(clicks, items)
        final = rng.binomial(n, rates)
        known = rng.binomial(final, delay.known((AS_OF - day).days).item())
        for k in range(items):
            rows.append(
                {
                    "date": pd.Timestamp(day, tz="UTC"),
                    "campaign_id": 1,
                    "level": "subid",
                    "key": f"s{k}",
                    "clicks": n[k],
                    "conversions": known[k],
                }
            )
    return pd.DataFrame(rows)


def test_estimate_recovers_a_known_delay_within_four_points():
    true = Delay.parse({0: 0.45, 1: 0.75, 2: 0.88, 4: 0.97, 6: 1.0})
    frame = _export(true)
    got = estimate_delay(frame, AS_OF, max_age=10)
    ages = np.arange(12)
    error = np.abs(got.known(ages) - true.known(ages))
    assert error.max() <= 0.04, (got, true)
    assert np.all(np.diff(got.shares) >= 0) and got.shares[-1] == 1.0
    # the same from per-day sums with a ``day`` column (daily_stats)
    daily = frame.assign(day=frame["date"].dt.date).drop(columns="date")
    assert estimate_delay(daily, AS_OF, max_age=10) == got


def test_estimate_finds_no_delay_where_there_is_none():
    frame = _export(NO_DELAY, seed=3)
    got = estimate_delay(frame, AS_OF, max_age=10)
    assert np.abs(got.known(np.arange(11)) - 1.0).max() <= 0.04, got


def test_too_little_data_says_why_and_assumes_no_delay():
    frame = _export(Delay((0.5, 1.0)), days=8)
    with pytest.warns(UserWarning, match="no day is older than max_age=10"):
        assert estimate_delay(frame, AS_OF, max_age=10) is NO_DELAY
    few = _export(Delay((0.5, 1.0)), items=2, clicks=20)
    with pytest.warns(UserWarning, match=r"conversions on the days older than 10 days \(fewer"):
        assert estimate_delay(few, AS_OF, max_age=10) is NO_DELAY
    gap = _export(Delay((0.5, 1.0)))
    gap = gap[gap["date"] != pd.Timestamp(AS_OF - dt.timedelta(days=3), tz="UTC")]
    with pytest.warns(UserWarning, match="no clicks at age 3 days"):
        assert estimate_delay(gap, AS_OF, max_age=10) is NO_DELAY
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimate_delay(_export(Delay((0.5, 1.0))), AS_OF, max_age=10)


def test_estimate_refuses_statistics_it_cannot_read():
    frame = _export(NO_DELAY, days=3, items=1)
    with pytest.raises(ValueError, match="no 'conversions' column"):
        estimate_delay(frame.drop(columns="conversions"), AS_OF)
    with pytest.raises(ValueError, match="no 'date'"):
        estimate_delay(frame.drop(columns="date"), AS_OF)
    with pytest.raises(ValueError, match="max_age 0"):
        estimate_delay(frame, AS_OF, max_age=0)
