"""Bid proposals of a report: which country bids to move, where to, and what it costs a day.

``to`` is one of:

- ``minimum``: raise each comparable bid below the minimum to the minimum;
- ``recommended``: raise each comparable bid under the recommended price (below minimum or
  between) to the recommended price;
- ``cap``: lower each overpaying bid to the recommended price.

New bids are the price in the bid's unit rounded *up* to 4 decimals (a rounded-down minimum
would still be below it). Rows that are not comparable, or whose price could not be asked,
are never proposed.

Budget impact, per row: ``spend_now`` and ``spend_new`` are the estimated USD a day at the
current and the new bid (the estimated traffic, impressions a day, bought at the bid:
``impressions / 1000 * bid`` for a CPM bid, ``impressions * ctr * bid`` for a CPC bid, so a
CPC bid's spend needs ``ctr=``: without one it is *unknown*, NaN, never 0).
``campaign_spend_new`` adds up the campaign's rows of the report at their new bids (unchanged
rows at their current bid) over the rows with an estimate, and ``campaign_spend_unknown``
counts the rows without one (not in the sum), to compare with the campaign's daily limit
(``limit_day_sum``): ``over_day_limit`` is True when the known spend alone passes it, NA when
it does not but some spend is unknown. ``balance_days`` is the account balance over the daily
spend, at the proposal's bids, of the report's **live** campaigns only (started and approved:
the others spend nothing) over the rows with an estimate; ``spend_unknown_bids`` counts the
live rows without one, so with some unknown the balance lasts at most ``balance_days``.

>>> new_bid(0.12341, "minimum"), new_bid(0.5, "cap")
(0.1235, 0.5)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .. import spec
from ..frames.schemas import FLOAT, INT, STRING
from .frame import geo
from .live import is_live
from .units import spend_per_day
from .zones import ABOVE, AT, BELOW, BETWEEN, OVERPAYING, traffic_of

#: Where a proposal moves bids: the zones it takes, and the price it moves them to.
TARGETS: dict[str, tuple[tuple[str, ...], str]] = {
    "minimum": ((BELOW,), "minimum"),
    "recommended": ((BELOW, BETWEEN), "recommended"),
    "cap": ((OVERPAYING,), "recommended"),
}
_ = (ABOVE, AT)  # the zones no proposal moves


def check_target(to: str) -> tuple[tuple[str, ...], str]:
    try:
        return TARGETS[to]
    except KeyError:
        raise ValueError(f"to must be one of {', '.join(TARGETS)}, got {to!r}") from None


def new_bid(price: float, to: str) -> float:
    """The price rounded up to 4 decimals (the bid a proposal writes)."""
    check_target(to)
    return math.ceil(round(price * 10_000, 6)) / 10_000


def chosen(frame: pd.DataFrame, to: str) -> pd.DataFrame:
    """The rows a proposal moves, with their ``new_bid`` (bids already there left out)."""
    zones, price = check_target(to)
    ok = frame["comparable"] & frame["error"].isna() & frame["zone"].isin(zones)
    rows = frame[ok.fillna(False).astype(bool)].copy()
    rows["new_bid"] = [new_bid(p, to) for p in rows[price]]
    return rows[~np.isclose(rows["new_bid"], rows["bid"], rtol=0, atol=1e-12)]


def _spend(traffic: Any, bid: Any, mode: Any, ctr: Any) -> float:
    rate = None if pd.isna(ctr) else float(ctr)
    return spend_per_day(float(traffic), float(bid), str(mode), rate)


def proposals(
    frame: pd.DataFrame, to: str, limits: pd.Series, balance: float | None
) -> pd.DataFrame:
    """One row per moved bid: campaign, country, old and new bid, traffic and spend a day
    now and at the new bid, the campaign's spend against its daily limit, the balance."""
    rows = chosen(frame, to)
    rows["traffic_new"] = traffic_of(rows, rows["new_bid"].to_numpy(float))
    rows["spend_new"] = [
        _spend(t, b, m, c)
        for t, b, m, c in zip(
            rows["traffic_new"], rows["new_bid"], rows["mode"], rows["ctr"], strict=True
        )
    ]
    totals, unknown = _campaign_spend(frame, rows)
    balance_spend, balance_unknown = _live_spend(frame, rows)
    out = pd.DataFrame(
        {
            "campaign_id": rows["campaign_id"],
            "name": rows["name"],
            "ad_format": rows["ad_format"],
            "mode": rows["mode"],
            geo(): rows[geo()],
            "zone": rows["zone"],
            "old_bid": rows["bid"],
            "new_bid": rows["new_bid"].astype(FLOAT),
            "change_pct": (rows["new_bid"] / rows["bid"] - 1.0) * 100.0,
            "minimum": rows["minimum"],
            "recommended": rows["recommended"],
            "traffic_now": rows["traffic_estimate"],
            "traffic_new": rows["traffic_new"].astype(FLOAT),
            "spend_now": rows["spend_estimate"],
            "spend_new": rows["spend_new"].astype(FLOAT),
        }
    )
    out["spend_change"] = out["spend_new"] - out["spend_now"]
    out = _budget(out, totals, unknown, limits)
    out["balance"] = math.nan if balance is None else float(balance)
    days = out["balance"] / balance_spend if balance_spend > 0 else math.nan
    out["balance_days"] = days
    out["spend_unknown_bids"] = pd.array([balance_unknown] * len(out), dtype=INT)
    return out.astype({"campaign_id": INT, "name": STRING, geo(): STRING})


def _spend_at_new_bids(frame: pd.DataFrame, moved: pd.DataFrame) -> pd.Series:
    spend = frame["spend_estimate"].astype("float64").copy()
    spend.loc[moved.index] = moved["spend_new"].astype("float64")
    return spend


def _campaign_spend(frame: pd.DataFrame, moved: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """USD a day per campaign with the moved rows at their new bids (over the rows with an
    estimate), and per campaign the rows without one."""
    spend = _spend_at_new_bids(frame, moved)
    by = spend.groupby(frame["campaign_id"])
    return by.sum(min_count=1), spend.isna().groupby(frame["campaign_id"]).sum()


def _live_spend(frame: pd.DataFrame, moved: pd.DataFrame) -> tuple[float, int]:
    """The live campaigns' USD a day at the proposal's bids (rows with an estimate), and
    how many of their rows have none."""
    spend = _spend_at_new_bids(frame, moved)[is_live(frame).to_numpy()]
    return float(spend.sum(min_count=0)), int(spend.isna().sum())


def _budget(
    out: pd.DataFrame, totals: pd.Series, unknown: pd.Series, limits: pd.Series
) -> pd.DataFrame:
    """``limits``: the campaigns' daily spending limits (``limit_day_sum``) by id."""
    out["campaign_spend_new"] = out["campaign_id"].map(totals).astype(FLOAT)
    out["campaign_spend_unknown"] = out["campaign_id"].map(unknown).fillna(0).astype(INT)
    out["limit_day_sum"] = out["campaign_id"].map(limits).astype(FLOAT)
    over = out["campaign_spend_new"] > out["limit_day_sum"]
    certain = over | (out["campaign_spend_unknown"] == 0).to_numpy(dtype=bool)
    known = out["limit_day_sum"].notna() & certain
    out["over_day_limit"] = pd.array(over.where(known, None).tolist(), dtype="boolean")
    return out.reset_index(drop=True)


def minimum_prices(frame: pd.DataFrame) -> dict[tuple[int, str], float]:
    """The service's minimum price per ``(campaign id, country)`` in the bid's unit: the
    report's comparable rows whose price was asked (what the planner's ``bid_jump`` guard
    checks new bids against)."""
    ok = frame["comparable"].astype(bool) & frame["error"].isna() & frame["minimum"].notna()
    rows = frame[ok.to_numpy(dtype=bool)]
    return {
        (int(c), str(g)): float(m)
        for c, g, m in zip(rows["campaign_id"], rows[geo()], rows["minimum"], strict=True)
    }


def desired_countries(countries: pd.DataFrame, moved: pd.DataFrame) -> pd.DataFrame:
    """The countries table with the moved bids written in."""
    out = countries.copy()
    key = list(zip(out["campaign_id"].astype(int), out[geo()].astype(str), strict=True))
    bids = {
        (int(c), str(g)): float(b)
        for c, g, b in zip(moved["campaign_id"], moved[geo()], moved["new_bid"], strict=True)
    }
    out["bid"] = [bids.get(k, b) for k, b in zip(key, out["bid"], strict=True)]
    return out


def action_rows(moved: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of a country-bids action workbook that set the moved bids."""
    return [
        {
            "action": "set",
            "target": spec.bid_kind().name,
            "campaign": int(c),
            "item": str(g),
            "bid": float(b),
        }
        for c, g, b in zip(moved["campaign_id"], moved[geo()], moved["new_bid"], strict=True)
    ]


__all__ = [
    "TARGETS",
    "action_rows",
    "chosen",
    "desired_countries",
    "minimum_prices",
    "new_bid",
    "proposals",
]
