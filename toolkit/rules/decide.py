"""Rules over statistics to decisions: which items each rule picks, with their evidence.

Nothing here knows the account's state: :func:`decide` reads statistics (a frame, or a file
summed out of core by DuckDB) and returns one row per item a rule's condition holds for,
``decided`` or ``over limit``; :mod:`toolkit.rules.evaluate` turns the decided rows into a
plan against the account.

>>> import pandas as pd
>>> stats = pd.DataFrame({"date": pd.to_datetime(["2026-01-01"] * 3 + ["2026-01-02"] * 3, utc=True),
...     "campaign_id": [7] * 6, "level": ["subid"] * 6, "key": ["a", "b", "c"] * 2,
...     "impressions": [0] * 6, "clicks": [900, 1000, 800] * 2, "cost": [9.0, 10.0, 8.0] * 2,
...     "conversions": [9, 12, 0] * 2, "revenue": [18.0, 24.0, 0.0] * 2})
>>> rules = [{"level": "subid", "when": "p_loss >= 0.95 and clicks >= 300",
...           "action": "blacklist"}]
>>> made = decide(rules, stats)
>>> made[["key", "status"]].to_dict("records")
[{'key': 'c', 'status': 'decided'}]
>>> made["why"].iloc[0]
'p_loss 0.9998, clicks 1600, cost 16.00, conversions 0'
>>> rules[0]["confirm"] = 2       # the day before too (toolkit.rules.confirm)
>>> decide(rules, stats)["why"].iloc[0]
'p_loss 0.9998, clicks 1600, cost 16.00, conversions 0; the day before: p_loss 0.9883'
"""

from __future__ import annotations

import datetime as dt
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import RuleProblem, RulesError, StatsNote, ValidationError
from ..frames.schemas import FLOAT, INT, STRING
from .confirm import HOW_TO_ACT, UNCONFIRMED, confirmed
from .daily import SPREAD_LEVELS, spread_of, with_spread
from .evidence import item_totals
from .fit import not_accepted
from .fresh import effective
from .geo_mix import with_mix
from .item_evidence import evidence_of, own_evidence_of
from .model import CONFIRM, METRICS, PAYOUT_METRICS, Rule, load_rules
from .payouts import HOW_TO_GIVE, NO_PAYOUT, read_payouts
from .why import why_words

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
DECIDED, OVER_LIMIT, ALREADY = "decided", "over limit", "already"
#: The read options of the statistics readers a :class:`Stats` passes on when they are set
#: (``date_format="%d/%m/%Y"``, ``decimal=","``, ``campaign_map=FILE``).
READ_OPTIONS: tuple[str, ...] = ("date_format", "decimal", "campaign_map")
_ITEM = ["campaign_id", "level", "key"]


class Stats:
    """Statistics to decide on: a stats frame (:func:`toolkit.read_stats`) or the path of an
    export, whose sums per item and window are asked of DuckDB (never loaded whole).
    Sums are cached per window. ``columns`` and the read options set (:data:`READ_OPTIONS`)
    go to the readers; ``skipped`` gathers what they say they left out (their
    :class:`~toolkit.errors.StatsNote`, once each: ``stats.csv: skipped 1 totals row (line
    42)``), a frame's from its ``attrs["skipped"]``."""

    def __init__(
        self, source: Any, *, columns: Mapping[str, str] | None = None, **read: Any
    ) -> None:
        self.path = Path(source) if isinstance(source, (str, os.PathLike)) else None
        self.frame = None if self.path is not None else source
        self.columns = columns
        #: The read options set (:data:`READ_OPTIONS`), passed on to the readers as they are.
        self.read = read_options(**read)
        if self.read and self.path is None:
            raise ValidationError(
                f"{', '.join(f'{k}=' for k in self.read)}: options of reading an export, but"
                " the statistics given are a frame read already; give the export's path, or"
                " read it with toolkit.read_stats(path, ...) first"
            )
        #: What the readers said they left out (totals rows), one line each.
        self.skipped: list[str] = []
        if self.frame is not None and getattr(self.frame, "attrs", {}).get("skipped"):
            from ..stats.totals import note

            self.skipped.append(note(self.frame.attrs["skipped"], None))
        self._sums: dict[tuple[Any, Any], pd.DataFrame] = {}
        self._last: dt.date | None = None
        self._first: dt.date | None = None

    def last_day(self) -> dt.date | None:
        """The last day the statistics cover (None when they carry no dates)."""
        if self._last is None:
            if self.path is not None:
                self.prefetch([])
            else:
                last = pd.to_datetime(self.frame["date"], utc=True).max()
                self._last = None if pd.isna(last) else last.date()
        return self._last

    def first_day(self) -> dt.date | None:
        """The first day the statistics cover (None when they carry no dates); an export's
        path is summed per day for it (only asked when an as-of day needs checking)."""
        if self._first is None:
            if self.path is not None:
                from ..stats import aggregate

                dates = self._reading(aggregate, by=("date",))["date"]
            else:
                dates = self.frame["date"]
            first = pd.to_datetime(dates, utc=True).min()
            self._first = None if pd.isna(first) else first.date()
        return self._first

    def prefetch(
        self, days: Iterable[int | None], as_of: Any = None, per_day: bool = False
    ) -> None:
        """Sum the windows of the last ``days`` days (None: every row) up to ``as_of`` (or
        the last day) now; an export's path is read in two scans whatever the windows
        (:func:`toolkit.stats.duck.window_sums`), and a bad file raises here. ``per_day``:
        an export's items' days and cost per click's spread (:mod:`toolkit.rules.daily`)
        are summed in the same scan."""
        days, cut = list(days), as_of is not None
        if self.path is None:
            last = last_day(self, as_of)
            for n in days:
                self.sums(*_window(n, last, cut))
            return
        if self._last is not None:
            end = pd.Timestamp(as_of).date() if as_of is not None else self._last
            wanted = [_window(n, end, cut) for n in days]
            wanted += [("daily", *w) for w in wanted if None not in w] if per_day else []
            if all(w in self._sums for w in wanted):
                return
        from ..stats.day_sums import DAY_SUMS
        from ..stats.duck import window_sums

        self._last, sums = self._reading(window_sums, days, as_of=as_of, per_day=per_day)
        for window, frame in sums.items():
            if set(DAY_SUMS) <= set(frame):  # per_day, a window with both ends
                self._sums[("daily", *window)] = spread_of(frame)
                frame = frame.drop(columns=list(DAY_SUMS))
            self._sums[window] = frame

    def sums(self, since: dt.date | None, until: dt.date | None) -> pd.DataFrame:
        """Per campaign, level and key: impressions, clicks, cost, conversions, revenue."""
        key = (since, until)
        if key not in self._sums:
            self._sums[key] = self._summed(since, until)
        return self._sums[key]

    def _summed(self, since: dt.date | None, until: dt.date | None) -> pd.DataFrame:
        if self.path is not None:
            from ..stats import aggregate

            frame = self._reading(aggregate, since=since, until=until)
        else:
            frame = self.frame
            if since is not None or until is not None:
                frame = frame[in_days(frame["date"], since, until)]
        return item_totals(frame)

    def _reading(self, reader: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``reader(path, *args, columns=..., **read options, **kwargs)``, the notes it warns
        of (:class:`~toolkit.errors.StatsNote`) gathered in :attr:`skipped` instead of shown
        (each once, however often the file is read); other warnings shown as they were."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = reader(self.path, *args, columns=self.columns, **self.read, **kwargs)
        for w in caught:
            if issubclass(w.category, StatsNote):
                if str(w.message) not in self.skipped:
                    self.skipped.append(str(w.message))
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return out

    def campaigns(self) -> set[int]:
        """The campaigns of the windows summed so far (every rule's, after
        :func:`read_windows`)."""
        out: set[int] = set()
        for window, sums in self._sums.items():
            if window[0] in ("fresh", "delay", "evidence", "daily"):  # not windows' sums
                continue
            out.update(int(c) for c in pd.unique(sums["campaign_id"]))
        return out


def read_options(**options: Any) -> dict[str, Any]:
    """The read options (:data:`READ_OPTIONS`) that are set, to pass on to the statistics
    readers; an unknown one is a :class:`~toolkit.errors.ValidationError`.

    >>> read_options(date_format="%d/%m/%Y", decimal=None)
    {'date_format': '%d/%m/%Y'}
    """
    unknown = sorted(set(options) - set(READ_OPTIONS))
    if unknown:
        raise ValidationError(
            f"unknown read option(s) {', '.join(unknown)}; read options: {', '.join(READ_OPTIONS)}"
        )
    return {k: v for k, v in options.items() if v is not None}


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


def window_of(
    rule: Rule, last: dt.date | None, cut: bool = False
) -> tuple[dt.date | None, dt.date | None]:
    """The first and last day a rule reads: the last ``rule.window`` days up to ``last``;
    a rule without a window reads every day (``None, None``), up to ``last`` when ``cut``
    (``last`` is an as-of day)."""
    return _window(rule.window, last, cut)


def _window(
    days: int | None, last: dt.date | None, cut: bool = False
) -> tuple[dt.date | None, dt.date | None]:
    if last is None:
        return None, None
    if days is None:
        return (None, last) if cut else (None, None)
    return last - dt.timedelta(days=days - 1), last


def window_evidence(
    stats: Stats,
    rule: Rule,
    since: dt.date | None,
    until: dt.date | None,
    end: dt.date | None = None,
    payouts: pd.DataFrame | None = None,
    own: bool = False,
) -> pd.DataFrame:
    """The evidence (:func:`evidence_of`; ``own``: :func:`own_evidence_of`, for a rule
    that reads only its items' own numbers) of ``rule``'s level over the days ``since`` to
    ``until`` (``end``: the last day, for a rule's ``delay``; source and subId items with their
    days and cost per click's spread, :mod:`toolkit.rules.daily`), kept in the statistics' cache
    without a payouts table: the rules of one level share it, and a look's confirmation
    (:mod:`toolkit.rules.confirm`) is the previous look's evidence. Do not change it."""

    def make() -> pd.DataFrame:
        sums = stats.sums(since, until)
        if own:  # no prior, no payout, no delay: the items' own sums
            return own_evidence_of(sums, rule)
        if rule.delay is not None:
            sums = effective(stats, sums, end, rule.delay)
        if rule.level in SPREAD_LEVELS:  # items as the statistics name them
            sums = with_spread(stats, sums, since, until)
            sums = with_mix(stats, sums, since, until, payouts, rule)  # per-GEO payouts
        return evidence_of(sums, rule, payouts)

    if payouts is not None and not own:
        return make()
    kind = "own evidence" if own else "evidence"
    key = (kind, since, until, end, rule.level, rule.of, rule.payout, rule.delay)
    if key not in stats._sums:
        stats._sums[key] = make()
    return stats._sums[key]


def _scoped(ev: pd.DataFrame, rule: Rule, formats: Mapping[int, str] | None) -> pd.DataFrame:
    keep = np.ones(len(ev), dtype=bool)
    ids = ev["campaign_id"].astype("int64")
    if rule.campaigns is not None:
        keep &= ids.isin(rule.campaigns).to_numpy()
    if rule.formats is not None:
        if formats is None:
            message = (
                f"scoped to formats {list(rule.formats)}: give the account (or formats=) so "
                "the campaigns' formats are known"
            )
            raise RulesError([RuleProblem(rule.number or None, rule.name, "scope", message)])
        keep &= ids.map(formats).isin(rule.formats).to_numpy()
    return ev[keep]


Done = Callable[[Rule, pd.DataFrame], np.ndarray]
#: Which of a rule's evidence rows to leave out before its condition is looked at.
Skip = Callable[[Rule, pd.DataFrame], np.ndarray]
#: Per rule, how many changes it made per campaign on the same evidence already.
Made = Callable[[Rule], Mapping[int, int]]


def _limited(
    rows: pd.DataFrame, rule: Rule, done: Done | None = None, made: Made | None = None
) -> pd.DataFrame:
    """Strongest first (``rule.rank`` descending, then cost), the ones past the per-campaign
    limit marked; rows ``done`` says the account already is as the rule wants are
    ``already`` and take no place in the limit; the changes ``made`` on the same evidence
    already take theirs. Items the service does not take are ``not accepted: <rule>``
    (:mod:`toolkit.rules.fit`) and take no place either."""
    rows = rows.sort_values(
        [rule.rank, "cost", "campaign_id", "key"],
        ascending=[False, False, True, True],
        na_position="last",
        kind="stable",
    )
    refused = not_accepted(rule, rows["key"])
    bad = refused.notna().to_numpy(dtype=bool)
    rows = rows.assign(status=refused.where(bad, DECIDED))
    mask = np.zeros(len(rows), dtype=bool)
    if done is not None and not bad.all():
        mask[~bad] = done(rule, rows[~bad])
    rows.loc[mask, "status"] = ALREADY
    mask |= bad
    if rule.limit is not None:
        place = rows[~mask].groupby("campaign_id", observed=True).cumcount()
        used = made(rule) if made is not None else {}
        taken = rows.loc[place.index, "campaign_id"].map(lambda c: used.get(int(c), 0))
        rows.loc[place[place + taken >= rule.limit].index, "status"] = OVER_LIMIT
    return rows


def decide_rule(
    rule: Rule,
    stats: Stats,
    formats: Mapping[int, str] | None = None,
    as_of: Any = None,
    done: Done | None = None,
    made: Made | None = None,
    payouts: pd.DataFrame | None = None,
    skip: Skip | None = None,
) -> pd.DataFrame:
    """One rule's decisions (see :data:`DECISION_COLUMNS`); the items whose condition needs
    a payout they do not have, and whose other clauses hold, are ``no payout known``.
    The probability clauses (``p_loss``, ``p_win``) hold on the evidence of the
    ``rule.confirm - 1`` days before too (:mod:`toolkit.rules.confirm`); ``why`` says what
    those days showed. ``skip(rule, evidence)``: the items left out (no row of theirs)."""
    h = _hits(rule, stats, formats, as_of, payouts, skip)
    ev, hit, others, since, until, last = h.ev, h.hit, h.others, h.since, h.until, h.last
    needs = any(c.metric in PAYOUT_METRICS for c in rule.when)
    unpaid = others & ev["payout"].isna().to_numpy(dtype=bool) & needs
    held, before = confirmed(
        rule, ev[hit], since, until or last, partial(window_evidence, stats, rule, payouts=payouts)
    )
    note = pd.Series(before, index=ev.index[hit], dtype=object)
    rows = _limited(ev[hit][held], rule, done, made)
    rows["why"] = [w + b for w, b in zip(why_words(rows, rule), note[rows.index], strict=True)]
    if not held.all():
        wait = ev[hit][~held].assign(status=UNCONFIRMED)
        words = zip(why_words(wait, rule), note[wait.index], strict=True)
        wait["why"] = [f"{w}{b}: {HOW_TO_ACT}" for w, b in words]
        rows = pd.concat([rows, wait])
    if unpaid.any():
        lost = ev[unpaid].assign(status=NO_PAYOUT)
        lost["why"] = [
            f"no payout known for campaign {c} (no conversions in the window): {HOW_TO_GIVE}; {w}"
            for c, w in zip(lost["campaign_id"], why_words(lost, rule), strict=True)
        ]
        rows = pd.concat([rows, lost])
    rows["rule"] = rule.name
    rows["action"] = rule.action
    rows["since"], rows["until"] = since, last  # until: the last day of the evidence
    return rows.reindex(columns=list(DECISION_COLUMNS))


@dataclass
class _Hits:
    """A rule's evidence over its window; where all its clauses hold, and those of no payout."""

    ev: pd.DataFrame
    hit: np.ndarray
    others: np.ndarray
    since: dt.date | None
    until: dt.date | None
    last: dt.date | None


def _hits(
    rule: Rule,
    stats: Stats,
    formats: Mapping[int, str] | None,
    as_of: Any,
    payouts: pd.DataFrame | None,
    skip: Skip | None,
    own: bool = False,
) -> _Hits:
    last = last_day(stats, as_of)
    if rule.window is not None and last is None:
        message = f"a window of {rule.window} days, but the statistics carry no dates"
        raise RulesError([RuleProblem(rule.number or None, rule.name, "window", message)])
    since, until = window_of(rule, last, as_of is not None)
    ev = window_evidence(stats, rule, since, until, until or last, payouts, own)
    ev = _scoped(ev, rule, formats)
    if skip is not None:
        ev = ev[~skip(rule, ev)]
    hit = np.ones(len(ev), dtype=bool)
    others = np.ones(len(ev), dtype=bool)  # the clauses that need no payout
    for clause in rule.when:
        holds = clause.holds(ev)
        hit &= holds
        others &= holds if clause.metric not in PAYOUT_METRICS else True
    return _Hits(ev, hit, others, since, until, last)


def decided_items(
    rule: Rule,
    stats: Stats,
    as_of: Any,
    formats: Mapping[int, str] | None = None,
    skip: Skip | None = None,
    own: bool = False,
) -> pd.DataFrame:
    """The items ``rule`` decides (status ``decided``) on the days up to ``as_of``
    (``campaign_id``, ``level``, ``key`` and what ranks them), in :func:`decide_rule`'s
    order, without the words and other columns of a decision: what a replay of stops reads
    (:class:`~toolkit.rules.matching.Looks`), with no ``limit`` or ``confirm``; ``own``: it
    reads only its items' own numbers (:func:`own_evidence_of`, no prior worked out)."""
    if rule.limit is not None or rule.confirm != CONFIRM:
        raise ValueError(f"{rule.name}: decided_items takes no limit and no confirm")
    hits = _hits(rule, stats, formats, as_of, None, skip, own)
    columns = list(dict.fromkeys([rule.rank, "cost", "campaign_id", "level", "key"]))
    rows = _limited(hits.ev.loc[hits.hit, columns], rule)
    return rows[(rows["status"] == DECIDED).to_numpy(dtype=bool)]


def last_day(stats: Stats, as_of: Any = None) -> dt.date | None:
    """The last day of the windows: ``as_of``, else the statistics' last day."""
    return pd.Timestamp(as_of).date() if as_of is not None else stats.last_day()


def as_of_day(as_of: Any) -> dt.date | None:
    """``as_of`` (a date, a timestamp or ``"2026-01-31"``) as a day; None when not given."""
    if as_of is None:
        return None
    try:
        day = pd.Timestamp(as_of)
    except (ValueError, TypeError):
        day = pd.NaT
    if pd.isna(day):
        raise ValidationError(f"as_of {as_of!r} is not a date; give it as 2026-01-31")
    return day.date()


def check_as_of(stats: Stats, as_of: Any) -> dt.date | None:
    """``as_of`` as a day, checked to lie within the statistics' days (a
    :class:`~toolkit.errors.ValidationError` in one line naming their first and last day
    otherwise); None when not given. Sum the statistics first (:func:`read_windows` with
    ``whole=True``): an export's path is then not read again for the check.

    >>> stats = Stats(pd.DataFrame({"date": pd.to_datetime(["2026-01-30", "2026-01-31"]),
    ...     "campaign_id": [7, 7], "level": ["subid"] * 2, "key": ["a", "a"],
    ...     "clicks": [1, 2], "cost": [0.1, 0.2], "conversions": [0, 0], "revenue": [0.0] * 2}))
    >>> try:
    ...     check_as_of(stats, "2026-02-01")
    ... except ValidationError as exc:
    ...     print(exc)
    as_of 2026-02-01 is outside the statistics (2026-01-30 to 2026-01-31); give a day in...
    """
    day = as_of_day(as_of)
    if day is None:
        return None
    last = stats.last_day()
    if last is None:
        raise ValidationError(f"as_of {day}: the statistics carry no dates to cut at that day")
    if day <= last and not stats.sums(None, day).empty:
        return day  # rows up to that day: it is not before the first day
    first = stats.first_day()
    if first is not None and first <= day <= last:
        return day
    raise ValidationError(
        f"as_of {day} is outside the statistics ({first} to {last}); give a day in that range"
    )


def read_windows(
    rules: list[Rule], stats: Stats, as_of: Any = None, *, whole: bool = False
) -> None:
    """Sum the statistics of every rule's window now (a bad file raises
    :class:`~toolkit.errors.StatsError` here, before anything else is asked); ``whole``:
    every row up to ``as_of`` too (what :func:`check_as_of` looks at)."""
    days = [rule.window for rule in rules if rule.enabled]
    per_day = any(r.enabled and r.level in SPREAD_LEVELS for r in rules)
    stats.prefetch([*days, None] if whole else days, as_of, per_day=per_day)


def decide(
    rules: Any,
    stats: Any,
    *,
    formats: Mapping[int, str] | None = None,
    as_of: Any = None,
    columns: Mapping[str, str] | None = None,
    done: Done | None = None,
    made: Made | None = None,
    payouts: Any = None,
    skip: Skip | None = None,
    **read: Any,
) -> pd.DataFrame:
    """Every enabled rule's decisions, in rule order: one row per item whose condition holds.

    ``rules``: anything :func:`~toolkit.rules.model.load_rules` reads. ``stats``: a stats
    frame or an export's path (summed by DuckDB). ``formats``: campaign id -> format code,
    for rules scoped to formats. ``as_of``: the last day of the windows (default: the last
    day in the statistics). ``done(rule, rows)``: which rows the account already is as the
    rule wants (``already``, outside the limit). ``made(rule)``: per campaign, how many
    changes the rule made on the same evidence already (they take their places in its
    ``limit``, which counts per campaign and evidence). ``columns`` and ``read`` (the
    :data:`READ_OPTIONS` ``date_format=``, ``decimal=``, ``campaign_map=``) go to the
    statistics readers when ``stats`` is an export's path. ``payouts``: a payouts table
    (a CSV or XLSX file's path or a frame, :func:`~toolkit.rules.payouts.read_payouts`) whose
    payouts come before the rules' ``payout`` and the campaigns' revenue per conversion.
    ``skip(rule, evidence)``: the items a rule leaves out, a mask of its evidence rows.
    """
    rules = load_rules(rules)
    source = stats if isinstance(stats, Stats) else Stats(stats, columns=columns, **read)
    table = None if payouts is None else read_payouts(payouts)
    read_windows(rules, source, as_of)
    parts = [
        decide_rule(r, source, formats, as_of, done, made, table, skip) for r in rules if r.enabled
    ]
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
    "ALREADY",
    "DECIDED",
    "NO_PAYOUT",
    "as_of_day",
    "check_as_of",
    "DECISION_COLUMNS",
    "OVER_LIMIT",
    "READ_OPTIONS",
    "UNCONFIRMED",
    "Stats",
    "decide",
    "decide_rule",
    "decided_items",
    "empty_decisions",
    "in_days",
    "last_day",
    "read_options",
    "read_windows",
    "typed",
    "window_of",
]
