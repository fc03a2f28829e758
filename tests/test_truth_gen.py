"""The benchmark's independent statistics generator (tests/benchmarks/truth_gen.py): seeded,
its truth consistent with the rows it drew, its delay a delay and not a loss."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.generated import truth_gen

ITEM = ["campaign_id", "level", "key"]


@pytest.fixture(scope="module")
def delayed():
    return truth_gen.generate("low_thin", seed=4, days=21, delay=True)


def test_seeded():
    a = truth_gen.generate("high_fat", seed=2, days=14)
    b = truth_gen.generate("high_fat", seed=2, days=14)
    c = truth_gen.generate("high_fat", seed=3, days=14)
    pd.testing.assert_frame_equal(a.stats, b.stats)
    pd.testing.assert_frame_equal(a.truth, b.truth)
    assert not a.stats[["clicks", "conversions"]].equals(c.stats[["clicks", "conversions"]])


def test_truth_matches_rows(delayed):
    stats, truth = delayed.final, delayed.truth
    assert list(truth.columns) == list(truth_gen.TRUTH_COLUMNS)
    assert set(stats.columns) == set(truth_gen.STATS_COLUMNS)
    assert not truth.duplicated(ITEM).any()
    items = stats[ITEM].drop_duplicates()
    assert len(items.merge(truth, on=ITEM)) == len(items) == len(truth)
    np.testing.assert_allclose(truth["true_epc"], truth["true_cr"] * truth["payout"])
    # one payout per campaign, and every row's revenue is its conversions at that payout
    joined = stats.merge(truth, on=ITEM)
    np.testing.assert_allclose(
        joined["revenue"], joined["conversions"] * joined["payout"], atol=0.006
    )
    assert (truth.groupby("campaign_id")["payout"].nunique() == 1).all()
    # a fixed cost per click per item
    cpc = (stats["cost"] / stats["clicks"]).groupby([stats["campaign_id"], stats["key"]])
    assert (cpc.max() - cpc.min()).max() < 1e-3


def test_losers_breakevens_and_winners(delayed):
    judged = truth_gen.losers(delayed)
    ratio = judged["true_epc"] / judged["cpc"]
    assert (ratio < 0.8).any() and ((ratio > 0.9) & (ratio < 1.1)).any() and (ratio > 1.5).any()
    assert 0.2 < judged["loser"].mean() < 0.8


def test_delay_is_late_not_lost(delayed):
    plain = truth_gen.generate("low_thin", seed=4, days=21)
    pd.testing.assert_frame_equal(
        plain.final[["clicks", "conversions"]], delayed.final[["clicks", "conversions"]]
    )
    stats, final = delayed.stats, delayed.final
    assert (stats["conversions"] <= final["conversions"]).all()
    last = final["date"].max()
    fresh = final["date"] == last
    old = final["date"] <= last - pd.Timedelta(days=7)
    assert stats.loc[old, "conversions"].equals(final.loc[old, "conversions"])
    share = stats.loc[fresh, "conversions"].sum() / final.loc[fresh, "conversions"].sum()
    assert 0.4 < share < 0.7  # 55 % known on the click's day
    late = 1 - delayed.lags[:, 0].sum() / delayed.lags.sum()
    assert 0.4 < late < 0.5
    # the export as known on an earlier day holds only that day's rows, fewer conversions
    day = last.date() - pd.Timedelta(days=5).to_pytimedelta()
    earlier = delayed.known_on(day)
    assert earlier["date"].max().date() == day
    assert earlier["conversions"].sum() < final[final["date"].dt.date <= day]["conversions"].sum()
