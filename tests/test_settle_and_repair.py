"""True outcomes when the network hides an answer, and ``repair`` of what a run left.

Real HTTP against a sandbox of the module's own, with its fault injection: a status fault
answers before anything is done unless it has ``after``, which carries the write out first.
The client does not retry (``retries=0``) unless a test says so, so that each fault meets
the apply itself. Every outcome is checked against the live state read independently.
"""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, make_plan
from toolkit.bulk.repair import repair_plan
from toolkit.sandbox import Sandbox

from .conftest import cli_runner

DROP_COUNTRY = "/api/campaign/drop-country"
ADD_COUNTRY = "/api/campaign/add-country"
ADD_SOURCE = "/api/campaign/add-black-list"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(campaigns=4, seed=3) as sandbox:
        yield sandbox


def connect(sb, **options):
    settings = {"retries": 0, "backoff": 0.01, **options}
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, **settings)


def tables(client) -> dict[str, pd.DataFrame]:
    account = toolkit.load_account(client, progress=False)
    assert account.failures.empty
    return {n: account.table(n).copy() for n in ("countries", "lists")}


def rebid(base: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], int, str, float, float]:
    """The first country of the first campaign bid 0.01 higher: (desired, id, code, old, new)."""
    countries = base["countries"].copy()
    cid, code = int(countries.loc[0, "campaign_id"]), str(countries.loc[0, "country"])
    old = float(countries.loc[0, "bid"])
    countries.loc[0, "bid"] = new = round(old + 0.01, 4)
    return {**base, "countries": countries}, cid, code, old, new


def blacklist(base: dict[str, pd.DataFrame], item: str) -> tuple[dict[str, pd.DataFrame], int]:
    lists = base["lists"].copy()
    cid = int(base["countries"].loc[0, "campaign_id"])
    row = pd.DataFrame([{"campaign_id": cid, "list": "source_black", "item": item}])
    return {**base, "lists": pd.concat([lists, row.astype(lists.dtypes.to_dict())])}, cid


def live_bid(client, cid: int, code: str) -> float | None:
    countries = toolkit.load_account(client, [cid], progress=False).table("countries")
    hit = countries[(countries["campaign_id"] == cid) & (countries["country"] == code)]
    return None if hit.empty else float(hit["bid"].iloc[0])


def listed(client, cid: int, item: str) -> bool:
    lists = toolkit.load_account(client, [cid], progress=False).table("lists")
    return bool(((lists["campaign_id"] == cid) & (lists["item"] == item)).any())


def outcomes_of(result, target: str, item: str) -> list[tuple[str, str]]:
    frame = result.to_frame()
    rows = frame[(frame["target"] == target) & (frame["item"] == item)]
    return list(zip(rows["action"], rows["outcome"].astype(str), strict=True))


# --------------------------------------------------------------------------- settling


def test_a_failed_drop_of_a_bid_change_makes_its_already_answered_add_failed(sb, faults, tmp_path):
    """The drop half fails (its 500 came before anything was done): the add answers "already
    been taken" while the old bid is live. That is a failure, not ``already``."""
    client = connect(sb)
    base = tables(client)
    desired, cid, code, old, _new = rebid(base)
    plan = make_plan(client, desired, base=base)
    faults.configure({"rules": [{"status": 500, "count": 1, "path": DROP_COUNTRY}]})
    result = plan.apply(client, progress=False, journal=str(tmp_path / "j.db"))
    faults.clear()
    assert live_bid(client, cid, code) == pytest.approx(old)
    assert outcomes_of(result, "country", code) == [("drop", "failed"), ("add", "failed")]
    assert "not carried out" in result.to_frame().query("action == 'drop'")["message"].iloc[0]
    assert "answered as already done" in result.summary()
    assert not result.ok
    # the same in the journal, which undo and repair read
    journaled = Journal(tmp_path / "j.db").outcomes(result.run_id)
    assert set(journaled[journaled["item"] == code]["outcome"]) == {"failed"}
    assert f"campaign-toolkit repair {result.run_id}" in result.summary().splitlines()[-1]
    toolkit.repair(client, result.run_id, journal=str(tmp_path / "j.db"), progress=False)
    assert live_bid(client, cid, code) == pytest.approx(desired["countries"].loc[0, "bid"])


@pytest.mark.parametrize(
    "rule,options,landed",
    [
        # a gateway's 504 after the write was carried out
        ({"status": 504, "after": True}, {}, True),
        # a 500 before anything was done
        ({"status": 500}, {}, False),
        # carried out, then the answer hangs past the client's read timeout
        ({"hang_s": 1.0, "after": True}, {"timeout": (2.0, 0.3)}, True),
    ],
    ids=["504-after", "500-before", "timeout-after"],
)
def test_a_write_whose_answer_is_lost_is_settled_by_the_read_back(
    sb, faults, tmp_path, rule, options, landed
):
    client = connect(sb, **options)
    item = "7700" + str(len(rule)) + ("1" if landed else "0") + str(int(bool(options)))
    desired, cid = blacklist(tables(client), item)
    plan = make_plan(client, desired, base=tables(client))
    faults.configure({"rules": [{**rule, "count": 1, "path": ADD_SOURCE}]})
    result = plan.apply(client, progress=False, journal=str(tmp_path / "j.db"))
    faults.clear()
    assert listed(client, cid, item) is landed
    [(action, outcome)] = outcomes_of(result, "source_black", item)
    assert (action, outcome) == ("add", "applied" if landed else "failed")
    message = result.to_frame().query("item == @item")["message"].iloc[0]
    assert "settled by the read-back" in message


def test_an_unknown_write_stays_unknown_when_its_campaign_cannot_be_read_back(sb, faults, tmp_path):
    client = connect(sb)
    desired, cid = blacklist(tables(client), "77099")
    plan = make_plan(client, desired, base=tables(client))
    faults.configure(
        {
            "rules": [
                {"status": 504, "after": True, "count": 1, "path": ADD_SOURCE},
                {"status": 500, "path": "/api/campaign/item"},
            ]
        }
    )
    result = plan.apply(client, progress=False, journal=str(tmp_path / "j.db"))
    faults.clear()
    assert outcomes_of(result, "source_black", "77099") == [("add", "unknown")]
    assert "Not verified" in result.summary()
    assert "(1 unknown)" in result.summary().splitlines()[-1]
    assert listed(client, cid, "77099")  # it did land: only a read can say so


# --------------------------------------------------------------------------- repair


def lose_a_bid_change(sb, faults, tmp_path):
    """A bid change whose add, its three retries and the restore of the old bid all fail."""
    client = connect(sb)
    base = tables(client)
    desired, cid, code, old, new = rebid(base)
    plan = make_plan(client, desired, base=base)
    faults.configure({"rules": [{"status": 500, "count": 5, "path": ADD_COUNTRY}]})
    result = plan.apply(client, progress=False, journal=str(tmp_path / "j.db"))
    faults.clear()
    return client, result, cid, code, old, new


def test_repair_finishes_a_lost_bid_change(sb, faults, tmp_path):
    client, result, cid, code, old, new = lose_a_bid_change(sb, faults, tmp_path)
    assert live_bid(client, cid, code) is None
    assert outcomes_of(result, "country", code)[-1] == ("add", "lost")
    last = result.summary().splitlines()[-1]  # one bid change: its add failed, its old bid lost
    assert last.startswith("1 change(s) not finished (1 lost)"), last

    run_id, plan = repair_plan(client, journal=str(tmp_path / "j.db"))  # the newest run
    assert run_id == result.run_id and len(plan) == 1 and plan.conflicts.empty
    assert f"add country {code} {new}" in plan.summary()
    repaired = toolkit.repair(client, journal=str(tmp_path / "j.db"), progress=False)
    assert repaired.ok and live_bid(client, cid, code) == pytest.approx(new)
    assert len(repair_plan(client, result.run_id, journal=str(tmp_path / "j.db"))[1]) == 0
    # undo of the repair, then of the run: the old bid
    toolkit.undo(client, repaired.run_id, journal=str(tmp_path / "j.db"), progress=False)
    toolkit.undo(client, result.run_id, journal=str(tmp_path / "j.db"), progress=False)
    assert live_bid(client, cid, code) == pytest.approx(old)


def test_repair_leaves_what_someone_else_changed_since(sb, faults, tmp_path):
    client, result, cid, code, old, _new = lose_a_bid_change(sb, faults, tmp_path)
    client.targeting.add(cid, "country", {code: round(old + 0.5, 4)})  # someone else
    _, plan = repair_plan(client, result.run_id, journal=str(tmp_path / "j.db"))
    assert len(plan) == 0
    assert list(plan.conflicts["key"]) == [(cid, code)]
    client.targeting.drop(cid, "country", [code])
    client.targeting.add(cid, "country", {code: old})


def test_repair_of_a_finished_run_plans_nothing(sb, faults, tmp_path):
    client = connect(sb)
    base = tables(client)
    desired, cid, code, old, _new = rebid(base)
    result = make_plan(client, desired, base=base).apply(
        client, progress=False, journal=str(tmp_path / "j.db")
    )
    assert result.ok and "repair" not in result.summary()
    assert len(toolkit.repair(client, result.run_id, journal=str(tmp_path / "j.db")).outcomes) == 0
    run_id, plan = repair_plan(client, journal=str(tmp_path / "j.db"))
    assert run_id is None and len(plan) == 0
    toolkit.undo(client, result.run_id, journal=str(tmp_path / "j.db"), progress=False)
    assert live_bid(client, cid, code) == pytest.approx(old)


def test_repair_on_the_command_line(sb, faults, tmp_path, monkeypatch, capsys):
    client, result, cid, code, old, new = lose_a_bid_change(sb, faults, tmp_path)
    config = tmp_path / "config.toml"
    config.write_text("[default]\nretries = 1\nbackoff = 0.01\n")
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "j.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(config))
    cli = cli_runner(sb, capsys)
    code_, out, _err = cli("repair", result.run_id, "--yes")
    assert code_ == 0, out
    assert f"Repair of run {result.run_id}" in out and "Applied: 1 of 1 change (run" in out
    assert live_bid(client, cid, code) == pytest.approx(new)
    code_, out, _err = cli("repair", result.run_id)
    assert code_ == 0 and out.startswith(f"Nothing to repair: run {result.run_id}")
    code_, _out, err = cli("repair", "no-such-run")
    assert code_ == 2 and "no run 'no-such-run'" in err
    toolkit.undo(client, result.run_id, journal=str(tmp_path / "j.db"), progress=False)


def test_a_drop_answered_gone_and_then_re_added_in_the_same_run_is_already(sb, faults):
    """The undo of a run cut off between the drop and the add of a bid change: its drop finds
    the item gone (the cut-off run's drop landed), its add puts the old bid back. Live then
    shows the add's bid, which must not count against the drop."""
    from toolkit.bulk.apply import apply_plan
    from toolkit.bulk.calls import Call
    from toolkit.bulk.plan import Plan

    client = connect(sb)
    base = tables(client)
    _desired, cid, code, old, _new = rebid(base)
    client.targeting.drop(cid, "country", [code])  # the cut-off run's drop, landed
    kind = toolkit.spec.bid_kind().name
    plan = Plan(
        [
            Call("drop", "drop", kind, (cid,), items=(code,)),  # as undo builds it: no previous
            Call("add", "add", kind, (cid,), items=(code,), bids={code: old}),
        ]
    )
    result = apply_plan(plan, client, progress=False, journal=None)
    outcomes = result.to_frame().set_index("action")["outcome"].to_dict()
    assert outcomes == {"drop": "already", "add": "applied"}, result.summary()
    assert result.ok and not result.differences
    assert tables(client)["countries"].equals(base["countries"])
