"""Bids written as changes in action workbooks: settled against the live bids and the
service's prices, applied, read back from the sandbox, and applied once unless asked again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit.bulk.relative_bids import ACCEPTED
from toolkit.bulk.undo import undo
from toolkit.bulk.workbook.actions import plan_actions, write_template
from toolkit.bulk.workbook.actions_relative import AppliedBefore
from toolkit.errors import WorkbookError
from toolkit.sandbox import Sandbox

from .conftest import Api
from .test_relative_bids import BIDS, campaign, live_bids, price, price_requests, times


@pytest.fixture()
def sb():
    with Sandbox(campaigns=3, seed=7, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture()
def api(sb: Sandbox) -> Api:
    return Api(sb.url, sb.api_keys[0])


@pytest.fixture()
def client(sb: Sandbox) -> Any:
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


def book(tmp_path: Path, rows: list[dict[str, Any]], name: str = "actions.xlsx") -> Path:
    return write_template(tmp_path / name, "t", [], rows)


def row(cid: Any, item: str, bid: Any, action: str = "set", target: str = "country") -> dict:
    return {"action": action, "target": target, "campaign": cid, "item": item, "bid": bid}


def rule_bids(api: Api, cid: int) -> dict[str, float]:
    rules = api.ok("/api/campaign/bid-rules", id=cid)["rules"]
    return {item: r["bid"] for r in rules for item in r["items"]}


def test_each_form_is_planned_applied_and_read_back(client, api, tmp_path):
    one, two = campaign(api), campaign(api)
    client.bid_rules.add(one, ["ab12"], 0.2)
    path = book(
        tmp_path,
        [
            row(f"{one}", "US", "+10%"),
            row(one, "DE", "x1.2"),
            row(one, "NL", "min", action="add"),
            row(one, "GB", "rec-5%"),
            row(one, "FR", "min+10%", action="add"),  # FR is targeted: add sets its bid
            row(one, "ab12", "-5%", target="bid_rule"),
            row(two, "US", "x0.8"),
        ],
    )
    plan = plan_actions(client, path)
    changes = plan.changes()
    assert changes["written"].tolist().count("+10%") == 1 and len(changes) == 7
    result = plan.apply(client, progress=False)
    assert result.ok
    prices = {k: price(api, k) for k in ("NL", "GB", "FR")}
    assert live_bids(api, one) == pytest.approx(
        {
            **BIDS,
            "US": times(BIDS["US"], "1.1"),
            "DE": times(BIDS["DE"], "1.2"),
            "NL": prices["NL"]["min"],
            "GB": times(prices["GB"]["rec"], "0.95"),
            "FR": times(prices["FR"]["min"], "1.1"),
        },
        abs=1e-12,
    )
    assert live_bids(api, two) == {**BIDS, "US": times(BIDS["US"], "0.8")}
    assert rule_bids(api, one) == {"ab12": 0.19}


def test_a_change_applied_once_is_refused_the_second_time(client, api, tmp_path):
    cid = campaign(api)
    path = book(tmp_path, [row(cid, "US", "+10%"), row(cid, "DE", "rec")])
    first = plan_actions(client, path).apply(client, progress=False)
    assert first.ok and live_bids(api, cid)["US"] == 0.55
    with pytest.raises(AppliedBefore) as err:
        plan_actions(client, path)
    text = str(err.value)
    assert f"run {first.run_id}" in text and "actions row 2" in text and "\n" not in text
    assert "again=True" in text and "--again" in text
    assert live_bids(api, cid)["US"] == 0.55  # nothing sent
    copied = book(tmp_path, [row("push", "US", "+10%")], "other.xlsx")  # same change elsewhere
    with pytest.raises(AppliedBefore):
        plan_actions(client, copied)
    other = book(tmp_path, [row(cid, "US", "+5%")], "five.xlsx")  # another change goes
    assert plan_actions(client, other).changes()["new"].tolist() == [times(0.55, "1.05")]
    again = plan_actions(client, path, again=True)
    assert again.changes()["new"].tolist() == [times(0.55, "1.1")]  # on the new bid, said so


def test_an_undone_change_may_be_applied_again(sb, client, api, tmp_path):
    cid = campaign(api)
    path = book(tmp_path, [row(cid, "US", "x1.2")])
    first = plan_actions(client, path).apply(client, progress=False)
    undo(client, first.run_id, progress=False)
    assert live_bids(api, cid)["US"] == BIDS["US"]
    assert plan_actions(client, path).changes()["new"].tolist() == [0.6]
    assert price_requests(sb) == 0  # x1.2 needs no price


def test_the_command_line_goes_again_with_again(sb, api, tmp_path, capsys):
    from toolkit.cli import main

    cid = campaign(api)
    path = book(tmp_path, [row(cid, "US", "+10%")])
    base = ["--base-url", sb.url, "--api-key-file", str(key_file(sb, tmp_path))]
    assert main(["apply", str(path), "--yes", *base]) == 0
    assert main(["apply", str(path), "--yes", *base]) == 2
    assert "--again" in capsys.readouterr().err
    assert main(["apply", str(path), "--yes", "--again", *base]) == 0
    assert live_bids(api, cid)["US"] == times(0.55, "1.1")


def key_file(sb: Sandbox, tmp_path: Path) -> Path:
    path = tmp_path / "key.txt"
    path.write_text(sb.api_keys[0] + "\n")
    return path


def test_bad_forms_are_refused_with_their_rows(client, api, tmp_path):
    cid = campaign(api)
    bad = [
        row(cid, "US", "+10"),
        row(cid, "DE", "10%"),
        row(cid, "FR", "x"),
        row(cid, "GB", "rec-5"),
        row(cid, "IT", "-100%"),
        row(cid, "ab12", "min", target="bid_rule"),
    ]
    with pytest.raises(WorkbookError) as err:
        plan_actions(client, book(tmp_path, bad))
    found = {p.row: (p.column, p.value, p.message) for p in err.value.problems}
    assert sorted(found) == [2, 3, 4, 5, 6, 7]
    assert all(col == "bid" for col, _, _ in found.values())
    assert [v for _, v, _ in found.values()] == [r["bid"] for r in bad]
    assert all(ACCEPTED in m for r, (_, _, m) in found.items() if r < 7)
    assert "min and rec are prices of a country" in found[7][2]
    assert live_bids(api, cid) == BIDS


def test_a_change_needs_a_bid_to_change(client, api, tmp_path):
    cid = campaign(api)
    path = book(
        tmp_path, [row(cid, "NL", "+10%", action="add"), row(cid, "cafe", "x2", target="bid_rule")]
    )
    with pytest.raises(WorkbookError) as err:
        plan_actions(client, path)
    messages = {p.row: p.message for p in err.value.problems}
    assert "has no bid for NL to change; write a number, min or rec" in messages[2]
    assert "has no bid for cafe to change; write a number" in messages[3]
    assert live_bids(api, cid) == BIDS


def test_a_bid_the_spreadsheet_turned_into_a_percentage_is_refused(client, api, tmp_path):
    import openpyxl

    cid = campaign(api)
    path = book(tmp_path, [row(cid, "US", 0.1), row(cid, "DE", 0.35)])
    wb = openpyxl.load_workbook(path)
    wb["actions"]["E2"].number_format = "0%"  # +10% typed in a General cell: 0.1 shown 10%
    wb.save(path)
    with pytest.raises(WorkbookError) as err:
        plan_actions(client, path)
    (problem,) = err.value.problems
    assert (problem.row, problem.column, problem.value) == (2, "bid", 0.1)
    assert "shown as a percentage" in problem.message and "'+10%" in problem.message
    assert live_bids(api, cid) == BIDS


def test_row_problems_and_form_problems_are_reported_together(sb, client, api, tmp_path):
    import openpyxl

    cid, cpm = campaign(api), campaign(api, mode="CPM")
    rows = [
        row(9999999, "US", "+10%"),  # a row problem: no such campaign
        row(cid, "NL", "+10%", action="add"),  # a form problem: no bid to change
        row(cid, "DE", "+10"),  # a form that is not one
        row(cpm, "US", "rec"),  # a form problem: a CPM campaign, a push price per click
        row(cid, "FR", 0.1),  # +10% the spreadsheet made 0.1
        row(cid, "US", "x9"),  # a good row: no problem
    ]
    path = book(tmp_path, rows)
    wb = openpyxl.load_workbook(path)
    wb["actions"]["E6"].number_format = "0%"
    wb.save(path)
    before = price_requests(sb)
    with pytest.raises(WorkbookError) as err:
        plan_actions(client, path)
    found = {p.row: p.message for p in err.value.problems}
    assert sorted(found) == [2, 3, 4, 5, 6]
    assert "9999999 is not in the account" in found[2]
    assert "has no bid for NL to change" in found[3]
    assert ACCEPTED in found[4]
    assert "buys CPM and the service prices push CPC" in found[5]
    assert "shown as a percentage" in found[6]
    assert price_requests(sb) == before  # known without asking a price
    assert live_bids(api, cid) == BIDS and live_bids(api, cpm) == BIDS
