"""One workbook across accounts: exported with an ``account`` column, edited, planned and
applied with each account's own key as one run of the set, undone per account and as a set,
over real HTTP on a sandbox of three accounts. Live state is read back with each account's
own client; the sandbox's own log says no call carried another account's key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.bulk.journal import Journal
from toolkit.bulk.workbook import read_workbook
from toolkit.errors import PlanRefused, WorkbookError
from toolkit.sandbox import Sandbox

from .conftest import profiles_config

NAMES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def three() -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, accounts=3, seed=5) as sb:
        yield sb


@pytest.fixture()
def config(three: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Profiles a, b, c of the sandbox's three accounts; the sandbox as seeded."""
    return profiles_config(three, tmp_path / "config.toml", monkeypatch, NAMES)


def export(tmp_path: Path, name: str = "set.xlsx") -> Path:
    return toolkit.export_workbook(toolkit.load_accounts("all", progress=False), tmp_path / name)


def live(name: str) -> toolkit.Account:
    """One account read with its own client (not through the code under test)."""
    with toolkit.connect(profile=name) as client:
        return toolkit.load_account(client, progress=False)


def rows_of(ws: Any) -> tuple[list[str], list[Any]]:
    header = [c.value for c in ws[1]]
    return header, list(ws.iter_rows(min_row=2))


def first_row(ws: Any, account: str) -> tuple[list[str], Any]:
    header, rows = rows_of(ws)
    return header, next(r for r in rows if r[0].value == account)


def edit_three(path: Path) -> dict[str, Any]:
    """A bid of a, a new subId of b (its account cell left empty), a name of c."""
    wb = openpyxl.load_workbook(path)
    header, row = first_row(wb["countries"], "a")
    bid = round(float(row[header.index("bid")].value) * 1.5, 4)
    a = (int(row[header.index("campaign_id")].value), row[header.index("country")].value, bid)
    row[header.index("bid")].value = bid
    header, row = first_row(wb["campaigns"], "b")
    b = int(row[header.index("id")].value)
    ws = wb["lists"]
    header, _ = rows_of(ws)
    new = [None] * len(header)
    new[header.index("campaign_id")] = b
    new[header.index("list")] = "subid_black"
    new[header.index("item")] = "a9e3c0de77"
    ws.append(new)
    header, row = first_row(wb["campaigns"], "c")
    c = (int(row[header.index("id")].value), "Renamed by the agency")
    row[header.index("name")].value = c[1]
    wb.save(path)
    return {"a": a, "b": b, "c": c}


def shows(edits: dict[str, Any]) -> dict[str, bool]:
    """Whether each account's live state shows its edit."""
    cid, country, bid = edits["a"]
    countries = live("a").countries
    got = countries[(countries["campaign_id"] == cid) & (countries["country"] == country)]
    lists = live("b").lists
    cid_b = edits["b"]
    cid_c, name = edits["c"]
    campaigns = live("c").campaigns
    return {
        "a": abs(float(got["bid"].iloc[0]) - bid) < 1e-9,
        "b": bool(((lists["campaign_id"] == cid_b) & (lists["item"] == "a9e3c0de77")).any()),
        "c": campaigns.loc[campaigns["id"] == cid_c, "name"].iloc[0] == name,
    }


# --------------------------------------------------------------------------- export and read


def test_every_sheet_has_the_account_first_and_reads_back_as_each_accounts_own(
    config: Path, tmp_path: Path
) -> None:
    path = export(tmp_path)
    wb = openpyxl.load_workbook(path, read_only=True)
    for sheet in ("campaigns", "countries", "lists", "_base_campaigns"):
        assert next(wb[sheet].iter_rows(max_row=1, values_only=True))[0] == "account"
    book = toolkit.read_set_workbook(path)
    assert list(book.members) == NAMES
    for name in NAMES:
        alone = tmp_path / f"{name}.xlsx"
        with toolkit.connect(profile=name) as client:
            toolkit.export_workbook(client, alone)
        own = read_workbook(alone)
        for table, df in own.desired.items():
            pd.testing.assert_frame_equal(book.members[name].desired[table], df)
            pd.testing.assert_frame_equal(book.members[name].base[table], own.base[table])
        assert book.members[name].meta["account"] == own.meta["account"]
    # unedited, the set plans nothing and sends no write
    plans = toolkit.plan_accounts(book)
    assert len(plans) == 0 and plans.names == NAMES


def test_a_set_workbook_is_refused_by_the_one_account_planner(config: Path, tmp_path: Path) -> None:
    path = export(tmp_path)
    with toolkit.connect(profile="a") as client, pytest.raises(WorkbookError) as caught:
        toolkit.plan(client, read_workbook(path))
    assert "holds the accounts a, b, c" in str(caught.value)


def test_a_row_naming_an_unknown_account_or_another_accounts_campaign_is_refused_with_its_cell(
    config: Path, tmp_path: Path
) -> None:
    path = export(tmp_path)
    wb = openpyxl.load_workbook(path)
    header, rows = rows_of(wb["countries"])
    typo = next(r for r in rows if r[0].value == "a")
    typo[0].value = "aa"
    moved = next(r for r in rows if r[0].value == "b")
    moved[0].value = "c"
    wb.save(path)
    with pytest.raises(WorkbookError) as caught:
        toolkit.read_set_workbook(path)
    problems = caught.value.to_frame()
    assert set(problems["column"]) == {"account"}
    by_value = {p.value: p for p in problems.itertuples()}
    assert by_value["aa"].row == typo[0].row and by_value["aa"].sheet == "countries"
    assert "unknown account 'aa': this workbook holds a, b, c" in by_value["aa"].message
    assert by_value["c"].row == moved[0].row
    assert "is in account b, not c" in by_value["c"].message


def test_an_account_without_a_profile_is_refused_with_the_first_cell_naming_it(
    config: Path, tmp_path: Path
) -> None:
    path = export(tmp_path)
    _, first = first_row(openpyxl.load_workbook(path)["campaigns"], "c")
    config.write_text(config.read_text().split("[profiles.c]")[0], encoding="utf-8")
    with pytest.raises(WorkbookError) as caught:
        toolkit.plan_accounts(path)
    (problem,) = caught.value.problems
    assert (problem.sheet, problem.row, problem.column, problem.value) == (
        "campaigns",
        first[0].row,
        "account",
        "c",
    )
    assert "no profile for account 'c'" in problem.message
    # the other accounts can still be planned on their own
    assert toolkit.plan_accounts(path, accounts=["a", "b"]).names == ["a", "b"]


def test_the_hidden_sheet_of_each_campaigns_account_is_checked(
    config: Path, tmp_path: Path
) -> None:
    path = export(tmp_path)
    wb = openpyxl.load_workbook(path)
    header, rows = rows_of(wb["_base_campaigns"])
    rows[0][0].value = "b" if rows[0][0].value != "b" else "c"
    wb.save(path)
    with pytest.raises(WorkbookError, match="which campaign is in which account"):
        toolkit.read_set_workbook(path)


# --------------------------------------------------------------------------- plan, apply, undo


def test_a_workbook_across_three_accounts_is_applied_with_each_key_and_undone_per_account_and_whole(
    config: Path, three: Sandbox, tmp_path: Path
) -> None:
    path = export(tmp_path)
    edits = edit_three(path)
    before = three.calls_by_account()
    plans = toolkit.plan_accounts(path)
    counts = plans.counts().set_index("account")["changes"].to_dict()
    assert counts == {"a": 1, "b": 1, "c": 1}
    changes = plans.changes()
    assert changes.columns[0] == "account"
    assert set(zip(changes["account"], changes["campaign_id"], strict=True)) == {
        ("a", edits["a"][0]),
        ("b", edits["b"]),
        ("c", edits["c"][0]),
    }
    result = plans.apply(progress=False)
    assert result.ok and set(result.run_ids) == set(NAMES)
    assert shows(edits) == {"a": True, "b": True, "c": True}
    # each account's calls were made with its own key only
    assert three.foreign_calls() == []
    after = three.calls_by_account()
    assert all(after[u] > before.get(u, 0) for u in after)
    runs = Journal().runs()
    assert set(runs["run_set"]) == {result.set_id}
    assert dict(zip(runs["profile"], runs["run_id"], strict=True)) == result.run_ids
    assert sorted(runs["account"].astype(int)) == [1001, 1002, 1003]

    # undo one account of the set: b alone goes back
    one = toolkit.undo_set(result.set_id, accounts=["b"], progress=False)
    assert one.ok and list(one.results) == ["b"]
    assert shows(edits) == {"a": True, "b": False, "c": True}
    # undo the set: the rest goes back; b, undone already, is left as it is
    rest = toolkit.undo_set(result.set_id, progress=False)
    assert rest.ok and list(rest.results) == ["a", "c"]
    assert rest.summary().splitlines()[0].endswith(f"(undo of the set {result.set_id})")
    assert shows(edits) == {"a": False, "b": False, "c": False}
    assert three.foreign_calls() == []


def test_guards_count_per_account_and_for_the_whole_set(config: Path, tmp_path: Path) -> None:
    path = export(tmp_path)
    wb = openpyxl.load_workbook(path)
    header, rows = rows_of(wb["campaigns"])
    status = header.index("work_status")
    archived = {n: 0 for n in NAMES}
    for r in rows:
        archived[r[0].value] += r[status].value != "Archived"
        r[status].value = "Archived"
    wb.save(path)
    assert archived["a"] == 6 and sum(archived.values()) > 6
    # each account archives at most 6, the set more
    with pytest.raises(PlanRefused) as whole:
        toolkit.plan_accounts(path, max_archive=6)
    assert whole.value.guard == "bulk_archive"
    assert f"the set archives {sum(archived.values())} campaigns" in str(whole.value)
    per = ", ".join(f"{n} {k}" for n, k in archived.items() if k)
    assert f"by account: {per})" in str(whole.value)
    # one account over its own limit is named
    with pytest.raises(PlanRefused) as one:
        toolkit.plan_accounts(path, max_archive=5)
    assert "account a: archives 6 campaigns" in str(one.value)
    lifted = toolkit.plan_accounts(path, max_archive=6, allow={"bulk_archive"})
    assert lifted.counts()["changes"].tolist() == list(archived.values())


def test_a_plan_made_for_one_account_is_refused_with_anothers_client(
    config: Path, tmp_path: Path
) -> None:
    path = export(tmp_path)
    edit_three(path)
    with toolkit.connect(profile="a") as a, toolkit.connect(profile="b") as b:
        swapped = {"a": b, "b": a, "c": toolkit.connect(profile="c")}
        with pytest.raises(toolkit.AccountMismatchError):
            toolkit.plan_accounts(path, swapped)


def test_an_account_whose_run_stops_is_reported_and_the_others_are_applied(
    config: Path, three: Sandbox, tmp_path: Path
) -> None:
    path = export(tmp_path)
    edits = edit_three(path)
    plans = toolkit.plan_accounts(path)
    refused = toolkit.connect(api_key="zzzz-wrong-zzzz", base_url=three.url, retries=0)
    result = plans.apply({"b": refused}, progress=False)
    assert not result.ok and list(result.results) == ["a", "c"] and list(result.errors) == ["b"]
    assert "zzzz-wrong" not in result.errors["b"] and "was refused" in result.errors["b"]
    assert "account b: stopped" in result.summary()
    assert shows(edits) == {"a": True, "b": False, "c": True}


def test_a_set_cut_off_before_its_last_accounts_is_finished_by_repair(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every account's run is journaled before the set's first call: a set killed after its
    first account leaves the others' runs unfinished, and repair of the set finishes them."""
    import toolkit.bulk.apply as apply_module

    path = export(tmp_path)
    edits = edit_three(path)
    plans = toolkit.plan_accounts(path)
    real, applied = apply_module.apply_plan, []

    def killed_after_one(plan: Any, client: Any, **options: Any) -> Any:
        if applied:
            raise KeyboardInterrupt  # the process is stopped here
        applied.append(plan.profile)
        return real(plan, client, **options)

    monkeypatch.setattr(apply_module, "apply_plan", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        plans.apply(progress=False)
    monkeypatch.setattr(apply_module, "apply_plan", real)
    assert shows(edits) == {"a": True, "b": False, "c": False}
    runs = Journal().runs()
    (set_id,) = set(runs["run_set"])
    states = dict(zip(runs["profile"], runs["state"], strict=True))
    assert states == {"a": "finished", "b": "unfinished", "c": "unfinished"}
    assert runs.set_index("profile").loc[["b", "c"], "sent"].fillna(0).tolist() == [0, 0]
    repaired = toolkit.repair_set(set_id, progress=False)
    assert repaired.ok and list(repaired.results) == ["b", "c"]
    assert shows(edits) == dict.fromkeys(NAMES, True)
    assert len(toolkit.plan_accounts(path)) == 0


def test_a_sets_tables_edited_in_pandas_are_planned_per_account_three_ways(
    config: Path, three: Sandbox
) -> None:
    accounts = toolkit.load_accounts("all", progress=False)
    bids = accounts.countries.copy()
    first = bids.groupby("account", sort=False).head(1).index  # one bid of each account
    bids.loc[first, "bid"] = (bids.loc[first, "bid"] * 1.2).round(4)
    # meanwhile another bid of b is changed in the account: the set's base says it is no edit
    other = bids[(bids["account"] == "b") & ~bids.index.isin(first)].iloc[0]
    with toolkit.connect(profile="b") as b:
        own = toolkit.load_account(b, progress=False).countries
        own.loc[
            (own["campaign_id"] == other["campaign_id"]) & (own["country"] == other["country"]),
            "bid",
        ] = 2.5
        assert toolkit.plan(b, {"countries": own}).apply(b, progress=False).ok
    plans = toolkit.plan_accounts({"countries": bids}, base=accounts)
    assert plans.counts()["changes"].tolist() == [1, 1, 1]
    changes = plans.changes()
    wanted = bids.loc[first, ["account", "campaign_id", "country", "bid"]]
    assert sorted(
        zip(changes["account"], changes["campaign_id"], changes["key"], changes["new"], strict=True)
    ) == (sorted(wanted.itertuples(index=False, name=None)))
    assert plans.apply(progress=False).ok and three.foreign_calls() == []
    later = live("b").countries.set_index(["campaign_id", "country"])["bid"]
    assert later[(other["campaign_id"], other["country"])] == 2.5  # left as it was changed
    for row in wanted.itertuples(index=False):
        live_bids = live(row.account).countries.set_index(["campaign_id", "country"])["bid"]
        assert abs(live_bids[(row.campaign_id, row.country)] - row.bid) < 1e-9
    # a row of an account not in the set, or a table without the account column: refused
    stray = bids.assign(account=bids["account"].where(bids.index != first[0], "zz"))
    with pytest.raises(ValueError, match=r"names accounts not in the set: 'zz' \(1 rows\)"):
        toolkit.plan_accounts({"countries": stray}, base=accounts)
    with pytest.raises(ValueError, match="table countries has no 'account' column"):
        toolkit.plan_accounts({"countries": bids.drop(columns="account")}, accounts=["a"])


def test_the_command_line_knows_a_sets_id_as_the_journal_writes_it() -> None:
    """``undo``/``repair`` tell a set's id by its prefix without importing the planner."""
    from toolkit.bulk.plan_set import SET_PREFIX, new_set_id
    from toolkit.cli_runs import SET_PREFIX as CLI_PREFIX

    assert CLI_PREFIX == SET_PREFIX and new_set_id().startswith(CLI_PREFIX)
