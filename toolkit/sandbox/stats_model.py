"""The model behind the demo statistics: one click stream per campaign, which its sources,
subIds and countries share, with a payout per country and conversion delay.

Per campaign: a base conversion rate, its bid unit and country bids, clicks a day, and per
level (``source``, ``subid``, ``country``) its items' shares of those clicks and their
conversion-rate factors; per country a payout (a per-GEO offer). The base rate and payouts
make a click worth the campaign's mean cost per click x a margin (``MARGIN``: 1 to 2). Each click
falls in one item of every level the campaign has (drawn from the shares; a click that does
not convert in a country first, then a source and a subId) and costs its country's bid
(per click, or per 1,000 impressions: ``CPM``); it converts with probability
``base x source factor x subId factor x country factor``: at most 0.03 x 4 x 4 x 1.5 = 0.72 by
the ranges drawn, so always a probability. A conversion earns its country's payout and reaches
the tracker ``lag`` days after its click (drawn from the delay profile).

An item's true rate is the rate of its own clicks, the other levels' factors averaged over the
clicks: ``base x its factor x the mean factor of each other level``.

Standard library only, as the rest of the sandbox.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import spec

#: The level of a country: the kind whose items carry a bid (spec.py's row).
COUNTRY = spec.bid_kind().column
#: The levels of a campaign's click stream, each click in one item of each.
LEVELS = ("source", "subid", COUNTRY)
#: What a campaign's click is worth over what it costs (its mean bid), drawn uniformly.
MARGIN = (1.0, 2.0)
#: The default delay: the cumulative share of a click day's conversions known at age 0, 1, 2,
#: ... days after it (45 % arrive a day or more later; all within a week).
DELAY = {0: 0.55, 1: 0.75, 2: 0.85, 3: 0.9, 5: 0.96, 7: 1.0}


@dataclass
class Level:
    """A campaign's items of one level: keys, shares of the clicks (summing to 1) and
    conversion-rate factors."""

    keys: list[str] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)
    factors: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float:
        """The level's factor averaged over the campaign's clicks."""
        return sum(s * f for s, f in zip(self.shares, self.factors, strict=True))


@dataclass
class Campaign:
    """One campaign's click stream. ``prices`` (its bids) are in 1/10,000 USD per ``mode``'s
    unit (``CPC``: a click; ``CPM``: 1,000 impressions) and ``payouts`` in cents, one each
    per country (in ``levels["country"]``'s order), or one for every country when the
    campaign has no country level."""

    campaign_id: int
    base: float
    mode: str
    prices: list[int]
    clicks: float
    payouts: list[int]
    levels: dict[str, Level]
    #: per level, a converting click's cumulative weights and the shares of the others
    weights: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict, repr=False)

    def others(self, level: str) -> float:
        """The product of the mean factors of the levels other than ``level``."""
        return math.prod(lv.mean for name, lv in self.levels.items() if name != level)

    @property
    def rate(self) -> float:
        """The conversion rate of the campaign's clicks."""
        return self.base * math.prod(lv.mean for lv in self.levels.values())

    @property
    def payout(self) -> float:
        """USD a conversion of the campaign earns on average (over the countries it comes
        from)."""
        country = self.levels.get(COUNTRY)
        if country is None:
            return self.payouts[0] / 100
        weights = [s * f for s, f in zip(country.shares, country.factors, strict=True)]
        total = sum(weights)
        if total <= 0:
            return sum(self.payouts) / len(self.payouts) / 100
        return sum(w * p for w, p in zip(weights, self.payouts, strict=True)) / total / 100

    def truth(self) -> list[tuple[str, str, float, float]]:
        """``(level, key, true_cr, payout)`` of every item: the rate of its clicks, and what
        one of its conversions earns on average."""
        out = []
        for name, lv in self.levels.items():
            others = self.others(name)
            for i, key in enumerate(lv.keys):
                payout = self.payouts[i] / 100 if name == COUNTRY else self.payout
                out.append((name, key, self.base * lv.factors[i] * others, payout))
        return out


def factor(rng: random.Random, level: str) -> float:
    """A conversion-rate factor: a quarter of the items are losers (under 0.4); some sources
    and subIds winners (2-4); the other countries from 0.6 to 1.5."""
    r = rng.random()
    if r < 0.25:
        return rng.uniform(0.0, 0.4)  # losers
    if level == COUNTRY:
        return rng.uniform(0.6, 1.5)
    if r < 0.85:
        return rng.uniform(0.6, 1.6)
    return rng.uniform(2.0, 4.0)  # winners


def build(
    items: Sequence[Mapping[str, Any]],
    rng: random.Random,
    bids: Mapping[int, tuple[str, Mapping[str, float]]] | None = None,
) -> dict[int, Campaign]:
    """The campaigns of ``items`` (``{campaign_id, level, key}``), drawn from ``rng`` in the
    items' order: per campaign its payout, margin and clicks at its first item, then per item
    its factor and share (and a country's payout). ``bids``: per campaign its bid unit
    (``CPC`` or ``CPM``) and country -> bid, what a click of the country costs; a campaign
    without them pays one CPC (0.005 to 0.08 USD) in every country. The base rate and the
    payouts then make a click worth the campaign's mean cost per click x its margin."""
    campaigns: dict[int, Campaign] = {}
    scale: dict[int, tuple[int, float, float]] = {}  # payout in cents, clicks, margin
    seen = set()
    camp_bids: dict[int, Mapping[str, float]] = {}
    for row in items:
        cid, level, key = int(row["campaign_id"]), str(row["level"]), str(row["key"])
        if level not in LEVELS:
            raise ValueError(f"item {cid} {level} {key!r}: the level is not one of {LEVELS}")
        if (cid, level, key) in seen:
            raise ValueError(f"item {cid} {level} {key!r} is listed twice")
        seen.add((cid, level, key))
        if cid not in campaigns:
            payout = round(rng.uniform(1.0, 20.0) * 100)
            margin, cpc = rng.uniform(*MARGIN), round(rng.uniform(0.005, 0.08), 4)
            mode, prices = (bids or {}).get(cid, ("CPC", {}))
            mode = mode if prices else "CPC"  # no bids: the drawn CPC
            campaigns[cid] = Campaign(cid, 0.0, mode, [round(cpc * 10_000)], 0.0, [], {})
            scale[cid] = (payout, rng.lognormvariate(math.log(60), 0.5), margin)
            camp_bids[cid] = prices
        camp = campaigns[cid]
        lv = camp.levels.setdefault(level, Level())
        lv.keys.append(key)
        lv.factors.append(factor(rng, level))
        lv.shares.append(rng.lognormvariate(0.0, 1.0))
        if level == COUNTRY:
            camp.payouts.append(max(5, round(scale[cid][0] * rng.lognormvariate(0.0, 0.35))))
    for cid, camp in campaigns.items():
        for lv in camp.levels.values():
            total = sum(lv.shares)
            lv.shares = [s / total for s in lv.shares]
        if not camp.payouts:
            camp.payouts = [scale[cid][0]]
        keys = camp.levels[COUNTRY].keys if COUNTRY in camp.levels else [""]
        if camp_bids[cid]:
            camp.prices = [round(camp_bids[cid][k] * 10_000) for k in keys]
        else:
            camp.prices = camp.prices * len(keys)
        most = max(len(camp.levels.get(name, Level()).keys) for name in ("source", "subid"))
        camp.clicks = scale[cid][1] * max(most, 1)
        _value(camp, scale[cid][2])
    return campaigns


#: Impressions a click on average (the file draws 20 to 80 per campaign and day).
SHOWN = 50


def _value(camp: Campaign, margin: float) -> None:
    """Set the base rate (0.002 to 0.03) and scale the payouts so that a click earns the
    campaign's mean cost per click (over its countries' clicks) x ``margin``."""
    country = camp.levels.get(COUNTRY)
    shares = country.shares if country is not None else [1.0]
    per_unit = 1.0 if camp.mode == "CPC" else SHOWN / 1000
    cost = sum(s * p for s, p in zip(shares, camp.prices, strict=True)) * per_unit / 10_000
    value = cost * margin
    means = math.prod(lv.mean for lv in camp.levels.values())
    earned = camp.payout * means
    camp.base = min(0.03, max(0.002, value / earned)) if earned > 0 else 0.002
    scaled = value / (camp.base * earned) if earned > 0 else 1.0
    camp.payouts = [max(5, round(c * scaled)) for c in camp.payouts]


def delay_shares(value: Any) -> tuple[float, ...] | None:
    """The cumulative shares by age of a delay profile: ``{age: share}`` (age 0 given,
    missing ages filled linearly), a list of shares by age, an object with ``shares`` (such
    as :class:`toolkit.rules.delay.Delay`), or None / ``"none"`` for no delay (None
    returned). A profile is non-decreasing, from 0 to 1, and ends at 1.0.

    >>> delay_shares({0: 0.5, 2: 0.9, 3: 1.0})
    (0.5, 0.7, 0.9, 1.0)
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    value = getattr(value, "shares", value)
    if isinstance(value, Mapping):
        shares = _filled(value)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        shares = tuple(_share(v, value) for v in value)
    else:
        raise ValueError(
            f"delay: {value!r} is not a delay profile; give {{age: share}} such as {DELAY}, "
            "a list of shares by age, or None for no delay"
        )
    ok = bool(shares) and shares[-1] == 1.0
    if not ok or any(b < a for a, b in zip(shares, shares[1:], strict=False)):
        raise ValueError(
            f"delay: {value!r} is not a delay profile: the shares known at each age must not "
            "fall and must end at 1.0 (every conversion known)"
        )
    return None if shares == (1.0,) else shares


def _share(value: Any, profile: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"delay: {value!r} in {profile!r} is not a share (from 0 to 1)")
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"delay: {value!r} in {profile!r} is not a share (from 0 to 1)")
    return float(value)


def _filled(value: Mapping[Any, Any]) -> tuple[float, ...]:
    points = {}
    for age, share in value.items():
        if isinstance(age, bool) or not isinstance(age, int) or age < 0:
            raise ValueError(f"delay: {age!r} in {dict(value)!r} is not an age (whole days)")
        points[age] = _share(share, dict(value))
    if 0 not in points:
        raise ValueError(f"delay: {dict(value)!r} gives no share at age 0 (the click day)")
    ages = sorted(points)
    shares = []
    for a, b in zip(ages, ages[1:], strict=False):
        shares += [points[a] + (points[b] - points[a]) * (t - a) / (b - a) for t in range(a, b)]
    return (*shares, points[ages[-1]])


@dataclass
class Day:
    """One campaign's day at each of its levels: per item its clicks, its conversions known
    by the export's day, their revenue in cents and its clicks' bids summed (1/10,000 USD:
    the cost of a ``CPC`` campaign's clicks, of a ``CPM`` campaign's per 1,000 impressions a
    click)."""

    clicks: dict[str, list[int]]
    conversions: dict[str, list[int]]
    revenue: dict[str, list[int]]
    cost: dict[str, list[int]]


def draw_day(
    camp: Campaign, rng: random.Random, lags: random.Random, age: int, delay: Sequence[float]
) -> Day:
    """A day of ``camp``'s clicks, ``age`` days before the export's day. The converting
    clicks are drawn one by one (an item of each level, by share x factor; a lag from
    ``delay``, its cumulative shares, kept when the lag is at most ``age``); the others are
    split among the countries by their share of the clicks that do not convert, then each
    country's among the sources and among the subIds the same way. A click costs its
    country's bid, so every level sums to the same clicks, cost, conversions and revenue.
    ``lags`` draws the lags alone: a file without delay has the same clicks and more
    conversions."""
    n = _poisson(rng, camp.clicks)
    converted = _binomial(rng, n, camp.rate)
    if not camp.weights:
        camp.weights = {name: (_cumulative(camp, name), _rest(camp, name)) for name in camp.levels}
    picks = {
        name: rng.choices(range(len(lv.keys)), cum_weights=camp.weights[name][0], k=converted)
        for name, lv in camp.levels.items()
    }
    known = [lag <= age for lag in lags.choices(range(len(delay)), cum_weights=delay, k=converted)]
    country = picks.get(COUNTRY, [0] * converted)
    cents = [camp.payouts[i] for i in country]
    bids = [camp.prices[i] for i in country]
    rest = n - converted
    split = _multinomial(rng, rest, camp.weights[COUNTRY][1]) if COUNTRY in camp.levels else [rest]
    day = Day({}, {}, {}, {})
    for name, lv in camp.levels.items():
        clicks, cost = _rest_clicks(camp, name, split, rng)
        conversions, revenue = [0] * len(lv.keys), [0] * len(lv.keys)
        for i, k, c, b in zip(picks[name], known, cents, bids, strict=True):
            clicks[i] += 1
            cost[i] += b
            if k:
                conversions[i] += 1
                revenue[i] += c
        day.clicks[name], day.conversions[name], day.revenue[name] = clicks, conversions, revenue
        day.cost[name] = cost
    return day


def _rest_clicks(
    camp: Campaign, name: str, split: list[int], rng: random.Random
) -> tuple[list[int], list[int]]:
    """The clicks that do not convert (``split`` per country) of each item of level ``name``
    and their bids summed: a country's own, or each country's split among the items."""
    if name == COUNTRY:
        return list(split), [k * b for k, b in zip(split, camp.prices, strict=True)]
    size = len(camp.levels[name].keys)
    clicks, cost = [0] * size, [0] * size
    for k, b in zip(split, camp.prices, strict=True):
        if k:
            for i, m in enumerate(_multinomial(rng, k, camp.weights[name][1])):
                clicks[i] += m
                cost[i] += m * b
    return clicks, cost


def _cumulative(camp: Campaign, name: str) -> list[float]:
    """Cumulative weights of a converting click's item at level ``name``: share x factor."""
    lv = camp.levels[name]
    out, total = [], 0.0
    for s, f in zip(lv.shares, lv.factors, strict=True):
        total += s * f
        out.append(total)
    return out if total > 0 else list(itertools.accumulate(lv.shares))


def _rest(camp: Campaign, name: str) -> list[float]:
    """Each item's share of the clicks of level ``name`` that do not convert."""
    lv, others = camp.levels[name], camp.base * camp.others(name)
    weights = [s * (1.0 - others * f) for s, f in zip(lv.shares, lv.factors, strict=True)]
    total = sum(weights)
    return [w / total for w in weights]


def _multinomial(rng: random.Random, n: int, probs: Sequence[float]) -> list[int]:
    """``n`` split among ``len(probs)`` parts by ``probs`` (summing to 1): part by part, or
    click by click when there are few clicks for the parts."""
    if n < 4 * len(probs):
        out = [0] * len(probs)
        for i in rng.choices(range(len(probs)), weights=probs, k=n):
            out[i] += 1
        return out
    out, rest = [], 1.0
    for p in probs[:-1]:
        k = _binomial(rng, n, min(1.0, p / rest)) if n > 0 and rest > 0 else 0
        out.append(k)
        n, rest = n - k, rest - p
    out.append(n)
    return out


def _poisson(rng: random.Random, lam: float) -> int:
    if lam > 30:
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _binomial(rng: random.Random, n: int, p: float) -> int:
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if n * p > 30 and n * (1 - p) > 30:
        return min(n, max(0, round(rng.gauss(n * p, math.sqrt(n * p * (1 - p))))))
    if p > 0.5:
        return n - _binomial(rng, n, 1.0 - p)
    if n < 200:
        return _gaps(rng, n, p)
    return min(n, _poisson(rng, n * p))


def _gaps(rng: random.Random, n: int, p: float) -> int:
    """An exact binomial draw in about ``n x p`` steps: the gaps between successes are
    geometric."""
    step, k, at = math.log1p(-p), 0, 0
    while True:
        at += int(math.log(1.0 - rng.random()) / step) + 1
        if at > n:
            return k
        k += 1


__all__ = [
    "COUNTRY",
    "DELAY",
    "LEVELS",
    "Campaign",
    "Day",
    "Level",
    "build",
    "delay_shares",
    "draw_day",
    "factor",
]
