"""The bids a rules run sets, written into a bid table: rows there updated, rows missing
added once each, the table given left as it was."""

from __future__ import annotations

import pandas as pd

from toolkit.rules.evaluate import _upsert


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "campaign_id": pd.Series([1, 1, 2], dtype="Int64"),
            "item": pd.Series(["a", "b", "a"], dtype="string"),
            "bid": pd.Series([0.1, 0.2, 0.3], dtype="float64"),
        }
    )


def test_bids_update_the_rows_there_and_add_the_rows_missing():
    before = table()
    out = _upsert(before, "item", {(1, "b"): 0.25, (2, "c"): 0.4, (3, "a"): 0.5})
    rows = list(out.itertuples(index=False, name=None))
    assert rows == [(1, "a", 0.1), (1, "b", 0.25), (2, "a", 0.3), (2, "c", 0.4), (3, "a", 0.5)]
    assert out.dtypes.to_dict() == before.dtypes.to_dict()
    assert before.equals(table())


def test_bids_for_rows_all_there_add_nothing():
    out = _upsert(table(), "item", {(1, "a"): 0.15, (2, "a"): 0.35})
    assert list(out["bid"]) == [0.15, 0.2, 0.35] and len(out) == 3


def test_the_highest_bid_is_the_interface_bound_everywhere():
    from toolkit import spec
    from toolkit.bulk.workbook import layout as workbook_layout
    from toolkit.rules import evaluate

    assert spec.MAX_BID == 1_000.0
    assert workbook_layout.MAX_BID is spec.MAX_BID and evaluate.MAX_BID is spec.MAX_BID
