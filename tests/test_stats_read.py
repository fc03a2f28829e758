"""Tracker exports read into the statistics frame: every layout, XLSX and Parquet, bad rows
reported with their line and nothing returned, and DuckDB's sums equal to pandas' sums."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from toolkit.errors import StatsError, ToolkitError
from toolkit.sandbox.stats_gen import generate_stats
from toolkit.stats import LAYOUTS, STATS, aggregate, detect_layout, read_stats
from toolkit.stats.layouts import aliases
from toolkit.stats.schema import METRICS

ROWS = [  # date, campaign, source, subid, country, impressions, clicks, cost, conv, revenue
    ("2026-01-01", "7", "s1", "ab12", "US", "1000", "40", "1.20", "1", "5.00"),
    ("2026-01-01", "8", "s2", "", "DE", "500", "10", "0.30", "0", "0"),
    ("2026-01-02", "7", "s1", "cd34", "", "2000", "80", "2.40", "3", "15.00"),
]
TRACKERS = [name for name in LAYOUTS if name not in ("generic", "binom_grouped")]
#: The trackers' own campaign ids of ROWS mapped to the network's (here the same numbers).
IDS = {"7": 7, "8": 8}
#: The tracker's "Campaign ID" column declared the network's.
OWN = {"Campaign ID": "campaign_id"}


def write_layout(path: Path, layout: str, rows=ROWS) -> Path:
    names = [
        "date",
        "campaign_id",
        "source",
        "subid",
        "country",
        "impressions",
        "clicks",
        "cost",
        "conversions",
        "revenue",
    ]
    columns = LAYOUTS[layout]
    header = [aliases(columns.get(n) or columns["tracker_campaign"])[0] for n in names]
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(header)
        out.writerows(rows)
    return path


def check_frame(df: pd.DataFrame) -> None:
    assert {c: str(d) for c, d in df.dtypes.items()} == {c: str(d) for c, d in STATS.items()}
    got = df.groupby("level", observed=True).size().to_dict()
    assert got == {"source": 3, "subid": 2, "country": 2}
    src = df[df["level"] == "source"].reset_index(drop=True)
    assert src["key"].tolist() == ["s1", "s2", "s1"]
    assert src["campaign_id"].tolist() == [7, 8, 7]
    assert src["clicks"].tolist() == [40, 10, 80]
    assert src["cost"].tolist() == [1.2, 0.3, 2.4]
    assert src["conversions"].tolist() == [1.0, 0.0, 3.0]
    assert str(src["date"][0]) == "2026-01-01 00:00:00+00:00"


@pytest.mark.parametrize("layout", TRACKERS)
def test_each_tracker_layout_is_detected_and_read(tmp_path, layout):
    path = write_layout(tmp_path / f"{layout}.csv", layout)
    with open(path, encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert detect_layout(header) == layout
    check_frame(read_stats(path, campaign_map=IDS))
    check_frame(read_stats(path, layout=layout, campaign_map=IDS))
    check_frame(read_stats(path, OWN))
    with pytest.raises(StatsError, match="own ids, not the network's: pass campaign_map="):
        read_stats(path)  # a tracker's numbers are not taken for the network's


def test_generic_layout_and_a_semicolon_file(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(
        "date;campaign_id;level;key;clicks;cost;conversions;revenue\n"
        "2026-01-01;7;subId;ab12;5;0.5;0;0\n\n2026-01-01;7;source;s1;5;0.5;1;2\n"
    )
    df = read_stats(path)
    assert df["level"].tolist() == ["source", "subid"]
    assert df["impressions"].tolist() == [0, 0]  # no such column: 0


def test_columns_override_the_layout(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text(
        "Day,Campaign ID,Placement,Visits,Cost,Conversions,Revenue\n2026-01-01,7,z9,3,0.1,0,0\n"
    )
    with pytest.raises(StatsError, match="no key column"):
        read_stats(path, OWN)
    df = read_stats(path, {"Placement": "source", **OWN})
    assert df[["level", "key"]].astype(str).values.tolist() == [["source", "z9"]]
    with pytest.raises(StatsError, match="no such column"):
        read_stats(path, {"Placemen": "source", **OWN})


def test_xlsx_and_parquet_read_as_csv(tmp_path):
    csv_path = write_layout(tmp_path / "r.csv", "redtrack")
    expected = read_stats(csv_path, campaign_map=IDS)
    raw = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    raw.to_excel(tmp_path / "r.xlsx", index=False)
    pd.testing.assert_frame_equal(read_stats(tmp_path / "r.xlsx", campaign_map=IDS), expected)
    typed = raw.assign(Cost=raw["Cost"].astype(float), Clicks=raw["Clicks"].astype(int))
    typed.to_parquet(tmp_path / "r.parquet")
    pd.testing.assert_frame_equal(read_stats(tmp_path / "r.parquet", campaign_map=IDS), expected)
    pd.testing.assert_frame_equal(read_stats(raw, campaign_map=IDS), expected)


def test_bad_rows_are_reported_with_their_line_and_nothing_is_returned(tmp_path):
    rows = [
        *ROWS,
        ("2026-01-03", "x7", "s1", "", "", "1", "2.5", "-1", "0", "0"),
        ("not a day", "7", "s1", "", "", "1", "2", "1", "abc", "0"),
    ]
    path = write_layout(tmp_path / "bad.csv", "keitaro", rows)
    with pytest.raises(StatsError) as caught:
        read_stats(path, OWN)
    err = caught.value
    assert isinstance(err, ToolkitError) and isinstance(err, ValueError)
    got = {(p.line, p.column) for p in err.problems}
    assert got == {(5, "Campaign ID"), (5, "Clicks"), (5, "Cost"), (6, "Date"), (6, "Conversions")}
    assert "5 problems in" in str(err) and "line 5 [Cost]: '-1'" in str(err)
    assert err.to_frame().columns.tolist() == ["line", "column", "value", "message"]
    with pytest.raises(StatsError) as caught_duck:  # DuckDB checks the same values
        aggregate(path, columns=OWN)
    assert {(p.line, p.column) for p in caught_duck.value.problems} == got


def test_duckdb_sums_equal_pandas_sums(tmp_path):
    path = tmp_path / "gen.csv"
    items = [
        {"campaign_id": c, "level": lv, "key": f"{lv[:2]}{k}"}
        for c in (11, 12)
        for lv in ("source", "subid", "country")
        for k in range(15)
    ]
    generate_stats(items, path, days=10, seed=3)
    df = read_stats(path)
    for by, since, until in [
        (("campaign_id", "level", "key"), None, None),
        (("date", "level"), "2026-01-25", "2026-01-28"),
    ]:
        day = df["date"].dt.floor("D")
        part = df.assign(date=day)
        if since:
            first, last = pd.Timestamp(since, tz="UTC"), pd.Timestamp(until, tz="UTC")
            part = part[(day >= first) & (day <= last)]
        want = part.groupby(list(by), observed=True)[list(METRICS)].sum().reset_index()
        got = aggregate(path, by=by, since=since, until=until)
        assert len(got) == len(want) > 0
        for col in by:
            assert got[col].astype(str).tolist() == want[col].astype(str).tolist()
        for m in METRICS:
            assert got[m].astype(float).round(6).tolist() == want[m].astype(float).round(6).tolist()
    parquet = tmp_path / "gen.parquet"
    pd.read_csv(path).to_parquet(parquet)
    pd.testing.assert_frame_equal(aggregate(parquet), aggregate(path))


def test_a_large_csv_is_parsed_by_duckdb_with_the_same_result(tmp_path, monkeypatch):
    from toolkit.stats import read as read_module

    path = write_layout(tmp_path / "b.csv", "bemob")
    expected = read_stats(path, OWN)
    monkeypatch.setattr(read_module, "LARGE_CSV_BYTES", 0)
    pd.testing.assert_frame_equal(read_stats(path, OWN), expected)
    bad = write_layout(
        tmp_path / "bad.csv",
        "bemob",
        [*ROWS, ("2026-01-03", "7", "s", "", "", "1", "1", "x", "0", "0")],
    )
    with pytest.raises(StatsError) as caught:
        read_stats(bad, OWN)
    assert [(p.line, p.column) for p in caught.value.problems] == [(5, "Cost")]


def test_several_windows_are_summed_in_one_pass_like_aggregate_each(tmp_path):
    from toolkit.stats.duck import window_sums

    path = tmp_path / "gen.csv"
    items = [
        {"campaign_id": 11, "level": lv, "key": f"k{k}"}
        for lv in ("source", "subid")
        for k in range(8)
    ]
    generate_stats(items, path, days=10, seed=4)
    last, sums = window_sums(path, [3, None, 3, 7])
    assert last == dt.date(2026, 1, 31)
    assert list(sums) == [  # each window once, in the order asked
        (dt.date(2026, 1, 29), last),
        (None, None),
        (dt.date(2026, 1, 25), last),
    ]
    for (since, until), got in sums.items():
        pd.testing.assert_frame_equal(got, aggregate(path, since=since, until=until))
    as_of, moved = window_sums(path, [3], as_of="2026-01-27")
    assert as_of == last  # the file's last day; the window ends on as_of
    pd.testing.assert_frame_equal(
        moved[(dt.date(2026, 1, 25), dt.date(2026, 1, 27))],
        aggregate(path, since="2026-01-25", until="2026-01-27"),
    )
    xlsx = tmp_path / "gen.xlsx"
    read_stats(path).assign(date=lambda d: d["date"].dt.tz_localize(None)).to_excel(
        xlsx, index=False
    )
    _, from_sheet = window_sums(xlsx, [3])
    got = from_sheet[(dt.date(2026, 1, 29), last)]
    want = sums[(dt.date(2026, 1, 29), last)]
    assert (
        got[["campaign_id", "key", "clicks"]].astype(str).values.tolist()
        == want[["campaign_id", "key", "clicks"]].astype(str).values.tolist()
    )


def test_window_sums_report_bad_values_with_their_lines(tmp_path):
    from toolkit.stats.duck import window_sums

    rows = [*ROWS, ("2026-01-03", "7", "s1", "", "", "1", "2.5", "x", "0", "0")]
    path = write_layout(tmp_path / "bad.csv", "keitaro", rows)
    with pytest.raises(StatsError) as caught:
        window_sums(path, [7], columns=OWN)
    assert {(p.line, p.column) for p in caught.value.problems} == {(5, "Clicks"), (5, "Cost")}


def test_duckdb_caps_from_arguments_or_the_environment(tmp_path, monkeypatch):
    from toolkit.stats import engine

    def caps() -> tuple:
        with engine.connect() as con:
            return con.execute(
                "SELECT current_setting('threads'), current_setting('memory_limit'), "
                "current_setting('TimeZone')"
            ).fetchone()

    monkeypatch.setenv(engine.ENV_THREADS, "1")
    monkeypatch.setenv(engine.ENV_MEMORY, "300MB")
    try:
        engine.configure()
        assert caps()[0] == 1 and caps()[2] == "UTC"
        assert caps()[1].replace(" ", "") in ("286.1MiB", "300.0MB", "0.3GB")
        engine.configure(threads=2, memory_limit="1GB")  # arguments win
        assert caps()[0] == 2
        assert caps()[1].replace(" ", "") in ("953.6MiB", "1000.0MB", "1.0GB")
        path = write_layout(tmp_path / "k.csv", "keitaro")
        assert len(aggregate(path, columns=OWN)) > 0  # the sums run under the caps
        with pytest.raises(ValueError, match="threads"):
            engine.configure(threads=0)
    finally:
        engine.configure()
