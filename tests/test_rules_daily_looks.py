"""A statistical rule run every day keeps the error rate its posteriors promise.

The demo statistics (28 days, seed 5, with their truth) are replayed one look a day by
:func:`toolkit.backtest`: on each day the rules decide on the statistics up to it (their
14-day window ending there), and a stopped item gets no traffic from the next day on. Of the
stops, the share of true winners is compared with what the decisions promised: the mean
``1 - p_loss`` of the stops (docs/rules.md, "Daily looks"). A few hundred stops at
``p_loss >= 0.99`` promise a handful of winners, so "within twice the promised share" is
judged with the counts' own noise: the winners seen must be likely enough (5 % or more)
under twice the promised count (Poisson), not merely below it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from scipy.stats import poisson

import toolkit
from toolkit.errors import RulesError
from toolkit.rules.decide import DECIDED, decide
from toolkit.rules.model import load_rules

THRESHOLDS = (0.95, 0.99)
LEVELS = ("subid", "source")


@pytest.fixture(scope="module")
def demo(demo_statistics):
    """The demo account's 28 days of statistics (seed 5) and their truth (conftest)."""
    return demo_statistics


def rules(threshold: float, **extra: Any) -> list[dict[str, Any]]:
    """The documented statistical rule at ``threshold``, one per level, looked at daily."""
    when = f"p_loss >= {threshold} and clicks >= 200"
    return [
        {"name": level, "level": level, "window": 14, "when": when, "action": "blacklist", **extra}
        for level in LEVELS
    ]


def calibration(stats: pd.DataFrame, truth: Any, **extra: Any) -> pd.DataFrame:
    """Per threshold: the stops of a daily replay, the winners among them, their share, the
    share promised (mean ``1 - p_loss``) and the ratio of the two."""
    sets = {str(t): rules(t, **extra) for t in THRESHOLDS}
    stops = toolkit.backtest(sets, stats, truth=truth).decisions
    stops = stops.assign(winner=stops["winner"].astype(bool), promised=1.0 - stops["p_loss"])
    out = stops.groupby("rule_set").agg(
        stops=("winner", "size"),
        winners=("winner", "sum"),
        share=("winner", "mean"),
        promised=("promised", "mean"),
        expected=("promised", "sum"),
    )
    # how likely that many winners (or more) are if twice the promised count is the truth
    chance = poisson.sf(out["winners"] - 1, 2.0 * out["expected"])
    return out.assign(ratio=out["share"] / out["promised"], chance_at_twice=chance)


def test_daily_looks_stop_winners_within_twice_the_promised_share(demo):
    stats, truth = demo
    table = calibration(stats, truth)
    assert list(table.index) == [str(t) for t in THRESHOLDS]
    assert (table["stops"] >= 300).all(), table  # enough stops for the shares to mean much
    assert (table["expected"] >= 2.0).all(), table  # promised winners enough to count
    assert (table["chance_at_twice"] >= 0.05).all(), table


def two_days() -> pd.DataFrame:
    """Three subIds converting at 2 % both days; ``d``: 10 clicks the first day, 600 the
    second, no conversion, at 4 cents a click (break-even 2 %)."""
    days = pd.to_datetime(["2026-01-30", "2026-01-31"], utc=True)
    return pd.DataFrame(
        {
            "date": days.repeat(4),
            "campaign_id": 7,
            "level": "subid",
            "key": ["a", "b", "c", "d"] * 2,
            "impressions": 0,
            "clicks": [400, 400, 400, 10, 400, 400, 400, 600],
            "cost": [4.0, 4.0, 4.0, 0.4, 4.0, 4.0, 4.0, 24.0],
            "conversions": [8, 9, 8, 0, 8, 9, 8, 0],
            "revenue": [16.0, 18.0, 16.0, 0.0] * 2,
        }
    )


def test_confirm_asks_the_probability_to_hold_on_the_day_before_too():
    stats = two_days()
    rule = {"level": "subid", "when": "p_loss >= 0.9 and clicks >= 500", "action": "blacklist"}
    once = decide([rule], stats)  # the default: the last day's evidence
    assert once[["key", "status"]].values.tolist() == [["d", DECIDED]]
    twice = decide([{**rule, "confirm": 2}], stats)
    assert twice[["key", "status"]].values.tolist() == [["d", "not confirmed"]]
    why = twice["why"].iloc[0]
    # the day before: 10 clicks, p_loss 0.53; its clicks clause is not asked again
    assert "p_loss 0.9999" in why and "the day before: p_loss 0.5371" in why
    assert "confirm: 1" in why
    # one day of statistics confirms nothing, and says so
    first = decide([{**rule, "when": "p_loss >= 0.3", "confirm": 2}], stats, as_of="2026-01-30")
    assert set(first["status"]) == {"not confirmed"}
    assert first["why"].str.contains("the day before: p_loss n/a").all()
    # a loser on both days is decided, its why shows each day before
    three = decide([{**rule, "when": "p_loss >= 0.5", "confirm": 2}], stats)
    assert three[["key", "status"]].values.tolist() == [["d", DECIDED]]


def test_confirm_is_a_whole_number_of_days_from_1_to_7():
    rule = {"level": "subid", "when": "p_loss >= 0.9", "action": "blacklist"}
    assert load_rules([rule])[0].confirm == 1
    assert load_rules([{**rule, "confirm": 3}])[0].to_dict()["confirm"] == 3
    for bad in (0, 8, 1.5, "two"):
        with pytest.raises(RulesError) as caught:
            load_rules([{**rule, "confirm": bad}])
        assert [p.field for p in caught.value.problems] == ["confirm"]
