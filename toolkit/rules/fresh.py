"""The freshest days discounted: under conversion delay, a click of a day ``age`` days before
the evidence's last day counts ``known(age)`` of a click (its conversions are not all known
yet). The sums of a rule's window gain ``eff_clicks``, which the evidence's priors and
posteriors use (:func:`toolkit.rules.evidence.evidence_frame`).

Only the days younger than the profile are summed again, per day: from a statistics frame
with pandas, from an export's path by DuckDB (:func:`toolkit.stats.aggregate`).

>>> import pandas as pd
>>> from toolkit.rules.decide import Stats
>>> frame = pd.DataFrame({"date": pd.to_datetime(["2026-01-30", "2026-01-31"], utc=True),
...     "campaign_id": [7, 7], "level": ["subid"] * 2, "key": ["a", "a"], "impressions": 0,
...     "clicks": [100, 100], "cost": [1.0, 1.0], "conversions": [2, 1], "revenue": [4.0, 2.0]})
>>> stats = Stats(frame)
>>> late = Delay.parse([0.5, 1.0])            # half of a day's conversions known that day
>>> effective(stats, stats.sums(None, None), dt.date(2026, 1, 31), late)["eff_clicks"].tolist()
[150.0]
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from .delay import Delay, estimate_delay

_ITEM = ["campaign_id", "level", "key"]


def effective(
    stats: Any, sums: pd.DataFrame, until: dt.date | None, delay: Delay | str | None
) -> pd.DataFrame:
    """``sums`` (a window's per-item sums of ``stats``, a :class:`~toolkit.rules.decide.Stats`,
    ending on ``until``) with ``eff_clicks``: each click weighed by the share of its day's
    conversions known on ``until`` (``delay.known(until - day)``; ``"auto"``: the profile
    :func:`~toolkit.rules.delay.estimate_delay` reads off the statistics up to ``until``,
    as they would have been downloaded that day)."""
    until = until if until is not None else stats.last_day()
    if delay == "auto" and until is not None:
        delay = estimated(stats, until)
    if not isinstance(delay, Delay) or delay.days == 0 or until is None or sums.empty:
        return sums.assign(eff_clicks=sums["clicks"].astype(float))
    first = until - dt.timedelta(days=delay.days - 1)
    fresh = _cached(stats, ("fresh", first, until), lambda: _per_day(stats, first, until))
    day = fresh["date"].dt.tz_convert(None).dt.floor("D")
    age = (pd.Timestamp(until) - day).dt.days.to_numpy()
    unknown = fresh["clicks"].astype(float) * (1.0 - delay.known(age))
    missing = unknown.groupby([fresh[k].astype(str) for k in _ITEM], observed=True).sum()
    keys = pd.MultiIndex.from_arrays([sums[k].astype(str) for k in _ITEM])
    gone = missing.reindex(keys).to_numpy(dtype=float)
    eff = sums["clicks"].astype(float).to_numpy() - np.nan_to_num(gone)
    return sums.assign(eff_clicks=eff)


def estimated(stats: Any, until: dt.date) -> Delay:
    """``delay: auto``: the profile of the statistics up to ``until`` (cached per day). An
    export of fewer days than the estimate's ``max_age`` (14) + 1 is read over half its span
    (at least :data:`MIN_AUTO_AGE` days): its older half is taken as complete, a profile that
    ends early rather than none. Where no profile can be read (too short an export, too few
    conversions), :data:`UNREAD`: the last days' clicks wait until their conversions can be
    known, rather than be read as complete."""

    def estimate() -> Delay:
        if stats.path is not None:
            from ..stats import aggregate

            days = stats._reading(aggregate, by=("date",), until=until)
        else:
            days = stats.frame[_dates(stats.frame["date"]) <= pd.Timestamp(until)]
        return estimate_delay(days, until, max_age=_max_age(days, until), fallback=UNREAD)

    return _cached(stats, ("delay", until), estimate)


#: The fewest days ``delay: auto`` reads a profile over; a shorter export assumes
#: :data:`UNREAD`.
MIN_AUTO_AGE = 3
#: The ``max_age`` of ``delay: auto`` when the export is long enough.
AUTO_AGE = 14
#: ``delay: auto`` where no profile can be read: the clicks of the last
#: :data:`MIN_AUTO_AGE` days count for nothing yet (their conversions do), so a rule does not
#: stop an item on days whose conversions may still come.
UNREAD = Delay((0.0,) * MIN_AUTO_AGE + (1.0,))


def _max_age(days: pd.DataFrame, until: dt.date) -> int:
    """14 days, or half the span of a shorter export (at least :data:`MIN_AUTO_AGE`)."""
    column = "date" if "date" in days else "day"
    if days.empty or column not in days:
        return AUTO_AGE
    first = pd.Timestamp(_dates(days[column]).min()).date()
    span = (until - first).days
    return AUTO_AGE if span > AUTO_AGE else max(MIN_AUTO_AGE, span // 2)


def _cached(stats: Any, key: tuple[Any, ...], make: Any) -> Any:
    """What ``make()`` gives, kept in the statistics' cache of sums under ``key``."""
    if key not in stats._sums:
        stats._sums[key] = make()
    return stats._sums[key]


def _dates(dates: pd.Series) -> pd.Series:
    """The days of ``dates`` (timestamps, UTC when naive), without a time zone."""
    return pd.to_datetime(dates, utc=True).dt.tz_convert(None).dt.floor("D")


def _per_day(stats: Any, since: dt.date, until: dt.date) -> pd.DataFrame:
    """Per day and item, the clicks of the days ``since`` to ``until``."""
    if stats.path is not None:
        from ..stats import aggregate

        out = stats._reading(aggregate, by=("date", *_ITEM), since=since, until=until)
    else:
        days = _dates(stats.frame["date"])
        keep = (days >= pd.Timestamp(since)) & (days <= pd.Timestamp(until))
        out = stats.frame[keep.to_numpy()]
    out = out[["date", *_ITEM, "clicks"]].copy()
    out["date"] = pd.to_datetime(out["date"], utc=True)
    return out


__all__ = ["effective", "estimated"]
