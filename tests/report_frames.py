"""Synthetic report parts for the tests of the report faces (plots, files, the notebook view):
a frame with the columns and dtypes of ``BidReport.frame`` holding rows of every zone,
incomparable rows, error rows and rows without prices; proposals; a price history."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from toolkit import spec
from toolkit.reports.style import ZONES

C = spec.bid_kind().column
ASKED = pd.Timestamp("2026-11-20 09:00", tz="UTC")

#: campaign_id -> (name, ad_format, mode, status, work_status, price unit of its format)
CAMPAIGNS = {
    101: ("Push <b>tier</b> & friends", "push", "CPC", "Approved", "Working", "CPC"),
    102: ("=SUM(A1) pops", "pops", "CPC", "Approved", "Paused", "CPM"),
    103: ("Video <script>alert(1)</script> $5 $", "video", "CPM", "Approved", "Working", "CPM"),
    104: ("In-page ünïcode", "inpage", "CPC", "New", "Working", "CPC"),
}

#: (campaign_id, code, bid, minimum, recommended, zone, comparable, error)
ROWS = [
    (101, "US", 0.05, 0.08, 0.12, "below minimum", True, None),
    (101, "DE", 0.07, 0.06, 0.09, "between", True, None),
    (101, "FR", 0.09, 0.06, 0.09, "at recommended", True, None),
    (101, "GB", 0.12, 0.07, 0.10, "above recommended", True, None),
    (101, "CA", 0.25, 0.07, 0.10, "overpaying", True, None),
    (101, "BR", 0.03, np.nan, np.nan, None, True, "HTTP 502 from the price query"),
    (101, "IN", 0.01, np.nan, np.nan, None, True, None),
    (102, "US", 0.02, 2.4, 3.5, None, False, None),
    (102, "DE", 0.015, 2.1, 3.0, None, False, None),
    (103, "US", 6.0, 5.0, 7.5, "between", True, None),
    (103, "MX", 0.5, 1.1, 1.6, "below minimum", True, None),
    (103, "JP", 15.0, 5.5, 8.0, "overpaying", True, None),
    (104, "DE", 0.2, 0.14, 0.2, "at recommended", True, None),
    (104, "PL", 0.1, 0.08, 0.12, "between", True, None),
]


def _traffic(bid: float, lo: float, hi: float, t_lo: float, t_hi: float) -> float:
    if np.isnan(lo) or np.isnan(hi) or bid < lo:
        return 0.0 if not np.isnan(lo) else np.nan
    frac = min(1.0, (bid - lo) / (hi - lo))
    return t_lo + frac * (t_hi - t_lo)


def synthetic_frame(rows: list[tuple] | None = None) -> pd.DataFrame:
    """A report frame with exactly the contract's columns and dtypes."""
    rows = ROWS if rows is None else rows
    cid = [r[0] for r in rows]
    bid = np.array([r[2] for r in rows], float)
    lo = np.array([r[3] for r in rows], float)
    hi = np.array([r[4] for r in rows], float)
    t_lo = np.where(np.isnan(lo), np.nan, np.round(lo * 1e5))
    t_hi = np.where(np.isnan(hi), np.nan, np.round(hi * 3e5))
    camp = [CAMPAIGNS[c] for c in cid]
    return pd.DataFrame(
        {
            "campaign_id": pd.array(cid, dtype="Int64"),
            "name": pd.array([c[0] for c in camp], dtype="string"),
            "ad_format": pd.Categorical([c[1] for c in camp]),
            "mode": pd.Categorical([c[2] for c in camp], categories=list(spec.MODES)),
            "status": pd.Categorical([c[3] for c in camp]),
            "work_status": pd.Categorical([c[4] for c in camp]),
            C: pd.array([r[1] for r in rows], dtype="string"),
            "bid": bid,
            "price_unit": pd.array([c[5] for c in camp], dtype="string"),
            "comparable": np.array([r[6] for r in rows], bool),
            "minimum": lo,
            "recommended": hi,
            "minimum_traffic": pd.array(t_lo, dtype="Int64"),
            "recommended_traffic": pd.array(t_hi, dtype="Int64"),
            "position": (bid - lo) / (hi - lo),
            "zone": pd.Categorical([r[5] for r in rows], categories=list(ZONES)),
            "gap_minimum": bid - lo,
            "gap_minimum_pct": (bid - lo) / lo * 100,
            "gap_recommended": bid - hi,
            "gap_recommended_pct": (bid - hi) / hi * 100,
            "traffic_estimate": [
                _traffic(b, a, z, x, y)
                for b, a, z, x, y in zip(bid, lo, hi, t_lo, t_hi, strict=True)
            ],
            "asked_at": pd.Series([ASKED] * len(rows), dtype="datetime64[ns, UTC]"),
            "error": pd.array([r[7] for r in rows], dtype="string"),
        }
    )


def synthetic_proposals(frame: pd.DataFrame, to: str) -> pd.DataFrame:
    """A proposal: comparable rows moved to the minimum, the recommended price, or capped."""
    ok = frame[frame["comparable"] & frame["zone"].notna()]
    if to == "minimum":
        ok = ok[ok["zone"] == "below minimum"].assign(new_bid=lambda d: d["minimum"])
    elif to == "recommended":
        ok = ok[ok["zone"] != "at recommended"].assign(new_bid=lambda d: d["recommended"])
    else:
        ok = ok[ok["zone"] == "overpaying"].assign(new_bid=lambda d: d["recommended"])
    out = ok[["campaign_id", "name", C, "bid", "new_bid"]].reset_index(drop=True)
    out["spend_old"] = out["bid"] * 1000.0
    out["spend_new"] = out["new_bid"] * 1000.0
    out["daily_limit"] = 150.0
    out["balance"] = 4633.1
    return out


def synthetic_history(days: int = 5) -> pd.DataFrame:
    """Price history: two formats, three codes, two queries for push, one ask a day."""
    recs = []
    for day in range(days):
        at = ASKED - pd.Timedelta(days=days - 1 - day)
        for fmt, base, queries in (
            ("push", 0.06, ("all", "quality=high")),
            ("pops", 2.0, ("all",)),
        ):
            for i, code in enumerate(("US", "DE", "FR")):
                for q, query in enumerate(queries):
                    lo = base * (1 + 0.2 * i + 0.03 * day + 0.1 * q)
                    recs.append((at, fmt, code, query, lo, lo * 1.4, 10_000 * (3 - i), 25_000))
    cols = ["asked_at", "ad_format", C, "query", "minimum", "recommended"]
    cols += ["minimum_traffic", "recommended_traffic"]
    df = pd.DataFrame(recs, columns=cols)
    df["asked_at"] = df["asked_at"].astype("datetime64[ns, UTC]")
    df["ad_format"] = pd.Categorical(df["ad_format"])
    df[C] = df[C].astype("string")
    df["query"] = df["query"].astype("string")
    for col in ("minimum_traffic", "recommended_traffic"):
        df[col] = df[col].astype("Int64")
    return df


@dataclass
class FakeReport:
    """Quacks like a BidReport: ``frame``, ``proposals(to)``, ``history``."""

    frame: pd.DataFrame = field(default_factory=synthetic_frame)
    history: pd.DataFrame | None = field(default_factory=synthetic_history)

    def proposals(self, to: str = "recommended") -> pd.DataFrame:
        return synthetic_proposals(self.frame, to)
