"""Tracker statistics with a known truth, drawn independently of the sandbox's demo generator
(``toolkit.sandbox.stats_gen`` is not used), to measure rules on data they were not tuned on.

What it draws, per setting (:data:`SETTINGS`), all from one ``seed``:

- campaigns with their own base conversion rate (lognormal around 1 %), payout (lognormal
  around $10) and cost per click (the campaign's average value per click over its ``margin``);
- per campaign, subIds whose daily volume is heavy-tailed (lognormal or Pareto, by campaign)
  and whose value per click over their cost per click is a multiplier drawn from three groups:
  losers (0.05-0.7x), break-evens (0.8-1.25x) and winners (1.4-3x), times the margin;
- drift: a third of the items have a rate that changes over the window (log-rate slope
  drawn around 0, up to about 3x from the first day to the last);
- late starts: a quarter of the items appear in the middle of the window;
- a weekly swing of traffic; clicks Poisson, conversions Binomial at the day's rate;
- conversion delay (``delay=True``): each conversion arrives 0, 1, ... 7 days after its click
  (:data:`DELAY_SHARES`: 55 % on the click's day, 45 % a day or more later); the frame
  ``stats`` is then the export as downloaded on the last day, and :meth:`Generated.known_on`
  gives it as downloaded on any earlier day.

The truth: one row per item (``campaign_id, level, key, true_cr, payout, true_epc``), where
``true_cr`` is the item's expected rate averaged over its expected clicks in the window (so
drift is in it) and ``true_epc = true_cr * payout``; an item is a *loser* when ``true_epc``
is below its cost per click (which is fixed per item: ``cost / clicks`` of any of its rows).

>>> gen = generate("high_fat", seed=1, days=14)
>>> sorted(gen.stats.columns) == sorted(STATS_COLUMNS)
True
>>> list(gen.truth.columns) == list(TRUTH_COLUMNS)
True
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: The columns of the statistics frame (the toolkit's generic layout).
STATS_COLUMNS = (
    "date",
    "campaign_id",
    "level",
    "key",
    "impressions",
    "clicks",
    "cost",
    "conversions",
    "revenue",
)
#: The columns of the truth frame.
TRUTH_COLUMNS = ("campaign_id", "level", "key", "true_cr", "payout", "true_epc")
#: Cumulative share of a click day's conversions known 0, 1, ... 7 days after it.
DELAY_SHARES = (0.55, 0.75, 0.85, 0.90, 0.94, 0.97, 0.99, 1.0)
#: The last day of the statistics.
END = dt.date(2026, 3, 31)
LEVEL = "subid"


@dataclass(frozen=True)
class Setting:
    """One setting of traffic and margin.

    ``clicks_day``: an item's median clicks a day; ``margin``: a campaign's typical value per
    click over its cost per click (1.0: break-even on average); ``items``: subIds per campaign.
    """

    name: str
    clicks_day: float
    margin: float
    items: int = 40
    campaigns: int = 10


#: The five settings: high/low traffic x thin/fat margin, and many low-traffic items.
SETTINGS: dict[str, Setting] = {
    "high_fat": Setting("high traffic, fat margin", clicks_day=60.0, margin=1.5),
    "high_thin": Setting("high traffic, thin margin", clicks_day=60.0, margin=1.05),
    "low_fat": Setting("low traffic, fat margin", clicks_day=10.0, margin=1.5),
    "low_thin": Setting("low traffic, thin margin", clicks_day=10.0, margin=1.05),
    "low_items": Setting("many low-traffic items", clicks_day=2.0, margin=1.25, items=150),
}


@dataclass
class Generated:
    """What :func:`generate` returns.

    ``stats``: the export as downloaded on the last day (with ``delay``, the freshest days
    lack the conversions still to come); ``final``: the same rows with every conversion
    (what the clicks went on to earn); ``truth``: :data:`TRUTH_COLUMNS`; ``lags``: per row,
    its conversions by days of delay (rows x :data:`DELAY_SHARES`), all at lag 0 without delay.
    """

    setting: Setting
    seed: int
    delay: bool
    stats: pd.DataFrame
    final: pd.DataFrame
    truth: pd.DataFrame
    lags: np.ndarray = field(repr=False)
    #: Per item of ``truth``: ``slope`` (its log-rate change over the window, 0 without
    #: drift) and ``start`` (the day index it appears on, 0 for all but late starts).
    kinds: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @property
    def days(self) -> list[dt.date]:
        return sorted(set(self.final["date"].dt.date))

    def known_on(self, day: dt.date) -> pd.DataFrame:
        """The export as downloaded on ``day``: rows up to ``day``, each with the conversions
        (and revenue) that had arrived by then."""
        dates = self.final["date"].dt.date.to_numpy()
        keep = dates <= day
        age = np.array([(day - d).days for d in dates[keep]])
        cum = np.cumsum(self.lags[keep], axis=1)
        known = cum[np.arange(len(age)), np.minimum(age, cum.shape[1] - 1)]
        out = self.final[keep].copy()
        payout = out["revenue"] / out["conversions"].where(out["conversions"] > 0)
        out["conversions"] = known
        out["revenue"] = (known * payout.fillna(0.0)).round(2)
        return out


def _campaigns(rng: np.random.Generator, s: Setting) -> pd.DataFrame:
    n = s.campaigns
    base = np.clip(np.exp(rng.normal(np.log(0.01), 0.8, n)), 0.0015, 0.08)
    payout = np.clip(np.exp(rng.normal(np.log(10.0), 0.9, n)), 0.8, 150.0).round(2)
    margin = s.margin * np.exp(rng.normal(0.0, 0.1, n))
    return pd.DataFrame(
        {
            "campaign_id": 3_000_001 + np.arange(n),
            "base_cr": base,
            "payout": payout,
            "cpc": base * payout / margin,
            "pareto": rng.random(n) < 0.5,
        }
    )


def _multipliers(rng: np.random.Generator, n: int) -> np.ndarray:
    """Value per click over the campaign's average: losers, break-evens, winners."""
    group = rng.choice(3, size=n, p=[0.3, 0.4, 0.3])
    lo = np.array([0.05, 0.8, 1.4])[group]
    hi = np.array([0.7, 1.25, 3.0])[group]
    return rng.uniform(lo, hi)


def _items(rng: np.random.Generator, s: Setting, camps: pd.DataFrame, days: int) -> pd.DataFrame:
    rows = []
    for c in camps.itertuples():
        n = s.items
        if c.pareto:
            volume = s.clicks_day * (rng.pareto(1.4, n) + 1.0) / 2 ** (1 / 1.4)
        else:
            volume = s.clicks_day * np.exp(rng.normal(0.0, 1.1, n))
        mult = _multipliers(rng, n)
        drifting = rng.random(n) < 1 / 3
        slope = np.where(drifting, rng.normal(0.0, 0.6, n), 0.0)  # log-rate change over window
        late = rng.random(n) < 0.25
        start = np.where(late, rng.integers(days // 4, days - 3, n), 0)
        keys = [f"{x:010x}" for x in rng.integers(16**9, 16**10, n)]
        rows.append(
            pd.DataFrame(
                {
                    "campaign_id": c.campaign_id,
                    "key": keys,
                    "volume": np.minimum(volume, 50 * s.clicks_day),
                    "cr": np.clip(c.base_cr * mult, 0.0, 0.5),
                    "cpc": c.cpc * rng.uniform(0.9, 1.1, n),
                    "payout": c.payout,
                    "slope": slope,
                    "start": start,
                }
            )
        )
    items = pd.concat(rows, ignore_index=True)
    return items.drop_duplicates(["campaign_id", "key"]).reset_index(drop=True)


def generate(
    setting: str | Setting = "high_fat", *, seed: int = 0, days: int = 28, delay: bool = False
) -> Generated:
    """Draw ``days`` days of statistics of one setting (a name of :data:`SETTINGS` or a
    :class:`Setting`), seeded, with their truth; ``delay``: conversions arrive late
    (:data:`DELAY_SHARES`) and ``stats`` is the export as downloaded on the last day.

    >>> a, b = generate("low_thin", seed=3, days=10), generate("low_thin", seed=3, days=10)
    >>> a.stats.equals(b.stats)
    True
    """
    s = SETTINGS[setting] if isinstance(setting, str) else setting
    names = list(SETTINGS)
    rng = np.random.default_rng([seed, names.index(setting) if setting in names else 99])
    camps = _campaigns(rng, s)
    items = _items(rng, s, camps, days)
    n, t = len(items), np.arange(days)
    # per item x day: expected clicks and rate
    swing = 1.0 + 0.2 * np.sin(2 * np.pi * t / 7)
    lam = items["volume"].to_numpy()[:, None] * swing[None, :]
    lam = np.where(t[None, :] >= items["start"].to_numpy()[:, None], lam, 0.0)
    pos = (t - (days - 1) / 2) / max(days - 1, 1)
    rate = items["cr"].to_numpy()[:, None] * np.exp(items["slope"].to_numpy()[:, None] * pos)
    rate = np.clip(rate, 0.0, 0.9)
    clicks = rng.poisson(lam)
    conv = rng.binomial(clicks, rate)
    shares = np.diff(np.concatenate([[0.0], DELAY_SHARES])) if delay else np.eye(1, 8)[0]
    lags = rng.multinomial(conv.ravel(), shares)  # (n * days, 8)
    cpc = items["cpc"].to_numpy()[:, None]
    payout = items["payout"].to_numpy()[:, None]
    first = END - dt.timedelta(days=days - 1)
    dates = pd.to_datetime([first + dt.timedelta(days=int(d)) for d in t], utc=True)
    final = pd.DataFrame(
        {
            "date": np.tile(dates, n),
            "campaign_id": np.repeat(items["campaign_id"].to_numpy(), days),
            "level": LEVEL,
            "key": np.repeat(items["key"].to_numpy(), days),
            "impressions": (clicks * rng.integers(20, 60, clicks.shape)).ravel(),
            "clicks": clicks.ravel(),
            "cost": (clicks * cpc).round(4).ravel(),
            "conversions": conv.ravel(),
            "revenue": (conv * payout).round(2).ravel(),
        }
    )
    has = (clicks > 0).ravel()
    final, lags = final[has].reset_index(drop=True), lags[has]
    true_cr = (lam * rate).sum(axis=1) / np.maximum(lam.sum(axis=1), 1e-12)
    truth = pd.DataFrame(
        {
            "campaign_id": items["campaign_id"],
            "level": LEVEL,
            "key": items["key"],
            "true_cr": true_cr,
            "payout": items["payout"],
            "true_epc": true_cr * items["payout"],
        }
    )
    truth[["slope", "start"]] = items[["slope", "start"]]
    seen = final.groupby(["campaign_id", "key"]).size().index
    truth = truth.set_index(["campaign_id", "key"]).loc[seen].reset_index()
    kinds = truth[["campaign_id", "level", "key", "slope", "start"]]
    gen = Generated(s, seed, delay, final, final, truth[list(TRUTH_COLUMNS)], lags, kinds)
    if delay:
        gen.stats = gen.known_on(END)
    return gen


def losers(gen: Generated) -> pd.DataFrame:
    """The truth with each item's cost per click and whether it is a loser
    (``true_epc < cpc``)."""
    sums = gen.final.groupby(["campaign_id", "level", "key"], as_index=False)[
        ["clicks", "cost"]
    ].sum()
    out = gen.truth.merge(sums, on=["campaign_id", "level", "key"])
    out["cpc"] = out["cost"] / out["clicks"]
    out["loser"] = out["true_epc"] < out["cpc"]
    return out


__all__ = [
    "DELAY_SHARES",
    "END",
    "SETTINGS",
    "STATS_COLUMNS",
    "TRUTH_COLUMNS",
    "Generated",
    "Setting",
    "generate",
    "losers",
]
