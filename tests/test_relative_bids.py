"""Bids written as changes (``+10%``, ``x1.2``, ``min``, ``rec-5%``) in an account workbook:
read against the exported bids, priced with the campaign's targeting, planned, applied and
read back from the sandbox."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import openpyxl
import pytest

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.relative_bids import ACCEPTED, BidFormError, parse_bid
from toolkit.bulk.result_book import write_result_workbook
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.errors import PlanRefused, WorkbookError
from toolkit.frames.cells import read_table
from toolkit.sandbox import Sandbox

from .conftest import Api

BIDS = {"US": 0.5, "DE": 0.3, "FR": 0.4, "GB": 0.6, "IT": 0.25}


@pytest.fixture()
def sb():
    with Sandbox(campaigns=3, seed=7, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture()
def api(sb: Sandbox) -> Api:
    return Api(sb.url, sb.api_keys[0])


def targeting(api: Api) -> dict[str, Any]:
    """The targeting of the test campaigns: a category, one quality, five countries."""
    cats = api.ok("/api/campaign/list-refs-data", type="category")["category"]
    return {"category": [int(next(iter(cats["push"])))], "quality": ["high"]}


def campaign(api: Api, mode: str = "CPC") -> int:
    target = {**targeting(api), "country": {k: str(v) for k, v in BIDS.items()}}
    return api.new_campaign("push", targeted=False, target=target, mode=mode)


def live_bids(api: Api, cid: int) -> dict[str, float]:
    """Country -> bid, read with plain HTTP (not through the toolkit)."""
    detail = api.item(cid)
    return {code: s["price"] for s in detail["countrySet"] for code in s["geo"].values()}


def price(api: Api, country: str) -> dict[str, float]:
    """The sandbox's price for the test campaigns' targeting in ``country``, asked with plain
    HTTP: ``{"min": ..., "rec": ...}``."""
    body = api.ok("/api/campaign/price", adFormat="push", country=[country], **targeting(api))
    return {"min": body["price"]["minimum"]["price"], "rec": body["price"]["recommend"]["price"]}


def times(bid: float, factor: str) -> float:
    step = Decimal("0.0001")
    return float((Decimal(str(bid)) * Decimal(factor)).quantize(step, ROUND_HALF_UP))


def written(src: Path, dst: Path, cid: int, cells: dict[str, Any], table: str = "countries"):
    """The exported workbook with the bid cells of campaign ``cid`` set (key -> value); a key
    not on the sheet is added as a new row."""
    wb = openpyxl.load_workbook(src)
    ws = wb[table]
    head = {c.value: c.column for c in ws[1]}
    key = "country" if table == "countries" else "item"
    left = dict(cells)
    for row in range(2, ws.max_row + 1):
        here = ws.cell(row, head[key]).value
        if ws.cell(row, head["campaign_id"]).value == cid and here in left:
            ws.cell(row, head["bid"]).value = left.pop(here)
    for k, value in left.items():
        row = ws.max_row + 1
        ws.cell(row, head["campaign_id"]).value = cid
        ws.cell(row, head[key]).value = k
        ws.cell(row, head["bid"]).value = value
    wb.save(dst)
    return dst


@pytest.fixture()
def setup(sb: Sandbox, api: Api, tmp_path: Path):
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
    cid = campaign(api)
    path = export_workbook(client, tmp_path / "account.xlsx", [cid])
    return client, cid, path


# --------------------------------------------------------------------------- the grammar


@pytest.mark.parametrize(
    ("cell", "text", "base", "new"),
    [
        ("+10%", "+10%", None, 0.33),
        ("-5%", "-5%", None, 0.285),
        ("+2,5%", "+2.5%", None, 0.3075),
        (" + 10 % ", "+10%", None, 0.33),
        ("x1.2", "x1.2", None, 0.36),
        ("X1.2", "x1.2", None, 0.36),
        ("×1.2", "x1.2", None, 0.36),
        ("*1.2", "x1.2", None, 0.36),
        ("MIN", "min", "min", 0.3),
        ("rec", "rec", "rec", 0.3),
        ("min+10%", "min+10%", "min", 0.33),
        ("Rec - 5 %", "rec-5%", "rec", 0.285),
        ("-99.99%", "-99.99%", None, 0.0),
        ("+1000%", "+1000%", None, 3.3),
    ],
)
def test_each_form_is_read(cell, text, base, new):
    form = parse_bid(cell)
    assert (form.text, form.base, form.apply(0.30)) == (text, base, new)


@pytest.mark.parametrize(
    "cell",
    ["+10", "10%", "x", "rec-", "rec-5", "--5%", "x0", "x-1", "x10.5", "-100%", "-150%",
     "+1001%", "+1,000%", "minimum", "rec x0.9", "x1,2", "1,234"],
)  # fmt: skip
def test_a_form_that_is_not_one_is_refused_in_one_line(cell):
    with pytest.raises(BidFormError) as err:
        parse_bid(cell)
    assert str(err.value).endswith(ACCEPTED) and "\n" not in str(err.value)


def test_a_number_stays_a_number():
    assert parse_bid(0.35) == 0.35 and parse_bid("0.35") == "0.35" and parse_bid("0,35") == 0.35
    assert parse_bid("abc") == "abc"  # the number reader says what is wrong with it


# --------------------------------------------------------------------------- account workbook


def test_each_form_is_planned_applied_and_read_back(setup, api, tmp_path):
    client, cid, path = setup
    forms = {"US": "+10%", "DE": "x1.2", "FR": "min", "GB": "rec-5%", "IT": "-5%", "NL": "rec"}
    edited = written(path, tmp_path / "edited.xlsx", cid, forms)
    tables = read_workbook(edited)
    assert {c.key: c.form.text for c in tables.bid_forms} == forms
    plan = make_plan(client, tables)
    prices = {k: price(api, k) for k in ("FR", "GB", "NL")}
    want = {
        "US": times(BIDS["US"], "1.1"),
        "DE": times(BIDS["DE"], "1.2"),
        "FR": prices["FR"]["min"],
        "GB": times(prices["GB"]["rec"], "0.95"),
        "IT": times(BIDS["IT"], "0.95"),
        "NL": prices["NL"]["rec"],
    }
    changes = plan.changes().set_index("key")
    assert changes["written"].to_dict() == forms
    assert changes["new"].to_dict() == pytest.approx(want, abs=1e-12)
    assert changes.loc["US", "old"] == BIDS["US"] and pd_na(changes.loc["NL", "old"])
    text = plan.summary(max_calls=None, max_lines=None)
    assert f"bid US 0.50 -> {want['US']:.2f} (+10%)" in text and "(rec-5%)" in text
    assert "+10%" in plan._repr_html_()
    result = plan.apply(client, progress=False)
    assert result.ok
    assert live_bids(api, cid) == pytest.approx({**BIDS, **want}, abs=1e-12)
    book = write_result_workbook(result, tables.desired, tmp_path / "edited.result.xlsx")
    sheet = read_table(book, sheet="countries")
    rows = sheet[sheet["campaign_id"] == cid].set_index("country")
    for code in forms:  # min and rec rows too: the bid sent, not an empty cell
        assert rows.loc[code, "bid"] == pytest.approx(want[code], abs=1e-12), code
        assert rows.loc[code, "outcome"] == "applied", code


def pd_na(value: Any) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_the_same_workbook_applied_again_changes_nothing(setup, api, tmp_path):
    client, cid, path = setup
    edited = written(path, tmp_path / "edited.xlsx", cid, {"US": "+10%", "DE": "rec", "FR": "x2"})
    assert make_plan(client, read_workbook(edited)).apply(client, progress=False).ok
    after = live_bids(api, cid)
    again = make_plan(client, read_workbook(edited))
    assert len(again) == 0 and again.conflicts.empty
    assert live_bids(api, cid) == after and after["US"] == times(BIDS["US"], "1.1")


def test_a_bid_moved_since_the_export_is_a_conflict(setup, api, tmp_path):
    client, cid, path = setup
    edited = written(path, tmp_path / "edited.xlsx", cid, {"US": "+10%"})
    api.ok("/api/campaign/drop-country", id=cid, items=["US"])
    api.ok("/api/campaign/add-country", id=cid, items={"US": "0.7"})
    plan = make_plan(client, read_workbook(edited))
    assert len(plan) == 0
    assert plan.conflicts[["base", "live", "desired"]].values.tolist() == [[0.5, 0.7, 0.55]]


def test_the_bid_jump_guard_judges_the_new_bid(setup, api, tmp_path):
    client, cid, path = setup
    edited = written(path, tmp_path / "edited.xlsx", cid, {"US": "x4"})
    with pytest.raises(PlanRefused) as err:
        make_plan(client, read_workbook(edited))
    assert err.value.guard == "bid_jump" and "0.50 -> 2.00" in err.value.details[0]
    assert live_bids(api, cid)["US"] == BIDS["US"]


def test_bad_forms_are_refused_with_their_cells(setup, api, tmp_path):
    client, cid, path = setup
    bad = {"US": "+10", "DE": "10%", "FR": "rec-", "GB": "x0", "IT": "-100%", "NL": "+10%"}
    edited = written(path, tmp_path / "bad.xlsx", cid, bad)
    with pytest.raises(WorkbookError) as err:
        read_workbook(edited)
    found = {p.value: (p.sheet, p.column, p.message) for p in err.value.problems}
    assert set(found) == set(bad.values())
    assert all(sheet == "countries" and col == "bid" for sheet, col, _ in found.values())
    assert all(ACCEPTED in m for v, (_, _, m) in found.items() if v != "+10%")
    assert "has no bid for NL to change" in found["+10%"][2]  # a new row: min or rec only
    rows = {p.value: p.row for p in err.value.problems}
    sheet = openpyxl.load_workbook(edited)["countries"]
    assert all(sheet.cell(rows[v], 4).value == v for v in bad.values())  # the cells named
    assert live_bids(api, cid) == BIDS


def test_min_and_rec_on_a_bid_rule_are_refused(setup, tmp_path):
    client, cid, path = setup
    client.bid_rules.add(cid, ["ab12"], 0.2)
    path = export_workbook(client, tmp_path / "rules.xlsx", [cid])
    edited = written(path, tmp_path / "bad.xlsx", cid, {"ab12": "min"}, table="bid_rules")
    with pytest.raises(WorkbookError, match="min and rec are prices of a country"):
        read_workbook(edited)
    ok = written(path, tmp_path / "ok.xlsx", cid, {"ab12": "x0.9"}, table="bid_rules")
    plan = make_plan(client, read_workbook(ok))
    assert plan.changes()[["old", "new", "written"]].values.tolist() == [[0.2, 0.18, "x0.9"]]


def test_below_the_minimum_is_refused_with_the_cell(setup, api, tmp_path):
    client, cid, path = setup
    edited = written(path, tmp_path / "low.xlsx", cid, {"US": "min-5%"})
    with pytest.raises(WorkbookError) as err:
        make_plan(client, read_workbook(edited))
    (problem,) = err.value.problems
    floor = price(api, "US")["min"]
    assert (problem.sheet, problem.column, problem.value) == ("countries", "bid", "min-5%")
    assert f"below the service's minimum {floor}" in problem.message
    assert live_bids(api, cid) == BIDS


def test_a_price_that_cannot_be_read_refuses_the_plan(sb, setup, api, tmp_path):
    client, cid, path = setup
    edited = written(path, tmp_path / "e.xlsx", cid, {"US": "rec", "DE": "min", "FR": "+10%"})
    tables = read_workbook(edited)
    sb.faults.configure({"rules": [{"status": 503, "path": "/api/campaign/price"}]})
    try:
        with pytest.raises(WorkbookError) as err:
            make_plan(client, tables)
    finally:
        sb.faults.clear()
    assert sorted(p.value for p in err.value.problems) == ["min", "rec"]
    assert all("price could not be read" in p.message for p in err.value.problems)
    assert live_bids(api, cid) == BIDS


def test_a_price_in_another_unit_is_refused(sb, api, tmp_path):
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
    cid = campaign(api, mode="CPM")  # a push price is per click
    path = export_workbook(client, tmp_path / "cpm.xlsx", [cid])
    edited = written(path, tmp_path / "e.xlsx", cid, {"US": "min", "DE": "+10%"})
    with pytest.raises(WorkbookError, match="buys CPM and the service prices push CPC"):
        make_plan(client, read_workbook(edited))
    assert live_bids(api, cid) == BIDS


def test_a_relative_form_needs_the_exported_state(setup, tmp_path):
    client, cid, path = setup
    wb = openpyxl.load_workbook(path)
    for name in [n for n in wb.sheetnames if n.startswith("_base_")]:
        del wb[name]
    wb.save(tmp_path / "nobase.xlsx")
    edited = written(tmp_path / "nobase.xlsx", tmp_path / "e.xlsx", cid, {"US": "+10%"})
    with pytest.raises(WorkbookError, match="no exported state"):
        read_workbook(edited)


def price_requests(sb: Sandbox) -> int:
    return sum(n for key, n in sb.stats().items() if "/api/campaign/price" in key)


def test_prices_are_asked_only_for_min_and_rec_and_once_per_query(sb, api, tmp_path):
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
    one, two = campaign(api), campaign(api)  # the same targeting: the same queries
    path = export_workbook(client, tmp_path / "two.xlsx", [one, two])
    edited = written(path, tmp_path / "e1.xlsx", one, {"US": "+10%", "DE": "x0.9"})
    before = price_requests(sb)
    make_plan(client, read_workbook(edited))
    assert price_requests(sb) == before  # no min or rec: no price asked
    edited = written(edited, tmp_path / "e2.xlsx", one, {"FR": "min", "GB": "rec"})
    edited = written(edited, tmp_path / "e3.xlsx", two, {"FR": "rec-5%", "GB": "min"})
    plan = make_plan(client, read_workbook(edited), allow={"bid_jump"})
    assert price_requests(sb) == before + 2  # FR and GB, each asked once for both campaigns
    new = plan.changes().set_index(["campaign_id", "key"])["new"]
    assert (
        new[(one, "FR")] == price(api, "FR")["min"] and new[(two, "GB")] == price(api, "GB")["min"]
    )
