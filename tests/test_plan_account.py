"""A plan is applied on the account and service it was made on: applied with the client of
another account (or service) it is refused in one line before anything is journaled or
sent, and the way back of a run refuses another account's key the same way. Both accounts
are read back over plain HTTP, independently of the toolkit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, make_plan, undo
from toolkit.bulk.undo import undo_plan
from toolkit.cli import explain
from toolkit.errors import AccountMismatchError, PlanAccountError
from toolkit.sandbox import Sandbox

from .conftest import Api, cli_runner

BALANCE = "GET /api/campaign/balance 200"


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=4, seed=7, accounts=2) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def users(sb: Sandbox) -> tuple[int, int]:
    """The user ids of the two accounts, as the service's balance answers them."""
    a, b = (Api(sb.url, key).get("/api/campaign/balance").json()["user_id"] for key in sb.api_keys)
    assert a != b
    return a, b


@pytest.fixture()
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "journal.db")


def connect(sb: Sandbox, n: int) -> Any:
    return toolkit.connect(api_key=sb.api_keys[n], base_url=sb.url, retries=0)


def state(sb: Sandbox, *which: int) -> list[Any]:
    """The accounts ``which`` (default: both) read back over plain HTTP: every campaign's full
    view and bid rules."""
    out = []
    for key in [sb.api_keys[n] for n in which or range(len(sb.api_keys))]:
        api = Api(sb.url, key)
        for c in sorted(api.get("/api/campaign/list").json()["items"], key=lambda c: c["id"]):
            out.append(api.item(c["id"]))
            out.append(api.ok("/api/campaign/bid-rules", id=c["id"])["rules"])
    return out


def requests_since(sb: Sandbox, before: dict[str, int]) -> dict[str, int]:
    now = sb.stats()
    return {k: n - before.get(k, 0) for k, n in now.items() if n != before.get(k, 0)}


def raised(client: Any) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame], int, str]:
    """The account's tables read now (the base) and the same with one country bid raised by
    a tenth (desired); the campaign and the country raised."""
    account = toolkit.load_account(client, progress=False)
    base = {n: account.table(n).copy() for n in ("campaigns", "countries")}
    countries = base["countries"].copy()
    row = countries.index[0]
    countries.loc[row, "bid"] = round(float(countries.loc[row, "bid"]) * 1.1, 4)
    cid, code = int(countries.loc[row, "campaign_id"]), str(countries.loc[row, "country"])
    return {**base, "countries": countries}, base, cid, code


def bid(sb: Sandbox, n: int, cid: int, code: str) -> float:
    """A country's bid read over plain HTTP."""
    for entry in Api(sb.url, sb.api_keys[n]).item(cid)["countrySet"]:
        if code in entry["geo"].values():
            return float(entry["price"])
    raise AssertionError(f"{code} not in campaign {cid}")


def test_another_accounts_client_is_refused_before_anything_is_sent(sb, users, journal):
    a, b = users
    maker = connect(sb, 0)
    desired, base, _, _ = raised(maker)
    plan = make_plan(maker, desired, base=base)
    assert (plan.account, len(plan)) == (a, 2)  # the bid change: a drop and an add
    other = connect(sb, 1)
    before, seen = state(sb), sb.stats()
    with pytest.raises(PlanAccountError) as info:
        plan.apply(other, progress=False, journal=journal)
    assert str(info.value) == (
        f"the plan was made on account {a}, connected to account {b}: connect to {a} to apply"
        f" it, or plan again connected to {b}; nothing sent"
    )
    assert isinstance(info.value, AccountMismatchError)
    assert (info.value.made, info.value.connected, info.value.what) == (a, b, "account")
    assert requests_since(sb, seen) == {BALANCE: 1}  # the one read that tells them apart
    with pytest.raises(PlanAccountError):  # the same through the function, journal or not
        toolkit.bulk.apply.apply_plan(plan, other, progress=False, journal=None)
    assert requests_since(sb, seen) == {BALANCE: 1}  # the second time: the kept user id
    assert state(sb) == before
    assert journal.runs().empty
    assert explain(info.value) == (2, f"campaign-toolkit: {info.value}")


def test_the_account_it_was_made_on_applies_it_at_no_extra_request(sb, users, journal):
    maker = connect(sb, 0)
    desired, base, cid, code = raised(maker)
    plan = make_plan(maker, desired, base=base)
    old, other_before = bid(sb, 0, cid, code), state(sb, 1)
    seen = sb.stats()
    result = plan.apply(maker, progress=False, journal=journal, verify=False)
    assert result.ok, result.summary()
    assert BALANCE not in requests_since(sb, seen)  # the plan's read gave the user id
    assert sum(requests_since(sb, seen).values()) == 2  # the drop and the add, nothing more
    assert bid(sb, 0, cid, code) == pytest.approx(round(old * 1.1, 4))
    assert state(sb, 1) == other_before  # the second account untouched
    runs = journal.runs()
    assert runs["run_id"].tolist() == [result.run_id] and int(runs["account"][0]) == users[0]


def test_a_new_client_of_the_same_account_reads_the_balance_once(sb, journal):
    desired, base, cid, code = raised(connect(sb, 0))
    plan = make_plan(connect(sb, 0), desired, base=base)
    old = bid(sb, 0, cid, code)
    seen = sb.stats()
    assert plan.apply(connect(sb, 0), progress=False, journal=journal, verify=False).ok
    assert requests_since(sb, seen)[BALANCE] == 1
    assert sum(requests_since(sb, seen).values()) == 3  # the balance, the drop, the add
    assert bid(sb, 0, cid, code) == pytest.approx(round(old * 1.1, 4))


def test_a_plan_that_records_no_account_is_applied_as_before(sb, journal):
    client = connect(sb, 0)
    desired, base, cid, code = raised(client)
    live = toolkit.load_account(client, progress=False)
    live.balance = live.balance.iloc[0:0]  # a snapshot saved without its balance
    plan = make_plan(client, desired, base=base, live=live)
    assert plan.account is None
    old, seen = bid(sb, 0, cid, code), sb.stats()
    assert plan.apply(connect(sb, 0), progress=False, journal=journal, verify=False).ok
    assert BALANCE not in requests_since(sb, seen)
    assert bid(sb, 0, cid, code) == pytest.approx(round(old * 1.1, 4))


def test_another_service_with_the_same_user_id_is_refused(sb, users, journal):
    with Sandbox(campaigns=4, seed=7, accounts=2) as twin:  # the same accounts, elsewhere
        elsewhere = toolkit.connect(api_key=twin.api_keys[0], base_url=twin.url, retries=0)
        assert elsewhere.account.user_id() == users[0]
        desired, base, _, _ = raised(connect(sb, 0))
        plan = make_plan(connect(sb, 0), desired, base=base)
        before, seen = state(twin), twin.stats()
        with pytest.raises(PlanAccountError) as info:
            plan.apply(elsewhere, progress=False, journal=journal)
        assert info.value.what == "service"
        assert str(info.value).startswith(f"the plan was made on service {sb.url}, connected to")
        assert twin.url in str(info.value) and str(info.value).endswith("; nothing sent")
        assert requests_since(twin, seen) == {} and state(twin) == before
    assert journal.runs().empty


def test_undo_of_a_run_with_another_accounts_client_is_refused(sb, users, journal):
    a, b = users
    client = connect(sb, 0)
    desired, base, _, _ = raised(client)
    run = make_plan(client, desired, base=base).apply(client, progress=False, journal=journal)
    assert run.ok
    prepared = undo_plan(client, run.run_id, journal=journal)  # previewed on the first account
    before = state(sb)
    other = connect(sb, 1)
    with pytest.raises(toolkit.ToolkitError) as info:
        undo(other, run.run_id, journal=journal, progress=False)
    assert str(info.value) == (
        f"run {run.run_id} was made on account {a}, and this key is account {b}: use the key"
        " of the account it was made on; nothing sent"
    )
    with pytest.raises(PlanAccountError):  # the first account's undo plan, sent with the other
        undo(other, run.run_id, journal=journal, progress=False, plan=prepared)
    assert state(sb) == before
    assert journal.runs()["run_id"].tolist() == [run.run_id]


def test_undo_refuses_another_account_when_its_read_missed_the_balance(sb, users, journal):
    client = connect(sb, 0)
    desired, base, _, _ = raised(client)
    run = make_plan(client, desired, base=base).apply(client, progress=False, journal=journal)
    before = state(sb)
    sb.faults.configure({"rules": [{"status": 503, "path": "/api/campaign/balance", "count": 1}]})
    try:  # the other account's read of the campaigns loses its balance: asked again
        with pytest.raises(toolkit.ToolkitError, match=f"this key is account {users[1]}"):
            undo(connect(sb, 1), run.run_id, journal=journal, progress=False)
    finally:
        sb.faults.clear()
    assert state(sb) == before
    assert journal.runs()["run_id"].tolist() == [run.run_id]


def test_command_line_undo_with_another_key_exits_2(sb, users, monkeypatch, capsys, tmp_path):
    client = connect(sb, 0)
    desired, base, _, _ = raised(client)
    book = tmp_path / "journal.db"
    run = make_plan(client, desired, base=base).apply(client, progress=False, journal=book)
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[1])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(book))
    before = state(sb)
    code, out, err = cli_runner(sb, capsys)("undo", run.run_id, "--yes")
    assert code == 2, out + err
    assert err.strip() == (
        f"campaign-toolkit: run {run.run_id} was made on account {users[0]}, and this key is"
        f" account {users[1]}: use the key of the account it was made on; nothing sent"
    )
    assert sb.api_keys[1] not in out + err
    assert state(sb) == before
    assert Journal(book).runs()["run_id"].tolist() == [run.run_id]
