"""Bid reports joined to tracker statistics, against a sandbox over real HTTP: the join's
figures computed by hand (EPC, break-even, posterior, bounds, expected profit), payouts,
profit zones, bid rules as rows, and ``report bids --stats`` on the command line."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from scipy.special import betainc, betaincinv

import toolkit
from toolkit.errors import ValidationError
from toolkit.reports import profit, rule_rows
from toolkit.sandbox import Sandbox
from toolkit.stats import stats_frame

from .conftest import cli_runner


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=8, seed=11, accounts=1) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def client(sb: Sandbox) -> toolkit.Client:
    return toolkit.Client(sb.url, sb.api_keys[0])


@pytest.fixture(scope="module")
def plain(client) -> toolkit.BidReport:
    """The report without statistics (its bids and prices are what the stats are made for)."""
    return toolkit.bid_report(client, progress=False, history=None, include="all")


def campaign_rows(
    frame: pd.DataFrame, mode: str, countries: int = 2, started: bool = False
) -> pd.DataFrame:
    """The rows of the first comparable campaign buying in ``mode`` with that many countries
    at least, whose prices step up (minimum below recommended, more traffic there); a
    started one when ``started``."""
    ok = frame[frame["comparable"] & (frame["mode"].astype(str) == mode)]
    if started:
        ok = ok[ok["work_status"].astype(str) == "Started"]
    ok = ok[(ok["recommended"] > ok["minimum"]) & (ok["recommended_traffic"] > 0)]
    sizes = ok.groupby("campaign_id").size()
    cid = sizes[sizes >= countries].index[0]
    return ok[ok["campaign_id"] == cid].reset_index(drop=True)


def stats_of(rows: list[tuple]) -> pd.DataFrame:
    """A stats frame from ``(campaign_id, level, key, impressions, clicks, cost,
    conversions, revenue)`` rows, each on two days (the halves of the numbers)."""
    cols = ["campaign_id", "level", "key", "impressions", "clicks", "cost", "conversions"]
    out: dict[str, list] = {c: [] for c in ["date", *cols, "revenue"]}
    for row in rows:
        for day in ("2026-01-30", "2026-01-31"):
            out["date"].append(day)
            for col, value in zip([*cols, "revenue"], row, strict=True):
                out[col].append(value / 2 if col not in ("campaign_id", "level", "key") else value)
    return stats_frame(out)


# --------------------------------------------------------------------------- hand figures


def test_a_per_click_row_joined_by_hand(client, plain):
    rows = campaign_rows(plain.frame, "CPC")
    cid = int(rows["campaign_id"].iloc[0])
    x, y = str(rows["country"].iloc[0]), str(rows["country"].iloc[1])
    stats = stats_of(
        [
            (cid, "country", x, 100_000, 2000, 120.0, 30, 225.0),
            (cid, "country", y, 20_000, 500, 30.0, 5, 37.5),
        ]
    )
    report = toolkit.bid_report(
        client, [cid], progress=False, history=None, stats=stats, include="all"
    )
    row = report.frame.set_index("country").loc[x]
    assert row["clicks"] == 2000 and row["impressions_stats"] == 100_000
    assert row["conversions"] == 30 and row["revenue"] == 225.0 and row["cost"] == 120.0
    assert row["value_per_unit"] == pytest.approx(225.0 / 2000)  # EPC
    assert row["break_even_bid"] == pytest.approx(0.1125)
    assert row["payout"] == pytest.approx((225.0 + 37.5) / 35)  # the campaign's R / conversions
    # the prior: one other country, so the weak fallback at (5 + 0.5) / 501, worth the
    # clicks that make its a = 1 (501 / 5.5 = 91.1, fewer than the other country's 500)
    a = 1.0
    b = 501 / 5.5 - a
    cr = (a + 30) / (a + b + 2000)
    assert row["posterior_cr"] == pytest.approx(cr)
    assert row["max_profitable_bid"] == pytest.approx(cr * 7.5)
    low = betaincinv(a + 30, b + 1970, 0.05) * 7.5
    assert row["max_profitable_bid_low"] == pytest.approx(low)
    # expected profit at the minimum and the recommended price: the service's traffic there
    # x the row's clicks per impression (no ctr given: 2000 / 100000) x (value - price)
    m, r = row["minimum"], row["recommended"]
    assert row["profit_day_minimum"] == pytest.approx(
        row["minimum_traffic"] * 0.02 * (cr * 7.5 - m)
    )
    assert row["profit_day_recommended"] == pytest.approx(
        row["recommended_traffic"] * 0.02 * (cr * 7.5 - r)
    )
    now = row["traffic_estimate"] * 0.02 * (cr * 7.5 - row["bid"])
    assert row["profit_day_now"] == pytest.approx(now)
    p_below = betainc(a + 30, b + 1970, row["bid"] / 7.5)
    zone = "unprofitable" if p_below >= 0.9 else "uncertain" if p_below > 0.1 else None
    if zone:
        assert row["profit_zone"] == zone
    assert report.frame.columns[-len(profit.COLUMNS) :].tolist() == list(profit.COLUMNS)


def test_a_per_mille_row_with_a_payouts_table_and_a_report_ctr(client, plain, tmp_path):
    rows = campaign_rows(plain.frame, "CPM")
    cid = int(rows["campaign_id"].iloc[0])
    codes = rows["country"].astype(str).tolist()
    stats = stats_of(
        [
            (cid, "country", g, 400_000, 8000, 900.0, 40 + 10 * i, 400.0 + 60 * i)
            for i, g in enumerate(codes)
        ]
    )
    (tmp_path / "payouts.csv").write_text(
        f"campaign_id,country,payout\n{cid},,12\n{cid},{codes[0].lower()},20\n"
    )
    report = toolkit.bid_report(
        client,
        [cid],
        progress=False,
        history=None,
        include="all",
        stats=stats,
        payouts=tmp_path / "payouts.csv",
    )
    by = report.frame.set_index("country")
    first, second = by.loc[codes[0]], by.loc[codes[1]]
    assert first["payout"] == 20.0 and second["payout"] == 12.0  # own country, else blank row
    assert first["value_per_unit"] == pytest.approx(400.0 / 400_000 * 1000)  # per 1,000
    u = 20.0 * 8000 / 400_000 * 1000  # a rate of 1 is worth this per 1,000 impressions
    assert first["max_profitable_bid"] == pytest.approx(first["posterior_cr"] * u)
    assert first["profit_day_minimum"] == pytest.approx(
        first["minimum_traffic"] / 1000 * (first["posterior_cr"] * u - first["minimum"])
    )
    # a per-click campaign's profit uses the report's ctr when given
    cpc = campaign_rows(plain.frame, "CPC")
    ccid, g = int(cpc["campaign_id"].iloc[0]), str(cpc["country"].iloc[0])
    stats = stats_of([(ccid, "country", g, 100_000, 2000, 100.0, 30, 225.0)])
    with_ctr = (
        toolkit.bid_report(
            client, [ccid], progress=False, history=None, include="all", stats=stats, ctr=0.05
        )
        .frame.set_index("country")
        .loc[g]
    )
    value = with_ctr["max_profitable_bid"]
    assert with_ctr["profit_day_minimum"] == pytest.approx(
        with_ctr["minimum_traffic"] * 0.05 * (value - with_ctr["minimum"])
    )


def test_worked_example_of_the_docs():
    cr = profit.posterior_cr(2.0, 198.0, 30, 2000)
    assert cr == pytest.approx(32 / 2200)
    assert profit.unit_value(5.0, True, 2000, 100_000) == 5.0
    assert profit.unit_value(5.0, False, 2000, 100_000) == pytest.approx(100.0)
    assert profit.observed_value(False, 150.0, 2000, 100_000) == pytest.approx(1.5)


# --------------------------------------------------------------------------- zones


def test_profit_zones(client, plain):
    rows = campaign_rows(plain.frame, "CPM", countries=4)
    cid = int(rows["campaign_id"].iloc[0])
    bid = dict(zip(rows["country"].astype(str), rows["bid"], strict=True))
    zone = dict(zip(rows["country"].astype(str), rows["zone"].astype(str), strict=True))
    cheap = [g for g, z in zone.items() if z in ("between", "below minimum")]
    dear = [g for g, z in zone.items() if z not in ("between", "below minimum")]
    assert cheap, "the campaign should have a bid below its recommended price"
    # a payout of 10 and 2 clicks per 100 impressions: a rate of 1 is worth 200 per 1,000
    # impressions, so a rate of bid / 20 earns 10x the bid and one of bid / 2000 a tenth
    loser, winner = cheap[-1], cheap[0]

    def row(g: str, value: float, clicks: int = 20_000) -> tuple:
        conversions = value * bid[g] / 200 * clicks
        return (cid, "country", g, clicks * 50, clicks, 1.0, conversions, conversions * 10)

    spec_rows = [row(winner, 10), row(loser, 0.1)]
    if dear:
        spec_rows.append(row(dear[0], 10))
    unsure = [g for g in bid if g not in (winner, loser, *dear[:1])][0]
    spec_rows.append(row(unsure, 1, clicks=40))  # earns the bid, on 40 clicks
    report = toolkit.bid_report(
        client, [cid], progress=False, history=None, include="all", stats=stats_of(spec_rows)
    )
    got = dict(
        zip(
            report.frame["country"].astype(str),
            report.frame["profit_zone"].astype(str),
            strict=True,
        )
    )
    assert got[winner] == "room to grow"
    assert got[loser] == "unprofitable"
    assert got[unsure] == "uncertain"
    if dear:
        assert got[dear[0]] == "profitable"
    missing = [g for g in bid if g not in {r[2] for r in spec_rows}]
    for g in missing:
        assert got[g] == "no statistics"
    assert report.frame["zone"].astype(str).tolist() == rows["zone"].astype(str).tolist()


def test_zone_of_thresholds():
    assert profit.zone_of(0.9, True, False) == "unprofitable"
    assert profit.zone_of(0.1, True, True) == "room to grow"
    assert profit.zone_of(0.1, True, False) == "profitable"
    assert profit.zone_of(0.5, True, True) == "uncertain"
    assert profit.zone_of(float("nan"), True, True) == "uncertain"
    assert profit.zone_of(0.99, False, True) == "no statistics"


def test_no_payout_known_says_so(client, plain):
    rows = campaign_rows(plain.frame, "CPC")
    cid, g = int(rows["campaign_id"].iloc[0]), str(rows["country"].iloc[0])
    stats = stats_of([(cid, "country", g, 100_000, 2000, 100.0, 0, 0.0)])
    row = (
        toolkit.bid_report(client, [cid], progress=False, history=None, include="all", stats=stats)
        .frame.set_index("country")
        .loc[g]
    )
    assert np.isnan(row["payout"]) and np.isnan(row["max_profitable_bid"])
    assert row["value_per_unit"] == 0.0
    assert row["profit_zone"] == "uncertain"
    assert "no payout known" in row["profit_note"]


def test_without_statistics_the_columns_are_empty_and_bad_input_is_refused(client, plain):
    assert plain.frame["profit_zone"].isna().all() and plain.frame["clicks"].isna().all()
    with pytest.raises(ValueError, match="needs statistics"):
        plain.propose("profit")
    only_sources = stats_of([(1, "source", "123", 10, 4, 1.0, 0, 0.0)])
    with pytest.raises(ValidationError, match="no country rows"):
        toolkit.bid_report(client, progress=False, history=None, stats=only_sources)
    bad = pd.DataFrame({"campaign_id": [1, "x"], "country": ["US", "DEU"], "payout": [1, -2]})
    with pytest.raises(ValidationError, match="campaign_id 'x' is not a campaign id"):
        profit.read_payouts(bad)
    twice = pd.DataFrame({"campaign_id": [1, 1], "country": ["us", "US"], "payout": [1, 2]})
    with pytest.raises(ValidationError, match="more than one payout"):
        profit.read_payouts(twice)


# --------------------------------------------------------------------------- bid rules


def test_bid_rules_are_rows_with_their_statistics(client, plain):
    rules = plain.account.bid_rules
    cid = int(rules["campaign_id"].iloc[0])
    items = rules[rules["campaign_id"] == cid]
    first, second = str(items["item"].iloc[0]), str(items["item"].iloc[1])
    country = str(plain.frame.loc[plain.frame["campaign_id"] == cid, "country"].iloc[0])
    stats = stats_of(
        [
            (cid, "subid", first, 50_000, 1000, 50.0, 20, 200.0),
            (cid, "subid", second, 50_000, 1000, 50.0, 10, 100.0),
            (cid, "source", second, 50_000, 1000, 50.0, 10, 100.0),  # the same key twice
            (cid, "country", country, 100_000, 2000, 100.0, 30, 300.0),
        ]
    )
    report = toolkit.bid_report(
        client, [cid], progress=False, history=None, include="all", stats=stats
    )
    table = report.bid_rules
    assert list(table.columns) == list(rule_rows.COLUMNS)
    assert len(table) == len(items)
    one = table.set_index("key").loc[first]
    mode = str(plain.frame.loc[plain.frame["campaign_id"] == cid, "mode"].iloc[0])
    epc = 200.0 / 1000 if mode == "CPC" else 200.0 / 50_000 * 1000
    assert one["level"] == "subid" and one["clicks"] == 1000
    assert one["break_even_bid"] == pytest.approx(epc)
    assert one["payout"] == pytest.approx(300.0 / 30)  # the subIds' revenue per conversion
    assert one["note"] == rule_rows.NO_PRICE
    twice = table.set_index("key").loc[second]
    assert twice["level"] == "source or subid" and np.isnan(twice["clicks"])
    assert "as a source and as a subId" in twice["note"]
    others = table[~table["key"].isin([first, second])]
    assert (others["profit_zone"].astype(str) == "no statistics").all()
    assert plain.bid_rules["clicks"].isna().all()  # no statistics given


# --------------------------------------------------------------------------- command line


def test_report_bids_with_stats_on_the_command_line(sb, plain, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    run = cli_runner(sb, capsys)
    rows = campaign_rows(plain.frame, "CPM")
    cid = int(rows["campaign_id"].iloc[0])
    lines = ["date,campaign_id,level,key,impressions,clicks,cost,conversions,revenue"]
    lines += [
        f"2026-01-31,{cid},country,{g},100000,2000,100,40,{400 + i}"
        for i, g in enumerate(rows["country"].astype(str))
    ]
    (tmp_path / "stats.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "bids.xlsx"
    code, stdout, err = run(
        "report",
        "bids",
        "--campaigns",
        str(cid),
        "--stats",
        str(tmp_path / "stats.csv"),
        "-o",
        str(out),
        "--no-history",
    )
    assert code == 0, err
    assert "profit" in stdout
    book = pd.read_excel(out, sheet_name="bids", engine="openpyxl")
    assert "break_even_bid" in book.columns
    got = sorted(book["break_even_bid"].round(6).tolist())
    assert got == sorted(round((400 + i) / 100_000 * 1000, 6) for i in range(len(rows)))
    code, _, err = run("report", "bids", "--stats", str(tmp_path / "none.csv"), "-o", str(out))
    assert code == 2 and "none.csv: no such file (the statistics export)" in err
    code, _, err = run("report", "bids", "--payouts", str(tmp_path / "stats.csv"), "-o", str(out))
    assert code == 2 and "--payouts" in err
