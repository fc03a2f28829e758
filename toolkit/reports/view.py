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

from .style import COLOURS, STATES, ZONES, country_column, states, text_colour

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


def table_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of :data:`TABLE_COLUMNS` that ``frame`` has (the bid kind's own name)."""
    wanted = [country_column() if c == "<bid kind>" else c for c in TABLE_COLUMNS]
    return [c for c in wanted if c in frame.columns]


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Bids per ad format (and ``all``): rows, campaigns, and rows per state (the zones
    always, the other states when some row is in them)."""
    st = states(frame)
    fmt = frame["ad_format"].astype("string").fillna("(none)")
    counts = pd.crosstab(fmt, st, dropna=False).reindex(columns=list(STATES), fill_value=0)
    counts.loc["all"] = counts.sum()
    keep = [s for s in STATES if s in ZONES or counts.loc["all", s] > 0]
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


#: Columns of prices and bids: shown to the 4 decimals a bid has.
PRICE_COLUMNS = frozenset(
    {"bid", "old_bid", "new_bid", "minimum", "recommended", "gap_minimum", "gap_recommended"}
)


def _number(value: float, column: str) -> str:
    if column in PRICE_COLUMNS:
        text = f"{value:,.4f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    if column.endswith("_pct"):
        return f"{value:+.1f}%"
    if column == "position" or column.endswith("_days"):
        return f"{value:.2f}"
    if "spend" in column or column in ("balance", "limit_day_sum"):
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
        return "" if math.isnan(value) else _number(value, column)
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
    table["zone"] = st.to_numpy()
    colours = [COLOURS.get(s) for s in st]
    return table_html(table, caption=caption, colour_column="zone", colours=colours)


def headline(frame: pd.DataFrame) -> str:
    """One line: campaigns, bids, when the prices were asked, rows needing a look."""
    st = states(frame)
    asked = frame["asked_at"].dropna() if "asked_at" in frame else pd.Series([], dtype=object)
    when = f", prices asked {cell_text(asked.max())}" if len(asked) else ""
    low = int((st == ZONES[0]).sum())
    high = int((st == ZONES[-1]).sum())
    return (
        f"{frame['campaign_id'].nunique()} campaigns, {len(frame)} country bids{when}: "
        f"{low} below minimum, {high} overpaying"
    )


def summary_html(frame: pd.DataFrame, *, title: str = "Bid report") -> str:
    """A headline and the table of :func:`summary`, in a ``div.ctk-report``."""
    table = table_html(
        summary(frame), index=True, caption="Bids per zone and ad format", state_headers=True
    )
    return (
        f'<div class="ctk-report">{_CSS}<h3>{html.escape(title)}</h3>'
        f"<p>{html.escape(headline(frame))}</p>{table}</div>"
    )


def repr_html(frame: pd.DataFrame, *, title: str = "Bid report", rows: int = 20) -> str:
    """The notebook view: the summary, then the first ``rows`` rows below the minimum or
    overpaying (the ones a buyer looks at first)."""
    look = frame[states(frame).isin([ZONES[0], ZONES[-1]]).to_numpy()]
    part = ""
    if len(look):
        caption = f"Below minimum or overpaying ({min(rows, len(look))} of {len(look)})"
        part = f'<div class="ctk-report">{rows_html(look, caption=caption, limit=rows)}</div>'
    return summary_html(frame, title=title) + part


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
    "PRICE_COLUMNS",
    "TABLE_COLUMNS",
    "cell_text",
    "headline",
    "repr_html",
    "rows_html",
    "summary",
    "summary_html",
    "styled",
    "table_columns",
    "table_html",
]
