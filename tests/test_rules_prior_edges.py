"""The prior's fit at its edge: an item without clicks tells nothing and is left out; an item
of one click is an item like the others."""

from __future__ import annotations

from toolkit.rules.evidence import fit_beta_prior


def test_an_item_without_clicks_leaves_the_prior_as_it_was() -> None:
    conversions, clicks = [2, 0, 1, 4], [3000, 2000, 1500, 5000]
    base = fit_beta_prior(conversions, clicks)
    assert fit_beta_prior([*conversions, 0], [*clicks, 0]) == base


def test_an_item_of_one_click_counts() -> None:
    conversions, clicks = [2, 0, 1, 4], [3000, 2000, 1500, 5000]
    base = fit_beta_prior(conversions, clicks)
    with_one = fit_beta_prior([*conversions, 0], [*clicks, 1])
    assert with_one != base
    assert with_one == fit_beta_prior([0, *conversions], [1, *clicks])  # order does not matter


def test_the_clicks_whose_conversions_are_known_are_summed_over_an_items_days() -> None:
    """Under conversion delay a day's ``eff_clicks`` (its clicks whose conversions have had
    time to arrive) are fewer than its clicks; an item's are the sum over its days, and its
    posterior counts those, not all of its clicks."""
    import pandas as pd

    from toolkit.rules.evidence import evidence_frame, item_totals

    days = pd.DataFrame(
        {
            "campaign_id": [7] * 5,
            "level": ["subid"] * 5,
            "key": ["a", "a", "b", "c", "d"],
            "impressions": [0] * 5,
            "clicks": [400, 400, 800, 800, 800],
            "cost": [4.0, 4.0, 8.0, 8.0, 8.0],
            "conversions": [4, 0, 8, 9, 7],
            "revenue": [8.0, 0.0, 16.0, 18.0, 14.0],
            "eff_clicks": [400.0, 100.0, 800.0, 800.0, 800.0],  # a's last day: a quarter known
        }
    )
    totals = item_totals(days).set_index("key")
    assert totals.loc["a", "eff_clicks"] == 500.0 and totals.loc["a", "clicks"] == 800.0
    ev = evidence_frame(days).set_index("key")
    assert ev.loc["a", "eff_clicks"] == 500.0
    a, b = ev.loc["a", "prior_a"], ev.loc["a", "prior_b"]
    assert ev.loc["a", "posterior_mean"] == (a + 4) / (a + b + 500)
