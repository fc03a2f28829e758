"""Rules meeting the account: limits count only real changes, whitelist rules never start a
whitelist, lists whose drops would trip a guard are held back while the rest goes ahead, and
a bad export fails before the account is read. Against the sandbox over real HTTP."""

from __future__ import annotations

import pytest

import toolkit
from toolkit.errors import StatsError
from toolkit.rules import evaluate_rules

from .test_rules_evaluate import BOTH, STARTED, frame, listed, planned_changes, status_of


@pytest.fixture()
def account(client):
    return toolkit.load_account(client, progress=False)


def test_items_already_blacklisted_take_no_place_in_the_limit(client, account):
    black = listed(account, STARTED, "source_black")[:2]
    stats = frame(
        *[(STARTED, "source", k, 100, 50.0, 0, 0.0) for k in black],  # costliest: done
        (STARTED, "source", "91000001", 100, 20.0, 0, 0.0),
        (STARTED, "source", "91000002", 100, 10.0, 0, 0.0),
        (STARTED, "source", "91000003", 100, 6.0, 0, 0.0),
    )
    rule = {
        "name": "cut",
        "level": "source",
        "when": "cost > 5 and conversions = 0",
        "action": "blacklist",
        "limit": 2,
    }
    plan, decisions = evaluate_rules([rule], stats, account)
    assert status_of(decisions) == {
        ("cut", STARTED, black[0]): "already",
        ("cut", STARTED, black[1]): "already",
        ("cut", STARTED, "91000001"): "planned",
        ("cut", STARTED, "91000002"): "planned",
        ("cut", STARTED, "91000003"): "over limit",
    }
    assert planned_changes(plan) == {
        (STARTED, "add", "source_black", "91000001"),
        (STARTED, "add", "source_black", "91000002"),
    }


def test_a_whitelist_rule_never_starts_a_whitelist(client, account):
    assert not listed(account, STARTED, "subid_white")
    stats = frame(
        (STARTED, "subid", "abc0aa", 500, 2.0, 20, 80.0),
        (BOTH, "subid", "abc0ab", 500, 2.0, 20, 80.0),
    )
    rule = {"name": "keep", "level": "subid", "when": "roi > 100", "action": "whitelist"}
    plan, decisions = evaluate_rules([rule], stats, account)
    # a first whitelist item would shut out every other subId of campaign 1000001
    assert status_of(decisions) == {
        ("keep", STARTED, "abc0aa"): "no whitelist",
        ("keep", BOTH, "abc0ab"): "planned",
    }
    assert planned_changes(plan) == {(BOTH, "add", "subid_white", "abc0ab")}


def test_a_list_whose_drops_trip_a_guard_is_held_back_and_the_rest_goes_ahead(client, account):
    white = listed(account, BOTH, "subid_white")
    assert len(white) >= 2
    stats = frame(
        *[(BOTH, "subid", k, 900, 40.0, 0, 0.0) for k in white],  # every whitelisted subId
        (STARTED, "subid", "abc0ac", 900, 40.0, 0, 0.0),
    )
    plan, decisions = evaluate_rules([LOSING], stats, account)
    statuses = status_of(decisions)
    assert {statuses[("losing", BOTH, k)] for k in white} == {"guard empty_whitelist"}
    assert statuses[("losing", STARTED, "abc0ac")] == "planned"
    assert planned_changes(plan) == {(STARTED, "add", "subid_black", "abc0ac")}
    # lifted by name, as for toolkit.plan: then the share guard holds them back
    plan, decisions = evaluate_rules([LOSING], stats, account, allow=["empty_whitelist"])
    assert {status_of(decisions)[("losing", BOTH, k)] for k in white} == {"guard drop_share"}
    plan, decisions = evaluate_rules(
        [LOSING], stats, account, allow=["empty_whitelist", "drop_share"]
    )
    assert {status_of(decisions)[("losing", BOTH, k)] for k in white} == {"planned"}
    assert {(BOTH, "drop", "subid_white", k) for k in white} <= planned_changes(plan)


LOSING = {
    "name": "losing",
    "level": "subid",
    "when": "cost > 5 and conversions = 0",
    "action": "blacklist",
}


def test_a_bad_export_fails_before_the_account_is_read(sb, client, tmp_path):
    path = tmp_path / "stats.csv"
    path.write_text(
        "date,campaign_id,level,key,impressions,clicks,cost,conversions,revenue\n"
        "2026-01-31,1000001,subid,abc,10,5,1.5,0,0\n"
        "2026-01-31,1000001,subid,abd,10,5,lots,0,0\n",
        encoding="utf-8",
    )
    before = sum(sb.stats().values())
    with pytest.raises(StatsError) as err:
        evaluate_rules([LOSING], path, client)
    assert "line 3 [cost]: 'lots'" in str(err.value)
    after = sum(sb.stats().values())
    assert after == before  # not one request


def test_countries_named_any_way_the_tracker_writes_them_are_the_campaigns_codes(client, account):
    import pycountry

    code = account.table("countries").query("campaign_id == @STARTED")["country"].iloc[0]
    country = pycountry.countries.get(alpha_2=code)
    stats = frame(
        (STARTED, "country", country.name, 300, 9.0, 0, 0.0),
        (STARTED, "country", country.alpha_3.lower(), 200, 6.0, 0, 0.0),
        (STARTED, "country", "Atlantis", 200, 6.0, 0, 0.0),
    )
    rule = {"name": "geo", "level": "country", "when": "cost > 1", "action": "bid", "factor": 0.5}
    plan, decisions = evaluate_rules([rule], stats, account)
    assert status_of(decisions) == {
        ("geo", STARTED, code): "planned",
        ("geo", STARTED, "Atlantis"): (
            "not accepted: a country code is ISO 3166-1 alpha-2, upper case"
        ),  # no country: the service would refuse the code, whatever the campaign targets
    }
    row = decisions.set_index("key").loc[code]
    assert (row["clicks"], row["cost"]) == (500, 15.0)
    assert planned_changes(plan) == {(STARTED, "bid", "country", code)}


def test_the_decisions_as_an_action_workbook_plan_the_same_changes(client, account, tmp_path):
    from openpyxl import load_workbook

    from toolkit.bulk.workbook.actions import plan_actions
    from toolkit.rules.actions import to_actions

    white = listed(account, BOTH, "subid_white")
    black = listed(account, BOTH, "subid_black")
    top = account.table("countries").query("campaign_id == @STARTED")
    stats = frame(
        (STARTED, "subid", "abc0ad", 900, 40.0, 0, 0.0),  # blacklisted
        (BOTH, "subid", white[0], 900, 40.0, 0, 0.0),  # dropped from the whitelist
        (BOTH, "subid", black[0], 900, 4.0, 90, 900.0),  # whitelisted, off the blacklist
        (STARTED, "country", top["country"].iloc[0], 900, 40.0, 0, 0.0),  # bid cut
        (1000008, "source", "91000009", 900, 400.0, 0, 0.0),  # campaign paused
    )
    rules = [
        {**LOSING, "scope": {"campaigns": [STARTED, BOTH]}},
        {"name": "keep", "level": "subid", "when": "roi > 100", "action": "whitelist"},
        {"name": "geo", "level": "country", "when": "cost > 1", "action": "bid", "factor": 0.5},
        {"name": "stop", "level": "campaign", "when": "cost > 100", "action": "pause"},
    ]
    plan, decisions = evaluate_rules(rules, stats, account)
    assert set(decisions["status"]) == {"planned"}
    path = to_actions(decisions, tmp_path / "review.xlsx")
    sheet = load_workbook(path)["actions"]
    header = [c.value for c in sheet[1]]
    assert header[-2:] == ["rule", "why"] and sheet.max_row == 1 + 6
    again = plan_actions(client, path)
    assert planned_changes(again) == planned_changes(plan)
    # a row deleted in Excel is a change left out
    sheet.delete_rows(2)
    sheet.parent.save(path)
    fewer = plan_actions(client, path)
    assert len(planned_changes(fewer)) == len(planned_changes(plan)) - 1
