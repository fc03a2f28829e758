"""A bid report as files: one self-contained HTML page, an Excel workbook, a PDF.

Each function takes a report (anything with a ``frame``, a ``proposals(to)`` method and,
optionally, a ``history`` frame: :class:`ReportLike`), a bare report frame, or
:class:`Parts`, so ``BidReport.to_html(path)`` is ``files.to_html(self, path)``.

- :func:`to_html`: summary, plots as inline SVG, the proposals and every row; no external
  asset (no script, no stylesheet, no image file), every text escaped;
- :func:`to_excel`: a summary sheet with a chart of zones by format, the rows with a colour
  scale on ``position``, and one sheet per proposal in the form of an action workbook's
  ``actions`` sheet (rename one to ``actions``, or write it alone with
  :func:`proposal_workbook`, and ``campaign-toolkit plan`` reads it);
- :func:`to_pdf`: a summary page, then the plots, one a page.

A report made with statistics (``bid_report(stats=...)``) shows its profit too: the rows'
profit columns, money per profit zone, and its bid rules (``report.bid_rules``) in a section
of the page, a ``bid rules`` sheet and a PDF page (:mod:`toolkit.reports.profit_view`).

>>> files.to_html(report, "bids.html")                                # doctest: +SKIP
"""

from __future__ import annotations

import html
import io
import os
import re
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.table import Table

from . import money, plots, profit_view, view
from .excel import to_excel
from .parts import (
    MAX_CAMPAIGNS,
    PROPOSALS,
    Parts,
    ReportLike,
    action_rows,
    parts,
    proposal_totals,
    proposal_workbook,
)
from .style import COLOURS, LOOK_FIRST, STATES, UNITS, label, states, text_colour

# ----------------------------------------------------------------------------- figures


def _campaign_order(frame: pd.DataFrame) -> list[int]:
    """Campaigns, those with the most bids below the minimum or overpaying first."""
    look = states(frame).isin(list(LOOK_FIRST)).to_numpy()
    counts = pd.Series(look, index=frame.index).groupby(frame["campaign_id"]).sum()
    order = counts.reset_index().sort_values([0, "campaign_id"], ascending=[False, True])
    return [int(c) for c in order["campaign_id"]]


def figures(p: Parts, *, max_campaigns: int = MAX_CAMPAIGNS) -> list[tuple[str, Figure]]:
    """The plots of a report, titled: zones by format and by country, the range plot of the
    first ``max_campaigns`` campaigns, the price drift when the history holds prices of
    two days or more (:func:`toolkit.reports.plots.drift_note` says why not otherwise)."""
    out = [
        ("Bids by zone and ad format", plots.zones_by_format(p.frame)),
        ("Bids by zone and country", plots.zones_by_country(p.frame)),
    ]
    for cid in _campaign_order(p.frame)[:max_campaigns]:
        out.append((f"Campaign {cid}", plots.ranges(p.frame, cid)))
    if p.history is not None and not plots.drift_note(p.history):
        out.append(("Price drift", plots.price_drift(p.history, frame=p.frame)))
    return out


def _unique_ids(text: str, key: str) -> str:
    """Every ``id`` of an SVG made unique on a page: prefixed with ``key``, spaces and
    colons (a ``gid`` like ``bid:between``) turned to ``-``, a repeated one numbered;
    references (``url(#..)``, ``href="#.."``) follow the first element of that id."""
    first: dict[str, str] = {}
    taken: set[str] = set()

    def rename(match: re.Match[str]) -> str:
        old = match.group(1)
        base = f"{key}-" + re.sub(r"[^A-Za-z0-9_.-]", "-", old)
        new, n = base, 1
        while new in taken:
            n += 1
            new = f"{base}-{n}"
        taken.add(new)
        first.setdefault(old, new)
        return f'id="{new}"'

    text = re.sub(r'\bid="([^"]+)"', rename, text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{first.get(m.group(1), m.group(1))})", text)
    return re.sub(
        r'href="#([^"]+)"', lambda m: f'href="#{first.get(m.group(1), m.group(1))}"', text
    )


def svg(fig: Figure, key: str) -> str:
    """A figure as an inline ``<svg>`` element: text as text, no XML prologue, no
    metadata, its ids unique on the page (prefixed with ``key``)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": key}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return _unique_ids(text, key)


# ----------------------------------------------------------------------------- HTML

_PAGE_CSS = """
body{font:14px/1.45 sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #DDD;padding-bottom:4px;margin-top:32px}
h3{font-size:15px}figure{margin:8px 0 24px}figure svg{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:12px;margin:4px 0 12px}
th,td{border:1px solid #DDD;padding:2px 6px;text-align:right}th{background:#F4F4F4}
td{white-space:nowrap}td.t{text-align:left}th{text-align:left}
caption{text-align:left;font-weight:bold;padding:4px 0}
.note{color:#555;font-size:12px}
"""


def _legend_html() -> str:
    swatches = "".join(
        f'<span style="display:inline-block;margin-right:12px">'
        f'<span style="display:inline-block;width:12px;height:12px;background:{COLOURS[s]};'
        f'vertical-align:middle;margin-right:4px"></span>{html.escape(label(s))}</span>'
        for s in STATES
    )
    return f'<p class="note">{swatches}</p>'


def _proposals_html(p: Parts) -> str:
    if not p.proposals:
        return ""
    out = [
        "<h2>Proposals</h2>",
        '<p class="note">Plans, not changes: each proposal is a set of',
        " new bids that <code>campaign-toolkit plan</code> previews and <code>apply</code> applies",
        " (from the Excel file's proposal sheets). Spend is an estimate.</p>",
        view.table_html(proposal_totals(p.proposals)),
    ]
    for to, df in p.proposals.items():
        caption = f"{PROPOSALS.get(to, to)}: {len(df)} bids"
        table = view.table_html(df, caption=caption) if len(df) else f"<h3>{caption}</h3>"
        out.append(f'<div style="overflow-x:auto">{table}</div>')
    return "".join(out)


def _units_note() -> str:
    units = "; ".join(f"{k}: {v}" for k, v in UNITS.items())
    return (
        f'<p class="note">Prices and bids in USD ({units}). A bid in the other unit than its '
        "format's prices is not comparable unless a ctr is given. Traffic is the service's "
        "estimate, interpolated at the bid: an estimate, not a promise.</p>"
    )


def _notes_html(p: Parts) -> str:
    return "".join(f'<p class="note">{html.escape(n)}</p>' for n in view.notes(p.frame, p.left_out))


def page(p: Parts, *, max_campaigns: int = MAX_CAMPAIGNS) -> str:
    """The HTML text of :func:`to_html`."""
    title = html.escape(p.title)
    made = pd.Timestamp(datetime.now(UTC)) if p.made_at is None else p.made_at
    made = made.strftime("%Y-%m-%d %H:%M UTC")
    figs = figures(p, max_campaigns=max_campaigns)
    body = [
        f"<h1>{title}</h1><p>{html.escape(view.headline(p.frame))}. Made {made}.</p>",
        _notes_html(p),
        _units_note(),
        "<h2>Summary</h2>",
        view.money_html(p.frame),
        view.table_html(
            view.summary(p.frame),
            index=True,
            caption="Bids per zone and ad format",
            state_headers=True,
        ),
        _legend_html(),
        profit_view.profit_html(p.frame),
    ]
    for i, (name, fig) in enumerate(figs):
        if i == 2:
            body.append("<h2>Campaigns</h2>")
            shown = min(len(figs) - 2, max_campaigns)
            total = p.frame["campaign_id"].nunique()
            if shown < total:
                body.append(
                    f'<p class="note">{shown} of {total} campaigns, those with most '
                    "bids below the minimum or overpaying first.</p>"
                )
        if name == "Price drift":
            body.append("<h2>Price drift</h2>")
        body.append(f'<figure aria-label="{html.escape(name)}">{svg(fig, f"f{i}")}</figure>')
    if p.history is not None and plots.drift_note(p.history):
        body.append(f"<h2>Price drift</h2><p>{html.escape(plots.drift_note(p.history))}</p>")
    body.append(_proposals_html(p))
    body.append("<h2>All bids</h2>")
    body.append(f'<div style="overflow-x:auto">{view.rows_html(p.frame)}</div>')
    body.append(profit_view.rules_html(p.bid_rules))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{_PAGE_CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def to_html(
    report: Any,
    path: str | os.PathLike[str],
    *,
    history: pd.DataFrame | None = None,
    title: str | None = None,
    max_campaigns: int = MAX_CAMPAIGNS,
) -> Path:
    """One self-contained HTML page: summary, plots (inline SVG), proposals, every row;
    ``history`` (a price history frame) adds the price drift."""
    p = parts(report, title=title, history=history)
    path = Path(path)
    path.write_text(page(p, max_campaigns=max_campaigns), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- PDF


#: PDF layout, in fractions of an A4 landscape page: a table row's height, a character's
#: width at the tables' font size, the left margin.
PDF_ROW, PDF_CHAR, PDF_LEFT, PDF_FONT = 0.024, 0.0062, 0.05, 8


def _pdf_cells(table: pd.DataFrame, index: bool) -> tuple[list[str], list[str], list[list[str]]]:
    """Column names, wrapped headers and cell texts of a table (each value by its own
    column's kind: counts stay whole numbers)."""
    data = table.reset_index() if index else table
    names = [str(c) for c in data.columns]
    heads = [textwrap.fill(n, 13, break_long_words=False) for n in names]
    text = [
        [view.cell_text(v, n) for n, v in zip(names, row, strict=True)]
        for row in data.itertuples(index=False, name=None)
    ]
    return names, heads, text


def _pdf_table(
    fig: Figure, top: float, table: pd.DataFrame, title: str, colours: list[str | None]
) -> float:
    """``table`` (its index as the first column) under ``title``, from ``top`` down, each
    column as wide as its longest text, the headers wrapped whole; header cells named after
    a state, and first-column cells whose ``colours`` entry is given, in their colours.
    Returns the height's bottom."""
    names, heads, text = _pdf_cells(table, True)
    chars = [
        max([len(line) for line in h.split("\n")] + [len(r[j]) for r in text])
        for j, h in enumerate(heads)
    ]
    widths = [(n + 2) * PDF_CHAR for n in chars]
    head_lines = max(h.count("\n") + 1 for h in heads)
    head = 0.008 + 0.0145 * head_lines
    height = head + PDF_ROW * len(text)
    fig.text(PDF_LEFT, top, title, fontsize=10, weight="bold", parse_math=False)
    ax = fig.add_axes((PDF_LEFT, top - 0.008 - height, sum(widths), height))
    ax.set_axis_off()
    cells = Table(ax, bbox=(0, 0, 1, 1))
    for r, row in enumerate([heads, *text]):
        for c, value in enumerate(row):
            where = "left" if c == 0 and r > 0 else "center" if r == 0 else "right"
            high = (head if r == 0 else PDF_ROW) / height
            cell = cells.add_cell(r, c, widths[c] / sum(widths), high, text=value, loc=where)
            cell.get_text().set_parse_math(False)
            colour = COLOURS.get(names[c]) if r == 0 else (colours[r - 1] if c == 0 else None)
            if colour:
                cell.set_facecolor(colour)
                cell.get_text().set_color(text_colour(colour))
    cells.auto_set_font_size(False)
    cells.set_fontsize(PDF_FONT)
    ax.add_table(cells)
    return top - 0.008 - height


def _summary_page(p: Parts) -> Figure:
    """A4 landscape: the headline and notes, money per zone, bids per zone and format, the
    proposals' totals."""
    fig = Figure(figsize=(11.69, 8.27))
    fig.text(PDF_LEFT, 0.95, p.title, fontsize=16, weight="bold", parse_math=False)
    lines = [view.headline(p.frame), *view.notes(p.frame, p.left_out)]
    if p.history is not None and plots.drift_note(p.history):
        lines.append(plots.drift_note(p.history))
    units = "; ".join(f"{k}: {v}" for k, v in UNITS.items())
    lines.append(f"Prices and bids in USD ({units}). Traffic and spend are estimates.")
    for i, line in enumerate(lines):
        fig.text(PDF_LEFT, 0.915 - 0.022 * i, line, fontsize=9, parse_math=False)
    top = 0.915 - 0.022 * len(lines) - 0.01
    money_table = view.money_table(p.frame)
    colours = [COLOURS.get(s) for s in money.by_zone(p.frame).index]
    title = "Bids and money per zone (estimates at the current bids)"
    top = _pdf_table(fig, top, money_table, title, colours) - 0.035
    counts = view.summary(p.frame)
    top = _pdf_table(fig, top, counts, "Bids per zone and ad format", [None] * len(counts))
    totals = proposal_totals(p.proposals)
    if len(totals):
        title = "Proposals (plans; spend is an estimate)"
        _pdf_table(fig, top - 0.035, totals.set_index("proposal"), title, [None] * len(totals))
    return fig


def _profit_pages(p: Parts) -> list[Figure]:
    """A4 landscape: money per profit zone and the bid rules per profit zone, then the bid
    rules that cost most (:mod:`toolkit.reports.profit_view`); none without statistics."""
    rules = p.bid_rules if p.bid_rules is not None and len(p.bid_rules) else None
    if not profit_view.has_profit(p.frame) and rules is None:
        return []
    fig = Figure(figsize=(11.69, 8.27))
    fig.text(PDF_LEFT, 0.95, "Profit and bid rules", fontsize=16, weight="bold")
    top = 0.91
    if profit_view.has_profit(p.frame):
        table = profit_view.words(profit_view.by_profit_zone(p.frame))
        title = "Bids and money per profit zone (statistics over their window; USD a day)"
        top = _pdf_table(fig, top, table, title, [None] * len(table)) - 0.035
    if rules is None:
        return [fig]
    lines = profit_view.rules_lines(rules)
    for i, line in enumerate(lines):
        fig.text(PDF_LEFT, top - 0.022 * i, line, fontsize=9, parse_math=False)
    table = profit_view.words(profit_view.rules_by_zone(rules))
    top -= 0.022 * len(lines) + 0.01
    _pdf_table(fig, top, table, "Bid rules per profit zone", [None] * len(table))
    shown = profit_view.pdf_rules(rules)
    page = Figure(figsize=(11.69, 8.27))
    title = f"The {len(shown)} bid rules that cost most, of {len(rules)} (every one: HTML, XLSX)"
    _pdf_table(page, 0.95, shown.set_index("campaign_id"), title, [None] * len(shown))
    return [fig, page]


def to_pdf(
    report: Any,
    path: str | os.PathLike[str],
    *,
    history: pd.DataFrame | None = None,
    title: str | None = None,
    max_campaigns: int = MAX_CAMPAIGNS,
) -> Path:
    """A PDF: a summary page (and, with statistics, a page of profit and bid rules), then
    one plot a page (zones by format and by country, the range plot of each campaign, up to
    ``max_campaigns``, the price drift when there is a ``history``)."""
    from matplotlib.backends.backend_pdf import PdfPages

    p = parts(report, title=title, history=history)
    path = Path(path)
    with PdfPages(path, metadata={"Title": p.title, "Creator": "campaign-toolkit"}) as pdf:
        pdf.savefig(_summary_page(p))
        for page in _profit_pages(p):
            pdf.savefig(page)
        for _, fig in figures(p, max_campaigns=max_campaigns):
            pdf.savefig(fig)
    return path


__all__ = [
    "MAX_CAMPAIGNS",
    "PROPOSALS",
    "Parts",
    "ReportLike",
    "action_rows",
    "figures",
    "page",
    "parts",
    "proposal_totals",
    "proposal_workbook",
    "svg",
    "to_excel",
    "to_html",
    "to_pdf",
]
