"""Which campaigns a bid report takes: the live ones (approved by the service and started,
:data:`toolkit.spec.LIVE_CAMPAIGN`) by default, every campaign with ``include="all"``.

An archived, paused, declined or new campaign buys nothing: proposing its bids, or counting
its spend against the balance, would mislead. The campaigns left out are kept
(:func:`left_out`) so that every face of the report says how many there were.

>>> import pandas as pd
>>> rows = pd.DataFrame({"campaign_id": [1, 1, 2, 3], "name": ["a", "a", "b", "c"],
...     "status": ["Approved", "Approved", "Approved", "New"],
...     "work_status": ["Started", "Started", "Archived", "Paused"]})
>>> is_live(rows).tolist()
[True, True, False, False]
>>> kept, out = split(rows, "live")
>>> len(kept), out["campaign_id"].tolist()
(2, [2, 3])
>>> check_include("some")
Traceback (most recent call last):
ValueError: include must be 'live' (started and approved campaigns) or 'all', got 'some'
"""

from __future__ import annotations

import pandas as pd

from .. import spec

#: What ``bid_report(include=)`` takes.
INCLUDE: dict[str, str] = {
    "live": "started and approved campaigns",
    "all": "every campaign",
}
#: The columns of :func:`split`'s campaigns left out.
LEFT_OUT_COLUMNS: tuple[str, ...] = ("campaign_id", "name", "status", "work_status", "rows")


def check_include(include: object) -> str:
    """``include`` when it is one of :data:`INCLUDE`; a ValueError saying the choices
    otherwise."""
    if isinstance(include, str) and include in INCLUDE:
        return include
    raise ValueError(f"include must be 'live' ({INCLUDE['live']}) or 'all', got {include!r}")


def is_live(frame: pd.DataFrame) -> pd.Series:
    """True for each row whose campaign is live (every column of
    :data:`~toolkit.spec.LIVE_CAMPAIGN` has its value); False where a column is missing."""
    live = pd.Series(True, index=frame.index)
    for column, value in spec.LIVE_CAMPAIGN.items():
        if column not in frame.columns:
            return pd.Series(False, index=frame.index)
        live &= (frame[column].astype("string") == value).fillna(False).astype(bool)
    return live


def split(rows: pd.DataFrame, include: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows a report takes, and its campaigns left out (one row each:
    :data:`LEFT_OUT_COLUMNS`, ``rows`` their country bids)."""
    check_include(include)
    keep = is_live(rows) if include == "live" else pd.Series(True, index=rows.index)
    out = rows[~keep.to_numpy()]
    columns = [c for c in LEFT_OUT_COLUMNS[:-1] if c in out.columns]
    left = out.groupby("campaign_id", sort=True, observed=True)[columns[1:]].first()
    left["rows"] = out.groupby("campaign_id", sort=True, observed=True).size()
    left = left.reset_index()
    return rows[keep.to_numpy()].reset_index(drop=True), left


def note(left_out: int, include: str = "live") -> str:
    """The line every face of a report shows when campaigns were left out ("" when none).

    >>> note(3)
    "3 campaigns left out: not started and approved (include='all' takes them)"
    """
    if not left_out or include != "live":
        return ""
    many = "campaign" if left_out == 1 else "campaigns"
    return f"{left_out} {many} left out: not started and approved (include='all' takes them)"


__all__ = ["INCLUDE", "LEFT_OUT_COLUMNS", "check_include", "is_live", "note", "split"]
