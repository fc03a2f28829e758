"""Checks of an edited sheet: every bad cell becomes a :class:`~toolkit.errors.WorkbookProblem`.

The checks run on a sheet already converted to its declared dtypes (codes still as text),
column-wise where tables can be big (lists, bid rules), so a sheet of a million rows is
checked in about a second.

>>> import pandas as pd
>>> from toolkit.frames.schemas import frame
>>> df = frame("bid_rules", {"campaign_id": [7, 7], "item": ["ab", "xyz"], "bid": [0.1, 0]})
>>> ctx = Context()
>>> for p in check_sheet("bid_rules", df, [2, 3], {}, ctx):
...     print(p)
bid_rules row 3 [item]: 'xyz': not a source id or subId (hexadecimal digits)
bid_rules row 3 [bid]: 0: must be more than 0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pycountry

from ... import spec
from ...errors import WorkbookProblem
from ...frames.schemas import SCHEMAS
from ...stats.countries import code_advice, suggest_language
from . import layout
from .layout import SHEETS

COUNTRY_CODES: frozenset[str] = frozenset(c.alpha_2 for c in pycountry.countries)
_SOURCE_ID = r"^[1-9][0-9]{0,18}$"
_HEX = r"^[0-9a-fA-F]{1,64}$"
_MAX_SOURCE = str(spec.MAX_SOURCE_ID)
#: Row numbers of a table read from several sheets: a row of the k-th sheet (from 0) is
#: numbered ``k * PART_STRIDE + its Excel row``.
PART_STRIDE = 2**32


@dataclass
class Context:
    """What the checks of one sheet may know beyond the sheet.

    ``base`` holds the exported tables (empty without hidden state); ``formats`` maps a
    campaign id to its ad format; ``campaign_ids`` are the exported campaigns (None when
    unknown); ``refs`` the account's dictionaries (may be empty).
    """

    base: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    formats: Mapping[int, str] = field(default_factory=dict)
    campaign_ids: frozenset[int] | None = None
    refs: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    _ids: dict[tuple[str | None, str | None], frozenset[str] | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    def ref_ids(self, kind: spec.TargetKind, ad_format: str | None = None) -> frozenset[str] | None:
        """Known ids (as text) of the dictionary naming ``kind``'s ids (its ``labels``; the
        group of ``ad_format`` in it when it is grouped ``by_format``), if the workbook has
        it; None when the kind has no dictionary or the workbook lacks it."""
        group = kind.label_group(ad_format) if kind.by_format and ad_format else None
        key = (kind.labels, group)
        if key not in self._ids:
            df = self.labels(kind, ad_format)
            self._ids[key] = (
                None if df is None else frozenset(str(int(i)) for i in df["id"].dropna())
            )
        return self._ids[key]

    def labels(self, kind: spec.TargetKind, ad_format: str | None = None) -> pd.DataFrame | None:
        """The entries of the dictionary naming ``kind``'s ids, for a campaign of
        ``ad_format`` (needed when the dictionary is grouped by format)."""
        df = self.refs.get(kind.labels) if kind.labels is not None else None
        if df is None or df.empty:
            return None
        if not kind.by_format:
            return df
        if ad_format is None:
            return None
        return df[df["ad_format"].astype(object) == kind.label_group(ad_format)]


def key_text(df: pd.DataFrame, key: Sequence[str]) -> pa.Array:
    """Each row's key as one string (hashable in pyarrow); a missing cell is its own mark.

    >>> frame_ = pd.DataFrame({"a": pd.array([1, None], dtype="Int64"), "b": ["x", "y"]})
    >>> key_text(frame_, ["a", "b"]).to_pylist()
    ['1\\x1fx', '\\x00\\x1fy']
    """
    parts = []
    for col in key:
        series = df[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object).where(series.notna(), None)
        arr = pa.array(
            series.array if isinstance(series.dtype, pd.StringDtype) else series, from_pandas=True
        )
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        arr = pc.cast(arr, pa.large_string())
        parts.append(pc.fill_null(arr, pa.scalar("\x00", pa.large_string())))
    return pc.binary_join_element_wise(*parts, pa.scalar("\x1f", pa.large_string()))


def key_matches(df: pd.DataFrame, base: pd.DataFrame, key: Sequence[str]) -> np.ndarray:
    """Rows of ``df`` whose key is in ``base`` (keys compared as text, missing = missing)."""
    if df.empty or base.empty:
        return np.zeros(len(df), dtype=bool)
    found = pc.is_in(key_text(df, key), value_set=key_text(base, key))
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)


class _Problems:
    """Collects problems of one sheet; values are the cells as read (or, without them, the
    converted values)."""

    def __init__(
        self,
        sheet: str,
        rows: Sequence[int],
        raw: Mapping[str, Sequence[Any]],
        df: pd.DataFrame,
        fresh: np.ndarray,
        parts: Sequence[str] | None = None,
    ) -> None:
        self.sheet = sheet
        self.parts = list(parts) if parts else [sheet]
        self.rows = np.asarray(rows)
        self.raw = raw
        self.df = df
        self.fresh = fresh  # rows whose key was not exported: their key values are checked
        self.found: list[WorkbookProblem] = []

    def add(self, where: Any, column: str, message: str, values: Any = None) -> None:
        """A problem at each row where ``where`` (a boolean mask or positions) holds."""
        positions = np.flatnonzero(np.asarray(where, dtype=bool)) if _is_mask(where) else where
        for pos in positions:
            pos = int(pos)
            if values is not None:
                value = values[pos]
            elif column in self.raw:
                value = self.raw[column][pos]
            else:
                value = self.df[column].iloc[pos] if column in self.df else None
            if isinstance(value, str) and not value:
                value = None
            sheet, row = self.place(int(self.rows[pos]))
            self.found.append(WorkbookProblem(sheet, row, column, _cell_value(value), message))

    def place(self, row: int) -> tuple[str, int]:
        """The sheet and Excel row of a row number (see :data:`PART_STRIDE`)."""
        part, excel_row = divmod(row, PART_STRIDE)
        return self.parts[min(part, len(self.parts) - 1)], excel_row

    def where(self, row: int, seen_from: int) -> str:
        """``row 5``, or ``lists (2) row 5`` when it is on another sheet than ``seen_from``."""
        sheet, excel_row = self.place(row)
        return (
            f"row {excel_row}" if sheet == self.place(seen_from)[0] else f"{sheet} row {excel_row}"
        )


def _is_mask(where: Any) -> bool:
    return isinstance(where, (pd.Series, np.ndarray)) and np.asarray(where).dtype == bool


def _cell_value(value: Any) -> Any:
    """A cell's value as a problem shows it: Python, missing as None, whole floats as ints."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # readers give every number as a float
    return value


def _mask(series: pd.Series) -> np.ndarray:
    return np.asarray(series.fillna(False), dtype=bool)


def _text(series: pd.Series) -> pd.Series:
    return series.astype(object).where(series.notna(), None)


# --------------------------------------------------------------------------- checks


def check_sheet(
    table: str,
    df: pd.DataFrame,
    rows: Sequence[int],
    raw: Mapping[str, Sequence[Any]],
    ctx: Context,
    present: Iterable[str] | None = None,
    parts: Sequence[str] | None = None,
) -> list[WorkbookProblem]:
    """Problems of the sheet of ``table`` (``df`` with its declared columns, codes as text;
    ``rows`` the Excel row of each row; ``raw`` the cells as read, by column; ``present``
    the columns the sheet has, default all; ``parts`` the sheets a long table was read from,
    whose rows are numbered as :data:`PART_STRIDE` says)."""
    sheet = SHEETS[table]
    cols = set(df.columns) if present is None else set(present)
    fresh = np.ones(len(df), dtype=bool)
    if table in ctx.base and set(sheet.key) <= cols:
        fresh = ~key_matches(df, ctx.base[table], list(sheet.key))
    out = _Problems(table, rows, raw, df, fresh, parts)
    for col in sheet.required:
        if col in cols:
            out.add(_mask(df[col].isna()) & ~_bad_cells(df, col, raw), col, "empty: required")
    for col in sheet.editable:  # read-only codes are compared with the exported state
        dtype = SCHEMAS[table][col]
        if col in cols and isinstance(dtype, pd.CategoricalDtype):
            codes = list(dtype.categories)
            bad = _mask(df[col].notna() & ~df[col].isin(codes))
            out.add(bad, col, f"unknown {col}; one of: {', '.join(codes)}")
    _CHECKS[table](df, cols, out, ctx)
    if "campaign_id" in cols and ctx.campaign_ids is not None:
        bad = _mask(df["campaign_id"].notna() & ~df["campaign_id"].isin(ctx.campaign_ids))
        out.add(bad, "campaign_id", "not one of the exported campaigns")
    _duplicates(table, df, cols, out)
    if table in ctx.base:
        _read_only(table, df, cols, out, ctx.base[table])
    return out.found


def _bad_cells(df: pd.DataFrame, col: str, raw: Mapping[str, Sequence[Any]]) -> np.ndarray:
    """Cells that are NA after conversion but were not empty (reported as unreadable)."""
    values = raw.get(col)
    if values is None:
        return np.zeros(len(df), dtype=bool)
    na = _mask(df[col].isna())
    bad = np.zeros(len(df), dtype=bool)
    for pos in np.flatnonzero(na):
        v = values[pos]
        bad[pos] = not (v is None or (isinstance(v, str) and not v.strip()))
    return bad


def _positive(df: pd.DataFrame, cols: set[str], out: _Problems, col: str) -> None:
    if col in cols:
        out.add(_mask(df[col].notna() & ~(df[col] > 0)), col, "must be more than 0")


def _bid(df: pd.DataFrame, cols: set[str], out: _Problems, table: str, ctx: Context) -> None:
    """A bid is more than 0, and at most :data:`~toolkit.bulk.workbook.layout.MAX_BID`
    unless it is the exported bid of the row."""
    _positive(df, cols, out, "bid")
    if "bid" not in cols:
        return
    high = _mask(df["bid"].notna() & (df["bid"] > layout.MAX_BID)).copy()
    key = list(SHEETS[table].key)
    if high.any() and table in ctx.base and set(key) <= cols:
        base = ctx.base[table]
        exported = dict(zip(key_text(base, key).to_pylist(), base["bid"].tolist(), strict=True))
        where = np.flatnonzero(high)
        keys = key_text(df.iloc[where], key).to_pylist()
        bids = df["bid"].iloc[where].tolist()
        for pos, k, bid in zip(where, keys, bids, strict=True):
            high[pos] = exported.get(k) != bid
    out.add(
        high,
        "bid",
        f"more than {layout.MAX_BID:,.0f} USD, the highest bid a workbook takes (a typo?)",
    )


def _not_negative(df: pd.DataFrame, cols: set[str], out: _Problems, col: str) -> None:
    if col in cols:
        out.add(_mask(df[col].notna() & (df[col] < 0)), col, "must not be negative")


def _formats(df: pd.DataFrame, ctx: Context) -> pd.Series:
    if "campaign_id" not in df:
        return pd.Series([None] * len(df), dtype=object)
    return (
        df["campaign_id"]
        .astype(object)
        .map(lambda c: None if c is None or c is pd.NA else ctx.formats.get(int(c)))
    )


def _campaigns(df: pd.DataFrame, cols: set[str], out: _Problems, ctx: Context) -> None:
    _not_negative(df, cols, out, "frequency_capping")
    fmt = df["ad_format"].astype(object) if "ad_format" in cols else None
    if fmt is None and "id" in cols:
        fmt = df["id"].astype(object).map(lambda c: ctx.formats.get(int(c)), na_action="ignore")
    base = ctx.base.get("campaigns")
    exported = None
    if base is not None and "id" in cols:
        exported = base.dropna(subset=["id"]).drop_duplicates("id").set_index("id")
    for lim in spec.LIMITS.values():
        if lim.field not in cols:
            continue
        _not_negative(df, cols, out, lim.field)
        if fmt is None:
            continue
        bad = _mask(df[lim.field].notna()) & _mask(fmt.notna() & ~fmt.isin(lim.formats))
        if exported is not None and bad.any():  # only a value the user set is refused
            bad &= ~_same(df[lim.field], df["id"].map(exported[lim.field]))
        allowed = ", ".join(sorted(lim.formats))
        out.add(bad, lim.field, f"{lim.field} is only for {allowed} campaigns")
    if "id" in cols and "campaigns" in ctx.base:
        known = ctx.base["campaigns"]["id"]
        out.add(
            _mask(df["id"].notna() & ~df["id"].isin(known)),
            "id",
            "not an exported campaign (campaigns cannot be created here)",
        )


def _countries(df: pd.DataFrame, cols: set[str], out: _Problems, ctx: Context) -> None:
    if "country" in cols:
        codes = df["country"]
        bad = _mask(codes.notna() & ~codes.isin(COUNTRY_CODES)) & out.fresh
        cells = out.raw.get("country", codes.tolist())
        for pos in np.flatnonzero(bad):  # what it probably meant: UK -> GB
            out.add([pos], "country", code_advice(str(cells[pos]).strip(), "country"))
    _bid(df, cols, out, "countries", ctx)


def _targets(df: pd.DataFrame, cols: set[str], out: _Problems, ctx: Context) -> None:
    if not {"kind", "value"} <= cols:
        return
    formats = _formats(df, ctx)
    kinds = _text(df["kind"])
    values = _text(df["value"])
    list_types = _text(df["list_type"]) if "list_type" in cols else [None] * len(df)
    for pos, (kind_name, value, list_type, fmt) in enumerate(
        zip(kinds, values, list_types, formats, strict=True)
    ):
        kind = item_kind(kind_name)
        if kind is None or not out.fresh[pos]:  # exported targets are taken as they are
            continue
        if fmt is not None and not kind.allowed_for(fmt):
            allowed = ", ".join(sorted(kind.formats))
            out.add(
                [pos], "kind", f"{kind_name} is not allowed for {fmt} campaigns (only {allowed})"
            )
        if list_type is not None and not kind.typed:
            out.add([pos], "list_type", f"list_type is only for {layout.typed_kinds()}")
        if value is None:
            continue
        message = _target_value_problem(kind, value, fmt, ctx)
        if message:
            out.add([pos], "value", message)


def _target_value_problem(
    kind: spec.TargetKind, value: str, fmt: str | None, ctx: Context
) -> str | None:
    if kind.values is not None:
        if value not in kind.values:
            return f"unknown {kind.column}; one of: {', '.join(kind.values)}"
        return None
    if kind.syntax is not None:
        return None if kind.syntax(value) else f"not {_a(kind.help or kind.column)}"
    if not kind.stored_as_int:
        return None
    if not (value.isascii() and value.isdigit() and value[0] != "0"):
        return f"not a {kind.column} id (a positive integer)" + _code_hint(kind, value, ctx)
    known = ctx.ref_ids(kind, fmt)
    if known is not None and value not in known:
        return f"unknown {kind.column} id"
    return None


def _code_hint(kind: spec.TargetKind, value: str, ctx: Context) -> str:
    """For a kind shown as ids but sent as codes (``language``): the id of the code ``value``
    probably means (``en``, ``English`` -> ``; did you mean 41 (en, English)?``)."""
    if not kind.sent_as_code:
        return ""
    code = suggest_language(value)
    if code is None:
        return ""
    df = ctx.labels(kind)
    found = None if df is None or "code" not in df else df[df["code"].astype(object) == code]
    if found is None or found.empty:
        return f"; did you mean the {kind.column} {code}? write its id from the dictionary"
    return f"; did you mean {int(found['id'].iloc[0])} ({code}, {found['name'].iloc[0]})?"


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: ``an IP address``, ``a domain name``."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def item_kind(column: Any) -> spec.TargetKind | None:
    """The kind of the ``targets`` table spelled ``column`` (None for any other text)."""
    if not isinstance(column, str):
        return None
    kind = spec.kind_of_column(column)
    return None if kind is None or kind.bids else kind


def _lists(df: pd.DataFrame, cols: set[str], out: _Problems, ctx: Context) -> None:
    if not {"list", "item"} <= cols:
        return
    lists = df["list"].astype(object)
    item = df["item"]
    source = _mask(lists.isin([n for n, lk in spec.LISTS.items() if lk.entity == "source"]))
    subid = _mask(lists.isin([n for n, lk in spec.LISTS.items() if lk.entity == "subid"]))
    present = _mask(item.notna()) & out.fresh
    out.add(source & present & ~_source_ids(item), "item", "not a source id (a positive integer)")
    hexed = _mask(item.str.fullmatch(_HEX))
    out.add(subid & present & ~hexed, "item", "not a subId (1 to 64 hexadecimal digits)")


def _source_ids(item: pd.Series) -> np.ndarray:
    ok = _mask(item.str.fullmatch(_SOURCE_ID))
    long = ok & _mask(item.str.len() == len(_MAX_SOURCE))
    if long.any():
        ok[long] = [v <= _MAX_SOURCE for v in item[long]]
    return ok


def _bid_rules(df: pd.DataFrame, cols: set[str], out: _Problems, ctx: Context) -> None:
    if "item" in cols:
        item = df["item"]
        bad = _mask(item.notna()) & ~_mask(item.str.fullmatch(_HEX)) & out.fresh
        out.add(bad, "item", "not a source id or subId (hexadecimal digits)")
    _bid(df, cols, out, "bid_rules", ctx)


def _cpa_rules(df: pd.DataFrame, cols: set[str], out: _Problems, ctx: Context) -> None:
    formats = _formats(df, ctx)
    for col, limits in (("type", spec.CPA_TYPE_FORMATS), ("lead_type", spec.CPA_LEAD_TYPE_FORMATS)):
        if col not in cols:
            continue
        values = _text(df[col])
        for value, allowed in limits.items():
            bad = _mask(values.eq(value) & formats.notna() & ~formats.isin(allowed))
            out.add(bad, col, f"{value} is only for {', '.join(sorted(allowed))} campaigns")
    if "id" in cols and "cpa_rules" in ctx.base:
        known = ctx.base["cpa_rules"]["id"]
        out.add(
            _mask(df["id"].notna() & ~df["id"].isin(known)),
            "id",
            "not an exported rule (leave id empty for a new rule)",
        )


def _creatives(df: pd.DataFrame, cols: set[str], out: _Problems, ctx: Context) -> None:
    for col, limit in (("title", spec.CREATIVE_TITLE_MAX), ("text", spec.CREATIVE_TEXT_MAX)):
        if col in cols:
            lengths = df[col].str.len()
            out.add(_mask(lengths > limit), col, f"longer than {limit} characters")
    if "id" in cols and "creatives" in ctx.base:
        known = ctx.base["creatives"]["id"]
        out.add(
            _mask(df["id"].notna() & ~df["id"].isin(known)),
            "id",
            "not an exported creative (creatives cannot be created here)",
        )


_CHECKS = {
    "campaigns": _campaigns,
    "countries": _countries,
    "targets": _targets,
    "lists": _lists,
    "bid_rules": _bid_rules,
    "cpa_rules": _cpa_rules,
    "creatives": _creatives,
}


def _key_frame(df: pd.DataFrame, key: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: _text(df[c]) for c in key}, index=df.index)


def _duplicates(table: str, df: pd.DataFrame, cols: set[str], out: _Problems) -> None:
    key = list(SHEETS[table].key)
    if not set(key) <= cols or df.empty:
        return
    keys = _key_frame(df, key)
    usable = _mask(keys.notna().all(axis=1)) if table == "cpa_rules" else np.ones(len(df), bool)
    if table != "cpa_rules":  # rows lacking a key cell are reported as empty cells
        usable &= _mask(keys[[c for c in key if c in SHEETS[table].required]].notna().all(axis=1))
    keys = keys[usable]
    dup = keys.duplicated(keep="first")
    if not dup.any():
        return
    first = keys.groupby(list(keys.columns), dropna=False, sort=False).ngroup()
    first_row = pd.Series(out.rows[usable]).groupby(first.to_numpy()).transform("min")
    where = np.flatnonzero(usable)[dup.to_numpy()]
    for pos, row in zip(where, first_row[dup.to_numpy()], strict=True):
        shown = ", ".join(f"{c}={keys.loc[pos, c]}" for c in key)
        same = out.where(int(row), int(out.rows[pos]))
        out.add([pos], key[-1], f"duplicate row ({shown}): same as {same}")


def _same(a: pd.Series, b: pd.Series) -> np.ndarray:
    both_na = _mask(a.isna()) & _mask(b.isna())
    if pd.api.types.is_float_dtype(a.dtype) and pd.api.types.is_float_dtype(b.dtype):
        close = np.isclose(a.to_numpy(float), b.to_numpy(float), rtol=1e-9, atol=0.0)
        return both_na | close
    equal = _mask((_text(a) == _text(b)) & a.notna() & b.notna())
    return both_na | equal


def _read_only(
    table: str, df: pd.DataFrame, cols: set[str], out: _Problems, base: pd.DataFrame
) -> None:
    sheet = SHEETS[table]
    checked = [c for c in sheet.read_only if c in cols and c not in sheet.key]
    key = list(sheet.key)
    if not checked or not set(key) <= cols or base.empty or df.empty:
        return
    left = _key_frame(df, key)
    left["_pos"] = np.arange(len(df))
    right = _key_frame(base, key)
    right["_base"] = np.arange(len(base))
    right = right.drop_duplicates(key)
    matched = left.dropna(subset=[c for c in key if c in sheet.required or c == "id"])
    matched = matched.merge(right, on=key, how="inner")
    if matched.empty:
        return
    pos = matched["_pos"].to_numpy()
    at = matched["_base"].to_numpy()
    for col in checked:
        mine = df[col].iloc[pos].reset_index(drop=True)
        theirs = base[col].iloc[at].reset_index(drop=True)
        differs = ~_same(mine, theirs)
        if differs.any():
            for p, was in zip(pos[differs], theirs[differs], strict=True):
                shown = "empty" if _cell_value(was) is None else repr(_cell_value(was))
                out.add([int(p)], col, f"read-only column changed (exported: {shown})")


__all__ = ["COUNTRY_CODES", "PART_STRIDE", "Context", "check_sheet", "item_kind"]
