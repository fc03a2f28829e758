"""Writing the editable workbook (see :mod:`toolkit.bulk.workbook`): openpyxl writes the
skeleton (styles, header comments, drop-down lists, protection, hidden sheets) and
:mod:`~toolkit.bulk.workbook.sheet_xml` splices the data rows in.

A sheet holds at most :data:`~toolkit.bulk.workbook.layout.SHEET_ROWS` data rows: a longer
table continues on ``lists (2)``, ``lists (3)``, ... (and its exported state on
``_base_lists (2)``, ...), which :func:`~toolkit.bulk.workbook.read_workbook` reads back as
one table. ``_meta`` records how many sheets each table spans.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ... import spec
from ...frames.account import CAMPAIGN_COLUMN, TABLES, Account
from ...frames.cells import escape_formula
from ...frames.schemas import REF_SCHEMAS, SCHEMA_VERSION
from . import layout
from .account import ACCOUNT_KEY, exported_account
from .digest import DIGESTS_KEY, export_digests
from .layout import (
    BASE_PREFIX,
    COLUMNS,
    LISTS_SHEET,
    META_SHEET,
    README_SHEET,
    REFS_COLUMNS,
    REFS_SHEET,
    SHEETS,
    TIME_FORMAT,
    WORKBOOK_FORMAT,
    WORKBOOK_VERSION,
    Sheet,
    choice_lists,
    part_name,
    readme_lines,
)
from .sheet_xml import Column, SheetData, sheet_rows, splice

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook
    from openpyxl.worksheet.datavalidation import DataValidation
    from openpyxl.worksheet.worksheet import Worksheet

    from ...client import Client

#: Highest row and column of a sheet (drop-down lists and column styles reach them).
MAX_ROW = 1_048_576
MAX_COLUMN = 16_384
GREY = "D9D9D9"
HEADER_GREY = "BFBFBF"
HEADER_EDITABLE = "E2EFDA"
#: Where the panes freeze: below the header (and right of the id and name of campaigns).
FREEZE = {"campaigns": "C2", "creatives": "B2"}


def export_workbook(
    account_or_client: Account | Client,
    path: str | os.PathLike[str],
    campaign_ids: Iterable[int] | None = None,
    *,
    protect: bool = True,
) -> Path:
    """Write the editable workbook of an account (or of some of its campaigns) to ``path``.

    Given a :class:`~toolkit.client.Client`, the account is loaded first
    (``toolkit.load_account(client, campaign_ids, progress=False)``); given an
    :class:`~toolkit.frames.Account`, ``campaign_ids`` keeps those campaigns. Only the
    tables the account has loaded get a sheet (``mode="full"`` loads all seven), so a table
    that was not loaded reads back as missing ("no change"), never as empty.
    ``protect=False`` leaves the sheets unprotected. Returns the path.

    >>> export_workbook(account, "account.xlsx")                      # doctest: +SKIP
    PosixPath('account.xlsx')
    >>> export_workbook(client, "two.xlsx", campaign_ids=[1000001, 1000002])  # doctest: +SKIP
    PosixPath('two.xlsx')
    """
    ids = None if campaign_ids is None else sorted({int(c) for c in campaign_ids})
    account = _account(account_or_client, ids)
    tables = {
        name: _restrict(name, account.table(name), ids)[list(COLUMNS[name])]
        for name in TABLES
        if name in account.loaded_tables
    }
    return write_book(tables, path, account.refs, _meta(account, tables), protect=protect)


def write_book(
    tables: Mapping[str, pd.DataFrame],
    path: str | os.PathLike[str],
    refs: Mapping[str, pd.DataFrame],
    info: Sequence[tuple[str, str]],
    *,
    protect: bool = True,
    sheets: Mapping[str, Sheet] = SHEETS,
) -> Path:
    """Write ``tables`` (each with the columns of its sheet in ``sheets``) as an editable
    workbook with the dictionaries ``refs`` and the ``_meta`` facts ``info`` (the digests
    added); :func:`export_workbook` and the workbook of several accounts
    (:mod:`toolkit.bulk.workbook.set_book`) both write through it."""
    out = Path(path)
    skeleton, data = _skeleton(tables, protect, refs, info, sheets)
    splice(skeleton, out, data)
    return out


def _account(source: Any, campaign_ids: list[int] | None) -> Account:
    from ...client import Client

    if isinstance(source, Account):
        return source
    if isinstance(source, Client):
        from ...frames import load_account

        return load_account(source, campaign_ids, progress=False)
    raise TypeError(f"expected an Account or a Client, not {type(source).__name__}")


def _restrict(name: str, df: pd.DataFrame, ids: list[int] | None) -> pd.DataFrame:
    if ids is None:
        return df.reset_index(drop=True)
    return df[df[CAMPAIGN_COLUMN[name]].isin(ids)].reset_index(drop=True)


def _kind(dtype: Any) -> str:
    if isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)):
        return "str"
    if isinstance(dtype, pd.Int64Dtype):
        return "int"
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "time"
    return "float"


def _letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index)


class _Styles:
    """Registers cell formats in the workbook and gives their ids (``s`` of a cell)."""

    def __init__(self, wb: Workbook) -> None:
        self.wb = wb
        self.ws = wb.create_sheet("_styles")
        self.ids: dict[tuple[Any, ...], int] = {}

    def xf(
        self,
        number_format: str = "General",
        *,
        grey: bool = False,
        locked: bool = True,
        quote: bool = False,
    ) -> int:
        key = (number_format, grey, locked, quote)
        if key not in self.ids:
            self.ids[key] = _apply(self.ws.cell(row=len(self.ids) + 1, column=1), *key).style_id
        return self.ids[key]

    def close(self) -> None:
        self.wb.remove(self.ws)


def _apply(target: Any, number_format: str, grey: bool, locked: bool, quote: bool) -> Any:
    from openpyxl.styles import PatternFill, Protection

    target.number_format = number_format
    if grey:
        target.fill = PatternFill("solid", fgColor=GREY)
    target.protection = Protection(locked=locked)
    if quote:
        target.quotePrefix = True
    return target


def _put(ws: Worksheet, row: int, column: int, value: Any) -> Any:
    """Write one cell; text is always text (never a formula)."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ws.cell(row=row, column=column)
    if isinstance(value, np.generic):
        value = value.item()
    cell = ws.cell(row=row, column=column, value=value)
    if isinstance(value, str):
        cell.data_type = "s"
    return cell


def _skeleton(
    tables: Mapping[str, pd.DataFrame],
    protect: bool,
    refs: Mapping[str, pd.DataFrame],
    info: Sequence[tuple[str, str]],
    sheets: Mapping[str, Sheet],
) -> tuple[io.BytesIO, dict[str, SheetData]]:
    """The workbook without its data rows (written by openpyxl), and the rows to splice."""
    from openpyxl import Workbook

    wb = Workbook()
    readme = wb.active
    readme.title = README_SHEET
    styles = _Styles(wb)
    campaign_ids = (
        [int(i) for i in tables["campaigns"]["id"].dropna()] if "campaigns" in tables else []
    )
    lists = choice_lists(campaign_ids)
    list_ranges = _list_ranges(lists)
    data: dict[str, SheetData] = {}
    for name, df in tables.items():
        for k, part in enumerate(_parts(df), start=1):
            ws = wb.create_sheet(part_name(name, k))
            data[ws.title] = _table_sheet(ws, sheets[name], part, styles, list_ranges, protect)
    for name, df in tables.items():
        for k, part in enumerate(_parts(df), start=1):
            ws = wb.create_sheet(part_name(BASE_PREFIX + name, k))
            ws.sheet_state = "hidden"
            data[ws.title] = _base_sheet(ws, sheets[name], part, styles)
    _lists_sheet(wb.create_sheet(LISTS_SHEET), lists)
    _refs_sheet(wb.create_sheet(REFS_SHEET), refs)
    _meta_sheet(wb.create_sheet(META_SHEET), [*info, (DIGESTS_KEY, export_digests(tables))])
    _readme(readme, list(info))
    styles.close()
    wb.active = 0
    buffer = io.BytesIO()
    wb.save(buffer)
    buffer.seek(0)
    return buffer, data


def _parts(df: pd.DataFrame) -> list[pd.DataFrame]:
    """The table cut into sheets of at most :data:`~toolkit.bulk.workbook.layout.SHEET_ROWS`
    rows (one sheet, maybe empty, for a short table)."""
    size = layout.SHEET_ROWS
    if size < 1 or size + 1 >= layout.ROW_LIMIT:
        raise ValueError(f"SHEET_ROWS must be from 1 to {layout.ROW_LIMIT - 2:,}")
    if len(df) <= size:
        return [df]
    return [df.iloc[start : start + size] for start in range(0, len(df), size)]


def _list_ranges(lists: Mapping[str, list[object]]) -> dict[str, str]:
    out = {}
    for i, (name, values) in enumerate(lists.items(), start=1):
        col = _letter(i)
        out[name] = f"'{LISTS_SHEET}'!${col}$2:${col}${max(len(values), 1) + 1}"
    return out


def _width(name: str, series: pd.Series, kind: str) -> float:
    if kind == "time":
        content = 19.0
    elif kind == "str":
        sample = series.iloc[:5000].dropna()
        lengths = sample.astype(str).str.len() if len(sample) else pd.Series([0])
        content = float(lengths.quantile(0.95))
    else:
        content = 10.0
    return float(min(max(len(name) + 4, content + 2, 8), 60))


def _table_sheet(
    ws: Worksheet,
    sheet: Sheet,
    df: pd.DataFrame,
    styles: _Styles,
    list_ranges: Mapping[str, str],
    protect: bool,
) -> SheetData:
    from openpyxl.styles import Protection
    from openpyxl.worksheet.dimensions import ColumnDimension

    columns = sheet.columns
    specs = [_column(ws, sheet, i, name, df, styles) for i, name in enumerate(columns, start=1)]
    last = _letter(len(columns))
    rest = ColumnDimension(
        ws, index=_letter(len(columns) + 1), min=len(columns) + 1, max=MAX_COLUMN, width=10
    )
    rest.protection = Protection(locked=False)
    ws.column_dimensions[rest.index] = rest
    ws.freeze_panes = FREEZE.get(sheet.table, "A2")
    ws.auto_filter.ref = f"A1:{last}{len(df) + 1}"
    for i, name in enumerate(columns, start=1):
        dv = _validation(sheet, name, list_ranges)
        if dv is not None and name in sheet.editable:
            letter = _letter(i)
            dv.showErrorMessage = True
            dv.add(f"{letter}2:{letter}{MAX_ROW}")
            ws.add_data_validation(dv)
    if protect:
        p = ws.protection
        p.sheet = True
        p.insertRows = p.deleteRows = p.sort = p.autoFilter = False
        p.formatColumns = p.formatRows = False
    return SheetData(sheet_rows(df, specs), last, len(df) + 1, df.size)


def _column(
    ws: Worksheet, sheet: Sheet, i: int, name: str, df: pd.DataFrame, styles: _Styles
) -> Column:
    """The header of column ``i`` (bold, green when editable, its note as a comment), its
    width and style; the spec of its data cells."""
    from openpyxl.comments import Comment
    from openpyxl.styles import Alignment, Font, PatternFill

    letter = _letter(i)
    editable = name in sheet.editable
    kind = _kind(sheet.dtype(name))
    fmt = sheet.number_format(name)
    grey = not editable
    locked = (not editable) and sheet.locked
    head = _put(ws, 1, i, name)
    head.font = Font(bold=True)
    head.fill = PatternFill("solid", fgColor=HEADER_EDITABLE if editable else HEADER_GREY)
    head.alignment = Alignment(vertical="center")
    note = _note(sheet, name, editable)
    if note:
        head.comment = Comment(note, "campaign-toolkit", width=260, height=70)
    dim = ws.column_dimensions[letter]
    dim.width = _width(name, df[name], kind)
    _apply(dim, fmt, grey, locked, False)
    return Column(
        letter,
        kind,
        styles.xf(fmt, grey=grey, locked=locked),
        styles.xf(fmt, grey=grey, locked=locked, quote=True) if kind == "str" else None,
    )


def _note(sheet: Sheet, name: str, editable: bool) -> str:
    """The header comment of a column: its note, and for a read-only one, that it is."""
    note = sheet.note(name)
    if editable:
        return note
    return (
        "Read-only"
        + (f": {note}" if note else "")
        + ("." if name not in sheet.key else ". Identifies the row; do not change it.")
    )


def _validation(sheet: Sheet, name: str, list_ranges: Mapping[str, str]) -> DataValidation | None:
    """The data validation of a column: its drop-down list, a text length (a bid is text:
    a number or a change such as +10%, checked when the workbook is read)."""
    from openpyxl.worksheet.datavalidation import DataValidation

    if name in sheet.choices and sheet.choices[name] in list_ranges:
        return DataValidation(
            type="list",
            formula1=list_ranges[sheet.choices[name]],
            allow_blank=True,
            errorTitle=name,
            error=f"Pick a {name} from the list.",
        )
    if name in ("title", "text") and sheet.table == "creatives":
        limit = spec.CREATIVE_TITLE_MAX if name == "title" else spec.CREATIVE_TEXT_MAX
        return DataValidation(
            type="textLength",
            operator="lessThanOrEqual",
            formula1=str(limit),
            allow_blank=True,
            errorTitle=name,
            error=f"At most {limit} characters.",
        )
    return None


def _base_sheet(ws: Worksheet, sheet: Sheet, df: pd.DataFrame, styles: _Styles) -> SheetData:
    specs = []
    for i, name in enumerate(sheet.columns, start=1):
        _put(ws, 1, i, name)
        kind = _kind(sheet.dtype(name))
        style = styles.xf(TIME_FORMAT) if kind == "time" else 0
        specs.append(Column(_letter(i), kind, style))
    last = _letter(len(sheet.columns))
    return SheetData(sheet_rows(df, specs), last, len(df) + 1, df.size)


def _lists_sheet(ws: Worksheet, lists: Mapping[str, list[object]]) -> None:
    ws.sheet_state = "hidden"
    for i, (name, values) in enumerate(lists.items(), start=1):
        _put(ws, 1, i, name)
        for r, value in enumerate(values, start=2):
            _put(ws, r, i, value)


def _refs_sheet(ws: Worksheet, refs: Mapping[str, pd.DataFrame]) -> None:
    ws.sheet_state = "hidden"
    for i, name in enumerate(REFS_COLUMNS, start=1):
        _put(ws, 1, i, name)
    r = 2
    for kind in REF_SCHEMAS:
        df = refs.get(kind)
        if df is None or df.empty:
            continue
        cols = [c for c in REFS_COLUMNS[1:] if c in df.columns]
        for record in df[cols].astype(object).itertuples(index=False):
            _put(ws, r, 1, kind)
            for c, value in zip(cols, record, strict=True):  # read back as text columns
                _put(ws, r, REFS_COLUMNS.index(c) + 1, escape_formula(value))
            r += 1


def meta_facts(account: Account, tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, str]]:
    """The ``_meta`` facts of an export of ``account``'s ``tables`` (the digests apart)."""
    return _meta(account, tables)


def _meta(account: Account, tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, str]]:
    from ...client import redact

    return [
        ("format", WORKBOOK_FORMAT),
        ("workbook_version", str(WORKBOOK_VERSION)),
        ("schema_version", str(SCHEMA_VERSION)),
        ("exported_at", pd.Timestamp.now(tz="UTC").isoformat(timespec="seconds")),
        ("loaded_at", account.loaded_at.isoformat()),
        ("source", redact(account.source) if account.source else ""),
        (ACCOUNT_KEY, exported_account(account)),  # the user id: a plan checks it
        ("mode", account.mode),
        ("campaigns", str(len(tables.get("campaigns", ())))),
        ("tables", ", ".join(tables)),
        ("sheets", ", ".join(f"{t}={len(_parts(df))}" for t, df in tables.items())),
    ]


def _meta_sheet(ws: Worksheet, info: Sequence[tuple[str, str]]) -> None:
    ws.sheet_state = "hidden"
    _put(ws, 1, 1, "key")
    _put(ws, 1, 2, "value")
    for r, (key, value) in enumerate(info, start=2):
        _put(ws, r, 1, key)
        _put(ws, r, 2, value)


def _readme(ws: Worksheet, info: list[tuple[str, str]]) -> None:
    from openpyxl.styles import Alignment, Font

    width = 100
    for r, (label, text) in enumerate(readme_lines(info), start=1):
        label, text = escape_formula(label), escape_formula(text)  # a "-" is text, too
        if label:
            a = _put(ws, r, 1, label)
            a.alignment = Alignment(vertical="top")
            if not label.startswith(" "):
                a.font = Font(bold=True, size=14 if r == 1 else 11)
        if text:
            b = _put(ws, r, 2, text)
            b.alignment = Alignment(wrap_text=True, vertical="top")
            lines = max(1, -(-len(text) // (width - 8)))
            if lines > 1:
                ws.row_dimensions[r].height = 15 * lines
    ws.column_dimensions["A"].width = 24
    ws.column_dimensions["B"].width = width


__all__ = ["export_workbook", "meta_facts", "write_book"]
