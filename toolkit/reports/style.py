"""What the faces of a bid report share: the state of each row (its zone, or why it has
none), one fixed colour per state, and the words for price units.

A row's state is its ``zone`` when the bid and the service's prices are comparable (or
``no traffic``, whatever the unit, when the service estimates no traffic at either price: the
campaign's targeting excludes the country); otherwise ``not comparable`` (the bid is in the
other unit and no ``ctr`` converts it), ``error`` (the price query failed) or ``no estimate``
(the service gave no price).

>>> unit_label("CPM")
'USD per 1000 impressions'
>>> COLOURS["below minimum"]
'#D55E00'
>>> label("no traffic")
'no traffic: the targeting excludes it'
"""

from __future__ import annotations

import pandas as pd

from .. import spec

#: The zones (the frame's ``zone`` categories): ``no traffic`` (no bid buys anything: the
#: targeting excludes the country), then those of a comparable bid, from cheapest to dearest.
ZONES: tuple[str, ...] = (
    "no traffic",
    "below minimum",
    "between",
    "at recommended",
    "above recommended",
    "overpaying",
)
NO_TRAFFIC = "no traffic"
BELOW = "below minimum"
OVERPAYING = "overpaying"
#: The zones a bid stands in between the service's prices (drawn at the bid in a plot).
BID_ZONES: tuple[str, ...] = ZONES[1:]
#: The zones a buyer looks at first (a bid that buys nothing, or too much).
LOOK_FIRST: tuple[str, ...] = (BELOW, OVERPAYING)
NOT_COMPARABLE = "not comparable"
NO_ESTIMATE = "no estimate"
ERROR = "error"
#: Every state a row can be in: the zones, then the rows that have none.
STATES: tuple[str, ...] = (*ZONES, NOT_COMPARABLE, NO_ESTIMATE, ERROR)

#: One colour per state, the same in every plot, table and file (Okabe-Ito, readable by
#: colour-blind eyes; greys for the rows without a zone).
COLOURS: dict[str, str] = {
    "no traffic": "#F0E442",
    "below minimum": "#D55E00",
    "between": "#E69F00",
    "at recommended": "#009E73",
    "above recommended": "#56B4E9",
    "overpaying": "#CC79A7",
    NOT_COMPARABLE: "#8C8C8C",
    NO_ESTIMATE: "#BDBDBD",
    ERROR: "#333333",
}

#: What a person reads for a state where its name alone would mislead.
LABELS: dict[str, str] = {NO_TRAFFIC: "no traffic: the targeting excludes it"}


def label(state: object) -> str:
    """The words shown for a state (:data:`LABELS`, else its name)."""
    return LABELS.get(str(state), str(state))


#: What one price unit means, for axis labels and column notes.
UNITS: dict[str, str] = {"CPC": "USD per click", "CPM": "USD per 1000 impressions"}


def unit_label(unit: object) -> str:
    """Words for a price unit (``CPC``/``CPM``); anything else is shown as it is."""
    if unit is None or unit is pd.NA or (isinstance(unit, float) and unit != unit):
        return "USD"
    return UNITS.get(str(unit), f"USD ({unit})")


def country_column() -> str:
    """The column of the bid kind (the countries a campaign bids in)."""
    return spec.bid_kind().column


def country_label() -> str:
    """The bid kind's name for axis labels and legends (``country``)."""
    return spec.bid_kind().name


def states(frame: pd.DataFrame) -> pd.Series:
    """The state of each row of a report frame (a categorical of :data:`STATES`).

    >>> f = pd.DataFrame({"zone": pd.Categorical(["between", None, None], categories=ZONES),
    ...                   "comparable": [True, False, True], "error": ["", None, "timeout"]})
    >>> list(states(f))
    ['between', 'not comparable', 'error']
    """
    zone = frame["zone"].astype("string")
    error = frame["error"].astype("string").fillna("").str.len() > 0
    comparable = frame["comparable"].fillna(False).astype(bool) | (zone == NO_TRAFFIC)
    out = zone.where(zone.notna(), NO_ESTIMATE)
    out = out.where(comparable.fillna(False), NOT_COMPARABLE)
    out = out.where(~error, ERROR)
    return pd.Series(pd.Categorical(out, categories=STATES), index=frame.index, name="state")


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on ``background`` (``#RRGGBB``)."""
    r, g, b = (int(background[i : i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#FFFFFF"


__all__ = [
    "BELOW",
    "BID_ZONES",
    "COLOURS",
    "ERROR",
    "LABELS",
    "LOOK_FIRST",
    "NOT_COMPARABLE",
    "NO_ESTIMATE",
    "NO_TRAFFIC",
    "OVERPAYING",
    "STATES",
    "UNITS",
    "ZONES",
    "country_column",
    "country_label",
    "label",
    "states",
    "text_colour",
    "unit_label",
]
