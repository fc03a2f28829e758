"""Profit of a bid report's rows: tracker statistics joined to each campaign x country.

``bid_report(client, stats=..., payouts=...)`` sums the statistics' ``country`` rows of each
campaign (``key`` = the country code) over their window and joins them to the report's row
of that campaign and country. With ``n`` clicks, ``I`` impressions, ``c`` conversions and
``R`` revenue of the row, and ``P`` its payout (USD a conversion):

- **payout** ``P``: the payouts table's row of the campaign and country, else its row of the
  campaign with a blank country, else the campaign's revenue over its conversions (all its
  country rows); NaN when none is known (a campaign without conversions and no table);
- **value per unit** (observed): per-click rows (``mode`` CPC) earn ``R / n`` a click (EPC),
  per-1,000 rows (CPM) ``R / I x 1000`` per 1,000 impressions; it is the **break-even bid**
  (``break_even_bid``): a bid above it lost money over the window;
- **posterior conversion rate** ``posterior_cr = (a + c) / (a + b + n)``, with the rules'
  Beta(a, b) prior fitted among the campaign's other countries, leave-one-out
  (:func:`toolkit.rules.evidence.leave_one_out_priors`, as ``evidence_frame`` does);
- **value of the rate** ``u``: a conversion rate ``x`` is worth ``x * u`` per unit of the
  bid, ``u = P`` per click, ``u = P * n / I * 1000`` per 1,000 impressions (the observed
  clicks per impression taken as known);
- **max profitable bid** ``posterior_cr * u`` (the posterior value per unit) and its lower
  credible bound ``max_profitable_bid_low = q05 * u``, ``q05`` the posterior's 5 % quantile
  ``betaincinv(a + c, b + n - c, 0.05)``;
- **expected profit a day** at a bid ``x``: the units bought a day times what each earns
  over what it costs, ``T(x) * k * (max_profitable_bid - x)``: ``T`` the report's traffic
  curve (impressions a day, :func:`toolkit.reports.zones.traffic_at`), ``k`` the clicks per
  impression for a per-click row (the report's ``ctr`` when it has one, else the statistics'
  ``n / I``) and ``1 / 1000`` for a per-1,000 row. ``profit_day_now``, ``_minimum``,
  ``_recommended`` and ``_proposed`` are it at the current bid, the two prices and the bid
  of ``propose("profit")`` (0 for a country that proposal drops or pauses: it buys nothing);
- **profit_zone**: with ``p = P(value per unit < bid) = I_{bid/u}(a + c, b + n - c)``,
  ``unprofitable`` when ``p >= 0.9``; when ``1 - p >= 0.9``, ``room to grow`` if the bid is
  below the recommended price (zone ``below minimum`` or ``between``), else ``profitable``;
  ``uncertain`` otherwise, or when no payout is known; ``no statistics`` for a row with no
  clicks in the statistics (no impressions, for a per-1,000 row). ``profit_note`` says what is
  missing where a figure is NaN; ``posterior_a`` and ``posterior_b`` are the posterior
  Beta(a + c, b + n - c) the proposal reads its chances from.

A worked example, one per-click row: 2,000 clicks of 100,000 impressions, 30 conversions
and 150 USD revenue (a payout of 5), a prior Beta(2, 198), the minimum 0.04 buying 10,000
impressions a day and the recommended price 0.06 buying 30,000:

>>> epc = 150 / 2000                                   # the break-even bid
>>> cr = float(posterior_cr(2.0, 198.0, 30, 2000))     # (2 + 30) / (200 + 2000)
>>> round(cr, 6), round(cr * 5, 6)                     # posterior, max profitable bid
(0.014545, 0.072727)
>>> round(float(credible_low(2.0, 198.0, 30, 2000)) * 5, 4)
0.0531
>>> from toolkit.reports.zones import traffic_at
>>> clicks = traffic_at(0.05, 0.04, 0.06, 10_000, 30_000) * (2000 / 100_000)
>>> round(clicks, 6), round(clicks * (cr * 5 - 0.05), 2)   # at a bid of 0.05: 400 a day
(400.0, 9.09)
>>> p = float(prob_value_below(0.05, 5.0, 2.0 + 30, 198.0 + 2000 - 30))  # P(value < 0.05)
>>> round(p, 4), zone_of(p, True, 0.05 < 0.06)         # the bid is below the recommended
(0.0258, 'room to grow')
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import betainc, betaincinv

from .. import spec
from ..errors import ValidationError
from ..frames.schemas import FLOAT, STRING
from ..rules.evidence import STATS_COLUMNS, item_totals, leave_one_out_priors
from ..rules.payouts import payout_for, read_payouts
from ..stats.schema import COUNTRY
from .units import CPC, PER_MILLE
from .zones import BELOW, BETWEEN, traffic_of

#: How sure "unprofitable", "profitable" and "room to grow" are.
CONFIDENCE = 0.9
#: The quantile of the posterior the lower bound of the max profitable bid is read at.
LOW_QUANTILE = 0.05
PROFIT_ZONES: tuple[str, ...] = (
    "unprofitable",
    "room to grow",
    "profitable",
    "uncertain",
    "no statistics",
)
UNPROFITABLE, ROOM, PROFITABLE, UNCERTAIN, NO_STATS = PROFIT_ZONES
PROFIT_ZONE_DTYPE = pd.CategoricalDtype(list(PROFIT_ZONES))
#: The columns of the join, in order, at the end of a report's frame.
COLUMNS: dict[str, Any] = {
    "clicks": FLOAT,
    "impressions_stats": FLOAT,
    "conversions": FLOAT,
    "revenue": FLOAT,
    "cost": FLOAT,
    "value_per_unit": FLOAT,
    "posterior_cr": FLOAT,
    "payout": FLOAT,
    "break_even_bid": FLOAT,
    "max_profitable_bid": FLOAT,
    "max_profitable_bid_low": FLOAT,
    "profit_day_now": FLOAT,
    "profit_day_minimum": FLOAT,
    "profit_day_recommended": FLOAT,
    "profit_day_proposed": FLOAT,
    "profit_zone": PROFIT_ZONE_DTYPE,
    "profit_note": STRING,
    "posterior_a": FLOAT,
    "posterior_b": FLOAT,
}
#: The summed columns of the statistics, as the report names them.
SUMS = {
    "clicks": "clicks",
    "impressions": "impressions_stats",
    "conversions": "conversions",
    "revenue": "revenue",
    "cost": "cost",
}
NO_PAYOUT = "no payout known: give payouts= (campaign_id, country, payout)"
NO_CTR = "no ctr: give ctr= or statistics with impressions"


# --------------------------------------------------------------------------- the formulas


def posterior_cr(a: Any, b: Any, conversions: Any, clicks: Any) -> Any:
    """The posterior mean conversion rate ``(a + c) / (a + b + n)``."""
    return (np.asarray(a, float) + conversions) / (np.asarray(a, float) + b + clicks)


def credible_low(a: Any, b: Any, conversions: Any, clicks: Any, q: float = LOW_QUANTILE) -> Any:
    """The posterior's ``q`` quantile of the conversion rate."""
    a1 = np.asarray(a, float) + np.asarray(conversions, float)
    b1 = np.asarray(b, float) + np.asarray(clicks, float) - np.asarray(conversions, float)
    return betaincinv(a1, b1, q)


def prob_value_below(bid: Any, unit_value: Any, post_a: Any, post_b: Any) -> Any:
    """``P(value per unit < bid)``: the posterior Beta(``post_a``, ``post_b``)'s ``P(rate <
    bid / u)``; NaN without ``u``."""
    u = np.asarray(unit_value, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(np.asarray(bid, float) / u, 0.0, 1.0)
        out = betainc(np.asarray(post_a, float), np.asarray(post_b, float), t)
    return np.where(np.isfinite(u) & (u > 0), out, np.nan)


def unit_value(payout: Any, per_click: Any, clicks: Any, impressions: Any) -> np.ndarray:
    """``u``: what a conversion rate of 1 is worth per unit of the bid (``P`` per click,
    ``P * clicks / impressions * 1000`` per 1,000 impressions)."""
    pay = np.asarray(payout, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_mille = np.where(
            np.asarray(impressions, float) > 0,
            pay * np.asarray(clicks, float) / np.asarray(impressions, float) * PER_MILLE,
            np.nan,
        )
    return np.where(np.asarray(per_click, bool), pay, per_mille)


def observed_value(per_click: Any, revenue: Any, clicks: Any, impressions: Any) -> np.ndarray:
    """EPC (``R / n``) per click, revenue per 1,000 impressions (``R / I * 1000``)."""
    r = np.asarray(revenue, float)
    n, i = np.asarray(clicks, float), np.asarray(impressions, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        epc = np.where(n > 0, r / n, np.nan)
        rpm = np.where(i > 0, r / i * PER_MILLE, np.nan)
    return np.where(np.asarray(per_click, bool), epc, rpm)


def units_per_impression(frame: pd.DataFrame) -> np.ndarray:
    """``k`` of each row of a report frame with the join's columns: the report's ``ctr``
    (else the statistics' clicks per impression) per click, ``1 / 1000`` per 1,000."""
    n, i = frame["clicks"].to_numpy(float), frame["impressions_stats"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        seen = np.where(i > 0, n / i, np.nan)
    ctr = frame["ctr"].to_numpy(float)
    per_click = (frame["mode"].astype(str) == CPC).to_numpy()
    return np.where(per_click, np.where(np.isnan(ctr), seen, ctr), 1.0 / PER_MILLE)


def unit_value_of(frame: pd.DataFrame) -> np.ndarray:
    """``u`` of each row of a report frame with the join's columns."""
    per_click = (frame["mode"].astype(str) == CPC).to_numpy()
    return unit_value(frame["payout"], per_click, frame["clicks"], frame["impressions_stats"])


def expected_profit(frame: pd.DataFrame, bid: Any) -> np.ndarray:
    """USD a day at ``bid`` (one per row of a report frame with the join's columns):
    ``traffic_at(bid) * k * (max_profitable_bid - bid)``. NaN where a number is missing."""
    bids = np.broadcast_to(np.asarray(bid, float), len(frame))
    value = frame["max_profitable_bid"].to_numpy(float)
    return traffic_of(frame, bids) * units_per_impression(frame) * (value - bids)


# --------------------------------------------------------------------------- reading


def read_statistics(stats: Any) -> pd.DataFrame:
    """A stats frame (:func:`toolkit.read_stats`, taken as it is), an export's header as a
    DataFrame, or the path of an export (read with :func:`toolkit.read_stats`)."""
    from ..stats import read_stats

    if isinstance(stats, pd.DataFrame):
        if all(col in stats.columns for col in STATS_COLUMNS):
            return stats
        return read_stats(stats)
    if isinstance(stats, (str, os.PathLike)):
        return read_stats(stats)
    raise ValidationError(
        f"stats: a stats frame (toolkit.read_stats) or an export's path, not {type(stats).__name__}"
    )


# --------------------------------------------------------------------------- the join


def level_items(stats: pd.DataFrame, level: str, payouts: pd.DataFrame | None) -> pd.DataFrame:
    """The items of one level of a stats frame, summed over its rows, with the prior
    (``prior_a``, ``prior_b``) fitted among the campaign's other items of that level and
    their ``payout`` (:func:`toolkit.rules.payouts.payout_for`: the payouts table, else the
    campaign's revenue per conversion over its items of that level)."""
    rows = stats[stats["level"].astype(str) == level]
    items = item_totals(rows)
    if "impressions" not in items:
        items["impressions"] = 0.0
    a, b, _ = leave_one_out_priors(items)
    items["prior_a"], items["prior_b"] = a, b
    items["key"] = items["key"].astype(str)
    if level == COUNTRY:
        items["key"] = items["key"].str.upper()
    items["payout"] = payout_for(items, payouts, None)
    return items


def joined(rows: pd.DataFrame, items: pd.DataFrame, key: str) -> pd.DataFrame:
    """``rows`` (``campaign_id`` and ``key``) with their items' sums, prior and payout."""
    keys = rows[key].astype(str)
    left = pd.DataFrame(
        {
            "campaign_id": rows["campaign_id"].astype("int64").to_numpy(),
            "key": (keys.str.upper() if key == COUNTRY else keys).to_numpy(),
        }
    )
    right = items.drop(columns=["level"]).assign(campaign_id=items["campaign_id"].astype("int64"))
    merged = left.merge(right, on=["campaign_id", "key"], how="left")
    merged.index = rows.index
    return merged


def figures(merged: pd.DataFrame, per_click: np.ndarray) -> pd.DataFrame:
    """The join's columns (:data:`COLUMNS` but the profits and the zone) of items joined to
    rows: their sums, payout and the value figures of the module's formulas."""
    out = pd.DataFrame({col: merged[name].to_numpy(float) for name, col in SUMS.items()})
    n, i, c = out["clicks"].to_numpy(float), out["impressions_stats"], out["conversions"]
    a, b = merged["prior_a"].to_numpy(float), merged["prior_b"].to_numpy(float)
    has = n > 0
    u = unit_value(merged["payout"], per_click, n, i)
    out["value_per_unit"] = observed_value(per_click, out["revenue"], n, i)
    out["posterior_cr"] = np.where(has, posterior_cr(a, b, c, n), np.nan)
    out["payout"] = merged["payout"].to_numpy(float)
    out["break_even_bid"] = out["value_per_unit"]
    out["max_profitable_bid"] = out["posterior_cr"] * u
    out["posterior_a"] = np.where(has, a + c, np.nan)
    out["posterior_b"] = np.where(has, b + n - c, np.nan)
    with np.errstate(invalid="ignore"):
        low = betaincinv(out["posterior_a"].to_numpy(float), out["posterior_b"], LOW_QUANTILE)
    out["max_profitable_bid_low"] = low * u
    out.index = merged.index
    return out


def zone_of(p_below: float, has_stats: bool, cheap: bool) -> str:
    """The profit zone of one row from ``P(value per unit < bid)``; ``cheap``: the bid is
    below the recommended price."""
    if not has_stats:
        return NO_STATS
    if math.isnan(p_below):
        return UNCERTAIN
    if p_below >= CONFIDENCE:
        return UNPROFITABLE
    if 1.0 - p_below >= CONFIDENCE:
        return ROOM if cheap else PROFITABLE
    return UNCERTAIN


def note_of(has_stats: bool, payout: float, k: float, comparable: bool) -> str | None:
    """What keeps a row's figures NaN, or None."""
    if not has_stats:
        return "no statistics of this campaign and country"
    if math.isnan(payout):
        return NO_PAYOUT
    if not comparable:
        return "not comparable: no traffic estimate in the bid's unit (give ctr=)"
    if math.isnan(k):
        return NO_CTR
    return None


def has_statistics(frame: pd.DataFrame) -> np.ndarray:
    """Rows with clicks in the statistics (and impressions, for a per-1,000 row)."""
    n = frame["clicks"].fillna(0).to_numpy(float)
    i = frame["impressions_stats"].fillna(0).to_numpy(float)
    per_click = (frame["mode"].astype(str) == CPC).to_numpy()
    return (n > 0) & (per_click | (i > 0))


def profit_columns(frame: pd.DataFrame, stats: Any, payouts: Any = None) -> pd.DataFrame:
    """The columns :data:`COLUMNS` of a report's frame (``profit_day_proposed`` NaN:
    ``propose("profit")``'s bids fill it)."""
    stats = read_statistics(stats)
    if not (stats["level"].astype(str) == COUNTRY).any():
        raise ValidationError(
            f"stats: no {COUNTRY} rows (level {COUNTRY!r}); the report joins statistics per "
            f"campaign x {COUNTRY}"
        )
    table = None if payouts is None else read_payouts(payouts)
    merged = joined(frame, level_items(stats, COUNTRY, table), spec.bid_kind().column)
    out = figures(merged, (frame["mode"].astype(str) == CPC).to_numpy())
    both = pd.concat([frame.drop(columns=[c for c in out if c in frame]), out], axis=1)
    for name, at in (("now", "bid"), ("minimum", "minimum"), ("recommended", "recommended")):
        out[f"profit_day_{name}"] = expected_profit(both, frame[at])
    out["profit_day_proposed"] = math.nan
    has = has_statistics(both)
    p = prob_value_below(frame["bid"], unit_value_of(both), out["posterior_a"], out["posterior_b"])
    cheap = frame["zone"].isin([BELOW, BETWEEN]).fillna(False).to_numpy(bool)
    zones = [zone_of(float(x), bool(h), bool(ch)) for x, h, ch in zip(p, has, cheap, strict=True)]
    out["profit_zone"] = pd.Series(zones, index=out.index, dtype=object).astype(PROFIT_ZONE_DTYPE)
    k = units_per_impression(both)
    notes = [
        note_of(bool(h), float(pay), float(kk), bool(ok))
        for h, pay, kk, ok in zip(has, out["payout"], k, frame["comparable"], strict=True)
    ]
    out["profit_note"] = pd.array(notes, dtype=STRING)
    return out[list(COLUMNS)]


def zone_line(frame: pd.DataFrame) -> str:
    """One line of the profit zones' counts and the expected profit a day at the current
    bids (over the rows where it is known).

    >>> zone = pd.Categorical(["uncertain", "uncertain"], list(PROFIT_ZONES))
    >>> zone_line(pd.DataFrame({"profit_zone": zone, "profit_day_now": [1.5, np.nan]}))[-63:]
    '0; 1.50 USD a day expected at the current bids (1 rows unknown)'
    """
    counts = frame["profit_zone"].value_counts().reindex(list(PROFIT_ZONES), fill_value=0)
    shown = ", ".join(f"{z} {n}" for z, n in counts.items())
    day = frame["profit_day_now"]
    return (
        f"Profit: {shown}; {day.sum(min_count=0):.2f} USD a day expected at the current bids "
        f"({int(day.isna().sum())} rows unknown)"
    )


__all__ = [
    "COLUMNS",
    "CONFIDENCE",
    "LOW_QUANTILE",
    "PROFIT_ZONES",
    "PROFIT_ZONE_DTYPE",
    "credible_low",
    "expected_profit",
    "figures",
    "has_statistics",
    "level_items",
    "joined",
    "observed_value",
    "posterior_cr",
    "prob_value_below",
    "note_of",
    "profit_columns",
    "read_payouts",
    "read_statistics",
    "unit_value",
    "unit_value_of",
    "units_per_impression",
    "zone_line",
    "zone_of",
]
