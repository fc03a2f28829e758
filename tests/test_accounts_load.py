"""``load_accounts``: several accounts of a sandbox loaded at once into an ``AccountSet``, over
real HTTP; a failing account reported while the others load; keys that never cross accounts,
checked in the sandbox's own log of calls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest
import requests

import toolkit
from toolkit.client.client import sandbox_client
from toolkit.frames import TABLES
from toolkit.frames.load_set import RoundRobin
from toolkit.sandbox import Sandbox

NAMES = ["north", "south", "east"]


@pytest.fixture(scope="module")
def three() -> Iterator[Sandbox]:
    with Sandbox(campaigns=8, accounts=3, seed=4) as sb:
        yield sb


def clients(sb: Sandbox, **options: object) -> dict[str, toolkit.Client]:
    return {name: sandbox_client(sb, i, **options) for i, name in enumerate(NAMES)}


@pytest.fixture(scope="module")
def loaded(three: Sandbox) -> toolkit.AccountSet:
    three.faults.clear()
    return toolkit.load_accounts(clients(three), progress=False, workers=4)


def test_every_table_is_each_accounts_own_load_with_the_account_first(
    three: Sandbox, loaded: toolkit.AccountSet
) -> None:
    assert loaded.names == NAMES and len(loaded.failures) == 0
    for i, name in enumerate(NAMES):
        alone = toolkit.load_account(sandbox_client(three, i), progress=False)
        for table in TABLES:
            stacked = loaded.table(table)
            assert stacked.columns[0] == "account"
            part = stacked[stacked["account"] == name].drop(columns="account")
            pdt.assert_frame_equal(part.reset_index(drop=True), alone.table(table))
        pdt.assert_frame_equal(loaded.account(name).campaigns, alone.campaigns)
    counts = loaded.campaigns.groupby("account", sort=False).size().to_dict()
    assert counts == {"north": 8, "south": 3, "east": 3}
    assert loaded.balance["account"].tolist() == NAMES
    # one service's dictionaries are made into frames once for the set
    refs = [loaded.account(name).refs["country"] for name in NAMES]
    assert refs[0] is refs[1] is refs[2] and len(refs[0]) > 0


def test_join_keys_each_row_by_account_and_campaign(loaded: toolkit.AccountSet) -> None:
    joined = loaded.join("countries", ["name", "ad_format"])
    assert len(joined) == len(loaded.countries)
    for name in NAMES:
        own = loaded.account(name).join("countries", ["name", "ad_format"])
        part = joined[joined["account"] == name].drop(columns="account").reset_index(drop=True)
        pdt.assert_frame_equal(part, own)


def test_no_call_of_one_account_carried_another_accounts_key(three: Sandbox) -> None:
    three.faults.clear()
    requests_before = three.calls_by_account()
    toolkit.load_accounts(clients(three), progress=False, workers=6)
    after = three.calls_by_account()
    # each account made its own 3 calls a campaign and 4 account-wide calls, and no call named
    # a campaign of another account than its key's
    made = {user: after[user] - requests_before.get(user, 0) for user in after}
    assert sorted(made.values()) == sorted([3 * 8 + 4, 3 * 3 + 4, 3 * 3 + 4])
    assert three.foreign_calls() == []


def test_the_sandbox_log_catches_a_key_crossing_accounts(three: Sandbox) -> None:
    """The check above can fail: a campaign of the first account asked with the second key."""
    first = sandbox_client(three, 0).campaigns.list()[0]["id"]
    with pytest.raises(toolkit.NotFoundError):
        sandbox_client(three, 1, retries=0).campaigns.get(first)
    second_user = int(sandbox_client(three, 1).account.balance()["user_id"])
    assert three.foreign_calls()[-1] == (second_user, int(first))
    requests.delete(f"{three.url}/_sandbox/stats", timeout=10).raise_for_status()
    assert three.foreign_calls() == []


def test_a_refused_key_fails_that_account_only(three: Sandbox) -> None:
    given = clients(three, retries=0)
    given["south"] = toolkit.Client(three.url, "0" * 32, retries=0)
    result = toolkit.load_accounts(given, progress=False, workers=4)
    assert result.names == ["north", "east"]
    failed = result.failures
    assert failed["account"].tolist() == ["south"]
    assert failed["error"].tolist() == ["AuthError"] and failed["campaign_id"].isna().all()
    assert "0" * 32 not in failed["message"].iloc[0]
    assert set(result.campaigns["account"]) == {"north", "east"}
    with pytest.raises(KeyError, match="failed to load"):
        result.account("south")
    assert "south: not loaded, AuthError" in repr(result)


def test_a_failing_campaign_list_fails_one_account_and_a_failing_campaign_is_listed(
    three: Sandbox,
) -> None:
    three.faults.configure(
        {
            "rules": [
                {"status": 500, "count": 1, "path": "/api/campaign/list"},
                {"status": 503, "count": 1, "path": "/api/campaign/bid-rules"},
            ]
        }
    )
    try:
        result = toolkit.load_accounts(clients(three, retries=0), progress=False, workers=1)
    finally:
        three.faults.clear()
    whole = result.failures[result.failures["campaign_id"].isna()]
    assert whole["operation"].tolist() == ["campaign.list"]
    lost = whole["account"].iloc[0]
    assert lost not in result.names and len(result.names) == 2
    one = result.failures[result.failures["campaign_id"].notna()]
    assert len(one) == 1 and one["operation"].iloc[0] == "bid_rule.list"
    member = one["account"].iloc[0]
    missing = int(one["campaign_id"].iloc[0])
    assert missing not in set(result.account(member).campaigns["id"])
    assert missing in {
        int(c["id"]) for c in sandbox_client(three, NAMES.index(member)).campaigns.list()
    }


def test_a_set_is_saved_and_loaded_with_its_failures(
    loaded: toolkit.AccountSet, tmp_path: Path
) -> None:
    failed = toolkit.AccountSet(
        dict(loaded.members),
        failures=toolkit.frames.frame(
            "account_failures",
            {
                "account": ["west"],
                "campaign_id": [None],
                "operation": ["connect"],
                "error": ["ConfigError"],
                "message": ["no key"],
            },
        ),
        loaded_at=loaded.loaded_at,
    )
    folder = failed.save(tmp_path / "set")
    back = toolkit.AccountSet.load(folder)
    assert back.names == NAMES and back.loaded_at == loaded.loaded_at
    for table in (*TABLES, "balance"):
        pdt.assert_frame_equal(back.table(table), loaded.table(table))
    pdt.assert_frame_equal(back.failures, failed.failures)
    with pytest.raises(toolkit.SnapshotError, match="not a saved account set"):
        toolkit.AccountSet.load(tmp_path)


def test_all_loads_every_profile_and_one_without_its_key_is_reported(
    three: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.toml"
    keys = three.api_keys
    path.write_text(
        f'[default]\nbase_url = "{three.url}"\n'
        f'[profiles.a]\napi_key = "{keys[0]}"\n'
        '[profiles.b]\napi_key_env = "NOT_SET_ANYWHERE"\n'
        f'[profiles.c]\napi_key = "{keys[2]}"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    result = toolkit.load_accounts("all", progress=False)
    assert result.names == ["a", "c"]
    assert result.failures[["account", "operation", "error"]].values.tolist() == [
        ["b", "connect", "ConfigError"]
    ]
    assert "NOT_SET_ANYWHERE" in result.failures["message"].iloc[0]
    assert toolkit.load_accounts("c,a", progress=False).names == ["c", "a"]
    with pytest.raises(toolkit.ConfigError, match="unknown account 'd'"):
        toolkit.load_accounts(["a", "d"], progress=False)


def test_the_workers_take_campaigns_round_robin_across_accounts() -> None:
    work = RoundRobin()
    work.add("a", [1, 2, 3, 4])
    work.add("b", [10, 11])
    work.add("c", [])
    assert work.drop("c") == 0
    taken = [work.take(), work.take(), work.take()]
    assert taken == [("a", 1), ("b", 10), ("a", 2)]
    assert work.drop("a") == 2
    work.close()
    assert [work.take(), work.take()] == [("b", 11), None]


def test_an_account_name_that_cannot_name_a_folder_is_refused(three: Sandbox) -> None:
    with pytest.raises(toolkit.ConfigError, match="letters, digits"):
        toolkit.load_accounts({"../x": sandbox_client(three)}, progress=False)


def test_an_empty_set_has_the_tables_columns() -> None:
    empty = toolkit.AccountSet({})
    assert list(empty.countries.columns[:2]) == ["account", "campaign_id"]
    assert isinstance(empty.countries, pd.DataFrame) and len(empty.countries) == 0
