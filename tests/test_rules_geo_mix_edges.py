"""Per-GEO payout mix at its edges: a window with only its first day, an item of exactly
:data:`~toolkit.rules.geo_mix.SHOWN` countries, a country row without clicks."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from toolkit.rules.geo_mix import country_clicks, mix_payouts

TABLE = pd.DataFrame(
    {"campaign_id": [7, 7, 7], "country": ["US", "DE", "FR"], "payout": [10.0, 2.0, 4.0]}
)


def rows(clicks: dict[str, int], day: dt.date = dt.date(2026, 1, 2)) -> pd.DataFrame:
    """One day of subId ``a`` of campaign 7, a row per country."""
    return pd.DataFrame(
        {
            "date": pd.Timestamp(day, tz="UTC"),
            "campaign_id": 7,
            "level": "subid",
            "key": "a",
            "country": list(clicks),
            "clicks": list(clicks.values()),
        }
    )


def items(clicks: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "campaign_id": [7],
            "level": ["subid"],
            "key": ["a"],
            "clicks": [clicks],
            "conversions": [0.0],
            "revenue": [0.0],
        }  # fmt: skip
    )


def test_a_window_with_only_a_first_day_leaves_out_the_days_before_it() -> None:
    frame = pd.concat([rows({"US": 50}, dt.date(2026, 1, 1)), rows({"DE": 80})])
    got = country_clicks(frame, dt.date(2026, 1, 2), None)
    assert got[["country", "clicks"]].to_dict("records") == [{"country": "DE", "clicks": 80.0}]


def test_an_item_of_exactly_three_countries_names_them_all_and_no_more() -> None:
    clicks = country_clicks(rows({"US": 50, "DE": 30, "FR": 20}), None, None)
    mixed = mix_payouts(items(100.0), clicks, TABLE, None)
    assert mixed["payout_mix"].tolist() == ["payout 6.40: US 50 %, DE 30 %, FR 20 %"]


def test_a_country_row_without_clicks_is_not_named_in_the_mix() -> None:
    clicks = country_clicks(rows({"US": 50, "DE": 50, "FR": 0}), None, None)
    mixed = mix_payouts(items(100.0), clicks, TABLE, None)
    assert mixed["payout_mix"].tolist() == ["payout 6.00: DE 50 %, US 50 %"]


def test_a_campaign_with_only_a_blank_row_is_not_mixed_beside_one_with_country_rows() -> None:
    """Campaign 8 pays one payout whatever the country (a blank row); campaign 7 pays per
    country: only 7's subId gets a mix."""
    table = pd.concat(
        [TABLE, pd.DataFrame({"campaign_id": [8], "country": [""], "payout": [6.0]})],
        ignore_index=True,
    )
    both = pd.concat([rows({"US": 30, "DE": 70}), rows({"US": 30, "DE": 70}).assign(campaign_id=8)])
    two = pd.concat([items(100.0), items(100.0).assign(campaign_id=8)], ignore_index=True)
    mixed = mix_payouts(two, country_clicks(both, None, None), table, None)
    assert mixed["payout_mix"].tolist() == ["payout 4.40: DE 70 %, US 30 %", ""]
    assert mixed["geo_payout"].iloc[0] == pytest.approx(4.4) and pd.isna(
        mixed["geo_payout"].iloc[1]
    )


def test_an_item_of_five_countries_names_three_and_counts_the_others() -> None:
    table = pd.concat(
        [
            TABLE,
            pd.DataFrame({"campaign_id": [7, 7], "country": ["IT", "ES"], "payout": [3.0] * 2}),
        ],
        ignore_index=True,
    )
    clicks = country_clicks(rows({"US": 40, "DE": 25, "FR": 15, "IT": 12, "ES": 8}), None, None)
    mixed = mix_payouts(items(100.0), clicks, table, None)
    # (40 x 10 + 25 x 2 + 15 x 4 + 20 x 3) / 100
    assert mixed["payout_mix"].tolist() == ["payout 5.70: US 40 %, DE 25 %, FR 15 %, 2 more"]


def test_a_country_of_no_row_and_no_blank_row_takes_the_campaigns_revenue_per_conversion() -> None:
    """The last resort: the campaign's revenue over its conversions, over its items at the
    item's level (subId b: 10 conversions, 50 USD), for GB, which the table does not name."""
    both = pd.concat(
        [
            items(100.0),
            pd.DataFrame(
                {
                    "campaign_id": [7],
                    "level": ["subid"],
                    "key": ["b"],
                    "clicks": [500.0],
                    "conversions": [10.0],
                    "revenue": [50.0],
                }
            ),  # fmt: skip
        ],
        ignore_index=True,
    )
    clicks = country_clicks(rows({"US": 50, "GB": 50}), None, None)
    mixed = mix_payouts(both, clicks, TABLE, None).set_index("key")
    assert mixed.loc["a", "geo_payout"] == pytest.approx((50 * 10.0 + 50 * 5.0) / 100)
    assert mixed.loc["a", "payout_mix"] == "payout 7.50: GB 50 %, US 50 %"
