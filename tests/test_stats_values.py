"""Values as trackers write them (day-first dates, zone offsets, $1,237.02, €12,50, 1 234,
($15.00)), read by one set of rules through pandas (``read_stats``) and DuckDB
(``aggregate``, ``window_sums``): the same sums, or the same problems."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from tests.trackers.value_quirks import SAMPLES, export, plain
from toolkit.errors import StatsError
from toolkit.stats import aggregate, read_stats
from toolkit.stats.duck import window_sums
from toolkit.stats.schema import METRICS
from toolkit.stats.values import parse_number

BY = ("date", "campaign_id", "level", "key")


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def options(expect: dict) -> dict:
    return {k: expect[k] for k in ("date_format", "decimal") if k in expect}


def outcome(read) -> tuple[str, object]:
    """``("sums", {metric: total})`` or ``("problems", {(line, column, message)})``."""
    try:
        frame = read()
    except StatsError as err:
        return "problems", {(p.line, p.column, p.message) for p in err.problems}
    return "sums", {m: round(float(frame[m].sum()), 6) for m in METRICS}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_quirk_reads_as_stated_by_both_paths(tmp_path, name):
    data, expect = SAMPLES[name]
    path = write(tmp_path, name, data)
    kw = options(expect)
    pandas = outcome(lambda: read_stats(path, **kw))
    duck = outcome(lambda: aggregate(path, by=BY, **kw))
    last, windows = window_sums(path, [None], **kw) if pandas[0] == "sums" else (None, {})
    assert pandas == duck  # the same sums, or the same (line, column, message)
    if "refused" in expect:
        with pytest.raises(StatsError, match=expect["refused"].replace("(", r"\(")):
            read_stats(path, **kw)
        return
    assert pandas == ("sums", {m: float(v) for m, v in expect["sums"].items()})
    frame = read_stats(path, **kw)
    assert len(frame) == expect["rows"]
    every = windows[(None, None)]
    assert {m: round(float(every[m].sum()), 6) for m in METRICS} == pandas[1]
    if "days" in expect:
        assert frame["date"].dt.strftime("%Y-%m-%d").tolist() == expect["days"]
        assert str(last) == max(expect["days"])
    if "campaigns" in expect:
        assert frame["campaign_id"].tolist() == expect["campaigns"]


def test_a_file_with_many_bad_values_gives_the_same_problems_both_ways(tmp_path):
    rows = [
        plain("05/01/2026", cid="1e20", clicks="1e30", cost="NaN"),
        plain("13/01/2026", clicks="9223372036854775808", cost="inf"),
        plain("14/01/2026", cost="12.5%"),
        plain("15/01/2026", cost="-nan"),
        plain("16/01/2026", cost="($1.00)"),
        plain("xx", cid="0", clicks="-1"),
        plain("17/01/2026", cid="9223372036854775808", cost="1.50"),
    ]
    path = write(tmp_path, "bad.csv", export(rows))
    kind, pandas = outcome(lambda: read_stats(path))
    assert kind == "problems"
    assert outcome(lambda: aggregate(path)) == (kind, pandas)
    assert outcome(lambda: window_sums(path, [7])[1]) == (kind, pandas)
    count = "not a count (a whole number from 0 to 2**53 - 1)"
    amount = "not an amount (a number >= 0)"
    ident = "not a campaign id (a whole number from 1 to 2**63 - 1)"
    assert pandas == {
        (2, "campaign_id", ident),
        (2, "clicks", count),
        (2, "cost", amount),
        (3, "clicks", count),
        (3, "cost", amount),
        (4, "cost", "a percentage: this column takes counts or amounts, not rates"),
        (5, "cost", amount),
        (6, "cost", amount),
        (7, "date", "not a date"),
        (7, "campaign_id", ident),
        (7, "clicks", count),
        (8, "campaign_id", ident),
    }


def test_day_first_dates_are_not_read_month_first(tmp_path):
    path = write(tmp_path, "d.csv", export([plain("05/01/2026"), plain("13/01/2026")]))
    frame = read_stats(path)
    assert frame["date"].tolist() == [
        pd.Timestamp("2026-01-05", tz="UTC"),
        pd.Timestamp("2026-01-13", tz="UTC"),
    ]
    got = aggregate(path, by=("date",))
    assert got["date"].dt.strftime("%m-%d").tolist() == ["01-05", "01-13"]
    assert window_sums(path, [1])[0] == dt.date(2026, 1, 13)


def test_ambiguous_dates_are_refused_in_one_line_until_a_format_is_given(tmp_path):
    path = write(tmp_path, "a.csv", export([plain("05/01/2026")] * 1000))
    for read in (lambda **kw: read_stats(path, **kw), lambda **kw: aggregate(path, **kw)):
        with pytest.raises(StatsError) as caught:
            read()
        assert [(p.line, p.column) for p in caught.value.problems] == [(None, "date")]
        message = str(caught.value)
        assert len(message.splitlines()) == 1
        assert 'date_format="%d/%m/%Y"' in message and "--date-format" in message
    for fmt, day in (("%d/%m/%Y", "2026-01-05"), ("%m/%d/%Y", "2026-05-01")):
        assert str(read_stats(path, date_format=fmt)["date"][0].date()) == day
        assert str(aggregate(path, by=("date",), date_format=fmt)["date"][0].date()) == day
    with pytest.raises(ValueError, match="zone"):
        read_stats(path, date_format="%d/%m/%Y %z")


def test_an_offset_keeps_the_day_and_wall_time_as_written(tmp_path):
    path = write(tmp_path, "o.csv", export([plain("2026-01-05T00:30:00+03:00")]))
    assert read_stats(path)["date"][0] == pd.Timestamp("2026-01-05 00:30", tz="UTC")
    assert aggregate(path, by=("date",))["date"][0] == pd.Timestamp("2026-01-05", tz="UTC")


def test_the_other_columns_settle_an_ambiguous_one_or_decimal_is_asked(tmp_path):
    settled = write(tmp_path, "s.csv", export([plain("2026-01-05", clicks="1,234")]))
    assert read_stats(settled)["clicks"].tolist() == [1234]  # cost's 1.50 settles it
    assert aggregate(settled)["clicks"].tolist() == [1234]
    alone = write(tmp_path, "c.csv", export([plain("2026-01-05", clicks="1,234", cost="2")]))
    with pytest.raises(StatsError, match='decimal="." or decimal=","') as caught:
        aggregate(alone)
    assert "--decimal" in str(caught.value)
    assert read_stats(alone, decimal=".")["clicks"].tolist() == [1234]
    with pytest.raises(StatsError, match="not a count"):  # 1.234 clicks
        read_stats(alone, decimal=",")
    with pytest.raises(StatsError, match="not the one decimal= gives"):
        read_stats(settled, decimal=",")


def test_one_value_as_trackers_write_it():
    assert parse_number("$1,237.02") == 1237.02
    assert parse_number("-$15.00") == parse_number("($15.00)") == -15.0
    assert parse_number("€12,50") == 12.5 and parse_number("37,02") == 37.02
    assert parse_number("1.234,56") == 1234.56 and parse_number("1'234.5") == 1234.5
    for spaced in ("1 234", "1\u00a0234", "1\u202f234"):
        assert parse_number(spaced) == 1234.0
    assert parse_number("12.5%") == 0.125
    assert parse_number("1,234", decimal=",") == 1.234
    for bad in ("1,234", "NaN", "inf", "Infinity", "-nan", "1_000", "$$1", "(1", "0x10"):
        with pytest.raises(ValueError):
            parse_number(bad)


def test_many_bad_rows_are_grouped_by_cause(tmp_path):
    rows = [plain("2026-01-05", clicks="1e30")] * 1000
    path = write(tmp_path, "g.csv", export(rows))
    for read in (read_stats, aggregate):
        with pytest.raises(StatsError) as caught:
            read(path)
        messages = {p.message for p in caught.value.problems}
        assert messages == {"not a count (a whole number from 0 to 2**53 - 1)"}
        assert '1,000 rows of "clicks": not a count' in str(caught.value)


def test_typed_columns_of_a_parquet_file_are_numbers_not_text(tmp_path):
    frame = pd.DataFrame(
        {
            "date": ["2026-01-05"],
            "campaign_id": [9223372036854775807],
            "level": ["source"],
            "key": ["s1"],
            "clicks": [3],
            "cost": [1.234],  # a float: not the ambiguous text 1,234 / 1.234
            "conversions": [0.0],
            "revenue": [-1.5],
        }
    )
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    for got in (read_stats(path), aggregate(path)):
        assert got["cost"].tolist() == [1.234] and got["revenue"].tolist() == [-1.5]
        assert got["campaign_id"].tolist() == [9223372036854775807]
