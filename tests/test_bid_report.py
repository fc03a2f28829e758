"""Bid reports against the sandbox: prices asked with each campaign's targeting, once per
distinct query; zones at their boundaries; units; proposals applied and undone; an action
workbook read back into the same calls; a failing price call; the price history."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit import spec
from toolkit.bulk.journal import Journal
from toolkit.bulk.workbook.actions import plan_actions
from toolkit.reports import zones
from toolkit.reports.frame import contract_columns
from toolkit.reports.units import price_unit
from toolkit.sandbox import Sandbox

from .conftest import Api

PRICE = "GET /api/campaign/price 200"


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=20, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def client(sb: Sandbox) -> toolkit.Client:
    return toolkit.Client(sb.url, sb.api_keys[0])


@pytest.fixture(scope="module")
def api(sb: Sandbox) -> Api:
    return Api(sb.url, sb.api_keys[0])


@pytest.fixture(scope="module")
def report(client: toolkit.Client) -> toolkit.BidReport:
    return toolkit.bid_report(client, progress=False, history=None, include="all")


def price_calls(sb: Sandbox) -> int:
    return sb.stats().get(PRICE, 0)


def direct_targeting(api: Api, cid: int) -> tuple[str, dict[str, list[Any]]]:
    """A campaign's format and price parameters, read from its detail view by hand."""
    detail = api.item(cid)
    fmt = detail["ad_format"] if detail["ad_format"] in spec.FORMATS else None
    fmt = fmt or spec.FORMAT_BY_LABEL[detail["ad_format"]]
    languages = api.ok("/api/campaign/list-refs-data", type="language")["language"]
    params: dict[str, list[Any]] = {}
    for kind in spec.TARGET_KINDS.values():
        if not kind.price_param or kind.bids or not kind.allowed_for(fmt):
            continue
        shown = detail.get(kind.detail_field) or []
        values = list(shown.keys()) if isinstance(shown, dict) else list(shown)
        if kind.sent_as_code:  # ids shown, codes sent: "English (en)" -> "en"
            values = [languages[str(v)].rsplit("(", 1)[1].rstrip(")") for v in values]
        elif kind.item_type is int:
            values = [int(v) for v in values]
        if values:
            params[kind.price_param] = values
    return fmt, params


# --------------------------------------------------------------------------- columns


def test_the_frame_has_the_contract_columns_and_dtypes(report):
    df = report.frame
    assert list(df.columns[:23]) == [
        "campaign_id", "name", "ad_format", "mode", "status", "work_status", "country", "bid",
        "price_unit", "comparable", "minimum", "recommended", "minimum_traffic",
        "recommended_traffic", "position", "zone", "gap_minimum", "gap_minimum_pct",
        "gap_recommended", "gap_recommended_pct", "traffic_estimate", "asked_at", "error",
    ]  # fmt: skip
    assert list(df.columns[:23]) == list(contract_columns())
    assert str(df["campaign_id"].dtype) == "Int64"
    assert str(df["minimum_traffic"].dtype) == "Int64"
    assert df["comparable"].dtype == bool
    assert str(df["asked_at"].dtype) == "datetime64[ns, UTC]"
    assert list(df["zone"].cat.categories) == list(zones.ZONES)
    assert df["zone"].cat.ordered
    for name in ("ad_format", "mode", "status", "work_status"):
        assert isinstance(df[name].dtype, pd.CategoricalDtype), name
    for name in ("name", "country", "price_unit", "error"):
        assert pd.api.types.is_string_dtype(df[name].dtype), name
    assert len(df) == len(report.account.countries)
    assert df["error"].isna().all()


# --------------------------------------------------------------------------- prices


def test_report_prices_equal_direct_price_calls_with_the_same_targeting(report, client, api):
    df = report.frame
    sample = df.groupby("ad_format", observed=True).head(2)
    assert len(sample) >= 6
    for row in sample.itertuples(index=False):
        fmt, params = direct_targeting(api, int(row.campaign_id))
        assert len(params) >= 2, "the sample should carry targeting besides the country"
        direct = client.account.price(fmt, country=[row.country], **params)
        if row.mode == price_unit(fmt):  # same unit: the price as the service gave it
            assert row.minimum == direct["minimum"]["price"]
            assert row.recommended == direct["recommend"]["price"]
        assert row.minimum_traffic == direct["minimum"]["estimated_traffic"]
        assert row.recommended_traffic == direct["recommend"]["estimated_traffic"]


def test_the_query_carries_targeting_and_identical_queries_are_asked_once(sb, client, api):
    cats = api.ok("/api/campaign/list-refs-data", type="category")["category"]
    category = int(next(iter(cats["push"])))

    def campaign(quality: str) -> int:
        target = {"category": [category], "quality": [quality], "country": {"US": "0.05"}}
        return api.new_campaign("push", targeted=False, target=target, mode="CPC")

    high, high_twin, low = campaign("high"), campaign("high"), campaign("low")
    before = price_calls(sb)
    report = toolkit.bid_report(
        client, [high, high_twin, low], progress=False, history=None, include="all"
    )
    assert price_calls(sb) - before == 2  # the twins share one query
    assert report.calls == 2 and report.naive_calls == 3
    by_id = report.frame.set_index(report.frame["campaign_id"].astype(int))
    assert by_id.loc[high, "minimum"] == by_id.loc[high_twin, "minimum"]
    assert by_id.loc[high, "minimum"] > by_id.loc[low, "minimum"]  # quality is in the query
    for cid, quality in ((high, "high"), (low, "low")):
        direct = client.account.price(
            "push", country=["US"], quality=[quality], category=[category]
        )
        assert by_id.loc[cid, "minimum"] == direct["minimum"]["price"]
        assert by_id.loc[cid, "recommended_traffic"] == direct["recommend"]["estimated_traffic"]


# --------------------------------------------------------------------------- zones


@pytest.mark.parametrize(
    ("bid", "expected"),
    [
        (0.0999999, "below minimum"),
        (0.10, "between"),  # exactly the minimum is not below it
        (0.195, "between"),
        (0.20 * (1 - 0.02), "at recommended"),  # the tolerance's edges are in
        (0.20, "at recommended"),
        (0.20 * (1 + 0.02), "at recommended"),
        (0.20 * (1 + 0.02) + 1e-6, "above recommended"),
        (0.20 * 1.5, "above recommended"),  # exactly overpay x recommended is not past it
        (0.20 * 1.5 + 1e-6, "overpaying"),
    ],
)
def test_zone_boundaries(bid, expected):
    assert zones.zone(bid, 0.10, 0.20, overpay=1.5, tolerance=0.02) == expected


def test_zone_with_equal_prices_and_missing_numbers():
    assert zones.zone(0.10, 0.10, 0.10) == "at recommended"
    assert zones.zone(0.09, 0.10, 0.10) == "below minimum"
    assert zones.zone(math.nan, 0.10, 0.20) is None
    assert math.isnan(zones.position(0.10, 0.10, 0.10))
    assert zones.position(0.15, 0.10, 0.20) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="overpay"):
        zones.check_bounds(1.01, 0.02)


def test_traffic_interpolation_at_its_points_and_above():
    lo, hi = 1000.0, 3000.0
    assert zones.traffic_at(0.0999, 0.10, 0.20, lo, hi) == 0.0
    assert zones.traffic_at(0.10, 0.10, 0.20, lo, hi) == pytest.approx(lo)
    assert zones.traffic_at(0.15, 0.10, 0.20, lo, hi) == pytest.approx(2000.0)
    assert zones.traffic_at(0.20, 0.10, 0.20, lo, hi) == pytest.approx(hi)
    # above: same slope as below the recommended price, saturating at hi + GAIN (hi - lo)
    step = 1e-6
    below = (hi - zones.traffic_at(0.20 - step, 0.10, 0.20, lo, hi)) / step
    above = (zones.traffic_at(0.20 + step, 0.10, 0.20, lo, hi) - hi) / step
    assert above == pytest.approx(below, rel=1e-3)
    ceiling = hi + zones.GAIN * (hi - lo)
    assert hi < zones.traffic_at(0.3, 0.10, 0.20, lo, hi) < ceiling
    assert zones.traffic_at(100.0, 0.10, 0.20, lo, hi) == pytest.approx(ceiling)


# --------------------------------------------------------------------------- units


def test_incomparable_units_are_flagged_never_zoned_and_zoned_with_ctr(client, report):
    df = report.frame
    other = df["mode"].astype(str) != df["price_unit"].astype(str)
    assert other.any() and (~other).any()
    assert not df.loc[other, "comparable"].any()
    assert df.loc[other, "zone"].isna().all()
    assert df.loc[other, "position"].isna().all()
    assert df.loc[other, "traffic_estimate"].isna().all()
    assert df.loc[~other, "zone"].notna().all()
    assert report.proposals("recommended")["campaign_id"].isin(df.loc[~other, "campaign_id"]).all()

    converted = toolkit.bid_report(
        report.account, client=client, ctr=0.01, history=None, progress=False, include="all"
    ).frame
    assert converted["comparable"].all()
    assert converted.loc[other, "zone"].notna().all()
    cpc_priced = other & (df["price_unit"] == "CPC")  # CPM bids on per-click prices
    cpm_priced = other & (df["price_unit"] == "CPM")  # CPC bids on per-mille prices
    assert cpc_priced.any() or cpm_priced.any()
    raw = df["minimum"]  # not comparable: left in the price unit
    assert converted.loc[cpc_priced, "minimum"].tolist() == pytest.approx(
        (raw[cpc_priced] * 1000 * 0.01).tolist()
    )
    assert converted.loc[cpm_priced, "minimum"].tolist() == pytest.approx(
        (raw[cpm_priced] / (1000 * 0.01)).tolist()
    )
    same = ~other
    assert converted.loc[same, "minimum"].tolist() == df.loc[same, "minimum"].tolist()


# --------------------------------------------------------------------------- proposals


def test_propose_minimum_applied_then_undone_and_actions_plan_the_same(client, api, tmp_path):
    cats = api.ok("/api/campaign/list-refs-data", type="category")["category"]
    target = {
        "category": [int(next(iter(cats["push"])))],
        "quality": ["high"],
        "country": {"US": "0.0010", "DE": "0.0020", "FR": "5.0"},
    }
    low = [api.new_campaign("push", targeted=False, target=target, mode="CPC") for _ in range(2)]
    report = toolkit.bid_report(client, low, progress=False, history=None, include="all")
    below = report.frame[report.frame["zone"] == "below minimum"]
    assert len(below) == 4
    proposed = report.proposals("minimum")
    assert len(proposed) == 4
    assert (proposed["new_bid"] >= proposed["minimum"]).all()
    assert {"spend_new", "campaign_spend_new", "limit_day_sum", "balance_days"} <= set(
        proposed.columns
    )

    # bids of 0.001 raised to the minimum (x200): the bid_jump guard lifted for the test
    plan = report.propose("minimum", allow=["bid_jump"])
    path = report.to_actions(tmp_path / "bids.xlsx", "minimum")
    from_book = plan_actions(client, path, allow=["bid_jump"])
    columns = ["step", "action", "target", "campaign_ids", "bids"]
    assert plan.to_frame()[columns].to_dict("records") == from_book.to_frame()[columns].to_dict(
        "records"
    )
    assert len(plan) > 0

    journal = Journal(tmp_path / "journal.db")
    result = plan.apply(client, progress=False, journal=journal)
    assert result.ok
    after = toolkit.bid_report(client, low, progress=False, history=None, include="all").frame
    comparable = after[after["comparable"]]
    assert not (comparable["zone"] == "below minimum").any()
    assert (after["bid"] > 0.0020).all()

    toolkit.undo(client, result.run_id, journal=journal, progress=False)
    restored = toolkit.load_account(client, low, progress=False).countries
    before = report.account.countries
    key = ["campaign_id", "country"]
    pd.testing.assert_frame_equal(
        restored.sort_values(key)[[*key, "bid"]].reset_index(drop=True),
        before.sort_values(key)[[*key, "bid"]].reset_index(drop=True),
    )


def test_cap_proposal_moves_overpaying_bids_down_to_recommended(report):
    capped = report.proposals("cap")
    overpaying = report.frame[report.frame["zone"] == "overpaying"]
    assert len(capped) == len(overpaying) > 0
    assert (capped["new_bid"] < capped["old_bid"]).all()
    assert capped["new_bid"].tolist() == pytest.approx(capped["recommended"].tolist(), abs=1e-4)
    with pytest.raises(ValueError, match="to must be one of"):
        report.proposals("nowhere")


@pytest.mark.parametrize("to", ["minimum", "recommended", "cap"])
def test_a_proposal_proposed_and_applied_again_plans_nothing(client, api, tmp_path, to):
    # every proposal moves a bid to a price (an absolute target), never by a factor of the
    # bid: proposed again, from the same report or a new one, it has nothing left to move
    cats = api.ok("/api/campaign/list-refs-data", type="category")["category"]
    target = {
        "category": [int(next(iter(cats["push"])))],
        "quality": ["high"],
        "country": {"US": "0.0010", "DE": "0.0020", "FR": "5.0"},
    }
    ids = [api.new_campaign("push", targeted=False, target=target, mode="CPC") for _ in range(2)]
    report = toolkit.bid_report(client, ids, progress=False, history=None, include="all")
    plan = report.propose(to, allow=["bid_jump"])
    assert len(plan) > 0
    result = plan.apply(client, progress=False, journal=Journal(tmp_path / "journal.db"))
    assert result.ok

    def bids() -> dict[tuple[int, str], float]:
        countries = toolkit.load_account(client, ids, progress=False).countries
        return {
            (int(c), str(g)): float(b)
            for c, g, b in zip(
                countries["campaign_id"], countries["country"], countries["bid"], strict=True
            )
        }

    applied = bids()
    moved = report.proposals(to)
    for row in moved.itertuples(index=False):
        assert applied[(int(row.campaign_id), str(row.country))] == pytest.approx(row.new_bid)
    again = report.propose(to, allow=["bid_jump"])  # the same report, live bids moved since
    assert len(again) == 0 and again.conflicts.empty
    fresh = toolkit.bid_report(client, ids, progress=False, history=None, include="all")
    assert fresh.proposals(to).empty
    assert len(fresh.propose(to, allow=["bid_jump"])) == 0
    assert bids() == applied


# --------------------------------------------------------------------------- faults


def test_a_failing_price_call_gives_an_error_row_and_the_rest_of_the_report(fresh_sandbox):
    sb = fresh_sandbox
    client = toolkit.Client(sb.url, sb.api_keys[0], retries=0)
    account = toolkit.load_account(client, progress=False)
    sb.faults.configure({"rules": [{"status": 500, "count": 1, "path": "/api/campaign/price"}]})
    report = toolkit.bid_report(account, client=client, progress=False, history=None)
    df = report.frame
    failed = df[df["error"].notna()]
    assert len(failed) >= 1
    assert failed["query"].nunique() == 1  # one call failed; its rows carry its error
    assert failed["error"].str.startswith("ApiError: account.price").all()
    assert failed["minimum"].isna().all() and failed["zone"].isna().all()
    fine = df[df["error"].isna()]
    assert len(fine) == len(df) - len(failed) > 0
    assert fine["minimum"].notna().all()


# --------------------------------------------------------------------------- history


def test_each_report_appends_its_prices_to_the_history(client, tmp_path):
    path = tmp_path / "prices.db"
    first = toolkit.bid_report(client, progress=False, history=path, include="all")
    assert len(toolkit.price_history(path)) == first.calls
    second = toolkit.bid_report(
        first.account, client=client, progress=False, history=path, include="all"
    )
    history = toolkit.price_history(path)
    assert len(history) == first.calls + second.calls
    assert list(history.columns[:8]) == [
        "asked_at",
        "ad_format",
        "country",
        "query",
        "minimum",
        "recommended",
        "minimum_traffic",
        "recommended_traffic",
    ]
    assert str(history["asked_at"].dtype) == "datetime64[ns, UTC]"
    assert history["asked_at"].is_monotonic_increasing
    assert set(history["query"]) == set(first.frame["query"])
    row = first.frame.iloc[0]
    asked = history[history["query"] == row["query"]]
    assert len(asked) == 2 and (asked["minimum_traffic"] == row["minimum_traffic"]).all()
    mine = second.history()
    assert len(mine) == first.calls + second.calls  # the same queries, asked twice
    assert first.frame["query"].isin(mine["query"]).all()
    us = toolkit.price_history(path, country="us", ad_format="push")
    assert len(us) and (us["country"] == "US").all() and (us["ad_format"] == "push").all()


def test_history_none_writes_nothing(client, tmp_path, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    toolkit.bid_report(client, progress=False, history=None)
    assert not (tmp_path / "prices.db").exists()
    toolkit.bid_report(client, progress=False)  # the default: beside the journal
    assert len(toolkit.price_history()) > 0


# --------------------------------------------------------------------------- sensitivity


def test_sensitivity_counts_its_calls_first_and_drops_one_dimension_at_a_time(report, sb, capsys):
    row = report.frame[report.frame["error"].isna()].iloc[0]
    cid, country = int(row["campaign_id"]), str(row["country"])
    dims = len(report.queries[row["query"]].params) - 1  # the country is kept
    cost = report.sensitivity_cost(cid, country)
    assert 0 < cost <= dims
    before = price_calls(sb)
    df = report.sensitivity(cid, country)
    assert price_calls(sb) - before == cost
    assert len(df) == dims + 1 and df["dropped"].isna().sum() == 1
    assert df["minimum"].notna().all()
    full = df[df["dropped"].isna()].iloc[0]
    assert full["minimum"] == row["minimum"] or not row["comparable"]
    wider = df[df["dropped"].notna()]
    changed = (wider["minimum_traffic"] != full["minimum_traffic"]) | (
        wider["minimum"] != full["minimum"]
    )
    assert changed.any()
    assert report.sensitivity_cost(cid, country) == 0  # asked already
