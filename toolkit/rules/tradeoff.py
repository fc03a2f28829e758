"""The trade-off between rule families: each family over a range of thresholds, replayed
with daily looks over the same statistics, what each threshold saved and lost, judged
against the truth.

The families (``X`` a cost in USD, window :data:`WINDOW` days, blacklisting the items):

- ``zero_conversion``: ``cost > X and conversions = 0``, the rule of the common tools;
- ``roi``: ``cost > X and roi < -R``;
- ``payout_multiple``: ``cost > k x payout and conversions = 0`` (``payout`` the truth's
  payout of the item's offer, which a buyer knows; else its campaign's revenue per
  conversion over the statistics);
- ``statistical``: the toolkit's statistical rule, ``p_loss >= T and clicks >= 200``
  (evidence by :func:`~toolkit.rules.item_evidence.evidence_of`, the prior of each campaign refitted
  on every look from what is still running; with ``delay``, the rule weighs the freshest
  clicks by the share of their conversions known, as a rule with ``delay:`` does).

The replay is the one of :func:`~toolkit.rules.backtest.backtest`, vectorised: on each look
day the window's sums as known that day (with ``delay``: the conversions known then, the
same draws as the backtest's, :class:`~toolkit.rules.known.Known`), a stopped item's rows
after its day gone. The sums are shared by every threshold.

>>> table = tradeoff(stats, truth)                                   # doctest: +SKIP
>>> at_equal_cost_saved(table)                                       # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .backtest import daily_stats, truth_items
from .daily import SPREAD_LEVELS, cpc_se
from .delay import Delay
from .item_evidence import evidence_of
from .known import replay_delay
from .model import load_rules

#: The window of every family's rules, in days.
WINDOW = 14
#: The least clicks of the statistical family.
MIN_CLICKS = 200
_COSTS = (1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 30.0, 50.0, 80.0, 120.0, 200.0)
#: Each family's default thresholds (``roi``: pairs ``(X, R)``).
FAMILIES: dict[str, tuple[Any, ...]] = {
    "zero_conversion": _COSTS,
    "roi": tuple((x, r) for r in (25.0, 50.0, 75.0) for x in _COSTS),
    "payout_multiple": (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0),
    "statistical": (0.6, 0.8, 0.9, 0.95, 0.98, 0.99),
}
#: The columns of :func:`tradeoff`'s table.
COLUMNS: tuple[str, ...] = (
    "family",
    "threshold",
    "roi_below",
    "rule",
    "cost_saved",
    "revenue_lost",
    "net",
    "stopped",
    "losers_stopped",
    "winners_stopped",
    "precision",
    "recall",
    "cost_weighted_recall",
)
_ITEM = ["campaign_id", "level", "key"]


@dataclass
class _Cube:
    """Per item (rows) and day (columns) of one statistics: dense sums, and the replay."""

    items: pd.DataFrame
    days: list[Any]
    clicks: np.ndarray
    cost: np.ndarray
    revenue: np.ndarray
    row_item: np.ndarray
    row_day: np.ndarray


def _cube(daily: pd.DataFrame) -> _Cube:
    items = daily[_ITEM].drop_duplicates().sort_values(_ITEM).reset_index(drop=True)
    days = sorted(set(daily["day"]))
    at = pd.MultiIndex.from_frame(items).get_indexer(pd.MultiIndex.from_frame(daily[_ITEM]))
    col = pd.Index(days).get_indexer(daily["day"])
    dense = {}
    for name in ("clicks", "cost", "revenue"):
        grid = np.zeros((len(items), len(days)))
        grid[at, col] = daily[name].to_numpy(dtype=float)
        dense[name] = grid
    return _Cube(items, days, dense["clicks"], dense["cost"], dense["revenue"], at, col)


def _grid(cube: _Cube, values: np.ndarray) -> np.ndarray:
    out = np.zeros_like(cube.clicks)
    out[cube.row_item, cube.row_day] = values
    return out


def _looks(cube: _Cube, looks: Any) -> list[int]:
    n = len(cube.days)
    if looks == "daily":
        return list(range(n))
    if isinstance(looks, int) and not isinstance(looks, bool) and looks >= 1:
        return list(range(n - 1, -1, -looks))[::-1]
    raise ValueError(f"looks {looks!r}: 'daily' or a whole number of days between looks")


class _Windows:
    """On each look, the window's sums per item as known that day, up to each item's stop."""

    def __init__(self, cube: _Cube, daily: pd.DataFrame, known: Any, profile: Delay | None):
        self.cube, self.daily, self.known, self.profile = cube, daily, known, profile
        self.full_conv = _grid(cube, daily["conversions"].to_numpy(dtype=float))

    def at(self, look: int) -> dict[str, np.ndarray]:
        """Cumulative sums along the days (a leading column of 0) as known on ``look``."""
        cube = self.cube
        if self.known is None:
            conv, rev = self.full_conv, cube.revenue
        else:
            c, r = self.known.on(cube.days[look])
            conv, rev = _grid(cube, c), _grid(cube, r)
        sums = {"clicks": cube.clicks, "cost": cube.cost, "conversions": conv, "revenue": rev}
        with np.errstate(divide="ignore", invalid="ignore"):  # toolkit.rules.daily's sums
            sums["square"] = np.where(cube.clicks > 0, cube.cost**2 / cube.clicks, 0.0)
        sums["days"] = (cube.clicks > 0).astype(float)
        if self.profile is not None:
            age = look - np.arange(len(cube.days))
            sums["eff_clicks"] = cube.clicks * self.profile.known(age)[None, :]
        return {
            k: np.concatenate([np.zeros((len(v), 1)), np.cumsum(v, 1)], 1) for k, v in sums.items()
        }

    @staticmethod
    def cut(cum: dict[str, np.ndarray], look: int, stop: np.ndarray) -> dict[str, np.ndarray]:
        """The window ending on ``look``, each item's rows after its stop (``stop`` >= 0)
        left out."""
        first = max(0, look - WINDOW + 1)
        last = np.where((stop >= 0) & (stop < look), stop, look)
        last = np.maximum(last, first - 1)
        rows = np.arange(len(stop))
        return {k: v[rows, last + 1] - v[rows, first] for k, v in cum.items()}


def _thresholds(families: Any) -> dict[str, tuple[Any, ...]]:
    if families is None:
        return dict(FAMILIES)
    if isinstance(families, str):
        families = [families]
    chosen = families if isinstance(families, Mapping) else {f: FAMILIES.get(f) for f in families}
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown:
        raise ValueError(
            f"families: unknown {', '.join(map(repr, unknown))}; known: {', '.join(FAMILIES)}"
        )
    return {f: tuple(v) for f, v in chosen.items()}


def _when(family: str, t: Any) -> tuple[str, float, float]:
    """The rule's condition, its threshold and its ``roi_below`` (NaN but for ``roi``)."""
    if family == "zero_conversion":
        return f"cost > {float(t):g} and conversions = 0", float(t), np.nan
    if family == "roi":
        x, r = (t, 50.0) if np.ndim(t) == 0 else t
        return f"cost > {float(x):g} and roi < -{float(r):g}", float(x), float(r)
    if family == "payout_multiple":
        return f"cost > {float(t):g} x payout and conversions = 0", float(t), np.nan
    if isinstance(t, str):  # a whole condition of the statistical family
        return t, np.nan, np.nan
    return f"p_loss >= {float(t):g} and clicks >= {MIN_CLICKS}", float(t), np.nan


def _simple_stops(
    family: str, specs: list[Any], windows: _Windows, looks: list[int], payout: np.ndarray
) -> np.ndarray:
    """Stops (look day index per item, -1 for none) of the families whose items do not
    depend on one another: one sum per look shared by every threshold."""
    n = len(windows.cube.items)
    stops = np.full((len(specs), n), -1)
    running = np.full(n, -1)
    for look in looks:
        w = windows.cut(windows.at(look), look, running)
        with np.errstate(divide="ignore", invalid="ignore"):
            roi = np.where(w["cost"] > 0, (w["revenue"] - w["cost"]) / w["cost"] * 100, np.nan)
        for i, t in enumerate(specs):
            _, x, r = _when(family, t)
            if family == "zero_conversion":
                hit = (w["cost"] > x) & (w["conversions"] == 0)
            elif family == "roi":
                hit = (w["cost"] > x) & (roi < -r)
            else:
                hit = (w["cost"] > x * payout) & (w["conversions"] == 0)
            stops[i] = np.where((stops[i] < 0) & hit, look, stops[i])
    return stops


def _statistical_stops(
    specs: list[Any], windows: _Windows, looks: list[int], level: str
) -> np.ndarray:
    """Stops of the statistical family: on each look the evidence of every threshold's
    running items (a campaign's prior refitted from what still runs), in one frame whose
    campaigns are numbered apart per threshold."""
    items = windows.cube.items
    n, k = len(items), len(specs)
    stops = np.full((k, n), -1)
    rules = [
        load_rules([{"level": level, "when": _when("statistical", t)[0], "action": "blacklist"}])[0]
        for t in specs
    ]
    spread = int(items["campaign_id"].max()) + 1 if n else 1
    base = pd.concat([items] * k, ignore_index=True)
    base["campaign_id"] = base["campaign_id"].to_numpy() + np.repeat(np.arange(k), n) * spread
    for look in looks:
        cum = windows.at(look)
        parts = [windows.cut(cum, look, stops[i]) for i in range(k)]
        frame = base.assign(**{c: np.concatenate([p[c] for p in parts]) for c in parts[0]})
        frame["impressions"] = 0.0
        if level in SPREAD_LEVELS:  # as toolkit.rules.decide reads them
            frame["cpc_se"] = cpc_se(frame["clicks"], frame["cost"], frame["square"], frame["days"])
        frame = frame.drop(columns="square")
        ev = evidence_of(frame, rules[0]).sort_values(["campaign_id", "key"], kind="stable")
        ev = (
            ev.set_index(["campaign_id", "key"])
            .reindex(pd.MultiIndex.from_frame(base[["campaign_id", "key"]]))
            .reset_index()
        )
        for i, rule in enumerate(rules):
            part = ev.iloc[i * n : (i + 1) * n].reset_index(drop=True)
            hit = np.ones(n, dtype=bool)
            for clause in rule.when:
                hit &= np.asarray(clause.holds(part), dtype=bool)
            stops[i] = np.where(
                (stops[i] < 0) & hit & (part["clicks"].to_numpy() > 0), look, stops[i]
            )
    return stops


def _score(
    family: str, specs: list[Any], stops: np.ndarray, cube: _Cube, judge: pd.DataFrame
) -> list[dict[str, Any]]:
    """One row per threshold: what its stops saved and lost after their day, judged."""
    after_cost = np.cumsum(cube.cost[:, ::-1], 1)[:, ::-1]  # cost from each day on
    after_rev = np.cumsum(cube.revenue[:, ::-1], 1)[:, ::-1]
    zero = np.zeros((len(cube.items), 1))
    after_cost = np.concatenate([after_cost[:, 1:], zero], 1)  # after each day
    after_rev = np.concatenate([after_rev[:, 1:], zero], 1)
    at = pd.MultiIndex.from_frame(judge[_ITEM]).get_indexer(pd.MultiIndex.from_frame(cube.items))
    known = at >= 0
    loser = np.where(known, judge["loser"].to_numpy(dtype=bool)[np.maximum(at, 0)], False)
    winner = known & ~loser
    losers_cost = after_cost[loser, 0].sum()  # the most stopping them on the first day saves
    rows = []
    for spec, stop in zip(specs, stops, strict=True):
        when, x, r = _when(family, spec)
        hit = stop >= 0
        saved = np.where(hit, after_cost[np.arange(len(stop)), np.maximum(stop, 0)], 0.0)
        lost = np.where(hit, after_rev[np.arange(len(stop)), np.maximum(stop, 0)], 0.0)
        rows.append(
            {
                "family": family,
                "threshold": x,
                "roi_below": r,
                "rule": when,
                "cost_saved": float(saved.sum()),
                "revenue_lost": float(lost.sum()),
                "stopped": int(hit.sum()),
                "losers_stopped": int((hit & loser).sum()),
                "winners_stopped": int((hit & winner).sum()),
                "losers": int(loser.sum()),
                "losers_saved": float(saved[loser].sum()),
                "losers_cost": float(losers_cost),
            }
        )
    return rows


#: The sums of :func:`_score`'s rows that several levels add up.
_SUMMED = (
    "cost_saved",
    "revenue_lost",
    "stopped",
    "losers_stopped",
    "winners_stopped",
    "losers",
    "losers_saved",
    "losers_cost",
)


def _finished(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """:data:`COLUMNS` from the sums of :func:`_score` (of one level, or added up)."""
    t = pd.DataFrame(rows)
    if t.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    judged = t["losers_stopped"] + t["winners_stopped"]
    t["net"] = t["cost_saved"] - t["revenue_lost"]
    t["precision"] = (t["losers_stopped"] / judged).where(judged > 0)
    t["recall"] = (t["losers_stopped"] / t["losers"]).where(t["losers"] > 0)
    t["cost_weighted_recall"] = (t["losers_saved"] / t["losers_cost"]).where(t["losers_cost"] > 0)
    return t.reindex(columns=list(COLUMNS))


def _payouts(cube: _Cube, judge: pd.DataFrame, daily: pd.DataFrame) -> np.ndarray:
    """Per item, the truth's payout, else its campaign's revenue per conversion."""
    by = daily.groupby("campaign_id")[["revenue", "conversions"]].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        campaign = (by["revenue"] / by["conversions"]).where(by["conversions"] > 0)
    out = cube.items["campaign_id"].map(campaign).to_numpy(dtype=float)
    if "payout" in judge:
        at = pd.MultiIndex.from_frame(judge[_ITEM]).get_indexer(
            pd.MultiIndex.from_frame(cube.items)
        )
        truth = judge["payout"].to_numpy(dtype=float)[np.maximum(at, 0)]
        out = np.where((at >= 0) & np.isfinite(truth), truth, out)
    return out


def tradeoff(
    stats: Any,
    truth: Any,
    families: Any = None,
    *,
    delay: Any = None,
    looks: Any = "daily",
    level: str | Sequence[str] = "subid",
    complete: bool = False,
    **read: Any,
) -> pd.DataFrame:
    """One row per family and threshold (:data:`COLUMNS`): the family's rule at that
    threshold replayed over ``stats`` (a stats frame or an export's path; ``read``: the
    reader's options, see :func:`~toolkit.rules.backtest.daily_stats`) at ``level``,
    looking every day (``looks="daily"``) or every ``looks`` days, judged by ``truth``
    (:func:`~toolkit.rules.backtest.truth_items`).

    ``families``: None for every family of :data:`FAMILIES` with its default thresholds, a
    list of their names, or ``{name: thresholds}`` (``roi``: ``(X, R)`` pairs or ``X`` with
    ``R = 50``; ``statistical``: ``T`` of ``p_loss >= T``, or a whole condition). ``delay``
    and ``complete``: as for :func:`~toolkit.rules.backtest.backtest` (a simulation of what
    was known on each day; the statistical rule is told the profile). ``cost_saved`` and
    ``revenue_lost``: what the stopped items went on to spend and earn after their day;
    ``cost_weighted_recall``: the true losers' cost saved over all the true losers' cost
    after the first day (what stopping every loser on the first day would save).

    ``level``: one level, or several (``("subid", "source")``): each family's rule at each
    of them, as a rule set with one rule per level; each level is replayed on its own (a
    rule stops items of its level only) and the rows add up the levels' stops, cost saved
    and revenue lost (precision and recall over all of them). Without ``delay`` the figures
    are those of :func:`~toolkit.rules.backtest.backtest`'s summary of that rule set
    (tests/test_rules_tradeoff.py compares them), in a fraction of its time.

    >>> tradeoff(stats, truth, ["zero_conversion", "statistical"])  # doctest: +SKIP
    >>> tradeoff(stats, truth, {"roi": [(40, 50)]}, level=("subid", "source"))  # doctest: +SKIP
    """
    columns = read.pop("columns", None)
    levels = [level] if isinstance(level, str) else list(level)
    if not levels or len(set(levels)) < len(levels):
        raise ValueError(f"tradeoff: level must name one level or several, each once: {level!r}")
    whole = daily_stats(stats, columns, **read)
    chosen = _thresholds(families)
    per_level: list[list[dict[str, Any]]] = []
    said: dict[str, str] = {}  # each profile replayed, and a level it was for
    for one in levels:
        daily = whole[whole["level"] == one].reset_index(drop=True)
        if daily.empty:
            raise ValueError(f"tradeoff: the statistics have no rows at level {one!r}")
        profile, known = replay_delay(delay, daily, complete=complete)
        if profile is not None:  # estimated per level with "auto"
            said[str(profile)] = one
        per_level.append(_level_rows(daily, one, chosen, truth, known, profile, looks))
    summed = [dict(row) for row in per_level[0]]
    for rows in per_level[1:]:  # the same families and thresholds in the same order
        for total, row in zip(summed, rows, strict=True):
            for name in _SUMMED:
                total[name] += row[name]
    table = _finished(summed)
    table.attrs["delay"] = "; ".join(said) or "none replayed"
    return table


def _level_rows(
    daily: pd.DataFrame,
    level: str,
    chosen: Mapping[str, tuple[Any, ...]],
    truth: Any,
    known: Any,
    profile: Delay | None,
    looks: Any,
) -> list[dict[str, Any]]:
    """:func:`_score`'s rows of every family and threshold replayed at one level."""
    cube = _cube(daily)
    judge = truth_items(truth, daily)
    windows = _Windows(cube, daily, known, profile)
    plan = _looks(cube, looks)
    rows: list[dict[str, Any]] = []
    for family, specs in chosen.items():
        specs = list(specs)
        if family == "statistical":
            stops = _statistical_stops(specs, windows, plan, level)
        else:
            stops = _simple_stops(family, specs, windows, plan, _payouts(cube, judge, daily))
        rows += _score(family, specs, stops, cube, judge)
    return rows


def _efficient(points: pd.DataFrame) -> pd.DataFrame:
    """The points on the upper hull of net against cost saved (``points`` sorted by cost
    saved, one per cost saved): a threshold whose net lies below the line between two others
    is left out, since mixing those two (each on part of the items) would do better. This
    gives every family its best trade-offs, the benefit of the doubt in a comparison."""
    x, y = points["cost_saved"].to_numpy(float), points["net"].to_numpy(float)
    hull: list[int] = []
    for i in range(len(x)):
        while len(hull) >= 2:
            j, k = hull[-2], hull[-1]
            if (y[k] - y[j]) * (x[i] - x[j]) <= (y[i] - y[j]) * (x[k] - x[j]):
                hull.pop()  # k lies on or below the line from j to i
            else:
                break
        hull.append(i)
    return points.iloc[hull]


def _curve(points: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """A family's net at each cost saved of ``grid``: interpolated along each of its curves
    (one per ``roi_below``) along its upper hull (:func:`_efficient`), the best
    of those that reach it; NaN where none does."""
    best = np.full(len(grid), np.nan)
    for _, curve in points.groupby(points["roi_below"].fillna(-1.0), sort=False):
        c = _efficient(curve.groupby("cost_saved", as_index=False)["net"].max())
        x, y = c["cost_saved"].to_numpy(), c["net"].to_numpy()
        inside = (grid >= x.min() - 1e-9) & (grid <= x.max() + 1e-9)
        net = np.where(inside, np.interp(grid, x, y), np.nan)
        best = np.fmax(best, net)
    return best


def at_equal_cost_saved(table: pd.DataFrame, levels: int | Sequence[float] = 9) -> pd.DataFrame:
    """Per family (a column each), the net interpolated along its thresholds' upper hull (for
    ``roi``, the best of its curves, one per ``R``) at cost saved levels that every family
    reaches: ``levels`` evenly spaced over the common range, or the levels given. No
    extrapolation: a level outside the common range is refused.

    >>> at_equal_cost_saved(tradeoff(stats, truth))                   # doctest: +SKIP
    """
    groups = dict(list(table.groupby("family", sort=False)))
    lo = max(float(g["cost_saved"].min()) for g in groups.values())
    hi = min(float(g["cost_saved"].max()) for g in groups.values())
    if lo > hi:
        reach = ", ".join(
            f"{f} {g['cost_saved'].min():,.0f} to {g['cost_saved'].max():,.0f}"
            for f, g in groups.items()
        )
        raise ValueError(f"at_equal_cost_saved: no cost saved every family reaches ({reach})")
    grid = np.linspace(lo, hi, levels) if isinstance(levels, int) else np.asarray(levels, float)
    if len(grid) and (grid.min() < lo - 1e-9 or grid.max() > hi + 1e-9):
        raise ValueError(
            f"at_equal_cost_saved: levels must lie within {lo:,.2f} to {hi:,.2f}, the cost "
            "saved every family reaches (no extrapolation)"
        )
    out = pd.DataFrame({"cost_saved": grid})
    for family, points in groups.items():
        out[family] = _curve(points, grid)
    return out


__all__ = ["COLUMNS", "FAMILIES", "WINDOW", "at_equal_cost_saved", "tradeoff"]
