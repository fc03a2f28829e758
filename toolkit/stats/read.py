"""Tracker exports (CSV, XLSX, Parquet, or a DataFrame) -> the typed statistics frame.

Every value is checked before anything is returned: a bad row is reported with its line
(:class:`toolkit.errors.StatsError`), and nothing is half read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StatsError, StatsProblem
from .layouts import REQUIRED, norm, resolve
from .schema import AMOUNTS, COUNTRY, COUNTS, LEVELS, empty_stats, stats_frame

#: CSV files past this size are parsed by DuckDB's multi-threaded reader instead of pandas.
LARGE_CSV_BYTES = 256 * 1024 * 1024

#: At most this many problems are collected (the message shows the first ``SHOWN``).
MAX_PROBLEMS = 10_000

#: Level names as files spell them -> the frame's level.
LEVEL_NAMES = {norm(x): x for x in LEVELS} | {
    "sub id": "subid",
    "subids": "subid",
    "sources": "source",
    "geo": COUNTRY,
}


def read_stats(
    path_or_frame: str | os.PathLike[str] | pd.DataFrame,
    columns: Mapping[str, str] | None = None,
    *,
    layout: str | None = None,
) -> pd.DataFrame:
    """Read a tracker's export into the statistics frame (``toolkit.stats.schema.STATS``).

    ``path_or_frame``: a ``.csv`` (``,``, ``;`` or tab separated), ``.xlsx`` (the first sheet)
    or ``.parquet`` file, or a DataFrame with the export's header as its columns.
    ``layout``: one of :data:`toolkit.stats.layouts.LAYOUTS`, detected from the header when
    None. ``columns``: ``{header: name}`` overriding the layout (``{"Zone": "source"}``).

    A row with several key columns (source, subId, country) gives one row per level it
    names. Empty counts and money are 0; a row whose every cell is empty is skipped.
    Raises :class:`toolkit.errors.StatsError` listing every bad value with its line.
    """
    where = None if isinstance(path_or_frame, pd.DataFrame) else str(path_or_frame)
    raw = path_or_frame if where is None else _load(Path(where))
    return parse(raw, columns, layout=layout, where=where)


def _load(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return pd.read_parquet(path)
    if suffix in (".xlsx", ".xlsm", ".xls", ".ods"):
        return _read_sheet(path)
    if path.stat().st_size > LARGE_CSV_BYTES:
        return _read_csv_duckdb(path)
    sep = _separator(path)
    return pd.read_csv(
        path,
        sep=sep,
        dtype=str,
        keep_default_na=False,
        skip_blank_lines=False,
        encoding="utf-8-sig",
    )


def _separator(path: Path) -> str:
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        head = f.readline()
    return max((",", ";", "\t"), key=head.count)


def _read_sheet(path: Path) -> pd.DataFrame:
    from python_calamine import CalamineWorkbook

    rows = CalamineWorkbook.from_path(str(path)).get_sheet_by_index(0).to_python()
    if not rows:
        return pd.DataFrame()
    header = [str(h) for h in rows[0]]
    body = [list(r) + [""] * (len(header) - len(r)) for r in rows[1:]]
    return pd.DataFrame(body, columns=header, dtype=object)


def _read_csv_duckdb(path: Path) -> pd.DataFrame:
    from .engine import connect

    with connect() as con:
        rel = con.read_csv(str(path), header=True, all_varchar=True)
        return rel.df()


# --------------------------------------------------------------------------- parsing


class _Check:
    """Problems of one read, each with the file's line (header = line 1)."""

    def __init__(self, n: int) -> None:
        self.lines = np.arange(n) + 2
        self.problems: list[StatsProblem] = []
        self.bad = np.zeros(n, dtype=bool)

    def flag(self, mask: Any, header: str, raw: pd.Series, message: str) -> None:
        mask = np.asarray(mask, dtype=bool)
        self.bad |= mask
        for i in np.flatnonzero(mask)[: MAX_PROBLEMS - len(self.problems)]:
            self.problems.append(StatsProblem(int(self.lines[i]), header, raw.iloc[i], message))


def _empty(raw: pd.Series) -> np.ndarray:
    text = raw.astype(object).where(raw.notna(), "").astype(str).str.strip()
    return (text == "").to_numpy()


def _numbers(raw: pd.Series) -> pd.Series:
    if raw.dtype.kind in "if":
        return raw.astype("float64")
    text = raw.astype(object).where(raw.notna(), "").astype(str).str.strip()
    text = text.str.replace(r"^\$", "", regex=True)
    return pd.to_numeric(text.where(text != "", "0"), errors="coerce")


def parse(
    raw: pd.DataFrame,
    columns: Mapping[str, str] | None = None,
    *,
    layout: str | None = None,
    where: str | None = None,
) -> pd.DataFrame:
    """The statistics frame from an export already read as a DataFrame (see
    :func:`read_stats`)."""
    raw = raw.reset_index(drop=True)
    layout, mapping = resolve(raw.columns, columns, layout)
    missing = _missing(raw.columns, columns, mapping, layout)
    if missing:
        raise StatsError(missing, where)
    blank = np.all([_empty(raw[c]) for c in raw.columns], axis=0) if len(raw.columns) else []
    raw = raw[~np.asarray(blank, dtype=bool)] if len(raw) else raw
    check = _Check(len(raw))
    check.lines = raw.index.to_numpy() + 2
    raw = raw.reset_index(drop=True)
    values = _values(raw, mapping, check)
    pieces = _levels(raw, mapping, check)
    if check.problems:
        raise StatsError(check.problems, where)
    if not pieces:
        return empty_stats()
    out = [
        stats_frame(
            {**{c: v[rows] for c, v in values.items()}, "level": [lv] * len(rows), "key": keys}
        )
        for lv, rows, keys in pieces
    ]
    return pd.concat(out, ignore_index=True) if len(out) > 1 else out[0]


def _missing(
    headers: Any, columns: Mapping[str, str] | None, mapping: dict[str, str], layout: str
) -> list[StatsProblem]:
    seen = {norm(h) for h in headers}
    problems = [
        StatsProblem(None, h, None, f"no such column (columns= maps it to {n!r})")
        for h, n in (columns or {}).items()
        if norm(h) not in seen
    ]
    for name in REQUIRED:
        if name not in mapping:
            problems.append(StatsProblem(None, name, None, f"missing column ({layout} layout)"))
    has_key = any(lv in mapping for lv in LEVELS) or {"level", "key"} <= set(mapping)
    if not has_key:
        problems.append(
            StatsProblem(
                None,
                "key",
                None,
                f"no key column ({layout} layout): one of {', '.join(LEVELS)}, or level and key",
            )
        )
    return problems


def _values(raw: pd.DataFrame, mapping: dict[str, str], check: _Check) -> dict[str, Any]:
    out: dict[str, Any] = {}
    h = mapping["date"]
    dates = pd.to_datetime(raw[h], utc=True, errors="coerce", format="mixed")
    check.flag(dates.isna().to_numpy(), h, raw[h], "not a date")
    out["date"] = dates.to_numpy()
    h = mapping["campaign_id"]
    ids = _numbers(raw[h])
    bad = ids.isna() | (ids <= 0) | (ids % 1 != 0) | pd.Series(_empty(raw[h]))
    check.flag(bad.to_numpy(), h, raw[h], "not a campaign id (a positive whole number)")
    out["campaign_id"] = ids.where(~bad, 1).astype("int64").to_numpy()
    for name in COUNTS + AMOUNTS:
        h = mapping.get(name)
        if h is None:
            out[name] = np.zeros(len(raw), dtype="int64" if name in COUNTS else "float64")
            continue
        nums = _numbers(raw[h])
        bad = nums.isna() | np.isinf(nums)
        if name != "revenue":
            bad |= nums < 0
        message = "not a number" if name != "revenue" else "not a number"
        if name in COUNTS:
            bad |= nums % 1 != 0
            message = "not a count (a whole number >= 0)"
        elif name != "revenue":
            message = "not an amount (a number >= 0)"
        check.flag(bad.to_numpy(), h, raw[h], message)
        nums = nums.where(~bad, 0)
        out[name] = nums.astype("int64" if name in COUNTS else "float64").to_numpy()
    return out


def _levels(
    raw: pd.DataFrame, mapping: dict[str, str], check: _Check
) -> list[tuple[str, np.ndarray, list[str]]]:
    """``(level, row positions, keys)`` for each level the file has."""
    pieces = []
    if "level" in mapping and "key" in mapping:
        h = mapping["level"]
        names = raw[h].astype(object).where(raw[h].notna(), "").astype(str).map(norm)
        levels = names.map(LEVEL_NAMES)
        check.flag(levels.isna().to_numpy(), h, raw[h], f"not a level ({', '.join(LEVELS)})")
        hk = mapping["key"]
        check.flag(_empty(raw[hk]), hk, raw[hk], "empty key")
        keys = raw[hk].astype(str).str.strip()
        for lv in LEVELS:
            rows = np.flatnonzero((levels == lv).to_numpy())
            if len(rows):
                pieces.append((lv, rows, keys.iloc[rows].tolist()))
    for lv in LEVELS:
        h = mapping.get(lv)
        if h is None:
            continue
        rows = np.flatnonzero(~_empty(raw[h]))
        if len(rows):
            pieces.append((lv, rows, raw[h].iloc[rows].astype(str).str.strip().tolist()))
    return pieces


__all__ = ["LARGE_CSV_BYTES", "parse", "read_stats"]
