"""Plans, apply, compensation, journal and undo, against the sandbox over real HTTP."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, PlanRefused, history, make_plan, undo
from toolkit.bulk.apply import READD_ROUNDS
from toolkit.frames import load_account

TABLES = ("campaigns", "countries", "targets", "lists", "bid_rules", "cpa_rules")


@pytest.fixture()
def journal(tmp_path):
    return Journal(tmp_path / "journal.db")


def snapshot(client):
    account = load_account(client, progress=False)
    return account, {name: account.table(name).copy() for name in TABLES}


def add_rows(df: pd.DataFrame, rows: list[dict]) -> pd.DataFrame:
    extra = pd.DataFrame(rows, columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, extra], ignore_index=True)


def sorted_table(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    return df[cols].sort_values(cols).reset_index(drop=True)


def test_no_edit_is_an_empty_plan(client):
    account, tables = snapshot(client)
    plan = make_plan(client, tables, base=tables, live=account)
    assert len(plan) == 0
    assert "nothing to do" in plan.summary()


def test_shared_items_go_in_one_batch_call_and_distinct_sets_apart(client):
    account, tables = snapshot(client)
    ids = [int(i) for i in tables["campaigns"]["id"]]
    same = [{"campaign_id": c, "list": "subid_black", "item": "feedbeef"} for c in ids]
    own = [{"campaign_id": c, "list": "subid_white", "item": f"{c:x}"} for c in ids[:3]]
    desired = {**tables, "lists": add_rows(tables["lists"], same + own)}
    plan = make_plan(client, desired, base=tables, live=account)
    frame = plan.to_frame()
    black = frame[frame["target"] == "subid_black"]
    assert len(black) == 1 and int(black["campaigns"].iloc[0]) == len(ids)
    assert len(frame[frame["target"] == "subid_white"]) == 3


def test_bid_change_is_drop_then_add_and_order_is_safe(client):
    account, tables = snapshot(client)
    countries = tables["countries"].copy()
    countries.loc[0, "bid"] = float(countries.loc[0, "bid"]) + 0.01
    campaigns = tables["campaigns"].copy()
    started = campaigns.index[campaigns["work_status"] == "Started"][0]
    paused = campaigns.index[
        (campaigns["work_status"] == "Paused") & (campaigns["status"] == "Approved")
    ][0]
    campaigns.loc[started, "work_status"] = "Paused"
    campaigns.loc[paused, "work_status"] = "Started"
    plan = make_plan(
        client, {"countries": countries, "campaigns": campaigns}, base=tables, live=account
    )
    steps = [(c.step, c.action, c.target) for c in plan.calls]
    assert steps[0] == ("pause", "pause", "campaign")
    assert steps[-1] == ("start", "start", "campaign")
    assert steps.index(("drop", "drop", "country")) < steps.index(("add", "add", "country"))
    assert len(plan) == 4


def test_missing_table_means_no_change(client):
    account, tables = snapshot(client)
    plan = make_plan(client, {"countries": tables["countries"]}, base=tables, live=account)
    assert len(plan) == 0
    plan = make_plan(
        client,
        {"lists": tables["lists"].iloc[0:0]},
        base=None,
        live=account,
        allow={"drop_share", "empty_whitelist"},
    )
    assert len(plan) > 0  # an empty table given explicitly does mean "drop all"


def test_conflicts_are_left_out_unless_a_side_is_chosen(client):
    account, tables = snapshot(client)
    row = tables["countries"].iloc[0]
    cid, code = int(row["campaign_id"]), str(row["country"])
    # live changes after the export
    client.targeting.drop(cid, "country", [code])
    client.targeting.add(cid, "country", {code: float(row["bid"]) + 0.5})
    edited = tables["countries"].copy()
    edited.loc[0, "bid"] = float(row["bid"]) + 0.25
    plan = make_plan(client, {"countries": edited}, base=tables)
    assert len(plan) == 0
    assert len(plan.conflicts) == 1
    assert plan.conflicts.iloc[0]["key"] == (cid, code)
    assert "conflict" in plan.summary()
    plan = make_plan(client, {"countries": edited}, base=tables, prefer="desired")
    assert [c.action for c in plan.calls] == ["drop", "add"]
    assert len(make_plan(client, {"countries": edited}, base=tables, prefer="live")) == 0


def test_guard_drop_share(client):
    account, tables = snapshot(client)
    lists = tables["lists"]
    counts = lists.groupby(["campaign_id", "list"], observed=True).size()
    (cid, name) = counts[counts >= 5].index[0]
    mask = (lists["campaign_id"] == cid) & (lists["list"] == name)
    drop = lists[mask].index[: len(lists[mask]) // 2 + 1]
    desired = {"lists": lists.drop(index=drop)}
    with pytest.raises(PlanRefused) as info:
        make_plan(client, desired, base=tables, live=account)
    assert info.value.guard == "drop_share"
    assert f"campaign {cid} {name}" in str(info.value)
    assert "allow" in str(info.value)
    plan = make_plan(client, desired, base=tables, live=account, allow={"drop_share"})
    assert sum(len(c.items) for c in plan.calls if c.action == "drop") == len(drop)
    with pytest.raises(ValueError):
        make_plan(client, desired, base=tables, live=account, allow={"nope"})


def test_guard_empty_whitelist(client):
    account, tables = snapshot(client)
    cid = int(tables["campaigns"]["id"].iloc[0])
    client.lists.add(cid, "source_white", [111, 222])
    account, tables = snapshot(client)
    lists = tables["lists"]
    keep = ~((lists["campaign_id"] == cid) & (lists["list"] == "source_white"))
    with pytest.raises(PlanRefused) as info:
        make_plan(client, {"lists": lists[keep]}, base=tables, live=account, allow={"drop_share"})
    assert info.value.guard == "empty_whitelist"
    plan = make_plan(
        client,
        {"lists": lists[keep]},
        base=tables,
        live=account,
        allow={"drop_share", "empty_whitelist"},
    )
    assert len(plan) == 1


def test_guard_bulk_archive(client):
    account, tables = snapshot(client)
    campaigns = tables["campaigns"].copy()
    live = campaigns.index[campaigns["work_status"] != "Archived"][:3]
    campaigns.loc[live, "work_status"] = "Archived"
    with pytest.raises(PlanRefused) as info:
        make_plan(client, {"campaigns": campaigns}, base=tables, live=account)
    assert info.value.guard == "bulk_archive" and "archives 3 campaigns" in str(info.value)
    plan = make_plan(
        client, {"campaigns": campaigns}, base=tables, live=account, allow={"bulk_archive"}
    )
    assert [c.action for c in plan.calls] == ["archive"]


def test_apply_reports_each_item_and_reapply_is_empty(client, journal):
    account, tables = snapshot(client)
    ids = [int(i) for i in tables["campaigns"]["id"]][:4]
    rows = [{"campaign_id": c, "list": "subid_black", "item": "c0ffee"} for c in ids]
    desired = {**tables, "lists": add_rows(tables["lists"], rows)}
    plan = make_plan(client, desired, base=tables, live=account)
    # the item appears on one campaign between planning and applying: "already" there
    client.lists.add(ids[1], "subid_black", ["c0ffee"])
    result = plan.apply(client, progress=False, journal=journal)
    frame = result.to_frame()
    assert set(frame["campaign_id"]) == set(ids)
    assert (frame["outcome"] == "applied").sum() >= 3
    assert result.differences == []
    already = frame[frame["outcome"] == "already"]
    assert list(already["campaign_id"]) == [ids[1]]
    assert "already been taken" in already["message"].iloc[0]
    assert len(make_plan(client, desired, base=tables)) == 0


def test_partial_failure_then_reapply_converges(sb, client, journal):
    account, tables = snapshot(client)
    ids = [int(i) for i in tables["campaigns"]["id"]]
    rows = [{"campaign_id": c, "list": "subid_black", "item": "abad1dea"} for c in ids]
    rows += [{"campaign_id": c, "list": "source_black", "item": "777"} for c in ids]
    desired = {**tables, "lists": add_rows(tables["lists"], rows)}
    sb.faults.configure(
        {"rules": [{"status": 503, "count": 1, "path": "/api/campaign/add-sub-id-black-batch"}]}
    )
    result = make_plan(client, desired, base=tables).apply(client, progress=False, journal=journal)
    sb.faults.clear()
    frame = result.to_frame()
    failed = frame[frame["outcome"] == "failed"]
    assert set(failed["target"]) == {"subid_black"} and len(failed) == len(ids)
    assert not result.ok
    again = make_plan(client, desired, base=tables)
    assert [c.target for c in again.calls] == ["subid_black"]
    assert again.apply(client, progress=False, journal=journal).ok
    assert len(make_plan(client, desired, base=tables)) == 0


# the client sends an add once (a repeat of a write is not its call); apply retries a failed
# re-add READD_ROUNDS more times, then restores the old bid once
@pytest.mark.parametrize(
    "failures,expected",
    [
        (1, "applied"),
        (READD_ROUNDS, "applied"),
        (1 + READD_ROUNDS, "restored"),
        (2 + READD_ROUNDS, "lost"),
    ],
)
def test_failed_readd_of_a_bid_change_is_retried_then_compensated(
    sb, client, journal, monkeypatch, failures, expected
):
    monkeypatch.setattr(client.options, "backoff", 0.01)  # the pauses between rounds
    account, tables = snapshot(client)
    countries = tables["countries"].copy()
    old = float(countries.loc[0, "bid"])
    cid, code = int(countries.loc[0, "campaign_id"]), str(countries.loc[0, "country"])
    countries.loc[0, "bid"] = old + 0.02
    sb.faults.configure(
        {"rules": [{"status": 500, "count": failures, "path": "/api/campaign/add-country"}]}
    )
    result = make_plan(client, {"countries": countries}, base=tables).apply(
        client, progress=False, journal=journal, verify=False
    )
    sb.faults.clear()
    frame = result.to_frame()
    last = frame[(frame["campaign_id"] == cid) & (frame["item"] == code)].iloc[-1]
    assert last["outcome"] == expected, result.summary()
    detail = client.campaigns.get(cid, "full")
    bids = {code_: s["price"] for s in detail["countrySet"] for code_ in s["geo"].values()}
    if expected == "applied":
        assert "applied on retry" in last["message"] and result.ok
        assert bids[code] == pytest.approx(old + 0.02)
    elif expected == "restored":
        assert str(old) in last["message"]
        assert bids[code] == pytest.approx(old)
    else:
        assert str(old) in last["message"]
        assert code not in bids


def test_undo_restores_the_previous_state_exactly(client, journal):
    account, before = snapshot(client)
    tables = {k: v.copy() for k, v in before.items()}
    ids = [int(i) for i in tables["campaigns"]["id"]][:5]
    tables["lists"] = add_rows(
        tables["lists"], [{"campaign_id": c, "list": "subid_black", "item": "0ddba11"} for c in ids]
    )
    tables["countries"].loc[0, "bid"] = float(tables["countries"].loc[0, "bid"]) + 0.03
    drop_row = tables["targets"].index[0]
    tables["targets"] = tables["targets"].drop(index=drop_row)
    tables["campaigns"].loc[tables["campaigns"].index[0], "note"] = "changed by a bulk edit"
    tables["bid_rules"] = add_rows(
        tables["bid_rules"], [{"campaign_id": ids[0], "item": "abc123", "bid": 0.9}]
    )
    result = make_plan(client, tables, base=before, allow={"drop_share"}).apply(
        client, progress=False, journal=journal
    )
    assert result.ok, result.summary()
    runs = history(journal)
    assert result.run_id in set(runs["run_id"])
    undone = undo(client, result.run_id, journal=journal, progress=False)
    assert undone.ok, undone.summary()
    _, after = snapshot(client)
    keys = {
        "countries": ["campaign_id", "country", "bid"],
        "lists": ["campaign_id", "list", "item"],
        "targets": ["campaign_id", "kind", "value"],
        "bid_rules": ["campaign_id", "item", "bid"],
        "campaigns": ["id", "name", "note", "work_status"],
    }
    for name, cols in keys.items():
        pd.testing.assert_frame_equal(
            sorted_table(before[name], cols), sorted_table(after[name], cols), check_dtype=False
        )
    runs = history(journal).set_index("run_id")
    assert len(runs) == 2
    assert runs.loc[undone.run_id, "undoes"] == result.run_id
    assert pd.isna(runs.loc[result.run_id, "undoes"])


def test_unknown_run_is_an_error(client, journal):
    with pytest.raises(toolkit.ToolkitError):
        undo(client, "no-such-run", journal=journal, progress=False)


def test_plan_preview_forms(client):
    account, tables = snapshot(client)
    ids = [int(i) for i in tables["campaigns"]["id"]][:2]
    desired = {
        "lists": add_rows(
            tables["lists"], [{"campaign_id": c, "list": "subid_white", "item": "aa"} for c in ids]
        )
    }
    plan = make_plan(client, desired, base=tables, live=account)
    assert len(plan) == len(plan.to_frame()) == 1
    assert list(plan.to_frame().columns[:4]) == ["step", "action", "target", "list_type"]
    assert "<table" in plan._repr_html_()
    assert "add subid_white" in repr(plan)


def test_creative_work_status_is_planned_and_content_edits_are_reported(client, journal):
    account, tables = snapshot(client)
    creatives = account.table("creatives").copy()
    paused = creatives.index[creatives["work_status"] == "Paused"][0]
    crid = int(creatives.loc[paused, "id"])
    creatives.loc[paused, "work_status"] = "Archived"
    creatives.loc[creatives.index[0], "title"] = "a new title"
    base = {"creatives": account.table("creatives")}
    plan = make_plan(client, {"creatives": creatives}, base=base, live=account)
    assert [(c.action, c.target, c.items) for c in plan.calls] == [("archive", "creative", (crid,))]
    assert any("title edit not applied" in w for w in plan.warnings)
    result = plan.apply(client, progress=False, journal=journal)
    assert result.ok
    assert client.creatives.get(crid)["work_status"] == "Archived"
    undo(client, result.run_id, journal=journal, progress=False)
    assert client.creatives.get(crid)["work_status"] == "Paused"


def test_guards_count_lost_items_by_identity(client):
    """A countries table without base state (built with pandas) is planned against live:
    replacing every country of a campaign loses them all, though as many are added."""
    cid = client.campaigns.list()[0]["id"]
    client.targeting.drop(cid, "country", list(_bids(client, cid)))
    client.targeting.add(cid, "country", {"US": 0.3, "GB": 0.2, "DE": 0.2, "FR": 0.2, "ES": 0.2})
    account = load_account(client, [cid], progress=False)
    replaced = pd.DataFrame(
        {"campaign_id": [cid] * 5, "country": ["CA", "AU", "NZ", "IE", "NL"], "bid": [0.25] * 5}
    )
    with pytest.raises(PlanRefused) as info:
        make_plan(client, {"countries": replaced}, live=account)
    assert info.value.guard == "drop_share"
    assert f"campaign {cid} country: loses 5 of 5" in str(info.value)
    # one country swapped for another is one loss (1 of 5 = 20%: allowed; 2 of 5 is not)
    swap = account.table("countries").copy()
    swap.loc[swap["country"] == "US", "country"] = "CA"
    assert len(make_plan(client, {"countries": swap}, live=account)) == 2
    swap.loc[swap["country"] == "GB", "country"] = "AU"
    with pytest.raises(PlanRefused, match="loses 2 of 5"):
        make_plan(client, {"countries": swap}, live=account)
    # new bids for every country lose nothing
    rebid = account.table("countries").copy()
    rebid["bid"] = rebid["bid"] + 0.01
    plan = make_plan(client, {"countries": rebid}, live=account)
    assert [c.action for c in plan.calls] == ["drop", "add"]
    assert set(plan.changes()["what"]) == {"bid"}


def test_guard_empty_whitelist_counts_by_identity(client):
    cid = client.campaigns.list()[1]["id"]
    client.lists.add(cid, "source_white", [111, 222])
    account = load_account(client, [cid], progress=False)
    lists = account.table("lists")
    white = lists["list"] == "source_white"
    swapped = add_rows(lists[~white], [{"campaign_id": cid, "list": "source_white", "item": "333"}])
    with pytest.raises(PlanRefused) as info:
        make_plan(client, {"lists": swapped}, live=account)
    assert info.value.guard == "drop_share" and "loses 2 of 2" in str(info.value)
    plan = make_plan(client, {"lists": swapped}, live=account, allow={"drop_share"})
    assert sorted(c.action for c in plan.calls) == ["add", "drop"]  # not emptied: 333 stays


def _bids(client, cid):
    detail = client.campaigns.get(cid, "full")
    return {code: s["price"] for s in detail["countrySet"] for code in s["geo"].values()}


def test_the_smallest_bid_step_is_a_change_and_float_noise_is_not(client):
    account, tables = snapshot(client)
    countries = tables["countries"].copy()
    bids = countries["bid"].astype(float)
    # a ten-thousandth of a dollar, the service's step, on a small bid and on a large one
    small, large = int(bids.idxmin()), int(bids.idxmax())
    countries.loc[small, "bid"] = round(bids[small] + 0.0001, 4)
    countries.loc[large, "bid"] = round(bids[large] + 0.0001, 4)
    plan = make_plan(client, {"countries": countries}, base=tables, live=account)
    moved = plan.to_frame()
    moved = moved[moved["action"] == "add"]
    assert int(moved["changes"].sum()) == 2, plan.summary()
    # what arithmetic leaves behind (0.1 + 0.2 is not 0.3) is not a change
    noisy = tables["countries"].copy()
    noisy["bid"] = noisy["bid"].astype(float) * (1 + 1e-13) + 1e-13
    assert len(make_plan(client, {"countries": noisy}, base=tables, live=account)) == 0


@pytest.mark.parametrize("table", ["countries", "bid_rules"])
def test_a_row_without_a_bid_is_refused_naming_it(client, table):
    account, tables = snapshot(client)
    rows = tables[table]
    if rows.empty:
        pytest.skip(f"the sandbox account has no {table}")
    new = rows.iloc[[0]].copy()
    key = "country" if table == "countries" else "item"
    new[key] = "FR" if table == "countries" else "beadfeed00"
    new["bid"] = None
    desired = pd.concat([rows, new], ignore_index=True)
    cid = int(new["campaign_id"].iloc[0])
    with pytest.raises(toolkit.errors.ValidationError) as info:
        make_plan(client, {table: desired}, base=tables, live=account)
    said = str(info.value)
    assert said.startswith(f"{table}: the row of campaign_id {cid}, {key} ")
    assert "has no bid (1 row without one)" in said
