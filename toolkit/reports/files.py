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

>>> files.to_html(report, "bids.html")                                # doctest: +SKIP
"""

from __future__ import annotations

import html
import io
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from . import plots, view
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
from .style import COLOURS, STATES, UNITS, ZONES, states, text_colour

# ----------------------------------------------------------------------------- figures


def _campaign_order(frame: pd.DataFrame) -> list[int]:
    """Campaigns, those with the most bids below the minimum or overpaying first."""
    look = states(frame).isin([ZONES[0], ZONES[-1]]).to_numpy()
    counts = pd.Series(look, index=frame.index).groupby(frame["campaign_id"]).sum()
    order = counts.reset_index().sort_values([0, "campaign_id"], ascending=[False, True])
    return [int(c) for c in order["campaign_id"]]


def figures(p: Parts, *, max_campaigns: int = MAX_CAMPAIGNS) -> list[tuple[str, Figure]]:
    """The plots of a report, titled: zones by format and by country, the range plot of the
    first ``max_campaigns`` campaigns, the price drift when there is a history."""
    out = [
        ("Bids by zone and ad format", plots.zones_by_format(p.frame)),
        ("Bids by zone and country", plots.zones_by_country(p.frame)),
    ]
    for cid in _campaign_order(p.frame)[:max_campaigns]:
        out.append((f"Campaign {cid}", plots.ranges(p.frame, cid)))
    if p.history is not None and not p.history.empty:
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
        f'vertical-align:middle;margin-right:4px"></span>{html.escape(s)}</span>'
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


def page(p: Parts, *, max_campaigns: int = MAX_CAMPAIGNS) -> str:
    """The HTML text of :func:`to_html`."""
    title = html.escape(p.title)
    made = pd.Timestamp(datetime.now(UTC)) if p.made_at is None else p.made_at
    made = made.strftime("%Y-%m-%d %H:%M UTC")
    figs = figures(p, max_campaigns=max_campaigns)
    body = [
        f"<h1>{title}</h1><p>{html.escape(view.headline(p.frame))}. Made {made}.</p>",
        _units_note(),
        "<h2>Summary</h2>",
        view.table_html(
            view.summary(p.frame),
            index=True,
            caption="Bids per zone and ad format",
            state_headers=True,
        ),
        _legend_html(),
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
    body.append(_proposals_html(p))
    body.append("<h2>All bids</h2>")
    body.append(f'<div style="overflow-x:auto">{view.rows_html(p.frame)}</div>')
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


def _pdf_table(ax: Any, table: pd.DataFrame, title: str, index: bool) -> None:
    """A table on ``ax`` at a readable size, header cells named after a state coloured."""
    ax.set_axis_off()
    ax.set_title(title, loc="left", fontsize=12)
    text = [[view.cell_text(v, str(k)) for k, v in row.items()] for _, row in table.iterrows()]
    cells = ax.table(
        cellText=text,
        rowLabels=[str(i) for i in table.index] if index else None,
        colLabels=[str(c).replace(" ", "\n", 1) for c in table.columns],
        loc="upper left",
        cellLoc="right",
    )
    cells.auto_set_font_size(False)
    cells.set_fontsize(9)
    cells.scale(1, 1.5)
    for (r, c), cell in cells.get_celld().items():
        name = str(table.columns[c]) if r == 0 and c >= 0 else ""
        if r == 0:
            cell.set_height(cell.get_height() * 2)
        if name in COLOURS:
            cell.set_facecolor(COLOURS[name])
            cell.get_text().set_color(text_colour(COLOURS[name]))


def _summary_page(p: Parts) -> Figure:
    """A4 landscape: the headline, bids per zone and format, the proposals' totals."""
    fig = Figure(figsize=(11.69, 8.27))
    fig.text(0.05, 0.93, p.title, fontsize=18, weight="bold", parse_math=False)
    fig.text(0.05, 0.89, view.headline(p.frame), fontsize=11, parse_math=False)
    table = view.summary(p.frame)
    _pdf_table(fig.add_axes((0.1, 0.5, 0.85, 0.33)), table, "Bids per zone and ad format", True)
    totals = proposal_totals(p.proposals)
    if len(totals):
        title = "Proposals (plans; spend is an estimate)"
        _pdf_table(fig.add_axes((0.22, 0.1, 0.6, 0.3)), totals.set_index("proposal"), title, True)
    units = "; ".join(f"{k}: {v}" for k, v in UNITS.items())
    fig.text(0.05, 0.05, f"Prices and bids in USD ({units}). Traffic is an estimate.", fontsize=9)
    return fig


def to_pdf(
    report: Any,
    path: str | os.PathLike[str],
    *,
    history: pd.DataFrame | None = None,
    title: str | None = None,
    max_campaigns: int = MAX_CAMPAIGNS,
) -> Path:
    """A PDF: a summary page, then one plot a page (zones by format and by country, the
    range plot of each campaign, up to ``max_campaigns``, the price drift when there is a
    ``history``)."""
    from matplotlib.backends.backend_pdf import PdfPages

    p = parts(report, title=title, history=history)
    path = Path(path)
    with PdfPages(path, metadata={"Title": p.title, "Creator": "campaign-toolkit"}) as pdf:
        pdf.savefig(_summary_page(p))
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
