"""A statistical rule run every day keeps the error rate its posteriors promise.

The demo statistics (28 days, seed 5, with their truth) are replayed one look a day: on each
day the rules decide on the statistics up to it (their 14-day window ending there), and an
item's first decision is its stop. Of the stops, the share of true winners is compared with
what the decisions promised: the mean ``1 - p_loss`` of the stops. Stopped items keep their
traffic here (each decision is judged as it was made; what the stops saved is the
backtest's business, tests/test_rules_backtest.py).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit.rules.backtest import daily_stats, truth_items
from toolkit.rules.decide import DECIDED, Stats, decide

THRESHOLDS = (0.95, 0.99)
LEVELS = ("subid", "source")
_ITEM = ["campaign_id", "level", "key"]


@pytest.fixture(scope="module")
def demo(sandbox: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Any]:
    path = tmp_path_factory.mktemp("looks") / "stats.csv"
    truth = sandbox.stats_export(path, days=28, seed=5)
    stats = toolkit.read_stats(path)
    return stats, truth_items(truth, daily_stats(stats))


def first_stops(stats: pd.DataFrame, judge: pd.DataFrame, **extra: Any) -> pd.DataFrame:
    """One row per rule and item a daily look stopped (its first decision), judged."""
    rules = [
        {
            "name": f"{t}",
            "level": level,
            "window": 14,
            "when": f"p_loss >= {t} and clicks >= 200",
            "action": "blacklist",
            **extra,
        }
        for t in THRESHOLDS
        for level in LEVELS
    ]
    rules = [{**r, "name": f"{r['name']} {r['level']}"} for r in rules]
    source = Stats(stats)  # the windows' sums shared by every look
    days = sorted(pd.to_datetime(stats["date"], utc=True).dt.date.unique())
    made = [decide(rules, source, as_of=day).assign(day=day) for day in days]
    stops = pd.concat(made, ignore_index=True)
    stops = stops[stops["status"] == DECIDED].drop_duplicates(["rule", *_ITEM])
    stops["threshold"] = stops["rule"].str.split(" ").str[0].astype(float)
    return stops.merge(judge[[*_ITEM, "loser"]], on=_ITEM, how="left")


def calibration(stops: pd.DataFrame) -> pd.DataFrame:
    """Per threshold: stops, winners among them, their share and the share promised."""
    stops = stops.assign(winner=~stops["loser"].astype(bool), promised=1.0 - stops["p_loss"])
    out = stops.groupby("threshold").agg(
        stops=("winner", "size"),
        winners=("winner", "sum"),
        share=("winner", "mean"),
        promised=("promised", "mean"),
    )
    return out.assign(ratio=out["share"] / out["promised"])


def test_daily_looks_stop_winners_within_twice_the_promised_share(demo):
    stats, judge = demo
    table = calibration(first_stops(stats, judge))
    assert list(table.index) == list(THRESHOLDS)
    assert (table["stops"] >= 300).all(), table  # enough stops for the shares to mean much
    assert (table["ratio"] <= 2.0).all(), table
