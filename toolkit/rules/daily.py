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

_ITEM = ["campaign_id", "level", "key"]


def spread(days: pd.DataFrame) -> pd.DataFrame:
    """Per item of ``days`` (rows with ``date``, the item's columns, ``clicks`` and ``cost``;
    several rows of one day are summed first): ``days`` and ``cpc_se`` (see the module)."""
    frame = days[["date", *_ITEM, "clicks", "cost"]].copy()
    frame["date"] = pd.to_datetime(frame["date"], utc=True).dt.floor("D")
    for col in _ITEM:
        frame[col] = frame[col].astype(str)
    sums = ["clicks", "cost"]
    frame[sums] = frame[sums].astype(float).fillna(0.0)
    per = frame.groupby(["date", *_ITEM], observed=True, as_index=False)[sums].sum()
    per = per[per["clicks"] > 0]
    per = per.assign(square=per["cost"] ** 2 / per["clicks"], days=1.0)
    out = per.groupby(_ITEM, observed=True, as_index=False)[[*sums, "square", "days"]].sum()
    out["cpc_se"] = cpc_se(out["clicks"], out["cost"], out["square"], out["days"])
    return out[[*_ITEM, "days", "cpc_se"]]


def cpc_se(clicks, cost, square, days) -> np.ndarray:
    """The standard error of a window's cost per click from its sums over the days with
    clicks: ``clicks``, ``cost``, ``square`` (``sum k_d^2 / n_d``) and ``days`` (see the
    module); 0 without clicks. Vectorised.

    >>> round(float(cpc_se(200, 4.0, 1.0**2 / 100 + 3.0**2 / 100, 2)), 5)
    0.00707
    """
    n, k, q, d = (np.asarray(x, dtype=float) for x in (clicks, cost, square, days))
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.maximum(q / n - (k / n) ** 2, 0.0)
        return np.where((n > 0) & (d > 0), np.sqrt(var / d), 0.0)


def with_spread(
    stats: Any, sums: pd.DataFrame, since: dt.date | None, until: dt.date | None
) -> pd.DataFrame:
    """``sums`` (a window's per-item sums of ``stats``, a
    :class:`~toolkit.rules.decide.Stats`) with each item's ``days`` and ``cpc_se`` over the
    days ``since`` to ``until`` (kept in the statistics' cache; an export's path is summed per
    day and item by DuckDB); an item without clicks has 0 of each."""
    key = ("daily", since, until)
    if key not in stats._sums:
        stats._sums[key] = spread(_per_day(stats, since, until))
    table = stats._sums[key].set_index(_ITEM)
    keys = pd.MultiIndex.from_arrays([sums[k].astype(str) for k in _ITEM])
    found = table.reindex(keys)
    return sums.assign(
        days=found["days"].fillna(0.0).to_numpy(), cpc_se=found["cpc_se"].fillna(0.0).to_numpy()
    )


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


__all__ = ["cpc_se", "spread", "with_spread"]
