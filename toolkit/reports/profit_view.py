"""The profit side of a bid report as a buyer reads it: money per profit zone, and the bid
rules (``report.bid_rules``: a campaign's bids for single sources and subIds) as tables of
the HTML page, the XLSX workbook (sheet ``bid rules``) and the PDF.

A bid rule has no price estimate of its own (the service prices countries), so its rows
show the statistics and the break-even, never traffic or a profit a day:
:data:`~toolkit.reports.rule_rows.NO_PRICE` says so above each table.

>>> from toolkit.reports.profit import PROFIT_ZONE_DTYPE
>>> f = pd.DataFrame({"campaign_id": [1, 1, 2],
...     "profit_zone": pd.Series(["unprofitable", "profitable", "profitable"],
...                              dtype=PROFIT_ZONE_DTYPE),
...     "clicks": [100.0, 50.0, 10.0], "cost": [9.0, 2.0, 1.0], "revenue": [3.0, 6.0, 4.0],
...     "profit_day_now": [-1.5, 2.0, float("nan")], "profit_day_proposed": [0.0, 2.5, 1.0]})
>>> t = by_profit_zone(f)
>>> t.loc["profitable", ["bids", "net", "profit_day_now", "profit_unknown"]].tolist()
[2.0, 7.0, 2.0, 1.0]
>>> float(t.loc["all", "profit_day_proposed"])
3.5
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from . import view
from .profit import PROFIT_ZONES
from .rule_rows import NO_PRICE

#: The sheet of the bid rules in a report's workbook.
RULES_SHEET = "bid rules"
#: Rows of the bid rules the PDF shows (those that cost most); the HTML and XLSX show all.
PDF_RULES = 32
#: The columns of :func:`by_profit_zone`: the statistics' window, then USD a day.
WINDOW = ("clicks", "conversions", "revenue", "cost")
DAY = ("spend_estimate", "profit_day_now", "profit_day_proposed")
#: The words of each column of :func:`by_profit_zone` for a person (the files' headers).
HEADERS: dict[str, str] = {
    "bids": "bids",
    "rules": "rules",
    "campaigns": "campaigns",
    "clicks": "clicks",
    "conversions": "conversions",
    "revenue": "revenue (USD, window)",
    "cost": "cost (USD, window)",
    "net": "net (USD, window)",
    "spend_estimate": "spend (USD a day)",
    "profit_day_now": "profit now (USD a day)",
    "profit_day_proposed": "profit proposed (USD a day)",
    "profit_unknown": "bids with profit unknown",
}
#: The columns of a bid rule shown in the HTML page and the PDF (the workbook has them all).
RULE_COLUMNS = (
    "campaign_id",
    "mode",
    "level",
    "key",
    "bid",
    "clicks",
    "conversions",
    "revenue",
    "cost",
    "payout",
    "break_even_bid",
    "max_profitable_bid_low",
    "max_profitable_bid",
    "profit_zone",
    "note",
)


def has_profit(frame: pd.DataFrame) -> bool:
    """True when a report frame was joined to statistics (some row has a profit zone)."""
    return "profit_zone" in frame.columns and bool(frame["profit_zone"].notna().any())


def _sums(table: pd.DataFrame, groups: pd.Series, columns: tuple[str, ...]) -> pd.DataFrame:
    index = pd.Index(list(PROFIT_ZONES), name="profit_zone")
    out = pd.DataFrame(index=index)
    for name in [c for c in columns if c in table.columns]:
        values = pd.to_numeric(table[name], errors="coerce").astype("float64")
        out[name] = values.groupby(groups).sum(min_count=1).reindex(index)
    return out


def _zone_table(table: pd.DataFrame, count: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """Per profit zone (the five always, then ``all``): ``count`` rows, campaigns and the
    sums of ``columns``; a zone without rows has sums of 0, an unknown sum stays NaN."""
    groups = table["profit_zone"].astype(object)
    out = _sums(table, groups, columns)
    sizes = groups.value_counts().reindex(out.index, fill_value=0)
    out.insert(0, count, sizes.astype("int64"))
    campaigns = table.groupby(groups)["campaign_id"].nunique().reindex(out.index).fillna(0)
    out.insert(1, "campaigns", campaigns.astype("int64"))
    if {"revenue", "cost"} <= set(out.columns):
        out.insert(list(out.columns).index("cost") + 1, "net", out["revenue"] - out["cost"])
    sums = [c for c in out.columns if c not in (count, "campaigns")]
    out[sums] = out[sums].where(out[count] > 0, 0.0)
    out.loc["all"] = out.sum(min_count=1)
    out.loc["all", "campaigns"] = table["campaign_id"].nunique()
    return out.astype({count: "int64", "campaigns": "int64"})


def by_profit_zone(frame: pd.DataFrame) -> pd.DataFrame:
    """Money per profit zone of a report frame made with statistics: ``bids``,
    ``campaigns``, the statistics' ``clicks``, ``conversions``, ``revenue``, ``cost`` and
    ``net`` (revenue - cost) over their window, and USD a day: ``spend_estimate`` (at the
    current bid), ``profit_day_now`` and ``profit_day_proposed`` (at the profit proposal's
    bids), each summed over the rows that have it; ``profit_unknown`` counts the rows whose
    ``profit_day_now`` is unknown (not in the sum, never taken as 0)."""
    out = _zone_table(frame, "bids", WINDOW + DAY)
    if "profit_day_now" in frame.columns:
        unknown = frame["profit_day_now"].isna().groupby(frame["profit_zone"].astype(object))
        counts = unknown.sum().reindex(list(PROFIT_ZONES), fill_value=0)
        out["profit_unknown"] = [*counts.astype("int64"), int(counts.sum())]
    return out


def rules_by_zone(rules: pd.DataFrame) -> pd.DataFrame:
    """The bid rules (``report.bid_rules``) per profit zone: ``rules``, ``campaigns`` and
    the statistics' sums over their window (``clicks``, ``conversions``, ``revenue``,
    ``cost``, ``net``)."""
    return _zone_table(rules, "rules", WINDOW)


def words(table: pd.DataFrame) -> pd.DataFrame:
    """A table of :func:`by_profit_zone` or :func:`rules_by_zone` with a person's words."""
    return table.rename(columns=HEADERS)


def as_text(table: pd.DataFrame) -> pd.DataFrame:
    """A table of :func:`by_profit_zone` or :func:`rules_by_zone` as a person reads it in a
    notebook: a person's words, counts whole, USD with 2 decimals, an unknown sum
    ``unknown``."""
    out = pd.DataFrame(index=table.index)
    for name in table.columns:
        out[name] = [view.cell_text(v, str(name)) for v in table[name]]
    return words(out)


def rules_shown(rules: pd.DataFrame) -> pd.DataFrame:
    """The bid rules as the page shows them: :data:`RULE_COLUMNS`, the note without the
    words every row shares (:data:`~toolkit.reports.rule_rows.NO_PRICE`, said above it)."""
    table = rules[[c for c in RULE_COLUMNS if c in rules.columns]].copy()
    notes = table["note"].astype(object).fillna("").astype(str)
    table["note"] = [n.removeprefix(NO_PRICE).removeprefix("; ") for n in notes]
    return table


#: The bid rules' columns in the PDF, by a person's words (headers that wrap).
PDF_COLUMNS: dict[str, str] = {
    "campaign_id": "campaign_id",
    "level": "level",
    "key": "key",
    "bid": "bid",
    "clicks": "clicks",
    "conversions": "conversions",
    "cost": "cost (USD, window)",
    "revenue": "revenue (USD, window)",
    "break_even_bid": "break-even bid",
    "max_profitable_bid_low": "max profitable bid (low)",
    "profit_zone": "profit zone",
    "note": "note",
}
#: Characters of a note the PDF shows (the HTML and XLSX show it whole).
PDF_NOTE = 32


def pdf_rules(rules: pd.DataFrame, limit: int = PDF_RULES) -> pd.DataFrame:
    """The ``limit`` bid rules that cost most in the statistics (then by campaign and key),
    as the PDF shows them: :data:`PDF_COLUMNS`, notes cut to :data:`PDF_NOTE` characters."""
    order = rules.assign(_cost=rules["cost"].astype("float64").fillna(-np.inf))
    order = order.sort_values(["_cost", "campaign_id", "key"], ascending=[False, True, True])
    table = rules_shown(order.head(max(limit, 0)))[list(PDF_COLUMNS)]
    table["note"] = [n if len(n) <= PDF_NOTE else n[: PDF_NOTE - 3] + "..." for n in table["note"]]
    for name in ("bid", "break_even_bid", "max_profitable_bid_low"):  # as prices, 4 decimals
        table[name] = [view.cell_text(v, name) for v in table[name]]
    return table.rename(columns=PDF_COLUMNS).reset_index(drop=True)


def rules_lines(rules: pd.DataFrame) -> list[str]:
    """What the bid rules' section says above its tables: how many, and why no price."""
    campaigns = rules["campaign_id"].nunique()
    return [
        f"{len(rules)} bid rules (bids for single sources and subIds) of {campaigns} "
        "campaigns, with their statistics over the window.",
        f"{NO_PRICE[:1].upper()}{NO_PRICE[1:]}.",
        "So no traffic or profit a day is estimated for them; a bid above its break-even lost "
        "money over the window.",
    ]


def profit_html(frame: pd.DataFrame) -> str:
    """The HTML section of the money per profit zone ("" without statistics)."""
    if not has_profit(frame):
        return ""
    caption = "Bids and money per profit zone (statistics over their window; USD a day)"
    table = view.table_html(words(by_profit_zone(frame)), index=True, caption=caption)
    return (
        "<h2>Profit</h2>"
        '<p class="note">Whether each bid pays, from the tracker statistics: unprofitable '
        "(above break-even with high probability), room to grow (profitable, below the "
        "recommended price), profitable, uncertain, no statistics. Profit a day is an "
        "estimate: traffic at the bid x the posterior value per unit - the bid.</p>"
        f'<div style="overflow-x:auto">{table}</div>'
    )


def rules_html(rules: pd.DataFrame | None) -> str:
    """The HTML section of the bid rules: what they are, their money per profit zone and
    every row ("" when there is none)."""
    if rules is None or not len(rules):
        return ""
    said = "".join(f'<p class="note">{html.escape(line)}</p>' for line in rules_lines(rules))
    zones = view.table_html(
        words(rules_by_zone(rules)), index=True, caption="Bid rules per profit zone"
    )
    rows = view.table_html(rules_shown(rules), caption=f"Bid rules: {len(rules)} rows")
    return (
        f'<h2>Bid rules</h2>{said}<div style="overflow-x:auto">{zones}</div>'
        f'<div style="overflow-x:auto">{rows}</div>'
    )


__all__ = [
    "HEADERS",
    "as_text",
    "PDF_RULES",
    "RULES_SHEET",
    "RULE_COLUMNS",
    "by_profit_zone",
    "PDF_COLUMNS",
    "pdf_rules",
    "has_profit",
    "profit_html",
    "rules_by_zone",
    "rules_html",
    "rules_lines",
    "rules_shown",
    "words",
]
