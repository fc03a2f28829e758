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
