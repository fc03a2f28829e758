"""Price units: what the price operation's prices are per, and CPM <-> CPC conversions.

The interface does not say what unit the price operation answers in. The sandbox's model
(and this toolkit) take the price as per click (``CPC``) for push and in-page, per 1,000
impressions (``CPM``) for popunders and video (docs/sandbox.md). A campaign buys in its own
``mode`` (``CPM`` or ``CPC``); its bid compares with a price only in the same unit, or after
a conversion with an expected click-through rate: ``CPC = CPM / (1000 * ctr)``.

``estimated_traffic`` counts impressions per day, whatever the unit; a spend per day is
``impressions / 1000 * CPM`` or ``impressions * ctr * CPC`` (so a per-click spend needs a ctr).

>>> price_unit("push"), price_unit("pops")
('CPC', 'CPM')
>>> convert(0.05, "CPC", "CPM", 0.01)  # 0.05 per click at a 1% ctr is 0.50 per 1000
0.5
>>> round(convert(0.5, "CPM", "CPC", 0.01), 6)
0.05
>>> spend_per_day(100_000, 0.5, "CPM"), spend_per_day(100_000, 0.05, "CPC", 0.01)
(50.0, 50.0)
>>> ctr_for({"push": 0.02}, "pops") is None
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from .. import spec
from ..frames.price_queries import PRICE_UNITS

CPM, CPC = spec.MODES
#: Impressions per CPM unit.
PER_MILLE = 1000.0

Ctr = float | Mapping[str, float] | None


def price_unit(ad_format: str) -> str:
    """``CPC`` or ``CPM``: what the price of a format is per."""
    try:
        return PRICE_UNITS[ad_format]
    except KeyError:
        raise ValueError(f"unknown ad format {ad_format!r}") from None


def check_ctr(ctr: Ctr) -> None:
    """A ctr is a share (0 < ctr <= 1), or a mapping of format -> share."""
    values = ctr.items() if isinstance(ctr, Mapping) else [("", ctr)]
    for fmt, value in values:
        if fmt and fmt not in spec.FORMATS:
            raise ValueError(f"ctr: unknown ad format {fmt!r}; formats: {', '.join(spec.FORMATS)}")
        if value is None:
            continue
        number = float(value)
        if not (0 < number <= 1) or math.isnan(number):
            raise ValueError(
                f"ctr must be a share of impressions from 0 to 1 (0.01 is 1%), got {value!r}"
            )


def parse_ctr(text: str | None) -> Ctr:
    """A ctr as the command line takes it: ``0.01``, or ``push=0.01,pops=0.002``.

    >>> parse_ctr("0.01"), parse_ctr("push=0.02, video=0.005")
    (0.01, {'push': 0.02, 'video': 0.005})
    """
    if text is None:
        return None
    try:
        if "=" not in text:
            ctr: Ctr = float(text)
        else:
            pairs = [p.partition("=") for p in text.split(",")]
            ctr = {f.strip().lower(): float(v) for f, _, v in pairs}
    except ValueError:
        raise ValueError(
            f"ctr: {text!r} is not a share like 0.01 or push=0.01,pops=0.002"
        ) from None
    check_ctr(ctr)
    return ctr


def ctr_for(ctr: Ctr, ad_format: str) -> float | None:
    """The ctr of a format: the one number, or the mapping's entry (None when not given)."""
    if ctr is None:
        return None
    if isinstance(ctr, Mapping):
        value = ctr.get(ad_format)
        return None if value is None else float(value)
    return float(ctr)


def convert(price: float, from_unit: str, to_unit: str, ctr: float | None) -> float:
    """A price in ``from_unit`` expressed in ``to_unit`` (NaN when a ctr is needed and
    missing): ``CPM = CPC * 1000 * ctr``, ``CPC = CPM / (1000 * ctr)``."""
    if from_unit == to_unit:
        return price
    if ctr is None:
        return math.nan
    if from_unit == CPC:
        return price * PER_MILLE * ctr
    return price / (PER_MILLE * ctr)


def spend_per_day(impressions: float, bid: float, unit: str, ctr: float | None = None) -> float:
    """USD per day of ``impressions`` a day bought at ``bid`` per ``unit`` (NaN, unknown,
    when a per-click bid has no ctr to count clicks; 0 when nothing is bought).

    >>> spend_per_day(100_000, 0.05, "CPC"), spend_per_day(0, 0.05, "CPC")
    (nan, 0.0)
    """
    if impressions == 0:
        return 0.0
    if unit == CPM:
        return impressions / PER_MILLE * bid
    if ctr is None:
        return math.nan
    return impressions * ctr * bid


__all__ = [
    "CPC",
    "CPM",
    "PER_MILLE",
    "PRICE_UNITS",
    "check_ctr",
    "parse_ctr",
    "convert",
    "ctr_for",
    "price_unit",
    "spend_per_day",
]
