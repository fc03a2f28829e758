"""Bid reports over a set of accounts, against a sandbox of three accounts over real HTTP: the
set's report is each account's own with ``account`` first, each account's prices asked with
its own key (checked in the sandbox's log), proposals a ``PlanSet`` of each account's own,
statistics mapped to their accounts, and the files showing every row's account."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

import toolkit
from toolkit.bulk.plan_set import PlanSet
from toolkit.client.client import sandbox_client
from toolkit.reports.over_set import SetReport
from toolkit.reports.parts import action_rows
from toolkit.sandbox import Sandbox

from .test_report_profit import stats_of

NAMES = ["north", "south", "east"]
#: Options every report of this module is made with (the prices asked again each time).
OPTIONS = {"progress": False, "history": None, "ctr": 0.01, "include": "all"}


@pytest.fixture(scope="module")
def three() -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, accounts=3, seed=4) as sb:
        yield sb


def clients(sb: Sandbox) -> dict[str, toolkit.Client]:
    return {name: sandbox_client(sb, i) for i, name in enumerate(NAMES)}


@pytest.fixture(scope="module")
def accounts(three: Sandbox) -> toolkit.AccountSet:
    return toolkit.load_accounts(clients(three), progress=False, workers=4)


@pytest.fixture(scope="module")
def own(three: Sandbox) -> dict[str, toolkit.BidReport]:
    """Each account's own report, made alone with its own client."""
    return {n: toolkit.bid_report(c, **OPTIONS) for n, c in clients(three).items()}


@pytest.fixture(scope="module")
def report(three: Sandbox, accounts: toolkit.AccountSet) -> SetReport:
    return toolkit.bid_report(accounts, clients=clients(three), **OPTIONS)


def part(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """One account's rows of a stacked frame, without ``account``."""
    rows = frame[frame["account"] == name].drop(columns="account")
    return rows.reset_index(drop=True)


def test_the_sets_report_is_each_accounts_own_report_with_the_account_first(
    report: SetReport, own: dict[str, toolkit.BidReport]
) -> None:
    assert isinstance(report, SetReport) and report.names == NAMES
    assert report.frame.columns[0] == "account"
    assert all(len(own[n].frame) for n in NAMES)  # every account has rows to compare
    for name in NAMES:
        pdt.assert_frame_equal(
            part(report.frame, name).drop(columns="asked_at"),
            own[name].frame.drop(columns="asked_at"),
        )
        pdt.assert_frame_equal(part(report.proposals("minimum"), name), own[name].proposals())
    assert report.frame["account"].tolist() == [n for n in NAMES for _ in own[n].frame.index]


def test_the_summary_is_each_accounts_and_the_sets(
    report: SetReport, own: dict[str, toolkit.BidReport]
) -> None:
    summary = report.summary()
    assert list(dict.fromkeys(summary.index.get_level_values("account"))) == [*NAMES, "all"]
    for name in NAMES:
        pdt.assert_frame_equal(summary.loc[name], own[name].summary())
    whole = summary.loc["all"]
    assert whole.loc["all", "bids"] == sum(len(own[n].frame) for n in NAMES)
    campaigns = sum(own[n].frame["campaign_id"].nunique() for n in NAMES)
    assert whole.loc["all", "campaigns"] == campaigns
    assert whole["spend_day"].sum() == pytest.approx(
        sum(own[n].summary()["spend_day"].sum() for n in NAMES)
    )
    by_format = report.summary("ad_format")
    pdt.assert_frame_equal(by_format.loc["south"], own["south"].summary("ad_format"))


def test_each_accounts_prices_are_asked_with_its_own_key_connected_by_profile(
    three: Sandbox,
    accounts: toolkit.AccountSet,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No clients given: each account connects by its profile name, and the sandbox's log
    counts each account's price calls under its own key."""
    path = tmp_path / "config.toml"
    tables = "".join(
        f'[profiles.{n}]\napi_key = "{k}"\n' for n, k in zip(NAMES, three.api_keys, strict=True)
    )
    path.write_text(f'[default]\nbase_url = "{three.url}"\n{tables}', encoding="utf-8")
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    users = [int(c.account.balance()["user_id"]) for c in clients(three).values()]
    before = three.calls_by_account()
    report = toolkit.bid_report(accounts, **OPTIONS)
    after = three.calls_by_account()
    made = [after.get(u, 0) - before.get(u, 0) for u in users]
    assert made == [report.report(n).calls for n in NAMES]
    assert len(set(made)) == 3 and all(made)  # three different counts: no key stands for another
    assert three.foreign_calls() == []


def test_proposals_over_the_set_are_a_plan_set_of_each_accounts_own(
    report: SetReport, own: dict[str, toolkit.BidReport]
) -> None:
    plans = report.propose("recommended", allow=["bid_jump"])
    assert isinstance(plans, PlanSet) and plans.names == NAMES
    for name in NAMES:
        alone = own[name].propose("recommended", allow=["bid_jump"])
        pdt.assert_frame_equal(plans.plan(name).to_frame(), alone.to_frame())
        assert plans.clients[name] is report.report(name).client
    assert sum(len(plans.plan(n)) for n in NAMES) == len(plans) > 0
    assert plans.to_frame()["account"].unique().tolist() == [n for n in NAMES if len(plans.plan(n))]


def test_a_guard_refusing_one_accounts_proposal_names_the_account(report: SetReport) -> None:
    with pytest.raises(toolkit.PlanRefused, match=r"account \w+: .*allow=\['bid_jump'\]"):
        report.propose("recommended", max_bid_raise=1.01)


def made_stats(frame: pd.DataFrame) -> pd.DataFrame:
    """Statistics for every comparable country bid of a report: the first country of each
    campaign earns a tenth of its minimum price, the others three times their recommended."""
    rows = []
    ok = frame[frame["comparable"] & (frame["recommended"] > frame["minimum"])]
    for cid, bids in ok.groupby("campaign_id", sort=True):
        for i, r in enumerate(bids.itertuples(index=False)):
            value = 0.1 * r.minimum if i == 0 else 3 * r.recommended
            clicks, imps = 40_000, 2_000_000
            u = 10.0 if r.mode == "CPC" else 10.0 * clicks / imps * 1000
            conversions = round(value / u * clicks)
            rows.append(
                (cid, "country", r.country, imps, clicks, 1.0, conversions, conversions * 10)
            )
    return stats_of(rows)


def test_statistics_with_an_account_column_map_to_their_accounts(
    three: Sandbox, accounts: toolkit.AccountSet, own: dict[str, toolkit.BidReport]
) -> None:
    parts = {n: made_stats(own[n].frame) for n in NAMES}
    assert all(len(p) for p in parts.values())
    stats = pd.concat(
        [p.assign(account=n)[["account", *p.columns]] for n, p in parts.items()],
        ignore_index=True,
    )
    report = toolkit.bid_report(accounts, clients=clients(three), stats=stats, **OPTIONS)
    allow = ["bid_jump", "drop_share"]
    plans = report.propose("profit", allow=allow)
    for i, name in enumerate(NAMES):
        member = accounts.account(name)
        alone = toolkit.bid_report(
            member, client=sandbox_client(three, i), stats=parts[name], **OPTIONS
        )
        joined = part(report.frame, name).drop(columns="asked_at")
        pdt.assert_frame_equal(joined, alone.frame.drop(columns="asked_at"))
        assert joined["profit_day_now"].notna().any()
        mine = alone.propose("profit", allow=allow)
        assert len(mine) > 0
        pdt.assert_frame_equal(plans.plan(name).to_frame(), mine.to_frame())
    # the same statistics given as a mapping account -> frame make the same report
    mapped = toolkit.bid_report(accounts, clients=clients(three), stats=parts, **OPTIONS)
    pdt.assert_frame_equal(
        mapped.frame.drop(columns="asked_at"), report.frame.drop(columns="asked_at")
    )


def test_statistics_naming_an_account_not_in_the_set_are_refused_before_any_call(
    three: Sandbox, accounts: toolkit.AccountSet, own: dict[str, toolkit.BidReport]
) -> None:
    stats = made_stats(own["north"].frame)
    named = stats.assign(account=["north"] * (len(stats) - 3) + ["west"] * 3)
    before = three.calls_by_account()
    with pytest.raises(toolkit.ValidationError, match=r"names 'west' \(3 rows\), not an account"):
        toolkit.bid_report(accounts, clients=clients(three), stats=named, **OPTIONS)
    with pytest.raises(toolkit.ValidationError, match="must say whose they are"):
        toolkit.bid_report(accounts, clients=clients(three), stats=stats, **OPTIONS)
    with pytest.raises(toolkit.ValidationError, match="'west' is not an account of the set"):
        toolkit.bid_report(accounts, clients=clients(three), stats={"west": stats}, **OPTIONS)
    assert three.calls_by_account() == before


def test_what_means_one_account_is_refused_over_a_set(
    three: Sandbox, accounts: toolkit.AccountSet
) -> None:
    given = clients(three)
    with pytest.raises(ValueError, match="client= is one account's client"):
        toolkit.bid_report(accounts, client=given["north"], **OPTIONS)
    with pytest.raises(ValueError, match="campaign_ids=\\{account: \\[ids\\]\\}"):
        toolkit.bid_report(accounts, [1, 2], clients=given, **OPTIONS)
    with pytest.raises(ValueError, match="clients= names 'west'"):
        toolkit.bid_report(accounts, clients={"west": given["north"]}, **OPTIONS)
    with pytest.raises(ValueError, match="clients= goes with a set"):
        toolkit.bid_report(given["north"], clients=given, **OPTIONS)


def test_a_mapping_of_clients_is_loaded_and_reported_by_account(
    three: Sandbox, report: SetReport
) -> None:
    north = report.report("north").frame
    keep = {"north": [int(north["campaign_id"].iloc[0])]}
    some = toolkit.bid_report(clients(three), keep, **OPTIONS)
    assert some.names == NAMES
    assert set(some.frame.loc[some.frame["account"] == "north", "campaign_id"]) == set(
        keep["north"]
    )
    pdt.assert_frame_equal(
        part(some.frame, "east").drop(columns="asked_at"),
        part(report.frame, "east").drop(columns="asked_at"),
    )


def test_the_files_show_each_rows_account(report: SetReport, tmp_path: Path) -> None:
    page = report.to_html(tmp_path / "set.html", max_campaigns=1).read_text(encoding="utf-8")
    rows = page.split("<h2>All bids</h2>", 1)[1]
    assert re.search(r"<th[^>]*>\s*account\s*</th>", rows)
    first_cells = re.findall(r"<tr>\s*<td[^>]*>([^<]*)</td>", rows)
    assert first_cells[: len(report.frame)] == report.frame["account"].tolist()
    book = report.to_excel(tmp_path / "set.xlsx")
    from openpyxl import load_workbook

    wb = load_workbook(book, read_only=True)
    bids = list(wb["bids"].iter_rows(values_only=True))
    assert bids[0][0] == "account"
    assert [r[0] for r in bids[1:]] == report.frame["account"].tolist()
    sheet = list(wb["to recommended"].iter_rows(values_only=True))
    assert sheet[0][:2] == ("account", "action")
    proposed = report.proposals("recommended")
    expected = [
        (name, row["campaign"], row["item"])
        for name in NAMES
        for row in action_rows(part(proposed, name))
    ]
    assert len(expected) > 0
    assert [(r[0], int(r[3]), r[4]) for r in sheet[1:]] == expected
    assert zipfile.is_zipfile(book)


def test_a_plan_set_of_proposals_applies_each_account_with_its_own_key() -> None:
    with Sandbox(campaigns=4, accounts=3, seed=7) as sb:
        given = clients(sb)
        report = toolkit.bid_report(given, **OPTIONS)
        plans = report.propose("minimum", allow=["bid_jump"])
        assert len(plans) > 0
        result = plans.apply(progress=False)
        assert result.ok and set(result.run_ids) == {n for n in NAMES if len(plans.plan(n))}
        again = toolkit.bid_report(given, **OPTIONS)
        assert len(again.propose("minimum", allow=["bid_jump"])) == 0
        assert sb.foreign_calls() == []


def test_the_sets_campaigns_are_counted_by_account_and_id(
    report: SetReport, accounts: toolkit.AccountSet
) -> None:
    """Campaign ids are unique per account only: two accounts with the same ids are two
    campaigns each in the set's summary."""
    north = report.report("north")
    twice = SetReport({"north": north, "copy": replace(north)}, accounts)
    whole = twice.summary().loc["all"]
    assert whole.loc["all", "campaigns"] == 2 * north.frame["campaign_id"].nunique()
    assert whole.loc["all", "bids"] == 2 * len(north.frame)
