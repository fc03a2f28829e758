"""The evidence of a rule's items: the rows of its level (a campaign's totals for
``campaign``, countries by their ISO codes), summed over the window, with the prior, the
posterior and every metric a condition reads (:func:`evidence_of`), or only the metrics of
the items' own numbers (:func:`own_evidence_of`: what a replay of stops on own numbers
reads, :class:`~toolkit.rules.matching.Looks`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats.countries import country_codes
from ..stats.schema import COUNTRY
from .evidence import evidence_frame, item_totals, observed_rate, spent
from .geo_mix import payouts_of
from .model import CAMPAIGN, Rule


def measures(ev: pd.DataFrame) -> pd.DataFrame:
    """The evidence frame with every metric of :data:`~toolkit.rules.model.METRICS`."""
    ev = own_measures(ev)
    ev["posterior_cr"] = ev["posterior_mean"]
    with np.errstate(divide="ignore", invalid="ignore"):
        value = ev["payout"] * ev["posterior_mean"]
        ev["roi_expected"] = np.where(ev["cpc"] > 0, (value / ev["cpc"] - 1.0) * 100.0, np.nan)
    ev["p_loss"] = ev["p_below_break_even"]
    ev["p_win"] = 1.0 - ev["p_loss"]
    ev["p_loss_daily"] = spent(ev["p_loss"], ev.get("days", np.nan))
    ev["p_zero"] = ev["zero_p"]
    return ev


def own_measures(ev: pd.DataFrame) -> pd.DataFrame:
    """The evidence frame with the metrics of an item's own numbers (profit, roi, cr, cpa,
    epc, cpc, ctr; ``cr`` is the frame's ``rate``)."""
    n, c = ev["clicks"], ev["conversions"]
    with np.errstate(divide="ignore", invalid="ignore"):
        ev["profit"] = ev["revenue"] - ev["cost"]
        ev["roi"] = np.where(ev["cost"] > 0, ev["profit"] / ev["cost"] * 100.0, np.nan)
        ev["cr"] = ev["rate"]
        ev["cpa"] = np.where(c > 0, ev["cost"] / c, np.nan)
        ev["epc"] = np.where(n > 0, ev["revenue"] / n, np.nan)
        ev["cpc"] = np.where(n > 0, ev["cost"] / n, np.nan)
        imp = ev["impressions"] if "impressions" in ev else pd.Series(0.0, index=ev.index)
        ev["ctr"] = np.where(imp > 0, n / imp * 100.0, np.nan)
    return ev


def evidence_of(
    sums: pd.DataFrame, rule: Rule, payouts: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The evidence of every item at a rule's level (a campaign's totals for ``campaign``:
    the sums of its rows at ``rule.of``, the prior pooled over campaigns; countries by their
    ISO codes, whatever the tracker wrote); each item's payout from ``payouts`` (a table of
    :func:`~toolkit.rules.payouts.read_payouts`), the rule's ``payout`` or the campaign's
    revenue per conversion; the mix of its countries' (:mod:`toolkit.rules.geo_mix`)."""
    rows, within = _level_rows(sums, rule)
    pay = payouts_of(rows, payouts, rule.payout)
    ev = evidence_frame(rows, pay, within=within, summed=True)
    if "impressions" not in ev:
        ev["impressions"] = 0.0
    return measures(ev)


def own_evidence_of(sums: pd.DataFrame, rule: Rule) -> pd.DataFrame:
    """The items of a rule's level with their sums and the metrics of their own numbers
    (:func:`own_measures`), as :func:`evidence_of` gives them to the last digit: for rules
    that read nothing else (no prior, no payout)."""
    ev = _level_rows(sums, rule)[0].copy()
    ev["rate"] = observed_rate(ev["conversions"].to_numpy(float), ev["clicks"].to_numpy(float))
    if "impressions" not in ev:
        ev["impressions"] = 0.0
    return own_measures(ev)


def _level_rows(sums: pd.DataFrame, rule: Rule) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The rows of a rule's items (see :func:`evidence_of`), and the columns whose groups
    its prior is fitted in."""
    within: tuple[str, ...] = ("campaign_id", "level")
    if rule.level == CAMPAIGN:
        rows = sums[sums["level"] == rule.of]
        rows = rows.groupby("campaign_id", as_index=False, observed=True).sum(numeric_only=True)
        rows["level"] = CAMPAIGN
        rows["key"] = rows["campaign_id"].astype(str)
        within = ("level",)
    elif rule.level == COUNTRY:  # "United States", "usa" and "US" are one item: US
        rows = sums[sums["level"] == rule.level]
        rows = item_totals(rows.assign(key=country_codes(rows["key"])))
    else:
        rows = sums[sums["level"] == rule.level]
    return rows.reset_index(drop=True), within


__all__ = ["evidence_of", "measures", "own_evidence_of", "own_measures"]
