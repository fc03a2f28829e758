"""Column mappings of the trackers' export layouts, and their detection from a header.

A layout maps the statistics frame's names to the header of a tracker's report: ``date``,
``campaign_id``, ``impressions``, ``clicks``, ``cost``, ``conversions``, ``revenue``, and one
key column per level (``source``, ``subid``, ``country``), or ``level`` and ``key`` columns
(the generic layout). The names follow the column names of each tracker's report screen as
exported to CSV (the trackers let the user rename and reorder columns, so ``columns=`` of
:func:`toolkit.stats.read_stats` overrides any of them). Headers match case-insensitively,
with runs of spaces, ``_`` and ``-`` taken as one space.

>>> detect_layout(["Day", "Campaign ID", "Custom variable 1", "Visits", "Cost",
...                "Conversions", "Revenue"])
'voluum'
>>> detect_layout(["date", "campaign_id", "level", "key", "cost", "conversions", "revenue"])
'generic'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .schema import COUNTRY, LEVELS

#: ``layout -> {name of the statistics frame: header}``. Key columns are named by their level.
LAYOUTS: dict[str, dict[str, str]] = {
    "generic": {
        "date": "date",
        "campaign_id": "campaign_id",
        "level": "level",
        "key": "key",
        "impressions": "impressions",
        "clicks": "clicks",
        "cost": "cost",
        "conversions": "conversions",
        "revenue": "revenue",
    },
    # Voluum: ad clicks arrive as "Visits" ("Clicks" are the lander's clicks); the zone and
    # subId are passed in custom variables.
    "voluum": {
        "date": "Day",
        "campaign_id": "Campaign ID",
        "source": "Custom variable 1",
        "subid": "Custom variable 2",
        COUNTRY: "Country code",
        "impressions": "Impressions",
        "clicks": "Visits",
        "cost": "Cost",
        "conversions": "Conversions",
        "revenue": "Revenue",
    },
    # Binom: conversions are "Leads"; the source and subId are tokens of the campaign URL.
    "binom": {
        "date": "Date",
        "campaign_id": "Campaign ID",
        "source": "Token 1",
        "subid": "Token 2",
        COUNTRY: "Country",
        "impressions": "Impressions",
        "clicks": "Clicks",
        "cost": "Cost",
        "conversions": "Leads",
        "revenue": "Revenue",
    },
    # RedTrack: sub1..sub20 carry the traffic source's macros.
    "redtrack": {
        "date": "Date",
        "campaign_id": "Campaign ID",
        "source": "sub1",
        "subid": "sub2",
        COUNTRY: "Country",
        "impressions": "Impressions",
        "clicks": "Clicks",
        "cost": "Cost",
        "conversions": "Conversions",
        "revenue": "Revenue",
    },
    # Keitaro: "Sub ID 1".."Sub ID 30".
    "keitaro": {
        "date": "Date",
        "campaign_id": "Campaign ID",
        "source": "Sub ID 1",
        "subid": "Sub ID 2",
        COUNTRY: "Country",
        "impressions": "Impressions",
        "clicks": "Clicks",
        "cost": "Cost",
        "conversions": "Conversions",
        "revenue": "Revenue",
    },
    # BeMob: ad clicks are "Visits"; the traffic source's tokens are "Var 1".."Var 10".
    "bemob": {
        "date": "Date",
        "campaign_id": "Campaign ID",
        "source": "Var 1",
        "subid": "Var 2",
        COUNTRY: "Country",
        "impressions": "Impressions",
        "clicks": "Visits",
        "cost": "Cost",
        "conversions": "Conversions",
        "revenue": "Revenue",
    },
}

#: Names a layout must find in a header: the rest may be absent (missing counts are 0).
REQUIRED = ("date", "campaign_id", "cost", "conversions", "revenue")
KEYS = (*LEVELS, "key")


def norm(header: object) -> str:
    """A header as compared: lower case, runs of spaces, ``_`` and ``-`` as one space.

    >>> norm("  Campaign_ID ")
    'campaign id'
    """
    return re.sub(r"[\s_\-]+", " ", str(header)).strip().lower()


def _found(layout: Mapping[str, str], headers: set[str]) -> set[str]:
    return {name for name, header in layout.items() if norm(header) in headers}


def _fits(found: set[str]) -> bool:
    has_key = any(level in found for level in LEVELS) or {"level", "key"} <= found
    return has_key and all(name in found for name in REQUIRED)


def detect_layout(headers: Iterable[object], given: Iterable[str] = ()) -> str | None:
    """The name of the layout whose columns the header holds (the most of them when several
    fit), or None; ``given`` names the columns that ``columns=`` already maps."""
    seen = {norm(h) for h in headers}
    best: tuple[int, str] | None = None
    for name, layout in LAYOUTS.items():
        found = _found(layout, seen) | set(given)
        if _fits(found) and (best is None or len(found) > best[0]):
            best = (len(found), name)
    return None if best is None else best[1]


def resolve(
    headers: Iterable[object], columns: Mapping[str, str] | None, layout: str | None
) -> tuple[str, dict[str, str]]:
    """``(layout name, {name: the header as the file spells it})`` for a file's header.

    ``columns`` maps the file's headers to the frame's names (``{"Zone": "source"}``) and
    wins over the layout's; ``layout`` names one of :data:`LAYOUTS` (detected when None;
    the generic layout when nothing fits). Raises ``KeyError`` for an unknown layout.
    """
    headers = [str(h) for h in headers]
    by_norm = {norm(h): h for h in headers}
    if layout is None:
        given = [n for h, n in (columns or {}).items() if norm(h) in by_norm]
        layout = detect_layout(headers, given) or "generic"
    if layout not in LAYOUTS:
        raise KeyError(f"unknown layout {layout!r}; layouts: {', '.join(LAYOUTS)}")
    mapping = {n: by_norm[norm(h)] for n, h in LAYOUTS[layout].items() if norm(h) in by_norm}
    for header, name in (columns or {}).items():
        if norm(header) in by_norm:
            mapping = {n: h for n, h in mapping.items() if n != name}
            mapping[name] = by_norm[norm(header)]
    return layout, mapping


__all__ = ["LAYOUTS", "REQUIRED", "detect_layout", "norm", "resolve"]
