"""How many times DuckDB reads an export, and how: a file checked once in a process is summed
again without checking it again (but a changed file is checked again), the totals rows are
counted in the checking scan, a CSV of plain values is summed from DuckDB's typed reader with
the numbers pandas reads, and a column that mixes three currencies is refused naming all
three."""

from __future__ import annotations

import datetime as dt
import warnings

import pytest

from tests.trackers.value_quirks import HEADER, export, plain
from toolkit.errors import StatsError
from toolkit.stats import aggregate, checked, duck, read_stats
from toolkit.stats.duck import window_sums
from toolkit.stats.schema import METRICS


@pytest.fixture(autouse=True)
def _fresh():
    checked.forget()
    yield
    checked.forget()


def write(tmp_path, name: str, rows: list[tuple[str, ...]]):
    path = tmp_path / name
    path.write_bytes(export(rows))
    return path


def sums(frame) -> dict[str, float]:
    return {m: round(float(frame[m].sum()), 6) for m in METRICS}


def counting(monkeypatch, name: str) -> list[tuple]:
    calls: list[tuple] = []
    real = getattr(duck, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(duck, name, counted)
    return calls


def test_a_file_read_again_is_not_checked_again_until_it_changes(tmp_path, monkeypatch):
    checks = counting(monkeypatch, "_check")
    forms = counting(monkeypatch, "csv_form")  # reads the whole file for its encoding
    path = write(tmp_path, "s.csv", [plain("2026-01-05"), plain("2026-01-06", cost="2.25")])
    last, windows = window_sums(path, [1, None])
    assert last == dt.date(2026, 1, 6) and len(checks) == 1 and len(forms) == 1
    daily = aggregate(path, by=("date", "campaign_id", "level", "key"), since=last)
    assert len(checks) == 1 and len(forms) == 1  # the same file, the same options: summed
    assert daily["cost"].tolist() == [2.25]
    aggregate(path, date_format="%Y-%m-%d")  # other options: checked again
    assert len(checks) == 2
    # the same size, a bad value: a new file, checked again and refused where it is
    path.write_bytes(export([plain("2026-01-05"), plain("2026-01-06", cost="-2.2")]))
    with pytest.raises(StatsError) as err:
        aggregate(path)
    assert len(checks) == 3
    bad = [(p.line, p.column, p.value) for p in err.value.problems]
    assert bad == [(3, "cost", "-2.2")]


def test_a_refused_file_is_checked_again_on_every_read(tmp_path, monkeypatch):
    checks = counting(monkeypatch, "_check")
    path = write(tmp_path, "b.csv", [plain("2026-01-05", clicks="x")])
    for _ in range(2):
        with pytest.raises(StatsError, match="not a count"):
            aggregate(path)
    assert len(checks) == 2


def test_totals_rows_are_counted_in_the_checking_scan(tmp_path, monkeypatch):
    checks = counting(monkeypatch, "_check")
    plain_path = write(tmp_path, "p.csv", [plain("2026-01-05"), plain("2026-01-06")])
    aggregate(plain_path)
    assert len(checks) == 1  # no totals rows: one checking scan, and no scan for them
    checks.clear()
    totals = ("Total", "", "", "200", "20", "3.00", "2", "4")
    path = write(tmp_path, "t.csv", [plain("2026-01-05"), plain("2026-01-06"), totals])
    with pytest.warns(UserWarning, match="skipped 1 totals row"):
        got = aggregate(path)
    assert len(checks) == 2  # found by the first, left out for the second
    assert sums(got) == sums(read_stats(path)) and int(got["clicks"].sum()) == 20
    assert checked.known(checked.file_key(path, _options())).skipped == [
        (4, "totals row ('Total' in date)")
    ]


#: A "Total" in each column a tracker writes it in, with the other cells of an ordinary row:
#: in a key it is a valid value (only its pattern finds it), elsewhere it fails a check too.
TOTALS_AT = {
    "key": ("2026-01-06", "7", "source", "Total", "200", "20", "3.00", "2", "4"),
    "date": ("Total", "7", "source", "s1", "200", "20", "3.00", "2", "4"),
    "level": ("2026-01-06", "7", "Grand total", "s1", "200", "20", "3.00", "2", "4"),
    "campaign_id": ("2026-01-06", "totals:", "source", "s1", "200", "20", "3.00", "2", "4"),
    "sums only": ("", "", "", "", "200", "20", "3.00", "2", "4"),
}


@pytest.mark.parametrize("where", list(TOTALS_AT))
def test_a_totals_row_in_any_column_is_left_out_as_pandas_leaves_it_out(
    tmp_path, monkeypatch, where
):
    checks = counting(monkeypatch, "_check")
    ordinary = [("2026-01-05", "7", "source", "s1", "100", "10", "1.50", "1", "2")] * 2
    lines = [",".join(r) for r in [tuple(HEADER), *ordinary, TOTALS_AT[where]]]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="skipped 1 totals row"):
        want = read_stats(path)
    with pytest.warns(UserWarning, match="skipped 1 totals row"):
        got = aggregate(path)
    assert got.attrs["skipped"] == want.attrs["skipped"] and want.attrs["skipped"][0][0] == 4
    assert sums(got) == sums(want) and int(got["clicks"].sum()) == 20
    assert len(checks) == 2  # found by the first check, left out for the second


def test_a_file_of_other_rules_is_looked_at_for_totals_only_when_it_would_be_refused(
    tmp_path, monkeypatch
):
    """Day-first dates fail the plain rules' checks in every row: the scan for a "Total"
    outside the keys runs only if they fail the rules the file is read by too."""
    looks = counting(monkeypatch, "counted")
    days = [("13/01/2026", "7", "source", "s1", "100", "10", "1.50", "1", "2")]
    days.append(("14/01/2026", "7", "source", "s1", "100", "10", "2.50", "1", "2"))
    totals = ("Total", "", "", "", "200", "20", "4.00", "2", "4")
    for rows, clicks, found in ((days, 20, 0), ([*days, totals], 20, 1)):
        lines = [",".join(r) for r in [tuple(HEADER), *rows]]
        path = tmp_path / f"d{len(rows)}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = aggregate(path)
        assert int(got["clicks"].sum()) == clicks
        assert len(looks) == found  # the clean file: none; the other: one, then left out
        assert sum("skipped 1 totals row" in str(w.message) for w in seen) == found


def test_a_total_in_a_column_per_level_is_left_out(tmp_path):
    text = "date,campaign_id,subid,impressions,clicks,cost,conversions,revenue\n"
    text += "2026-01-05,7,a1,100,10,1.5,1,2\n2026-01-05,7,TOTAL,100,10,1.5,1,2\n"
    path = tmp_path / "s.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.warns(UserWarning, match=r"skipped 1 totals row \(line 3\)"):
        got = aggregate(path, layout="generic", columns={"subid": "subid"})
    assert got["key"].tolist() == ["a1"] and got["clicks"].tolist() == [10]


def _options(**kw) -> dict:
    return {"columns": None, "layout": None, "map": None, "date_format": None, "decimal": None}


#: Plain values as written (the typed reader reads them), and some next to them that are not.
PLAIN = ["12", "007", "1.5", ".5", "1.234", "0.123", "1234.567", "12.3456", "0"]
NOT_PLAIN = [" 12", "12.", "1,234", "\u00a012"]


@pytest.mark.parametrize("value", PLAIN + NOT_PLAIN)
def test_a_plain_csv_is_summed_typed_with_the_numbers_pandas_reads(tmp_path, monkeypatch, value):
    sources = counting(monkeypatch, "_source")
    rows = [plain("2026-01-05", cost=value), plain("2026-01-06", cost="2", cid="18")]
    path = write(tmp_path, "v.csv", rows)
    try:
        got = ("sums", sums(aggregate(path, by=("date", "campaign_id"))))
    except StatsError as err:
        got = ("refused", sorted((p.line, p.column, p.message) for p in err.problems))
    try:
        want = ("sums", sums(read_stats(path)))
    except StatsError as err:
        want = ("refused", sorted((p.line, p.column, p.message) for p in err.problems))
    assert got == want
    typed = [a[3] for a in sources if len(a) > 3 and a[3]]
    if got[0] == "sums":
        assert len(typed) == 1  # summed from the typed reader, after the check
        assert typed[0]["date"] == "DATE" and typed[0]["campaign_id"] == "BIGINT"
        assert ("cost" in typed[0]) == (value in PLAIN)
        assert typed[0]["clicks"] == "DOUBLE"


def test_a_typed_read_of_negatives_and_large_ids_keeps_every_value(tmp_path):
    rows = [
        ("2026-01-05", "9223372036854775807", "s1", "100", "10", "1.5", "1", "-2.75"),
        ("2026-01-06", "7", "s2", "0", "0", "0", "0", "-.5"),
    ]
    path = write(tmp_path, "n.csv", rows)
    got = aggregate(path, by=("campaign_id",))
    assert got["campaign_id"].tolist() == [7, 9223372036854775807]
    assert got["revenue"].tolist() == [-0.5, -2.75]
    again = aggregate(path, by=("campaign_id",))  # the cached, typed read
    assert again.equals(got)


def test_three_currencies_are_all_named_as_pandas_names_them(tmp_path):
    rows = [
        plain("2026-01-05", cost="$1.50"),
        plain("2026-01-06", cost="€2.50"),
        plain("2026-01-07", cost="£3.50"),
    ]
    path = write(tmp_path, "c.csv", rows)
    with pytest.raises(StatsError) as duck_err:
        aggregate(path)
    with pytest.raises(StatsError) as pandas_err:
        read_stats(path)
    got = [(p.column, p.value, p.message) for p in duck_err.value.problems]
    assert got == [(p.column, p.value, p.message) for p in pandas_err.value.problems]
    assert got == [("cost", "$ £ €", "mixes currencies")]
