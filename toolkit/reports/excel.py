"""A bid report as an Excel workbook (openpyxl):

- ``summary``: the headline, bids per zone and ad format, the proposals' totals, and a
  stacked bar chart of zones by format (an Excel chart, drawn by Excel or LibreOffice);
- ``bids``: every row of the report, ``zone`` cells in their colours (rows without a zone say
  why: not comparable, no estimate, error), a colour scale on ``position`` (0 at the
  minimum, 1 at the recommended price);
- ``bid rules`` (a report made with ``stats=``): every bid rule (a source's or subId's bid)
  with its statistics, break-even and ``note`` (no price estimate: the service prices
  countries);
- one sheet per proposal (``to minimum``, ``to recommended``, ``cap to recommended``) in the
  form of a country-bids action workbook's ``actions`` sheet, the campaign's name, old bid
  and estimated spend beside it. Rename a sheet to ``actions`` (or write it alone with
  :func:`~toolkit.reports.parts.proposal_workbook`) and ``campaign-toolkit plan`` reads it.

Text is always written as text, never as a formula: a name like ``=SUM(A1)`` is the text
``'=SUM(A1)`` (see :mod:`toolkit.frames.cells`).

>>> to_excel(report, "bids.xlsx")                                     # doctest: +SKIP
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..bulk.workbook.actions_templates import COLUMNS as ACTION_COLUMNS
from ..frames.account_set import ACCOUNT, stacked
from ..frames.cells import excel_text
from . import money, profit_view, view
from .parts import PROPOSALS, Parts, action_rows, old_bid_column, parts, proposal_totals
from .style import COLOURS, STATES, country_column, label, states, text_colour

SUMMARY_SHEET = "summary"
BIDS_SHEET = "bids"
#: Colour scale of ``position``: below 0 (under the minimum), 1 (the recommended price), 2.
POSITION_SCALE = (("num", 0, "F4B183"), ("num", 1, "A9D9C2"), ("num", 2, "E3B7D2"))


def _value(value: Any) -> Any:
    """A cell's value as openpyxl takes it: NA empty, numpy scalars as Python, booleans as
    ``yes``/``no``, times naive UTC (Excel has no time zones), categories as text."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool):  # text: LibreOffice re-saves a boolean cell as =TRUE()
        return "yes" if value else "no"
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        ts = value.tz_convert("UTC").tz_localize(None) if value.tzinfo else value
        return ts.to_pydatetime()
    return value


def _put(ws: Any, row: int, column: int, value: Any) -> Any:
    """One cell; text stays text: a text cell, and a leading ``=``, ``+``, ``-``, ``@``, tab,
    CR or ``'`` gets a ``'`` in front; control characters as ``_xHHHH_``
    (:func:`~toolkit.frames.cells.excel_text`)."""
    value = excel_text(_value(value))
    cell = ws.cell(row=row, column=column, value=value)
    if isinstance(value, str):
        cell.data_type = "s"
    return cell


def _number_format(column: str) -> str | None:
    if view.is_count(column):
        return "#,##0"
    if column.endswith("_pct"):
        return "0.0"
    if column == "position":
        return "0.00"
    if "traffic" in column:
        return "#,##0"
    if column in view.PRICE_COLUMNS or "gap" in column:
        return "0.0000"
    if any(w in column for w in view.MONEY_WORDS) or column.startswith(view.AMOUNT_WORDS):
        return "#,##0.00"
    if column.endswith("_days"):
        return "0.0"
    if column == "asked_at":
        return "yyyy-mm-dd hh:mm"
    return None


def write_table(ws: Any, df: pd.DataFrame, *, row: int = 1, col: int = 1) -> int:
    """``df`` with a bold header at (``row``, ``col``); number formats by column name.
    Returns the row after the table."""
    from openpyxl.styles import Alignment, Font

    for j, name in enumerate(df.columns):
        _put(ws, row, col + j, str(name)).font = Font(bold=True)
    formats = [_number_format(str(c)) for c in df.columns]
    unknown = [any(w in str(c) for w in view.MONEY_WORDS) for c in df.columns]
    for i, values in enumerate(df.itertuples(index=False, name=None), start=row + 1):
        for j, value in enumerate(values):
            missing = unknown[j] and _value(value) is None
            # a money figure the report cannot estimate: "unknown", never 0 nor blank
            cell = _put(ws, i, col + j, "unknown" if missing else value)
            if missing:
                cell.alignment = Alignment(horizontal="right")
            if formats[j]:
                cell.number_format = formats[j]
    return row + len(df) + 1


def _fill(colour: str) -> Any:
    from openpyxl.styles import PatternFill

    return PatternFill("solid", fgColor=colour.lstrip("#"))


def _widths(ws: Any, df: pd.DataFrame, *, col: int = 1, most: int = 40) -> None:
    from openpyxl.utils import get_column_letter

    for j, name in enumerate(df.columns):
        sample = [len(view.cell_text(v, str(name))) for v in df[name].head(200)]
        width = min(most, max([len(str(name)) + 2, *sample]) + 2)  # + the filter's button
        ws.column_dimensions[get_column_letter(col + j)].width = width


def _bids_sheet(wb: Any, frame: pd.DataFrame) -> None:
    """Every row; ``zone`` says the row's state, in its colour; a colour scale on position."""
    from openpyxl.formatting.rule import ColorScaleRule
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    ws = wb.create_sheet(BIDS_SHEET)
    table = frame.copy()
    st = states(frame).astype(str)
    table["zone"] = [label(s) for s in st]
    end = write_table(ws, table)
    zone_col = list(table.columns).index("zone") + 1
    for i, state in enumerate(st, start=2):
        cell = ws.cell(row=i, column=zone_col)
        cell.fill = _fill(COLOURS[state])
        cell.font = Font(color=text_colour(COLOURS[state]).lstrip("#"))
    if "position" in table.columns and len(table):
        letter = get_column_letter(list(table.columns).index("position") + 1)
        (s, m, e) = POSITION_SCALE
        rule = ColorScaleRule(
            start_type=s[0], start_value=s[1], start_color=s[2],
            mid_type=m[0], mid_value=m[1], mid_color=m[2],
            end_type=e[0], end_value=e[1], end_color=e[2],
        )  # fmt: skip
        ws.conditional_formatting.add(f"{letter}2:{letter}{end - 1}", rule)
    ws.freeze_panes = "C2"
    ws.auto_filter.ref = ws.dimensions
    _widths(ws, table)


def _chart(ws: Any, first_row: int, table: pd.DataFrame, anchor: str) -> None:
    """A stacked bar chart of the summary's state columns, one bar per ad format."""
    from openpyxl.chart import BarChart, Reference

    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "stacked"
    chart.overlap = 100
    chart.title = "Bids by zone and ad format"
    chart.y_axis.title = "rows (campaign x country bids)"
    chart.x_axis.title = "ad format"
    names = list(table.columns)
    formats = len(table) - 1  # the last row is "all"
    cats = Reference(ws, min_col=1, min_row=first_row + 1, max_row=first_row + formats)
    for state in [s for s in STATES if s in names]:
        col = names.index(state) + 1
        data = Reference(ws, min_col=col, min_row=first_row, max_row=first_row + formats)
        chart.add_data(data, titles_from_data=True)
        chart.series[-1].graphicalProperties.solidFill = COLOURS[state].lstrip("#")
        chart.series[-1].graphicalProperties.line.noFill = True
    chart.set_categories(cats)
    chart.width, chart.height = 22, 10
    ws.add_chart(chart, anchor)


#: Widths (characters) of the summary sheet's columns: the first holds zone and proposal
#: names, the others numbers under wrapped headers.
SUMMARY_WIDTHS = (38, 14)


def _header(ws: Any, row: int, names: list[str]) -> None:
    """A header row of the summary sheet: bold, wrapped whole words, tall enough for its
    longest header at the columns' widths (LibreOffice and Excel do not grow a row written
    with a height), cells named after a state in its colour."""
    from openpyxl.styles import Alignment, Font

    lines = 1
    for j, name in enumerate(names):
        width = SUMMARY_WIDTHS[0] if j == 0 else SUMMARY_WIDTHS[1]
        lines = max(lines, len(textwrap.wrap(name, width - 2, break_long_words=False)))
        head = ws.cell(row=row, column=j + 1)
        head.alignment = Alignment(wrap_text=True, vertical="top", horizontal="center")
        head.font = Font(bold=True)
        if name in COLOURS:
            head.fill = _fill(COLOURS[name])
            head.font = Font(bold=True, color=text_colour(COLOURS[name]).lstrip("#"))
    ws.row_dimensions[row].height = 15 * lines + 2


def _summary_table(ws: Any, row: int, title: str, table: pd.DataFrame) -> int:
    """``title``, then ``table`` (its index the first column) from ``row``; the row after."""
    from openpyxl.styles import Font

    _put(ws, row, 1, title).font = Font(bold=True, size=12)
    data = table.reset_index()
    end = write_table(ws, data, row=row + 1)
    _header(ws, row + 1, [str(c) for c in data.columns])
    return end + 1


def _money_rows(ws: Any, first: int, frame: pd.DataFrame) -> None:
    """The zone cells of the money table (from ``first``) in their states' colours."""
    from openpyxl.styles import Font

    for i, state in enumerate(money.by_zone(frame).index, start=first):
        if state in COLOURS:
            cell = ws.cell(row=i, column=1)
            cell.fill = _fill(COLOURS[state])
            cell.font = Font(color=text_colour(COLOURS[state]).lstrip("#"))


def _summary_sheet(wb: Any, p: Parts) -> None:
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    ws = wb.active
    ws.title = SUMMARY_SHEET
    _put(ws, 1, 1, p.title).font = Font(bold=True, size=14)
    lines = [view.headline(p.frame), *view.notes(p.frame, p.left_out)]
    for i, line in enumerate(lines, start=2):
        _put(ws, i, 1, line)
    row = len(lines) + 3
    title = "Bids and money per zone (estimates at the current bids)"
    end = _summary_table(ws, row, title, view.money_table(p.frame))
    _money_rows(ws, row + 2, p.frame)
    table = view.summary(p.frame).reset_index()
    first = end
    row = _summary_table(ws, end, "Bids per zone and ad format", table.set_index("ad_format"))
    totals = proposal_totals(p.proposals)
    if len(totals):
        title = "Proposals (plans; spend is an estimate)"
        row = _summary_table(ws, row, title, totals.set_index("proposal"))
    for j in range(1, max(len(table.columns), 8) + 1):
        width = SUMMARY_WIDTHS[0] if j == 1 else SUMMARY_WIDTHS[1]
        ws.column_dimensions[get_column_letter(j)].width = width
    notes = [
        "Prices and bids in USD: per click (CPC) or per 1000 impressions (CPM).",
        "Traffic is the service's estimate, interpolated at the bid.",
        "Each proposal sheet has the columns of an action workbook's 'actions' sheet: rename",
        "it to 'actions' (or copy its rows into templates/country_bids.xlsx), then",
        "campaign-toolkit plan FILE shows the calls and campaign-toolkit apply FILE applies them.",
        "A bid moved more than 3x up or cut by more than two thirds is refused unless --allow"
        " bid_jump.",
    ]
    for i, line in enumerate(notes):
        _put(ws, row + i, 1, line)
    if len(table) > 1:
        _chart(ws, first + 1, table, f"A{row + len(notes) + 1}")
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True


def _rules_sheet(wb: Any, rules: pd.DataFrame | None) -> None:
    """``bid rules``: every bid rule with its statistics and note (when there are any)."""
    if rules is None or not len(rules):
        return
    ws = wb.create_sheet(profit_view.RULES_SHEET)
    write_table(ws, rules)
    ws.freeze_panes = "E2"
    ws.auto_filter.ref = ws.dimensions
    _widths(ws, rules, most=60)


def _proposal_sheet(wb: Any, to: str, proposal: pd.DataFrame) -> None:
    """The action rows of a proposal, with the campaign's name, the old bid and any other
    column of the proposal beside them (the action workbook's reader reads only its own);
    a proposal of several accounts has each row's ``account`` first."""
    ws = wb.create_sheet(PROPOSALS.get(to, to)[:31])
    if ACCOUNT in proposal.columns:
        given = proposal[ACCOUNT].astype(str)
        parts = {n: _proposal_rows(proposal[given == n]) for n in dict.fromkeys(given)}
        table = stacked(parts, _proposal_rows(proposal.iloc[:0]))
    else:
        table = _proposal_rows(proposal)
    write_table(ws, table)
    ws.freeze_panes = "A2"
    _widths(ws, table)


def _proposal_rows(proposal: pd.DataFrame) -> pd.DataFrame:
    """The action rows of one account's proposal, with its other columns beside them."""
    proposal = proposal.drop(columns=[ACCOUNT], errors="ignore")
    actions = pd.DataFrame(action_rows(proposal), columns=list(ACTION_COLUMNS))
    moved = proposal[proposal["new_bid"].notna()]
    keyed = moved.set_index(["campaign_id", country_column()])
    keys = list(zip(actions["campaign"], actions["item"], strict=True))
    skip = {"campaign_id", country_column(), "new_bid"}
    extra = keyed.reindex(keys)[[c for c in keyed.columns if c not in skip]].reset_index(drop=True)
    old = old_bid_column(proposal)
    extra = extra.rename(columns={old: "old_bid"}) if old in extra else extra
    return pd.concat([actions, extra], axis=1)


def to_excel(report: Any, path: str | os.PathLike[str], *, title: str | None = None) -> Path:
    """The report as an .xlsx workbook: ``summary`` (with a chart), ``bids``, one sheet per
    proposal (action-workbook form)."""
    from openpyxl import Workbook

    p = parts(report, title=title)
    wb = Workbook()
    _summary_sheet(wb, p)
    _bids_sheet(wb, p.frame)
    _rules_sheet(wb, p.bid_rules)
    for to, proposal in p.proposals.items():
        _proposal_sheet(wb, to, proposal)
    path = Path(path)
    wb.save(path)
    return path


__all__ = ["BIDS_SHEET", "POSITION_SCALE", "SUMMARY_SHEET", "to_excel", "write_table"]
