"""What an item's days were in a window, summed in the scan that sums the window
(:func:`toolkit.stats.duck.window_sums` with ``per_day``): the days with clicks, their cost,
and the sum over them of ``cost^2 / clicks``, from which :mod:`toolkit.rules.daily` reads
the spread of the window's cost per click.

An export usually has one row a day per item: the sums are then taken over the rows, and a
check counts, per item, its rows and its days (bits of 64 days) in the windows. An item with
several rows of a day (a row per country, say) makes the scan run again with the rows summed
per day first, which on 10M rows took twice the memory of the sums.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

#: What ``window_sums`` adds per item with ``per_day``: its days with clicks, their cost,
#: and the sum over them of ``cost^2 / clicks``.
DAY_SUMS = ("days", "day_cost", "square")

_ITEM = ["campaign_id", "level", "key"]

Window = tuple[dt.date | None, dt.date | None]


def columns(i: int, where: str) -> list[str]:
    """SQL of window ``i``'s :data:`DAY_SUMS` (``days{i}``, ``day_cost{i}``, ``square{i}``)
    over rows that are days (``where``: the window's condition on ``date``)."""
    days = f"{where} AND clicks > 0"
    return [
        f"count(*) FILTER (WHERE {days}) AS days{i}",
        f"SUM(cost) FILTER (WHERE {days}) AS day_cost{i}",
        f"SUM(cost * cost / clicks) FILTER (WHERE {days}) AS square{i}",
    ]


def span(windows: list[Window]) -> tuple[dt.date, int] | None:
    """The first day and the number of days of the windows with both ends (None: none)."""
    bounded = [(a, b) for a, b in windows if a is not None and b is not None]
    if not bounded:
        return None
    first = min(a for a, _ in bounded)
    return first, (max(b for _, b in bounded) - first).days + 1


def check_columns(windows: list[Window]) -> list[str]:
    """SQL, per item, of its rows ``__rows`` and its days ``__days{j}`` (a bit per day, 64
    days each) in the :func:`span` of the windows."""
    found = span(windows)
    if found is None:
        return []
    first, n = found
    last = first + dt.timedelta(days=n - 1)
    out = [f"count(*) FILTER (WHERE date >= DATE '{first}' AND date <= DATE '{last}') AS __rows"]
    off = f"CAST(date - DATE '{first}' AS INTEGER)"
    for j in range(0, n, 64):
        # clamped: DuckDB may shift the rows the FILTER leaves out too
        bit = f"CAST(1 AS UBIGINT) << LEAST(GREATEST({off} - {j}, 0), 63)"
        out.append(
            f"bit_count(bit_or({bit}) FILTER (WHERE {off} BETWEEN {j} AND {j + 63}))"
            f" AS __days{j // 64}"
        )
    return out


def one_row_a_day(wide: pd.DataFrame) -> bool:
    """Whether every item of a scan with :func:`check_columns` has one row a day in the
    windows: as many rows as days."""
    days = wide.filter(regex=r"^__days\d+$").fillna(0).sum(axis=1)
    return bool((wide["__rows"].fillna(0) == days).all())


def of_frame(frame: pd.DataFrame, sums: pd.DataFrame, since: Any, until: Any) -> pd.DataFrame:
    """``sums`` (a window's per-item sums of the statistics frame ``frame``) with the
    :data:`DAY_SUMS` over the days ``since`` to ``until`` (0 for an item without clicks),
    the rows of a day summed first, as the scan sums them."""
    rows = frame[frame["key"].notna() & (frame["key"].astype(str) != "")]
    day = pd.to_datetime(rows["date"], utc=True).dt.floor("D")
    keep = pd.Series(True, index=day.index)
    if since is not None:
        keep &= day >= pd.Timestamp(since, tz="UTC")
    if until is not None:
        keep &= day <= pd.Timestamp(until, tz="UTC")
    rows = rows[keep].assign(date=day)
    if rows.empty:
        return sums.assign(**{c: 0.0 for c in DAY_SUMS})
    per = rows.groupby(["date", *_ITEM], observed=True, as_index=False)[["clicks", "cost"]]
    per = per.sum()
    per = per[per["clicks"] > 0]
    per = per.assign(days=1.0, day_cost=per["cost"], square=per["cost"] ** 2 / per["clicks"])
    days = per.groupby(_ITEM, observed=True, as_index=False)[list(DAY_SUMS)].sum()
    merged = sums.merge(days, on=_ITEM, how="left")
    return merged.fillna({c: 0.0 for c in DAY_SUMS})


__all__ = ["DAY_SUMS", "check_columns", "columns", "of_frame", "one_row_a_day", "span"]
