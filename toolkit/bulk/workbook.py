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
:data:`~toolkit.bulk.workbook_layout.EDITABLE`) and hidden sheets: ``_base_<table>`` (the
exported state, for the three-way diff), ``_lists`` (drop-down lists), ``_refs`` (the
account's dictionaries) and ``_meta``.
"""

from __future__ import annotations

import gc
import io
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import spec
from ..errors import WorkbookError, WorkbookProblem
from ..frames.account import TABLES, Account
from ..frames.schemas import REF_SCHEMAS, SCHEMA_VERSION, SCHEMAS, frame
from .workbook_checks import Context, check_sheet, key_matches
from .workbook_layout import (
    BASE_PREFIX,
    COLUMNS,
    EDITABLE,
    KEYS,
    LISTS_SHEET,
    META_SHEET,
    READ_ONLY,
    README_SHEET,
    REFS_COLUMNS,
    REFS_SHEET,
    SHEETS,
    TIME_FORMAT,
    WORKBOOK_FORMAT,
    WORKBOOK_VERSION,
    Sheet,
    choice_lists,
    readme_lines,
)
from .workbook_read import Book, CellProblem, columns_of, is_empty, to_column
from .workbook_xml import Column, SheetData, sheet_rows, splice

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl import Workbook
    from openpyxl.worksheet.worksheet import Worksheet

    from ..client import Client

#: Highest row and column of a sheet (drop-down lists and column styles reach them).
MAX_ROW = 1_048_576
MAX_COLUMN = 16_384
GREY = "D9D9D9"
HEADER_GREY = "BFBFBF"
HEADER_EDITABLE = "E2EFDA"
#: Where the panes freeze: below the header (and right of the id and name of campaigns).
FREEZE = {"campaigns": "C2", "creatives": "B2"}


@dataclass
class WorkbookTables:
    """What :func:`read_workbook` read.

    ``desired``: the edited tables, only those whose sheet is present, with the columns of
    :data:`~toolkit.bulk.workbook_layout.COLUMNS` and their declared dtypes. ``base``: the
    exported state from the hidden ``_base_*`` sheets, same columns and dtypes (empty when
    the workbook has none, like a workbook made by hand). ``missing``: tables whose sheet is
    absent, which means "no change". ``refs``: the dictionaries saved with the export.
    ``meta``: facts about the export (``exported_at``, ``source``, ...).

    >>> WorkbookTables({}, {}, set(TABLES), Path("x.xlsx")).has_base
    False
    """

    desired: dict[str, pd.DataFrame]
    base: dict[str, pd.DataFrame]
    missing: set[str]
    path: Path
    refs: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def has_base(self) -> bool:
        """Whether the workbook holds its exported state (for a three-way diff)."""
        return bool(self.base)

    def __repr__(self) -> str:
        shown = ", ".join(f"{t} {len(df):,}" for t, df in self.desired.items())
        missing = f"; missing: {', '.join(sorted(self.missing))}" if self.missing else ""
        base = "with" if self.base else "without"
        return f"<WorkbookTables {self.path.name}: {shown}{missing}; {base} exported state>"


# --------------------------------------------------------------------------- export


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
    out = Path(path)
    skeleton, data = _skeleton(account, tables, protect)
    splice(skeleton, out, data)
    return out


def _account(source: Any, campaign_ids: list[int] | None) -> Account:
    from ..client import Client

    if isinstance(source, Account):
        return source
    if isinstance(source, Client):
        from ..frames import load_account

        return load_account(source, campaign_ids, progress=False)
    raise TypeError(f"expected an Account or a Client, not {type(source).__name__}")


def _restrict(name: str, df: pd.DataFrame, ids: list[int] | None) -> pd.DataFrame:
    if ids is None:
        return df.reset_index(drop=True)
    col = "id" if name == "campaigns" else "campaign_id"
    return df[df[col].isin(ids)].reset_index(drop=True)


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
    account: Account, tables: Mapping[str, pd.DataFrame], protect: bool
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
        ws = wb.create_sheet(name)
        data[name] = _table_sheet(ws, SHEETS[name], df, styles, list_ranges, protect)
    for name, df in tables.items():
        ws = wb.create_sheet(BASE_PREFIX + name)
        ws.sheet_state = "hidden"
        data[ws.title] = _base_sheet(ws, SHEETS[name], df, styles)
    _lists_sheet(wb.create_sheet(LISTS_SHEET), lists)
    _refs_sheet(wb.create_sheet(REFS_SHEET), account.refs)
    info = _meta(account, tables)
    _meta_sheet(wb.create_sheet(META_SHEET), info)
    _readme(readme, info)
    styles.close()
    wb.active = 0
    buffer = io.BytesIO()
    wb.save(buffer)
    buffer.seek(0)
    return buffer, data


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
    from openpyxl.comments import Comment
    from openpyxl.styles import Alignment, Font, PatternFill, Protection
    from openpyxl.worksheet.datavalidation import DataValidation
    from openpyxl.worksheet.dimensions import ColumnDimension

    specs = []
    bold = Font(bold=True)
    for i, name in enumerate(sheet.columns, start=1):
        letter = _letter(i)
        editable = name in sheet.editable
        kind = _kind(sheet.dtype(name))
        fmt = sheet.number_format(name)
        grey = not editable
        locked = (not editable) and sheet.locked
        head = _put(ws, 1, i, name)
        head.font = bold
        head.fill = PatternFill("solid", fgColor=HEADER_EDITABLE if editable else HEADER_GREY)
        head.alignment = Alignment(vertical="center")
        note = sheet.notes.get(name, "")
        if not editable:
            note = (
                "Read-only"
                + (f": {note}" if note else "")
                + ("." if name not in sheet.key else ". Identifies the row; do not change it.")
            )
        if note:
            head.comment = Comment(note, "campaign-toolkit", width=260, height=70)
        dim = ws.column_dimensions[letter]
        dim.width = _width(name, df[name], kind)
        _apply(dim, fmt, grey, locked, False)
        specs.append(
            Column(
                letter,
                kind,
                styles.xf(fmt, grey=grey, locked=locked),
                styles.xf(fmt, grey=grey, locked=locked, quote=True) if kind == "str" else None,
            )
        )
    last = _letter(len(sheet.columns))
    rest = ColumnDimension(
        ws,
        index=_letter(len(sheet.columns) + 1),
        min=len(sheet.columns) + 1,
        max=MAX_COLUMN,
        width=10,
    )
    rest.protection = Protection(locked=False)
    ws.column_dimensions[rest.index] = rest
    ws.freeze_panes = FREEZE.get(sheet.table, "A2")
    ws.auto_filter.ref = f"A1:{last}{len(df) + 1}"
    for i, name in enumerate(sheet.columns, start=1):
        letter = _letter(i)
        where = f"{letter}2:{letter}{MAX_ROW}"
        dv = None
        if name in sheet.choices and sheet.choices[name] in list_ranges:
            dv = DataValidation(
                type="list",
                formula1=list_ranges[sheet.choices[name]],
                allow_blank=True,
                errorTitle=name,
                error=f"Pick a {name} from the list.",
            )
        elif name == "bid":
            dv = DataValidation(
                type="decimal",
                operator="greaterThan",
                formula1="0",
                allow_blank=True,
                errorTitle=name,
                error="A bid is more than 0.",
            )
        elif name in ("title", "text") and sheet.table == "creatives":
            limit = spec.CREATIVE_TITLE_MAX if name == "title" else spec.CREATIVE_TEXT_MAX
            dv = DataValidation(
                type="textLength",
                operator="lessThanOrEqual",
                formula1=str(limit),
                allow_blank=True,
                errorTitle=name,
                error=f"At most {limit} characters.",
            )
        if dv is not None and name in sheet.editable:
            dv.showErrorMessage = True
            dv.add(where)
            ws.add_data_validation(dv)
    if protect:
        p = ws.protection
        p.sheet = True
        p.insertRows = p.deleteRows = p.sort = p.autoFilter = False
        p.formatColumns = p.formatRows = False
    return SheetData(sheet_rows(df, specs), last, len(df) + 1, df.size)


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
            for c, value in zip(cols, record, strict=True):
                _put(ws, r, REFS_COLUMNS.index(c) + 1, value)
            r += 1


def _meta(account: Account, tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, str]]:
    from ..client.transport import redact

    return [
        ("format", WORKBOOK_FORMAT),
        ("workbook_version", str(WORKBOOK_VERSION)),
        ("schema_version", str(SCHEMA_VERSION)),
        ("exported_at", pd.Timestamp.now(tz="UTC").isoformat(timespec="seconds")),
        ("loaded_at", account.loaded_at.isoformat()),
        ("source", redact(account.source) if account.source else ""),
        ("mode", account.mode),
        ("campaigns", str(len(tables.get("campaigns", ())))),
        ("tables", ", ".join(tables)),
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


# --------------------------------------------------------------------------- read


def read_workbook(path: str | os.PathLike[str], *, engine: str | None = None) -> WorkbookTables:
    """Read an edited workbook: the desired tables, the exported state, the missing sheets.

    Every sheet is checked (see docs/bulk.md, "The workbook"); if any cell is wrong, one
    :class:`~toolkit.errors.WorkbookError` lists every problem (sheet, Excel row, column,
    value, message) and nothing is returned. ``engine`` is ``"calamine"`` (the default when
    python-calamine is installed) or ``"openpyxl"``.

    >>> tables = read_workbook("account.xlsx")                          # doctest: +SKIP
    >>> tables.desired["lists"].dtypes.astype(str).to_dict()            # doctest: +SKIP
    {'campaign_id': 'Int64', 'list': 'category', 'item': 'string'}
    >>> try:                                                            # doctest: +SKIP
    ...     read_workbook("broken.xlsx")
    ... except toolkit.WorkbookError as exc:
    ...     exc.to_frame()
    """
    problems: list[WorkbookProblem] = []
    with _gc_paused(), Book(path, engine) as book:
        names = set(book.names)
        book.prefetch([META_SHEET, REFS_SHEET, *(BASE_PREFIX + t for t in TABLES), *TABLES])
        meta = _read_meta(book) if META_SHEET in names else {}
        refs = _read_refs(book) if REFS_SHEET in names else {}
        base: dict[str, pd.DataFrame] = {}
        for table in TABLES:
            name = BASE_PREFIX + table
            if name in names:
                parsed = _parse(book, name, SHEETS[table], problems, base=True)
                base[table] = _finish(table, parsed.df)
        ctx = Context(base=base, refs=refs)
        if "campaigns" in base:
            ctx.campaign_ids = frozenset(int(i) for i in base["campaigns"]["id"].dropna())
            ctx.formats = _formats_of(base["campaigns"])
        desired: dict[str, pd.DataFrame] = {}
        for table in TABLES:
            if table not in names:
                continue
            parsed = _parse(book, table, SHEETS[table], problems)
            _normalise(table, parsed, ctx)
            if table == "campaigns":
                ctx.formats = {**_formats_of(parsed.df), **ctx.formats}
            problems += check_sheet(table, parsed.df, parsed.rows, parsed.raw, ctx, parsed.present)
            desired[table] = parsed.df
    if problems:
        raise WorkbookError(_sorted(problems), str(path))
    desired = {t: _finish(t, df) for t, df in desired.items()}
    missing = {t for t in TABLES if t not in desired}
    return WorkbookTables(desired, base, missing, Path(path), refs, meta)


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
    """A sheet read and converted: codes still as text, blank rows dropped."""

    df: pd.DataFrame
    rows: np.ndarray
    raw: dict[str, Sequence[Any]]
    present: list[str]


def _parse(
    book: Book, name: str, sheet: Sheet, problems: list[WorkbookProblem], base: bool = False
) -> _Parsed:
    rows = book.rows(name)
    header = list(rows[0]) if rows else []
    positions: dict[str, int] = {}
    for i, cell in enumerate(header):
        if is_empty(cell):
            continue
        label = str(cell).strip()
        if label in positions:
            problems.append(WorkbookProblem(name, 1, label, label, "duplicate column"))
        else:
            positions[label] = i
    needed = sheet.columns if base else sheet.headers_required
    for col in needed:
        if col not in positions:
            problems.append(WorkbookProblem(name, 1, col, None, "missing column"))
    present = [c for c in sheet.columns if c in positions]
    data = rows[1:]
    n = len(data)
    cells = columns_of(data, len(header))
    raw: dict[str, Sequence[Any]] = {c: cells[positions[c]] for c in present}
    columns: dict[str, Any] = {}
    unreadable: set[int] = set()
    for col in sheet.columns:
        dtype = SCHEMAS[sheet.table][col]
        if col not in raw:
            columns[col] = pd.Series(pd.array([None] * n, dtype=_text_dtype(dtype)))
            continue
        strip = col in sheet.key or isinstance(dtype, pd.CategoricalDtype)
        values, bad = to_column(raw[col], dtype, strip=strip)
        columns[col] = values
        problems += _cell_problems(name, col, bad)
        unreadable.update(i for i, _, _ in bad)
    df = pd.DataFrame(columns, index=pd.RangeIndex(n))
    excel_rows = np.arange(2, n + 2)
    if n:
        keep = ~df.isna().all(axis=1).to_numpy()
        if unreadable:
            keep[sorted(unreadable)] = True
        if not keep.all():
            df = df[keep].reset_index(drop=True)
            excel_rows = excel_rows[keep]
            raw = {c: [v for v, k in zip(vals, keep, strict=True) if k] for c, vals in raw.items()}
    return _Parsed(df, excel_rows, raw, present)


def _text_dtype(dtype: Any) -> Any:
    from ..frames.schemas import STRING

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
        typed = df["kind"].isin([k.column for k in spec.TARGET_KINDS.values() if k.typed])
        fill = typed.fillna(False).to_numpy() & df["list_type"].isna().to_numpy()
        if fill.any():
            df.loc[fill, "list_type"] = "black"
    base = ctx.base.get(table)
    if base is None:
        return
    sheet = SHEETS[table]
    if not sheet.read_only or df.empty:
        return
    new = ~key_matches(df, base, list(sheet.key))
    if not new.any():
        return
    for col in sheet.read_only:
        if col not in sheet.key:
            df.loc[new, col] = None
    if table == "countries":
        names = _ref_map(ctx.refs.get("country"), "code")
        df.loc[new, "country_name"] = df.loc[new, "country"].map(names, na_action="ignore")
    if table == "targets":
        df.loc[new, "label"] = [
            _target_label(ctx, kind, value, cid)
            for kind, value, cid in zip(
                df.loc[new, "kind"], df.loc[new, "value"], df.loc[new, "campaign_id"], strict=True
            )
        ]


def _ref_map(df: pd.DataFrame | None, by: str = "id") -> dict[str, str]:
    if df is None or df.empty or by not in df:
        return {}
    keys = df[by].astype(object)
    return {
        str(k): v
        for k, v in zip(keys, df["name"].astype(object), strict=True)
        if k is not None and k is not pd.NA
    }


def _target_label(ctx: Context, kind: Any, value: Any, campaign_id: Any) -> str | None:
    if kind is None or kind is pd.NA or value is None or value is pd.NA:
        return None
    if kind == "category":
        refs = ctx.refs.get("category")
        fmt = ctx.formats.get(int(campaign_id)) if pd.notna(campaign_id) else None
        if refs is None or fmt is None:
            return None
        group = spec.FORMATS[fmt].category_group
        return _ref_map(refs[refs["ad_format"].astype(object) == group]).get(str(value))
    if kind in ("os", "browser", "subs_age", "language"):
        return _ref_map(ctx.refs.get(kind)).get(str(value))
    return None


def _formats_of(campaigns: pd.DataFrame) -> dict[int, str]:
    ok = campaigns["id"].notna() & campaigns["ad_format"].notna()
    ids = campaigns.loc[ok, "id"].astype(int)
    fmts = campaigns.loc[ok, "ad_format"].astype(str)
    return {int(i): f for i, f in zip(ids, fmts, strict=True) if f in spec.FORMATS}


def _finish(table: str, df: pd.DataFrame) -> pd.DataFrame:
    """The table with its shown columns, each of its declared dtype."""
    columns = list(COLUMNS[table])
    return frame(table, {c: df[c] for c in columns})[columns]


def _read_meta(book: Book) -> dict[str, str]:
    out = {}
    for row in book.rows(META_SHEET)[1:]:
        if len(row) >= 2 and not is_empty(row[0]):
            out[str(row[0])] = "" if is_empty(row[1]) else str(row[1])
    return out


def _read_refs(book: Book) -> dict[str, pd.DataFrame]:
    rows = book.rows(REFS_SHEET)
    if not rows:
        return {}
    header = [str(h) for h in rows[0]]
    cells = columns_of(rows[1:], len(header))
    table = {h: cells[i] for i, h in enumerate(header) if h in REFS_COLUMNS}
    if "type" not in table:
        return {}
    kinds = table["type"]
    out = {}
    for kind, schema_name in REF_SCHEMAS.items():
        picked = [i for i, k in enumerate(kinds) if k == kind]
        if not picked:
            continue
        columns = {}
        for col, dtype in SCHEMAS[schema_name].items():
            values = [table[col][i] for i in picked] if col in table else [None] * len(picked)
            columns[col], _ = to_column(values, dtype)
        out[kind] = frame(schema_name, columns)
    return out


def _sorted(problems: list[WorkbookProblem]) -> list[WorkbookProblem]:
    sheets = [*TABLES, *(BASE_PREFIX + t for t in TABLES)]

    def order(p: WorkbookProblem) -> tuple[int, int, int]:
        sheet = sheets.index(p.sheet) if p.sheet in sheets else len(sheets)
        table = p.sheet.removeprefix(BASE_PREFIX)
        cols = COLUMNS.get(table, ())
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
