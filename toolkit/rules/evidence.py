"""The numbers behind a statistical rule: a Beta prior per campaign, posterior probabilities,
the Poisson chance of zero conversions, and a per-item evidence frame.

Pure functions over numbers, numpy arrays and pandas frames; nothing here reads or writes.

>>> prior = BetaPrior(1.0, 1.0)
>>> round(prob_rate_below(0.01, 0, 100, prior), 4)   # 1 - 0.99 ** 101
0.6376
>>> round(zero_conversion_p(200, 0.01), 4)           # exp(-2)
0.1353
>>> clicks_for_confidence(0.01, 0.05)
300

The formulas:

- prior: method of moments on the items' rates ``c_i / n_i`` weighted by clicks ``n_i``.
  With ``N = sum n_i``, ``C = sum c_i``, ``m = C / N`` and ``K`` items with clicks, the
  between-item variance is the observed weighted spread less the binomial noise,
  ``v = (sum n_i (c_i/n_i - m)^2 - m (1 - m) (K - 1)) / (N - sum n_i^2 / N)``, and
  ``a + b = m (1 - m) / v - 1``, ``a = m (a + b)``, ``b = (1 - m) (a + b)``.
- whose numbers: an item's prior has the mean of the OTHER items of its campaign (its own
  clicks are not counted twice), but its spread is read with the item among them. Read
  from the others alone, a subId converting while its siblings do not (30 conversions in
  2,100 clicks among nine silent ones: ROI +376 %) had a prior as sure of "no conversions"
  as all their 18,900 clicks, and was judged a sure loss; with it, the items differ and the
  prior weighs little.
- one item's worth: ``a + b`` is at most the clicks of one of the other items, on average
  (``N / K``): what the campaign says of an item never outweighs what an item like it would
  say of itself.
- the prior's own uncertainty: the spread is the noisiest part of a moment fit. Too narrow
  (items that differ look alike by chance, or look like no more than the binomial noise)
  makes the prior outweigh an item's own clicks, and a subId converting twice as well as
  its campaign is judged by the campaign; the spread is therefore widened by
  :data:`SPREAD_SE` standard errors of its estimate for items that do not differ,
  ``m (1 - m) sqrt(2 (K - 1)) / (N - sum n_i^2 / N)`` (the spread of a chi-squared with
  ``K - 1`` degrees of freedom), and a spread the noise explains entirely is that much,
  not "none". Too wide (a few items with a few clicks each can make it look huge), so that
  ``a < 1`` claims a spike of items converting at about 0, which a moment fit cannot tell:
  an item without conversions would then look dead after a few hundred clicks. A fitted
  prior's ``a`` is therefore at least :data:`PRIOR_MIN_A`: ``a + b`` raised to
  ``PRIOR_MIN_A / m`` (its mean kept) up to one item's worth, and past that the mean raised
  (``a = PRIOR_MIN_A``, ``b = a + b - a``): a campaign averaging less than a conversion per
  item is taken as converting a little better than it shows, the cautious side for a rule
  that stops items. Checked by replaying daily looks on the demo statistics
  (docs/rules.md, "Daily looks").
- fallback (fewer than ``MIN_PRIOR_ITEMS`` items with clicks, no conversion or nothing but
  conversions, no spread beyond the binomial noise): a weak prior centred on the smoothed
  pooled rate ``m' = (C + 0.5) / (N + 1)``, worth ``PRIOR_MIN_A / m'`` clicks, at most one
  item's worth and at least ``WEAK_PRIOR_STRENGTH``, its ``a`` at least
  :data:`PRIOR_MIN_A` as a fitted prior's; with no clicks at all that is Beta(1, 1).
  ``a`` and ``b`` are always positive. A fallback worth a fixed 2 clicks around a tiny
  pooled rate (a campaign's first day: 1 conversion in 5,000 clicks) had ``a = 0.01``, which
  made every subId without a conversion look lost after 200 clicks: on the demo statistics
  most of the winners a daily ``p_loss >= 0.99`` stopped were stopped so, on their first
  days.
- posterior: Beta(a + conversions, b + clicks - conversions); ``P(rate < t)`` is the
  regularized incomplete beta function ``I_t(a + c, b + n - c)``.
- conversion delay: with a :class:`~toolkit.rules.delay.Delay`, the clicks of a day
  ``age`` days before the last one count ``known(age)`` (``eff_clicks``): their conversions
  are not all known yet. Priors and posteriors use these effective clicks; ``clicks`` and the
  cost per click stay the real ones.
- the cost per click's own uncertainty: with a ``cpc_se`` column (the standard error of the
  window's cost per click, :mod:`toolkit.rules.daily`), ``p_below_break_even`` is averaged
  over a Normal cost per click (:func:`prob_loss`).
- expected loss of a stop: ``payout x E[(rate - break_even)+]`` per click, the profit a stop
  forgoes weighted by how likely the item is above break-even; for the posterior
  Beta(A, B): ``E[(X - t)+] = A / (A + B) (1 - I_t(A + 1, B)) - t (1 - I_t(A, B))``.
- zero conversions in ``n`` clicks at rate ``r``: ``exp(-n r)`` (Poisson) or ``(1 - r)^n``
  (Binomial); clicks for that to reach ``p``: ``ceil(ln(1/p) / r)``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import betainc, ndtri

from ..stats.schema import METRICS

#: Fewer items with clicks than this and a campaign's prior is the weak fallback.
MIN_PRIOR_ITEMS = 3
#: How many clicks the weak fallback prior is worth (``a + b``).
WEAK_PRIOR_STRENGTH = 2.0
#: The least ``a`` of a fitted prior (see the module: the prior's own uncertainty).
PRIOR_MIN_A = 1.0
#: How many standard errors (of the spread's estimate when items do not differ) a fitted
#: prior's spread is widened by (see the module: the prior's own uncertainty).
SPREAD_SE = 1.0
_KEYS = ["campaign_id", "level", "key"]
#: The columns of a stats frame that :func:`evidence_frame` reads.
STATS_COLUMNS = (*_KEYS, *METRICS)
_SUMS = ["clicks", "cost", "conversions", "revenue"]
_WITHIN = ("campaign_id", "level")


@dataclass(frozen=True)
class BetaPrior:
    """A Beta(a, b) prior of conversion rates; ``fitted`` is False for the weak fallback.

    >>> BetaPrior(2.0, 198.0).mean
    0.01
    """

    a: float
    b: float
    fitted: bool = True

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)


def _prior_from_sums(k, n, c, q, n2, spread=None):
    """Vectorised method of moments from sums over items with clicks: ``k`` items, ``n``
    clicks, ``c`` conversions, ``q = sum c_i^2 / n_i``, ``n2 = sum n_i^2``. ``spread``: the
    same five sums over the items the spread is read from (the item judged among them; see
    the module), else these. Returns ``(a, b, fitted)`` arrays."""
    k, n, c, q, n2 = (np.asarray(x, dtype=float) for x in (k, n, c, q, n2))
    sk, sn, sc, sq, sn2 = (
        (k, n, c, q, n2) if spread is None else (np.asarray(x, dtype=float) for x in spread)
    )
    weak_mean = (c + 0.5) / (n + 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = c / n
        sm = sc / sn
        denom = sn - sn2 / sn
        var = (sq - sc * sc / sn - sm * (1.0 - sm) * (sk - 1.0)) / denom
        se = sm * (1.0 - sm) * np.sqrt(2.0 * np.maximum(sk - 1.0, 1.0)) / denom
        var = np.maximum(var, 0.0) + SPREAD_SE * se  # what the data cannot rule out
        strength = m * (1.0 - m) / var - 1.0
        typical = n / np.maximum(k, 1.0)  # the clicks of one of the items, on average
    fitted = (k >= MIN_PRIOR_ITEMS) & (n > 0) & (c > 0) & (c < n) & (denom > 0) & (var > 0)
    fitted &= np.isfinite(strength) & (strength > 0)
    with np.errstate(divide="ignore", invalid="ignore"):  # a >= PRIOR_MIN_A, one item's worth
        strength = np.minimum(np.maximum(strength, PRIOR_MIN_A / m), typical)
        weak = np.minimum(PRIOR_MIN_A / weak_mean, typical)
    weak = np.maximum(weak, WEAK_PRIOR_STRENGTH)
    mean = np.where(fitted, m, weak_mean)
    strength = np.where(fitted, strength, weak)
    a = np.maximum(mean * strength, PRIOR_MIN_A)  # fewer: the mean raised, not the weight
    b = np.maximum(strength - a, WEAK_PRIOR_STRENGTH - PRIOR_MIN_A)
    return a, b, fitted


def fit_beta_prior(conversions, clicks) -> BetaPrior:
    """A Beta prior of conversion rates fitted from items' conversions and clicks (the other
    items of a campaign); items without clicks are left out. See the module for the formula
    and the fallback.

    >>> fit_beta_prior([0], [100])                      # one item: the weak fallback
    BetaPrior(a=1.0, b=99.0, fitted=False)
    >>> fit_beta_prior([1, 0], [3000, 2000])            # two items: one's worth, a = 1
    BetaPrior(a=1.0, b=2499.0, fitted=False)
    >>> fit_beta_prior([], [])
    BetaPrior(a=1.0, b=1.0, fitted=False)
    """
    conv = np.asarray(conversions, dtype=float)
    n = np.asarray(clicks, dtype=float)
    has = n > 0
    conv, n = conv[has], n[has]
    a, b, fitted = _prior_from_sums(
        has.sum(), n.sum(), conv.sum(), (conv * conv / n).sum(), (n * n).sum()
    )
    return BetaPrior(float(a), float(b), bool(fitted))


def _ab(prior) -> tuple:
    if isinstance(prior, BetaPrior):
        return prior.a, prior.b
    a, b = prior
    return np.asarray(a, dtype=float), np.asarray(b, dtype=float)


def prob_rate_below(threshold, conversions, clicks, prior):
    """``P(rate < threshold)`` under the posterior Beta(a + conversions, b + clicks -
    conversions); ``prior`` is a :class:`BetaPrior` or an ``(a, b)`` pair (arrays allowed).
    Vectorised; a threshold at or below 0 gives 0, at or above 1 gives 1.

    >>> round(prob_rate_below(0.02, 1, 50, BetaPrior(1.0, 1.0)), 4)
    0.2717
    """
    a, b = _ab(prior)
    c = np.asarray(conversions, dtype=float)
    n = np.asarray(clicks, dtype=float)
    t = np.clip(np.asarray(threshold, dtype=float), 0.0, 1.0)
    out = betainc(a + c, b + n - c, t)
    return float(out) if np.ndim(out) == 0 else out


#: The standard normal's quantiles at the midpoints of :data:`SPREAD_POINTS` equal slices of
#: probability: :func:`prob_loss` averages over them (a midpoint rule in probability, which a
#: cost per click clipped at 0 does not throw off as a Gauss-Hermite rule's nodes are).
SPREAD_POINTS = 32
_QUANTILES = ndtri((np.arange(SPREAD_POINTS) + 0.5) / SPREAD_POINTS)
#: Threads for a large :func:`prob_loss` (SciPy's ``betainc`` lets go of the interpreter),
#: and the points (items x :data:`SPREAD_POINTS`) from which its rows are split among them.
SPREAD_THREADS = max(1, min(4, os.cpu_count() or 1))
SPREAD_SPLIT = 1 << 16


def _spread_mean(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``betainc(a, b, t).mean(axis=1)`` (``a``, ``b`` a column each, ``t`` a row of
    thresholds per item), its rows split among :data:`SPREAD_THREADS` threads when there
    are many: each row's mean is the same either way, to the last digit."""
    parts = min(SPREAD_THREADS, t.size // SPREAD_SPLIT)
    if parts < 2:
        return betainc(a, b, t).mean(axis=1)
    bounds = np.linspace(0, len(t), parts + 1).astype(int)
    cuts = [slice(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    with ThreadPoolExecutor(parts) as pool:
        means = pool.map(lambda s: betainc(a[s], b[s], t[s]).mean(axis=1), cuts)
        return np.concatenate(list(means))


def prob_loss(cpc, cpc_se, payout, conversions, clicks, prior):
    """``P(rate x payout < cost per click)`` when the cost per click is itself an estimate:
    :func:`prob_rate_below` at break-even ``cost per click / payout``, averaged over a
    Normal(``cpc``, ``cpc_se``^2) cost per click (:data:`SPREAD_POINTS` quantiles; a cost
    below 0 counts as 0). ``cpc_se`` 0 gives :func:`prob_rate_below` at ``cpc / payout``.
    Vectorised; NaN where ``cpc`` or ``payout`` is NaN.

    >>> round(prob_loss(0.02, 0.0, 1.0, 0, 100, BetaPrior(1.0, 1.0)), 4)  # 1 - 0.98 ** 101
    0.87
    >>> round(prob_loss(0.02, 0.005, 1.0, 0, 100, BetaPrior(1.0, 1.0)), 3)  # exact: 0.8518
    0.853
    """
    a, b = _ab(prior)
    c = np.asarray(conversions, dtype=float)
    n = np.asarray(clicks, dtype=float)
    cpc, se, pay = (np.asarray(x, dtype=float) for x in (cpc, cpc_se, payout))
    shape = np.broadcast(cpc, se, pay, c, n, a, b).shape
    cpc, se, pay, c, n, a, b = (np.broadcast_to(x, shape) for x in (cpc, se, pay, c, n, a, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = betainc(a + c, b + n - c, np.clip(cpc / pay, 0.0, 1.0))
        some = np.isfinite(se) & (se > 0)
        if some.any():
            shifted = cpc[some][:, None] + _QUANTILES[None, :] * se[some][:, None]
            t = np.clip(shifted / pay[some][:, None], 0.0, 1.0)
            ab = (a + c)[some][:, None], (b + n - c)[some][:, None]
            out = np.array(out, dtype=float, copy=True)
            out[some] = _spread_mean(*ab, t)
    return float(out) if np.ndim(out) == 0 else out


def spent(p_loss, days):
    """``p_loss`` with its error spent over an item's days with clicks (the looks a rule run
    every day has had at it): ``1 - min(1, (1 + ln days) x (1 - p_loss))``; NaN for no day.
    ``spent(p, days) >= 0.95`` asks ``1 - p_loss`` to be at most ``0.05 / (1 + ln days)``.

    >>> round(spent(0.99, 1), 4), round(spent(0.99, 14), 4)    # 1 - 0.01 x (1 + ln 14)
    (0.99, 0.9636)
    """
    p = np.asarray(p_loss, dtype=float)
    d = np.asarray(days, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(d >= 1, 1.0 - np.minimum(1.0, (1.0 + np.log(d)) * (1.0 - p)), np.nan)
    return float(out) if np.ndim(out) == 0 else out


def zero_conversion_p(clicks, rate, binomial: bool = False):
    """The probability of no conversion in ``clicks`` clicks at conversion rate ``rate``:
    ``exp(-clicks * rate)`` (Poisson), or ``(1 - rate) ** clicks`` with ``binomial=True``.

    >>> round(zero_conversion_p(100, 0.02, binomial=True), 4)
    0.1326
    """
    n = np.asarray(clicks, dtype=float)
    r = np.asarray(rate, dtype=float)
    out = np.power(1.0 - r, n) if binomial else np.exp(-n * r)
    return float(out) if np.ndim(out) == 0 else out


def clicks_for_confidence(rate: float, p: float, binomial: bool = False) -> float:
    """The fewest clicks without a conversion for :func:`zero_conversion_p` to be at or below
    ``p``: ``ceil(ln(1/p) / rate)`` (Binomial: ``ceil(ln p / ln(1 - rate))``); infinite at a
    rate of 0.

    >>> clicks_for_confidence(0.02, 0.05, binomial=True)
    149
    >>> clicks_for_confidence(0.0, 0.05)
    inf
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, not {p}")
    if rate <= 0.0:
        return math.inf
    if rate >= 1.0:
        return 1
    per_click = -math.log1p(-rate) if binomial else rate
    return math.ceil(-math.log(p) / per_click - 1e-9)


def break_even_rate(cost, clicks, revenue_per_conversion):
    """The conversion rate at which an item pays for itself: cost per click / payout.
    Vectorised; NaN where there are no clicks or no payout.

    >>> break_even_rate(5.0, 1000, 2.5)
    0.002
    """
    cost, n, pay = (np.asarray(x, dtype=float) for x in (cost, clicks, revenue_per_conversion))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((n > 0) & (pay > 0), cost / n / pay, np.nan)
    return float(out) if np.ndim(out) == 0 else out


def item_totals(stats: pd.DataFrame) -> pd.DataFrame:
    """One row per item (campaign_id, level, key) with its clicks, cost, conversions and
    revenue (and impressions and ``eff_clicks``, when the frame has them) summed over the
    stats frame's rows (days).

    >>> s = pd.DataFrame({"campaign_id": [1, 1], "level": ["source"] * 2, "key": ["a", "a"],
    ...                   "impressions": [0, 0], "clicks": [10, 5], "cost": [1.0, 0.5],
    ...                   "conversions": [1, 0], "revenue": [2.0, 0.0]})
    >>> item_totals(s)[["key", "clicks", "conversions"]].to_dict("records")
    [{'key': 'a', 'clicks': 15.0, 'conversions': 1.0}]
    """
    sums = (["impressions"] if "impressions" in stats else []) + _SUMS
    sums += ["eff_clicks"] if "eff_clicks" in stats else []
    frame = stats[_KEYS + sums].copy()
    frame[sums] = frame[sums].astype(float).fillna(0.0)
    return frame.groupby(_KEYS, sort=True, observed=True, as_index=False)[sums].sum()


def leave_one_out_priors(items: pd.DataFrame, within: Sequence[str] = _WITHIN) -> tuple:
    """For each item of :func:`item_totals`, the prior ``(a, b, fitted)`` fitted from the
    other items of its group (``within``: its campaign at its level; ``("level",)`` pools
    every campaign, for campaigns' own totals), the item's own numbers left out."""
    n = items["clicks"].to_numpy(float)
    c = items["conversions"].to_numpy(float)
    has = n > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(has, c * c / n, 0.0)
    parts = pd.DataFrame(
        {"k": has.astype(float), "n": n, "c": c, "q": q, "n2": n * n},
        index=items.index,
    )
    groups = [items[col] for col in within]
    totals = parts.groupby(groups, sort=False, observed=True).transform("sum")
    others = totals - parts
    cols = ["k", "n", "c", "q", "n2"]
    return _prior_from_sums(
        *(others[col].to_numpy() for col in cols), spread=[totals[col].to_numpy() for col in cols]
    )


def _payouts(items: pd.DataFrame, payout) -> np.ndarray:
    """Revenue per conversion: ``payout`` when given, else the campaign's revenue over its
    conversions (NaN for a campaign without conversions)."""
    if payout is not None:
        return np.broadcast_to(np.asarray(payout, dtype=float), len(items)).copy()
    sums = items.groupby("campaign_id", observed=True)[["revenue", "conversions"]].transform("sum")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sums["conversions"] > 0, sums["revenue"] / sums["conversions"], np.nan)


def evidence_frame(
    stats: pd.DataFrame,
    payout=None,
    min_clicks: float = 100.0,
    within: Sequence[str] = _WITHIN,
    summed: bool = False,
) -> pd.DataFrame:
    """Per item of a stats frame (columns ``STATS_COLUMNS``), the numbers a statistical rule
    decides on: clicks, cost, conversions, revenue, observed ``rate``, ``eff_clicks`` (the
    clicks whose conversions are known: the frame's ``eff_clicks`` column when it has one,
    else its clicks; see the module on conversion delay), the prior
    (``prior_a``, ``prior_b``, ``prior_fitted``) fitted from the other items of its campaign
    at its level, ``posterior_mean``, ``break_even`` (cost per click / payout; ``payout`` a
    number or array, NaN for unknown, else the campaign's revenue per conversion; shown as
    ``payout``), ``p_below_break_even``, ``expected_loss`` (USD per click a stop forgoes:
    ``payout x E[(rate - break_even)+]``), ``loss_share`` (:func:`loss_share`),
    ``zero_p`` (the Poisson chance of its zero conversions at the prior's mean rate; NaN for
    an item that converted) and ``min_sample`` (clicks >= ``min_clicks``). ``within``: the
    columns whose groups a prior is fitted in (see :func:`leave_one_out_priors`).
    ``summed=True``: the rows are already one per item (:func:`item_totals`), taken as they are;
    a ``cpc_se`` column among them makes ``p_below_break_even`` :func:`prob_loss`'s.

    >>> s = pd.DataFrame({"campaign_id": [1] * 3, "level": ["source"] * 3,
    ...                   "key": ["a", "b", "c"], "impressions": [0] * 3,
    ...                   "clicks": [1000, 1000, 400], "cost": [10.0, 10.0, 4.0],
    ...                   "conversions": [10, 12, 0], "revenue": [20.0, 24.0, 0.0]})
    >>> e = evidence_frame(s)
    >>> e[["key", "conversions", "break_even"]].to_dict("records")
    [{'key': 'a', 'conversions': 10.0, 'break_even': 0.005}, \
{'key': 'b', 'conversions': 12.0, 'break_even': 0.005}, \
{'key': 'c', 'conversions': 0.0, 'break_even': 0.005}]
    >>> bool(e["p_below_break_even"].iloc[2] > 0.9)
    True
    """
    out = stats.reset_index(drop=True).copy() if summed else item_totals(stats)
    clicks = out["clicks"].to_numpy(float)
    c = out["conversions"].to_numpy(float)
    n = clicks  # the clicks whose conversions are known (fewer under conversion delay)
    if "eff_clicks" in out:
        n = np.maximum(np.minimum(out["eff_clicks"].to_numpy(float), clicks), c)
    out["eff_clicks"] = n
    a, b, fitted = leave_one_out_priors(out.assign(clicks=n), within)
    out["rate"] = observed_rate(c, clicks)
    out["prior_a"], out["prior_b"], out["prior_fitted"] = a, b, fitted
    out["posterior_mean"] = (a + c) / (a + b + n)
    out["payout"] = _payouts(out, payout)
    out["break_even"] = break_even_rate(out["cost"], clicks, out["payout"])
    be = out["break_even"].to_numpy()
    out["p_below_break_even"] = _p_loss(out, be, c, n, (a, b))
    out["expected_loss"] = out["payout"] * expected_excess(be, a + c, b + n - c)
    out["loss_share"] = loss_share(be, a + c, b + n - c)
    out["zero_p"] = np.where(c == 0, zero_conversion_p(n, a / (a + b)), np.nan)
    out["min_sample"] = clicks >= min_clicks
    return out


def observed_rate(conversions, clicks) -> np.ndarray:
    """Conversions per click, NaN without clicks (arrays of floats)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(clicks > 0, conversions / clicks, np.nan)


def loss_share(break_even, a, b):
    """Of what a wrong choice is expected to cost, the share that keeping an item risks:
    ``E[(t - X)+] / (E[(t - X)+] + E[(X - t)+])`` for its rate ``X ~ Beta(a, b)`` and
    break-even ``t`` (the loss of keeping a loser against the profit a stop forgoes; both
    in conversions per click, the payout cancels). ``E[(t - X)+] = E[(X - t)+] + t - mean``.
    ``loss_share >= 0.95``: keeping is expected to lose 19 times what a stop forgoes. NaN
    where the break-even is NaN.

    >>> round(loss_share(0.5, 1.0, 1.0), 4)        # uniform, at its middle: even
    0.5
    >>> round(loss_share(0.75, 1.0, 1.0), 4)       # 0.28125 / (0.28125 + 0.03125)
    0.9
    """
    t = np.asarray(break_even, dtype=float)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    stop = expected_excess(t, a, b)
    keep = np.maximum(stop + t - a / (a + b), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.isnan(t) | (keep + stop <= 0), np.nan, keep / (keep + stop))
    return float(out) if np.ndim(out) == 0 else out


def _p_loss(out: pd.DataFrame, be: np.ndarray, c, n, prior) -> np.ndarray:
    """``P(rate < break_even)``; with a ``cpc_se`` column (the cost per click's own
    uncertainty, :mod:`toolkit.rules.daily`) averaged over the cost per click."""
    if "cpc_se" not in out:
        return prob_rate_below(be, c, n, prior)
    clicks = out["clicks"].to_numpy(float)
    cpc = np.where(clicks > 0, out["cost"].to_numpy(float) / np.maximum(clicks, 1.0), np.nan)
    p = prob_loss(cpc, out["cpc_se"].to_numpy(float), out["payout"].to_numpy(float), c, n, prior)
    return np.where(np.isnan(be), np.nan, p)


def expected_excess(threshold, a, b):
    """``E[(X - threshold)+]`` for ``X ~ Beta(a, b)`` (vectorised; NaN where the threshold
    is NaN): how far above ``threshold`` the rate is expected to be, counting 0 below it.

    >>> round(expected_excess(0.0, 2.0, 198.0), 6)          # the mean
    0.01
    >>> round(expected_excess(0.5, 1.0, 1.0), 6)            # uniform: (1 - 0.5)^2 / 2
    0.125
    """
    t = np.clip(np.asarray(threshold, dtype=float), 0.0, 1.0)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = a / (a + b) * (1.0 - betainc(a + 1.0, b, t)) - t * (1.0 - betainc(a, b, t))
    out = np.where(np.isnan(np.asarray(threshold, dtype=float)), np.nan, np.maximum(out, 0.0))
    return float(out) if np.ndim(out) == 0 else out
