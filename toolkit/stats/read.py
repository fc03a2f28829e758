"""Tracker exports (CSV, XLSX, Parquet, or a DataFrame) -> the typed statistics frame.

Every value is checked before anything is returned: a bad row is reported with its line
(:class:`toolkit.errors.StatsError`), and nothing is half read.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StatsError, StatsProblem
from .campaigns import CampaignMap, load_map
from .files import as_utf8, csv_form, file_kind, read_text, refuse
from .layouts import norm
from .schema import AMOUNTS, COUNTRY, COUNTS, LEVELS, empty_stats, stats_frame
from .shape import announce, prepare_frame
from .totals import empty_cells, trimmed
from .values import check_options, frame_values

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
    campaign_map: CampaignMap | None = None,
    date_format: str | None = None,
    decimal: str | None = None,
) -> pd.DataFrame:
    """Read a tracker's export into the statistics frame (``toolkit.stats.schema.STATS``).

    ``path_or_frame``: a ``.csv`` (``,``, ``;`` or tab separated; UTF-8, UTF-16 or a Windows
    code page), ``.xlsx`` (the first sheet) or ``.parquet`` file, or a DataFrame with the
    export's header as its columns. ``layout``: one of :data:`toolkit.stats.layouts.LAYOUTS`,
    detected from the header when None. ``columns``: ``{header: name}`` overriding the
    layout (``{"Zone": "source"}``). ``campaign_map``: ``{tracker campaign id: network
    campaign id}``, or the path of a CSV/JSON file of two columns (see
    :mod:`toolkit.stats.campaigns`).

    A tracker's totals row is left out: ``df.attrs["skipped"]`` lists ``(line, reason)``
    and a :class:`toolkit.errors.StatsNote` warning says so.

    A row with several key columns (source, subId, country) gives one row per level it
    names. Empty counts and money are 0; a row whose every cell is empty is skipped.
    Raises :class:`toolkit.errors.StatsError` listing every bad value with its line.

    Values are read as trackers write them (:mod:`toolkit.stats.values`): ``$1,237.02``,
    ``€12,50``, ``($15.00)``, ``05/01/2026``. Where the file cannot tell, it is refused:
    ``date_format`` (a strptime format, ``"%d/%m/%Y"``) gives the dates' order and
    ``decimal`` (``"."`` or ``","``) the decimal separator.
    """
    where = None if isinstance(path_or_frame, pd.DataFrame) else str(path_or_frame)
    raw = path_or_frame if where is None else read_cells(Path(where))
    return parse(
        raw,
        columns,
        layout=layout,
        where=where,
        campaign_map=campaign_map,
        date_format=date_format,
        decimal=decimal,
    )


def read_cells(path: Path) -> pd.DataFrame:
    """An export's cells as its file holds them (a CSV's as text; the header as the columns),
    nothing checked yet: what :func:`read_stats` reads before it checks (a file it cannot
    read is refused here), for a caller that needs a column the statistics frame leaves out
    (``account``)."""
    kind = file_kind(path)
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        if kind == "sheet":
            return _read_sheet(path)
        encoding, sep = csv_form(path)
        if path.stat().st_size > LARGE_CSV_BYTES:
            return _read_csv_duckdb(path, encoding, sep)
        return pd.read_csv(
            io.StringIO(read_text(path, encoding)),
            sep=sep,
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=False,
        )
    except StatsError:
        raise
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - the readers' errors (calamine, pyarrow, pandas)
        raise refuse(path, f"cannot be read as {kind.upper()}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _read_sheet(path: Path) -> pd.DataFrame:
    from python_calamine import CalamineWorkbook

    from .files import unique
    from .workbooks import check_book, check_sheet

    check_book(path)  # a zip bomb, a part stored twice: refused before calamine opens it
    with CalamineWorkbook.from_path(str(path)) as book:
        check_sheet(path, book.sheet_names[0])  # its cells' references, order, shared strings
        rows = book.get_sheet_by_index(0).to_python()
    if not rows:
        return pd.DataFrame()
    header = unique([str(h) for h in rows[0]])  # cells past the header: "Unnamed: 9", as CSV
    body = [list(r) + [""] * (len(header) - len(r)) for r in rows[1:]]
    return pd.DataFrame(body, columns=header, dtype=object)


def _read_csv_duckdb(path: Path, encoding: str, sep: str) -> pd.DataFrame:
    from .engine import connect

    with connect() as con, as_utf8(path, encoding) as utf8:
        rel = con.read_csv(str(utf8), header=True, all_varchar=True, sep=sep, quotechar='"')
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


def parse(
    raw: pd.DataFrame,
    columns: Mapping[str, str] | None = None,
    *,
    layout: str | None = None,
    where: str | None = None,
    campaign_map: CampaignMap | None = None,
    date_format: str | None = None,
    decimal: str | None = None,
) -> pd.DataFrame:
    """The statistics frame from an export already read as a DataFrame (see
    :func:`read_stats`)."""
    raw = raw.reset_index(drop=True)
    try:
        refuse_several_accounts(raw, where)
        cmap = load_map(campaign_map)
        raw, mapping, skipped = prepare_frame(raw, columns, layout, cmap, where)
        check_options(date_format, decimal)
        parsed = _parsed(raw, mapping, where, date_format=date_format, decimal=decimal)
    except UnicodeEncodeError:  # text no file holds: a frame made in Python
        raise StatsError(_not_text(raw), where) from None
    return announce(parsed, skipped, where)


def _not_text(raw: pd.DataFrame) -> list[StatsProblem]:
    """The cells of a frame that hold a lone surrogate (U+D800 to U+DFFF): text that no
    file can hold, which the readers cannot encode."""
    problems = []
    for header in raw.columns:
        for i, value in enumerate(raw[header].tolist()):
            if isinstance(value, str) and not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    shown = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
                    message = "not text: a lone surrogate (U+D800 to U+DFFF, shown as U+FFFD)"
                    problems.append(StatsProblem(i + 2, str(header), shown, message))
                    if len(problems) >= MAX_PROBLEMS:
                        return problems
    return problems


def refuse_several_accounts(raw: pd.DataFrame, where: str | None) -> None:
    """An export whose ``account`` column names several accounts is refused: read for one
    account, every account's rows would count as that account's."""
    labels = [c for c in raw.columns if str(c).strip().lower() == "account"]
    if labels:
        values = raw[labels[0]].astype(str).str.strip()
        names = sorted(set(values[values != ""]) - {"nan", "None", "<NA>"})
        several_accounts(str(labels[0]), names, where)


def several_accounts(label: str, names: Sequence[str], where: str | None) -> None:
    """Raise :class:`StatsError` when ``names`` (an ``account`` column's values) are more
    than one account."""
    if len(names) <= 1:
        return
    shown = ", ".join(names[:5]) + (" and more" if len(names) > 5 else "")
    message = (
        f"the {label!r} column names {'more than 5' if len(names) > 5 else len(names)}"
        f" accounts ({shown}): read for one account, all their rows would count as its own;"
        " run over the set (--account all, toolkit.rules.evaluate_rules_set, bid_report of"
        " the set) or keep one account's rows"
    )
    raise StatsError([StatsProblem(None, label, None, message)], where)


def _parsed(
    raw: pd.DataFrame,
    mapping: dict[str, str],
    where: str | None,
    *,
    date_format: str | None = None,
    decimal: str | None = None,
) -> pd.DataFrame:
    blank = np.all([empty_cells(raw[c]) for c in raw.columns], axis=0) if len(raw.columns) else []
    raw = raw[~np.asarray(blank, dtype=bool)] if len(raw) else raw
    check = _Check(len(raw))
    check.lines = raw.index.to_numpy() + 2
    raw = raw.reset_index(drop=True)
    values = _values(raw, mapping, check, date_format, decimal)
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


def _values(
    raw: pd.DataFrame,
    mapping: dict[str, str],
    check: _Check,
    date_format: str | None = None,
    decimal: str | None = None,
) -> dict[str, Any]:
    """The frame's values of the rows, by the rules of :mod:`toolkit.stats.values`; the bad
    ones flagged on ``check`` (and 0), the file's problems added to it."""
    out, problems, flags = frame_values(
        raw, mapping, COUNTS + AMOUNTS, date_format=date_format, decimal=decimal
    )
    check.problems.extend(problems)
    for mask, header, message in flags:
        check.flag(mask, header, raw[header], message)
    for name in COUNTS:
        out[name] = out[name].astype("int64")
    return out


def _levels(
    raw: pd.DataFrame, mapping: dict[str, str], check: _Check
) -> list[tuple[str, np.ndarray, list[str]]]:
    """``(level, row positions, keys)`` for each level the file has."""
    pieces = []
    if "level" in mapping and "key" in mapping:
        h = mapping["level"]
        codes, text = trimmed(raw[h])  # each distinct cell named once
        levels = pd.Series(pd.Series(text).map(norm).map(LEVEL_NAMES).to_numpy()[codes])
        check.flag(levels.isna().to_numpy(), h, raw[h], f"not a level ({', '.join(LEVELS)})")
        hk = mapping["key"]
        check.flag(empty_cells(raw[hk]), hk, raw[hk], "empty key")
        keys = raw[hk].astype(str).str.strip()
        for lv in LEVELS:
            rows = np.flatnonzero((levels == lv).to_numpy())
            if len(rows):
                pieces.append((lv, rows, keys.iloc[rows].tolist()))
    for lv in LEVELS:
        h = mapping.get(lv)
        if h is None:
            continue
        rows = np.flatnonzero(~empty_cells(raw[h]))
        if len(rows):
            pieces.append((lv, rows, raw[h].iloc[rows].astype(str).str.strip().tolist()))
    return pieces


__all__ = ["LARGE_CSV_BYTES", "parse", "read_cells", "read_stats"]
