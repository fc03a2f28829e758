"""The notebook view of a bid report: a summary (bids per zone and ad format, in the zones'
colours) and the report's rows as HTML tables. Every text is escaped; no pandas Styler is
needed (:func:`styled` gives one for whoever wants to sort and filter in Jupyter).

``BidReport._repr_html_`` returns :func:`repr_html` of its frame.

>>> from toolkit.reports.style import ZONES
>>> f = pd.DataFrame({"campaign_id": pd.array([1, 1, 2], dtype="Int64"),
...     "ad_format": ["push", "push", "pops"], "comparable": [True, True, False],
...     "zone": pd.Categorical(["between", "overpaying", None], categories=ZONES),
...     "error": pd.array([None, None, None], dtype="string")})
>>> summary(f).loc["all", ["rows", "campaigns", "between", "not comparable"]].tolist()
[3, 2, 1, 1]
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from . import money
from .style import (
    BELOW,
    BID_ZONES,
    COLOURS,
    LOOK_FIRST,
    NO_TRAFFIC,
    OVERPAYING,
    STATES,
    country_column,
    label,
    states,
    text_colour,
)

#: The report's columns shown in its table, in order (the others stay in the frame).
TABLE_COLUMNS: tuple[str, ...] = (
    "campaign_id",
    "name",
    "ad_format",
    "mode",
    "work_status",
    "<bid kind>",
    "bid",
    "price_unit",
    "minimum",
    "recommended",
    "position",
    "zone",
    "gap_minimum_pct",
    "gap_recommended_pct",
    "traffic_estimate",
    "error",
)
_CSS = (
    "<style>"
    ".ctk-report table{border-collapse:collapse;font:12px/1.4 sans-serif;margin:4px 0 12px}"
    ".ctk-report th,.ctk-report td{border:1px solid #DDD;padding:2px 6px;text-align:right}"
    ".ctk-report th{background:#F4F4F4}.ctk-report td.t{text-align:left}"
    ".ctk-report caption{text-align:left;font-weight:bold;padding:4px 0}"
    "</style>"
)


#: The columns of a report made with statistics shown after :data:`TABLE_COLUMNS`.
PROFIT_TABLE_COLUMNS: tuple[str, ...] = (
    "clicks",
    "conversions",
    "revenue",
    "cost",
    "break_even_bid",
    "max_profitable_bid_low",
    "max_profitable_bid",
    "profit_day_now",
    "profit_day_proposed",
    "profit_zone",
    "profit_note",
)


def table_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of :data:`TABLE_COLUMNS` that ``frame`` has (the bid kind's own name),
    then :data:`PROFIT_TABLE_COLUMNS` when it was joined to statistics."""
    wanted = [country_column() if c == "<bid kind>" else c for c in TABLE_COLUMNS]
    wanted.insert(0, "account")  # a report of several accounts: each row's, first
    if "profit_zone" in frame.columns and frame["profit_zone"].notna().any():
        wanted += list(PROFIT_TABLE_COLUMNS)
    return [c for c in wanted if c in frame.columns]


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Bids per ad format (and ``all``): rows, campaigns, and rows per state (the zones
    always, the other states when some row is in them)."""
    st = states(frame)
    fmt = frame["ad_format"].astype("string").fillna("(none)")
    counts = pd.crosstab(fmt, st, dropna=False).reindex(columns=list(STATES), fill_value=0)
    counts.loc["all"] = counts.sum()
    keep = [s for s in STATES if s in BID_ZONES or counts.loc["all", s] > 0]
    rows = fmt.value_counts()
    campaigns = frame.groupby(fmt, observed=True)["campaign_id"].nunique()
    out = pd.DataFrame(
        {
            "rows": rows.reindex(counts.index).fillna(len(frame)),
            "campaigns": campaigns.reindex(counts.index).fillna(frame["campaign_id"].nunique()),
        }
    ).astype(int)
    out = out.join(counts[keep].astype(int))
    out.index.name = "ad_format"
    out.columns.name = None
    return out


#: Columns of counts: shown as whole numbers.
COUNT_COLUMNS = frozenset(
    {"rows", "bids", "campaigns", *[u for _, _, u in money.FIGURES], "spend_unknown_bids"}
    | {"campaign_spend_unknown", *[money.HEADERS[u] for _, _, u in money.FIGURES]}
    | {"rules", "clicks", "conversions", "impressions_stats"}
)
#: Columns of money whose missing value means "unknown" (never 0).
MONEY_WORDS = ("spend", "profit")


def is_count(column: str) -> bool:
    """A column of counts (whole numbers): :data:`COUNT_COLUMNS`, or named ``bids ...``."""
    return column in COUNT_COLUMNS or column.startswith("bids ")


#: Columns of prices and bids: shown to the 4 decimals a bid has.
PRICE_COLUMNS = frozenset(
    {"bid", "old_bid", "new_bid", "minimum", "recommended", "gap_minimum", "gap_recommended"}
    | {"value_per_unit", "break_even_bid", "max_profitable_bid", "max_profitable_bid_low"}
)
#: Columns of USD amounts (not prices) besides those of :data:`MONEY_WORDS`, by first word.
AMOUNT_WORDS = ("revenue", "cost", "net", "payout", "balance", "limit_day_sum")


def _number(value: float, column: str) -> str:
    if is_count(column):
        return f"{value:,.0f}"
    if column in PRICE_COLUMNS:
        text = f"{value:,.4f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    if column.endswith("_pct"):
        return f"{value:+.1f}%"
    if column == "position" or column.endswith("_days"):
        return f"{value:.2f}"
    if any(w in column for w in MONEY_WORDS) or column.startswith(AMOUNT_WORDS):
        return f"{value:,.2f}"
    if "traffic" in column or "limit" in column or column in ("campaigns", "rows"):
        return f"{value:,.0f}"
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def cell_text(value: Any, column: str = "") -> str:
    """A cell as text: missing values empty, numbers by the column's kind, times in UTC."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "unknown" if any(w in column for w in MONEY_WORDS) else ""
        return _number(value, column)
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return str(value)


def _cell(value: Any, column: str, colour: str | None = None) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    text = html.escape(cell_text(value, column))
    is_text = not isinstance(value, (int, float)) or isinstance(value, bool)
    css = (
        f' style="background:{colour};color:{text_colour(colour)};white-space:nowrap"'
        if colour
        else ""
    )
    return f"<td{' class=t' if is_text else ''}{css}>{text}</td>"


def table_html(
    df: pd.DataFrame,
    *,
    caption: str | None = None,
    colour_column: str | None = None,
    colours: Sequence[str | None] | None = None,
    index: bool = False,
    state_headers: bool = False,
) -> str:
    """``df`` as an HTML table; ``colour_column``'s cells painted with ``colours`` (one per
    row, None for none); with ``state_headers``, the header cells named after a state in
    its colour."""
    data = df.reset_index() if index else df
    head = "".join(_header(str(c), state_headers) for c in data.columns)
    body = []
    for i, values in enumerate(data.itertuples(index=False, name=None)):
        tds = [
            _cell(v, str(c), colours[i] if colours is not None and c == colour_column else None)
            for c, v in zip(data.columns, values, strict=True)
        ]
        body.append("<tr>" + "".join(tds) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _header(name: str, coloured: bool) -> str:
    if coloured and name in COLOURS:
        colour = COLOURS[name]
        style = f' style="background:{colour};color:{text_colour(colour)}"'
        return f"<th{style}>{html.escape(name)}</th>"
    return f"<th>{html.escape(name)}</th>"


def rows_html(frame: pd.DataFrame, *, caption: str | None = None, limit: int | None = None) -> str:
    """The report's rows (:func:`table_columns`), the zone cell in its state's colour; the
    first ``limit`` rows when given."""
    shown = frame if limit is None else frame.head(limit)
    st = states(shown).astype(str)
    table = shown[table_columns(shown)].copy()
    table["zone"] = [label(s) for s in st]
    colours = [COLOURS.get(s) for s in st]
    return table_html(table, caption=caption, colour_column="zone", colours=colours)


def headline(frame: pd.DataFrame) -> str:
    """One line: campaigns, bids, when the prices were asked, rows needing a look."""
    st = states(frame)
    asked = frame["asked_at"].dropna() if "asked_at" in frame else pd.Series([], dtype=object)
    when = f", prices asked {cell_text(asked.max())}" if len(asked) else ""
    low = int((st == BELOW).sum())
    high = int((st == OVERPAYING).sum())
    none = int((st == NO_TRAFFIC).sum())
    excluded = f", {none} with {label(NO_TRAFFIC)}" if none else ""
    return (
        f"{frame['campaign_id'].nunique()} campaigns, {len(frame)} country bids{when}: "
        f"{low} below minimum, {high} overpaying{excluded}"
    )


def money_table(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`toolkit.reports.money.by_zone` with the words a person reads: zones by their
    labels, columns by :data:`toolkit.reports.money.HEADERS`."""
    table = money.by_zone(frame).rename(columns=money.HEADERS)
    table.index = [label(s) for s in table.index]
    table.index.name = "zone"
    return table


#: What the estimate leaves out, said on every face of a report.
ESTIMATE_NOTE = (
    "The prices and traffic are the service's estimate for the campaign's targeting alone: "
    "it ignores whitelists, blacklists and frequency caps."
)


def ctr_note(frame: pd.DataFrame) -> str:
    """The click-through rates the report used, per ad format ("" when the frame has no
    ``ctr`` column), and the formats without one.

    >>> f = pd.DataFrame({"ad_format": ["push", "pops", "push"], "ctr": [0.01, None, 0.01]})
    >>> ctr_note(f)
    'ctr used: push 0.01; none for pops (a per-click bid there has its spend unknown)'
    """
    if "ctr" not in frame.columns or not len(frame):
        return ""
    rates = frame.groupby(frame["ad_format"].astype(str), sort=True)["ctr"].first()
    given = [f"{fmt} {rate:g}" for fmt, rate in rates.items() if pd.notna(rate)]
    missing = [str(fmt) for fmt, rate in rates.items() if pd.isna(rate)]
    said = "ctr used: " + ("; ".join(given) if given else "none")
    if given and missing:
        said += f"; none for {', '.join(missing)}"
    return said + (" (a per-click bid there has its spend unknown)" if missing else "")


def notes(frame: pd.DataFrame, left_out: str = "") -> list[str]:
    """The lines every face of a report shows under its headline: the campaigns left out,
    the money at the current bids, the ctr used, what the estimate ignores."""
    total = money.totals_line(frame) if len(frame) else ""
    lines = [left_out, total + "." if total else "", ctr_note(frame)]
    return [line for line in lines if line] + [ESTIMATE_NOTE]


def money_html(frame: pd.DataFrame) -> str:
    """The table of :func:`money_table`, each zone's name in its colour."""
    table = money_table(frame)
    states_ = [*money.by_zone(frame).index]
    colours = [COLOURS.get(s) for s in states_]
    caption = "Bids and money per zone (estimates at the current bids)"
    return table_html(table, index=True, caption=caption, colour_column="zone", colours=colours)


def summary_html(frame: pd.DataFrame, *, title: str = "Bid report", left_out: str = "") -> str:
    """A headline, the notes (:func:`notes`), the money per zone and the table of
    :func:`summary`, in a ``div.ctk-report``."""
    table = table_html(
        summary(frame), index=True, caption="Bids per zone and ad format", state_headers=True
    )
    said = "".join(f"<p>{html.escape(line)}</p>" for line in notes(frame, left_out))
    return (
        f'<div class="ctk-report">{_CSS}<h3>{html.escape(title)}</h3>'
        f"<p>{html.escape(headline(frame))}</p>{said}{money_html(frame)}{table}</div>"
    )


def repr_html(
    frame: pd.DataFrame, *, title: str = "Bid report", rows: int = 20, left_out: str = ""
) -> str:
    """The notebook view: the summary, then the first ``rows`` rows below the minimum or
    overpaying (the ones a buyer looks at first); ``left_out``: the line saying which
    campaigns the report left out."""
    look = frame[states(frame).isin(list(LOOK_FIRST)).to_numpy()]
    part = ""
    if len(look):
        caption = f"Below minimum or overpaying ({min(rows, len(look))} of {len(look)})"
        part = f'<div class="ctk-report">{rows_html(look, caption=caption, limit=rows)}</div>'
    return summary_html(frame, title=title, left_out=left_out) + part


def styled(frame: pd.DataFrame) -> Any:
    """The report's rows as a pandas Styler, zone cells in their colours, text escaped
    (needs jinja2, which Jupyter has)."""
    table = frame[table_columns(frame)].copy()
    table["zone"] = states(frame).astype(str).to_numpy()

    def paint(value: Any) -> str:
        colour = COLOURS.get(str(value))
        return f"background-color:{colour};color:{text_colour(colour)}" if colour else ""

    return table.style.map(paint, subset=["zone"]).format(precision=4, na_rep="", escape="html")


__all__ = [
    "COUNT_COLUMNS",
    "PRICE_COLUMNS",
    "TABLE_COLUMNS",
    "ESTIMATE_NOTE",
    "cell_text",
    "ctr_note",
    "money_html",
    "notes",
    "headline",
    "is_count",
    "money_table",
    "repr_html",
    "rows_html",
    "summary",
    "summary_html",
    "styled",
    "table_columns",
    "table_html",
]
