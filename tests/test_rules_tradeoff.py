"""The trade-off between rule families on the demo statistics (whose truth is known): one
family and threshold recomputed here by plain day-by-day sums, the statistical family
against the backtest's own replay, and the comparison at equal cost saved."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toolkit.rules import backtest
from toolkit.rules.tradeoff import WINDOW, at_equal_cost_saved, tradeoff


@pytest.fixture(scope="module")
def demo_stats(demo_statistics):
    """The demo account's 28 days of statistics (seed 5) and their truth (conftest)."""
    return demo_statistics


@pytest.fixture(scope="module")
def table(demo_stats):
    stats, truth = demo_stats
    families = {"zero_conversion": [3.0, 8.0, 20.0], "roi": [(8.0, 50.0)], "statistical": [0.95]}
    return tradeoff(stats, truth, families)


def _by_hand(stats: pd.DataFrame, truth, x: float) -> dict:
    """``cost > x and conversions = 0`` over the last 14 days, looked at every day, subIds:
    pandas pivots and rolling sums."""
    s = stats[stats["level"] == "subid"].copy()
    s["day"] = pd.to_datetime(s["date"], utc=True).dt.floor("D")
    grids = {
        col: s.pivot_table(index=["campaign_id", "key"], columns="day", values=col, aggfunc="sum")
        .fillna(0.0)
        .sort_index(axis=1)
        for col in ("clicks", "cost", "conversions", "revenue")
    }
    rolled = {c: g.T.rolling(WINDOW, min_periods=1).sum().T for c, g in grids.items()}
    hit = (rolled["cost"] > x) & (rolled["conversions"] == 0)
    stopped = hit.any(axis=1)
    first = hit.to_numpy().argmax(axis=1)  # the first day it holds
    later = np.arange(hit.shape[1])[None, :] > first[:, None]
    saved = (grids["cost"].to_numpy() * later).sum(axis=1)[stopped.to_numpy()]
    lost = (grids["revenue"].to_numpy() * later).sum(axis=1)[stopped.to_numpy()]
    t = pd.DataFrame(truth)
    t = t[t["level"] == "subid"].set_index(["campaign_id", "key"]).reindex(grids["cost"].index)
    epc = t["true_epc"] if "true_epc" in t else t["true_cr"] * t["payout"]
    loser = (epc < grids["cost"].sum(axis=1) / grids["clicks"].sum(axis=1))[stopped]
    return {
        "stopped": int(stopped.sum()),
        "cost_saved": float(saved.sum()),
        "revenue_lost": float(lost.sum()),
        "losers": int(loser.sum()),
        "winners": int((~loser).sum()),
    }


def test_a_zero_conversion_threshold_matches_plain_day_by_day_sums(demo_stats, table):
    stats, truth = demo_stats
    hand = _by_hand(stats, truth, 8.0)
    row = table[(table["family"] == "zero_conversion") & (table["threshold"] == 8.0)].iloc[0]
    assert row["rule"] == "cost > 8 and conversions = 0"
    assert row["stopped"] == hand["stopped"] > 50
    assert row["cost_saved"] == pytest.approx(hand["cost_saved"], rel=1e-9)
    assert row["revenue_lost"] == pytest.approx(hand["revenue_lost"], rel=1e-9)
    assert row["net"] == pytest.approx(hand["cost_saved"] - hand["revenue_lost"], rel=1e-9)
    assert (row["losers_stopped"], row["winners_stopped"]) == (hand["losers"], hand["winners"])
    assert row["precision"] == pytest.approx(hand["losers"] / hand["stopped"])
    # a higher threshold stops fewer and saves less
    zero = table[table["family"] == "zero_conversion"].sort_values("threshold")
    assert zero["stopped"].is_monotonic_decreasing and zero["cost_saved"].is_monotonic_decreasing
    assert ((zero["cost_weighted_recall"] > 0) & (zero["cost_weighted_recall"] < 1)).all()


def test_the_statistical_family_replays_as_the_backtest_does(demo_stats, table):
    stats, truth = demo_stats
    rule = [
        {
            "name": "losing subIds",
            "level": "subid",
            "window": WINDOW,
            "action": "blacklist",
            "when": "p_loss >= 0.95 and clicks >= 200",
        }
    ]
    replayed = backtest(rule, stats, truth=truth).summary.iloc[0]
    assert_same_figures(table[table["family"] == "statistical"].iloc[0], replayed)


def assert_same_figures(row: pd.Series, replayed: pd.Series) -> None:
    """A trade-off row says what a backtest's summary row says."""
    for col in ("stopped", "losers_stopped", "winners_stopped"):
        assert row[col] == replayed[col], col
    for col in ("cost_saved", "revenue_lost", "net", "precision", "recall"):
        assert row[col] == pytest.approx(replayed[col], rel=1e-9), col


def test_two_levels_add_up_and_replay_as_the_backtest_of_a_rule_per_level(demo_stats, table):
    stats, truth = demo_stats
    both = tradeoff(
        stats, truth, {"statistical": [0.95], "roi": [(8.0, 50.0)]}, level=("subid", "source")
    )
    alone = tradeoff(stats, truth, {"statistical": [0.95], "roi": [(8.0, 50.0)]}, level="source")

    def rule_set(when):
        return [
            {"name": f"{lv}s", "level": lv, "window": WINDOW, "action": "blacklist", "when": when}
            for lv in ("subid", "source")
        ]

    for family in ("statistical", "roi"):  # the levels add up
        row = both[both["family"] == family].iloc[0]
        sub = table[table["family"] == family].iloc[0]  # the subIds alone
        src = alone[alone["family"] == family].iloc[0]
        assert row["stopped"] == sub["stopped"] + src["stopped"] > src["stopped"] > 0, family
        for col in ("cost_saved", "revenue_lost", "losers_stopped", "winners_stopped"):
            assert row[col] == pytest.approx(sub[col] + src[col], rel=1e-12), (family, col)
        judged = row["losers_stopped"] + row["winners_stopped"]
        assert row["precision"] == pytest.approx(row["losers_stopped"] / judged)
        losers = sub["losers_stopped"] / sub["recall"] + src["losers_stopped"] / src["recall"]
        assert row["recall"] == pytest.approx(row["losers_stopped"] / losers)
    # and they are what a backtest of the rule set with one rule per level says
    rules = rule_set("p_loss >= 0.95 and clicks >= 200")
    replayed = backtest(rules, stats, truth=truth).summary.iloc[0]
    assert_same_figures(both[both["family"] == "statistical"].iloc[0], replayed)
    with pytest.raises(ValueError, match="each once"):
        tradeoff(stats, truth, ["roi"], level=("subid", "subid"))
    with pytest.raises(ValueError, match="no rows at level 'campagne'"):
        tradeoff(stats, truth, ["roi"], level=("subid", "campagne"))


def test_at_equal_cost_saved_interpolates_within_every_family_reach():
    table = pd.DataFrame(
        {
            "family": ["a", "a", "a", "b", "b", "c", "c"],
            "roi_below": [np.nan] * 5 + [25.0, 50.0],
            "cost_saved": [10.0, 20.0, 40.0, 5.0, 30.0, 0.0, 0.0],
            "net": [1.0, 3.0, 2.0, 0.0, 5.0, 0.0, 0.0],
        }
    )
    two = table[table["family"] != "c"]
    out = at_equal_cost_saved(two, levels=3)
    assert out["cost_saved"].tolist() == [10.0, 20.0, 30.0]
    assert out["a"].tolist() == pytest.approx([1.0, 3.0, 2.5])
    assert out["b"].tolist() == pytest.approx([1.0, 3.0, 5.0])
    assert at_equal_cost_saved(two, levels=[15.0])["a"].tolist() == pytest.approx([2.0])
    with pytest.raises(ValueError, match="levels must lie within 10.00 to 30.00"):
        at_equal_cost_saved(two, levels=[35.0])
    with pytest.raises(ValueError, match=r"no cost saved every family reaches \(a 10 to 40"):
        at_equal_cost_saved(table)
    # a threshold below the line between two others is left out of the curve
    dip = pd.DataFrame(
        {
            "family": ["a"] * 4 + ["b"] * 2,
            "roi_below": [np.nan] * 6,
            "cost_saved": [10.0, 20.0, 30.0, 40.0, 10.0, 40.0],
            "net": [1.0, 3.0, 0.0, 2.0, 0.0, 0.0],
        }
    )
    assert at_equal_cost_saved(dip, levels=[30.0])["a"].tolist() == pytest.approx([2.5])
    # roi's curves (one per R): the best of those that reach a level
    roi = pd.DataFrame(
        {
            "family": ["roi"] * 4 + ["a"] * 2,
            "roi_below": [25.0, 25.0, 50.0, 50.0, np.nan, np.nan],
            "cost_saved": [0.0, 10.0, 0.0, 10.0, 0.0, 10.0],
            "net": [0.0, 4.0, 2.0, 3.0, 0.0, 1.0],
        }
    )
    assert at_equal_cost_saved(roi, levels=3)["roi"].tolist() == pytest.approx([2.0, 2.5, 4.0])
    # a curve counts only within its own reach (R = 50 saves at most 4 here)
    short = roi.assign(cost_saved=[0.0, 10.0, 0.0, 4.0, 0.0, 10.0], net=[0, 4, 2, 9, 0, 1.0])
    out = at_equal_cost_saved(short, levels=[0.0, 4.0, 5.0, 10.0])["roi"]
    assert out.tolist() == pytest.approx([2.0, 9.0, 2.0, 4.0])


def test_delay_and_looks_are_replayed_and_said(demo_stats):
    stats, truth = demo_stats
    families = {"zero_conversion": [8.0]}
    plain = tradeoff(stats, truth, families)
    late = tradeoff(stats, truth, families, delay={0: 0.3, 1: 0.7, 3: 1.0}, complete=True)
    assert late.attrs["delay"] == "delay {0: 0.30, 1: 0.70, 2: 0.85, 3: 1.00}"
    assert plain.attrs["delay"] == "none replayed"
    # conversions not known yet: zero-conversion items look dead sooner, more are stopped
    assert late["stopped"].iloc[0] > plain["stopped"].iloc[0]
    weekly = tradeoff(stats, truth, families, looks=7)
    assert weekly["stopped"].iloc[0] <= plain["stopped"].iloc[0]
    assert weekly["cost_saved"].iloc[0] < plain["cost_saved"].iloc[0]
    with pytest.raises(ValueError, match="looks 'hourly'"):
        tradeoff(stats, truth, families, looks="hourly")
    with pytest.raises(ValueError, match="families: unknown 'cpa'"):
        tradeoff(stats, truth, ["cpa"])
