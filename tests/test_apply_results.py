"""What a run shows: the outcome frame, the result workbook (every edited sheet with each
row's outcome) and the HTML view; against the sandbox over real HTTP."""

from __future__ import annotations

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, make_plan
from toolkit.bulk.apply import write_result_workbook
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox

TABLES = ("campaigns", "countries", "targets", "lists", "bid_rules", "cpa_rules", "creatives")


@pytest.fixture()
def sb():
    with Sandbox(campaigns=8, seed=5) as sandbox:
        yield sandbox


@pytest.fixture()
def client(sb):
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


def sheet(path, name: str) -> pd.DataFrame:
    rows = list(openpyxl.load_workbook(path, read_only=True)[name].iter_rows(values_only=True))
    return pd.DataFrame(rows[1:], columns=rows[0])


def test_campaign_rule_and_creative_edits_have_their_outcome(client, tmp_path):
    account = load_account(client, progress=False)
    base = {name: account.table(name).copy() for name in TABLES}
    desired = {name: df.copy() for name, df in base.items()}
    campaigns = desired["campaigns"]
    started = campaigns.index[campaigns["work_status"] == "Started"]
    renamed, paused = int(campaigns.loc[started[0], "id"]), int(campaigns.loc[started[1], "id"])
    campaigns.loc[started[0], "name"] = "Renamed by a bulk edit"
    campaigns.loc[started[1], "work_status"] = "Paused"
    rules = desired["cpa_rules"]
    assert len(rules), "the seeded account has CPA rules"
    rule_id = int(rules["id"].iloc[0])
    rules.loc[rules.index[0], "amount"] = float(rules["amount"].iloc[0]) + 1
    creatives = desired["creatives"]
    live_creative = creatives.index[creatives["work_status"] == "Paused"][0]
    creative_id = int(creatives.loc[live_creative, "id"])
    creatives.loc[live_creative, "work_status"] = "Archived"
    plan = make_plan(client, desired, base=base, live=account)
    result = plan.apply(client, progress=False, journal=Journal(tmp_path / "j.db"))
    assert result.ok, result.summary()

    frame = result.to_frame()
    settings = frame[frame["target"] == "campaign"]
    assert set(settings["action"]) == {"update", "pause"}
    assert settings["item"].isna().all()  # a missing value, never the text 'nan'
    assert "nan" not in set(frame["item"].dropna())
    rule = frame[frame["target"] == "cpa_rule"].iloc[0]
    assert (rule["action"], rule["item"]) == ("edit", str(rule_id))
    assert frame.loc[frame["target"] == "creative", "item"].tolist() == [str(creative_id)]

    path = write_result_workbook(result, desired, tmp_path / "account.result.xlsx")
    names = openpyxl.load_workbook(path, read_only=True).sheetnames
    assert {"campaigns", "cpa_rules", "creatives", "outcomes"} <= set(names)
    out = sheet(path, "campaigns").set_index("id")
    assert out.loc[renamed, "outcome"] == "applied"
    assert out.loc[renamed, "name"] == "Renamed by a bulk edit"
    assert out.loc[paused, "outcome"] == "applied"
    others = out.drop(index=[renamed, paused])
    assert set(others["outcome"]) == {"unchanged"}
    out = sheet(path, "cpa_rules").set_index("id")
    assert out.loc[rule_id, "outcome"] == "applied"
    assert set(out.drop(index=rule_id)["outcome"]) <= {"unchanged"}
    out = sheet(path, "creatives").set_index("id")
    assert out.loc[creative_id, "outcome"] == "applied"
    assert set(out.drop(index=creative_id)["outcome"]) == {"unchanged"}


def test_failed_items_show_in_the_result_workbook_and_the_html_view(sb, client, tmp_path):
    account = load_account(client, progress=False)
    base = {name: account.table(name).copy() for name in TABLES}
    campaigns = base["campaigns"].copy()
    first = campaigns.index[0]
    cid = int(campaigns.loc[first, "id"])
    campaigns.loc[first, "name"] = "<b>bold</b> & renamed"
    ids = [int(i) for i in campaigns["id"]][:3]
    extra = pd.DataFrame(
        [{"campaign_id": c, "list": "subid_black", "item": "badcafe1"} for c in ids]
    ).astype(base["lists"].dtypes.to_dict())
    lists = pd.concat([base["lists"], extra], ignore_index=True)
    desired = {**base, "campaigns": campaigns, "lists": lists}
    sb.faults.configure(
        {"rules": [{"status": 503, "count": 5, "path": "/api/campaign/add-sub-id-black-batch"}]}
    )
    try:
        result = make_plan(client, desired, base=base, live=account).apply(
            client, progress=False, journal=None
        )
    finally:
        sb.faults.clear()
    assert not result.ok
    text = result.summary(most=2).splitlines()
    assert text[1].startswith(f"  failed: add subid_black on campaign {ids[0]} badcafe1: ")
    assert text[3] == f"  ... and {len(ids) - 2} more; see result.to_frame()"
    page = result._repr_html_()
    assert "<table" in page and "not as planned" in page
    assert page.count("badcafe1") == len(ids)
    path = write_result_workbook(result, desired, tmp_path / "r.xlsx")
    out = sheet(path, "lists")
    failed = out[out["item"] == "badcafe1"]
    assert set(failed["outcome"]) == {"failed"} and failed["message"].notna().all()
    out = sheet(path, "campaigns").set_index("id")
    assert out.loc[cid, "outcome"] == "applied"


def test_language_rows_of_the_result_workbook_carry_their_outcome(client, tmp_path):
    """Languages are shown as ids and sent as codes: the result workbook matches the two
    through the dictionaries the plan was made with."""
    account = load_account(client, progress=False)
    base = {name: account.table(name).copy() for name in TABLES}
    targets = base["targets"]
    languages = account.refs["language"]
    cid = int(base["campaigns"]["id"].iloc[0])
    have = set(targets.loc[targets["campaign_id"] == cid, "value"].astype(str))
    new_id = next(str(int(i)) for i in languages["id"] if str(int(i)) not in have)
    row = {"campaign_id": cid, "kind": "language", "value": new_id}
    extra = pd.DataFrame([row], columns=targets.columns).astype(targets.dtypes.to_dict())
    desired = {**base, "targets": pd.concat([targets, extra], ignore_index=True)}
    result = make_plan(client, desired, base=base, live=account).apply(
        client, progress=False, journal=None
    )
    assert result.ok, result.summary()

    def outcome_of_the_new_row(refs):
        path = write_result_workbook(result, desired, tmp_path / "lang.xlsx", refs)
        out = sheet(path, "targets")
        mine = out[(out["campaign_id"] == cid) & (out["kind"] == "language")]
        return mine.loc[mine["value"].astype(str) == new_id, "outcome"].tolist()

    assert outcome_of_the_new_row(account.refs) == ["applied"]
    assert outcome_of_the_new_row(None) == ["unchanged"]  # without the dictionaries: no match
