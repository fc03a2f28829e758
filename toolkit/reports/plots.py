"""Plots of a bid report, each a :class:`matplotlib.figure.Figure` (shown inline by a
notebook, saved with ``fig.savefig``); no pyplot state is touched.

- :func:`ranges`: one campaign, its minimum -> recommended range per country, the bid a dot
  coloured by its zone;
- :func:`traffic_curve`: one campaign and country, estimated traffic against the bid;
- :func:`zones_by_format`, :func:`zones_by_country`: the account's rows per zone, stacked;
- :func:`price_drift`: minimum and recommended prices over time, from the price history.

Every function takes frames (the report's ``frame``, a history frame), never a report.
The bids' artists carry a ``gid`` (``bid:<state>``, ``bars:<state>``) for whoever inspects
a figure.

>>> fig = ranges(report.frame, 1000001)                               # doctest: +SKIP
>>> fig.savefig("ranges.png")                                         # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .style import (
    BID_ZONES,
    COLOURS,
    ERROR,
    NO_ESTIMATE,
    NO_TRAFFIC,
    NOT_COMPARABLE,
    STATES,
    country_column,
    country_label,
    label,
    states,
    unit_label,
)
from .units import PRICE_UNITS
from .zones import traffic_at

RANGE_COLOUR = "#C8C8C8"
#: Marker of a bid per state: zones are filled dots; the rows without a zone stand apart.
MARKERS: dict[str, dict[str, Any]] = {
    **{z: {"marker": "o", "s": 70, "edgecolors": "white", "linewidths": 0.8} for z in BID_ZONES},
    NO_TRAFFIC: {"marker": "o", "s": 55, "facecolors": "none", "linewidths": 1.5},
    NOT_COMPARABLE: {"marker": "s", "s": 55, "facecolors": "none", "linewidths": 1.5},
    NO_ESTIMATE: {"marker": "D", "s": 45, "facecolors": "none", "linewidths": 1.5},
    ERROR: {"marker": "X", "s": 70, "linewidths": 0.5},
}
#: What a legend says of the rows without a zone.
LEGEND_NOTES = {
    NO_TRAFFIC: label(NO_TRAFFIC),
    NOT_COMPARABLE: "not comparable (bid in the other unit)",
    NO_ESTIMATE: "no estimate (no price)",
    ERROR: "error (price query failed)",
}


def _label(state: str) -> str:
    return LEGEND_NOTES.get(state, state)


def _fmt(value: float) -> str:
    """A price, with as many decimals as it needs (0.045, 1.2, 12)."""
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def _campaign(frame: pd.DataFrame, campaign_id: int) -> pd.DataFrame:
    rows = frame[frame["campaign_id"] == campaign_id]
    if rows.empty:
        raise KeyError(f"campaign {campaign_id} has no rows in the report")
    return rows


def _legend_handle(state: str) -> Line2D:
    style = MARKERS[state]
    filled = style.get("facecolors") != "none"
    return Line2D(
        [],
        [],
        linestyle="none",
        marker=style["marker"],
        markersize=8,
        markerfacecolor=COLOURS[state] if filled else "none",
        markeredgecolor=COLOURS[state],
        markeredgewidth=1.5,
        label=_label(state),
    )


def _scatter(ax: Any, x: Any, y: Any, state: str) -> None:
    style = dict(MARKERS[state])
    if style.get("facecolors") == "none":
        style["edgecolors"] = COLOURS[state]
    else:
        style["c"] = COLOURS[state]
    points = ax.scatter(x, y, zorder=3, clip_on=False, **style)
    points.set_gid(f"bid:{state}")


def _title(rows: pd.DataFrame) -> str:
    first = rows.iloc[0]
    return f"{first['name']}  (#{first['campaign_id']}, {first['ad_format']}, {first['mode']})"


def _note(row: pd.Series, state: str) -> str:
    """The text right of a country's range: the bid, and why it has no zone."""
    bid = "no bid" if pd.isna(row["bid"]) else f"bid {_fmt(row['bid'])}"
    if state == NOT_COMPARABLE:
        return f"{bid} {row['mode']}: not comparable"
    if state == NO_TRAFFIC:
        return f"{bid}: {label(state)}"
    if state == ERROR:
        text = str(row["error"])
        return f"{bid}: error, {text[:28] + '...' if len(text) > 30 else text}"
    return f"{bid}: {state}"


def _unit(rows: pd.DataFrame) -> object:
    """The unit of the prices in ``rows``: the campaign's own (``mode``) when its bids are
    comparable (prices converted with a ctr are in it), else the prices' (``price_unit``)."""
    comparable = rows["comparable"].fillna(False).astype(bool)
    column = "mode" if comparable.any() else "price_unit"
    return rows[column].iloc[0]


def _range_limits(rows: pd.DataFrame, comparable: pd.Series) -> tuple[float, float]:
    values = pd.concat([rows["minimum"], rows["recommended"], rows.loc[comparable, "bid"]])
    top = float(values.max()) if values.notna().any() else 1.0
    return 0.0, top * 1.12 if top > 0 else 1.0


def ranges(frame: pd.DataFrame, campaign_id: int, *, max_rows: int = 40) -> Figure:
    """One campaign: per country the minimum -> recommended range (grey bar), the bid as a dot
    coloured by its zone; rows without a zone are drawn at the left edge with their own
    marker, and the text right of each row says the bid and its state. The dearest
    ``max_rows`` countries are shown."""
    rows = _campaign(frame, campaign_id)
    rows = rows.assign(state=states(rows).to_numpy())
    rows = rows.sort_values(["recommended", "bid"], ascending=False, na_position="last")
    rows = rows.head(max_rows).iloc[::-1].reset_index(drop=True)
    y = np.arange(len(rows))
    zoned = rows["state"].isin(BID_ZONES).to_numpy()
    left, right = _range_limits(rows, pd.Series(zoned, index=rows.index))
    fig = Figure(figsize=(9, 1.9 + 0.34 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    bars = ax.hlines(y, rows["minimum"], rows["recommended"], colors=RANGE_COLOUR, lw=7)
    bars.set_gid("ranges")
    ax.scatter(rows["minimum"], y, marker="|", s=160, c="#666666", zorder=2)
    ax.scatter(rows["recommended"], y, marker="|", s=160, c="#666666", zorder=2)
    for state in STATES:
        mask = (rows["state"] == state).to_numpy()
        if mask.any():
            x = rows.loc[mask, "bid"] if state in BID_ZONES else np.full(mask.sum(), left)
            _scatter(ax, x, y[mask], state)
    ax.set_xlim(left, right)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_yticks(y, labels=list(rows[country_column()].astype(str)))
    notes = ax.twinx()
    notes.set_ylim(ax.get_ylim())
    notes.set_yticks(y, labels=[_note(r, r["state"]) for _, r in rows.iterrows()], fontsize=8)
    ax.set_xlabel(f"price ({unit_label(_unit(rows))})")
    ax.set_ylabel(country_label())
    ax.grid(axis="x", color="#EEEEEE")
    ax.set_axisbelow(True)
    ax.set_title(_title(rows), loc="left", fontsize=11, parse_math=False)
    extra = [
        s for s in (NO_TRAFFIC, NOT_COMPARABLE, NO_ESTIMATE, ERROR) if (rows["state"] == s).any()
    ]
    handles = [Patch(color=RANGE_COLOUR, label="minimum -> recommended")]
    handles += [_legend_handle(s) for s in (*BID_ZONES, *extra)]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    return fig


def _traffic_at(
    bid: Any, minimum: float, recommended: float, minimum_traffic: float, recommended_traffic: float
) -> np.ndarray:
    """Estimated traffic at each bid of ``bid`` (:func:`toolkit.reports.zones.traffic_at`)."""
    bids = np.atleast_1d(np.asarray(bid, dtype=float))
    curve = (minimum, recommended, minimum_traffic, recommended_traffic)
    return np.fromiter((traffic_at(float(b), *curve) for b in bids), float, len(bids))


def _row(frame: pd.DataFrame, campaign_id: int, code: str) -> tuple[pd.Series, str]:
    """The row of one campaign and country, and its state."""
    rows = _campaign(frame, campaign_id)
    rows = rows[rows[country_column()] == code]
    if rows.empty:
        raise KeyError(f"campaign {campaign_id} has no row for {code}")
    return rows.iloc[0], str(states(rows).iloc[0])


def _message_figure(title: str, message: str) -> Figure:
    fig = Figure(figsize=(8, 2.5), layout="constrained")
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(title, loc="left", fontsize=11, parse_math=False)
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, wrap=True)
    return fig


def _mark_bid(ax: Any, row: pd.Series, state: str, curve: tuple[float, ...]) -> None:
    """The current bid on the curve, or a note saying why it cannot stand there."""
    bid = float(row["bid"])
    if state not in BID_ZONES:
        note = (
            f"bid {_fmt(bid)} {row['mode']}: {_label(state)};\n"
            f"these prices are {unit_label(row['price_unit'])}"
        )
        ax.text(0.02, 0.96, note, transform=ax.transAxes, va="top", fontsize=9)
        return
    at = float(_traffic_at(bid, *curve)[0])
    _scatter(ax, [bid], [at], state)
    right = bid > 0.55 * ax.get_xlim()[1]
    ax.annotate(
        f"bid {_fmt(bid)}: ~{at:,.0f} a day ({state})",
        (bid, at),
        textcoords="offset points",
        xytext=(-8 if right else 8, -14 if at > 0.8 * ax.get_ylim()[1] else 8),
        ha="right" if right else "left",
        fontsize=9,
    )


def traffic_curve(frame: pd.DataFrame, campaign_id: int, code: str) -> Figure:
    """Estimated traffic (impressions a day) against the bid for one campaign and country:
    none below the minimum, linear up to the recommended price, saturating above it
    (:func:`toolkit.reports.zones.traffic_at`); the current bid is marked. The curve is
    drawn from the service's two estimates: an estimate itself."""
    row, state = _row(frame, campaign_id, code)
    title = f"{row['name']}  (#{campaign_id})\n{code}: estimated traffic by bid"
    prices = row[["minimum", "recommended", "minimum_traffic", "recommended_traffic"]]
    if state == NO_TRAFFIC:
        return _message_figure(title, f"No traffic curve: {label(state)} ({code}).")
    if prices.isna().any():
        why = f"error: {row['error']}" if state == ERROR else "the service gave no estimate"
        return _message_figure(title, f"No traffic curve: {why}.")
    curve = tuple(float(v) for v in prices)
    lo, hi, t_lo, t_hi = curve
    top = max(hi, float(row["bid"]) if state in BID_ZONES else 0.0) * 1.25
    x = np.unique(np.concatenate([np.linspace(0, top, 240), [lo, hi, lo - max(1e-7, lo * 1e-6)]]))
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.add_subplot()
    y = _traffic_at(x, *curve)
    line = ax.plot(x, y, color="#444444", lw=2)[0]
    line.set_label("estimated traffic (interpolated)")
    ax.axvline(lo, color=COLOURS["below minimum"], ls="--", lw=1, label=f"minimum {_fmt(lo)}")
    ax.axvline(hi, color=COLOURS["at recommended"], ls="--", lw=1, label=f"recommended {_fmt(hi)}")
    ax.set_xlim(0, top)
    ax.set_ylim(0, max(float(np.nanmax(y)), t_hi, t_lo) * 1.12 or 1)
    _mark_bid(ax, row, state, curve)
    ax.yaxis.set_major_formatter("{x:,.0f}")
    ax.set_xlabel(f"bid ({unit_label(row['mode'] if row['comparable'] else row['price_unit'])})")
    ax.set_ylabel("estimated impressions a day (estimate)")
    ax.set_title(title, loc="left", fontsize=11, parse_math=False)
    ax.grid(color="#EEEEEE")
    ax.legend(handles=ax.get_lines()[:3], loc="lower right", fontsize=8)
    return fig


def _counts(frame: pd.DataFrame, column: str, top: int | None) -> pd.DataFrame:
    """Rows per group (index) and state (columns), the largest groups first; past ``top``,
    the rest are summed as ``other``."""
    groups = frame[column].astype("string").fillna("(none)")
    table = pd.crosstab(groups, states(frame), dropna=False)
    table = table.reindex(columns=list(STATES), fill_value=0)
    table = table.loc[table.sum(axis=1).sort_values(ascending=False, kind="stable").index]
    if top is not None and len(table) > top:
        rest = table.iloc[top:].sum().rename("other")
        table = pd.concat([table.iloc[:top], rest.to_frame().T])
    return table


def _stacked(table: pd.DataFrame, title: str, ylabel: str) -> Figure:
    """Horizontal stacked bars, one per group, a segment per state (the bid zones always in
    the legend, the other states when present)."""
    if table.empty:
        return _message_figure(title, "No bids in the report.")
    fig = Figure(figsize=(9, 1.8 + 0.38 * max(len(table), 2)), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(len(table))[::-1]
    left = np.zeros(len(table))
    for state in STATES:
        values = table[state].to_numpy(dtype=float)
        if state not in BID_ZONES and not values.any():
            continue
        bars = ax.barh(y, values, left=left, color=COLOURS[state], label=_label(state))
        for patch in bars:
            patch.set_gid(f"bars:{state}")
        left += values
    for yi, total in zip(y, left, strict=True):
        ax.text(total, yi, f" {total:,.0f}", va="center", fontsize=8)
    ax.set_yticks(y, labels=[str(g) for g in table.index])
    ax.set_xlim(0, max(left.max(), 1) * 1.1)
    ax.set_xlabel("rows (campaign x country bids)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left", fontsize=11)
    ax.grid(axis="x", color="#EEEEEE")
    ax.set_axisbelow(True)
    fig.legend(loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    return fig


def zones_by_format(frame: pd.DataFrame) -> Figure:
    """Across the account: how many bids of each ad format fall in each zone."""
    return _stacked(_counts(frame, "ad_format", None), "Bids by zone and ad format", "ad format")


def zones_by_country(frame: pd.DataFrame, *, top: int = 15) -> Figure:
    """Across the account: how many bids in each country fall in each zone; the ``top``
    countries with the most bids, the rest summed as ``other``."""
    table = _counts(frame, country_column(), top)
    return _stacked(table, f"Bids by zone and {country_label()}", country_label())


#: Distinct days (UTC) of prices the price drift needs: one day's asks are dots, not drift.
DRIFT_DAYS = 2


def drift_days(history: pd.DataFrame | None) -> int:
    """Distinct days (UTC) on which the history's prices were asked."""
    if history is None or history.empty:
        return 0
    asked = pd.to_datetime(history["asked_at"], utc=True)
    return int(asked.dt.floor("D").nunique())


def drift_note(history: pd.DataFrame | None) -> str:
    """Why the price drift is not drawn ("" when it is).

    >>> drift_note(None)
    'Price drift not drawn: no price history yet.'
    """
    days = drift_days(history)
    if days >= DRIFT_DAYS:
        return ""
    if not days:
        return "Price drift not drawn: no price history yet."
    return (
        f"Price drift not drawn: the price history holds prices of {days} day; it needs "
        f"{DRIFT_DAYS} days (reports made on different days) to show how prices move."
    )


#: Asks further apart than this belong to different rounds (reports) of the price history.
ROUND_GAP = pd.Timedelta(hours=1)


def ask_rounds(history: pd.DataFrame) -> pd.Series:
    """The round of each ask of a price history (0, 1, ...), in time order: a report asks
    each query once, so a round ends where a (format, country, query) is asked again, or
    after a pause of more than :data:`ROUND_GAP`."""
    keys = ["ad_format", country_column(), "query"]
    ordered = history.sort_values("asked_at", kind="stable")
    rounds, seen, number, last = [], set(), 0, None
    for key, at in zip(
        ordered[keys].astype(str).itertuples(index=False, name=None),
        ordered["asked_at"],
        strict=True,
    ):
        if key in seen or (last is not None and at - last > ROUND_GAP):
            number, seen = number + 1, set()
        seen.add(key)
        rounds.append(number)
        last = at
    return pd.Series(rounds, index=ordered.index, name="round").reindex(history.index)


def _history_part(
    history: pd.DataFrame, ad_format: str, codes: Sequence[str] | None, top: int
) -> tuple[pd.DataFrame, int]:
    """One format's history, one row per round and country: the median price over the
    queries asked for the country in that round (their targeting differs), at the round's
    first ask; limited to ``codes`` or the ``top`` most asked countries. Also the most
    queries a median was taken of."""
    column = country_column()
    part = history[history["ad_format"].astype(str) == ad_format]
    if codes is None:
        codes = list(part[column].value_counts().index[:top])
    part = part[part[column].isin(list(codes))].assign(round=ask_rounds(history))
    grouped = part.groupby(["round", column], observed=True)
    med = grouped[["minimum", "recommended"]].median()
    med["asked_at"] = grouped["asked_at"].min()
    n_queries = int(grouped.size().max()) if len(part) else 0
    med = med.reset_index()
    med["asked_at"] = pd.to_datetime(med["asked_at"], utc=True).dt.tz_localize(None)
    return med, n_queries


def _format_units(history: pd.DataFrame, frame: pd.DataFrame | None) -> dict[str, str]:
    """Price unit per ad format of the history's prices (as the price operation answers):
    its ``price_unit`` column, else a report frame's, else
    :data:`toolkit.reports.units.PRICE_UNITS`."""
    units = dict(PRICE_UNITS)
    for source in (frame, history):
        if source is not None and "price_unit" in source.columns and not source.empty:
            pairs = source[["ad_format", "price_unit"]].dropna().astype(str).drop_duplicates()
            units.update(dict(zip(pairs["ad_format"], pairs["price_unit"], strict=True)))
    return units


def _drift_axis(ax: Any, part: pd.DataFrame, colours: dict[str, Any]) -> None:
    column = country_column()
    for code, rows in part.groupby(column, observed=True, sort=True):
        rows = rows.sort_values("asked_at")
        colour = colours[str(code)]
        ax.plot(rows["asked_at"], rows["recommended"], "-o", ms=3, color=colour, label=str(code))
        ax.plot(rows["asked_at"], rows["minimum"], "--", color=colour, lw=1)
        ax.fill_between(
            rows["asked_at"], rows["minimum"], rows["recommended"], color=colour, alpha=0.08
        )


def price_drift(
    history: pd.DataFrame,
    *,
    codes: Sequence[str] | None = None,
    ad_formats: Sequence[str] | None = None,
    top: int = 6,
    frame: pd.DataFrame | None = None,
) -> Figure:
    """Minimum (dashed) and recommended (solid) price per country over time, one panel per
    ad format (their units differ). ``codes`` picks countries (default: the ``top`` most
    asked of each format; a country keeps its colour in every panel when ten colours are
    enough). Each report's asks are one point (:func:`ask_rounds`); where a
    country was asked with several targetings in a round, the median is drawn. A history of
    fewer than :data:`DRIFT_DAYS` days gives a figure saying so (:func:`drift_note`)."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    if history.empty:
        return _message_figure("Price drift", "No price history yet.")
    if drift_note(history):
        return _message_figure("Price drift", drift_note(history).replace("; it", ";\nit"))
    present = list(dict.fromkeys(history["ad_format"].astype(str)))
    formats = [f for f in (ad_formats or present) if f in present]
    units = _format_units(history, frame)
    fig = Figure(figsize=(9, 0.6 + 3.0 * max(len(formats), 1)), layout="constrained")
    axes = fig.subplots(max(len(formats), 1), 1, squeeze=False, sharex=True)[:, 0]
    parts = [_history_part(history, fmt, codes, top) for fmt in formats]
    names = sorted({str(c) for part, _ in parts for c in part[country_column()]})
    shared = {c: f"C{i}" for i, c in enumerate(names)} if len(names) <= 10 else None
    for ax, fmt, (part, n_queries) in zip(axes, formats, parts, strict=False):
        own = sorted({str(c) for c in part[country_column()]})
        _drift_axis(ax, part, shared or {c: f"C{i % 10}" for i, c in enumerate(own)})
        median = f", median of up to {n_queries} queries a country" if n_queries > 1 else ""
        ax.set_title(f"{fmt}{median}", loc="left", fontsize=10)
        ax.set_ylabel(unit_label(units.get(fmt)))
        ax.grid(color="#EEEEEE")
        ax.legend(title=country_label(), fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        locator = AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    axes[-1].set_xlabel("asked at (UTC)")
    fig.suptitle("Minimum (dashed) and recommended (solid) price over time", x=0.02, ha="left")
    return fig


__all__ = [
    "MARKERS",
    "DRIFT_DAYS",
    "ROUND_GAP",
    "ask_rounds",
    "drift_days",
    "drift_note",
    "price_drift",
    "ranges",
    "traffic_curve",
    "zones_by_country",
    "zones_by_format",
]
