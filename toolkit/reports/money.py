"""A bid report's money per zone: what the bids spend a day (USD at the current bid) and,
when the report has statistics, what they earn a day, with the rows whose figure is unknown
counted, never taken as 0.

A row's spend is unknown when the report cannot estimate it: a per-click bid without a
``ctr`` (the traffic is counted in impressions), a bid not comparable with its prices, a
failed price query. Sums are over the rows that have a figure; ``spend_unknown`` says how
many rows are not in them.

>>> import pandas as pd
>>> from toolkit.reports.style import ZONES
>>> f = pd.DataFrame({"zone": pd.Categorical(["between", "between", "overpaying"],
...     categories=ZONES), "comparable": [True, True, True], "error": [None, None, None],
...     "campaign_id": [1, 1, 2], "spend_estimate": [2.5, float("nan"), 4.0]})
>>> t = by_zone(f)
>>> t.loc["between", ["bids", "spend_day", "spend_unknown"]].tolist()
[2.0, 2.5, 1.0]
>>> float(t.loc["all", "spend_day"]), int(t.loc["all", "spend_unknown"])
(6.5, 1)
"""

from __future__ import annotations

import pandas as pd

from .style import BID_ZONES, STATES, states

#: The money columns of :func:`by_zone`: (frame column, sum's name, unknown count's name).
FIGURES: tuple[tuple[str, str, str], ...] = (
    ("spend_estimate", "spend_day", "spend_unknown"),
    ("profit_day_now", "profit_day", "profit_unknown"),
)
#: The words of each column for a person (the files' headers).
HEADERS: dict[str, str] = {
    "bids": "bids",
    "campaigns": "campaigns",
    "spend_day": "spend (USD a day)",
    "spend_unknown": "bids with spend unknown",
    "profit_day": "profit (USD a day)",
    "profit_unknown": "bids with profit unknown",
}


def by_zone(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per state (the bid zones always, the others when some row is in them) and
    ``all``: ``bids``, ``campaigns``, ``spend_day`` (USD a day at the current bid, summed
    over the rows that have an estimate; NaN, unknown, when none of the zone's rows has one)
    and ``spend_unknown`` (rows without one); ``profit_day`` and ``profit_unknown`` when the
    frame has a ``profit_day_now`` figure (a report made with statistics)."""
    st = states(frame).astype(str).to_numpy() if len(frame) else []
    groups = pd.Series(st, index=frame.index, dtype=object)
    out = pd.DataFrame(index=pd.Index(list(STATES), name="zone"))
    out["bids"] = groups.value_counts().reindex(out.index, fill_value=0)
    out["campaigns"] = frame.groupby(groups)["campaign_id"].nunique().reindex(out.index)
    for column, total, unknown in FIGURES:
        if not has(frame, column):
            continue
        values = pd.to_numeric(frame[column], errors="coerce").astype("float64")
        out[total] = values.groupby(groups).sum(min_count=1).reindex(out.index)
        out[total] = out[total].where(out["bids"] > 0, 0.0)
        out[unknown] = values.isna().groupby(groups).sum().reindex(out.index)
    out = out.fillna({c: 0 for c in out.columns if c in ("campaigns", *_unknowns())})
    keep = [s for s in STATES if s in BID_ZONES or out.loc[s, "bids"] > 0]
    out = out.loc[keep]
    out.loc["all"] = out.sum(min_count=1)
    out.loc["all", "campaigns"] = frame["campaign_id"].nunique() if len(frame) else 0
    counts = ["bids", "campaigns", *[u for _, _, u in FIGURES if u in out.columns]]
    return out.astype({c: "int64" for c in counts})


def _unknowns() -> list[str]:
    return [u for _, _, u in FIGURES]


def has(frame: pd.DataFrame, column: str) -> bool:
    """True when ``frame`` has ``column`` with at least one figure (``spend_estimate`` counts
    whenever it is there: its NaN are unknown spends)."""
    if column not in frame.columns:
        return False
    return column == "spend_estimate" or bool(frame[column].notna().any())


def totals_line(frame: pd.DataFrame) -> str:
    """One line of the money: spend a day (and profit a day), with the unknown rows.

    >>> import pandas as pd
    >>> from toolkit.reports.style import ZONES
    >>> f = pd.DataFrame({"zone": pd.Categorical(["between"] * 2, categories=ZONES),
    ...     "comparable": [True, True], "error": [None, None], "campaign_id": [1, 2],
    ...     "spend_estimate": [12.5, float("nan")]})
    >>> totals_line(f)
    'Spend at the current bids: USD 12.50 a day (1 bid with spend unknown, not counted)'
    """
    table = by_zone(frame)
    parts = []
    for _, total, unknown in FIGURES:
        if total not in table.columns:
            continue
        n = int(table.loc["all", unknown])
        what = "spend" if total == "spend_day" else "profit"
        gap = f" ({n} bid{'' if n == 1 else 's'} with {what} unknown, not counted)" if n else ""
        value = table.loc["all", total]
        figure = "unknown" if pd.isna(value) else f"USD {value:,.2f} a day{gap}"
        parts.append(f"{'Spend' if what == 'spend' else 'profit'} at the current bids: {figure}")
    return "; ".join(parts)


__all__ = ["FIGURES", "HEADERS", "by_zone", "totals_line"]
