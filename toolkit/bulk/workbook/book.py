"""The editable workbook: export an account to .xlsx, edit it in Excel or LibreOffice, read it
back as desired tables (and the exported state) for the planner.

>>> import toolkit
>>> from toolkit.bulk.workbook import export_workbook, read_workbook
>>> client = toolkit.connect()                                         # doctest: +SKIP
>>> export_workbook(client, "account.xlsx")                            # doctest: +SKIP
PosixPath('account.xlsx')
>>> tables = read_workbook("account.xlsx")        # after editing      # doctest: +SKIP
>>> tables.desired["countries"].head()                                 # doctest: +SKIP
>>> tables.missing                                # sheets deleted: no change   # doctest: +SKIP
{'creatives'}

The workbook has a README sheet first, one sheet per table (``campaigns``, ``countries``,
``targets``, ``lists``, ``bid_rules``, ``cpa_rules``, ``creatives``; columns and dtypes of
:data:`toolkit.frames.schemas.SCHEMAS`, editable columns in
:data:`~toolkit.bulk.workbook.layout.EDITABLE`) and hidden sheets: ``_base_<table>`` (the
exported state, for the three-way diff), ``_lists`` (drop-down lists), ``_refs`` (the
account's dictionaries) and ``_meta``. A table longer than
:data:`~toolkit.bulk.workbook.layout.SHEET_ROWS` rows continues on ``lists (2)``, ...
(and ``_base_lists (2)``, ...), read back as one table; a table sheet that reaches
row 1,048,576, where Excel and LibreOffice cut sheets off, is refused.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from openpyxl.utils import get_column_letter

from ... import spec
from ...errors import WorkbookError, WorkbookProblem
from ...frames.account import TABLES
from ...frames.schemas import SCHEMAS
from ..relative_bids import BID_COLUMNS, BidCell, split_cells
from . import layout
from .bid_forms import excel_percentages, workbook_forms
from .cells import Book, CellProblem, columns_of, is_empty, to_column
from .checks import PART_STRIDE, Context, check_sheet
from .digest import DIGESTS_KEY, edited, parse_digests, shown, unchanged
from .export import export_workbook
from .hidden import read_meta, read_refs
from .layout import (
    BASE_PREFIX,
    COLUMNS,
    EDITABLE,
    KEYS,
    READ_ONLY,
    REFS_SHEET,
    SHEETS,
    Sheet,
)
from .new_rows import fill_read_only, new_rows
from .sheet_scan import cells_of
from .sheets import SheetMap, map_sheets
from .view import tables_frame, tables_html


@dataclass(frozen=True)
class RowAccounts:
    """The ``account`` cells of a table's rows as read (``cells``, one per row), and where
    each row is: the sheet it was read from and its Excel row."""

    cells: list[Any]
    sheets: list[str]
    rows: list[int]


@dataclass
class WorkbookTables:
    """What :func:`read_workbook` read.

    ``desired``: the edited tables, only those whose sheet is present, with the columns of
    :data:`~toolkit.bulk.workbook.layout.COLUMNS` and their declared dtypes. ``base``: the
    exported state from the hidden ``_base_*`` sheets, same columns and dtypes (empty when
    the workbook has none, like a workbook made by hand). ``missing``: tables whose sheet is
    absent, which means "no change". ``refs``: the dictionaries saved with the export.
    ``meta``: facts about the export (``exported_at``, ``source``, ...). ``ignored``: sheets
    that are not read (your own notes). ``sheets``: table -> the sheets it was read from
    (``lists``, ``lists (2)``, ... for a long table). ``bid_forms``: the bid cells written as
    changes (``+10%``, ``x1.2``, ``min``, ``rec-5%``; :mod:`toolkit.bulk.relative_bids`),
    whose bids in ``desired`` are already the new ones, except ``min`` and ``rec`` (empty
    until a plan asks the service's prices).

    In a notebook the object shows as a table of its sheets (see :meth:`_repr_html_`).

    >>> WorkbookTables({}, {}, set(TABLES), Path("x.xlsx")).has_base
    False
    """

    desired: dict[str, pd.DataFrame]
    base: dict[str, pd.DataFrame]
    missing: set[str]
    path: Path
    refs: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    sheets: dict[str, list[str]] = field(default_factory=dict)
    bid_forms: list[BidCell] = field(default_factory=list)
    #: Per table, the cell of an ``account`` column beside each row of ``desired`` (a
    #: workbook of several accounts has one: :mod:`toolkit.bulk.workbook.set_book`), with
    #: the sheet and Excel row of each row; tables without the column are absent.
    row_accounts: dict[str, RowAccounts] = field(default_factory=dict, repr=False)

    @property
    def has_base(self) -> bool:
        """Whether the workbook holds its exported state (for a three-way diff)."""
        return bool(self.base)

    def __repr__(self) -> str:
        shown = ", ".join(f"{t} {len(df):,}" for t, df in self.desired.items())
        missing = f"; missing: {', '.join(sorted(self.missing))}" if self.missing else ""
        base = "with" if self.base else "without"
        return f"<WorkbookTables {self.path.name}: {shown}{missing}; {base} exported state>"

    def to_frame(self) -> pd.DataFrame:
        """One row per table: its sheets, rows read, exported rows, and what its absence
        means."""
        return tables_frame(self)

    def _repr_html_(self) -> str:
        """The notebook view: the file, each table's sheets and rows, sheets not read."""
        return tables_html(self)


# --------------------------------------------------------------------------- read


def read_workbook(path: str | os.PathLike[str], *, engine: str | None = None) -> WorkbookTables:
    """Read an edited workbook: the desired tables, the exported state, the missing sheets.

    Every sheet is checked (see docs/bulk.md, "The workbook"); if any cell is wrong, one
    :class:`~toolkit.errors.WorkbookError` lists every problem (sheet, Excel row, column,
    value, message) and nothing is returned. A file that is not an .xlsx workbook (empty,
    CSV, .xls, truncated), a formula or merged cells in a table sheet, a table sheet that
    reaches the last row of a spreadsheet, a continuation or hidden sheet gone missing, a
    table sheet under another name: each is a problem too. ``engine`` is ``"calamine"``
    (the default when python-calamine is installed) or ``"openpyxl"``.

    >>> tables = read_workbook("account.xlsx")                          # doctest: +SKIP
    >>> tables.desired["lists"].dtypes.astype(str).to_dict()            # doctest: +SKIP
    {'campaign_id': 'Int64', 'list': 'category', 'item': 'string'}
    >>> try:                                                            # doctest: +SKIP
    ...     read_workbook("broken.xlsx")
    ... except toolkit.WorkbookError as exc:
    ...     exc.to_frame()
    """
    problems: list[WorkbookProblem] = []
    covered: set[tuple[str, int | None, str | None]] = set()
    with _gc_paused(), Book(path, engine) as book:
        meta = read_meta(book)
        sheets = map_sheets(book.names, meta, book.header)
        problems += sheets.problems
        digests = parse_digests(meta.get(DIGESTS_KEY, ""))
        book.prefetch(
            [REFS_SHEET, *(s for t, p in sheets.bases.items() if t not in digests for s in p)]
            + [s for p in sheets.tables.values() for s in p]
        )
        refs = read_refs(book)
        parsed, clean = _parse_tables(book, sheets, problems, covered)
        same = {
            t: df
            for t in sheets.bases
            if t in clean and (df := unchanged(t, parsed[t].df, digests)) is not None
        }
        base = _read_bases(book, sheets, same, digests, problems, covered)
        ctx = Context(base=base, refs=refs)
        if "campaigns" in base:
            ctx.campaign_ids = frozenset(int(i) for i in base["campaigns"]["id"].dropna())
            ctx.formats = _formats_of(base["campaigns"])
        forms: list[BidCell] = []
        desired = _read_tables(sheets, parsed, ctx, problems, forms, same)
    if problems:
        reported = [
            p
            for p in problems
            if _is_structural(p) or p.row is None or (p.sheet, p.row, p.column) not in covered
        ]
        raise WorkbookError(_sorted(reported), str(path))
    desired = {
        t: same[t].copy(deep=False) if t in same else shown(t, df) for t, df in desired.items()
    }
    missing = {t for t in TABLES if t not in desired}
    found = WorkbookTables(desired, base, missing, Path(path), refs, meta, sheets.ignored)
    found.sheets, found.bid_forms = _sheet_names(sheets), forms
    found.row_accounts = _row_accounts(sheets, parsed)
    return found


def _row_accounts(sheets: SheetMap, parsed: Mapping[str, _Parsed]) -> dict[str, RowAccounts]:
    """The ``account`` cells beside each row read, for the tables whose sheets have them."""
    out = {}
    for table, p in parsed.items():
        cells = p.raw.get(layout.ACCOUNT_COLUMN)
        if cells is None:
            continue
        parts = sheets.tables[table]
        places = [divmod(int(r), PART_STRIDE) for r in p.rows]
        out[table] = RowAccounts(
            list(cells), [parts[k] for k, _ in places], [row for _, row in places]
        )
    return out


def _parse_tables(
    book: Book,
    sheets: SheetMap,
    problems: list[WorkbookProblem],
    covered: set[tuple[str, int | None, str | None]],
) -> tuple[dict[str, _Parsed], set[str]]:
    """The table sheets read and converted, and the tables read without a problem."""
    parsed: dict[str, _Parsed] = {}
    clean: set[str] = set()
    for table, parts in sheets.tables.items():
        before = len(problems)
        parsed[table] = _parse_parts(book, parts, SHEETS[table], problems, covered)
        clean |= {table} if len(problems) == before else set()
    return parsed, clean


def _read_bases(
    book: Book,
    sheets: SheetMap,
    same: dict[str, pd.DataFrame],
    digests: dict[str, str],
    problems: list[WorkbookProblem],
    covered: set[tuple[str, int | None, str | None]],
) -> dict[str, pd.DataFrame]:
    """The exported state: ``same``, the rows of the table sheets that have the digest of the
    export (their ``_base_`` sheets are not parsed), and the ``_base_`` sheets of the others
    (:mod:`.digest`)."""
    base: dict[str, pd.DataFrame | None] = dict(same)
    unread = [t for t in sheets.bases if t not in same]
    book.prefetch([s for t in unread for s in sheets.bases[t]])
    for table in unread:
        parts = sheets.bases[table]
        before = len(problems)
        read = _parse_parts(book, parts, SHEETS[table], problems, covered, True)
        base[table] = shown(table, read.df)
        if len(problems) == before:  # a base sheet edited into other valid rows
            problems += edited(table, parts[0], base[table], digests)
    return {t: df for t in sheets.bases if (df := base[t]) is not None}


def _read_tables(
    sheets: SheetMap,
    parsed_tables: dict[str, _Parsed],
    ctx: Context,
    problems: list[WorkbookProblem],
    forms: list[BidCell],
    same: Mapping[str, pd.DataFrame],
) -> dict[str, pd.DataFrame]:
    """The edited tables, normalised and checked (their problems added to ``problems``);
    the relative bids written (``+10%``, ``min``) added to ``forms``. The tables in ``same``
    are the rows exported (their digest says so), already read without a problem: neither
    normalised nor checked again."""
    desired: dict[str, pd.DataFrame] = {}
    for table, parts in sheets.tables.items():
        parsed = parsed_tables[table]
        if table in same:
            desired[table] = parsed.df
            continue
        _normalise(table, parsed, ctx)
        if table in BID_COLUMNS:
            cells, found = workbook_forms(table, parsed.df, parsed.rows, parsed.raw, ctx, parts)
            forms += cells
            problems += found
        if table == "campaigns":
            ctx.formats = {**_formats_of(parsed.df), **ctx.formats}
        problems += check_sheet(
            table, parsed.df, parsed.rows, parsed.raw, ctx, parsed.present, parts
        )
        desired[table] = parsed.df
    return desired


def _sheet_names(sheets: SheetMap) -> dict[str, list[str]]:
    return {t: list(p) for t, p in sheets.tables.items()}


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a workbook is read: reading makes millions of
    small objects, none cyclic, and each collection would scan them all (a third of the
    time of a big read)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class _Parsed:
    """A table read and converted: codes still as text, blank rows dropped. ``rows`` are
    the Excel rows, plus ``PART_STRIDE`` per continuation sheet."""

    df: pd.DataFrame
    rows: np.ndarray
    raw: dict[str, Sequence[Any]]
    present: list[str]


#: Message ends of the problems that explain a cell's other problems (formula, merge).
_FORMULA = "holds a formula"
_MERGED = "are merged"


def _is_structural(p: WorkbookProblem) -> bool:
    return _FORMULA in p.message or _MERGED in p.message


def _parse_parts(
    book: Book,
    parts: Sequence[str],
    sheet: Sheet,
    problems: list[WorkbookProblem],
    covered: set[tuple[str, int | None, str | None]],
    base: bool = False,
) -> _Parsed:
    """The sheets of one table read as one (each part's rows offset by ``PART_STRIDE``)."""
    parsed = [_parse(book, name, sheet, problems, covered, base) for name in parts]
    if len(parsed) == 1:
        return parsed[0]
    present = [c for c in sheet.columns if all(c in p.present for p in parsed)]
    df = pd.concat([p.df for p in parsed], ignore_index=True)
    rows = np.concatenate([p.rows + k * PART_STRIDE for k, p in enumerate(parsed)])
    acc = layout.ACCOUNT_COLUMN
    kept = [*present, *([acc] if all(acc in p.raw for p in parsed) else [])]
    raw = {c: list(chain.from_iterable(p.raw[c] for p in parsed)) for c in kept}
    return _Parsed(df, rows, raw, present)


def _used_rows(rows: list[Sequence[Any]]) -> int:
    """The number of the last row holding a value."""
    n = len(rows)
    while n and all(is_empty(v) for v in rows[n - 1]):
        n -= 1
    return n


def _parse(
    book: Book,
    name: str,
    sheet: Sheet,
    problems: list[WorkbookProblem],
    covered: set[tuple[str, int | None, str | None]],
    base: bool = False,
) -> _Parsed:
    rows = book.rows(name)
    header = list(rows[0]) if rows else []
    if _used_rows(rows) >= layout.ROW_LIMIT:
        problems.append(WorkbookProblem(name, layout.ROW_LIMIT, None, None, _CUT_OFF))
    positions = _positions(
        name, header, sheet.columns if base else sheet.headers_required, problems
    )
    if not base:  # the hidden state is written by the export, never edited
        _structure(book, name, header, problems, covered)
    present = [c for c in sheet.columns if c in positions]
    data = rows[1:]
    n = len(data)
    cells = columns_of(data, len(header))
    raw: dict[str, Sequence[Any]] = {c: cells[positions[c]] for c in present}
    if not base and layout.ACCOUNT_COLUMN in positions:  # a workbook of several accounts
        raw[layout.ACCOUNT_COLUMN] = cells[positions[layout.ACCOUNT_COLUMN]]
    columns: dict[str, Any] = {}
    unreadable: set[int] = set()
    schema = SCHEMAS[sheet.table]
    for col in sheet.columns:
        dtype = schema[col]
        if col not in raw:
            columns[col] = pd.Series(pd.array([None] * n, dtype=_text_dtype(dtype)))
            continue
        strip = col in sheet.key or isinstance(dtype, pd.CategoricalDtype)
        values = raw[col]
        if not base and BID_COLUMNS.get(sheet.table) == col:  # +10%, x1.2, min, rec-5%
            values, forms, bad_forms = split_cells(values)
            letter = get_column_letter(positions[col] + 1)  # 0.1 shown 10%: +10% typed
            bad_forms += excel_percentages(values, book.percent_rows(name, letter), letter)
            problems += _cell_problems(name, col, bad_forms)
            unreadable.update(forms, (i for i, _, _ in bad_forms))  # rows kept, bids later
        columns[col], bad = to_column(values, dtype, strip=strip)
        problems += _cell_problems(name, col, bad)
        unreadable.update(i for i, _, _ in bad)
    return _drop_blank(pd.DataFrame(columns, index=pd.RangeIndex(n)), raw, present, unreadable)


_CUT_OFF = (
    f"the sheet reaches row {layout.ROW_LIMIT:,}, the last row Excel and "
    "LibreOffice keep: it may have been cut off when saved, and the rows cut off "
    "would be dropped. Export fewer campaigns (--campaigns) or use an action "
    "workbook (see templates/)"
)


def _positions(
    name: str, header: Sequence[Any], needed: Sequence[str], problems: list[WorkbookProblem]
) -> dict[str, int]:
    """Column label -> its position in the header; a duplicate or missing column is a
    problem."""
    positions: dict[str, int] = {}
    for i, cell in enumerate(header):
        if is_empty(cell):
            continue
        label = str(cell).strip()
        if label in positions:
            problems.append(WorkbookProblem(name, 1, label, label, "duplicate column"))
        else:
            positions[label] = i
    for col in needed:
        if col not in positions:
            problems.append(WorkbookProblem(name, 1, col, None, "missing column"))
    return positions


def _drop_blank(
    df: pd.DataFrame, raw: dict[str, Sequence[Any]], present: list[str], unreadable: set[int]
) -> _Parsed:
    """The rows that hold a value (or an unreadable cell), with their Excel rows."""
    excel_rows = np.arange(2, len(df) + 2)
    if len(df):
        keep = ~df.isna().all(axis=1).to_numpy()
        if unreadable:
            keep[sorted(unreadable)] = True
        if not keep.all():
            df = df[keep].reset_index(drop=True)
            excel_rows = excel_rows[keep]
            raw = {c: [v for v, k in zip(vals, keep, strict=True) if k] for c, vals in raw.items()}
    return _Parsed(df, excel_rows, raw, present)


def _structure(
    book: Book,
    name: str,
    header: Sequence[Any],
    problems: list[WorkbookProblem],
    covered: set[tuple[str, int | None, str | None]],
) -> None:
    """Formulas and merged cells of a sheet, each a problem; the cells they cover are kept
    in ``covered`` (their other problems, like "empty", follow from these)."""
    scan = book.scan(name)
    if not scan.formulas and not scan.merged:
        return
    from openpyxl.utils import column_index_from_string

    def label(letter: str) -> str:
        i = column_index_from_string(letter) - 1
        value = header[i] if i < len(header) else None
        return letter if is_empty(value) else str(value).strip()

    for letter, row, text in scan.formulas:
        col = label(letter)
        problems.append(
            WorkbookProblem(
                name, row, col, text, f"cell {letter}{row} {_FORMULA}; enter a value instead"
            )
        )
        covered.add((name, row, col))
    for ref in scan.merged:
        first_letter, first_row = next(cells_of(ref))
        problems.append(
            WorkbookProblem(
                name,
                first_row,
                label(first_letter),
                None,
                f"cells {ref} {_MERGED}; unmerge them and fill in each cell",
            )
        )
        covered.update((name, row, label(letter)) for letter, row in cells_of(ref))


def _text_dtype(dtype: Any) -> Any:
    from ...frames.schemas import STRING

    return STRING if isinstance(dtype, pd.CategoricalDtype) else dtype


def _cell_problems(sheet: str, col: str, bad: list[CellProblem]) -> list[WorkbookProblem]:
    return [WorkbookProblem(sheet, i + 2, col, value, message) for i, value, message in bad]


def _canonical(series: pd.Series, codes: Sequence[str], dashes: bool = False) -> pd.Series:
    """Codes matched without regard to case (and ``-`` for ``_`` with ``dashes``)."""
    lookup = {c.lower(): c for c in codes}
    text = series.str.lower()
    if dashes:
        text = text.str.replace("-", "_", regex=False)
    mapped = text.map(lookup, na_action="ignore")
    return series.where(mapped.isna(), mapped).astype(series.dtype)


def _normalise(table: str, parsed: _Parsed, ctx: Context) -> None:
    """Codes in their declared spelling; typed targets without a list type are black; the
    read-only cells of new rows come from the dictionaries (or are empty)."""
    df = parsed.df
    for col, dtype in SCHEMAS[table].items():
        if col in df and isinstance(dtype, pd.CategoricalDtype):
            df[col] = _canonical(df[col], list(dtype.categories), dashes=col == "kind")
    if table == "countries":
        df["country"] = df["country"].str.upper()
    if table == "targets":
        typed = df["kind"].isin([k.column for k in spec.item_kinds() if k.typed])
        fill = typed.fillna(False).to_numpy() & df["list_type"].isna().to_numpy()
        if fill.any():
            df.loc[fill, "list_type"] = "black"
    new = new_rows(table, df, ctx)
    if new is not None:
        fill_read_only(table, df, new, ctx)


def _formats_of(campaigns: pd.DataFrame) -> dict[int, str]:
    ok = campaigns["id"].notna() & campaigns["ad_format"].notna()
    ids = campaigns.loc[ok, "id"].astype(int)
    fmts = campaigns.loc[ok, "ad_format"].astype(str)
    return {int(i): f for i, f in zip(ids, fmts, strict=True) if f in spec.FORMATS}


def _sorted(problems: list[WorkbookProblem]) -> list[WorkbookProblem]:
    sheets = [*TABLES, *(BASE_PREFIX + t for t in TABLES)]
    columns = {t: COLUMNS[t] for t in TABLES}

    def order(p: WorkbookProblem) -> tuple[int, int, int]:
        sheet = sheets.index(p.sheet) if p.sheet in sheets else len(sheets)
        table = p.sheet.removeprefix(BASE_PREFIX)
        cols = columns.get(table, ())
        col = cols.index(p.column) if p.column in cols else len(cols)
        return (sheet, p.row or 0, col)

    return sorted(problems, key=order)


__all__ = [
    "COLUMNS",
    "EDITABLE",
    "KEYS",
    "READ_ONLY",
    "WorkbookError",
    "WorkbookProblem",
    "WorkbookTables",
    "export_workbook",
    "read_workbook",
]
