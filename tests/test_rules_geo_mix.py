"""Per-GEO break-even: a subId's payout is the click-weighted mix of its countries' payouts
when the statistics carry a country per row and the payouts table a payout per country; the
figures of statistics without a country per row are today's."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import toolkit
from toolkit.rules import evaluate_rules
from toolkit.rules.decide import decide
from toolkit.rules.geo_mix import country_clicks, mix_payouts

LAST = dt.date(2026, 1, 31)
CPC = 0.05
#: The subIds' clicks by country: a 30/70 and a 70/30 mix of a $10 and a $2 country, and
#: eight subIds of an even mix for the prior.
MIXES = {"a0": (300, 700), "a1": (700, 300), **{f"b{i}": (500, 500) for i in range(8)}}
TABLE = pd.DataFrame({"campaign_id": [7, 7, 7], "country": ["US", "DE", ""],
                      "payout": [10.0, 2.0, 6.0]})  # fmt: skip
EVERYONE = [{"name": "all", "level": "subid", "when": "clicks >= 1", "action": "blacklist"}]


def geo_stats(campaign: int = 7, country: str = "country") -> pd.DataFrame:
    """Two days of subIds with a row per country; 1 % of clicks convert at the country's
    payout, every click costs :data:`CPC`."""
    rows = []
    for day in (LAST - dt.timedelta(days=1), LAST):
        for key, (us, de) in MIXES.items():
            for code, clicks, pay in (("US", us, 10.0), ("DE", de, 2.0)):
                conversions = clicks // 100
                rows.append({"date": pd.Timestamp(day, tz="UTC"), "campaign_id": campaign,
                             "level": "subid", "key": key, country: code, "impressions": 0,
                             "clicks": clicks, "cost": clicks * CPC,
                             "conversions": conversions, "revenue": conversions * pay})  # fmt: skip
    return pd.DataFrame(rows)


def evidence(stats: pd.DataFrame, table: pd.DataFrame | None = TABLE) -> pd.DataFrame:
    made = decide(EVERYONE, stats, payouts=table)
    return made.set_index("key").sort_index()


def test_a_subids_payout_is_its_click_weighted_mix_of_countries():
    made = evidence(geo_stats())
    # 30 % of clicks at $10 and 70 % at $2: 0.3 x 10 + 0.7 x 2 = 4.40; the other way 7.60
    assert made.loc["a0", "break_even"] == pytest.approx(CPC / 4.4)
    assert made.loc["a1", "break_even"] == pytest.approx(CPC / 7.6)
    assert made.loc["b0", "break_even"] == pytest.approx(CPC / 6.0)
    assert made.loc["a0", "why"].endswith("payout 4.40: DE 70 %, US 30 %")
    assert made.loc["a1", "why"].endswith("payout 7.60: US 70 %, DE 30 %")
    # the subId that sends most clicks to the cheap country is the likelier loser
    assert made.loc["a0", "p_loss"] > made.loc["b0", "p_loss"] > made.loc["a1", "p_loss"]


def test_statistics_without_a_country_per_row_keep_todays_figures():
    with_country = geo_stats()
    without = with_country.drop(columns="country")
    today = evidence(without)
    # the campaign's blank row for every subId, whatever its countries: 6.00
    assert np.allclose(today["break_even"], CPC / 6.0)
    assert not today["why"].str.contains("payout ").any()
    # a table without a row per country mixes nothing either: the same figures
    blank = TABLE[TABLE["country"] == ""]
    same = evidence(with_country, blank)
    columns = ["break_even", "p_loss", "posterior_cr", "why"]
    pd.testing.assert_frame_equal(same[columns], evidence(without, blank)[columns])
    assert np.allclose(same["break_even"], CPC / 6.0)


def test_clicks_without_a_country_take_the_items_own_payout():
    stats = geo_stats()
    no_country = stats[(stats["key"] == "a0") & (stats["country"] == "US")].assign(country="")
    made = evidence(pd.concat([stats, no_country], ignore_index=True))
    # 300 US at 10, 700 DE at 2, 300 without a country at the campaign's 6: 5.15 per click
    assert made.loc["a0", "break_even"] == pytest.approx(CPC / ((3000 + 1400 + 1800) / 1300))
    assert "no country 23 %" in made.loc["a0", "why"]


def test_a_country_without_a_row_takes_the_campaigns_and_names_are_codes():
    stats = geo_stats()
    stats["country"] = stats["country"].map({"US": "United States", "DE": "Germany"})
    table = TABLE[TABLE["country"] != "DE"]  # DE: the campaign's blank row, 6
    made = evidence(stats, table)
    assert made.loc["a0", "break_even"] == pytest.approx(CPC / (0.3 * 10 + 0.7 * 6))
    assert "DE 70 %, US 30 %" in made.loc["a0", "why"]


def test_the_mix_is_over_the_rules_window_only():
    stats = geo_stats()
    old = stats["date"] < pd.Timestamp(LAST, tz="UTC")
    stats.loc[old & (stats["key"] == "a0"), "clicks"] = 0  # a0's first day: no clicks
    stats.loc[old & (stats["key"] == "a0") & (stats["country"] == "US"), "clicks"] = 1000
    window = [{**EVERYONE[0], "window": 1}]
    last = decide(window, stats, payouts=TABLE).set_index("key")
    assert last.loc["a0", "break_even"] == pytest.approx(CPC / 4.4)
    clicks = country_clicks(stats, None, None)
    both = clicks[clicks["key"] == "a0"].set_index("country")["clicks"]
    assert both.to_dict() == {"DE": 700.0, "US": 1300.0}


def test_mix_payouts_leaves_items_of_campaigns_without_rows_per_country():
    clicks = country_clicks(geo_stats(campaign=8), None, None)
    items = clicks.groupby(["campaign_id", "level", "key"], as_index=False)["clicks"].sum()
    items = items.assign(conversions=0.0, revenue=0.0)
    out = mix_payouts(items, clicks, TABLE, None)  # the table knows campaign 7 only
    assert out["geo_payout"].isna().all() and (out["payout_mix"] == "").all()


def test_evaluate_rules_shows_the_mix_in_the_plans_reasons(client):
    account = toolkit.load_account(client, progress=False)
    campaign = int(account.table("campaigns")["id"].iloc[0])
    stats = geo_stats(campaign)
    stats["key"] = stats["key"].map({k: f"{i:010x}" for i, k in enumerate(MIXES, start=0xA0)})
    table = TABLE.assign(campaign_id=campaign)
    rule = {"name": "cheap GEO", "level": "subid", "when": "p_loss >= 0.5 and clicks >= 1000",
            "action": "blacklist"}  # fmt: skip
    plan, decisions = evaluate_rules([rule], stats, client, journal=None, payouts=table)
    picked = decisions.set_index("key")
    assert "00000000a0" in picked.index and "00000000a1" not in picked.index
    assert "payout 4.40: DE 70 %, US 30 %" in picked.loc["00000000a0", "why"]
    assert any("payout 4.40" in str(w) for w in plan.changes()["why"])
