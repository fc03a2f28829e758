"""An item's days in a rule's window: on how many it had clicks, and how far its cost per
click moved from one day to the next (a subId's clicks come from several countries at
different bids, so its window's cost per click is itself an estimate).

Per item, over its days ``d`` with clicks ``n_d > 0`` and cost ``k_d`` (``N = sum n_d``,
``cpc = sum k_d / N``, ``D`` such days):

- ``days``: ``D``;
- ``cpc_se``: the standard error of the window's cost per click, the click-weighted spread of
  the days' costs per click over the root of their number,
  ``sqrt((sum k_d^2 / n_d / N - cpc^2) / D)`` (0 for a single day).

>>> stats = pd.DataFrame({"date": pd.to_datetime(["2026-01-01", "2026-01-02"], utc=True),
...     "campaign_id": [7, 7], "level": ["subid"] * 2, "key": ["a", "a"],
...     "clicks": [100, 100], "cost": [1.0, 3.0]})
>>> spread(stats)[["days", "cpc_se"]].round(5).to_dict("records")   # 0.01 / sqrt(2)
[{'days': 2.0, 'cpc_se': 0.00707}]
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from ..bulk.key_codes import joint_codes

_ITEM = ["campaign_id", "level", "key"]
#: The levels whose items carry their days' spread: sources and subIds, named as the
#: statistics name them (countries are merged by their codes; campaigns' totals and countries
#: read their cost per click as exact).
SPREAD_LEVELS = ("source", "subid")


def spread(days: pd.DataFrame) -> pd.DataFrame:
    """Per item of ``days`` (rows with ``date``, the item's columns, ``clicks`` and ``cost``;
    several rows of one day are summed first): ``days`` and ``cpc_se`` (see the module).
    Items are named as text, as ``astype(str)`` writes them; the sums go over integer codes
    of the day and the item (a backtest asks this on every look day)."""
    date = pd.to_datetime(days["date"], utc=True).dt.floor("D")
    day, _ = pd.factorize(date)
    item, names = _item_codes(days)
    known = (day >= 0) & (item >= 0)  # a row without a day or an item's name is left out
    day, item = day[known], item[known]
    clicks = days["clicks"].astype(float).fillna(0.0).to_numpy()[known]
    cost = days["cost"].astype(float).fillna(0.0).to_numpy()[known]
    _, pair = np.unique(item * (int(day.max(initial=0)) + 1) + day, return_inverse=True)
    n_pairs = int(pair.max(initial=-1)) + 1
    n_d = np.bincount(pair, clicks, n_pairs)
    k_d = np.bincount(pair, cost, n_pairs)
    owner = np.zeros(n_pairs, dtype=np.int64)
    owner[pair] = item
    has = n_d > 0
    n_items = len(names)
    with np.errstate(divide="ignore", invalid="ignore"):
        square = np.where(has, k_d**2 / n_d, 0.0)
    sums = {
        "clicks": np.bincount(owner[has], n_d[has], n_items),
        "cost": np.bincount(owner[has], k_d[has], n_items),
        "square": np.bincount(owner[has], square[has], n_items),
        "days": np.bincount(owner[has], minlength=n_items).astype(float),
    }
    keep = sums["days"] > 0
    out = names[keep].reset_index(drop=True)
    out["days"] = sums["days"][keep]
    out["cpc_se"] = cpc_se(*(sums[c][keep] for c in ("clicks", "cost", "square", "days")))
    return out


def _item_codes(days: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """An integer code per row for its item (-1 where a column has no value, as pandas'
    groups leave such rows out), and the items (as text) in code order."""
    # 7 and "7" in one column of Python values are one item, as their text is
    columns = [days[c].astype(str) if days[c].dtype == object else days[c] for c in _ITEM]
    named = ~np.logical_or.reduce([c.isna().to_numpy() for c in columns])
    item = np.full(len(days), -1, dtype=np.int64)
    if named.any():
        joint = joint_codes([[c[named]] for c in columns])
        item[named] = pd.factorize(joint)[0]
    rows = np.flatnonzero(named)[np.unique(item[named], return_index=True)[1]]
    names = pd.DataFrame(
        {
            c: col.iloc[rows].astype(str).to_numpy(dtype=object)
            for c, col in zip(_ITEM, columns, strict=True)
        }
    )
    return item, names


def spread_of(sums: pd.DataFrame) -> pd.DataFrame:
    """:func:`spread`'s table from per-item sums over the days with clicks (``clicks``,
    ``day_cost``, ``square`` and ``days``: :mod:`toolkit.stats.day_sums`), items named as text."""
    keep = sums["days"].to_numpy(dtype=float) > 0
    rows = sums[keep]
    out = pd.DataFrame({c: rows[c].astype(str).to_numpy(dtype=object) for c in _ITEM})
    out["days"] = rows["days"].to_numpy(dtype=float)
    out["cpc_se"] = cpc_se(
        *(rows[c].to_numpy(dtype=float) for c in ("clicks", "day_cost", "square", "days"))
    )
    return out


def cpc_se(clicks, cost, square, days) -> np.ndarray:
    """The standard error of a window's cost per click from its sums over the days with
    clicks: ``clicks``, ``cost``, ``square`` (``sum k_d^2 / n_d``) and ``days`` (see the
    module); 0 without clicks, and 0 where every day had one cost per click (up to rounding:
    a variance below 1e-12 of the squared cost per click). Vectorised.

    >>> round(float(cpc_se(200, 4.0, 1.0**2 / 100 + 3.0**2 / 100, 2)), 5)
    0.00707
    """
    n, k, q, d = (np.asarray(x, dtype=float) for x in (clicks, cost, square, days))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_square = (k / n) ** 2
        var = q / n - mean_square
        # days at one cost per click leave rounding noise, whatever order the sums took: 0
        var = np.where(var > 1e-12 * mean_square, var, 0.0)
        return np.where((n > 0) & (d > 0), np.sqrt(var / d), 0.0)


def with_spread(
    stats: Any, sums: pd.DataFrame, since: dt.date | None, until: dt.date | None
) -> pd.DataFrame:
    """``sums`` (a window's per-item sums of ``stats``, a
    :class:`~toolkit.rules.decide.Stats`) with each item's ``days`` and ``cpc_se`` over the
    days ``since`` to ``until`` (kept in the statistics' cache: an export's windows get them
    in the scan that sums them, :meth:`~toolkit.rules.decide.Stats.prefetch` with
    ``per_day``; other windows are summed per day and item here); an item without clicks has
    0 of each."""
    key = ("daily", since, until)
    if key not in stats._sums:
        stats._sums[key] = spread(_per_day(stats, since, until))
    table = stats._sums[key]
    row = rows_of(table, sums)
    found = row >= 0
    out = {}
    for col in ("days", "cpc_se"):
        out[col] = np.zeros(len(sums))
        out[col][found] = table[col].to_numpy(dtype=float)[row[found]]
    return sums.assign(**out)


def rows_of(table: pd.DataFrame, sums: pd.DataFrame) -> np.ndarray:
    """Per row of ``sums``, the row of ``table`` (one per item, named as text) with its
    item's text (-1: none), matched over integer codes of the three columns' text.

    >>> table = pd.DataFrame({"campaign_id": ["7", "7"], "level": ["subid"] * 2,
    ...     "key": ["a", "b"]})
    >>> sums = pd.DataFrame({"campaign_id": [7, 7, 8], "level": ["subid"] * 3,
    ...     "key": ["b", "a", "a"]})
    >>> rows_of(table, sums).tolist()
    [1, 0, -1]
    """
    if table.empty or sums.empty:  # nothing to match (and no codes of nothing)
        return np.full(len(sums), -1, dtype=np.int64)
    theirs = [sums[c].astype(str) for c in _ITEM]
    # the table's text in the dtype of the sums' text, so that both are coded alike
    mine = [table[c].astype(t.dtype) for c, t in zip(_ITEM, theirs, strict=True)]
    codes = joint_codes([[m, t] for m, t in zip(mine, theirs, strict=True)])
    return pd.Index(codes[: len(table)]).get_indexer(codes[len(table) :])


def _per_day(stats: Any, since: dt.date | None, until: dt.date | None) -> pd.DataFrame:
    """Per day and item, the clicks and cost of the days ``since`` to ``until``."""
    if stats.path is not None:
        from ..stats import aggregate

        return stats._reading(aggregate, by=("date", *_ITEM), since=since, until=until)
    frame = stats.frame
    days = pd.to_datetime(frame["date"], utc=True).dt.tz_convert(None).dt.floor("D")
    keep = np.ones(len(frame), dtype=bool)
    if since is not None:
        keep &= (days >= pd.Timestamp(since)).to_numpy()
    if until is not None:
        keep &= (days <= pd.Timestamp(until)).to_numpy()
    return frame[keep]


__all__ = ["SPREAD_LEVELS", "cpc_se", "spread", "spread_of", "with_spread"]
