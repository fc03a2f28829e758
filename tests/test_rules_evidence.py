"""The numbers behind statistical rules, against hand-computed cases and direct integration."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from toolkit.rules.evidence import (
    BetaPrior,
    break_even_rate,
    clicks_for_confidence,
    evidence_frame,
    fit_beta_prior,
    prob_rate_below,
    zero_conversion_p,
)


def _beta_cdf_by_integration(t: float, a: float, b: float, steps: int = 200_000) -> float:
    """P(X < t) for X ~ Beta(a, b) by the midpoint rule, the density built from lgamma."""
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    x = (np.arange(steps) + 0.5) / steps
    dens = np.exp(log_norm + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x))
    below = x < t
    return float(dens[below].sum() / steps)


@pytest.mark.parametrize("n", [0, 1, 10, 300])
@pytest.mark.parametrize("t", [0.001, 0.01, 0.2])
def test_uniform_prior_and_no_conversion_is_one_minus_power(n, t):
    assert prob_rate_below(t, 0, n, BetaPrior(1.0, 1.0)) == pytest.approx(1 - (1 - t) ** (n + 1))


def test_hand_computed_case_with_one_conversion():
    # Beta(2, 50): P(X < t) = 1 - (1-t)^51 - 51 t (1-t)^50
    t = 0.02
    expected = 1 - (1 - t) ** 51 - 51 * t * (1 - t) ** 50
    assert prob_rate_below(t, 1, 50, BetaPrior(1.0, 1.0)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("a", "b", "c", "n", "t"),
    [
        (2.0, 198.0, 3, 400, 0.01),
        (0.5, 40.0, 7, 900, 0.006),
        (3.3, 120.0, 0, 250, 0.02),
    ],
)
def test_posterior_against_numerical_integration(a, b, c, n, t):
    got = prob_rate_below(t, c, n, BetaPrior(a, b))
    assert got == pytest.approx(_beta_cdf_by_integration(t, a + c, b + n - c), abs=2e-4)


def test_prior_order_matters():
    # a is the conversions' side: a larger a puts the rate higher, so P(rate < t) is smaller
    low = prob_rate_below(0.01, 0, 100, BetaPrior(1.0, 199.0))  # 1 - 0.99 ** 299
    high = prob_rate_below(0.01, 0, 100, BetaPrior(199.0, 1.0))
    assert low == pytest.approx(1 - 0.99**299)
    assert low > 0.5 > high


def test_thresholds_outside_zero_one_and_arrays():
    assert prob_rate_below(-1.0, 0, 10, BetaPrior(1, 1)) == 0.0
    assert prob_rate_below(2.0, 0, 10, BetaPrior(1, 1)) == 1.0
    out = prob_rate_below(
        np.array([0.01, 0.02]),
        np.array([0, 0]),
        np.array([10, 10]),
        (np.array([1.0, 1.0]), np.array([1.0, 1.0])),
    )
    assert out.shape == (2,) and out[0] < out[1]


def test_poisson_and_binomial_zero_conversion_p():
    assert zero_conversion_p(200, 0.01) == pytest.approx(math.exp(-2))
    assert zero_conversion_p(200, 0.01, binomial=True) == pytest.approx(0.99**200)
    assert zero_conversion_p(0, 0.5) == 1.0
    np.testing.assert_allclose(zero_conversion_p(np.array([0, 100]), 0.02), [1.0, math.exp(-2)])


@pytest.mark.parametrize("rate", [0.001, 0.013, 0.05, 0.3])
@pytest.mark.parametrize("p", [0.01, 0.05, 0.2])
@pytest.mark.parametrize("binomial", [False, True])
def test_clicks_for_confidence_is_the_inverse(rate, p, binomial):
    n = clicks_for_confidence(rate, p, binomial=binomial)
    assert zero_conversion_p(n, rate, binomial=binomial) <= p
    assert zero_conversion_p(n - 1, rate, binomial=binomial) > p


def test_clicks_for_confidence_edges():
    assert clicks_for_confidence(0.01, 0.05) == 300  # ln 20 / 0.01 = 299.57
    assert clicks_for_confidence(0.0, 0.05) == math.inf
    with pytest.raises(ValueError):
        clicks_for_confidence(0.01, 0.0)


def test_prior_fit_recovers_a_known_beta():
    rng = np.random.default_rng(20261124)
    a, b = 2.0, 198.0
    rates = rng.beta(a, b, size=400)
    clicks = rng.integers(500, 5000, size=400)
    conversions = rng.binomial(clicks, rates)
    prior = fit_beta_prior(conversions, clicks)
    assert prior.fitted
    assert prior.mean == pytest.approx(a / (a + b), rel=0.1)
    assert prior.a == pytest.approx(a, rel=0.35)
    assert prior.b == pytest.approx(b, rel=0.35)


def test_prior_fallbacks_are_weak_and_never_degenerate():
    one = fit_beta_prior([3], [100])
    assert not one.fitted and one.a == pytest.approx(1.0)  # a = PRIOR_MIN_A, no spike at 0
    assert one.mean == pytest.approx(3.5 / 101) and one.a + one.b <= 100
    tiny = fit_beta_prior([0], [3])  # a prior never weighs more than its clicks
    assert not tiny.fitted and tiny.a + tiny.b == pytest.approx(3.0)
    same = fit_beta_prior([10, 10, 10, 10], [1000, 1000, 1000, 1000])  # no spread
    # the spread no larger than the noise: one standard error of its estimate,
    # m (1 - m) sqrt(2 (K - 1)) / (N - sum n^2 / N), so a + b = 3000 / sqrt(6) - 1 = 1,224;
    # but a prior weighs at most one of its items, on average: 1,000 clicks
    assert same.fitted and same.mean == pytest.approx(0.01)
    assert 3000 / math.sqrt(6) - 1 > 1000
    assert same.a + same.b == pytest.approx(1000)
    wide = fit_beta_prior([1, 30, 4, 12], [1000, 1000, 1000, 1000])  # items that differ
    m = 47 / 4000
    assert wide.fitted and wide.mean == pytest.approx(m) and wide.a >= 1
    assert wide.a + wide.b < 100  # far less than one item: the items say little of another
    none = fit_beta_prior([0, 0, 0], [0, 0, 0])  # no clicks at all
    assert (none.a, none.b, none.fitted) == (1.0, 1.0, False)
    zeros = fit_beta_prior([0, 0, 0, 0], [100, 200, 300, 400])  # no conversions
    assert not zeros.fitted
    for prior in (one, same, none, zeros):
        assert prior.a > 0 and prior.b > 0


def test_a_weak_fallback_claims_no_spike_at_zero_either():
    # a campaign's first day: 1 conversion in 5,000 clicks of two subIds
    prior = fit_beta_prior([1, 0], [3000, 2000])
    assert not prior.fitted and prior.a == pytest.approx(1.0)
    # the smoothed pooled rate 1.5 / 5,001 worth 1 / that = 3,334 clicks is more than one
    # subId's 2,500 on average: the prior weighs 2,500 clicks, its a kept at 1 by its mean
    assert prior.a + prior.b == pytest.approx(2500) and prior.mean == pytest.approx(1 / 2500)
    # a subId without a conversion in 200 clicks, break-even at half the campaign's rate:
    # under Beta(1, b + 200), P(rate < t) = 1 - (1 - t) ** (b + 200), about 0.41
    t = prior.mean / 2
    p = prob_rate_below(t, 0, 200, prior)
    assert p == pytest.approx(1 - (1 - t) ** (prior.b + 200))
    assert p < 0.5  # a prior of a = 0.0006 (worth 2 clicks) said 0.99


def test_break_even_rate():
    assert break_even_rate(5.0, 1000, 2.5) == pytest.approx(0.002)
    assert math.isnan(break_even_rate(5.0, 0, 2.5))
    assert math.isnan(break_even_rate(5.0, 10, 0.0))


def _synthetic_stats(seed: int = 7, campaigns: int = 20, items: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for cid in range(1, campaigns + 1):
        rates = rng.beta(2.0, 150.0, size=items)
        for i, rate in enumerate(rates):
            for day in range(2):  # two rows per item: the frame sums them
                clicks = int(rng.integers(0, 800))
                conv = int(rng.binomial(clicks, rate))
                rows.append(
                    (
                        cid,
                        "source",
                        f"s{i}",
                        day,
                        clicks * 20,
                        clicks,
                        clicks * 0.02,
                        conv,
                        conv * 2.0,
                    )
                )
    cols = [
        "campaign_id",
        "level",
        "key",
        "day",
        "impressions",
        "clicks",
        "cost",
        "conversions",
        "revenue",
    ]
    return pd.DataFrame(rows, columns=cols)


def test_evidence_frame_one_row_per_item_and_probabilities_in_range():
    stats = _synthetic_stats()
    ev = evidence_frame(stats)
    assert len(ev) == 20 * 60
    assert not ev.duplicated(["campaign_id", "level", "key"]).any()
    totals = stats.groupby(["campaign_id", "level", "key"])["clicks"].sum().to_numpy()
    np.testing.assert_array_equal(ev["clicks"].to_numpy(), totals)
    p = ev["p_below_break_even"]
    assert p.notna().all() and p.between(0, 1).all()
    z = ev["zero_p"].dropna()
    assert z.between(0, 1).all()
    assert (ev["prior_a"] > 0).all() and (ev["prior_b"] > 0).all()
    assert ev["prior_fitted"].all()
    np.testing.assert_allclose(ev["break_even"], 0.01)  # cpc 0.02 / payout 2.0


def test_evidence_prior_leaves_the_item_out_of_its_mean_and_in_its_spread():
    stats = _synthetic_stats(campaigns=1, items=30)
    ev = evidence_frame(stats)
    others = ev.iloc[1:]
    row = ev.iloc[0]
    # the mean is the others' pooled rate
    pooled = others["conversions"].sum() / others["clicks"].sum()
    assert row["prior_a"] / (row["prior_a"] + row["prior_b"]) == pytest.approx(pooled)
    # the spread is read with the item among them: an item that converts ten times as well
    # as the others makes its own prior wider (it weighs less), and is judged by its clicks
    loud = ev.copy()
    loud.loc[0, "conversions"] = min(loud.loc[0, "clicks"], 10 * loud.loc[0, "conversions"] + 20)
    heard = evidence_frame(loud, summed=True).iloc[0]
    alone = fit_beta_prior(others["conversions"], others["clicks"])
    assert heard["prior_a"] / (heard["prior_a"] + heard["prior_b"]) == pytest.approx(pooled)
    assert heard["prior_a"] + heard["prior_b"] < 0.75 * (alone.a + alone.b)


def test_a_subid_converting_among_silent_ones_is_not_judged_by_their_silence():
    # 9 subIds x 2,100 clicks without a conversion, one with 30: at a payout of 10 and a cpc
    # of 0.03 it earns 0.143 per click for 0.03 (ROI +376 %). Its prior comes from the
    # silent ones; weighed as all their 18,900 clicks, it read the winner as a sure loss.
    keys = [f"s{i}" for i in range(10)]
    stats = pd.DataFrame({"campaign_id": 1, "level": "subid", "key": keys, "impressions": 0,
                          "clicks": 2100.0, "cost": 63.0, "conversions": [30.0] + [0.0] * 9,
                          "revenue": [300.0] + [0.0] * 9})  # fmt: skip
    ev = evidence_frame(stats, payout=10.0, summed=True).set_index("key")
    assert ev.loc["s0", "prior_a"] + ev.loc["s0", "prior_b"] <= 2100  # one subId's worth
    assert ev.loc["s0", "posterior_mean"] > ev.loc["s0", "break_even"]  # 0.003
    assert ev.loc["s0", "p_below_break_even"] < 0.01
    # the silent ones are still sure losses
    assert (ev.drop(index="s0")["p_below_break_even"] > 0.99).all()


def test_evidence_probability_falls_as_conversions_rise():
    base = pd.DataFrame(
        {
            "campaign_id": [1] * 5,
            "level": ["source"] * 5,
            "key": list("abcde"),
            "impressions": [0] * 5,
            "clicks": [1000, 1200, 900, 1100, 500],
            "cost": [10.0, 12.0, 9.0, 11.0, 5.0],
            "conversions": [8, 15, 4, 11, 0],
            "revenue": [16.0, 30.0, 8.0, 22.0, 0.0],
        }
    )
    probs = []
    for conv in range(0, 12):
        s = base.copy()
        s.loc[4, "conversions"] = conv
        probs.append(evidence_frame(s, payout=2.0).set_index("key").loc["e", "p_below_break_even"])
    assert all(x > y for x, y in zip(probs, probs[1:], strict=False))


def test_evidence_zero_p_and_min_sample():
    s = pd.DataFrame(
        {
            "campaign_id": [1] * 4,
            "level": ["source"] * 4,
            "key": list("abcd"),
            "impressions": [0] * 4,
            "clicks": [1000, 1000, 1000, 50],
            "cost": [10.0] * 3 + [0.5],
            "conversions": [10, 20, 5, 0],
            "revenue": [20.0, 40.0, 10.0, 0.0],
        }
    )
    ev = evidence_frame(s, min_clicks=100).set_index("key")
    d = ev.loc["d"]
    rate = d["prior_a"] / (d["prior_a"] + d["prior_b"])
    assert d["zero_p"] == pytest.approx(math.exp(-50 * rate))
    assert math.isnan(ev.loc["a", "zero_p"])
    assert list(ev["min_sample"]) == [True, True, True, False]


def test_a_fitted_prior_claims_no_spike_of_dead_items():
    # two busy items without conversions and two small ones converting often: the moment fit
    # alone gives a spread so wide that a < 1 (most items at about 0 conversions)
    conversions, clicks = [0, 0, 6, 5, 3], [3000, 2500, 60, 40, 400]
    prior = fit_beta_prior(conversions, clicks)
    assert prior.fitted and prior.a == pytest.approx(1.0)  # raised to PRIOR_MIN_A
    assert prior.mean == pytest.approx(sum(conversions) / sum(clicks))  # its mean kept
    # an item with no conversion in 300 clicks is then not sure to be dead at a third of it
    assert prob_rate_below(prior.mean / 3, 0, 300, prior) < 0.95


def test_loss_share_by_hand_and_by_integration():
    from toolkit.rules.evidence import loss_share

    # uniform rate, break-even 0.75: keeping risks (0.75^2 / 2), a stop forgoes (0.25^2 / 2)
    assert loss_share(0.75, 1.0, 1.0) == pytest.approx(0.28125 / (0.28125 + 0.03125), rel=1e-12)
    assert loss_share(0.01, 2.0, 198.0) == pytest.approx(0.5, rel=1e-9)  # break-even = mean
    a, b, t = 3.0, 300.0, 0.02
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    x = (np.arange(400_000) + 0.5) / 400_000
    dens = np.exp(log_norm + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x)) / 400_000
    keep, stop = (np.maximum(t - x, 0) * dens).sum(), (np.maximum(x - t, 0) * dens).sum()
    assert loss_share(t, a, b) == pytest.approx(keep / (keep + stop), rel=1e-4)
    assert np.isnan(loss_share(np.nan, a, b))


def test_evidence_loss_share_weighs_what_keeping_and_stopping_cost():
    s = pd.DataFrame(
        {
            "campaign_id": [1] * 4,
            "level": ["subid"] * 4,
            "key": ["a", "b", "c", "d"],
            "impressions": [0] * 4,
            "clicks": [1000, 1000, 1000, 300],
            "cost": [10.0, 10.0, 10.0, 3.0],
            "conversions": [10, 12, 9, 0],
            "revenue": [20.0, 24.0, 18.0, 0.0],
        }
    )
    e = evidence_frame(s).set_index("key")
    for key in "abcd":
        row = e.loc[key]
        stop = row["expected_loss"] / row["payout"]  # per click, in conversions
        keep = stop + row["break_even"] - row["posterior_mean"]
        assert row["loss_share"] == pytest.approx(keep / (keep + stop), rel=1e-9)
    # d (no conversion in 300 clicks) risks more by being kept than c, its best sibling
    assert e.loc["d", "loss_share"] > e.loc["b", "loss_share"]
