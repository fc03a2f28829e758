"""A rule's parameter tuned until its backtest saves a given cost: :func:`match_cost_saved`,
a bisection over :func:`~toolkit.rules.backtest.backtest`'s cost saved.

Most of its steps need no whole backtest. A rule set whose every rule stops items at a level
of its own and reads only the item's own numbers (:data:`OWN_METRICS`: not its campaign's
other items, as a prior does, nor a payout; no ``limit``, ``delay`` or ``confirm``) stops an
item on the first look its own rows call for it, whatever else was stopped: before its stop
its rows are those of a replay without stops. So the steps of such sets are read off one
replay without stops (:class:`Looks`, each look day's evidence worked out once and shared),
in the order a backtest records them, and only the parameter found is backtested in full.
The answer is the same as from a backtest per step (tests/test_rules_backtest_matching.py
pins it).

>>> x, result = match_cost_saved(lambda x: threshold(x), 500.0, stats, 0.0, 64.0,
...                              truth=truth)                          # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..frames.schemas import INT, STRING
from .backtest import Backtest, _after, _rule_sets, _summary, backtest, replayed_days, truth_items
from .decide import Stats, decided_items, in_days, read_windows
from .known import Known
from .model import CAMPAIGN, CONFIRM, STOPS, Rule

_ITEM = ["campaign_id", "level", "key"]
#: The metrics that read only an item's own rows in the window.
OWN_METRICS: tuple[str, ...] = (
    "impressions",
    "clicks",
    "cost",
    "conversions",
    "revenue",
    "profit",
    "roi",
    "cr",
    "cpa",
    "epc",
    "cpc",
    "ctr",
)


def own_stops(rules: list[Rule]) -> bool:
    """Whether each enabled rule stops items (not campaigns) at a level no other enabled
    rule acts on, decides and ranks on :data:`OWN_METRICS` only, without ``limit``,
    ``delay`` or ``confirm``: then its stops are read off a replay without stops."""
    on = [r for r in rules if r.enabled]
    levels = [r.level for r in on]
    return (
        bool(on)
        and len(set(levels)) == len(levels)
        and all(
            r.action in STOPS
            and r.level != CAMPAIGN
            and r.limit is None
            and r.delay is None
            and r.confirm == CONFIRM
            and r.rank in OWN_METRICS
            and all(c.metric in OWN_METRICS for c in r.when)
            for r in on
        )
    )


class Looks:
    """The look days of a replay without stops, each day's statistics (a
    :class:`~toolkit.rules.decide.Stats` keeping the evidence it worked out) shared by the
    rule sets :func:`own_stops` admits: :meth:`cost_saved` of each is what
    :func:`~toolkit.rules.backtest.backtest` says it saves."""

    def __init__(
        self,
        daily: pd.DataFrame,
        days: list[dt.date],
        formats: Mapping[int, str] | None = None,
        known: Known | None = None,
    ) -> None:
        self.daily, self.days, self.formats, self.known = daily, days, formats, known
        self._stats: dict[dt.date, Stats] = {}

    def stats(self, day: dt.date) -> Stats:
        """The statistics known on ``day``, up to it."""
        if day not in self._stats:
            rows = self.daily
            if self.known is not None:  # conversions and revenue as known on ``day``
                conversions, revenue = self.known.on(day)
                rows = rows.assign(conversions=conversions, revenue=revenue)
            self._stats[day] = Stats(rows[in_days(self.daily["date"], None, day)])
        return self._stats[day]

    def decisions(self, rules: list[Rule]) -> pd.DataFrame:
        """Each item's first decision by a rule, in a backtest's order (day, rule, rank):
        its rule, item, day and action (:func:`~toolkit.rules.decide.decided_items`, the
        decisions without their words). Its warnings are left to the backtest of the
        parameter found."""
        first: dict[tuple[str, int, str, str], tuple[Any, ...]] = {}
        decided: dict[str, set[tuple[int, str]]] = {r.name: set() for r in rules}
        on = [r for r in rules if r.enabled]

        def skip(rule: Rule, evidence: pd.DataFrame) -> np.ndarray:
            """The items ``rule`` decided on an earlier look: their first decision is taken
            (no limit, no prior: the other items' rows are the same without theirs)."""
            done = decided[rule.name]
            if not done:
                return np.zeros(len(evidence), dtype=bool)
            pairs = zip(evidence["campaign_id"].tolist(), evidence["key"].tolist(), strict=True)
            return np.fromiter((p in done for p in pairs), dtype=bool, count=len(evidence))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for day in self.days:
                stats = self.stats(day)
                read_windows(on, stats, day)
                for rule in on:
                    rows = decided_items(rule, stats, day, self.formats, skip, own=True)
                    items = zip(
                        rows["campaign_id"].tolist(),
                        rows["level"].tolist(),
                        rows["key"].tolist(),
                        strict=True,
                    )
                    for cid, level, key in items:
                        item = (rule.name, int(cid), str(level), str(key))
                        if item not in first:
                            first[item] = (*item, day, rule.action)
                            decided[rule.name].add((item[1], item[3]))
        frame = pd.DataFrame(list(first.values()), columns=["rule", *_ITEM, "day", "action"])
        return frame.astype({"campaign_id": INT, "level": STRING, "key": STRING})

    def cost_saved(self, rules: list[Rule]) -> float:
        """What :func:`~toolkit.rules.backtest.backtest` of ``rules`` (a set
        :func:`own_stops` admits) says they save, to the last digit: the same stops in the
        same order, their cost after their day summed alike."""
        decisions = _after(self.daily, self.decisions(rules), rules)
        return float(_summary("", decisions, rules, None)["cost_saved"])


def match_cost_saved(
    make: Callable[[float], Any],
    target: float,
    stats: Any,
    low: float,
    high: float,
    *,
    steps: int = 12,
    **options: Any,
) -> tuple[float, Backtest]:
    """The parameter ``x`` in ``[low, high]`` whose rule set ``make(x)`` saves the cost
    closest to ``target`` in a backtest, by bisection (the cost saved must fall as ``x``
    rises, as for a ``cost > x`` threshold); ``options`` go to :func:`backtest`.
    Returns ``x`` and its backtest. A target beyond what ``low`` to ``high`` can save is a
    ``ValueError`` naming the target and the cost saved at the end of the range it passed.
    The steps of rule sets :func:`own_stops` admits are read off one replay (see the module).
    ``progress=True`` shows a bar of the steps (each with its ``x`` and cost saved), then,
    for steps read off the replay, the bar of the backtest of the ``x`` found.
    """
    saved_by = _Saver(stats, options)
    bar = _bar(steps, bool(options.get("progress")))  # disabled: every call does nothing
    best: tuple[float, float, Backtest | None] | None = None
    moved = {"low": False, "high": False}
    bounds = (low, high)

    def run(x: float) -> float:
        nonlocal best
        saved, result = saved_by(make(x))
        if best is None or abs(saved - target) < best[0]:
            best = (abs(saved - target), x, result)
        bar.set_postfix_str(f"x = {x:g}: {saved:,.2f} saved (target {target:,.2f})")
        bar.update()
        return saved

    try:
        for _ in range(steps):
            mid = (low + high) / 2.0
            if run(mid) > target:
                low, moved["low"] = mid, True
            else:
                high, moved["high"] = mid, True
        for end, side, beyond in ((bounds[1], "high", "more"), (bounds[0], "low", "less")):
            if moved[side]:
                continue
            bar.total += 1
            saved = run(end)
            if (saved > target) if side == "high" else (saved < target):
                raise ValueError(
                    f"match_cost_saved: target cost saved {target:,.2f} is out of reach: x = "
                    f"{end:g} (the {side} end of {bounds[0]:g} to {bounds[1]:g}) saves "
                    f"{saved:,.2f}, {beyond} than the target; widen the range or choose a "
                    "reachable target"
                )
    finally:
        bar.close()
    assert best is not None
    return best[1], best[2] or backtest(make(best[1]), stats, **options)


def _bar(steps: int, shown: bool) -> Any:
    """A progress bar of ``steps`` steps (shown or not)."""
    from tqdm.auto import tqdm

    return tqdm(total=steps, desc="matching the cost saved", unit="step", disable=not shown)


class _Saver:
    """The cost saved of a rule set (the first of several) in a backtest of ``stats`` with
    ``options``, and the backtest when one was run: read off :class:`Looks` where
    :func:`own_stops` admits the set, else by :func:`~toolkit.rules.backtest.backtest`."""

    def __init__(self, stats: Any, options: Mapping[str, Any]) -> None:
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise TypeError(f"match_cost_saved: unknown option(s) {', '.join(unknown)}")
        self.stats, self.options = stats, dict(options)
        self.looks: Looks | None = None

    def __call__(self, rules: Any) -> tuple[float, Backtest | None]:
        first = next(iter(_rule_sets(rules).values()))
        if not own_stops(first):
            result = backtest(rules, self.stats, **{**self.options, "progress": False})
            return float(result.summary["cost_saved"].iloc[0]), result
        if self.looks is None:
            self.looks = self._looks()
        return self.looks.cost_saved(first), None

    def _looks(self) -> Looks:
        o = self.options
        read = {k: o.get(k) for k in ("date_format", "decimal", "campaign_map")}
        daily, days, _, known = replayed_days(
            self.stats,
            o.get("start"),
            o.get("end"),
            o.get("columns"),
            read,
            delay=o.get("delay"),
            complete=bool(o.get("complete", False)),
        )
        if o.get("truth") is not None:
            truth_items(o["truth"], daily)  # a bad truth refused now, as a backtest does
        return Looks(daily, days, o.get("formats"), known)


_OPTIONS = (
    "truth",
    "formats",
    "start",
    "end",
    "columns",
    "date_format",
    "decimal",
    "campaign_map",
    "progress",
    "delay",
    "complete",
)

__all__ = ["OWN_METRICS", "Looks", "match_cost_saved", "own_stops"]
