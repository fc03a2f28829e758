"""Backtests: rules replayed day by day, what their stops saved and lost, and a statistical
rule against a threshold rule on the demo statistics, whose truth is known."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from toolkit.rules import backtest, match_cost_saved, side_by_side
from toolkit.stats import stats_frame

DAY0 = dt.date(2026, 3, 1)


def _rows(campaign, level, key, per_day):
    """Stats rows of one item: ``per_day`` is a list of (clicks, cost, conversions, revenue)."""
    return [
        {
            "date": pd.Timestamp(DAY0 + dt.timedelta(days=i), tz="UTC"),
            "campaign_id": campaign,
            "level": level,
            "key": key,
            "impressions": 0,
            "clicks": n,
            "cost": cost,
            "conversions": conv,
            "revenue": rev,
        }
        for i, (n, cost, conv, rev) in enumerate(per_day)
    ]


def _frame(*items):
    rows = [r for item in items for r in item]
    return stats_frame({c: [r[c] for r in rows] for c in rows[0]})


@pytest.fixture
def small():
    return _frame(
        _rows(7, "subid", "a", [(100, 1.0, 0, 0.0)] * 4),
        _rows(7, "subid", "b", [(100, 1.0, 2, 4.0)] * 4),
        _rows(7, "subid", "c", [(100, 1.0, 0, 0.0)] * 2 + [(100, 1.0, 1, 5.0)] * 2),
        _rows(8, "source", "s1", [(50, 1.0, 0, 0.0)] * 4),
        _rows(8, "subid", "ef", [(50, 1.0, 0, 0.0)] * 4),
    )


BLACKLIST = {
    "name": "no conv",
    "level": "subid",
    "when": "cost >= 2 and conversions = 0",
    "action": "blacklist",
    "scope": {"campaigns": [7]},
}


def test_a_stop_saves_the_cost_after_its_day_and_loses_what_the_item_went_on_to_earn(small):
    truth = [
        {"campaign_id": 7, "level": "subid", "key": "a", "true_cr": 0.0, "payout": 2.0},
        {"campaign_id": 7, "level": "subid", "key": "b", "true_cr": 0.02, "payout": 2.0},
        {"campaign_id": 7, "level": "subid", "key": "c", "true_cr": 0.01, "payout": 5.0},
    ]
    result = backtest([BLACKLIST], small, truth=truth)
    d = result.decisions.set_index("key")
    assert sorted(d.index) == ["a", "c"]
    assert d.loc["a", "day"] == d.loc["c", "day"] == DAY0 + dt.timedelta(days=1)
    assert d.loc["a", "cost_after"] == 2.0 and d.loc["a", "revenue_after"] == 0.0
    assert d.loc["c", "cost_after"] == 2.0 and d.loc["c", "revenue_after"] == 10.0
    s = result.summary.iloc[0]
    assert (s["decisions"], s["stopped"]) == (2, 2)
    assert (s["cost_saved"], s["revenue_lost"], s["conversions_lost"]) == (4.0, 10.0, 2.0)
    assert s["net"] == -6.0
    # a loses at its true rate (0 < cpc 0.01), c earns 0.05 a click: a winner stopped
    assert (s["losers_stopped"], s["winners_stopped"]) == (1, 1)
    assert s["precision"] == 0.5 and s["recall"] == 1.0
    assert result.days == [DAY0 + dt.timedelta(days=i) for i in range(4)]


def test_a_paused_campaign_shows_no_later_traffic_to_the_rules(small):
    rules = [
        {
            "name": "stop campaign",
            "level": "campaign",
            "when": "cost >= 3",
            "action": "pause",
            "scope": {"campaigns": [8]},
        },
        {
            "name": "late subId",
            "level": "subid",
            "when": "cost >= 4 and conversions = 0",
            "action": "blacklist",
            "scope": {"campaigns": [8]},
        },
    ]
    result = backtest(rules, small)
    d = result.decisions
    assert d["rule"].tolist() == ["stop campaign"]
    assert d["day"].iloc[0] == DAY0 + dt.timedelta(days=2)
    assert d["cost_after"].iloc[0] == 1.0  # day 4 of its source rows
    # without the pause, ef reaches cost 4 on day 4 and is blacklisted
    alone = backtest([rules[1]], small)
    assert alone.decisions["key"].tolist() == ["ef"]


def test_rule_sets_side_by_side_and_by_rule(small):
    loose = {**BLACKLIST, "when": "cost >= 1 and conversions = 0"}
    result = backtest({"strict": [BLACKLIST], "loose": [loose]}, small)
    assert result.summary["rule_set"].tolist() == ["strict", "loose"]
    assert result.summary["stopped"].tolist() == [2, 2]
    assert result.summary["cost_saved"].tolist() == [4.0, 6.0]  # loose stops a and c on day 1
    assert "precision" not in result.summary  # no truth given
    by = result.by_rule.set_index("rule_set")
    assert by.loc["loose", "decisions"] == 2 and by.loc["loose", "revenue_lost"] == 10.0
    assert set(result.decisions["rule_set"]) == {"strict", "loose"}


def test_backtests_at_hand_side_by_side_are_the_backtest_of_both(small):
    loose = {**BLACKLIST, "when": "cost >= 1 and conversions = 0"}
    together = backtest({"strict": [BLACKLIST], "loose": [loose]}, small)
    apart = side_by_side(
        {"strict": backtest([BLACKLIST], small), "loose": backtest([loose], small)}
    )
    for table in ("summary", "by_rule", "decisions"):
        pd.testing.assert_frame_equal(getattr(apart, table), getattr(together, table))
    assert apart.days == together.days and apart.delay is None
    # a result of several rule sets keeps their names after its own
    nested = side_by_side({"run": together, "again": backtest([loose], small)})
    assert nested.summary["rule_set"].tolist() == ["run: strict", "run: loose", "again"]
    assert set(nested.decisions["rule_set"]) == {"run: strict", "run: loose", "again"}
    shorter = backtest([loose], small, end=DAY0 + dt.timedelta(days=2))
    with pytest.raises(ValueError, match="'short' replays 3 days .* where 'strict' replays 4"):
        side_by_side({"strict": together, "short": shorter})
    late = backtest([loose], small, delay={0: 0.0, 1: 1.0}, complete=True)
    with pytest.raises(ValueError, match="delay"):
        side_by_side({"strict": together, "late": late})


def test_start_and_end_limit_the_days_replayed(small):
    result = backtest([BLACKLIST], small, start=DAY0 + dt.timedelta(days=2))
    assert result.days[0] == DAY0 + dt.timedelta(days=2)
    assert set(result.decisions["day"]) == {DAY0 + dt.timedelta(days=2)}
    assert result.decisions["cost_after"].sum() == 1.0  # only day 4 left to save
    assert backtest([BLACKLIST], small, end=DAY0).decisions.empty


def test_backtest_reads_an_export_path_like_a_frame(small, tmp_path):
    path = tmp_path / "stats.csv"
    out = small.copy()
    out["date"] = out["date"].dt.strftime("%Y-%m-%d")
    out.to_csv(path, index=False)
    from_path = backtest([BLACKLIST], str(path))
    from_frame = backtest([BLACKLIST], small)
    pd.testing.assert_frame_equal(from_path.summary, from_frame.summary)


def test_a_truth_with_more_columns_judges_the_same_and_true_epc_comes_first(small):
    truth = pd.DataFrame(
        {
            "campaign_id": [7, 7, 7],
            "level": ["subid"] * 3,
            "key": ["a", "b", "c"],
            "true_cr": [0.0, 0.02, 0.01],
            "payout": [2.0, 2.0, 5.0],
        }
    )
    plain = backtest([BLACKLIST], small, truth=truth).summary
    extra = truth.assign(clicks=1, cost=2.0, conversions=3, revenue=4.0, note="x")
    pd.testing.assert_frame_equal(backtest([BLACKLIST], small, truth=extra).summary, plain)
    # true_epc, when given, decides: c earns 0.005 a click at cpc 0.01, a loser after all
    with_epc = extra.assign(true_epc=[0.0, 0.04, 0.005])
    s = backtest([BLACKLIST], small, truth=with_epc).summary.iloc[0]
    assert (s["losers_stopped"], s["winners_stopped"]) == (2, 0)
    with pytest.raises(ValueError, match="truth: no column true_cr, payout"):
        backtest([BLACKLIST], small, truth=truth.drop(columns=["true_cr", "payout"]))
    with pytest.raises(ValueError, match="truth: 1 item.s. given twice.*campaign 7 subid 'a'"):
        backtest([BLACKLIST], small, truth=pd.concat([truth, truth.iloc[:1]]))


def test_match_cost_saved_says_when_the_target_is_out_of_reach(small):
    def make(x):
        return [{**BLACKLIST, "when": f"cost >= {x} and conversions = 0"}]

    x, _ = match_cost_saved(make, 4.0, small, 0.0, 8.0, steps=6)
    assert 1.0 < x <= 2.0  # cost >= x stops a and c on day 2: 4.0 saved
    with pytest.raises(ValueError) as raised:
        match_cost_saved(make, 100.0, small, 0.0, 8.0, steps=4)
    message = str(raised.value)
    assert "target cost saved 100.00 is out of reach" in message, message
    assert "x = 0 (the low end of 0 to 8) saves 6.00, less than the target" in message, message
    with pytest.raises(ValueError, match=r"x = 1 \(the high end of 0 to 1\) saves 6.00, more"):
        match_cost_saved(make, 2.0, small, 0.0, 1.0, steps=4)


def test_a_replay_with_delay_sees_only_what_was_known_on_each_day(small):
    one_day = {**BLACKLIST, "window": 1, "when": "cost >= 1 and conversions = 0"}
    plain = backtest([one_day], small)
    assert "b" not in set(plain.decisions["key"])  # b converts every day
    assert "delay" not in plain.summary
    late = {0: 0.0, 1: 1.0}  # every conversion arrives the day after its click
    result = backtest({"one": [one_day], "two": [one_day]}, small, delay=late, complete=True)
    d = result.decisions
    assert set(d[d["rule_set"] == "one"]["key"]) == {"a", "b", "c"}
    assert (d[d["key"] == "b"]["day"] == DAY0).all()  # on its first day, b showed none
    assert result.summary["delay"].tolist() == ["delay {0: 0.00, 1: 1.00}"] * 2
    assert result.delay.shares == (0.0, 1.0)
    assert "replaying what was known under delay {0: 0.00, 1: 1.00}" in repr(result)
    # as downloaded (not complete), the last day's conversions are what was known already
    last = backtest([one_day], small, delay=late, start=DAY0 + dt.timedelta(days=3))
    assert "b" not in set(last.decisions["key"])


def test_known_conversions_grow_day_by_day_alike_for_every_replay():
    from toolkit.rules.delay import Delay
    from toolkit.rules.known import Known

    days = [DAY0 + dt.timedelta(days=i) for i in range(5)]
    rows = pd.DataFrame({"day": days, "conversions": [400.0] * 5, "revenue": [800.0] * 5})
    profile = Delay.parse({0: 0.5, 1: 0.8, 2: 1.0})
    known = Known(rows, profile, complete=True)
    seen = np.array([known.on(d)[0] for d in days])  # replay day x click day
    assert (np.diff(seen, axis=0) >= 0).all()  # a conversion known stays known
    assert (seen[np.triu_indices(5, 1)] == 0).all()  # nothing of a day not clicked yet
    assert np.abs(np.diagonal(seen) / 400 - 0.5).max() < 0.1  # age 0: half, drawn
    assert np.abs(np.diagonal(seen, -1) / 400 - 0.8).max() < 0.1
    assert (np.diagonal(seen, -2) == 400).all()
    assert (known.on(days[0])[1] == 2 * known.on(days[0])[0]).all()
    again = Known(rows, profile, complete=True)
    assert (np.array([again.on(d)[0] for d in days]) == seen).all()
    # downloaded on the last day: that day's rows are what the export shows, not thinned again
    as_downloaded = Known(rows, profile)
    assert (as_downloaded.on(days[-1])[0] == rows["conversions"]).all()
    assert as_downloaded.on(days[-1])[0][-1] == 400 and as_downloaded.on(days[-2])[0][-1] == 0


def test_delay_auto_is_estimated_and_says_so(small):
    with pytest.warns(UserWarning, match="estimate_delay: no day is older than max_age=14"):
        result = backtest([BLACKLIST], small, delay="auto")
    assert result.summary["delay"].tolist() == ["no delay"]
    with pytest.raises(ValueError, match="delay='auto' reads the delay off the freshest days"):
        backtest([BLACKLIST], small, delay="auto", complete=True)
    with pytest.raises(ValueError, match="delay: 'soon' is not a delay profile"):
        backtest([BLACKLIST], small, delay="soon")


# --------------------------------------------------------------------------- with the truth

STATISTICAL = [
    {
        "name": f"losing {level}s",
        "level": level,
        "window": 14,
        "action": "blacklist",
        "when": "p_loss >= 0.95 and clicks >= 200",
    }
    for level in ("subid", "source")
]


def threshold(x: float) -> list[dict]:
    """The rule of the common tools: ``cost > X and conversions = 0``."""
    return [
        {
            "name": f"no conversions {level}s",
            "level": level,
            "window": 14,
            "action": "blacklist",
            "when": f"cost > {x:.4f} and conversions = 0",
        }
        for level in ("subid", "source")
    ]


@pytest.fixture(scope="module")
def demo_stats(demo_statistics):
    """The demo account's 28 days of statistics (seed 5) and their truth (conftest)."""
    return demo_statistics


def test_statistical_rule_loses_clearly_less_than_a_threshold_rule_saving_the_same(demo_stats):
    stats, truth = demo_stats
    stat = backtest({"statistical": STATISTICAL}, stats, truth=truth).summary.iloc[0]
    x, tuned = match_cost_saved(
        threshold, stat["cost_saved"], stats, 0.0, 200.0, steps=10, truth=truth
    )
    thr = tuned.summary.iloc[0]
    figures = (
        f"cost saved {stat['cost_saved']:.0f} vs {thr['cost_saved']:.0f} (X = {x:.2f}); "
        f"revenue lost {stat['revenue_lost']:.0f} vs {thr['revenue_lost']:.0f}; "
        f"winners stopped {stat['winners_stopped']} vs {thr['winners_stopped']}"
    )
    print(figures)
    assert abs(thr["cost_saved"] - stat["cost_saved"]) <= 0.03 * stat["cost_saved"], figures
    assert stat["revenue_lost"] <= 0.85 * thr["revenue_lost"], figures
    assert stat["winners_stopped"] * 3 <= thr["winners_stopped"], figures
    assert stat["precision"] > thr["precision"], figures
