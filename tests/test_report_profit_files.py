"""The profit of a bid report in its files, against a sandbox over real HTTP: the bid rules as
a section of the HTML page, a ``bid rules`` sheet read back with openpyxl and a PDF page; the
rows' profit columns and the money per profit zone, formatted as money."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.reports import files, profit_view, rule_rows, view
from toolkit.reports.excel import BIDS_SHEET, SUMMARY_SHEET
from toolkit.reports.profit import PROFIT_ZONE_DTYPE, PROFIT_ZONES
from toolkit.sandbox import Sandbox


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=8, seed=11, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def client(sb: Sandbox) -> toolkit.Client:
    return toolkit.Client(sb.url, sb.api_keys[0])


@pytest.fixture(scope="module")
def exported(sb: Sandbox, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("stats") / "stats.csv"
    sb.stats_export(path, days=7, seed=1)
    return path


@pytest.fixture(scope="module")
def report(client, exported) -> toolkit.BidReport:
    payouts = exported.parent / "payouts.csv"
    return toolkit.bid_report(
        client, progress=False, history=None, include="all", stats=exported, payouts=payouts
    )


@pytest.fixture(scope="module")
def plain(client) -> toolkit.BidReport:
    return toolkit.bid_report(client, progress=False, history=None, include="all")


class Rows(HTMLParser):
    """The ``<h2>`` titles of a page, the rows of each table (``all``) and of each table
    with a caption, by its caption."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.titles: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.all: list[list[list[str]]] = []
        self._where: list[str] | None = None
        self._rows: list[list[str]] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("h2", "caption"):
            self._where = []
        elif tag == "table":
            self._rows = []
            self.all.append(self._rows)
        elif tag == "tr":
            self._rows.append([])
        elif tag in ("td", "th"):
            self._where = []

    def handle_endtag(self, tag):
        text = "".join(self._where or [])
        if tag == "h2":
            self.titles.append(text)
        elif tag == "caption":
            self.tables[text] = self._rows
        elif tag in ("td", "th"):
            self._rows[-1].append(text)
        if tag in ("h2", "caption", "td", "th"):
            self._where = None

    def handle_data(self, data):
        if self._where is not None:
            self._where.append(data)


def read_page(path: Path) -> tuple[str, Rows]:
    text = path.read_text(encoding="utf-8")
    rows = Rows()
    rows.feed(text)
    return text, rows


def money(x: float) -> str:
    return f"{x:,.2f}"


# --------------------------------------------------------------------------- HTML


def test_the_page_shows_the_bid_rules_and_the_profit_as_money(report, tmp_path):
    rules = report.bid_rules
    assert len(rules) > 10 and rules["clicks"].notna().any()
    text, page = read_page(files.to_html(report, tmp_path / "bids.html", max_campaigns=1))
    assert [t for t in page.titles if t in ("Profit", "Bid rules")] == ["Profit", "Bid rules"]
    assert page.titles.index("Bid rules") > page.titles.index("All bids")
    assert "No price estimate: the service prices countries, not sources or subIds." in text
    table = page.tables[f"Bid rules: {len(rules)} rows"]
    header, body = table[0], table[1:]
    assert header == list(profit_view.RULE_COLUMNS) and len(body) == len(rules)
    costly = rules.loc[rules["cost"].idxmax()]
    row = next(r for r in body if r[header.index("key")] == costly["key"])
    assert row[header.index("cost")] == money(costly["cost"])
    assert row[header.index("clicks")] == f"{costly['clicks']:,.0f}"
    assert row[header.index("profit_zone")] == str(costly["profit_zone"])
    be = row[header.index("break_even_bid")]
    assert float(be) == pytest.approx(costly["break_even_bid"], abs=5e-5)
    # every row's note shares "no price estimate": said once above, not in each row
    assert not any(rule_rows.NO_PRICE in r[header.index("note")] for r in body)
    zones = page.tables["Bid rules per profit zone"]
    counts = {r[0]: int(r[1]) for r in zones[1:]}
    assert counts["all"] == len(rules)
    for zone in PROFIT_ZONES:
        assert counts[zone] == int((rules["profit_zone"] == zone).sum())


def test_the_rows_table_has_the_profit_columns_as_money(report, plain, tmp_path):
    _, page = read_page(files.to_html(report, tmp_path / "bids.html", max_campaigns=1))
    rows = next(t for t in page.all if t and "profit_day_now" in t[0])
    header, body = rows[0], rows[1:]
    assert header[-len(view.PROFIT_TABLE_COLUMNS) :] == list(view.PROFIT_TABLE_COLUMNS)
    assert len(body) == len(report.frame)
    frame = report.frame
    for r in body:
        cid, country = int(r[0]), r[header.index("country")]
        one = frame[(frame["campaign_id"] == cid) & (frame["country"] == country)].iloc[0]
        shown = r[header.index("profit_day_now")]
        expected = "unknown" if np.isnan(one["profit_day_now"]) else money(one["profit_day_now"])
        assert shown == expected
        assert r[header.index("revenue")] == money(one["revenue"])
    day = frame["profit_day_now"]
    assert day.notna().any() and day.isna().any()  # both kinds were checked
    zones = page.tables[next(c for c in page.tables if "per profit zone" in c)]
    total = next(r for r in zones if r[0] == "all")
    assert total[zones[0].index("profit now (USD a day)")] == money(day.sum())
    _, bare = read_page(files.to_html(plain, tmp_path / "plain.html", max_campaigns=1))
    assert "Profit" not in bare.titles and "Bid rules" not in bare.titles
    assert not any(t and "profit_zone" in t[0] for t in bare.all)


# --------------------------------------------------------------------------- XLSX


def test_the_workbook_has_a_bid_rules_sheet(report, plain, tmp_path):
    rules = report.bid_rules
    book = openpyxl.load_workbook(files.to_excel(report, tmp_path / "bids.xlsx"))
    assert book.sheetnames[:3] == [SUMMARY_SHEET, BIDS_SHEET, profit_view.RULES_SHEET]
    ws = book[profit_view.RULES_SHEET]
    header = [c.value for c in ws[1]]
    assert header == list(rule_rows.COLUMNS) and ws.max_row == len(rules) + 1
    back = pd.DataFrame([[c.value for c in row] for row in ws.iter_rows(min_row=2)], columns=header)
    assert back["campaign_id"].tolist() == rules["campaign_id"].tolist()
    assert back["key"].astype(str).tolist() == rules["key"].tolist()
    assert back["bid"].tolist() == pytest.approx(rules["bid"].tolist())
    assert back["cost"].tolist() == pytest.approx(rules["cost"].tolist())
    assert back["profit_zone"].tolist() == rules["profit_zone"].astype(str).tolist()
    assert back["note"].str.startswith(rule_rows.NO_PRICE).all()
    formats = {name: ws.cell(row=2, column=header.index(name) + 1).number_format for name in header}
    assert formats["bid"] == formats["break_even_bid"] == formats["max_profitable_bid"] == "0.0000"
    assert formats["cost"] == formats["revenue"] == formats["payout"] == "#,##0.00"
    assert formats["clicks"] == formats["conversions"] == "#,##0"
    bids = book[BIDS_SHEET]
    head = [c.value for c in bids[1]]
    cell = bids.cell(row=2, column=head.index("profit_day_now") + 1)
    assert cell.number_format == "#,##0.00"
    assert bids.cell(row=2, column=head.index("max_profitable_bid_low") + 1).number_format == (
        "0.0000"
    )
    bare = openpyxl.load_workbook(files.to_excel(plain, tmp_path / "plain.xlsx"))
    assert profit_view.RULES_SHEET not in bare.sheetnames


# --------------------------------------------------------------------------- PDF


def pdf_pages(path: Path) -> list[str]:
    pypdf = pytest.importorskip("pypdf")
    return [page.extract_text() for page in pypdf.PdfReader(path).pages]


def test_the_pdf_has_a_page_of_profit_and_the_costliest_bid_rules(report, plain, tmp_path):
    rules = report.bid_rules
    pages = pdf_pages(files.to_pdf(report, tmp_path / "bids.pdf", max_campaigns=1))
    bare = pdf_pages(files.to_pdf(plain, tmp_path / "plain.pdf", max_campaigns=1))
    assert len(pages) == len(bare) + 2
    first, second = pages[1], re.sub(r"\s+", " ", pages[2])
    assert "Profit and bid rules" in first and "Bids and money per profit zone" in first
    assert "No price estimate" in first and f"{len(rules)} bid rules" in first
    shown = min(profit_view.PDF_RULES, len(rules))
    assert f"The {shown} bid rules that cost most, of {len(rules)}" in second
    by_cost = rules.sort_values("cost", ascending=False)
    top = by_cost.iloc[0]
    assert f"{top['key']}" in second and money(top["cost"]) in second
    assert len(rules) > shown  # so that the cheapest is left out
    words, last = set(second.split()), by_cost["cost"].iloc[shown - 1]
    dear, cheap = (
        set(by_cost["key"][by_cost["cost"] > last]),
        set(by_cost["key"][by_cost["cost"] < last]),
    )
    assert len(dear) > shown // 2 and len(cheap - dear) > 0
    assert dear <= words and not (cheap - dear) & words
    assert not any("Profit and bid rules" in p for p in bare)


# --------------------------------------------------------------------------- tables


def test_money_per_profit_zone_by_hand():
    zone = pd.Series(["unprofitable", "uncertain", "unprofitable"], dtype=PROFIT_ZONE_DTYPE)
    frame = pd.DataFrame(
        {
            "campaign_id": [1, 2, 2],
            "profit_zone": zone,
            "clicks": [1000.0, 10.0, 500.0],
            "conversions": [3.0, 0.0, 1.0],
            "revenue": [30.0, 0.0, 8.0],
            "cost": [50.0, 1.0, 20.0],
            "spend_estimate": [4.0, np.nan, 1.0],
            "profit_day_now": [-2.0, np.nan, -0.5],
            "profit_day_proposed": [0.0, 0.25, 0.0],
        }
    )
    t = profit_view.by_profit_zone(frame)
    assert list(t.index) == [*PROFIT_ZONES, "all"]
    lose = t.loc["unprofitable"]
    assert (lose["bids"], lose["campaigns"], lose["clicks"]) == (2, 2, 1500.0)
    assert (lose["net"], lose["profit_day_now"], lose["profit_unknown"]) == (-32.0, -2.5, 0)
    unsure = t.loc["uncertain"]
    assert np.isnan(unsure["profit_day_now"]) and unsure["profit_unknown"] == 1
    assert np.isnan(unsure["spend_estimate"])  # unknown, not 0
    assert t.loc["profitable", "bids"] == 0 and t.loc["profitable", "profit_day_now"] == 0.0
    assert t.loc["all", "campaigns"] == 2 and t.loc["all", "profit_day_proposed"] == 0.25
    assert t.loc["all", "profit_day_now"] == -2.5 and t.loc["all", "profit_unknown"] == 1
    text = profit_view.as_text(t)
    assert text.loc["unprofitable", ["bids", "clicks", "net (USD, window)"]].tolist() == [
        "2",
        "1,500",
        "-32.00",
    ]
    assert text.loc["uncertain", "profit now (USD a day)"] == "unknown"


def test_the_shown_notes_and_the_pdf_rows():
    rules = pd.DataFrame(
        {
            "campaign_id": [1, 1, 2],
            "mode": ["CPC"] * 3,
            "level": ["subid", "subid", "source or subid"],
            "key": ["a1", "b2", "77"],
            "bid": [0.05, 0.1, 0.2],
            "clicks": [100.0, 900.0, np.nan],
            "conversions": [1.0, 2.0, np.nan],
            "revenue": [5.0, 9.0, np.nan],
            "cost": [5.0, 90.0, np.nan],
            "payout": [5.0, 4.5, np.nan],
            "break_even_bid": [0.05, 0.01, np.nan],
            "max_profitable_bid_low": [0.01, 0.004, np.nan],
            "max_profitable_bid": [0.04, 0.009, np.nan],
            "profit_zone": pd.Series(
                ["uncertain", "unprofitable", "no statistics"], dtype=PROFIT_ZONE_DTYPE
            ),
            "note": [
                rule_rows.NO_PRICE,
                rule_rows.NO_PRICE,
                f"{rule_rows.NO_PRICE}; the statistics have it at neither level: not joined",
            ],
        }
    )
    shown = profit_view.rules_shown(rules)
    assert shown["note"].tolist() == ["", "", "the statistics have it at neither level: not joined"]
    top = profit_view.pdf_rules(rules, 2)
    assert top["key"].tolist() == ["b2", "a1"]  # the costliest first
    assert top["bid"].tolist() == ["0.10", "0.05"] or top["bid"].tolist() == ["0.1", "0.05"]
    everything = profit_view.pdf_rules(rules)
    assert everything["note"].iloc[2].endswith("...") and len(everything["note"].iloc[2]) == 32
