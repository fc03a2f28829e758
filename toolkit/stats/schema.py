"""The declared columns and dtypes of the statistics frame.

One row per day (or per period), campaign, level and key, with the tracker's counts and money:

>>> {c: str(d) for c, d in STATS.items()}["level"]
'category'
>>> list(STATS)
['date', 'campaign_id', 'level', 'key', 'impressions', 'clicks', 'cost', 'conversions', 'revenue']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from .. import spec
from ..frames.schemas import FLOAT, INT, STRING, TIME, category

#: The level of a country: the kind whose items carry a bid (spec.py's row).
COUNTRY = spec.bid_kind().column
#: The levels a statistics row can be about: a source, a subId or a country.
LEVELS = ("source", "subid", COUNTRY)
LEVEL = category(LEVELS)

#: The counts (whole numbers) and the money and conversion columns (floats: trackers give
#: fractional conversions when a postback carries a weight).
COUNTS = ("impressions", "clicks")
AMOUNTS = ("cost", "conversions", "revenue")
METRICS = COUNTS + AMOUNTS

#: ``column -> dtype`` of the statistics frame, in column order.
STATS: dict[str, Any] = {
    "date": TIME,
    "campaign_id": INT,
    "level": LEVEL,
    "key": STRING,
    "impressions": INT,
    "clicks": INT,
    "cost": FLOAT,
    "conversions": FLOAT,
    "revenue": FLOAT,
}


def stats_frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    """A statistics frame from columns (sequences or Series), each cast to its dtype; columns
    left out are all missing.

    >>> stats_frame({"campaign_id": [7], "level": ["source"], "key": ["s1"], "cost": [1.5]}
    ...             ).dtypes.astype(str).tolist()[:4]
    ['datetime64[ns, UTC]', 'Int64', 'category', 'string']
    """
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"stats: columns of different lengths {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    data = {}
    for col, dtype in STATS.items():
        values = columns.get(col)
        if values is None:
            data[col] = pd.Series([None] * n, dtype=object).astype(dtype)
            continue
        series = pd.Series(values).reset_index(drop=True)
        if isinstance(dtype, pd.DatetimeTZDtype) and not isinstance(
            series.dtype, pd.DatetimeTZDtype
        ):
            series = pd.to_datetime(series, utc=True)
        data[col] = series.astype(dtype)
    return pd.DataFrame(data, index=pd.RangeIndex(n))


def empty_stats() -> pd.DataFrame:
    """A statistics frame with no rows."""
    return stats_frame({})


__all__ = [
    "AMOUNTS",
    "COUNTRY",
    "COUNTS",
    "LEVELS",
    "METRICS",
    "STATS",
    "empty_stats",
    "stats_frame",
]
