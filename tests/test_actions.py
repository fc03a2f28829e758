"""Action workbooks (the templates) read into plans, against the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openpyxl
import pytest

import toolkit
from toolkit.bulk.workbook.actions import (
    COLUMNS,
    TEMPLATES,
    plan_actions,
    write_template,
    write_templates,
)
from toolkit.errors import WorkbookError
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def client():
    with Sandbox(campaigns=10, seed=5, accounts=1) as sb:
        yield toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


def _cells(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    book = openpyxl.load_workbook(path)
    return {ws.title: list(ws.iter_rows(values_only=True)) for ws in book.worksheets}


def test_committed_templates_equal_what_write_templates_writes(tmp_path):
    written = write_templates(tmp_path)
    rules = {"rules.xlsx"}  # the rules template: tests/test_rules_sheet.py
    assert sorted(p.name for p in written) == sorted(
        p.name for p in (ROOT / "templates").glob("*.xlsx") if p.name not in rules
    )
    for path in written:
        assert _cells(ROOT / "templates" / path.name) == _cells(path), (
            f"templates/{path.name} differs from write_templates(): regenerate it with "
            "toolkit.bulk.workbook.actions.write_templates('templates')"
        )


def test_templates_keep_examples_off_the_actions_sheet():
    for name, (title, _text, examples) in TEMPLATES.items():
        cells = _cells(ROOT / "templates" / name)
        assert cells["README"][0][0] == title
        assert cells["actions"] == [COLUMNS], f"{name}: the actions sheet must be empty"
        assert len(cells["examples"]) == len(examples) + 1


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_untouched_template_plans_nothing(client, name):
    plan = plan_actions(client, ROOT / "templates" / name)
    assert len(plan) == 0
    assert any("no rows" in w for w in plan.warnings)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_template_examples_plan_when_copied_into_actions(client, name, tmp_path):
    title, text, examples = TEMPLATES[name]
    path = write_template(tmp_path / name, title, text, examples)
    plan = plan_actions(client, path, allow={"bulk_archive"})
    assert len(plan.to_frame()) == len(plan)
    assert not any("no rows" in w for w in plan.warnings)


def test_blacklist_across_all_campaigns_is_one_call_and_applies(client, tmp_path):
    path = write_template(
        tmp_path / "bl.xlsx",
        "t",
        [],
        [
            {"action": "add", "target": "subid_black", "campaign": "all", "item": "beadfeed"},
            {"action": "add", "target": "subid_black", "campaign": "all", "item": "feedbead"},
        ],
    )
    plan = plan_actions(client, path)
    assert len(plan) == 1 and len(plan.calls[0].campaign_ids) == 10
    result = plan.apply(client, progress=False, journal=None)
    assert result.ok, result.summary()
    lists = load_account(client, progress=False).table("lists")
    black = lists[(lists["list"] == "subid_black") & lists["item"].isin(["beadfeed", "feedbead"])]
    assert len(black) == 20
    assert len(plan_actions(client, path)) == 0  # applied once: nothing left to do


def test_set_country_bid_and_format_filter(client, tmp_path):
    account = load_account(client, progress=False)
    row = account.table("countries").iloc[0]
    cid, code = int(row["campaign_id"]), str(row["country"])
    path = write_template(
        tmp_path / "bids.xlsx",
        "t",
        [],
        [
            {
                "action": "set",
                "target": "country",
                "campaign": cid,
                "item": code,
                "bid": float(row["bid"]) + 0.1,
            },
            {"action": "add", "target": "subs_age", "campaign": "all", "item": 2},
        ],
    )
    plan = plan_actions(client, path)
    actions = [(c.action, c.target) for c in plan.calls]
    assert ("drop", "country") in actions and ("add", "country") in actions
    pushes = {
        int(i)
        for i, f in zip(
            account.table("campaigns")["id"], account.table("campaigns")["ad_format"], strict=True
        )
        if f == "push"
    }
    subs = [c for c in plan.calls if c.target == "subs-age"]
    assert subs and set().union(*(set(c.campaign_ids) for c in subs)) <= pushes


def test_bad_rows_are_all_reported_with_their_cells(client, tmp_path):
    path = write_template(
        tmp_path / "bad.xlsx",
        "t",
        [],
        [
            {"action": "add", "target": "subid_black", "campaign": "all", "item": "not-hex"},
            {"action": "launch", "target": "campaign", "campaign": "all"},
            {"action": "set", "target": "country", "campaign": 42, "item": "US", "bid": 1},
            {"action": "set", "target": "country", "campaign": "all", "item": "US", "bid": "x"},
            {"action": "add", "target": "planet", "campaign": "all", "item": "mars"},
        ],
    )
    with pytest.raises(WorkbookError) as info:
        plan_actions(client, path)
    cells = {(p.row, p.column) for p in info.value.problems}
    assert cells == {(2, "item"), (3, "action"), (4, "campaign"), (5, "bid"), (6, "target")}


def _targeting(client: Any, code: str) -> tuple[set[int], set[int]]:
    """Campaigns that target ``code`` and campaigns that do not."""
    account = load_account(client, progress=False)
    countries = account.table("countries")
    every = {int(i) for i in account.table("campaigns")["id"]}
    having = {int(c) for c in countries.loc[countries["country"] == code, "campaign_id"]}
    return having, every - having


def test_set_country_never_adds_it_to_campaigns_that_do_not_target_it(client, tmp_path):
    code = "US"
    having, lacking = _targeting(client, code)
    assert having and lacking, "the seeded account should mix campaigns with and without US"
    path = write_template(
        tmp_path / "set.xlsx",
        "t",
        [],
        [{"action": "set", "target": "country", "campaign": "all", "item": code, "bid": 0.42}],
    )
    plan = plan_actions(client, path, allow={"bid_jump"})  # one bid for CPM and CPC campaigns
    sent = set().union(*(set(c.campaign_ids) for c in plan.calls if c.target == "country"))
    assert sent == having
    warning = next(w for w in plan.warnings if "leaves out" in w)
    assert f"leaves out {len(lacking)} campaign(s)" in warning and "row 2" in warning
    result = plan.apply(client, progress=False, journal=None)
    assert result.ok, result.summary()
    assert _targeting(client, code) == (having, lacking)


def test_set_country_on_one_campaign_without_it_is_a_row_problem(client, tmp_path):
    _, lacking = _targeting(client, "US")
    cid = min(lacking)
    path = write_template(
        tmp_path / "one.xlsx",
        "t",
        [],
        [{"action": "set", "target": "country", "campaign": cid, "item": "US", "bid": 0.42}],
    )
    with pytest.raises(WorkbookError) as info:
        plan_actions(client, path)
    (problem,) = info.value.problems
    assert (problem.row, problem.column) == (2, "item")
    assert f"campaign {cid} does not target US" in problem.message
    assert "use action add" in problem.message


def test_add_country_targets_it(client, tmp_path):
    having, lacking = _targeting(client, "US")
    cid = min(lacking)
    path = write_template(
        tmp_path / "add.xlsx",
        "t",
        [],
        [{"action": "add", "target": "country", "campaign": cid, "item": "US", "bid": 0.42}],
    )
    plan = plan_actions(client, path)
    assert [(c.action, c.target, c.campaign_ids) for c in plan.calls] == [
        ("add", "country", (cid,))
    ]
    assert plan.apply(client, progress=False, journal=None).ok
    assert _targeting(client, "US")[0] == having | {cid}


def test_every_problem_of_a_row_is_reported(client, tmp_path):
    path = write_template(
        tmp_path / "row.xlsx",
        "t",
        [],
        [
            {"action": "set", "target": "country", "campaign": 42, "item": "", "bid": "inf"},
            {"action": "add", "target": "source_black", "campaign": "٣", "item": "1_000"},
            {"action": "set", "target": "bid_rule", "campaign": "all", "item": "ab", "bid": 1e308},
            {"action": "set", "target": "country", "campaign": "all", "item": "US", "bid": "nan"},
        ],
    )
    with pytest.raises(WorkbookError) as info:
        plan_actions(client, path)
    cells = sorted((p.row, p.column) for p in info.value.problems)
    assert cells == [
        (2, "bid"),
        (2, "campaign"),
        (2, "item"),
        (3, "campaign"),
        (3, "item"),
        (4, "bid"),
        (5, "bid"),
    ]


def test_actions_sheet_is_found_whatever_its_case(client, tmp_path):
    path = write_template(
        tmp_path / "case.xlsx",
        "t",
        [],
        [{"action": "add", "target": "subid_black", "campaign": "all", "item": "beadfeed"}],
    )
    book = openpyxl.load_workbook(path)
    book["actions"].title = " Actions"
    book.save(path)
    plan = plan_actions(client, path)
    assert [(c.action, c.target, c.items) for c in plan.calls] == [
        ("add", "subid_black", ("beadfeed",))
    ]


def test_blank_rows_between_actions_are_left_out_and_rows_keep_their_numbers(client, tmp_path):
    actions = [
        {"action": "add", "target": "subid_black", "campaign": "all", "item": "beadfeed"},
        {"action": "add", "target": "subid_black", "campaign": "all", "item": "feedbead"},
    ]
    tight = write_template(tmp_path / "tight.xlsx", "t", [], actions)
    loose = write_template(tmp_path / "loose.xlsx", "t", [], actions)
    book = openpyxl.load_workbook(loose)
    sheet = book["actions"]
    sheet.insert_rows(3, amount=2)  # two empty rows between the actions
    sheet.insert_rows(2)  # and one above the first
    sheet.cell(row=2, column=1).value = "   "  # spaces only: blank too
    book.save(loose)
    assert [r[0] for r in _cells(loose)["actions"]][:6] == [
        "action", "   ", "add", None, None, "add"
    ]  # fmt: skip
    a, b = plan_actions(client, tight), plan_actions(client, loose)
    assert len(a) == len(b) == 1
    assert a.calls[0].campaign_ids == b.calls[0].campaign_ids
    assert a.to_frame().equals(b.to_frame())
    # a bad row after the blanks is named by its own Excel row
    sheet.cell(row=6, column=4).value = "not-hex"
    book.save(loose)
    with pytest.raises(WorkbookError) as info:
        plan_actions(client, loose)
    assert {(p.row, p.column) for p in info.value.problems} == {(6, "item")}
