"""Rules over statistics to decisions: which items each rule picks, with their evidence.

Nothing here knows the account's state: :func:`decide` reads statistics (a frame, or a file
summed out of core by DuckDB) and returns one row per item a rule's condition holds for,
``decided`` or ``over limit``; :mod:`toolkit.rules.evaluate` turns the decided rows into a
plan against the account.

>>> import pandas as pd
>>> stats = pd.DataFrame({"date": pd.to_datetime(["2026-01-01"] * 3, utc=True),
...     "campaign_id": [7] * 3, "level": ["subid"] * 3, "key": ["a", "b", "c"],
...     "impressions": [0] * 3, "clicks": [900, 1000, 800], "cost": [9.0, 10.0, 8.0],
...     "conversions": [9, 12, 0], "revenue": [18.0, 24.0, 0.0]})
>>> rules = [{"level": "subid", "when": "p_loss >= 0.95 and clicks >= 300",
...           "action": "blacklist"}]
>>> decide(rules, stats)[["key", "status", "why"]].to_dict("records")
[{'key': 'c', 'status': 'decided', 'why': 'p_loss 0.9999, clicks 800, cost 8.00, conversions 0'}]
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..frames.schemas import FLOAT, INT, STRING
from .evidence import evidence_frame, item_totals
from .model import CAMPAIGN, METRICS, Rule, load_rules

#: The columns of the decisions frame, in order.
DECISION_COLUMNS: tuple[str, ...] = (
    "rule",
    "campaign_id",
    "level",
    "key",
    "action",
    "status",
    "since",
    "until",
    "impressions",
    "clicks",
    "cost",
    "conversions",
    "revenue",
    "profit",
    "cr",
    "break_even",
    "posterior_cr",
    "p_loss",
    "p_zero",
    "why",
)
DECIDED, OVER_LIMIT = "decided", "over limit"
#: The numbers every decision's ``why`` shows after the ones its condition names.
SHOWN = ("p_loss", "clicks", "cost", "conversions")


class Stats:
    """Statistics to decide on: a stats frame (:func:`toolkit.read_stats`) or the path of an
    export, whose sums per item and window are asked of DuckDB (never loaded whole).
    Sums are cached per window."""

    def __init__(self, source: Any, *, columns: Mapping[str, str] | None = None) -> None:
        self.path = Path(source) if isinstance(source, (str, os.PathLike)) else None
        self.frame = None if self.path is not None else source
        self.columns = columns
        self._sums: dict[tuple[Any, Any], pd.DataFrame] = {}
        self._last: dt.date | None = None

    def last_day(self) -> dt.date | None:
        """The last day the statistics cover (None when they carry no dates)."""
        if self._last is None:
            if self.path is not None:
                from ..stats import aggregate

                days = aggregate(self.path, by=("date",), columns=self.columns)["date"]
            else:
                days = self.frame["date"]
            last = pd.to_datetime(days, utc=True).max()
            self._last = None if pd.isna(last) else last.date()
        return self._last

    def sums(self, since: dt.date | None, until: dt.date | None) -> pd.DataFrame:
        """Per campaign, level and key: impressions, clicks, cost, conversions, revenue."""
        key = (since, until)
        if key not in self._sums:
            self._sums[key] = self._summed(since, until)
        return self._sums[key]

    def _summed(self, since: dt.date | None, until: dt.date | None) -> pd.DataFrame:
        if self.path is not None:
            from ..stats import aggregate

            frame = aggregate(self.path, since=since, until=until, columns=self.columns)
        else:
            frame = self.frame
            if since is not None or until is not None:
                frame = frame[in_days(frame["date"], since, until)]
        return item_totals(frame)


def in_days(dates: pd.Series, since: dt.date | None, until: dt.date | None) -> np.ndarray:
    """Which of ``dates`` (timestamps, UTC when naive) fall on the days ``since`` to
    ``until``, both included (either may be None)."""
    if not isinstance(dates.dtype, pd.DatetimeTZDtype):
        dates = pd.to_datetime(dates, utc=True)
    keep = np.ones(len(dates), dtype=bool)
    if since is not None:
        keep &= (dates >= pd.Timestamp(since, tz="UTC")).to_numpy(dtype=bool)
    if until is not None:
        end = pd.Timestamp(until, tz="UTC") + pd.Timedelta(days=1)
        keep &= (dates < end).to_numpy(dtype=bool)
    return keep


def window_of(rule: Rule, last: dt.date | None) -> tuple[dt.date | None, dt.date | None]:
    """The first and last day a rule reads (``None, None``: every row)."""
    if rule.window is None or last is None:
        return None, None
    return last - dt.timedelta(days=rule.window - 1), last


def measures(ev: pd.DataFrame) -> pd.DataFrame:
    """The evidence frame with every metric of :data:`~toolkit.rules.model.METRICS`."""
    n, c = ev["clicks"], ev["conversions"]
    with np.errstate(divide="ignore", invalid="ignore"):
        ev["profit"] = ev["revenue"] - ev["cost"]
        ev["roi"] = np.where(ev["cost"] > 0, ev["profit"] / ev["cost"] * 100.0, np.nan)
        ev["cr"] = ev["rate"]
        ev["cpa"] = np.where(c > 0, ev["cost"] / c, np.nan)
        ev["epc"] = np.where(n > 0, ev["revenue"] / n, np.nan)
        ev["cpc"] = np.where(n > 0, ev["cost"] / n, np.nan)
        imp = ev["impressions"] if "impressions" in ev else pd.Series(0.0, index=ev.index)
        ev["ctr"] = np.where(imp > 0, n / imp * 100.0, np.nan)
    ev["posterior_cr"] = ev["posterior_mean"]
    ev["p_loss"] = ev["p_below_break_even"]
    ev["p_win"] = 1.0 - ev["p_loss"]
    ev["p_zero"] = ev["zero_p"]
    return ev


def evidence_of(sums: pd.DataFrame, rule: Rule) -> pd.DataFrame:
    """The evidence of every item at a rule's level (a campaign's totals for ``campaign``:
    the sums of its rows at ``rule.of``, the prior pooled over campaigns)."""
    if rule.level == CAMPAIGN:
        rows = sums[sums["level"] == rule.of]
        rows = rows.groupby("campaign_id", as_index=False, observed=True).sum(numeric_only=True)
        rows["level"] = CAMPAIGN
        rows["key"] = rows["campaign_id"].astype(str)
        ev = evidence_frame(rows, rule.payout, within=("level",), summed=True)
    else:
        ev = evidence_frame(sums[sums["level"] == rule.level], rule.payout, summed=True)
    if "impressions" not in ev:
        ev["impressions"] = 0.0
    return measures(ev)


def _scoped(ev: pd.DataFrame, rule: Rule, formats: Mapping[int, str] | None) -> pd.DataFrame:
    keep = np.ones(len(ev), dtype=bool)
    ids = ev["campaign_id"].astype("int64")
    if rule.campaigns is not None:
        keep &= ids.isin(rule.campaigns).to_numpy()
    if rule.formats is not None:
        if formats is None:
            raise ValueError(
                f"rule {rule.name!r} is scoped to formats {list(rule.formats)}: give the "
                "account (or campaigns=) so the campaigns' formats are known"
            )
        keep &= ids.map(formats).isin(rule.formats).to_numpy()
    return ev[keep]


def _why(rows: pd.DataFrame, rule: Rule) -> list[str]:
    names = list(dict.fromkeys([*(c.metric for c in rule.when), *SHOWN]))
    columns = [rows[m].to_numpy(dtype=float) for m in names]
    return [
        ", ".join(f"{m} {_shown(m, v)}" for m, v in zip(names, values, strict=True))
        for values in zip(*columns, strict=True)
    ]


def _shown(metric: str, value: float) -> str:
    if np.isnan(value):
        return "n/a"
    if metric in ("cost", "revenue", "profit", "cpa", "epc", "cpc"):
        return f"{value:.2f}"
    if metric in ("p_loss", "p_win", "p_zero"):
        return f"{value:.4f}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


def _limited(rows: pd.DataFrame, rule: Rule) -> pd.DataFrame:
    """Strongest first (``rule.rank`` descending, then cost), the ones past the per-campaign
    limit marked."""
    rows = rows.sort_values(
        [rule.rank, "cost", "campaign_id", "key"],
        ascending=[False, False, True, True],
        na_position="last",
        kind="stable",
    )
    rows = rows.assign(status=DECIDED)
    if rule.limit is not None:
        place = rows.groupby("campaign_id", observed=True).cumcount()
        rows.loc[(place >= rule.limit).to_numpy(), "status"] = OVER_LIMIT
    return rows


def decide_rule(
    rule: Rule, stats: Stats, formats: Mapping[int, str] | None = None, as_of: Any = None
) -> pd.DataFrame:
    """One rule's decisions (see :data:`DECISION_COLUMNS`)."""
    last = pd.Timestamp(as_of).date() if as_of is not None else stats.last_day()
    if rule.window is not None and last is None:
        raise ValueError(
            f"rule {rule.name!r} has a window of {rule.window} days, but the statistics "
            "carry no dates"
        )
    since, until = window_of(rule, last)
    ev = _scoped(evidence_of(stats.sums(since, until), rule), rule, formats)
    hit = np.ones(len(ev), dtype=bool)
    for clause in rule.when:
        hit &= clause.holds(ev)
    rows = _limited(ev[hit], rule)
    rows["rule"] = rule.name
    rows["action"] = rule.action
    rows["since"], rows["until"] = since, until
    rows["why"] = _why(rows, rule)
    return rows.reindex(columns=list(DECISION_COLUMNS))


def decide(
    rules: Any,
    stats: Any,
    *,
    formats: Mapping[int, str] | None = None,
    as_of: Any = None,
    columns: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Every enabled rule's decisions, in rule order: one row per item whose condition holds.

    ``rules``: anything :func:`~toolkit.rules.model.load_rules` reads. ``stats``: a stats
    frame or an export's path (summed by DuckDB). ``formats``: campaign id -> format code,
    for rules scoped to formats. ``as_of``: the last day of the windows (default: the last
    day in the statistics).
    """
    rules = load_rules(rules)
    source = stats if isinstance(stats, Stats) else Stats(stats, columns=columns)
    parts = [decide_rule(r, source, formats, as_of) for r in rules if r.enabled]
    parts = [p for p in parts if len(p)]
    if not parts:
        return empty_decisions()
    return typed(pd.concat(parts, ignore_index=True))


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The decisions frame with its dtypes."""
    out = frame.reindex(columns=list(DECISION_COLUMNS)).reset_index(drop=True)
    types: dict[str, Any] = {c: FLOAT for c in METRICS if c in out}
    types.update(
        {
            "rule": STRING,
            "campaign_id": INT,
            "level": STRING,
            "key": STRING,
            "action": STRING,
            "status": STRING,
            "why": STRING,
            "impressions": FLOAT,
        }
    )
    return out.astype(types)


def empty_decisions() -> pd.DataFrame:
    """A decisions frame with no rows."""
    return typed(pd.DataFrame(columns=list(DECISION_COLUMNS)))


__all__ = [
    "DECIDED",
    "DECISION_COLUMNS",
    "OVER_LIMIT",
    "Stats",
    "decide",
    "decide_rule",
    "empty_decisions",
    "evidence_of",
    "in_days",
    "measures",
    "typed",
    "window_of",
]
