"""Rules over the statistics of a set of accounts, against a sandbox of three accounts over
real HTTP: statistics with an ``account`` column (or one file per account) evaluated against
their own account with its own key, decisions with ``account`` first, a ``PlanSet`` of each
account's own plan, and statistics naming an account that is not in the set refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest

import toolkit
from toolkit.bulk.plan_set import PlanSet
from toolkit.client.client import sandbox_client
from toolkit.rules.over_set import evaluate_rules_set
from toolkit.sandbox import Sandbox

from .test_report_profit import stats_of

NAMES = ["north", "south", "east"]
RULES = [
    {
        "name": "subIds that never convert",
        "level": "subid",
        "when": "clicks >= 300 and conversions = 0",
        "action": "blacklist",
    }
]


@pytest.fixture(scope="module")
def three() -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, accounts=3, seed=5) as sb:
        yield sb


def clients(sb: Sandbox) -> dict[str, toolkit.Client]:
    return {name: sandbox_client(sb, i) for i, name in enumerate(NAMES)}


@pytest.fixture(scope="module")
def accounts(three: Sandbox) -> toolkit.AccountSet:
    return toolkit.load_accounts(clients(three), progress=False, workers=4)


def made_stats(campaign_ids: list[int], tag: str) -> pd.DataFrame:
    """Two subIds per campaign that never convert (``<tag>01``, ``<tag>02``) and one that
    does (``ff01``)."""
    rows = []
    for cid in campaign_ids:
        rows += [
            (cid, "subid", f"{tag}01", 0, 600, 6.0, 0, 0.0),
            (cid, "subid", f"{tag}02", 0, 800, 8.0, 0, 0.0),
            (cid, "subid", "ff01", 0, 900, 9.0, 40, 120.0),
        ]
    return stats_of(rows)


@pytest.fixture(scope="module")
def parts(accounts: toolkit.AccountSet) -> dict[str, pd.DataFrame]:
    """Each account's statistics, on two of its own campaigns."""
    tags = {"north": "a1", "south": "b2", "east": "c3"}
    out = {}
    for name in NAMES:
        ids = accounts.account(name).campaigns["id"].astype(int).tolist()[:2]
        out[name] = made_stats(ids, tags[name])
    return out


def with_account(parts: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(
        [p.assign(account=n)[["account", *p.columns]] for n, p in parts.items()],
        ignore_index=True,
    )


def test_decisions_and_plans_over_the_set_are_each_accounts_own(
    three: Sandbox, accounts: toolkit.AccountSet, parts: dict[str, pd.DataFrame]
) -> None:
    given = clients(three)
    plans, decisions = evaluate_rules_set(
        RULES, with_account(parts), accounts, clients=given, journal=None
    )
    assert isinstance(plans, PlanSet) and plans.names == NAMES
    assert decisions.columns[0] == "account"
    assert decisions["account"].unique().tolist() == NAMES
    for name in NAMES:
        alone = toolkit.evaluate_rules(
            RULES, parts[name], accounts.account(name), client=given[name], journal=None
        )
        mine = decisions[decisions["account"] == name].drop(columns="account")
        pdt.assert_frame_equal(mine.reset_index(drop=True), alone.decisions)
        pdt.assert_frame_equal(plans.plan(name).to_frame(), alone.plan.to_frame())
        assert plans.clients[name] is given[name]
        # every decision is about a campaign of this account, and some are planned
        assert set(mine["campaign_id"]) <= set(accounts.account(name).campaigns["id"])
        assert "campaign not in the account" not in set(mine["status"])
        assert (mine["status"] == "planned").any()


def test_one_statistics_file_per_account_makes_the_same_decisions(
    three: Sandbox,
    accounts: toolkit.AccountSet,
    parts: dict[str, pd.DataFrame],
    tmp_path: Path,
) -> None:
    files = {}
    for name in ("south", "east"):
        files[name] = tmp_path / f"{name}.csv"
        parts[name].to_csv(files[name], index=False)
    result = evaluate_rules_set(RULES, files, accounts, clients=clients(three), journal=None)
    framed = evaluate_rules_set(
        RULES, {n: parts[n] for n in files}, accounts, clients=clients(three), journal=None
    )
    pdt.assert_frame_equal(result.decisions, framed.decisions)
    assert result.plans.names == ["south", "east"]
    assert result.plans.warnings == ["no statistics for account(s) north: not evaluated"]
    assert set(result.results) == {"south", "east"}


def test_statistics_naming_an_account_not_in_the_set_are_refused_before_any_call(
    three: Sandbox, accounts: toolkit.AccountSet, parts: dict[str, pd.DataFrame]
) -> None:
    stats = with_account(parts)
    stats.loc[stats.index[-2:], "account"] = "west"
    before = three.calls_by_account()
    with pytest.raises(toolkit.ValidationError, match=r"names 'west' \(2 rows\), not an account"):
        evaluate_rules_set(RULES, stats, accounts, clients=clients(three), journal=None)
    blank = with_account(parts)
    blank.loc[blank.index[:1], "account"] = None
    with pytest.raises(toolkit.ValidationError, match="1 row\\(s\\) with no account"):
        evaluate_rules_set(RULES, blank, accounts, clients=clients(three), journal=None)
    with pytest.raises(toolkit.ValidationError, match="must say whose they are"):
        evaluate_rules_set(RULES, parts["north"], accounts, clients=clients(three))
    assert three.calls_by_account() == before


def test_each_account_is_read_and_planned_with_its_own_key(
    three: Sandbox, parts: dict[str, pd.DataFrame]
) -> None:
    """Given clients, each live account is read with its own key: the sandbox's log counts
    each account's reads under its own user, and none named another account's campaign."""
    given = clients(three)
    users = {n: int(c.account.balance()["user_id"]) for n, c in given.items()}
    before = three.calls_by_account()
    result = evaluate_rules_set(RULES, with_account(parts), given, journal=None)
    after = three.calls_by_account()
    for name in NAMES:
        assert after[users[name]] > before.get(users[name], 0)
        assert len(result.plans.plan(name)) > 0
    assert three.foreign_calls() == []


def test_the_plan_set_applies_each_accounts_blacklist_with_its_own_key() -> None:
    with Sandbox(campaigns=3, accounts=3, seed=8) as sb:
        given = clients(sb)
        ids = {n: int(c.campaigns.list()[0]["id"]) for n, c in given.items()}
        stats = with_account({n: made_stats([ids[n]], "d4") for n in NAMES})
        plans, _ = evaluate_rules_set(RULES, stats, given, journal=None)
        result = plans.apply(progress=False)
        assert result.ok and set(result.run_ids) == set(NAMES)
        for name, client in given.items():
            lists = toolkit.load_account(client, [ids[name]], progress=False).lists
            listed = set(lists.loc[lists["list"].astype(str) == "subid_black", "item"])
            assert {"d401", "d402"} <= listed and "ff01" not in listed
        assert sb.foreign_calls() == []
