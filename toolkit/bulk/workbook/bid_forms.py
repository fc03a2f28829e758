"""The relative bids of an account workbook (``+10%``, ``x1.2``, ``min``, ``rec-5%``; see
:mod:`toolkit.bulk.relative_bids`), read against the workbook's exported state.

A change of the bid (``+10%``, ``x1.2``) starts from the bid of the row at export (its
``_base_`` sheet), so the same workbook applied twice sets the same bid twice: the second
plan finds live equal to desired and changes nothing; a bid someone moved since the export is
a conflict, as for a number. The new bid is put in the desired table at once, and checked as
a number written there would be. ``min`` and ``rec`` need the service's prices: the planner
asks them (:func:`toolkit.bulk.relative_prices.fill_prices`) and the desired bid stays empty
until then. A form on a row that was not exported (a new country) is refused: only ``min``
and ``rec`` can give a new row its bid. A bid rule takes no ``min``/``rec`` (the prices are a
country's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from ... import spec
from ...errors import WorkbookProblem
from ..relative_bids import (
    BID_COLUMNS,
    BidCell,
    BidForm,
    BidFormError,
    looks_relative,
    parse_bid,
    settle,
)
from .checks import PART_STRIDE, Context
from .layout import SHEETS

#: Why a form that changes a bid is refused in a workbook without its exported state.
NO_BASE = (
    "the workbook has no exported state (hidden _base_ sheets) whose bid this changes; write a"
    " number, min or rec (or export the account again)"
)
#: Why ``min``/``rec`` are refused on a bid rule.
NOT_A_COUNTRY = "min and rec are prices of a {kind}; a bid rule takes a number, +10%, -5% or x1.2"


def workbook_forms(
    table: str,
    df: pd.DataFrame,
    rows: np.ndarray,
    raw: Mapping[str, Sequence[Any]],
    ctx: Context,
    parts: Sequence[str],
) -> tuple[list[BidCell], list[WorkbookProblem]]:
    """The relative bids of a bid table's sheet (``rows`` their Excel rows, ``raw`` the cells
    as read, both aligned with ``df``), their new bids put in ``df`` (but ``min`` and
    ``rec``); the problems of those that cannot be set."""
    column = BID_COLUMNS[table]
    values = raw.get(column)
    key = SHEETS[table].key[-1]
    if values is None or key not in df or "campaign_id" not in df:
        return [], []
    current = _bids(ctx.base.get(table), key, column)
    cells: list[BidCell] = []
    problems: list[WorkbookProblem] = []
    written = [i for i, v in enumerate(values) if type(v) is str and looks_relative(v)]
    for pos in written:
        cell = _cell(table, df, pos, values[pos], key, rows, parts)
        if cell is None:
            continue
        new = _settled(cell, current, bool(ctx.base))
        if isinstance(new, str):
            problems.append(cell.problem(new))
            continue
        if new is not None:
            df.iloc[pos, df.columns.get_loc(column)] = new
        cells.append(cell)
    return cells, problems


def excel_percentages(
    values: list[Any], rows: Sequence[int], letter: str
) -> list[tuple[int, Any, str]]:
    """The bid cells (``values``, Excel row 2 first) in ``rows``, the rows whose cell in
    column ``letter`` is shown as a percentage, that hold a number: Excel turns ``+10%``
    typed in a number cell into 0.1 shown 10%, which read as a bid is 0.10 USD. Each is a
    problem ``(index, value, message)`` and is emptied in ``values``.

    >>> values = [0.35, 0.1]
    >>> [m for _, _, m in excel_percentages(values, [3], "D")], values
    (["cell D3: 10% is a percentage Excel made of what was typed; write +10% as text ('+10%) \
or the bid in USD in a cell not shown as a percentage"], [0.35, None])
    """
    problems = []
    for row in rows:
        i = row - 2
        if 0 <= i < len(values) and type(values[i]) in (int, float):
            pct = format((Decimal(repr(values[i])) * 100).normalize(), "f")
            signed = pct if pct.startswith("-") else f"+{pct}"
            problems.append(
                (i, values[i], PERCENT.format(cell=f"{letter}{row}", pct=pct, s=signed))
            )
            values[i] = None
    return problems


#: Why a number shown as a percentage in a bid cell is refused.
PERCENT = (
    "cell {cell}: {pct}% is a percentage Excel made of what was typed; write {s}% as text"
    " ('{s}%) or the bid in USD in a cell not shown as a percentage"
)


def _settled(cell: BidCell, current: dict[tuple[int, str], float], based: bool) -> Any:
    """The new bid (None: asked at plan time), or why the cell is refused."""
    if cell.form.needs_price:
        return None if cell.table == "countries" else NOT_A_COUNTRY.format(kind=_kind())
    if not based:
        return NO_BASE
    return settle(cell, current.get((cell.campaign_id, cell.key)))


def _kind() -> str:
    return spec.bid_kind().name


def _cell(
    table: str,
    df: pd.DataFrame,
    pos: int,
    value: Any,
    key: str,
    rows: np.ndarray,
    parts: Sequence[str],
) -> BidCell | None:
    """The relative bid of one row, or None (a number, an empty cell, a bad form: reported
    by the reader, or a row without its key: reported as an empty cell)."""
    try:
        form = parse_bid(value)
    except BidFormError:
        return None
    if not isinstance(form, BidForm):
        return None
    cid, item = df["campaign_id"].iloc[pos], df[key].iloc[pos]
    if pd.isna(cid) or pd.isna(item):
        return None
    part, excel_row = divmod(int(rows[pos]), PART_STRIDE)
    sheet = parts[min(part, len(parts) - 1)]
    return BidCell(sheet, excel_row, table, int(cid), str(item), value, form)


def _bids(base: pd.DataFrame | None, key: str, column: str) -> dict[tuple[int, str], float]:
    """``(campaign id, key) -> bid`` of the exported rows."""
    if base is None or base.empty:
        return {}
    ok = base["campaign_id"].notna() & base[key].notna() & base[column].notna()
    return {
        (int(c), str(k)): float(b)
        for c, k, b in zip(
            base.loc[ok, "campaign_id"], base.loc[ok, key], base.loc[ok, column], strict=True
        )
    }


__all__ = ["NO_BASE", "PERCENT", "excel_percentages", "workbook_forms"]
