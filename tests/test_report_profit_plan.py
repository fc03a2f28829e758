"""``report.propose("profit")`` against a sandbox over real HTTP: the bids that earn the most
within the lower credible bound and the service's minimum, a country that cannot pay at its
minimum dropped, a campaign none of whose countries can paused; applied (the live account
read back on its own), re-reported, undone."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

import toolkit
from toolkit.reports import profit, profit_proposals
from toolkit.reports.zones import traffic_at
from toolkit.sandbox import Sandbox

from .test_report_profit import campaign_rows, stats_of


@pytest.fixture()
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=8, seed=11, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture()
def client(sb: Sandbox) -> toolkit.Client:
    return toolkit.Client(sb.url, sb.api_keys[0])


def made_stats(frame: pd.DataFrame) -> tuple[pd.DataFrame, int, str, int]:
    """Statistics for two campaigns: a per-1,000 one whose first country earns a tenth of its
    minimum price and whose others earn 3x their recommended price, and a per-click one none
    of whose countries earns its minimum. Returns the stats, the first campaign, the country
    that loses and the second campaign."""
    cpm = campaign_rows(frame, "CPM", countries=4, started=True)
    cpc = campaign_rows(frame, "CPC", countries=2, started=True)
    rows = []
    for rows_of, earns in ((cpm, None), (cpc, lambda r: 0.1 * r.minimum)):
        for i, r in enumerate(rows_of.itertuples(index=False)):
            value = earns(r) if earns else (0.1 * r.minimum if i == 0 else 3 * r.recommended)
            clicks, imps = 40_000, 2_000_000
            # payout 10; per click u = 10; per 1,000 impressions u = 10 * 40000 / 2e6 * 1000
            u = 10.0 if r.mode == "CPC" else 10.0 * clicks / imps * 1000
            conversions = round(value / u * clicks)
            rows.append((r.campaign_id, "country", r.country, imps, clicks, 1.0, conversions,
                         conversions * 10.0))  # fmt: skip
    cid = int(cpm["campaign_id"].iloc[0])
    return stats_of(rows), cid, str(cpm["country"].iloc[0]), int(cpc["campaign_id"].iloc[0])


def live_state(client: toolkit.Client, ids: list[int]) -> tuple[dict, dict]:
    """The countries' bids and the campaigns' work status, read from the service."""
    account = toolkit.load_account(client, ids, mode="full", progress=False)
    bids = {
        (int(c), str(g)): float(b)
        for c, g, b in zip(account.countries["campaign_id"], account.countries["country"],
                           account.countries["bid"], strict=True)
    }  # fmt: skip
    work = dict(
        zip(account.campaigns["id"].astype(int), account.campaigns["work_status"].astype(str),
            strict=True)
    )  # fmt: skip
    return bids, work


def test_profit_proposal_applied_rereported_and_undone(client):
    plain = toolkit.bid_report(client, progress=False, history=None, include="all")
    stats, cid, loser, paused = made_stats(plain.frame)
    report = toolkit.bid_report(client, progress=False, history=None, include="all", stats=stats)
    moves = report.proposals("profit")
    keys = zip(moves["campaign_id"].astype(int), moves["country"].astype(str), strict=True)
    by = dict(zip(keys, moves.itertuples(index=False), strict=True))
    assert by[(cid, loser)].action == "drop country"
    assert {r.action for (c, _), r in by.items() if c == paused} == {"pause campaign"}
    frame = report.frame.set_index(["campaign_id", "country"])
    sets = moves[moves["action"] == "set bid"]
    assert len(sets) >= 3
    for r in sets.itertuples(index=False):
        row = frame.loc[(r.campaign_id, r.country)]
        floor = profit_proposals.ceil_bid(row["minimum"])
        assert floor <= r.new_bid <= max(floor, row["max_profitable_bid_low"])
        assert r.profit_day_new == pytest.approx(row["profit_day_proposed"])
        k = 1 / 1000 if row["mode"] == "CPM" else row["clicks"] / row["impressions_stats"]

        def gain(x: float, row=row, k=k) -> float:
            t = traffic_at(x, row["minimum"], row["recommended"], row["minimum_traffic"],
                           row["recommended_traffic"])  # fmt: skip
            return t * k * (row["max_profitable_bid"] - x)

        top = min(max(1.5 * row["recommended"], row["bid"]), row["max_profitable_bid_low"])
        best = max(gain(x) for x in np.linspace(row["minimum"], top, 2001))
        assert gain(r.new_bid) == pytest.approx(best, rel=1e-3, abs=1e-6)
        assert gain(r.new_bid) == pytest.approx(r.profit_day_new)
    assert (
        report.frame.loc[report.frame["campaign_id"] == paused, "profit_day_proposed"] == 0
    ).all()

    ids = sorted({cid, paused})
    before = live_state(client, ids)
    plan = report.propose("profit")  # one country of five dropped: within the guards
    assert "Paused" in plan.summary() or "pause" in plan.summary()
    result = plan.apply(client, progress=False)
    assert result.ok

    bids, work = live_state(client, ids)  # read back on its own
    assert (cid, loser) not in bids
    assert work[paused] == "Paused"
    for r in sets.itertuples(index=False):
        assert bids[(int(r.campaign_id), str(r.country))] == pytest.approx(r.new_bid)
    again = toolkit.bid_report(client, ids, progress=False, history=None, include="all",
                               stats=stats).frame  # fmt: skip
    keys = zip(again["campaign_id"].astype(int), again["country"].astype(str), strict=True)
    shown = dict(zip(keys, again["bid"], strict=True))
    assert shown == {k: v for k, v in bids.items()}
    assert (cid, loser) not in shown
    # the same job run again on the same statistics moves nothing more
    rerun = toolkit.bid_report(client, ids, progress=False, history=None, include="all",
                               stats=stats).proposals("profit")  # fmt: skip
    assert rerun.empty, rerun[["campaign_id", "country", "action", "old_bid", "new_bid"]]

    toolkit.undo(client, result.run_id, progress=False)
    assert live_state(client, ids) == before


def test_a_row_that_cannot_pay_at_the_minimum_is_never_bid_below_it():
    frame = pd.DataFrame(
        {
            "campaign_id": [1, 1, 2],
            "country": ["US", "DE", "FR"],
            "mode": ["CPM"] * 3,
            "work_status": ["Started"] * 3,
            "bid": [2.0, 2.0, 2.0],
            "comparable": [True] * 3,
            "error": [None] * 3,
            "minimum": [1.0, 1.0, 1.0],
            "recommended": [2.0, 2.0, 2.0],
            "minimum_traffic": [0, 0, 0],
            "recommended_traffic": [3000, 3000, 3000],
            "zone": ["at recommended"] * 3,
            "profit_zone": ["profitable"] * 3,
            "ctr": [np.nan] * 3,
            "clicks": [1000.0] * 3,
            "impressions_stats": [50_000.0] * 3,
            "payout": [10.0] * 3,
            # u = 10 * 1000 / 50000 * 1000 = 200; rates 0.001 (0.2 a mille), 0.006 (1.2)
            "posterior_a": [10.0, 600.0, 10.0],
            "posterior_b": [9990.0, 99_400.0, 9990.0],
        }
    )
    frame["posterior_cr"] = frame["posterior_a"] / (frame["posterior_a"] + frame["posterior_b"])
    frame["max_profitable_bid"] = frame["posterior_cr"] * 200
    # DE's profit 3000 (x - 1) / 1000 (1.2 - x) peaks at 1.1, past its lower bound 1.05
    frame["max_profitable_bid_low"] = [0.1, 1.05, 0.1]
    countries = frame[["campaign_id", "country", "bid"]]
    moves = profit_proposals.decide(frame, countries, 1.5)
    assert moves["action"].tolist() == ["drop country", "set bid", "pause campaign"]
    assert moves["new_bid"].iloc[1] == pytest.approx(1.05)  # capped at the lower bound
    frame.loc[1, "max_profitable_bid_low"] = 0.5  # the bound below the minimum: the minimum
    frame.loc[1, "posterior_a"] = 30.0  # 1.2 a mille on less data: not a loser at 1.0
    frame.loc[1, "posterior_b"] = 4970.0
    p = profit.prob_value_below(1.0, 200.0, 30.0, 4970.0)
    assert 0.1 < p < 0.9
    moves = profit_proposals.decide(frame, countries, 1.5)
    assert moves.loc[1, "action"] == "set bid" and moves.loc[1, "new_bid"] == 1.0
    frame["work_status"] = "Paused"  # a campaign paused already is left alone
    assert 2 not in profit_proposals.decide(frame, countries, 1.5).index


#: The writes of a profit plan: bids (a drop and an add), a country dropped, a pause.
WRITES = ("/api/campaign/add-", "/api/campaign/drop-", "/api/campaign/pause")
FAULTS = {
    # every call carried out, its answer lost: a gateway's 502, a cut body, a 524 page
    "odd-after": [
        {"status": 502, "after": True, "count": 1, "path": WRITES[2]},
        {"body": "cut", "after": True, "count": 1, "path": WRITES[1]},
        {"status": 524, "after": True, "count": 1, "path": WRITES[0]},
    ],
    # refused before it is carried out, and no retry left: failed, and said so
    "500-before": [{"status": 500, "count": 5, "path": p} for p in WRITES[1:]],
}


def _outcome_is_true(row, bids: dict, work: dict, undone: set) -> bool:
    """One journaled outcome against the live state read on its own."""
    if row.target == "campaign":
        want = "Paused" if row.action == "pause" else None
        old = str(row.previous).strip('"')
        return {
            "applied": work[row.campaign_id] == want,
            "already": work[row.campaign_id] == want,
            "failed": work[row.campaign_id] == old,
        }.get(row.outcome, False)
    have = bids.get((int(row.campaign_id), str(row.item)))
    mine = None if pd.isna(row.bid) else round(float(row.bid), 4)
    old = None if pd.isna(row.previous) else round(float(row.previous), 4)
    if row.action == "drop" and (row.campaign_id, row.item) in undone:
        return row.outcome in ("applied", "already")
    return {
        ("add", "applied"): have == mine,
        ("add", "already"): have == mine,
        ("add", "failed"): have != mine,
        ("add", "restored"): have == mine,
        ("add", "lost"): have is None,
        ("drop", "applied"): have != old or old is None,
        ("drop", "already"): have != old or old is None,
        ("drop", "failed"): have == old,
    }.get((row.action, row.outcome), False)


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_profit_plan_under_faults_reports_truly_repairs_and_undoes(sb, tmp_path, case):
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0, backoff=0.01)
    plain = toolkit.bid_report(client, progress=False, history=None, include="all")
    stats, cid, loser, paused = made_stats(plain.frame)
    report = toolkit.bid_report(client, progress=False, history=None, include="all", stats=stats)
    plan = report.propose("profit")
    ids = sorted({int(c) for c in report.proposals("profit")["campaign_id"]})
    before = live_state(client, ids)
    journal = str(tmp_path / "journal.db")
    sb.faults.configure({"seed": 3, "rules": FAULTS[case]})
    try:
        result = plan.apply(client, progress=False, journal=journal)
        left = [r["count"] for r in sb.faults.describe()["rules"]]
    finally:
        sb.faults.clear()
    # each fault was met: every write of odd-after answered oddly, 500-before's refusals used
    assert (
        left == [0, 0, 0]
        if case == "odd-after"
        else sum(left) < sum(r["count"] for r in FAULTS[case])
    )
    bids, work = live_state(client, ids)  # read back on its own, the faults gone
    outcomes = toolkit.bulk.Journal(journal).outcomes(result.run_id)
    undone = {
        (r.campaign_id, r.item) for r in outcomes.itertuples() if r.outcome in ("restored", "lost")
    }
    wrong = [
        f"{r.action} {r.target} {r.campaign_id} {r.item}: {r.outcome}"
        for r in outcomes.itertuples()
        if not _outcome_is_true(r, bids, work, undone)
    ]
    assert len(outcomes) >= 6 and wrong == [], wrong
    said = set(outcomes["outcome"])
    if case == "500-before":
        assert "failed" in said and not result.ok
    else:
        assert said <= {"applied", "already"} and result.ok
    # repaired, the account is as proposed; undone, as before
    repaired = toolkit.repair(client, result.run_id, journal=journal, progress=False)
    bids, work = live_state(client, ids)
    assert (cid, loser) not in bids and work[paused] == "Paused"
    sets = report.proposals("profit")
    for r in sets[sets["action"] == "set bid"].itertuples(index=False):
        assert bids[(int(r.campaign_id), str(r.country))] == pytest.approx(r.new_bid)
    if repaired.run_id is not None:
        toolkit.undo(client, repaired.run_id, journal=journal, progress=False)
    toolkit.undo(client, result.run_id, journal=journal, progress=False)
    assert live_state(client, ids) == before
