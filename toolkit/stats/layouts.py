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
from functools import lru_cache

from .schema import COUNTRY, LEVELS

#: ``layout -> {name of the statistics frame: header, or its aliases in order of preference}``.
#: Key columns are named by their level. ``tracker_campaign`` is the tracker's own campaign
#: id (Voluum's and BeMob's UUIDs, RedTrack's 24 hex digits, Keitaro's and Binom's numbers),
#: which a campaign map turns into the network's ``campaign_id``; ``group_level`` and
#: ``group_name`` are the columns of a grouped report (one row per level of its grouping).
LAYOUTS: dict[str, dict[str, str | tuple[str, ...]]] = {
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
    # subId are passed in custom variables, which a traffic source template names after the
    # source's tokens ("Zone ID", "Sub ID").
    "voluum": {
        "date": ("Day", "Date"),
        "tracker_campaign": "Campaign ID",
        "source": ("Custom variable 1", "Zone ID", "Zone"),
        "subid": ("Custom variable 2", "Sub ID", "SubID"),
        COUNTRY: ("Country code", "Country"),
        "impressions": "Impressions",
        "clicks": "Visits",
        "cost": "Cost",
        "conversions": "Conversions",
        "revenue": "Revenue",
    },
    # Binom: conversions are "Leads", the cost "Spend" in its reports; the source and subId
    # are tokens of the campaign URL.
    "binom": {
        "date": ("Date", "Day"),
        "tracker_campaign": "Campaign ID",
        "source": "Token 1",
        "subid": "Token 2",
        COUNTRY: "Country",
        "impressions": "Impressions",
        "clicks": "Clicks",
        "cost": ("Cost", "Spend"),
        "conversions": "Leads",
        "revenue": "Revenue",
    },
    # Binom's grouped report: "Level" (1, 2, ...) and "Name" (the day, campaign, token... of
    # that level of the grouping); columns= says what each level is ({"Level 1": "date"}).
    "binom_grouped": {
        "group_level": "Level",
        "group_name": "Name",
        "impressions": "Impressions",
        "clicks": "Clicks",
        "cost": ("Spend", "Cost"),
        "conversions": "Leads",
        "revenue": "Revenue",
    },
    # RedTrack: sub1..sub20 carry the traffic source's macros; its reports name the sums
    # "Total conversions" and "Total revenue" when conversion types are split.
    "redtrack": {
        "date": "Date",
        "tracker_campaign": "Campaign ID",
        "source": "sub1",
        "subid": "sub2",
        COUNTRY: "Country",
        "impressions": "Impressions",
        "clicks": "Clicks",
        "cost": "Cost",
        "conversions": ("Conversions", "Total conversions"),
        "revenue": ("Revenue", "Total revenue"),
    },
    # Keitaro: "Sub ID 1".."Sub ID 30"; its interface (and export) in Russian names the
    # columns Дата, ID кампании (Кампания: the name), Клики, Расход, Конверсии, Доход, Страна.
    "keitaro": {
        "date": ("Date", "Дата"),
        "tracker_campaign": ("Campaign ID", "ID кампании", "Campaign", "Кампания"),
        "source": "Sub ID 1",
        "subid": "Sub ID 2",
        COUNTRY: ("Country", "Страна"),
        "impressions": ("Impressions", "Показы"),
        "clicks": ("Clicks", "Клики"),
        "cost": ("Cost", "Расход"),
        "conversions": ("Conversions", "Конверсии"),
        "revenue": ("Revenue", "Доход"),
    },
    # BeMob: ad clicks are "Visits"; the traffic source's tokens are "Var 1".."Var 10".
    "bemob": {
        "date": "Date",
        "tracker_campaign": "Campaign ID",
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


def aliases(header: str | tuple[str, ...]) -> tuple[str, ...]:
    """The headers a layout's entry accepts, in order of preference."""
    return (header,) if isinstance(header, str) else tuple(header)


@lru_cache(maxsize=1)
def known_headers() -> frozenset[str]:
    """Every header some layout names (as :func:`norm` gives it), for sniffing encodings."""
    return frozenset(norm(a) for lay in LAYOUTS.values() for h in lay.values() for a in aliases(h))


def _pick(
    layout: Mapping[str, str | tuple[str, ...]], by_norm: Mapping[str, str]
) -> dict[str, str]:
    """``{name: header as the file spells it}`` for the names whose alias the header holds
    (the first alias found)."""
    out = {}
    for name, header in layout.items():
        found = [by_norm[norm(a)] for a in aliases(header) if norm(a) in by_norm]
        if found:
            out[name] = found[0]
    return out


def _fits(found: set[str]) -> bool:
    if {"group_level", "group_name"} <= found:
        return all(name in found for name in REQUIRED if name not in ("date", "campaign_id"))
    has_key = any(level in found for level in LEVELS) or {"level", "key"} <= found
    has_campaign = bool(found & {"campaign_id", "tracker_campaign"})
    required = all(name in found for name in REQUIRED if name != "campaign_id")
    return has_key and has_campaign and required


def detect_layout(headers: Iterable[object], given: Iterable[str] = ()) -> str | None:
    """The name of the layout whose columns the header holds (the most of them when several
    fit), or None; ``given`` names the columns that ``columns=`` already maps."""
    by_norm = {norm(h): str(h) for h in headers}
    best: tuple[int, str] | None = None
    for name, layout in LAYOUTS.items():
        found = set(_pick(layout, by_norm)) | set(given)
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
    mapping = _pick(LAYOUTS[layout], by_norm)
    for header, name in (columns or {}).items():
        if norm(header) in by_norm:
            spelt = by_norm[norm(header)]
            mapping = {n: h for n, h in mapping.items() if n != name and h != spelt}
            mapping[name] = spelt
    return layout, mapping


__all__ = ["LAYOUTS", "REQUIRED", "aliases", "detect_layout", "known_headers", "norm", "resolve"]
