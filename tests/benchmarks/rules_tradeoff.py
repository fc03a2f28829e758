"""The rules buyers write against the toolkit's statistical rules, on statistics with a known
truth drawn by our own generator (``tests/benchmarks/truth_gen.py``, not the sandbox's demo
statistics): what each saves, what it costs in revenue, and how often it stops a winner.

Run: ``python tests/benchmarks/rules_tradeoff.py [--out DIR] [--quick] [--seed 1] [--days 28]
[--window 14] [--settings high_fat ...] [--stat-when "p_loss >= {p}"] [--stat-extra JSON]``.
Not part of the test suite.

For each setting of :data:`truth_gen.SETTINGS` (traffic x margin, and many low-traffic items),
without and with conversion delay, every rule family is replayed day by day (one look a day,
each rule's ``window`` ending on the look day; a stopped subId gets no traffic from the next
day on):

- ``zero_conversion``: ``cost > X and conversions = 0``;
- ``roi``: ``cost > X and roi < -R``;
- ``payout_multiple``: ``cost > k x payout and conversions = 0`` (the campaign's payout, as a
  buyer who knows the offer writes it: one rule per campaign);
- ``statistical``: the toolkit's rule, ``p_loss >= p`` (``--stat-when``), decided by
  :func:`toolkit.rules.decide.decide` on the export as it was known on each look day.

With delay, each look sees the export as downloaded that day (the freshest days short of the
conversions still to come); what a stop saved and lost is read from the complete statistics
after its day. The threshold families decide on the toolkit's own evidence and clauses
(:func:`~toolkit.rules.decide.evidence_of`, :meth:`Clause.holds`); an item's threshold
condition reads only its own numbers, so its first day is the same with or without the other
stops and all thresholds share one pass. The statistical rule reads its campaign's other
items (the prior), so each threshold is its own replay. Without delay, one statistical replay
is checked against :func:`toolkit.rules.backtest` (the same cost saved and revenue lost).

Printed and written under ``--out`` (``tradeoff.csv``, ``equal_cost.csv``,
``calibration.csv``, ``report.md``): per setting and family the trade-off (cost saved against
revenue lost), the net at equal cost saved (interpolated along each family's efficient points
at cost-saved levels both reach; no extrapolation), winners stopped against the rate the
statistical threshold promises (over the daily looks, and on one look on the last day), and
cost-weighted recall (the true losers' cost after the first look that the stops saved).
A *winner* is an item whose true value per click (averaged over the window) is at least its
cost per click; ``steady_winner_share`` counts only the items without drift or a late start,
whose rate is one number all along (the cleanest check of the promised rate).

To measure another copy of the toolkit (the last commit, say), put it first on the path:
``git archive HEAD toolkit | tar -x -C /tmp/base && PYTHONPATH=/tmp/base python
tests/benchmarks/rules_tradeoff.py``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after PYTHONPATH: another copy of the toolkit may be measured

import truth_gen  # noqa: E402

from toolkit.rules.decide import DECIDED, decide, evidence_of  # noqa: E402
from toolkit.rules.model import load_rules  # noqa: E402

_ITEM = ["campaign_id", "level", "key"]
FULL = {
    "zero_conversion": [0.5, 1, 2, 3, 5, 8, 12, 20, 30, 50, 80, 120, 200],
    "roi": [(x, r) for x in (1, 2, 5, 10, 20, 50, 100) for r in (20, 30, 50, 70, 90)],
    "payout_multiple": [0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 10],
    "statistical": [0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999],
}
QUICK = {
    "zero_conversion": [1, 3, 8, 30, 80],
    "roi": [(x, r) for x in (2, 10, 50) for r in (30, 50)],
    "payout_multiple": [0.5, 1, 2, 4],
    "statistical": [0.8, 0.95, 0.999],
}


class Data:
    """One generated data set made ready for replays: items numbered, per item and day its
    clicks, cost and conversions by days of delay (so the window sums as known on any look
    day, with any stops, are array sums), the losers."""

    def __init__(self, gen: truth_gen.Generated, window: int | None) -> None:
        self.gen, self.window = gen, window
        self.days = gen.days
        final = gen.final
        items = final[_ITEM].drop_duplicates().reset_index(drop=True)
        items["item"] = np.arange(len(items))
        self.items = items
        index = pd.MultiIndex.from_frame(items[_ITEM])
        row = index.get_indexer(pd.MultiIndex.from_frame(final[_ITEM]))
        first = self.days[0]
        t = np.array([(d - first).days for d in final["date"].dt.date])
        shape = (len(items), len(self.days))
        self.sums = {c: np.zeros(shape) for c in ("impressions", "clicks", "cost", "revenue")}
        for col, arr in self.sums.items():
            np.add.at(arr, (row, t), final[col].to_numpy(dtype=float))
        self.cost, self.revenue = self.sums["cost"], self.sums["revenue"]
        lags = np.zeros((*shape, gen.lags.shape[1]))
        np.add.at(lags, (row, t), gen.lags)
        self.known_by_age = np.cumsum(lags, axis=2)  # conversions known `age` days after
        judged = truth_gen.losers(gen).merge(items, on=_ITEM)
        self.loser = np.zeros(len(items), dtype=bool)
        self.loser[judged["item"].to_numpy()] = judged["loser"].to_numpy()
        self.payout = dict(zip(gen.truth["campaign_id"], gen.truth["payout"], strict=False))
        self.item_payout = items["campaign_id"].map(self.payout).to_numpy()
        kinds = gen.kinds.merge(items, on=_ITEM)
        self.stationary = np.zeros(len(items), dtype=bool)
        steady = (kinds["slope"] == 0) & (kinds["start"] == 0)
        self.stationary[kinds["item"].to_numpy()] = steady.to_numpy()

    def seen(self, t: int, stop: np.ndarray | None = None) -> pd.DataFrame:
        """One row per item (dated look day ``t``): its sums over the window ending on ``t``
        as the export downloaded that day shows them, without the days after its ``stop``."""
        lo = 0 if self.window is None else max(0, t - self.window + 1)
        span = np.arange(len(self.days))
        keep = (span >= lo) & (span <= t)
        mask = np.broadcast_to(keep, self.cost.shape)
        if stop is not None:
            mask = mask & (span[None, :] <= stop[:, None])
        age = np.clip(t - span, 0, self.known_by_age.shape[2] - 1)
        known = np.take_along_axis(
            self.known_by_age, np.broadcast_to(age, self.cost.shape)[:, :, None], axis=2
        )[:, :, 0]
        out = self.items[_ITEM].copy()
        for col in ("impressions", "clicks", "cost"):
            out[col] = (self.sums[col] * mask).sum(axis=1)
        out["conversions"] = (known * mask).sum(axis=1)
        out["revenue"] = (out["conversions"] * self.item_payout).round(2)
        out.insert(0, "date", pd.Timestamp(self.days[t], tz="UTC"))
        return out[out["clicks"].to_numpy() > 0]

    def rows(self, t: int, stop: np.ndarray) -> pd.DataFrame:
        """The export as downloaded on look day ``t``: a row per item and day up to ``t`` (each
        day's conversions as known on ``t``), without the days after an item's ``stop``."""
        span = np.arange(len(self.days))
        mask = (span[None, :] <= min(t, len(span) - 1)) & (span[None, :] <= stop[:, None])
        mask &= self.sums["clicks"] > 0
        i, day = np.nonzero(mask)
        age = np.clip(t - day, 0, self.known_by_age.shape[2] - 1)
        conv = self.known_by_age[i, day, age]
        dates = pd.DatetimeIndex([pd.Timestamp(d, tz="UTC") for d in self.days])
        out = self.items[_ITEM].iloc[i].reset_index(drop=True)
        out.insert(0, "date", dates[day])
        for col in ("impressions", "clicks", "cost"):
            out[col] = self.sums[col][i, day]
        out["conversions"] = conv
        out["revenue"] = (conv * self.item_payout[i]).round(2)
        return out

    def after(self, stops: dict[int, int]) -> dict[str, Any]:
        """What stopping item ``i`` after day index ``t`` (``{i: t}``) saved and lost."""
        items = np.fromiter(stops.keys(), dtype=int, count=len(stops))
        ts = np.fromiter(stops.values(), dtype=int, count=len(stops))
        later = np.arange(len(self.days))[None, :] > ts[:, None]
        saved = (self.cost[items] * later).sum(axis=1)
        lost = (self.revenue[items] * later).sum(axis=1)
        loser = self.loser[items]
        possible = (self.cost[self.loser][:, 1:]).sum()
        n, steady = len(items), self.stationary[items]
        return {
            "stopped": n,
            "losers_stopped": int(loser.sum()),
            "winners_stopped": int((~loser).sum()),
            "cost_saved": float(saved.sum()),
            "revenue_lost": float(lost.sum()),
            "net": float(saved.sum() - lost.sum()),
            "precision": float(loser.mean()) if n else np.nan,
            "winner_share": float((~loser).mean()) if n else np.nan,
            "steady_winner_share": float((~loser[steady]).mean()) if steady.any() else np.nan,
            "recall": float(loser.sum() / self.loser.sum()) if self.loser.any() else np.nan,
            "cost_weighted_recall": float(saved[loser].sum() / possible) if possible else np.nan,
        }


def _rule(name: str, when: str, window: int | None, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "level": "subid",
        "when": when,
        "action": "blacklist",
        "window": window,
        **extra,
    }


def threshold_rules(grid: dict[str, list], window: int | None) -> list[tuple[str, Any, str]]:
    """``(family, threshold, when)`` of every threshold rule of the grid (``payout_multiple``'s
    ``when`` is written with ``k x payout``; it is evaluated per campaign)."""
    out = []
    for x in grid["zero_conversion"]:
        out.append(("zero_conversion", x, f"cost > {x} and conversions = 0"))
    for x, r in grid["roi"]:
        out.append(("roi", f"{x}/{r}", f"cost > {x} and roi < -{r}"))
    for k in grid["payout_multiple"]:
        out.append(("payout_multiple", k, f"cost > {k} x payout and conversions = 0"))
    return out


def threshold_pass(data: Data, rules: list[tuple[str, Any, str]], window: int | None) -> list:
    """The first look day each threshold rule holds for each item (one pass over the looks,
    the toolkit's evidence and clauses)."""
    base = load_rules([_rule("base", "clicks > 0", window)])[0]
    loaded = []
    for _family, x, when in rules:
        clause_text = when.replace(f"cost > {x} x payout and ", "")
        loaded.append(load_rules([_rule("r", clause_text, window)])[0])
    first: list[dict[int, int]] = [{} for _ in rules]
    for t in range(len(data.days)):
        ev = evidence_of(data.seen(t).drop(columns="date"), base).merge(data.items, on=_ITEM)
        pay = ev["campaign_id"].map(data.payout).to_numpy()
        for j, ((family, x, _), rule) in enumerate(zip(rules, loaded, strict=True)):
            hit = np.ones(len(ev), dtype=bool)
            for clause in rule.when:
                hit &= clause.holds(ev)
            if family == "payout_multiple":
                hit &= ev["cost"].to_numpy() > x * pay
            for i in ev["item"].to_numpy()[hit]:
                first[j].setdefault(int(i), t)
    return first


#: What the toolkit warned of during the replays (dates taken out), and how often.
WARNED: dict[str, int] = {}


def _decide(rule: dict[str, Any], rows: pd.DataFrame, day: Any) -> pd.DataFrame:
    """:func:`decide`, its warnings counted in :data:`WARNED` instead of shown."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = decide([rule], rows, as_of=day)
    for w in caught:
        text = re.sub(r"\d{4}-\d\d-\d\d", "DAY", str(w.message))
        WARNED[text] = WARNED.get(text, 0) + 1
    return made


def statistical_replay(data: Data, rule: dict[str, Any]) -> dict[int, int]:
    """One statistical rule replayed with stops: ``{item: day index of its stop}``."""
    stop = np.full(len(data.items), len(data.days) + 1)
    first: dict[int, int] = {}
    for t, day in enumerate(data.days):
        made = _decide(rule, data.rows(t, stop), day)
        made = made[made["status"] == DECIDED]
        if made.empty:
            continue
        hit = made[_ITEM].merge(data.items, on=_ITEM)["item"].to_numpy()
        for i in hit:
            if int(i) not in first:
                first[int(i)] = t
                stop[i] = t
    return first


def one_look(data: Data, rule: dict[str, Any]) -> dict[str, Any]:
    """The statistical rule decided once, on the last day's export: its winners' share."""
    day = data.days[-1]
    stop = np.full(len(data.items), len(data.days))
    made = _decide(rule, data.rows(len(data.days) - 1, stop), day)
    made = made[made["status"] == DECIDED]
    hit = made[_ITEM].merge(data.items, on=_ITEM)["item"].to_numpy()
    loser, steady = data.loser[hit], data.stationary[hit]
    return {
        "one_look_stopped": len(hit),
        "one_look_winner_share": float((~loser).mean()) if len(hit) else np.nan,
        "one_look_steady_winner_share": float((~loser[steady]).mean()) if steady.any() else np.nan,
    }


def check_backtest(data: Data, rule: dict[str, Any], mine: dict[str, Any]) -> str:
    """The same rule through :func:`toolkit.rules.backtest`: do the figures agree?"""
    from toolkit.rules import backtest

    got = backtest([rule], data.gen.final, truth=data.gen.truth).summary.iloc[0]
    same = all(
        abs(float(got[c]) - mine[c]) <= 1e-6 * max(1.0, abs(mine[c]))
        for c in ("cost_saved", "revenue_lost", "winners_stopped", "losers_stopped")
    )
    return (
        "agrees"
        if same
        else (
            f"DIFFERS: backtest cost_saved {got['cost_saved']:.2f} revenue_lost "
            f"{got['revenue_lost']:.2f} winners {got['winners_stopped']}; replay "
            f"{mine['cost_saved']:.2f} {mine['revenue_lost']:.2f} {mine['winners_stopped']}"
        )
    )


def _point(text: str) -> float | str:
    """A value of ``--stat-grid``: ``p``, or ``p:x`` (a second parameter, ``{x}``)."""
    return text if ":" in text else float(text)


def stat_when(template: str, point: float | str) -> tuple[float, str]:
    """``p`` and the statistical condition of a grid point (``p`` or ``"p:x"``)."""
    p_text, _, x = str(point).partition(":")
    p = float(p_text)
    return p, template.format(p=p, q=1 - p, x=x)


def grid_names(grid: dict[str, list]) -> set[str]:
    """The statistical thresholds of a grid, as the rows name them."""
    return {str(p) for p in grid["statistical"]}


def check_tradeoff(rows: list[dict[str, Any]], data: Data) -> str:
    """Three of the rows through ``toolkit.rules.tradeoff`` (when the toolkit has it): the
    same stops, cost saved and revenue lost?"""
    try:
        from toolkit.rules.tradeoff import tradeoff
    except ImportError:
        return "no toolkit.rules.tradeoff"
    picks = {"zero_conversion": ("5", (5.0,)), "roi": ("20/50", ((20.0, 50.0),))}
    picks["statistical"] = ("0.95", ("p_loss >= 0.95",))
    theirs = tradeoff(data.gen.final, data.gen.truth, {f: v[1] for f, v in picks.items()})
    bad = []
    for (family, (mine_t, _)), (_, got) in zip(picks.items(), theirs.iterrows(), strict=True):
        mine = next(r for r in rows if r["family"] == family and r["threshold"] == mine_t)
        for col in ("cost_saved", "revenue_lost", "winners_stopped", "losers_stopped"):
            if abs(float(got[col]) - mine[col]) > 1e-6 * max(1.0, abs(mine[col])):
                bad.append(f"{family} {col} {got[col]:.2f} (tradeoff) vs {mine[col]:.2f}")
    return "agrees" if not bad else "DIFFERS: " + "; ".join(bad)


def run_one(data: Data, grid: dict[str, list], args: argparse.Namespace) -> tuple[list, list]:
    """Every family's rows and the statistical rule's calibration rows of one data set."""
    rows, calib = [], []
    rules = threshold_rules(grid, args.window)
    for (family, x, when), first in zip(
        rules, threshold_pass(data, rules, args.window), strict=True
    ):
        rows.append({"family": family, "threshold": str(x), "rule": when, **data.after(first)})
    extra = json.loads(args.stat_extra) if args.stat_extra else {}
    if data.gen.delay and args.stat_extra_delayed:
        extra |= json.loads(args.stat_extra_delayed)
    for point in grid["statistical"]:
        p, when = stat_when(args.stat_when, point)
        rule = _rule(f"p{point}", when, args.window, **extra)
        row = {
            "family": "statistical",
            "threshold": str(point),
            "rule": when,
            **data.after(statistical_replay(data, rule)),
        }
        rows.append(row)
        calib.append(
            {
                "threshold": str(point),
                "promised": round(1 - p, 4) if 0 < p < 1 else np.nan,
                "stopped": row["stopped"],
                "winners_stopped": row["winners_stopped"],
                "winner_share": row["winner_share"],
                "steady_winner_share": row["steady_winner_share"],
                **one_look(data, rule),
            }
        )
        if not data.gen.delay and p == 0.95 and args.check and not args.quick:
            row["backtest_check"] = check_backtest(data, rule, row)
    if not data.gen.delay and args.check and not args.quick and "0.95" in grid_names(grid):
        rows[-1]["tradeoff_check"] = check_tradeoff(rows, data)
    return rows, calib


# --- comparisons ---------------------------------------------------------------------------


def frontier(points: pd.DataFrame) -> pd.DataFrame:
    """A family's efficient points: none other saves at least as much and loses less."""
    pts = points[points["stopped"] > 0].sort_values(["cost_saved", "revenue_lost"])
    keep, best = [], np.inf
    for i, row in pts.iloc[::-1].iterrows():  # from the most cost saved down
        if row["revenue_lost"] < best:
            keep.append(i)
            best = row["revenue_lost"]
    return pts.loc[keep].sort_values("cost_saved")


def lost_at(front: pd.DataFrame, level: np.ndarray) -> np.ndarray:
    return np.interp(level, front["cost_saved"], front["revenue_lost"])


def equal_cost(table: pd.DataFrame, ours: str = "statistical", points: int = 9) -> list[dict]:
    """Per family against ``ours``: nets at ``points`` cost-saved levels both reach."""
    out = []
    mine = frontier(table[table["family"] == ours])
    others = {f: table[table["family"] == f] for f in table["family"].unique() if f != ours}
    others["best buyer rule"] = table[table["family"] != ours]
    for family, rows in others.items():
        theirs = frontier(rows)
        if mine.empty or theirs.empty:
            continue
        lo = max(mine["cost_saved"].min(), theirs["cost_saved"].min())
        hi = min(mine["cost_saved"].max(), theirs["cost_saved"].max())
        if hi <= lo:
            out.append({"family": family, "levels": 0})
            continue
        level = np.linspace(lo, hi, points)
        a, b = lost_at(mine, level), lost_at(theirs, level)
        net_a, net_b = level - a, level - b
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(b > 0, (a - b) / b * 100, np.nan)
        net_rel = (net_a - net_b) / level * 100  # of the cost saved: stable where nets are ~0
        out.append(
            {
                "family": family,
                "levels": points,
                "cost_saved_from": lo,
                "cost_saved_to": hi,
                "revenue_lost_diff_pct_min": np.nanmin(rel),
                "revenue_lost_diff_pct_max": np.nanmax(rel),
                "net_diff_min": float((net_a - net_b).min()),
                "net_diff_max": float((net_a - net_b).max()),
                "net_diff_of_saved_pct_min": np.nanmin(net_rel),
                "net_diff_of_saved_pct_max": np.nanmax(net_rel),
                "statistical_wins_everywhere": bool((net_a >= net_b - 1e-9).all()),
            }
        )
    return out


def best_net(table: pd.DataFrame) -> pd.DataFrame:
    """Per setting, delay and family, its threshold with the largest net (tuned in hindsight,
    on the very data it is scored on: the most a buyer could get from the family)."""
    keys = ["setting", "delay", "family"]
    top = table.loc[table.groupby(keys, sort=False)["net"].idxmax()]
    cols = [
        *keys,
        "threshold",
        "net",
        "cost_saved",
        "revenue_lost",
        "winners_stopped",
        "precision",
        "cost_weighted_recall",
    ]
    return top[cols].reset_index(drop=True)


def headline(table: pd.DataFrame, equal: pd.DataFrame, calib: pd.DataFrame) -> pd.DataFrame:
    """One row per setting and delay: the statistical rule against the zero-conversion and
    the ROI families at equal cost saved (ranges over the levels both reach), each family's
    best net, and the winners' share of the stops at ``p_loss >= 0.95``."""
    rows = []
    for (setting, delay), eq in equal.groupby(["setting", "delay"], sort=False):
        row: dict[str, Any] = {"setting": setting, "delay": delay}
        for family, short in (("zero_conversion", "zero"), ("roi", "roi")):
            e = eq[eq["family"] == family]
            if len(e) and e["levels"].iloc[0]:
                lo, hi = e["revenue_lost_diff_pct_min"].iloc[0], e["revenue_lost_diff_pct_max"]
                row[f"rev_lost_vs_{short}_%"] = f"{lo:+.0f}..{hi.iloc[0]:+.0f}"
                a, b = e["net_diff_of_saved_pct_min"].iloc[0], e["net_diff_of_saved_pct_max"]
                row[f"net_vs_{short}_%saved"] = f"{a:+.1f}..{b.iloc[0]:+.1f}"
            else:
                row[f"rev_lost_vs_{short}_%"] = row[f"net_vs_{short}_%saved"] = "no overlap"
        mine = table[(table["setting"] == setting) & (table["delay"] == delay)]
        best = mine.groupby("family")["net"].max()
        row["best_net_statistical"] = best.get("statistical", np.nan)
        row["best_net_buyer"] = best.drop("statistical", errors="ignore").max()
        row["best_buyer_family"] = best.drop("statistical", errors="ignore").idxmax()
        c = calib[(calib["setting"] == setting) & (calib["delay"] == delay)]
        c95 = c[c["threshold"].astype(str) == "0.95"]
        if len(c95):
            row["winners_at_0.95_daily"] = c95["winner_share"].iloc[0]
            row["winners_at_0.95_one_look"] = c95["one_look_winner_share"].iloc[0]
        rows.append(row)
    return pd.DataFrame(rows)


def holdout(
    table: pd.DataFrame, settings: list[str], days: int, args: argparse.Namespace
) -> pd.DataFrame:
    """Each family's threshold tuned on the run's seed (its best net there, as a buyer tunes
    a rule on last month), then scored on the ``--holdout`` seeds: data it was not tuned on.
    The statistical rule twice: tuned so too, and at the documented default ``p_loss >=
    0.95`` (tuned on nothing)."""
    seeds = [int(v) for v in args.holdout.split(",")]
    tuned = best_net(table)
    rows = []
    for name in settings:
        for delay in (False, True):
            picks = tuned[(tuned["setting"] == name) & (tuned["delay"] == delay)]
            chosen = {r.family: r.threshold for r in picks.itertuples()}
            train = {r.family: r.net for r in picks.itertuples()}
            stat_default = table[
                (table["setting"] == name)
                & (table["delay"] == delay)
                & (table["family"] == "statistical")
                & (table["threshold"] == "0.95")
            ]
            train["statistical at 0.95"] = (
                float(stat_default["net"].iloc[0]) if len(stat_default) else np.nan
            )
            chosen["statistical at 0.95"] = "0.95"
            nets: dict[str, list[float]] = {f: [] for f in chosen}
            for seed in seeds:
                gen = truth_gen.generate(name, seed=seed, days=days, delay=delay)
                data = Data(gen, args.window)
                rules = [
                    r
                    for r in threshold_rules(FULL if not args.quick else QUICK, args.window)
                    if chosen.get(r[0]) == str(r[1])
                ]
                for (family, _x, _when), first in zip(
                    rules, threshold_pass(data, rules, args.window), strict=True
                ):
                    nets[family].append(data.after(first)["net"])
                extra = json.loads(args.stat_extra) if args.stat_extra else {}
                if delay and args.stat_extra_delayed:
                    extra |= json.loads(args.stat_extra_delayed)
                done: dict[str, float] = {}
                for family in ("statistical", "statistical at 0.95"):
                    p = chosen.get(family)
                    if p is None:
                        continue
                    if p not in done:
                        _, when = stat_when(args.stat_when, p)
                        rule = _rule(f"p{p}", when, args.window, **extra)
                        done[p] = data.after(statistical_replay(data, rule))["net"]
                    nets[family].append(done[p])
                print(f"{name:>10} delay={delay!s:<5} holdout seed {seed}", flush=True)
            for family, got in nets.items():
                rows.append(
                    {
                        "setting": name,
                        "delay": delay,
                        "family": family,
                        "threshold": chosen[family],
                        "net_tuned_seed": train.get(family, np.nan),
                        **{f"net_seed_{s}": v for s, v in zip(seeds, got, strict=True)},
                        "net_holdout_mean": float(np.mean(got)) if got else np.nan,
                    }
                )
    return pd.DataFrame(rows)


# --- the run -------------------------------------------------------------------------------


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("rules-tradeoff"))
    p.add_argument("--quick", action="store_true", help="a smaller grid and 21 days (< 2 min)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--days", type=int, default=None, help="28 (21 with --quick)")
    p.add_argument("--window", type=int, default=14)
    p.add_argument("--settings", nargs="*", default=list(truth_gen.SETTINGS))
    p.add_argument("--stat-when", default="p_loss >= {p}")
    p.add_argument(
        "--stat-grid",
        default="",
        help="the values of {p} in --stat-when, comma-separated (default: the grid's); "
        "p:x also sets {x}, a second parameter (e.g. a cost gate)",
    )
    p.add_argument("--stat-extra", default="", help="more fields of the statistical rule, JSON")
    p.add_argument(
        "--stat-extra-delayed", default="", help="more fields for the runs with delay, JSON"
    )
    p.add_argument(
        "--holdout",
        default="",
        help="seeds to score each family's threshold tuned on --seed on, comma-separated",
    )
    p.add_argument("--no-check", dest="check", action="store_false")
    return p.parse_args(argv)


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return ""
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return str(value)


def _fmt(frame: pd.DataFrame) -> str:
    """A markdown table (no extra package)."""
    if not len(frame):
        return "(none)"
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    days = args.days or (21 if args.quick else 28)
    grid = dict(QUICK if args.quick else FULL)
    if args.stat_grid:
        grid["statistical"] = [_point(v) for v in args.stat_grid.split(",")]
    started, cpu = time.perf_counter(), time.process_time()
    tables, equal, calib = [], [], []
    for name in args.settings:
        for delay in (False, True):
            t0 = time.perf_counter()
            gen = truth_gen.generate(name, seed=args.seed, days=days, delay=delay)
            data = Data(gen, args.window)
            rows, cal = run_one(data, grid, args)
            label = {"setting": name, "delay": delay}
            table = pd.DataFrame(rows).assign(**label)
            tables.append(table)
            equal += [{**label, **e} for e in equal_cost(table)]
            calib += [{**label, **c} for c in cal]
            print(f"{name:>10} delay={delay!s:<5} {time.perf_counter() - t0:6.1f} s", flush=True)
    whole = pd.concat(tables, ignore_index=True)
    held = holdout(whole, args.settings, days, args) if args.holdout else None
    took = time.perf_counter() - started
    write(
        args,
        whole,
        pd.DataFrame(equal),
        pd.DataFrame(calib),
        {
            "days": days,
            "seed": args.seed,
            "window": args.window,
            "quick": args.quick,
            "seconds": round(took, 1),
            "cpu": round(time.process_time() - cpu, 1),
            "when": args.stat_when,
            "extra": f"{args.stat_extra} {args.stat_extra_delayed} (with delay)"
            if args.stat_extra_delayed
            else args.stat_extra,
        },
        held,
    )
    return 0


def write(
    args: argparse.Namespace,
    table: pd.DataFrame,
    equal: pd.DataFrame,
    calib: pd.DataFrame,
    meta: dict[str, Any],
    held: pd.DataFrame | None = None,
) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    if held is not None:
        held.to_csv(args.out / "holdout.csv", index=False)
    table.to_csv(args.out / "tradeoff.csv", index=False)
    equal.to_csv(args.out / "equal_cost.csv", index=False)
    calib.to_csv(args.out / "calibration.csv", index=False)
    cols = [
        "setting",
        "delay",
        "family",
        "threshold",
        "stopped",
        "winners_stopped",
        "cost_saved",
        "revenue_lost",
        "net",
        "precision",
        "cost_weighted_recall",
    ]
    eq_cols = [
        "setting",
        "delay",
        "family",
        "cost_saved_from",
        "cost_saved_to",
        "revenue_lost_diff_pct_min",
        "revenue_lost_diff_pct_max",
        "net_diff_min",
        "net_diff_max",
        "net_diff_of_saved_pct_min",
        "net_diff_of_saved_pct_max",
        "statistical_wins_everywhere",
    ]
    text = [
        "# Rule families on generated statistics with a known truth",
        "",
        f"Data: `tests/benchmarks/truth_gen.py` (ours), seed {meta['seed']}, {meta['days']} days,"
        f" window {meta['window']} days, daily looks. Statistical rule: `{meta['when']}`"
        f" {meta['extra']}. Run time {meta['seconds']} s ({meta['cpu']} s of CPU)"
        f"{' (--quick)' if meta['quick'] else ''}.",
        "",
        "## In short",
        "",
        "`rev_lost_vs_*`: the statistical rule's revenue lost against the family's at equal cost"
        " saved, in % (negative: it loses less); `net_vs_*_%saved`: its net less the family's,"
        " in % of the cost saved; ranges over the cost-saved levels both reach.",
        "",
        _fmt(headline(table, equal, calib)),
        "",
        "## Net at equal cost saved (statistical against each family; negative revenue-lost"
        " difference = the statistical rule loses less)",
        "",
        _fmt(equal.reindex(columns=eq_cols)),
        "",
        "## Each family's best net (its threshold tuned in hindsight on the same data)",
        "",
        _fmt(best_net(table)),
        "",
        *(
            [
                f"## On data they were not tuned on (seeds {args.holdout})",
                "",
                "Each family's threshold tuned on seed"
                f" {meta['seed']} (its best net there), scored on the other seeds; the"
                " statistical rule also at its default 0.95, tuned on nothing.",
                "",
                _fmt(held),
                "",
            ]
            if held is not None
            else []
        ),
        "## Winners stopped against the promised rate (statistical rule)",
        "",
        _fmt(calib),
        "",
        "## Every rule",
        "",
        _fmt(table.reindex(columns=cols)),
    ]
    for column, what in (
        ("backtest_check", "toolkit.rules.backtest (no delay, p_loss >= 0.95)"),
        ("tradeoff_check", "toolkit.rules.tradeoff (no delay, 3 rules)"),
    ):
        checks = table.get(column)
        if checks is None:
            continue
        text += [
            "",
            f"Replay against {what}: "
            + ", ".join(
                f"{s}: {c}"
                for s, c in zip(table["setting"], checks, strict=True)
                if isinstance(c, str)
            ),
        ]
    if WARNED:
        text += ["", "The toolkit warned during the replays (days as DAY):"]
        text += [f"- {n} x {message}" for message, n in WARNED.items()]
    (args.out / "report.md").write_text("\n".join(text) + "\n")
    print("\n".join(text[: text.index("## Every rule")] + text[-2:]))
    print(
        f"\nwritten to {args.out}/ (tradeoff.csv, equal_cost.csv, calibration.csv, report.md);"
        f" {meta['seconds']} s"
    )


if __name__ == "__main__":
    sys.exit(main())
