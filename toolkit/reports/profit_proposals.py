"""The profit proposal of a bid report: per row the bid that earns the most a day.

``report.proposals("profit")`` / ``report.propose("profit")``, for the rows a report joined
to statistics (``toolkit.reports.profit``), comparable, priced, with traffic and a known
value (rows without them are left as they are):

1. **drop** the country when it cannot be profitable at the minimum price: ``P(value per
   unit < minimum) >= 0.9`` under the row's posterior (``CONFIDENCE``). When that would drop
   every country of a campaign (it has one country, or all of them lose), the campaign is
   **paused** instead and its countries kept; a campaign already paused is left alone;
2. else the **bid** ``x`` that maximises the expected profit a day ``T(x) * k *
   (max_profitable_bid - x)`` on a grid of ``GRID`` bids from the minimum to ``max(overpay *
   recommended, bid)``, the grid capped at ``max_profitable_bid_low`` (the lower credible
   bound) and the service's bounds: never below the minimum (no maximum bid is known);
   when the lower bound is below the minimum, the minimum. The bid is rounded down to 4
   decimals (never below the minimum rounded up). A bid already there is not moved.

``profit_day_proposed`` of the report is the expected profit at that bid (0 for a country
dropped or a campaign paused: it buys nothing; the current bid's for a row left as it is).

>>> floor_bid(0.123456), ceil_bid(0.12341)
(0.1234, 0.1235)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .. import spec
from ..errors import ValidationError
from ..frames.schemas import FLOAT, INT, STRING
from .frame import geo
from .profit import (
    CONFIDENCE,
    NO_STATS,
    expected_profit,
    prob_value_below,
    profit_columns,
    read_payouts,
    read_statistics,
    unit_value_of,
    units_per_impression,
)
from .units import CPC
from .zones import DEFAULT_OVERPAY, NO_TRAFFIC, traffic_at, traffic_of

PROFIT = "profit"
#: Bids tried between the minimum and the cap.
GRID = 401
SET, DROP, PAUSE = "set bid", "drop country", "pause campaign"
ACTIONS = (SET, DROP, PAUSE)


def floor_bid(x: float) -> float:
    """``x`` rounded down to the bids' 4 decimals."""
    return math.floor(round(x * 10**spec.BID_DECIMALS, 6)) / 10**spec.BID_DECIMALS


def ceil_bid(x: float) -> float:
    """``x`` rounded up to the bids' 4 decimals."""
    return math.ceil(round(x * 10**spec.BID_DECIMALS, 6)) / 10**spec.BID_DECIMALS


def eligible(frame: pd.DataFrame) -> np.ndarray:
    """Rows the profit proposal may move: comparable, priced, with traffic, statistics, a
    value per unit and clicks per impression."""
    needed = ("minimum", "recommended", "max_profitable_bid", "max_profitable_bid_low")
    ok = frame["comparable"].astype(bool).to_numpy() & frame["error"].isna().to_numpy()
    for name in needed:
        ok &= frame[name].notna().to_numpy()
    ok &= frame["minimum_traffic"].notna().to_numpy() & frame["recommended_traffic"].notna()
    ok &= np.isfinite(units_per_impression(frame))
    ok &= (frame["zone"].astype(object) != NO_TRAFFIC).to_numpy()
    ok &= (frame["profit_zone"].astype(object) != NO_STATS).to_numpy()
    return np.asarray(ok, dtype=bool)


def best_bid(row: Any, overpay: float, k: float) -> tuple[float, str]:
    """The bid of one eligible row (a report frame's row) and why."""
    lo, r, low = float(row.minimum), float(row.recommended), float(row.max_profitable_bid_low)
    hi = min(max(overpay * r, float(row.bid)), low)
    if hi < lo:
        return ceil_bid(lo), (
            f"the minimum: the lower bound of the max profitable bid ({low:.4f}) is below it"
        )
    grid = np.unique(np.concatenate([np.linspace(lo, hi, GRID), [x for x in (r, row.bid)
                                                                  if lo <= x <= hi]]))  # fmt: skip
    lo_t, hi_t = float(row.minimum_traffic), float(row.recommended_traffic)
    units = np.array([traffic_at(x, lo, r, lo_t, hi_t) for x in grid]) * k
    gain = units * (float(row.max_profitable_bid) - grid)
    x = float(grid[int(np.argmax(gain))])
    new = max(floor_bid(x), ceil_bid(lo))
    cap = "the lower bound" if math.isclose(x, low) else "the most expected profit"
    return new, f"{cap}: {float(np.max(gain)):.2f} USD a day at {x:.4f}"


def _losers(frame: pd.DataFrame, ok: np.ndarray) -> np.ndarray:
    p = prob_value_below(
        frame["minimum"], unit_value_of(frame), frame["posterior_a"], frame["posterior_b"]
    )
    return ok & (np.nan_to_num(np.asarray(p, float), nan=0.0) >= CONFIDENCE)


def decide(frame: pd.DataFrame, countries: pd.DataFrame, overpay: float) -> pd.DataFrame:
    """Per row of ``frame`` the proposal moves: ``action`` (``set bid``, ``drop country``,
    ``pause campaign``), ``new_bid`` (NaN unless set) and ``reason``. ``countries``: the
    account's countries table (a campaign's countries, to know when a drop leaves none);
    ``frame`` needs the join's columns (NaN rows are left out)."""
    ok = eligible(frame)
    losers = _losers(frame, ok)
    k = units_per_impression(frame)
    cids = frame["campaign_id"].astype("int64")
    targeted = countries.groupby(countries["campaign_id"].astype("int64")).size()
    lost = pd.Series(losers, index=frame.index).groupby(cids).sum()
    paused = set(cids[frame["work_status"].astype(str) == "Paused"])
    rows = []
    for pos, (i, row) in enumerate(frame.iterrows()):
        cid = int(row.campaign_id)
        if losers[pos]:
            if lost.get(cid, 0) < targeted.get(cid, 0):
                rows.append((i, DROP, math.nan, "cannot pay at the minimum price"))
            elif cid not in paused:
                rows.append((i, PAUSE, math.nan, "no country of the campaign pays at its minimum"))
        elif ok[pos]:
            new, why = best_bid(row, overpay, float(k[pos]))
            if not math.isclose(new, float(row.bid), rel_tol=0, abs_tol=1e-12):
                rows.append((i, SET, new, why))
    out = pd.DataFrame(rows, columns=["index", "action", "new_bid", "reason"])
    return out.set_index("index").rename_axis(None)


def read_inputs(stats: Any, payouts: Any) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The statistics (:func:`~toolkit.reports.profit.read_statistics`) and the payouts table
    (:func:`toolkit.rules.payouts.read_payouts`) read and checked; ``(None, None)`` without
    statistics (payouts without statistics are refused)."""
    if stats is None:
        if payouts is not None:
            raise ValidationError("payouts= goes with stats= (the tracker's statistics)")
        return None, None
    return read_statistics(stats), None if payouts is None else read_payouts(payouts)


def with_profit(
    frame: pd.DataFrame,
    countries: pd.DataFrame,
    stats: Any,
    payouts: Any = None,
    overpay: float = DEFAULT_OVERPAY,
) -> pd.DataFrame:
    """A report's frame with the statistics' columns (:mod:`toolkit.reports.profit`) written
    in, ``profit_day_proposed`` at the bids :func:`decide` proposes (``frame`` as it is
    without statistics)."""
    if stats is None:
        return frame
    out = frame.copy()
    joined = profit_columns(out, stats, payouts)
    for name in joined:
        out[name] = joined[name]
    out["profit_day_proposed"] = proposed_profit(out, decide(out, countries, overpay))
    return out


def moves_of(frame: pd.DataFrame, countries: pd.DataFrame, overpay: float) -> pd.DataFrame:
    """:func:`decide` for a report frame; refused when the report has no statistics."""
    if "profit_zone" not in frame or frame["profit_zone"].isna().all():
        raise ValueError(
            "the profit proposal needs statistics: make the report with "
            "bid_report(..., stats=EXPORT) (--stats FILE on the command line)"
        )
    return decide(frame, countries, overpay)


def proposed_profit(frame: pd.DataFrame, moves: pd.DataFrame) -> np.ndarray:
    """``profit_day_proposed``: at the new bid, 0 where dropped or paused, else now's."""
    out = frame["profit_day_now"].to_numpy(float).copy()
    where = frame.index.get_indexer(moves.index)
    bids = np.where(moves["action"] == SET, moves["new_bid"], 0.0)
    gains = expected_profit(frame.loc[moves.index], bids)
    out[where] = np.where(moves["action"] == SET, gains, 0.0)
    return out


def proposals(frame: pd.DataFrame, moves: pd.DataFrame) -> pd.DataFrame:
    """One row per move: the row's campaign and country, the action, old and new bid, the
    value figures, traffic, spend and expected profit a day now and after, and why. Spend
    counts clicks with the ctr the profit uses (the report's, else the statistics')."""
    rows = frame.loc[moves.index]
    set_ = (moves["action"] == SET).to_numpy()
    new = moves["new_bid"].to_numpy(float)
    k = units_per_impression(rows)
    per_click = (rows["mode"].astype(str) == CPC).to_numpy()
    traffic_new = np.where(set_, traffic_of(rows, np.where(set_, new, 0.0)), 0.0)
    per_unit = np.where(per_click, k, 1 / 1000)  # units bought per impression
    unit_cost = np.where(set_, new, 0.0) * per_unit
    now_cost = rows["bid"].to_numpy(float) * per_unit
    out = pd.DataFrame(
        {
            "campaign_id": rows["campaign_id"],
            "name": rows["name"],
            "ad_format": rows["ad_format"],
            "mode": rows["mode"],
            geo(): rows[geo()],
            "zone": rows["zone"],
            "profit_zone": rows["profit_zone"],
            "action": pd.array(moves["action"].to_numpy(), dtype=STRING),
            "old_bid": rows["bid"],
            "new_bid": new,
            "change_pct": (new / rows["bid"].to_numpy(float) - 1.0) * 100.0,
            "minimum": rows["minimum"],
            "recommended": rows["recommended"],
            "break_even_bid": rows["break_even_bid"],
            "max_profitable_bid": rows["max_profitable_bid"],
            "max_profitable_bid_low": rows["max_profitable_bid_low"],
            "traffic_now": rows["traffic_estimate"],
            "traffic_new": traffic_new,
            "spend_now": rows["traffic_estimate"].to_numpy(float) * now_cost,
            "spend_new": traffic_new * unit_cost,
            "profit_day_now": rows["profit_day_now"],
            "profit_day_new": proposed_profit(frame, moves)[frame.index.get_indexer(moves.index)],
            "reason": pd.array(moves["reason"].to_numpy(), dtype=STRING),
        }
    )
    out["profit_change"] = out["profit_day_new"] - out["profit_day_now"]
    out = out.reset_index(drop=True)
    return out.astype({"campaign_id": INT, "name": STRING, geo(): STRING, "new_bid": FLOAT})


def desired_tables(
    countries: pd.DataFrame, campaigns: pd.DataFrame, frame: pd.DataFrame, moves: pd.DataFrame
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """``(desired, base)`` of the plan: the countries with the new bids and without the
    dropped ones, the campaigns with the paused ones ``Paused``."""
    rows = frame.loc[moves.index]
    keys = [(int(c), str(g)) for c, g in zip(rows["campaign_id"], rows[geo()], strict=True)]
    bids = {k: float(b) for k, a, b in zip(keys, moves["action"], moves["new_bid"], strict=True)
            if a == SET}  # fmt: skip
    dropped = {k for k, a in zip(keys, moves["action"], strict=True) if a == DROP}
    paused = {k[0] for k, a in zip(keys, moves["action"], strict=True) if a == PAUSE}
    pairs = list(zip(countries["campaign_id"].astype(int), countries[geo()].astype(str),
                     strict=True))  # fmt: skip
    desired = countries.copy()
    desired["bid"] = [bids.get(p, b) for p, b in zip(pairs, countries["bid"], strict=True)]
    desired = desired[[p not in dropped for p in pairs]].reset_index(drop=True)
    tables, base = {"countries": desired}, {"countries": countries}
    if paused:
        work = campaigns.copy()
        work.loc[work["id"].astype(int).isin(paused), "work_status"] = "Paused"
        tables["campaigns"], base["campaigns"] = work, campaigns
    return tables, base


def action_rows(frame: pd.DataFrame, moves: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of an action workbook that make the moves (``set`` / ``drop`` a country,
    ``pause`` a campaign once)."""
    rows, seen = [], set()
    picked = frame.loc[moves.index]
    for (_, row), action, bid in zip(
        picked.iterrows(), moves["action"], moves["new_bid"], strict=True
    ):
        cid = int(row.campaign_id)
        if action == PAUSE:
            if cid not in seen:
                rows.append({"action": "pause", "target": "campaign", "campaign": cid})
            seen.add(cid)
            continue
        item = {"target": spec.bid_kind().name, "campaign": cid, "item": str(row[geo()])}
        rows.append({"action": "set", **item, "bid": float(bid)} if action == SET
                    else {"action": "drop", **item})  # fmt: skip
    return rows


__all__ = [
    "ACTIONS",
    "DROP",
    "GRID",
    "PAUSE",
    "PROFIT",
    "SET",
    "action_rows",
    "best_bid",
    "ceil_bid",
    "decide",
    "desired_tables",
    "eligible",
    "floor_bid",
    "moves_of",
    "proposals",
    "proposed_profit",
    "read_inputs",
    "with_profit",
]
