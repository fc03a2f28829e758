"""The notebook forms over several accounts, on a sandbox of three accounts over real HTTP: the
picker's account filter, selections of (account, campaign id) pairs, and edits across two
accounts applied as one plan per account, each with its own key (checked in the sandbox's log
and read back with each account's own client), then undone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import toolkit
import toolkit.widgets as tw
from toolkit import spec
from toolkit.bulk import Journal
from toolkit.client.client import sandbox_client
from toolkit.sandbox import Sandbox
from toolkit.widgets import CampaignPicker

NAMES = ["north", "south", "east"]
GEO = spec.bid_kind().column
SUBIDS = ["c0ffee01", "c0ffee02"]


@pytest.fixture(scope="module")
def three() -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, accounts=3, seed=5) as sb:
        yield sb


@pytest.fixture()
def config(three: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config file naming the sandbox's three accounts; each key in a variable of its own."""
    path = tmp_path / "config.toml"
    tables = "".join(f'\n[profiles.{name}]\napi_key_env = "KEY_{name.upper()}"\n' for name in NAMES)
    path.write_text(f'[default]\nbase_url = "{three.url}"\nretries = 0\n{tables}', "utf-8")
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    for name, key in zip(NAMES, three.api_keys, strict=True):
        monkeypatch.setenv(f"KEY_{name.upper()}", key)
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        monkeypatch.delenv(name, raising=False)
    return path


def own_clients(sb: Sandbox) -> dict[str, toolkit.Client]:
    """A client of each account, made here (not by the forms): to read what is live."""
    return {name: sandbox_client(sb, i, retries=0) for i, name in enumerate(NAMES)}


def users(sb: Sandbox) -> dict[str, int]:
    return {n: int(c.account.user_id() or 0) for n, c in own_clients(sb).items()}


def first_of(picker: CampaignPicker, name: str, n: int = 1) -> list[tuple[str, int]]:
    return [k for k in picker.entries if k[0] == name][:n]


def live(sb: Sandbox, name: str, ids: list[int]) -> toolkit.Account:
    return toolkit.load_account(own_clients(sb)[name], ids, progress=False)


def subids(sb: Sandbox, name: str, ids: list[int]) -> set[tuple[int, str]]:
    lists = live(sb, name, ids).lists
    lists = lists[lists["list"].astype(str) == "subid_black"]
    return {(int(c), str(i)) for c, i in zip(lists["campaign_id"], lists["item"], strict=True)}


def bids(sb: Sandbox, name: str, ids: list[int]) -> dict[tuple[int, str], float]:
    c = live(sb, name, ids).countries
    return {(int(r.campaign_id), str(getattr(r, GEO))): float(r.bid) for r in c.itertuples()}


def made(before: dict[int, int], after: dict[int, int]) -> dict[int, int]:
    """Calls each user's key made between two readings of the sandbox's log."""
    return {u: n - before.get(u, 0) for u, n in after.items() if n - before.get(u, 0)}


# --------------------------------------------------------------------------- the picker


def test_the_account_filter_narrows_the_picker_to_one_account(config: Path, three: Sandbox):
    app = tw.open(accounts="all", progress=False)
    picker = app.picker
    assert set(app.forms) == {"targeting", "bids", "lists"} and picker.by_account
    listed = {
        n: {int(c["id"]) for c in cl.campaigns.list()} for n, cl in own_clients(three).items()
    }
    assert set(picker.matching) == {(n, i) for n, ids in listed.items() for i in ids}
    chosen = first_of(picker, "north")
    picker.campaigns.value = tuple(chosen)
    picker.account.value = "south"
    assert {k[0] for k in picker.matching} == {"south"}
    assert {k[1] for k in picker.matching} == listed["south"]
    assert all(label.startswith("south  ") for label, _ in picker.campaigns.options)
    assert picker.selected == tuple(chosen) and "(1 hidden)" in picker.count.value
    assert f"{len(listed['south'])} of {sum(map(len, listed.values()))} match" in (
        picker.count.value
    )
    picker.account.value = None
    assert len(picker.matching) == sum(map(len, listed.values()))
    # a loaded set opens the same way: each member connected by its profile
    loaded = toolkit.load_accounts(["south", "east"], progress=False)
    form = tw.ListForm(loaded)
    assert form.accounts.names == ["south", "east"] and set(form.picker.table["account"]) == {
        "south",
        "east",
    }


def test_a_pasted_id_of_campaigns_in_two_accounts_is_not_guessed(three: Sandbox):
    """One account under two names: every id is a campaign of both."""
    twice = {"a": sandbox_client(three, 1), "b": sandbox_client(three, 1)}
    form = tw.ListForm(twice)
    picker = form.picker
    cid = picker.entries[0][1]
    picker.paste.value = str(cid)
    assert picker.take_pasted() == [] and picker.selected == ()
    assert f"{cid} (a, b)" in picker.paste_note.value and "pick one under Account" in (
        picker.paste_note.value
    )
    picker.account.value = "b"
    assert picker.take_pasted() == [("b", cid)] and picker.selected == (("b", cid),)
    with pytest.raises(ValueError, match=r"\(account, campaign id\) pair"):
        CampaignPicker(picker.table, [cid])


def test_a_client_of_another_account_is_refused(three: Sandbox):
    clients = own_clients(three)
    loaded = toolkit.load_accounts(clients, progress=False)
    swapped = {**clients, "north": clients["south"]}
    with pytest.raises(toolkit.ToolkitError, match="account 'north'"):
        tw.open(accounts=loaded, client=swapped, progress=False)


# --------------------------------------------------------------------------- edits


def test_a_list_edit_across_two_accounts_goes_to_each_with_its_own_key(
    three: Sandbox, tmp_path: Path
):
    journal = tmp_path / "journal.db"
    app = tw.open(accounts=own_clients(three), journal=journal, progress=False)
    picker, form = app.picker, app.forms["lists"]
    chosen = first_of(picker, "south") + first_of(picker, "east")
    picker.campaigns.value = tuple(chosen)
    ids = {n: [i for a, i in chosen if a == n] for n in ("south", "east")}
    before = {n: subids(three, n, ids[n]) for n in ids}
    north_ids = [i for a, i in picker.entries if a == "north"]
    north_before = live(three, "north", north_ids).lists
    form.list_name.value, form.paste.value = "subid_black", "\n".join(SUBIDS)
    form.add_button.click()
    plans = form.preview()
    assert plans.names == ["south", "east"], form.message
    changes = plans.changes()
    assert set(zip(changes["account"], changes["campaign_id"], strict=True)) == set(chosen)
    log_before = three.calls_by_account()
    form.apply_button.click()
    assert form.level == "ok", form.message
    spent = made(log_before, three.calls_by_account())
    who = users(three)
    assert set(spent) == {who["south"], who["east"]}  # north's key made no call
    assert three.foreign_calls() == []
    for name in ids:  # read with each account's own client
        added = {(i, s) for i in ids[name] for s in SUBIDS}
        assert subids(three, name, ids[name]) == before[name] | added
    pd.testing.assert_frame_equal(live(three, "north", north_ids).lists, north_before)
    runs = Journal(journal).runs()
    assert runs["run_set"].nunique() == 1 and sorted(runs["profile"]) == ["east", "south"]
    # a new app over the same journal (a reload) undoes the set: both accounts back
    again = tw.open(accounts=own_clients(three), journal=journal, progress=False)
    again.forms["lists"].undo_button.click()
    assert again.forms["lists"].level == "ok", again.forms["lists"].message
    for name in ids:
        assert subids(three, name, ids[name]) == before[name]
    assert three.foreign_calls() == []
    journaled = len(Journal(journal).runs())
    again.forms["lists"].undo_button.click()  # once only: no run more
    assert "was undone by run" in again.forms["lists"].message
    assert "nothing sent" in again.forms["lists"].message
    assert len(Journal(journal).runs()) == journaled == 4
    for name in ids:
        assert subids(three, name, ids[name]) == before[name]


def test_a_bid_edit_across_two_accounts_applies_and_undoes(three: Sandbox, tmp_path: Path):
    app = tw.open(accounts=own_clients(three), journal=tmp_path / "j.db", progress=False)
    picker, form = app.picker, app.forms["bids"]
    chosen = first_of(picker, "north", 2) + first_of(picker, "east")
    picker.campaigns.value = tuple(chosen)
    ids = {n: [i for a, i in chosen if a == n] for n in ("north", "east")}
    before = {n: bids(three, n, ids[n]) for n in ids}
    assert set(form.rows()["account"]) == {"north", "east"}
    form.allow["bid_jump"].value = True
    form.how.value, form.amount.value = "set", "0.77"
    form.change_button.click()
    assert [n.split(":")[0] for n in form.notes] == ["north", "east"], form.message
    form.apply_button.click()
    assert form.level == "ok", form.message
    assert form.last_result.ok and set(form.last_result.results) == {"north", "east"}
    for name in ids:
        assert bids(three, name, ids[name]) == {k: 0.77 for k in before[name]}
    assert three.foreign_calls() == []
    assert "0.77" in form.bids_view.value and "<td>east</td>" in form.bids_view.value
    form.undo_button.click()
    assert form.level == "ok", form.message
    for name in ids:
        assert bids(three, name, ids[name]) == before[name]


def test_an_edit_one_account_refuses_keeps_nothing(three: Sandbox, tmp_path: Path):
    app = tw.open(accounts=own_clients(three), journal=tmp_path / "j.db", progress=False)
    picker, form = app.picker, app.forms["bids"]
    picker.campaigns.value = tuple(first_of(picker, "north") + first_of(picker, "east"))
    have = {n: set(form.rows().query("account == @n")[GEO]) for n in ("north", "east")}
    only = sorted(have["north"] - have["east"])
    assert only, have
    form.countries.value = (only[0],)  # rows of north only
    form.how.value, form.amount.value = "set", "0.5"
    form.change_button.click()
    assert form.level == "error" and "account east: no row to change" in form.message
    assert form.notes == [] and not form.has_edits()


def oses(sb: Sandbox, name: str, ids: list[int]) -> set[tuple[int, str]]:
    t = live(sb, name, ids).targets
    t = t[t["kind"].astype(str) == "os"]
    return {(int(c), str(v)) for c, v in zip(t["campaign_id"], t["value"], strict=True)}


def test_a_targeting_edit_across_two_accounts_applies_and_undoes(three: Sandbox, tmp_path: Path):
    app = tw.open(accounts=own_clients(three), journal=tmp_path / "j.db", progress=False)
    picker, form = app.picker, app.forms["targeting"]
    chosen = first_of(picker, "north") + first_of(picker, "south", 2)
    picker.campaigns.value = tuple(chosen)
    ids = {n: [i for a, i in chosen if a == n] for n in ("north", "south")}
    before = {n: oses(three, n, ids[n]) for n in ids}
    form.kind.value = "os"
    ed = form.editor("os")
    had = {v for _g, v in {(g, v) for n in ids for g, v in before[n]}}
    fresh = [v for _label, v in ed.chooser.options.options if v[1] not in had]
    ed.chooser.options.value = (fresh[0],)
    value = fresh[0][1]
    ed.add_button.click()
    assert [n.split(":")[0] for n in form.notes] == ["north", "south"], form.message
    assert any(value in label and label.endswith(" - all") for label, _ in ed.current.options)
    log_before = three.calls_by_account()
    form.apply_button.click()
    assert form.level == "ok", form.message
    spent = made(log_before, three.calls_by_account())
    assert set(form.last_result.results) == {"north", "south"}
    who = users(three)
    assert set(spent) == {who["north"], who["south"]}  # east's key made no call
    assert three.foreign_calls() == []
    for name in ids:  # read with each account's own client
        assert oses(three, name, ids[name]) == before[name] | {(i, value) for i in ids[name]}
    form.undo_button.click()
    assert form.level == "ok", form.message
    for name in ids:
        assert oses(three, name, ids[name]) == before[name]
    assert three.foreign_calls() == []


def test_prices_asked_over_two_accounts_say_what_each_got(three: Sandbox, tmp_path: Path):
    app = tw.open(accounts=own_clients(three), journal=tmp_path / "j.db", progress=False)
    picker, form = app.picker, app.forms["bids"]
    picker.campaigns.value = tuple(first_of(picker, "north", 2) + first_of(picker, "east"))
    form.prices_button.click()
    assert form.level == "ok", form.message
    # one line of each account, in the order asked, not the last account's alone
    lines = form.message.split("; ")
    assert [x.split(":")[0] for x in lines] == ["north", "east"], form.message
    assert all("price call(s)" in x for x in lines), form.message
    rows = {n: len(form.rows().query("account == @n")) for n in ("north", "east")}
    for name, line in zip(("north", "east"), lines, strict=True):
        assert f"prices of {rows[name]:,} row(s)" in line, (line, rows)
