"""The frame of a bid report: one row per campaign x country, its columns and dtypes.

:data:`COLUMNS` is the contract the plots and files are written against; columns may be
added at the end, never renamed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import spec
from ..frames import Account
from ..frames.schemas import (
    AD_FORMAT,
    CAMPAIGN_MODE,
    CAMPAIGN_STATUS,
    FLOAT,
    INT,
    STRING,
    TIME,
    WORK_STATUS,
)
from .profit import COLUMNS as PROFIT_COLUMNS
from .queries import Answer
from .units import Ctr, convert, ctr_for, price_unit, spend_per_day
from .zones import ZONE_DTYPE, zones

#: The campaign columns a report row carries.
CAMPAIGN_COLUMNS: tuple[str, ...] = ("name", "ad_format", "mode", "status", "work_status")


def geo() -> str:
    """The column of the bid kind's items (``country``), read from spec.py."""
    return spec.bid_kind().column


def dtypes() -> dict[str, object]:
    """Column -> dtype of a report's frame, in order."""
    return {
        "campaign_id": INT,
        "name": STRING,
        "ad_format": AD_FORMAT,
        "mode": CAMPAIGN_MODE,
        "status": CAMPAIGN_STATUS,
        "work_status": WORK_STATUS,
        geo(): STRING,
        "bid": FLOAT,
        "price_unit": STRING,
        "comparable": np.dtype(bool),
        "minimum": FLOAT,
        "recommended": FLOAT,
        "minimum_traffic": INT,
        "recommended_traffic": INT,
        "position": FLOAT,
        "zone": ZONE_DTYPE,
        "gap_minimum": FLOAT,
        "gap_minimum_pct": FLOAT,
        "gap_recommended": FLOAT,
        "gap_recommended_pct": FLOAT,
        "traffic_estimate": FLOAT,
        "asked_at": TIME,
        "error": STRING,
        # added after the contract's columns
        "ctr": FLOAT,
        "spend_estimate": FLOAT,
        "query": STRING,
        # the tracker statistics' join (NaN / NA without statistics): reports.profit
        **PROFIT_COLUMNS,
    }


def contract_columns() -> tuple[str, ...]:
    """The columns the plots and files are written against, in order (those after ``error``
    were added later)."""
    names = list(dtypes())
    return tuple(names[: names.index("error") + 1])


def rows_of(account: Account, campaign_ids: Sequence[int] | None) -> pd.DataFrame:
    """The account's campaign x country rows with their campaign's columns."""
    rows = account.join("countries", list(CAMPAIGN_COLUMNS))
    if campaign_ids is not None:
        rows = rows[rows["campaign_id"].isin([int(c) for c in campaign_ids])]
    return rows.reset_index(drop=True)


def _priced(
    rows: pd.DataFrame, keys: Sequence[str], answers: Mapping[str, Answer], ctr: Ctr
) -> pd.DataFrame:
    """The price columns of each row: prices in the bid's unit when comparable (converted
    with the format's ctr when the units differ), in the price unit otherwise."""
    out: dict[str, list[object]] = {
        k: []
        for k in (
            "price_unit",
            "comparable",
            "minimum",
            "recommended",
            "minimum_traffic",
            "recommended_traffic",
            "asked_at",
            "error",
            "ctr",
        )
    }
    for fmt, mode, key in zip(
        rows["ad_format"].astype(str), rows["mode"].astype(object), keys, strict=True
    ):
        answer = answers.get(key) or Answer(error="not asked")
        unit, rate = price_unit(fmt), ctr_for(ctr, fmt)
        bid_unit = None if pd.isna(mode) else str(mode)
        comparable = bid_unit == unit or (bid_unit is not None and rate is not None)
        target = bid_unit if comparable else unit
        out["price_unit"].append(unit)
        out["comparable"].append(bool(comparable))
        out["minimum"].append(_in(answer.minimum, unit, target, rate))
        out["recommended"].append(_in(answer.recommended, unit, target, rate))
        out["minimum_traffic"].append(answer.minimum_traffic)
        out["recommended_traffic"].append(answer.recommended_traffic)
        out["asked_at"].append(answer.asked_at)
        out["error"].append(answer.error)
        out["ctr"].append(math.nan if rate is None else rate)
    return pd.DataFrame(out, index=rows.index)


def _in(price: float | None, unit: str, target: str | None, rate: float | None) -> float:
    if price is None or target is None:
        return math.nan
    return convert(float(price), unit, target, rate)


def build(
    rows: pd.DataFrame,
    keys: Sequence[str],
    answers: Mapping[str, Answer],
    *,
    ctr: Ctr,
    overpay: float,
    tolerance: float,
) -> pd.DataFrame:
    """The report's frame from its rows, each row's query key and the answers."""
    priced = _priced(rows, keys, answers, ctr)
    df = pd.concat([rows[["campaign_id", *CAMPAIGN_COLUMNS, geo(), "bid"]], priced], axis=1)
    df["minimum_traffic"] = pd.array(df["minimum_traffic"].tolist(), dtype=INT)
    df["recommended_traffic"] = pd.array(df["recommended_traffic"].tolist(), dtype=INT)
    zoned = zones(df, overpay, tolerance, df["comparable"])
    df = pd.concat([df, zoned], axis=1)
    df["query"] = list(keys)
    df["spend_estimate"] = [
        spend_per_day(t, b, str(m), None if math.isnan(c) else c) if ok or t == 0 else math.nan
        for t, b, m, c, ok in zip(
            df["traffic_estimate"], df["bid"], df["mode"], df["ctr"], df["comparable"], strict=True
        )
    ]
    return conform(df)


def conform(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the report's columns, in order, each of its declared dtype."""
    types = dtypes()
    out = pd.DataFrame(index=pd.RangeIndex(len(df)))
    for name, dtype in types.items():
        values = df[name].reset_index(drop=True) if name in df else pd.Series([None] * len(df))
        if dtype is TIME:
            out[name] = pd.to_datetime(values, utc=True).astype(TIME)
        elif isinstance(dtype, pd.CategoricalDtype):
            out[name] = values.astype(object).astype(dtype)
        else:
            out[name] = values.astype(dtype)
    return out


def empty() -> pd.DataFrame:
    """A report frame with no rows."""
    return conform(pd.DataFrame({name: [] for name in dtypes()}))


__all__ = [
    "CAMPAIGN_COLUMNS",
    "build",
    "contract_columns",
    "conform",
    "dtypes",
    "empty",
    "geo",
    "rows_of",
]
