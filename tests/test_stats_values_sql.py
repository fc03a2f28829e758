"""The short tests of the DuckDB value rules (a plain value as written is classed and read
without stripping it or running the full grammar) give what the full rules give, and a file
of plain values is checked in one scan: values next to those short tests (blanks around a
plain value, leading zeros, 19-digit ids, blanks DuckDB trims that trackers' rules do not),
read by pandas and DuckDB alike."""

from __future__ import annotations

import re

import duckdb
import pandas as pd
import pytest

from tests.trackers.value_quirks import export, plain
from toolkit.errors import StatsError
from toolkit.stats import aggregate, duck, read_stats, values, values_sql
from toolkit.stats.schema import METRICS

#: Values on either side of the short tests, with the blanks the rules strip and some they
#: do not (U+3000, U+2009: DuckDB's trim() strips them, the rules do not).
EDGES = [
    "", " ", "\t", "\u00a0", "12", "-12", "007", " 12 ", "\t12", "12\r\n", "\u00a012",
    "12\u202f", "\u300012", "12\u2009", "1.5", "-1.5", ".5", "-.5", "12.", "-", ".", "1.234",
    "-1.234", "0.123", "1234.567", "12.3456", " 1.234", "1.234\u00a0", "+12", "1e5", "nan",
    "inf", "1_000", "0x10", "1,234", "1 234", "$1,237.02", "(15.00)", "12.5%", "€12,50",
    "1.234,5", "١٢",
]  # fmt: skip


def duck_classes(raw: list[str]) -> list[str]:
    con = duckdb.connect()
    con.execute("CREATE TABLE v (i INTEGER, x VARCHAR)")
    con.executemany("INSERT INTO v VALUES (?, ?)", list(enumerate(raw)))
    relation, _ = values_sql.shape_sql("v", None, {"x": "cost"}, {})
    return [r[0] for r in con.execute(f"SELECT __c0 FROM {relation} ORDER BY i").fetchall()]


def pandas_classes(raw: list[str]) -> list[str]:
    u = pd.Series(raw, dtype=object).str.strip(values.BLANKS)
    cls, groups = values._classes(u)
    cur = (groups[3] + groups[7]).where(cls.isin(["a", "n", "d", "c"]), "")
    return (cls + cur).tolist()


def test_the_sql_classes_of_values_are_the_pandas_ones():
    got = duck_classes(EDGES)
    assert got == pandas_classes(EDGES)
    assert got[EDGES.index(" 12 ")] == "i" and got[EDGES.index(" 1.234")] == "q"
    assert got[EDGES.index("\u300012")] == "b"  # not a blank the rules strip


def write_rows(tmp_path, name: str, rows: list[tuple[str, ...]]):
    path = tmp_path / name
    path.write_bytes(export(rows))
    return path


def outcome(read) -> tuple[str, object]:
    try:
        frame = read()
    except StatsError as err:
        # a file's problem shows the example that decided it, stripped, on both paths
        got = [(p.line or 0, p.column, p.message, "" if p.line else p.value) for p in err.problems]
        return "problems", sorted(got)
    return "sums", {m: round(float(frame[m].sum()), 6) for m in METRICS}


@pytest.mark.parametrize(
    "row",
    [
        plain(" 2026-01-05", cid=" 7", clicks="\t10 ", cost="1.50\u00a0"),
        plain("2026-01-05\t", cid="007", clicks="10", cost=" 1.234"),
        plain("2026-1-5", cid="7.0", clicks="\u00a0", cost="\t"),
        plain("2026-01-05", cid="9223372036854775807", clicks="10", cost="-.5"),
        plain("2026-01-05", cid="9223372036854775808", clicks="10", cost="1.50"),
        plain("2026-01-05", cid="0", clicks="\u300010", cost="12."),
        plain("-026-01-05", cid="\u30007", clicks="+10", cost="1.5\u2009"),
        plain("2026-02-30", cid="000000000000000000007", clicks="1e1", cost="nan"),
        plain("2026-01-05", clicks=" 1,234", cost="\t1,5"),
        plain("2026-01-05", clicks="1.234\u00a0", cost="2"),
    ],
)
def test_values_next_to_the_short_tests_read_alike(tmp_path, row):
    path = write_rows(tmp_path, "e.csv", [plain("2026-01-04"), row])
    assert outcome(lambda: aggregate(path)) == outcome(lambda: read_stats(path))


def test_a_plain_file_is_checked_in_one_scan_and_another_in_two(tmp_path, monkeypatch):
    scans: list[values.Rules] = []
    real = duck._scan

    def counted(con, mapping, rules, *rest):
        scans.append(rules)
        return real(con, mapping, rules, *rest)

    monkeypatch.setattr(duck, "_scan", counted)
    rows = [plain("2026-01-05"), plain("2026-01-06", clicks=" 12", cost="\t2.25")]
    assert aggregate(write_rows(tmp_path, "p.csv", rows))["clicks"].tolist() == [22]
    assert len(scans) == 1
    scans.clear()
    money = [plain("2026-01-05", cost="$1,237.02"), plain("13/01/2026")]
    assert aggregate(write_rows(tmp_path, "m.csv", money))["cost"].sum() == 1238.52
    assert len(scans) == 2 and scans[1].date.order == "dmy"
    assert scans[1].numbers["cost"] == values.NumberRule(".", plain=False)


def test_a_plain_row_is_a_row_whose_every_cell_matches_its_own_short_test():
    """The one pattern over a row's joined cells (:func:`values_sql.plain_row`) says what the
    cells' own patterns say together, for cells next to them, missing cells and cells that
    hold the joining ``|``."""
    days = ["2026-01-05", "2026-1-05", " 2026-01-05", "2026-01-05|7", "", None]
    ids = ["7", "007", "9223372036854775807", "7|1", "", None]
    numbers = [e for e in EDGES if "\n" not in e] + ["1|2", "|", "12|", None]
    rows = [(d, i, n, "10") for d in days for i in ids for n in numbers]
    rows += [("2026-01-05", "7", "1", "2|3"), ("2026-01-05", "7|1", "2", "3")]
    con = duckdb.connect()
    con.execute("CREATE TABLE r (k INTEGER, d VARCHAR, i VARCHAR, a VARCHAR, b VARCHAR)")
    con.executemany("INSERT INTO r VALUES (?, ?, ?, ?, ?)", [(k, *r) for k, r in enumerate(rows)])
    sql = values_sql.plain_row("d", "i", ["a", "b"], {})
    got = [bool(r[0]) for r in con.execute(f"SELECT {sql} FROM r ORDER BY k").fetchall()]

    def own(value, pattern):
        return value is not None and re.fullmatch(pattern.strip("^$"), value) is not None

    want = [
        own(d, values_sql.PLAIN_DAY)
        and own(i, values_sql.PLAIN_ID)
        and own(a, values_sql.PLAIN)
        and own(b, values_sql.PLAIN)
        for d, i, a, b in rows
    ]
    assert got == want and sum(got) >= 10
    assert values_sql.plain_row("d", "i", ["a"], {"a": "DOUBLE"}) is None  # typed: no row test


@pytest.mark.parametrize("cost", ["1|2", "|2", "2|"])
def test_a_cell_holding_a_bar_is_read_as_pandas_reads_it(tmp_path, cost):
    path = write_rows(tmp_path, "b.csv", [plain("2026-01-04"), plain("2026-01-05", cost=cost)])
    assert outcome(lambda: aggregate(path)) == outcome(lambda: read_stats(path))
    assert outcome(lambda: aggregate(path))[0] == "problems"
