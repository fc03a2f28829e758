"""The ``bid_jump`` guard of the planner: a bid raised more than 3x its old value, cut by more
than two thirds, or set below the service's minimum price where the plan knows it, is refused
before any call unless allowed (its faces: tests/test_guard_bid_jump_faces.py). Against the
sandbox over real HTTP.

The account of the module's sandbox (12 campaigns, seed 11, as ``sb`` of conftest): 1000001 is
a push CPC campaign (cents per click), 1000004 a video CPM campaign bidding some USD per 1000
impressions on JP, 1000006 has bid rules."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

import toolkit
from toolkit import spec
from toolkit.bulk import make_plan
from toolkit.bulk.edits import money
from toolkit.bulk.guards import bid_changes, bid_jump
from toolkit.errors import PlanRefused
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox

GEO = spec.bid_kind().column
PUSH, VIDEO, RULED = 1000001, 1000004, 1000006


@pytest.fixture(scope="module")
def shared() -> Iterator[Sandbox]:
    """The account planned against without changing it."""
    with Sandbox(campaigns=12, seed=11) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def reader(shared):
    return toolkit.connect(api_key=shared.api_keys[0], base_url=shared.url, retries=0)


@pytest.fixture(scope="module")
def account(reader):
    return load_account(reader, progress=False)


def bid_of(account, cid: int, code: str) -> float:
    c = account.table("countries")
    return float(c.loc[(c["campaign_id"] == cid) & (c[GEO] == code), "bid"].iloc[0])


def with_bid(account, cid: int, code: str, bid: float, **more: float) -> dict[str, pd.DataFrame]:
    """The countries table with the bid of ``code`` set (and of each country of ``more``),
    the country added where the campaign lacks it."""
    c = account.table("countries").copy()
    for country, value in {code: bid, **more}.items():
        at = (c["campaign_id"] == cid) & (c[GEO] == country)
        if at.any():
            c.loc[at, "bid"] = value
            continue
        row = pd.DataFrame([{"campaign_id": cid, GEO: country, "bid": value}], columns=c.columns)
        c = pd.concat([c, row.astype(c.dtypes.to_dict())], ignore_index=True)
    return {"countries": c}


def plan_of(reader, account, desired, **options):
    base = {name: account.table(name) for name in desired}
    return make_plan(reader, desired, base=base, live=account, **options)


def new_bids(plan) -> dict[tuple[int, str], float]:
    ch = plan.changes()
    ch = ch[ch["what"].isin(["bid", "add"])]
    return {(int(r.campaign_id), str(r.key)): float(r.new) for r in ch.itertuples()}


# --------------------------------------------------------------------------- the guard


@pytest.mark.parametrize(
    "old, new, trips",
    [
        (0.10, 0.30, False),  # exactly 3x
        (0.0344, 0.1032, False),  # 3x, whatever the floating point
        (0.10, 0.3001, True),
        (0.0344, 50.0, True),  # x1453.5
        (0.30, 0.10, False),  # cut by exactly two thirds
        (0.30, 0.0999, True),
        (4.93, 0.05, True),  # a CPM bid set like a CPC one
        (0.20, 0.21, False),
        (None, 50.0, False),  # a new item has no old value
    ],
)
def test_raise_past_3x_and_cut_past_two_thirds_trip_the_guard(old, new, trips):
    assert (bid_jump(old, new) is not None) == trips


def test_the_minimum_price_where_it_is_known():
    assert bid_jump(None, 0.05, minimum=0.30) == "below the minimum 0.30"
    assert bid_jump(None, 0.30, minimum=0.30) is None  # exactly at the minimum
    assert bid_jump(0.29, 0.30, minimum=0.30) is None
    both = bid_jump(4.93, 0.05, minimum=2.6)
    assert both is not None and "cut by more than 67%" in both and "below the minimum 2.60" in both


def test_thresholds_are_options():
    assert bid_jump(0.10, 0.25) is None
    assert bid_jump(0.10, 0.25, max_bid_raise=2.0) == "x2.5, raised more than 2x"
    assert bid_jump(0.30, 0.20, max_bid_cut=0.25) == "x0.67, cut by more than 25%"
    assert bid_jump(0.30, 0.01, max_bid_cut=1.0) is None


# --------------------------------------------------------------------------- the planner


def test_a_country_bid_raised_past_3x_is_refused_with_its_numbers(reader, account):
    old = bid_of(account, PUSH, "CL")
    desired = with_bid(account, PUSH, "CL", 50.0)
    with pytest.raises(PlanRefused) as info:
        plan_of(reader, account, desired)
    name = account.table("campaigns").set_index("id").loc[PUSH, "name"]
    assert info.value.guard == "bid_jump"
    assert info.value.details == [
        f"campaign {PUSH} ({name}) country CL: {money(old)} -> 50.00"
        f" (x{50.0 / old:.1f}, raised more than 3x)"
    ]
    assert "allow={'bid_jump'}" in str(info.value) and "--allow bid_jump" in str(info.value)
    plan = plan_of(reader, account, desired, allow={"bid_jump"})
    assert new_bids(plan) == {(PUSH, "CL"): 50.0}
    assert [(c.action, c.target) for c in plan.calls] == [("drop", "country"), ("add", "country")]


def test_a_country_bid_cut_past_two_thirds_is_refused(reader, account):
    old = bid_of(account, VIDEO, "JP")
    desired = with_bid(account, VIDEO, "JP", 0.15)
    with pytest.raises(PlanRefused) as info:
        plan_of(reader, account, desired)
    (line,) = info.value.details
    assert f"country JP: {money(old)} -> 0.15 (x{0.15 / old:.2g}, cut by more than 67%)" in line
    assert len(plan_of(reader, account, desired, allow=["bid_jump"])) == 2


def test_bids_exactly_at_the_thresholds_pass(reader, account):
    old = bid_of(account, PUSH, "CL")
    for new in (old * 3, old / 3):
        plan = plan_of(reader, account, with_bid(account, PUSH, "CL", new))
        assert new_bids(plan) == {(PUSH, "CL"): pytest.approx(new)}


def test_the_thresholds_go_through_the_planner(reader, account):
    old = bid_of(account, PUSH, "CL")
    desired = with_bid(account, PUSH, "CL", round(old * 5, 4))
    assert len(plan_of(reader, account, desired, max_bid_raise=10.0)) == 2
    desired = with_bid(account, PUSH, "CL", round(old * 0.6, 4))
    with pytest.raises(PlanRefused):
        plan_of(reader, account, desired, max_bid_cut=0.25)
    with pytest.raises(ValueError, match="max_bid_raise"):
        plan_of(reader, account, desired, max_bid_raise=0.5)
    with pytest.raises(ValueError, match="max_bid_cut"):
        plan_of(reader, account, desired, max_bid_cut=1.5)


def test_bid_rules_are_guarded_as_well(reader, account):
    rules = account.table("bid_rules")
    mine = rules[rules["campaign_id"] == RULED]
    item, old = str(mine["item"].iloc[0]), float(mine["bid"].iloc[0])
    for new, words in ((old * 4, "raised more than 3x"), (old / 4, "cut by more than 67%")):
        desired = rules.copy()
        desired.loc[mine.index[0], "bid"] = round(new, 4)
        with pytest.raises(PlanRefused) as info:
            plan_of(reader, account, {"bid_rules": desired})
        (line,) = info.value.details
        assert line.startswith(f"campaign {RULED} (") and f"bid rule {item}: {money(old)}" in line
        assert words in line
        plan = plan_of(reader, account, {"bid_rules": desired}, allow={"bid_jump"})
        assert new_bids(plan) == {(RULED, item): pytest.approx(round(new, 4))}


def test_a_new_item_is_checked_against_the_minimum_only(reader, account):
    desired = with_bid(account, PUSH, "NZ", 50.0)  # no old value: no ratio
    assert new_bids(plan_of(reader, account, desired)) == {(PUSH, "NZ"): 50.0}
    with pytest.raises(PlanRefused) as info:
        plan_of(reader, account, desired, minimum_prices={(PUSH, "NZ"): 60.0})
    assert info.value.details[0].endswith("country NZ: new -> 50.00 (below the minimum 60.00)")
    plan = plan_of(reader, account, desired, minimum_prices={(PUSH, "nz"): 50.0})  # at it
    assert new_bids(plan) == {(PUSH, "NZ"): 50.0}


def test_a_changed_bid_below_a_known_minimum_is_refused(reader, account):
    old = bid_of(account, PUSH, "BE")
    desired = with_bid(account, PUSH, "BE", round(old * 1.1, 4))
    assert len(plan_of(reader, account, desired)) == 2  # no minimum known: not checked
    minimum = {(PUSH, "BE"): round(old * 1.5, 4), (PUSH, "FR"): 99.0}  # FR: not changed
    with pytest.raises(PlanRefused) as info:
        plan_of(reader, account, desired, minimum_prices=minimum)
    (line,) = info.value.details
    assert f"country BE: {money(old)} -> {money(round(old * 1.1, 4))}" in line
    assert f"below the minimum {money(round(old * 1.5, 4))}" in line
    with pytest.raises(ValueError, match="minimum_prices"):
        plan_of(reader, account, desired, minimum_prices={PUSH: 0.3})


def test_bid_changes_pair_the_drop_carrying_the_old_bid_with_the_add(reader, account):
    old = bid_of(account, PUSH, "CL")
    plan = plan_of(reader, account, with_bid(account, PUSH, "CL", 0.2, NZ=0.3))
    changes = {(c.campaign_id, c.key): (c.old, c.new) for c in bid_changes(plan.calls)}
    assert changes == {(PUSH, "CL"): (old, 0.2), (PUSH, "NZ"): (None, 0.3)}
