"""Backtests: rules replayed day by day over past statistics, to measure them before trusting
them with an account.

On each day ``d`` the rules decide on the statistics up to ``d`` (their windows ending on
``d``); a blacklisted item gets no traffic from ``d + 1`` on, a paused campaign none at all,
so later days no longer show them to the rules. What the stops would have changed is read from
the statistics after their day: ``cost_saved`` (the cost not spent), ``revenue_lost`` and
``conversions_lost`` (what the item went on to earn). Bid changes and whitelists are counted
as decisions; their effect on traffic is not modelled.

With ``truth`` (the demo statistics' true conversion rate per item, see
:meth:`toolkit.sandbox.Sandbox.stats_export`), each stopped item is judged: a *loser* earns
less than it costs at its true rate (``true_cr * payout < cpc``), a *winner* more; the
summary counts ``losers_stopped``, ``winners_stopped`` (stopped wrongly), ``precision`` and
``recall`` (of the losers at the levels the rules stop).

Levels are separate views of the same traffic (a click has a source, a subId and a country):
rules that stop items at two levels may count the same cost twice.

>>> result = backtest({"threshold": threshold_rules, "statistical": stat_rules},
...                   "stats.csv", truth=truth)                        # doctest: +SKIP
>>> result.summary                                                     # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .decide import DECIDED, Stats, decide, in_days, read_options
from .delay import Delay
from .known import Known, replay_delay
from .model import CAMPAIGN, STOPS, Rule, load_rules

_ITEM = ["campaign_id", "level", "key"]
_SUMS = ["impressions", "clicks", "cost", "conversions", "revenue"]
_AFTER = ["cost_after", "revenue_after", "conversions_after"]
#: The tables of a :class:`Backtest` that its writers write.
TABLES: tuple[str, ...] = ("summary", "by_rule", "decisions")
#: The columns of :attr:`Backtest.summary`.
SUMMARY_COLUMNS: tuple[str, ...] = (
    "rule_set",
    "decisions",
    "stopped",
    "cost_saved",
    "revenue_lost",
    "conversions_lost",
    "net",
    "losers_stopped",
    "winners_stopped",
    "precision",
    "recall",
)
_JUDGED = ("losers_stopped", "winners_stopped", "precision", "recall")


@dataclass
class Backtest:
    """What :func:`backtest` returns.

    ``summary``: one row per rule set (:data:`SUMMARY_COLUMNS`; the truth columns are
    missing without ``truth``). ``by_rule``: per rule set and rule, its decisions, stops,
    cost saved, revenue and conversions lost. ``decisions``: every item's first decision by a
    rule, with its day, evidence and what followed (``cost_after``, ``revenue_after``,
    ``conversions_after``; and ``loser``/``winner`` with ``truth``). ``days``: the days
    replayed; ``delay``: the conversion delay profile replayed (None: none).
    """

    summary: pd.DataFrame
    by_rule: pd.DataFrame
    decisions: pd.DataFrame
    days: list[dt.date]
    delay: Delay | None = None

    def __repr__(self) -> str:
        span = _span(self.days)
        known = f", replaying what was known under {self.delay}" if self.delay else ""
        return f"Backtest over {len(self.days)} days ({span}{known}):\n{self.summary.to_string()}"

    def _repr_html_(self) -> str:
        return f"<b>Backtest over {len(self.days)} days</b>" + self.summary.to_html(index=False)

    def to_excel(self, path: str | os.PathLike[str]) -> Path:
        """``summary``, ``by_rule`` and ``decisions``, a sheet each; text that starts like a
        formula (a key ``=HYPERLINK(...)``) written ``'=HYPERLINK(...)`` (see
        :mod:`toolkit.frames.cells`; ``read_table(path, "decisions")`` reads it back)."""
        from ..frames.export import write_excel

        tables = {name: getattr(self, name) for name in TABLES}
        return write_excel(tables, path)

    def to_csv(self, path: str | os.PathLike[str], table: str = "summary") -> Path:
        """One of :data:`TABLES` as CSV, text escaped the same way as :meth:`to_excel`.

        >>> result.to_csv("backtest.csv")                                  # doctest: +SKIP
        """
        from ..frames.cells import write_csv

        if table not in TABLES:
            raise ValueError(f"table {table!r}: one of {', '.join(TABLES)}")
        return write_csv(getattr(self, table), path)


def side_by_side(results: Mapping[str, Backtest]) -> Backtest:
    """Backtests of the same statistics, days and delay made one, as :func:`backtest` of a
    mapping of rule sets gives it: each result's rule set named by its key (``key: name``
    where a result holds several), its rows in the order given. For results already at hand
    (one from :func:`~toolkit.rules.matching.match_cost_saved`, say): nothing is replayed
    again. Results over other days or another delay are refused, naming the first that
    differs.

    >>> both = side_by_side({"statistical": ours, "threshold": theirs})  # doctest: +SKIP
    """
    named = list(results.items())
    if not named:
        raise ValueError("side_by_side: no backtest given")
    first_name, first = named[0]
    for name, result in named[1:]:
        if result.days != first.days or str(result.delay) != str(first.delay):
            raise ValueError(
                f"side_by_side: {name!r} replays {len(result.days)} days "
                f"({_span(result.days)}, delay {result.delay}) where {first_name!r} replays "
                f"{len(first.days)} ({_span(first.days)}, delay {first.delay}); backtest them "
                "over the same statistics and days"
            )
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in TABLES}
    for name, result in named:
        sets = list(result.summary["rule_set"])
        renamed = {s: name if len(sets) == 1 else f"{name}: {s}" for s in sets}
        for table in TABLES:
            frame = getattr(result, table)
            tables[table].append(frame.assign(rule_set=frame["rule_set"].map(renamed)))
    joined = {name: pd.concat(frames, ignore_index=True) for name, frames in tables.items()}
    return Backtest(**joined, days=list(first.days), delay=first.delay)


def _span(days: list[dt.date]) -> str:
    return f"{days[0]} to {days[-1]}" if days else "no days"


def daily_stats(stats: Any, columns: Mapping[str, str] | None = None, **read: Any) -> pd.DataFrame:
    """Per day and item, the sums of a stats frame or an export's path (summed by DuckDB,
    ``columns`` and the read options set, :data:`~toolkit.rules.decide.READ_OPTIONS`, passed
    on); ``day`` is the day as a date."""
    read = read_options(**read)
    if isinstance(stats, (str, os.PathLike)):
        from ..stats import aggregate

        frame = aggregate(stats, by=("date", *_ITEM), columns=columns, **read)
    elif read:
        Stats(stats, **read)  # refuses read options for a frame read already
    else:
        frame = stats
    dates = pd.to_datetime(frame["date"], utc=True)
    if dates.isna().any():
        raise ValueError("a backtest needs the day of every statistics row; some have none")
    out = frame[_ITEM].copy()
    out["date"] = dates.dt.floor("D")
    for col in _SUMS:
        out[col] = frame[col].astype(float).fillna(0.0) if col in frame else 0.0
    out = out.groupby(["date", *_ITEM], observed=True, as_index=False, sort=True)[_SUMS].sum()
    out["level"] = out["level"].astype(str)
    out["key"] = out["key"].astype(str)
    out["campaign_id"] = out["campaign_id"].astype("int64")
    out["day"] = out["date"].dt.date
    return out


def _rule_sets(rules: Any) -> dict[str, list[Rule]]:
    """``{name: rules}``: a mapping of named rule sets, or one set (named ``rules``)."""
    one = not isinstance(rules, Mapping) or "rules" in rules or "when" in rules
    if one:
        return {"rules": load_rules(rules)}
    return {str(name): load_rules(value) for name, value in rules.items()}


class _Replay:
    """One rule set replayed over the daily statistics."""

    def __init__(
        self, rules: list[Rule], daily: pd.DataFrame, formats: Any, known: Known | None = None
    ) -> None:
        self.rules, self.daily, self.formats, self.known = rules, daily, formats, known
        self.alive = np.ones(len(daily), dtype=bool)
        self.items = pd.MultiIndex.from_frame(daily[_ITEM])
        self.stopped: set[tuple[int, str, str]] = set()
        self.paused: set[int] = set()
        self.first: dict[tuple[str, int, str, str], dict[str, Any]] = {}

    def day(self, day: dt.date) -> None:
        rows = self.daily
        if self.known is not None:  # conversions and revenue as known on ``day``
            conversions, revenue = self.known.on(day)
            rows = rows.assign(conversions=conversions, revenue=revenue)
        seen = rows[self.alive & in_days(self.daily["date"], None, day)]
        made = decide(self.rules, seen, formats=self.formats, as_of=day)
        made = made[made["status"] == DECIDED]
        by_name = {r.name: r for r in self.rules}
        items: list[tuple[int, str, str]] = []
        campaigns: list[int] = []
        for row in made.to_dict("records"):
            rule = by_name[row["rule"]]
            item = (int(row["campaign_id"]), str(row["level"]), str(row["key"]))
            if (rule.name, *item) in self.first:
                continue
            self.first[(rule.name, *item)] = {**row, "day": day}
            if rule.action in STOPS and rule.level == CAMPAIGN:
                campaigns.append(item[0])
            elif rule.action in STOPS:
                items.append(item)
        later = (self.daily["day"] > day).to_numpy()
        if items:
            self.stopped.update(items)
            self.alive &= ~(later & self.items.isin(items))
        if campaigns:
            self.paused.update(campaigns)
            self.alive &= ~(later & self.daily["campaign_id"].isin(campaigns).to_numpy())


def _after(daily: pd.DataFrame, decisions: pd.DataFrame, rules: list[Rule]) -> pd.DataFrame:
    """Each stop's cost, revenue and conversions after its day (NaN for other actions)."""
    of = {r.name: r for r in rules}
    out = decisions.reset_index(drop=True)
    for col in _AFTER:
        out[col] = np.nan
    if out.empty:
        return out
    rule = out["rule"].map(of)
    stop = rule.map(lambda r: r.action in STOPS).to_numpy(dtype=bool)
    whole = rule.map(lambda r: r.level == CAMPAIGN).to_numpy(dtype=bool)
    sums = ["cost", "revenue", "conversions"]
    parts = []
    items = out[stop & ~whole][[*_ITEM, "day"]].reset_index()
    if len(items):
        joined = items.merge(daily[[*_ITEM, "day", *sums]], on=_ITEM, suffixes=("", "_row"))
        parts.append(joined[joined["day_row"] > joined["day"]])
    camps = out[stop & whole][["campaign_id", "day"]].reset_index()
    if len(camps):
        camps["level"] = rule[stop & whole].map(lambda r: r.of).to_numpy()
        rows = daily[["campaign_id", "level", "day", *sums]]
        joined = camps.merge(rows, on=["campaign_id", "level"], suffixes=("", "_row"))
        parts.append(joined[joined["day_row"] > joined["day"]])
    if parts:
        after = pd.concat(parts).groupby("index")[sums].sum()
        out.loc[stop, _AFTER] = 0.0
        out.loc[after.index, _AFTER] = after[sums].to_numpy()
    return out


def _judged(decisions: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """``loser``/``winner`` per decided item (``truth``: :func:`truth_items`)."""
    judged = [c for c in ("true_cr", "payout", "true_epc", "loser") if c in truth]
    out = decisions.merge(truth[[*_ITEM, *judged]], on=_ITEM, how="left")
    out["winner"] = out["loser"].map({True: False, False: True})
    return out


def truth_items(truth: Any, daily: pd.DataFrame) -> pd.DataFrame:
    """Per item of ``truth`` with clicks in ``daily``: its ``true_epc`` (the truth's own when
    it has one, else ``true_cr * payout``), ``clicks``, ``cost`` and ``loser`` (``true_epc``
    below its cost per click). Other columns of the truth are left out."""
    t = pd.DataFrame(truth)
    has_epc = "true_epc" in t
    need = [*_ITEM, *(["true_epc"] if has_epc else ["true_cr", "payout"])]
    missing = [c for c in need if c not in t]
    if missing:
        raise ValueError(
            f"truth: no column {', '.join(missing)}; a truth has campaign_id, level, key and "
            "true_epc (or true_cr and payout)"
        )
    keep = [c for c in (*_ITEM, "true_cr", "payout", "true_epc") if c in t]
    t = t[keep].copy()
    t["campaign_id"] = t["campaign_id"].astype("int64")
    t["level"], t["key"] = t["level"].astype(str), t["key"].astype(str)
    twice = t.duplicated(_ITEM)
    if twice.any():
        first = t[twice].iloc[0]
        raise ValueError(
            f"truth: {int(twice.sum())} item(s) given twice, e.g. campaign {first['campaign_id']}"
            f" {first['level']} {first['key']!r}; give one row per item"
        )
    if not has_epc:
        t["true_epc"] = t["true_cr"].astype(float) * t["payout"].astype(float)
    sums = daily.groupby(_ITEM, observed=True, as_index=False)[["clicks", "cost"]].sum()
    t = t.merge(sums, on=_ITEM, how="inner")
    with np.errstate(divide="ignore", invalid="ignore"):
        cpc = np.where(t["clicks"] > 0, t["cost"] / t["clicks"], np.nan)
    t["loser"] = t["true_epc"].astype(float) < cpc
    return t[t["clicks"] > 0].reset_index(drop=True)


def _summary(
    name: str, decisions: pd.DataFrame, rules: list[Rule], truth_items: pd.DataFrame | None
) -> dict[str, Any]:
    stops = decisions[decisions["action"].isin(STOPS)]
    row: dict[str, Any] = {
        "rule_set": name,
        "decisions": len(decisions),
        "stopped": len(stops),
        "cost_saved": float(stops["cost_after"].sum()),
        "revenue_lost": float(stops["revenue_after"].sum()),
        "conversions_lost": float(stops["conversions_after"].sum()),
    }
    row["net"] = row["cost_saved"] - row["revenue_lost"]
    if truth_items is not None:
        levels = {r.level for r in rules if r.action in STOPS and r.level != CAMPAIGN}
        losers = int(truth_items[truth_items["level"].isin(levels)]["loser"].sum())
        hit = stops[stops["level"] != CAMPAIGN]
        row["losers_stopped"] = int((hit["loser"] == True).sum())  # noqa: E712
        row["winners_stopped"] = int((hit["winner"] == True).sum())  # noqa: E712
        row["precision"] = row["losers_stopped"] / len(hit) if len(hit) else np.nan
        row["recall"] = row["losers_stopped"] / losers if losers else np.nan
    return row


def _by_rule(name: str, decisions: pd.DataFrame, rules: list[Rule]) -> pd.DataFrame:
    rows = []
    for rule in rules:
        mine = decisions[decisions["rule"] == rule.name]
        rows.append(
            {
                "rule_set": name,
                "rule": rule.name,
                "action": rule.action,
                "decisions": len(mine),
                "cost_saved": float(mine["cost_after"].sum()),
                "revenue_lost": float(mine["revenue_after"].sum()),
                "conversions_lost": float(mine["conversions_after"].sum()),
            }
        )
    return pd.DataFrame(rows)


def backtest(
    rules: Any,
    stats: Any,
    *,
    truth: Any = None,
    formats: Mapping[int, str] | None = None,
    start: dt.date | str | None = None,
    end: dt.date | str | None = None,
    columns: Mapping[str, str] | None = None,
    date_format: str | None = None,
    decimal: str | None = None,
    campaign_map: Any = None,
    progress: bool = False,
    delay: Any = None,
    complete: bool = False,
) -> Backtest:
    """Replay ``rules`` day by day over ``stats`` (a frame or an export's path) from ``start``
    to ``end`` (default: every day of the statistics) and measure what they would have done.

    ``rules``: one rule set (anything :func:`~toolkit.rules.model.load_rules` reads) or a
    mapping ``{name: rule set}`` to compare sets side by side (one summary row each).
    ``truth``: rows ``campaign_id, level, key`` and ``true_epc`` or ``true_cr, payout`` (the
    demo statistics' truth; other columns are left out) to judge each stop. ``formats``:
    campaign id -> format, for rules scoped to formats.
    ``columns``, ``date_format``, ``decimal`` and ``campaign_map`` go to the statistics reader
    (an export's path only), as for :func:`~toolkit.rules.evaluate.evaluate_rules`.

    ``delay``: replay what was known on each day, a simulation under a conversion delay
    profile (anything :meth:`~toolkit.rules.delay.Delay.parse` reads, or ``"auto"``: estimated
    from the export by :func:`~toolkit.rules.delay.estimate_delay`): on day ``d`` the
    conversions of click day ``c`` are those known by ``d`` (:class:`~toolkit.rules.known.Known`,
    the same draws for every rule set). The statistics are taken as downloaded on their last
    day (their freshest days short of late conversions); ``complete=True``: they hold every
    conversion. The summary's ``delay`` column says which profile was replayed. What a stop
    saved and lost is read from the statistics as they are.
    """
    read = {"date_format": date_format, "decimal": decimal, "campaign_map": campaign_map}
    daily, days, profile, known = replayed_days(
        stats, start, end, columns, read, delay=delay, complete=complete
    )
    judge = truth_items(truth, daily) if truth is not None else None
    summaries, by_rule, frames = [], [], []
    for name, rules_ in _rule_sets(rules).items():
        decisions = _replayed(rules_, daily, days, formats, progress, name, known)
        if judge is not None:
            decisions = _judged(decisions, judge)
        summaries.append(_summary(name, decisions, rules_, judge))
        by_rule.append(_by_rule(name, decisions, rules_))
        frames.append(decisions.assign(rule_set=name))
    summary = pd.DataFrame(summaries).reindex(columns=list(SUMMARY_COLUMNS))
    if truth is None:
        summary = summary.drop(columns=[c for c in _JUDGED if c in summary])
    if profile is not None:
        summary["delay"] = str(profile)
    by, decided = pd.concat(by_rule, ignore_index=True), pd.concat(frames, ignore_index=True)
    return Backtest(summary, by, decided, days, profile)


def replayed_days(
    stats: Any,
    start: dt.date | str | None,
    end: dt.date | str | None,
    columns: Mapping[str, str] | None,
    read: Mapping[str, Any],
    *,
    delay: Any = None,
    complete: bool = False,
) -> tuple[pd.DataFrame, list[dt.date], Delay | None, Known | None]:
    """What :func:`backtest` replays: the daily statistics (:func:`daily_stats`), the look
    days from ``start`` to ``end``, the delay profile and what was known under it
    (:func:`~toolkit.rules.known.replay_delay`)."""
    daily = daily_stats(stats, columns, **read)
    profile, known = replay_delay(delay, daily, complete=complete)
    days = sorted(set(daily["day"]))
    lo = pd.Timestamp(start).date() if start is not None else None
    hi = pd.Timestamp(end).date() if end is not None else None
    days = [d for d in days if (lo is None or d >= lo) and (hi is None or d <= hi)]
    return daily, days, profile, known


def _replayed(
    rules: list[Rule],
    daily: pd.DataFrame,
    days: list[dt.date],
    formats: Any,
    progress: bool,
    name: str,
    known: Known | None = None,
) -> pd.DataFrame:
    replay = _Replay(rules, daily, formats, known)
    steps: Any = days
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(days, desc=f"backtest {name}", unit="day")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for day in steps:
            replay.day(day)
    _said_once(caught, len(days))
    rows = list(replay.first.values())
    decisions = (
        pd.DataFrame(rows) if rows else pd.DataFrame(columns=["rule", *_ITEM, "day", "action"])
    )
    return _after(daily, decisions, rules)


_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _said_once(caught: list[warnings.WarningMessage], looks: int) -> None:
    """The warnings of a replay's look days, each said once: ``on 14 of 28 look days
    (2026-01-02 to 2026-01-15): <the warning, its day as DAY>``; one of a single day as it
    was."""
    said: dict[tuple[type, str], list[str]] = {}
    for w in caught:
        text = str(w.message)
        said.setdefault((w.category, _DAY.sub("DAY", text)), []).append(
            (_DAY.findall(text) or [""])[0]
        )
    for (category, text), days in said.items():
        dated = sorted(d for d in days if d)
        if len(days) == 1 or not dated:
            message = text.replace("DAY", dated[0]) if dated else text
        else:
            span = dated[0] if dated[0] == dated[-1] else f"{dated[0]} to {dated[-1]}"
            message = f"on {len(set(dated))} of {looks} look days ({span}): {text}"
        warnings.warn(message, category, stacklevel=4)


__all__ = ["SUMMARY_COLUMNS", "Backtest", "backtest", "daily_stats", "replayed_days"]
