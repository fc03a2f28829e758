"""Action workbooks (the templates) read into plans, against the sandbox."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import toolkit
from toolkit.bulk.actions import TEMPLATES, plan_actions, write_template
from toolkit.errors import WorkbookError
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def client():
    with Sandbox(campaigns=10, seed=5, accounts=1) as sb:
        yield toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


def test_committed_templates_match_their_definition():
    for name, (_title, _text, examples) in TEMPLATES.items():
        path = ROOT / "templates" / name
        assert path.exists(), f"templates/{name} is missing"
        sheet = pd.read_excel(path, sheet_name="actions", dtype=object, engine="calamine")
        assert len(sheet) == len(examples)
        assert (
            pd.read_excel(path, sheet_name=0, header=None, engine="calamine").iloc[0, 0] == _title
        )


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_plans(client, name):
    plan = plan_actions(client, ROOT / "templates" / name, allow={"bulk_archive"})
    assert len(plan.to_frame()) == len(plan)
    assert not plan.warnings


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
