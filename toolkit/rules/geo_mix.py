"""Per-GEO break-even for sources and subIds: an item's payout as the click-weighted mix of
its countries' payouts.

With a per-GEO offer (a payouts table with a row per country,
:mod:`toolkit.rules.payouts`), a subId that sends most of its clicks to a cheap country
earns less per conversion than the campaign's average payout says, so its break-even rate
is lower than the campaign's. When the statistics say it (a stats frame with a ``country``
column on its source and subId rows, beside ``level`` and ``key``), the item's payout is

``sum over its countries c of clicks_c x payout_c / sum of clicks_c``

over the rule's window, each ``payout_c`` as a country item of ``c`` would get it (the
table's row for the country, else the campaign's blank row, the rule's ``payout``, the
campaign's revenue per conversion). Clicks of the item's rows without a country take the
payout the item gets without a mix. The item's ``payout_mix`` says so
(``"payout 4.40: DE 70 %, US 30 %"``); ``why`` of its decisions shows it.

Nothing changes where the statistics have no country per row (an export's path, a frame of
:func:`toolkit.read_stats`, whose trackers' rows become one row per level), where the
payouts table has no row per country for the item's campaign, or at the country and
campaign levels.

>>> table = pd.DataFrame({"campaign_id": [7, 7], "country": ["US", "DE"], "payout": [10.0, 2.0]})
>>> clicks = pd.DataFrame({"campaign_id": [7, 7], "level": ["subid"] * 2, "key": ["a", "a"],
...                        "country": ["US", "DE"], "clicks": [30, 70]})
>>> items = pd.DataFrame({"campaign_id": [7], "level": ["subid"], "key": ["a"],
...                       "clicks": [100.0], "conversions": [0.0], "revenue": [0.0]})
>>> mixed = mix_payouts(items, clicks, table, None)
>>> mixed[["geo_payout", "payout_mix"]].to_dict("records")
[{'geo_payout': 4.4, 'payout_mix': 'payout 4.40: DE 70 %, US 30 %'}]
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from ..stats.countries import country_codes
from ..stats.schema import COUNTRY
from .model import Rule
from .payouts import payout_for

_ITEM = ["campaign_id", "level", "key"]
#: The levels whose items mix their countries' payouts.
MIXED_LEVELS = ("source", "subid")
#: How many of an item's countries its ``payout_mix`` names (the most clicks first).
SHOWN = 3


def country_clicks(
    frame: pd.DataFrame | None, since: dt.date | None, until: dt.date | None
) -> pd.DataFrame | None:
    """Per campaign, level, key and country (ISO code), the clicks of the source and subId
    rows of a stats ``frame`` on the days ``since`` to ``until`` (both included, either may
    be None); None when the frame has no ``country`` column (no country per row)."""
    if frame is None or COUNTRY not in frame:
        return None
    rows = frame[frame["level"].astype(str).isin(MIXED_LEVELS).to_numpy()]
    if since is not None or until is not None:
        days = pd.to_datetime(rows["date"], utc=True).dt.tz_convert(None).dt.floor("D")
        keep = np.ones(len(rows), dtype=bool)
        if since is not None:
            keep &= (days >= pd.Timestamp(since)).to_numpy()
        if until is not None:
            keep &= (days <= pd.Timestamp(until)).to_numpy()
        rows = rows[keep]
    named = rows[COUNTRY].notna() & (rows[COUNTRY].astype(str).str.strip() != "")
    rows = rows[named.to_numpy(dtype=bool)]
    out = pd.DataFrame(
        {
            "campaign_id": rows["campaign_id"].astype("int64").to_numpy(),
            "level": rows["level"].astype(str).to_numpy(),
            "key": rows["key"].astype(str).to_numpy(),
            COUNTRY: _codes(rows[COUNTRY].astype(str).to_numpy(dtype=object)),
            "clicks": rows["clicks"].astype(float).fillna(0.0).to_numpy(),
        }
    )
    return out.groupby([*_ITEM, COUNTRY], as_index=False, sort=True)["clicks"].sum()


def _codes(names: np.ndarray) -> np.ndarray:
    """The ISO codes of country names (each distinct name looked up once)."""
    distinct, at = np.unique(names, return_inverse=True)
    return np.asarray(country_codes(pd.Series(distinct)), dtype=object)[at]


def mix_payouts(
    items: pd.DataFrame, clicks: pd.DataFrame | None, table: pd.DataFrame | None, rule_payout: Any
) -> pd.DataFrame:
    """``items`` (a window's sums per item: ``campaign_id``, ``level``, ``key``, ``clicks``,
    ``conversions``, ``revenue``) with ``geo_payout`` (the click-weighted mix of the item's
    countries' payouts, see the module; NaN where there is no mix) and ``payout_mix`` (what
    it was mixed of, "" where there is no mix). ``clicks``: :func:`country_clicks`;
    ``table``: :func:`~toolkit.rules.payouts.read_payouts`'s. Only campaigns with a row
    per country in ``table`` are mixed."""
    out = items.assign(geo_payout=np.nan, payout_mix="")
    if clicks is None or table is None or clicks.empty or not len(items):
        return out
    geo = table.loc[table[COUNTRY] != "", "campaign_id"].unique()
    mix = clicks[clicks["campaign_id"].isin(geo) & (clicks["clicks"] > 0)]
    if mix.empty:
        return out
    # each country as a country item of its campaign gets it; the last resort (revenue per
    # conversion) from the campaign's items at the item's level, as payout_for reads them
    per = payout_for(items.reset_index(drop=True), table, rule_payout)
    last = items.assign(level=items["level"].astype(str)).groupby(["campaign_id", "level"])
    sums = last[["revenue", "conversions"]].sum()
    at = pd.MultiIndex.from_frame(mix[["campaign_id", "level"]])
    countries = pd.DataFrame(
        {
            "campaign_id": mix["campaign_id"].to_numpy(),
            "level": np.full(len(mix), COUNTRY),
            "key": mix[COUNTRY].to_numpy(),
            "revenue": sums["revenue"].reindex(at).fillna(0.0).to_numpy(),
            "conversions": sums["conversions"].reindex(at).fillna(0.0).to_numpy(),
        }
    )
    mix = mix.assign(payout=payout_for(countries, table, rule_payout))
    return _mixed(out, mix, per)


def _mixed(out: pd.DataFrame, mix: pd.DataFrame, per: np.ndarray) -> pd.DataFrame:
    """``out`` with the mix of each item that has one; the clicks of an item without a
    country take its own payout (``per``)."""
    index = pd.MultiIndex.from_arrays(
        [out["campaign_id"].astype("int64"), out["level"].astype(str), out["key"].astype(str)]
    )
    place = index.get_indexer(pd.MultiIndex.from_frame(mix[_ITEM]))
    rows = mix[place >= 0].assign(at=place[place >= 0])
    if rows.empty:
        return out
    rows["money"] = rows["clicks"] * rows["payout"]
    sums = rows.groupby("at")[["clicks", "money"]].sum()
    at = sums.index.to_numpy()
    known = sums["clicks"].to_numpy()
    rest = np.maximum(out["clicks"].to_numpy(float)[at] - known, 0.0)  # clicks without a country
    geo_payout = out["geo_payout"].to_numpy(float).copy()
    with np.errstate(invalid="ignore"):
        extra = np.where(rest > 0, rest * per[at], 0.0)  # NaN without a payout of its own
    geo_payout[at] = (sums["money"].to_numpy() + extra) / (known + rest)
    words = out["payout_mix"].to_numpy(object).copy()
    rows = rows.sort_values(["at", "clicks", COUNTRY], ascending=[True, False, True])
    parts: dict[int, list[tuple[str, float]]] = {}
    for j, code, n in zip(rows["at"], rows[COUNTRY], rows["clicks"], strict=True):
        parts.setdefault(int(j), []).append((str(code), float(n)))
    for i, j in enumerate(at):
        words[j] = _words(parts[int(j)], float(geo_payout[j]), float(rest[i]))
    return out.assign(geo_payout=geo_payout, payout_mix=words)


def _words(part: list[tuple[str, float]], payout: float, rest: float) -> str:
    """``payout 4.40: DE 70 %, US 30 %`` (``part``: the item's countries and clicks, the
    most clicks first; at most :data:`SHOWN` named)."""
    total = sum(n for _, n in part) + rest
    shares = [f"{c} {_share(n / total)}" for c, n in part[:SHOWN]]
    if len(part) > SHOWN:
        shares.append(f"{len(part) - SHOWN} more")
    if rest > 0:
        shares.append(f"no country {_share(rest / total)}")
    return f"payout {payout:.2f}: " + ", ".join(shares)


def _share(x: float) -> str:
    return f"{x * 100:.0f} %"


def with_mix(
    stats: Any,
    sums: pd.DataFrame,
    since: dt.date | None,
    until: dt.date | None,
    table: pd.DataFrame | None,
    rule: Rule,
) -> pd.DataFrame:
    """``sums`` (a window's per-item sums of ``stats``, a
    :class:`~toolkit.rules.decide.Stats`) with ``geo_payout`` and ``payout_mix``
    (:func:`mix_payouts`) for the items at ``rule``'s level when ``stats`` is a frame with a
    country per row and ``table`` has a row per country; ``sums`` as it is otherwise."""
    if table is None or rule.level not in MIXED_LEVELS or not (table[COUNTRY] != "").any():
        return sums
    clicks = country_clicks(getattr(stats, "frame", None), since, until)
    if clicks is None:
        return sums
    mixed = (sums["level"].astype(str) == rule.level).to_numpy()
    out = sums.assign(geo_payout=np.nan, payout_mix="")
    if mixed.any():
        part = mix_payouts(sums[mixed].reset_index(drop=True), clicks, table, rule.payout)
        out.loc[mixed, "geo_payout"] = part["geo_payout"].to_numpy()
        out.loc[mixed, "payout_mix"] = part["payout_mix"].to_numpy()
    return out


def payouts_of(rows: pd.DataFrame, table: pd.DataFrame | None, rule_payout: Any) -> np.ndarray:
    """Per item of ``rows``, its payout: its ``geo_payout`` where it has a mix
    (:func:`with_mix`), else :func:`~toolkit.rules.payouts.payout_for`'s."""
    out = payout_for(rows, table, rule_payout)
    if "geo_payout" in rows:
        geo = rows["geo_payout"].to_numpy(float)
        out = np.where(np.isnan(geo), out, geo)
    return out


__all__ = ["MIXED_LEVELS", "country_clicks", "mix_payouts", "payouts_of", "with_mix"]
