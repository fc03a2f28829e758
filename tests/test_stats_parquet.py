"""A Parquet export is read by DuckDB directly, with every check a CSV gets: the same sums
as the CSV of the same rows, and a bad value refused with its line and column."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from toolkit.errors import StatsError
from toolkit.sandbox.stats_gen import generate_stats
from toolkit.stats import aggregate
from toolkit.stats.duck import window_sums

TYPES = {
    "date": pa.date32(),
    "campaign_id": pa.int64(),
    "level": pa.string(),
    "key": pa.string(),
    "impressions": pa.int64(),
    "clicks": pa.int64(),
    "cost": pa.float64(),
    "conversions": pa.int64(),
    "revenue": pa.float64(),
}


def typed_parquet(csv_path: Path) -> Path:
    """The rows of ``csv_path`` as a Parquet export with typed columns."""
    options = pacsv.ConvertOptions(column_types=TYPES)
    path = csv_path.with_suffix(".parquet")
    pq.write_table(pacsv.read_csv(str(csv_path), convert_options=options), str(path))
    return path


@pytest.fixture(scope="module")
def stats_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("parquet") / "gen.csv"
    items = [
        {"campaign_id": c, "level": lv, "key": f"{lv[:2]}{k}"}
        for c in (11, 12)
        for lv in ("source", "subid", "country")
        for k in range(6)
    ]
    generate_stats(items, path, days=10, seed=5)
    return path


def test_a_typed_parquet_export_sums_as_the_csv_of_the_same_rows(stats_csv):
    parquet = typed_parquet(stats_csv)
    assert pq.read_schema(parquet).field("clicks").type == pa.int64()
    last, sums = window_sums(parquet, [3, 7, None])
    csv_last, csv_sums = window_sums(stats_csv, [3, 7, None])
    assert last == csv_last == dt.date(2026, 1, 31)
    assert list(sums) == list(csv_sums)
    for window, got in sums.items():
        assert len(got) > 0
        pd.testing.assert_frame_equal(got, csv_sums[window])
    pd.testing.assert_frame_equal(aggregate(parquet), aggregate(stats_csv))


def test_a_bad_value_in_a_parquet_export_is_refused_with_its_line(stats_csv, tmp_path):
    frame = pd.read_csv(stats_csv, dtype=str, keep_default_na=False)
    frame.loc[3, "cost"] = "x"  # line 5 of the CSV (the header is line 1)
    frame.loc[6, "campaign_id"] = "0"
    bad_csv = tmp_path / "bad.csv"
    frame.to_csv(bad_csv, index=False)
    as_text = tmp_path / "bad_text.parquet"
    frame.to_parquet(as_text, index=False)
    want = {(5, "cost", "x"), (8, "campaign_id", "0")}
    for path in (bad_csv, as_text):
        with pytest.raises(StatsError) as caught:
            window_sums(path, [7])
        assert {(p.line, p.column, p.value) for p in caught.value.problems} == want
        assert path.name in str(caught.value) and "line 5 [cost]: 'x'" in str(caught.value)
    typed = pq.read_table(typed_parquet(stats_csv)).to_pandas()
    typed.loc[3, "clicks"] = -4  # a typed column is checked as the text is
    negative = tmp_path / "negative.parquet"
    typed.to_parquet(negative, index=False)
    with pytest.raises(StatsError) as caught:
        window_sums(negative, [7])
    problems = [(p.line, p.column) for p in caught.value.problems]
    assert problems == [(5, "clicks")] and "not a count" in caught.value.problems[0].message


def test_a_totals_row_of_a_typed_parquet_export_is_left_out(stats_csv, tmp_path):
    typed = pq.read_table(typed_parquet(stats_csv)).to_pandas()
    total = {c: None for c in typed.columns} | {"key": "Total", "clicks": 999_999}
    with_total = pd.concat([typed, pd.DataFrame([total])], ignore_index=True)
    path = tmp_path / "totals.parquet"
    pq.write_table(pa.Table.from_pandas(with_total, schema=pa.schema(TYPES)), str(path))
    with pytest.warns(UserWarning, match="skipped 1 totals row"):
        _, sums = window_sums(path, [None])
    _, want = window_sums(stats_csv, [None])
    pd.testing.assert_frame_equal(sums[(None, None)], want[(None, None)])
