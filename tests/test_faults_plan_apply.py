"""Plan and apply under the sandbox's fault injection, over real HTTP.

A read-back that fails after the calls were sent leaves the outcomes as the service answered
them, says in one line which items it could not check, and the journal's run is finished; a
read that fails while planning is an :class:`IncompleteReadError` (exit 2 on the command
line), never an empty plan, and nothing is sent.
"""

from __future__ import annotations

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, make_plan
from toolkit.bulk.plan import Plan
from toolkit.bulk.workbook.actions import plan_actions, write_template
from toolkit.errors import IncompleteReadError
from toolkit.sandbox import Sandbox

from .conftest import cli_runner

TABLES = ("campaigns", "countries", "targets", "lists", "bid_rules", "cpa_rules", "creatives")
ITEM = "/api/campaign/item"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(campaigns=6, seed=3) as sandbox:
        yield sandbox


def connect(sb, retries: int = 1):
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=retries, backoff=0.01)


def base_tables(client) -> dict[str, pd.DataFrame]:
    account = toolkit.load_account(client, progress=False)
    return {name: account.table(name).copy() for name in TABLES}


def raise_bids(base: dict[str, pd.DataFrame], campaigns: int) -> dict[str, pd.DataFrame]:
    """Desired tables: the first country bid of ``campaigns`` campaigns raised by 0.01."""
    countries = base["countries"].copy()
    rows = countries.groupby("campaign_id").head(1).index[:campaigns]
    assert len(rows) == campaigns
    countries.loc[rows, "bid"] = (countries.loc[rows, "bid"] + 0.01).round(4)
    return {**base, "countries": countries}


def live_bids(client, ids) -> dict[tuple[int, str], float]:
    countries = toolkit.load_account(client, ids, progress=False).table("countries")
    return {
        (int(r.campaign_id), str(r.country)): float(r.bid)
        for r in countries.itertuples(index=False)
    }


def not_verified_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("Not verified:")]


# --------------------------------------------------------------------------- read-back


@pytest.mark.parametrize(
    "retries,rule,unverified",
    [
        # every read-back of a campaign's detail answers 500, past the client's one retry
        (1, {"status": 500, "path": ITEM}, 2),
        # one bid-rule read answers 500 and the client does not retry: one campaign unchecked
        (0, {"status": 500, "count": 1, "path": "/api/campaign/bid-rules"}, 1),
    ],
    ids=["every-detail-read", "one-rule-read"],
)
def test_a_failed_read_back_leaves_true_outcomes_and_says_what_it_did_not_check(
    sb, faults, tmp_path, retries, rule, unverified
):
    client = connect(sb, retries)
    base = base_tables(client)
    desired = raise_bids(base, 2)
    plan = make_plan(client, desired, base=base)
    ids = sorted({c for call in plan.calls for c in call.campaign_ids})
    assert len(ids) == 2
    journal = Journal(tmp_path / "journal.db")
    faults.configure({"rules": [rule]})
    result = plan.apply(client, progress=False, journal=journal)
    faults.clear()

    frame = result.to_frame()
    assert len(frame) == 4 and set(frame["outcome"]) == {"applied"}
    wanted = {
        (int(r.campaign_id), str(r.country)): float(r.bid)
        for r in desired["countries"].itertuples(index=False)
        if int(r.campaign_id) in ids
    }
    assert live_bids(client, ids) == pytest.approx(wanted)  # the outcomes are true
    assert result.differences == []
    unchecked = sorted({o.campaign_id for o in result.unverified})
    assert len(unchecked) == unverified and set(unchecked) <= set(ids)
    assert all(o.outcome == "applied" and o.action == "add" for o in result.unverified)
    operation = "campaign.item" if rule["path"] == ITEM else "bid_rule.list"
    assert operation in result.read_back_error

    lines = not_verified_lines(result.summary())
    assert lines == [result.unverified_note()]
    assert lines[0].startswith(f"Not verified: {unverified} item(s) on {unverified} campaign(s)")
    assert all(str(cid) in lines[0] for cid in unchecked) and operation in lines[0]
    assert result.ok  # what was sent was applied; only the check is missing

    runs = journal.runs().set_index("run_id")
    assert pd.notna(runs.loc[result.run_id, "finished"])
    assert set(journal.outcomes(result.run_id)["outcome"]) == {"applied"}


def test_languages_are_not_verified_when_the_dictionaries_cannot_be_read_back(sb, faults, tmp_path):
    client = connect(sb)
    account = toolkit.load_account(client, progress=False)
    base = {name: account.table(name).copy() for name in TABLES}
    desired = raise_bids(base, 1)
    priced = int(desired["countries"]["campaign_id"].iloc[0])
    cid = next(int(c) for c in base["campaigns"]["id"] if int(c) != priced)
    targets = base["targets"]
    taken = set(targets.loc[targets["campaign_id"] == cid, "value"].astype(str))
    language = next(str(i) for i in account.refs["language"]["id"] if str(i) not in taken)
    row = pd.DataFrame(
        [{"campaign_id": cid, "kind": "language", "value": language, "list_type": None}]
    ).astype({k: v for k, v in targets.dtypes.items() if k != "label"})
    desired["targets"] = pd.concat([targets, row], ignore_index=True)
    plan = make_plan(client, desired, base=base)
    assert {c.target for c in plan.calls} == {"country", "language"}
    faults.configure({"rules": [{"status": 500, "path": "/api/campaign/list-refs-data"}]})
    result = plan.apply(client, progress=False, journal=Journal(tmp_path / "journal.db"))
    faults.clear()
    assert set(result.to_frame()["outcome"]) == {"applied"} and result.differences == []
    assert [(o.target, o.campaign_id) for o in result.unverified] == [("language", cid)]
    assert "account.dictionaries" in result.read_back_error
    assert not_verified_lines(result.summary()) == [result.unverified_note()]
    assert make_plan(client, desired, base=base).calls == []  # both edits are live


def test_apply_on_the_command_line_writes_its_result_workbook_when_the_read_back_fails(
    sb, faults, cli, tmp_path, monkeypatch
):
    book = tmp_path / "account.xlsx"
    assert cli("export", str(book))[0] == 0
    cid, code_, _old, new = raise_first_bid(book)

    apply = Plan.apply

    def apply_with_failing_read_back(plan, client, **options):  # the plan is read by now
        faults.configure({"rules": [{"status": 500, "path": ITEM}]})
        return apply(plan, client, **options)

    monkeypatch.setattr(Plan, "apply", apply_with_failing_read_back)
    code, out, err = cli("apply", str(book), "--yes")
    faults.clear()
    assert code == 0, err
    lines = not_verified_lines(out)
    assert len(lines) == 1 and f"on 1 campaign(s) ({cid})" in lines[0]
    assert "campaign.item" in lines[0]
    report = book.with_suffix(".result.xlsx")
    assert f"Outcome of each row: {report}" in out and report.exists()
    assert live_bids(connect(sb), [cid])[(cid, code_)] == pytest.approx(new)
    runs = toolkit.history(str(tmp_path / "journal.db"))
    assert len(runs) == 1 and pd.notna(runs["finished"].iloc[0])


# --------------------------------------------------------------------------- planning


@pytest.mark.parametrize(
    "path,named",
    [
        ("/api/campaign/list", "account.dictionaries"),  # also matches list-refs-data
        (ITEM, "campaign.item"),
        ("/api/campaign/bid-rules", "bid_rule.list"),
        ("/api/campaign/cpa-rules", "cpa_rule.list"),
        ("/api/creative/list", "creative.list"),
    ],
)
def test_a_failed_read_while_planning_is_an_error_not_an_empty_plan(sb, faults, path, named):
    client = connect(sb)
    base = base_tables(client)
    desired = raise_bids(base, 1)
    assert len(make_plan(client, desired, base=base)) == 2
    faults.configure({"rules": [{"status": 500, "path": path}]})
    with pytest.raises(IncompleteReadError) as caught:
        make_plan(client, desired, base=base)
    message = str(caught.value)
    assert named in message and "\n" not in message
    assert message.startswith("could not read ") and "nothing was sent" in message
    assert caught.value.parts and all(named in part for part in caught.value.parts)
    faults.clear()
    assert len(make_plan(client, desired, base=base)) == 2


def test_one_campaign_that_cannot_be_read_is_named(sb, faults):
    client = connect(sb, retries=0)
    base = base_tables(client)
    desired = raise_bids(base, 1)
    faults.configure({"rules": [{"status": 503, "count": 1, "path": ITEM}]})
    with pytest.raises(IncompleteReadError) as caught:
        make_plan(client, desired, base=base)
    assert len(caught.value.parts) == 1
    assert caught.value.parts[0].startswith("campaign 100000")
    assert "(campaign.item: " in caught.value.parts[0]


def test_a_failed_balance_read_does_not_stop_planning(sb, faults):
    client = connect(sb)
    base = base_tables(client)
    desired = raise_bids(base, 1)
    faults.configure({"rules": [{"status": 500, "path": "/api/campaign/balance"}]})
    assert len(make_plan(client, desired, base=base)) == 2


def test_an_action_workbook_whose_campaign_list_fails_is_an_error(sb, faults, tmp_path):
    client = connect(sb)
    rows = [{"action": "add", "target": "subid_black", "campaign": "all", "item": "feedface"}]
    book = write_template(tmp_path / "actions.xlsx", "Blacklist", ["one row"], rows)
    assert len(plan_actions(client, book)) >= 1
    faults.configure({"rules": [{"status": 500, "path": "/api/campaign/list"}]})
    with pytest.raises(IncompleteReadError, match="the campaign list"):
        plan_actions(client, book)


# --------------------------------------------------------------------------- command line
def raise_first_bid(book) -> tuple[int, str, float, float]:
    """Raise the first country bid of an exported workbook by 0.01: (campaign, country, old,
    new)."""
    wb = openpyxl.load_workbook(book)
    sheet = wb["countries"]
    header = [c.value for c in sheet[1]]
    row = sheet[2]
    cid = int(row[header.index("campaign_id")].value)
    code = str(row[header.index("country")].value)
    old = float(row[header.index("bid")].value)
    new = round(old + 0.01, 4)
    row[header.index("bid")].value = new
    wb.save(book)
    return cid, code, old, new


@pytest.fixture()
def cli(sb, tmp_path, monkeypatch, capsys):
    """``cli(*args) -> (exit code, stdout, stderr)``; the client retries once, quickly."""
    config = tmp_path / "config.toml"
    config.write_text("[default]\nretries = 1\nbackoff = 0.01\n")
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(config))

    return cli_runner(sb, capsys)


@pytest.mark.parametrize("command", ["plan", "apply"])
@pytest.mark.parametrize(
    "path,named", [("/api/campaign/list", "account.dictionaries"), (ITEM, "campaign.item")]
)
def test_a_failed_read_while_planning_exits_2_with_one_line(
    sb, faults, cli, tmp_path, command, path, named
):
    book = tmp_path / "account.xlsx"
    assert cli("export", str(book))[0] == 0
    cid, code_, old, _new = raise_first_bid(book)

    faults.configure({"rules": [{"status": 500, "path": path}]})
    code, out, err = cli(command, str(book), *(["--yes"] if command == "apply" else []))
    faults.clear()
    assert code == 2
    assert out == "" and "nothing to do" not in err
    assert err.count("\n") == 1 and err.startswith("campaign-toolkit: could not read ")
    assert named in err and "nothing was sent" in err
    assert live_bids(connect(sb), [cid])[(cid, code_)] == pytest.approx(old)  # nothing sent
    assert len(toolkit.history(str(tmp_path / "journal.db"))) == 0
    assert not book.with_suffix(".result.xlsx").exists()
