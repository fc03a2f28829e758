"""The ``bid_jump`` guard on every face that plans, refused and then allowed: the account
workbook on the command line (exit 2, then ``--allow bid_jump``), an action workbook, the bid
form (its allow box; the minimum prices it asked), statistics rules (the decisions whose bid
would trip it get ``guard bid_jump``, the rest goes ahead) and bid report proposals. Against
the sandbox over real HTTP.

The accounts (12 campaigns, seed 11): 1000001 is a push CPC campaign (cents per click),
1000003 bids on JP per click and 1000004 per 1000 impressions (some USD), 1000006 has bid
rules."""

from __future__ import annotations

from collections.abc import Iterator

import openpyxl
import pytest

import toolkit
from toolkit import spec
from toolkit.bulk import Journal
from toolkit.bulk.edits import money
from toolkit.bulk.workbook.actions import plan_actions, write_template
from toolkit.errors import PlanRefused
from toolkit.frames import load_account
from toolkit.reports.proposals import minimum_prices
from toolkit.rules import evaluate_rules
from toolkit.sandbox import Sandbox
from toolkit.widgets import BidForm

from .conftest import Api, cli_runner
from .test_rules_evaluate import frame, planned_changes, status_of

GEO = spec.bid_kind().column
PUSH, CPC_JP, VIDEO, RULED = 1000001, 1000003, 1000004, 1000006


@pytest.fixture(scope="module")
def shared() -> Iterator[Sandbox]:
    """The account planned against without changing it."""
    with Sandbox(campaigns=12, seed=11) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def reader(shared):
    return toolkit.connect(api_key=shared.api_keys[0], base_url=shared.url, retries=0)


@pytest.fixture(scope="module")
def account(reader):
    return load_account(reader, progress=False)


def live_bids(client, ids) -> dict[tuple[int, str], float]:
    c = load_account(client, ids, progress=False).table("countries")
    rows = zip(c["campaign_id"], c[GEO], c["bid"], strict=True)
    return {(int(i), str(g)): float(b) for i, g, b in rows}


def new_bids(plan) -> dict[tuple[int, str], float]:
    ch = plan.changes()
    ch = ch[ch["what"].isin(["bid", "add"])]
    return {(int(r.campaign_id), str(r.key)): float(r.new) for r in ch.itertuples()}


# --------------------------------------------------------------------------- account workbook


@pytest.fixture()
def cli(sb, tmp_path, monkeypatch, capsys):
    """``cli(*args) -> (exit code, stdout, stderr)`` with ``sb``'s key in the env."""
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    return cli_runner(sb, capsys)


def test_workbook_bid_raised_10x_exits_2_then_applies_with_allow(cli, client, tmp_path):
    book = tmp_path / "account.xlsx"
    assert cli("export", str(book))[0] == 0
    wb = openpyxl.load_workbook(book)
    sheet = wb["countries"]
    header = [c.value for c in sheet[1]]
    row = sheet[2]
    cid, code = int(row[header.index("campaign_id")].value), row[header.index(GEO)].value
    old = float(row[header.index("bid")].value)
    new = round(old * 10, 4)
    row[header.index("bid")].value = new
    wb.save(book)
    name = client.campaigns.get(cid)["name"]
    for command in (("plan",), ("apply", "--yes")):
        code_, out, err = cli(*command, str(book))
        assert code_ == 2, out + err
        assert "plan refused by the guard bid_jump; nothing sent" in err
        assert (
            f"campaign {cid} ({name}) country {code}: {money(old)} -> {money(new)}"
            f" (x{new / old:.1f}, raised more than 3x)"
        ) in err
        assert "max_bid_raise" in err and err.rstrip().endswith("add --allow bid_jump")
    assert live_bids(client, [cid])[(cid, code)] == old  # nothing sent
    code_, out, err = cli("apply", str(book), "--allow", "bid_jump", "--yes")
    assert code_ == 0, err
    assert live_bids(client, [cid])[(cid, code)] == new


# --------------------------------------------------------------------------- action workbook


def test_action_workbook_one_bid_for_cpm_and_cpc_campaigns_is_refused(reader, account, tmp_path):
    old = {k: v for k, v in live_bids(reader, [CPC_JP, VIDEO]).items() if k[1] == "JP"}
    assert set(old) == {(CPC_JP, "JP"), (VIDEO, "JP")}
    path = write_template(
        tmp_path / "bids.xlsx",
        "t",
        [],
        [{"action": "set", "target": "country", "campaign": "all", "item": "JP", "bid": 0.15}],
    )
    with pytest.raises(PlanRefused) as info:
        plan_actions(reader, path)
    assert info.value.guard == "bid_jump"
    (line,) = info.value.details  # the CPC bid of 1000003 moves within the limits
    assert line.startswith(f"campaign {VIDEO} (") and "cut by more than 67%" in line
    assert f"country JP: {money(old[(VIDEO, 'JP')])} -> 0.15" in line
    plan = plan_actions(reader, path, allow=["bid_jump"])
    assert new_bids(plan) == {(CPC_JP, "JP"): 0.15, (VIDEO, "JP"): 0.15}


# --------------------------------------------------------------------------- the bid form


def test_form_refuses_a_bid_jump_until_its_allow_box_is_ticked(client, tmp_path):
    before = live_bids(client, [CPC_JP, VIDEO])
    form = BidForm(client, [CPC_JP, VIDEO], journal=Journal(tmp_path / "j.db"))
    assert "allow bid_jump" in form.allow["bid_jump"].description
    form.countries.value = ("JP",)
    form.how.value, form.amount.value = "set", 0.15
    form.change_button.click()
    form.apply_button.click()
    assert form.level == "error", form.message
    assert "Refused by the guard bid_jump" in form.message and f"campaign {VIDEO}" in form.message
    assert "tick 'allow bid_jump'" in form.message and form.last_result is None
    assert live_bids(client, [CPC_JP, VIDEO]) == before  # nothing sent
    form.allow["bid_jump"].value = True
    form.apply_button.click()
    assert form.level == "ok", form.message
    after = live_bids(client, [CPC_JP, VIDEO])
    assert after[(CPC_JP, "JP")] == after[(VIDEO, "JP")] == 0.15


def test_form_checks_new_bids_against_the_minimum_prices_it_asked(reader, tmp_path):
    form = BidForm(reader, [PUSH], journal=tmp_path / "j.db")
    form.prices_button.click()
    rows = form.rows()
    row = rows[rows["minimum"].notna()].iloc[0]
    code, bid, minimum = str(row[GEO]), float(row["bid"]), float(row["minimum"])
    new = round(minimum * 0.9, 4)
    assert bid / 3 < new < bid * 3  # only the minimum can refuse it
    form.countries.value = (code,)
    form.how.value, form.amount.value = "set", new
    form.change_button.click()
    form.preview_button.click()
    assert form.level == "error" and f"below the minimum {money(minimum)}" in form.message
    unpriced = BidForm(reader, [PUSH], journal=tmp_path / "k.db")  # no price asked
    unpriced.countries.value = (code,)
    unpriced.how.value, unpriced.amount.value = "set", new
    unpriced.change_button.click()
    unpriced.preview_button.click()
    assert unpriced.level == "info", unpriced.message
    assert new_bids(unpriced.last_plan) == {(PUSH, code): new}


# --------------------------------------------------------------------------- rules


def test_rules_hold_back_the_bids_that_jump_and_plan_the_rest(reader, account):
    countries = account.table("countries")
    code = str(countries.loc[countries["campaign_id"] == PUSH, GEO].iloc[0])
    ruled = account.table("bid_rules")
    item = str(ruled.loc[ruled["campaign_id"] == RULED, "item"].iloc[0])
    stats = frame(
        (PUSH, "country", code, 900, 9.0, 30, 90.0),
        (PUSH, "subid", "abc0aa", 900, 9.0, 0, 0.0),
        (RULED, "subid", item, 900, 9.0, 0, 0.0),
        (RULED, "subid", "abc0ab", 900, 9.0, 0, 0.0),  # no bid rule of its own
    )
    rules = [
        {"name": "geo", "level": "country", "when": "roi > 100", "action": "bid", "factor": 5},
        {"name": "cut", "level": "subid", "when": "cost > 5 and conversions = 0",
         "action": "bid", "bid": 0.001, "scope": {"campaigns": [RULED]}},
        {"name": "losers", "level": "subid", "when": "cost > 5 and conversions = 0",
         "action": "blacklist", "scope": {"campaigns": [PUSH]}},
    ]  # fmt: skip
    plan, decisions = evaluate_rules(rules, stats, account)
    assert status_of(decisions) == {
        ("geo", PUSH, code): "guard bid_jump",
        ("cut", RULED, item): "guard bid_jump",
        ("cut", RULED, "abc0ab"): "planned",  # a new bid rule: no old value
        ("losers", PUSH, "abc0aa"): "planned",
    }
    assert planned_changes(plan) == {
        (RULED, "add", "bid_rule", "abc0ab"),
        (PUSH, "add", "subid_black", "abc0aa"),
    }
    plan, decisions = evaluate_rules(rules, stats, account, allow=["bid_jump"])
    assert set(status_of(decisions).values()) == {"planned"}
    assert {(PUSH, "bid", "country", code), (RULED, "bid", "bid_rule", item)} <= planned_changes(
        plan
    )


def test_rules_pass_the_minimum_prices_and_thresholds_to_the_guard(reader, account):
    countries = account.table("countries")
    mine = countries[countries["campaign_id"] == PUSH]
    code, old = str(mine[GEO].iloc[0]), float(mine["bid"].iloc[0])
    stats = frame((PUSH, "country", code, 900, 9.0, 30, 90.0))
    rule = {"name": "geo", "level": "country", "when": "roi > 100", "action": "bid", "factor": 1.1}
    _, decisions = evaluate_rules([rule], stats, account)
    assert status_of(decisions) == {("geo", PUSH, code): "planned"}
    high = {(PUSH, code): round(old * 2, 4)}
    plan, decisions = evaluate_rules([rule], stats, account, minimum_prices=high)
    assert status_of(decisions) == {("geo", PUSH, code): "guard bid_jump"} and len(plan) == 0
    _, decisions = evaluate_rules([rule], stats, account, max_bid_raise=1.05)
    assert status_of(decisions) == {("geo", PUSH, code): "guard bid_jump"}


# --------------------------------------------------------------------------- bid report


def test_report_proposal_past_3x_is_refused_and_says_how_to_allow_it(sb, client):
    api = Api(sb.url, sb.api_keys[0])
    cats = api.ok("/api/campaign/list-refs-data", type="category")["category"]
    target = {
        "category": [int(next(iter(cats["push"])))],
        "quality": ["high"],
        "country": {"US": "0.0010", "DE": "0.0020"},
    }
    low = api.new_campaign("push", targeted=False, target=target, mode="CPC")
    report = toolkit.bid_report(client, [low], progress=False, history=None, include="all")
    proposed = report.proposals("minimum")
    assert len(proposed) == 2 and (proposed["new_bid"] > 3 * proposed["old_bid"]).all()
    with pytest.raises(PlanRefused) as info:
        report.propose("minimum")
    assert info.value.guard == "bid_jump" and len(info.value.details) == 2
    assert all("raised more than 3x" in d for d in info.value.details)
    assert "report.propose('minimum', allow=['bid_jump'])" in str(info.value)
    plan = report.propose("minimum", allow=["bid_jump"])
    assert new_bids(plan) == {
        (low, str(g)): float(b) for g, b in zip(proposed[GEO], proposed["new_bid"], strict=True)
    }
    # the report's minimum prices reach the guard: a price table in which the recommended
    # price has fallen below the minimum is refused at the minimum
    minimums = proposed.set_index(GEO)["minimum"]
    assert minimum_prices(report.frame) == {
        (low, "US"): pytest.approx(minimums["US"]),
        (low, "DE"): pytest.approx(minimums["DE"]),
    }
    stale = report.frame.copy()
    stale["minimum"] = stale["recommended"] * 1.5
    report.frame = stale
    with pytest.raises(PlanRefused) as info:
        report.propose("recommended", max_bid_raise=10_000)
    assert len(info.value.details) == 2
    assert all("below the minimum" in d for d in info.value.details)
