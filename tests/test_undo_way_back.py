"""The way back: undo and repair planned three ways against live, bound to their account, once.

Real HTTP against a sandbox of each test's own. Every state the tests judge is read with plain
HTTP (``Api``), independently of the toolkit's loaders; changes "by someone else" are made the
same way, as another tool or a person in the web interface would make them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, make_plan, undo
from toolkit.bulk.repair import repair_plan
from toolkit.bulk.undo import undo_plan
from toolkit.sandbox import Sandbox

from .conftest import Api, cli_runner

UPDATE = "/api/campaign/update"


@pytest.fixture()
def sb():
    with Sandbox(campaigns=4, seed=7, accounts=2) as sandbox:
        yield sandbox


@pytest.fixture()
def api(sb) -> Api:
    return Api(sb.url, sb.api_keys[0])


@pytest.fixture()
def journal(tmp_path) -> Journal:
    return Journal(tmp_path / "journal.db")


def connect(sb, key: int = 0, **options: Any):
    settings = {"retries": 0, "backoff": 0.01, **options}
    return toolkit.connect(api_key=sb.api_keys[key], base_url=sb.url, **settings)


def bids(api: Api, cid: int) -> dict[str, float]:
    """The campaign's country bids, read with plain HTTP."""
    out = {}
    for entry in api.item(cid)["countrySet"]:
        for code in entry["geo"].values():
            out[code] = float(entry["price"])
    return out


def subids(api: Api, cid: int) -> set[str]:
    return set(api.ok("/api/campaign/sub-id-black", id=cid)["items"])


def set_bid(api: Api, cid: int, code: str, bid: float) -> None:
    """Someone else changes a bid (drop and add, as the interface does it)."""
    api.ok("/api/campaign/drop-country", id=cid, items=[code])
    api.ok("/api/campaign/add-country", id=cid, items={code: str(bid)})


def tables(client) -> dict[str, pd.DataFrame]:
    account = toolkit.load_account(client, progress=False)
    assert account.failures.empty
    return {n: account.table(n).copy() for n in ("campaigns", "countries", "lists")}


def first_countries(base: dict[str, pd.DataFrame], n: int = 2) -> list[tuple[int, str, float]]:
    """``n`` countries of one campaign: (campaign id, code, bid)."""
    countries = base["countries"]
    cid = int(countries["campaign_id"].value_counts().index[0])
    rows = countries[countries["campaign_id"] == cid].head(n)
    assert len(rows) == n
    return [(cid, str(r.country), float(r.bid)) for r in rows.itertuples()]


def rebid(base: dict[str, pd.DataFrame], factor: float, codes: set[str]) -> dict:
    """The countries ``codes`` bid ``factor`` times higher (all other rows unchanged)."""
    countries = base["countries"].copy()
    mask = countries["country"].isin(codes)
    countries.loc[mask, "bid"] = (countries.loc[mask, "bid"] * factor).round(4)
    return {**base, "countries": countries}


def with_subids(tables: dict, cid: int, items: list[str]) -> dict:
    """The tables with ``items`` added to campaign ``cid``'s subId blacklist."""
    lists = tables["lists"]
    added = pd.DataFrame({"campaign_id": cid, "list": "subid_black", "item": items})
    added = added.astype(lists.dtypes.to_dict())
    return {**tables, "lists": pd.concat([lists, added], ignore_index=True)}


def apply(client, desired, base, journal) -> Any:
    result = make_plan(client, desired, base=base).apply(client, progress=False, journal=journal)
    assert result.ok, result.summary()
    return result


# --------------------------------------------------------------------------- conflicts


def test_undo_leaves_a_later_runs_change_alone_and_lists_it(sb, api, journal):
    client = connect(sb)
    base = tables(client)
    (cid, us, us_bid), (_, other, other_bid) = first_countries(base)
    a = apply(client, rebid(base, 1.5, {us, other}), base, journal)
    after_a = tables(client)
    b = apply(client, rebid(after_a, 1.2, {us}), after_a, journal)  # run B moves US again
    b_bid = bids(api, cid)[us]

    plan = undo_plan(client, a.run_id, journal=journal)
    assert len(plan.conflicts) == 1
    conflict = plan.conflicts.iloc[0]
    assert conflict["key"] == (cid, us) and conflict["live"] == pytest.approx(b_bid)
    text = plan.summary()
    assert "changed by someone else since the run, left alone" in text
    assert f"bid {other}" in text and "--prefer desired" in text

    undone = undo(client, a.run_id, journal=journal, plan=plan, progress=False)
    assert undone.ok, undone.summary()
    live = bids(api, cid)
    assert live[us] == pytest.approx(b_bid)  # B's change kept
    assert live[other] == pytest.approx(other_bid)  # A's own change undone
    # the undo of B then puts A's US bid back, and undoing A again over it is explicit
    undo(client, b.run_id, journal=journal, progress=False)
    assert bids(api, cid)[us] == pytest.approx(us_bid * 1.5, abs=1e-4)


def test_undo_leaves_a_third_partys_changes_alone_unless_preferred(sb, api, journal):
    client = connect(sb)
    base = tables(client)
    (cid, us, us_bid), (_, other, other_bid) = first_countries(base)
    desired = with_subids(rebid(base, 1.5, {us, other}), cid, ["0ddba11", "c0ffee"])
    a = apply(client, desired, base, journal)
    # someone else, between the run and its undo: a new bid, and one added subId dropped
    set_bid(api, cid, us, 0.777)
    api.ok("/api/campaign/drop-sub-id-black", id=cid, items=["c0ffee"])

    plan = undo_plan(client, a.run_id, journal=journal)
    assert sorted(map(str, plan.conflicts["key"])) == [str((cid, us))]
    undone = undo(client, a.run_id, journal=journal, plan=plan, progress=False)
    assert undone.ok, undone.summary()
    assert bids(api, cid)[us] == pytest.approx(0.777)
    assert bids(api, cid)[other] == pytest.approx(other_bid)
    assert not {"0ddba11", "c0ffee"} & subids(api, cid)

    with pytest.raises(toolkit.ToolkitError, match=f"already undone by run {undone.run_id}"):
        undo_plan(client, a.run_id, journal=journal)
    again = undo(client, a.run_id, journal=journal, prefer="desired", progress=False)
    assert again.ok, again.summary()
    assert bids(api, cid)[us] == pytest.approx(us_bid)


def test_undo_leaves_alone_a_country_someone_dropped_after_the_run(sb, api, journal):
    """A bid change whose add landed did not leave its country absent: a country gone since
    the run was dropped by someone else, and undo does not add it back."""
    client = connect(sb)
    base = tables(client)
    (cid, us, _us_bid), (_, other, other_bid) = first_countries(base)
    a = apply(client, rebid(base, 1.5, {us, other}), base, journal)
    api.ok("/api/campaign/drop-country", id=cid, items=[us])
    plan = undo_plan(client, a.run_id, journal=journal)
    assert [tuple(k) for k in plan.conflicts["key"]] == [(cid, us)]
    assert plan.conflicts.iloc[0]["live"] == "<absent>"
    undo(client, a.run_id, journal=journal, plan=plan, progress=False)
    live = bids(api, cid)
    assert us not in live and live[other] == pytest.approx(other_bid)


# --------------------------------------------------------------------------- once, and bound


def test_a_run_is_undone_once_and_repair_of_an_undone_run_has_nothing_to_do(
    sb, api, journal, tmp_path
):
    client = connect(sb)
    base = tables(client)
    (cid, us, us_bid), _ = first_countries(base)
    a = apply(client, rebid(base, 2.0, {us}), base, journal)
    first = undo(client, a.run_id, journal=journal, progress=False)
    assert first.ok and bids(api, cid)[us] == pytest.approx(us_bid)
    runs = journal.runs()
    with pytest.raises(toolkit.ToolkitError, match=f"already undone by run {first.run_id}"):
        undo(client, a.run_id, journal=journal, progress=False)
    assert len(journal.runs()) == len(runs)  # nothing journaled, nothing sent
    run_id, plan = repair_plan(client, a.run_id, journal=journal)
    assert run_id == a.run_id and len(plan) == 0
    assert bids(api, cid)[us] == pytest.approx(us_bid)
    # undoing the undo brings the run back; then the run can be undone again
    undo(client, first.run_id, journal=journal, progress=False)
    assert bids(api, cid)[us] == pytest.approx(us_bid * 2, abs=1e-4)
    undo(client, a.run_id, journal=journal, progress=False)
    assert bids(api, cid)[us] == pytest.approx(us_bid)


def test_undo_and_repair_refuse_another_account_or_service(sb, api, journal):
    client = connect(sb)
    base = tables(client)
    (cid, us, us_bid), _ = first_countries(base)
    a = apply(client, rebid(base, 1.5, {us}), base, journal)
    moved = bids(api, cid)[us]
    other_account = connect(sb, key=1)
    with pytest.raises(toolkit.ToolkitError, match="made on account 1001, and this key is"):
        undo(other_account, a.run_id, journal=journal, progress=False)
    with Sandbox(campaigns=4, seed=7) as elsewhere:
        other_service = toolkit.connect(api_key=elsewhere.api_keys[0], base_url=elsewhere.url)
        for way_back in (undo, toolkit.repair):
            with pytest.raises(toolkit.ToolkitError, match=f"was made on {sb.url}, not on"):
                way_back(other_service, a.run_id, journal=journal, progress=False)
        assert bids(Api(elsewhere.url, elsewhere.api_keys[0]), cid)[us] == pytest.approx(us_bid)
    assert bids(api, cid)[us] == pytest.approx(moved)


# --------------------------------------------------------------------------- settings


def test_an_undo_whose_settings_call_fails_is_reported_and_finished_by_repair(sb, api, journal):
    client = connect(sb)
    base = tables(client)
    (cid, us, us_bid), _ = first_countries(base)
    desired = rebid(base, 1.5, {us})
    campaigns = desired["campaigns"].copy()
    row = campaigns.index[campaigns["id"] == cid][0]
    old_note = api.item(cid)["note"]
    campaigns.loc[row, "note"] = "changed by a bulk edit"
    desired["campaigns"] = campaigns
    a = apply(client, desired, base, journal)
    assert api.item(cid)["note"] == "changed by a bulk edit"

    sb.faults.configure({"rules": [{"status": 503, "path": UPDATE}]})
    try:
        undone = undo(client, a.run_id, journal=journal, progress=False)
    finally:
        sb.faults.clear()
    assert not undone.ok
    failed = [o for o in undone.outcomes if o.outcome == "failed"]
    assert [(o.target, o.action, o.campaign_id) for o in failed] == [("campaign", "update", cid)]
    assert "repair" in undone.summary()
    journaled = journal.outcomes(undone.run_id)
    assert set(journaled["outcome"]) == {"applied", "failed"}
    assert api.item(cid)["note"] == "changed by a bulk edit"  # as the undo reports
    assert bids(api, cid)[us] == pytest.approx(us_bid)

    repaired = toolkit.repair(client, undone.run_id, journal=journal, progress=False)
    assert repaired.ok, repaired.summary()
    assert api.item(cid)["note"] == old_note
    assert bids(api, cid)[us] == pytest.approx(us_bid)
    # the undo is now finished: undoing the run again is refused
    with pytest.raises(toolkit.ToolkitError, match="already undone"):
        undo_plan(client, a.run_id, journal=journal)


def test_a_failed_undo_can_be_run_again_and_converges(sb, api, journal):
    client = connect(sb)
    base = tables(client)
    (cid, us, us_bid), (_, other, other_bid) = first_countries(base)
    desired = with_subids(rebid(base, 1.5, {us, other}), cid, ["0ddba11", "c0ffee"])
    a = apply(client, desired, base, journal)
    assert {"0ddba11", "c0ffee"} <= subids(api, cid)
    sb.faults.configure({"rules": [{"status": 500, "path": "/api/campaign/drop-sub-id-black"}]})
    try:
        first = undo(client, a.run_id, journal=journal, progress=False)
    finally:
        sb.faults.clear()
    failed = {(o.target, o.item) for o in first.outcomes if o.outcome == "failed"}
    assert failed == {("subid_black", "0ddba11"), ("subid_black", "c0ffee")}
    assert {"0ddba11", "c0ffee"} <= subids(api, cid)  # as the undo reports
    assert bids(api, cid)[us] == pytest.approx(us_bid)
    second = undo(client, a.run_id, journal=journal, progress=False)  # the rest only
    assert second.ok, second.summary()
    assert {(o.target, o.action) for o in second.outcomes} == {("subid_black", "drop")}
    assert not {"0ddba11", "c0ffee"} & subids(api, cid)
    assert bids(api, cid)[other] == pytest.approx(other_bid)
    with pytest.raises(toolkit.ToolkitError, match=f"already undone by run {second.run_id}"):
        undo_plan(client, a.run_id, journal=journal)


# --------------------------------------------------------------------------- command line


def test_undo_on_the_command_line_previews_dry_runs_and_refuses_twice(
    sb, api, journal, tmp_path, monkeypatch, capsys
):
    client = connect(sb)
    base = tables(client)
    (cid, us, us_bid), _ = first_countries(base)
    a = apply(client, rebid(base, 1.5, {us}), base, journal)
    new_bid = bids(api, cid)[us]
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(journal.path))
    cli = cli_runner(sb, capsys)

    code, out, _ = cli("undo", a.run_id, "--dry-run")
    assert code == 0, out
    assert f"Undo of run {a.run_id}: Plan: 2 calls, 1 change" in out
    assert f"bid {us} {new_bid:g} -> {us_bid:g}" in out and "Dry run: nothing sent." in out
    assert bids(api, cid)[us] == pytest.approx(new_bid)

    code, out, _ = cli("undo", a.run_id)  # not a terminal, no --yes: asks nothing, sends nothing
    assert code == 1 and "Nothing sent." in out
    code, out, _ = cli("undo", a.run_id, "--yes")
    assert code == 0, out
    assert "Applied: 1 of 1 change (run" in out and bids(api, cid)[us] == pytest.approx(us_bid)
    code, _, err = cli("undo", a.run_id, "--yes")
    assert code == 2 and "already undone by run" in err and "nothing sent" in err

    code, out, _ = cli("repair", a.run_id)
    assert code == 0 and out.startswith(f"Nothing to repair: run {a.run_id} was undone by run")
    code, out, _ = cli("repair")
    assert code == 0 and out.startswith("Nothing to repair: every run in the journal")
    code, out, _ = cli("history")
    assert code == 0 and "undone by " in out and f"undoes {a.run_id}" in out
    assert max(map(len, out.splitlines())) <= 100 and "None" not in out and "NaN" not in out


def test_a_journal_from_before_runs_were_bound_opens_and_its_runs_list(tmp_path):
    """A journal written before runs kept their account gains the new columns when opened;
    its runs show no account (undo then checks the service alone)."""
    import sqlite3

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE runs(run_id TEXT PRIMARY KEY, started TEXT NOT NULL, finished TEXT,"
            " base_url TEXT NOT NULL, calls INTEGER NOT NULL, summary TEXT, undoes TEXT)"
        )
        db.execute(
            "INSERT INTO runs VALUES ('20260101-000000-abcdef', '2026-01-01T00:00:00+00:00',"
            " '2026-01-01T00:00:01+00:00', 'http://127.0.0.1:1', 0, 'Applied: nothing', NULL)"
        )
    runs = Journal(path).runs()
    assert list(runs["run_id"]) == ["20260101-000000-abcdef"]
    assert runs["account"].isna().all() and {"repairs", "conflicts"} <= set(runs.columns)
