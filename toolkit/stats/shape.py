"""The rows and columns of an export before its values are read, alike for a DataFrame
(:func:`toolkit.stats.read_stats`) and a DuckDB view (``aggregate``, ``window_sums``): the
layout resolved and its columns checked, a grouped report flattened
(:mod:`toolkit.stats.grouped`), totals rows left out (:mod:`toolkit.stats.totals`), and the
tracker's campaign ids turned into the network's (:mod:`toolkit.stats.campaigns`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StatsError, StatsNote, StatsProblem
from . import campaigns, grouped, totals, values_sql
from .layouts import REQUIRED, norm, resolve
from .schema import LEVELS, METRICS

KEY_NAMES = (*LEVELS, "level", "key")
Skipped = list[tuple[int, str]]


def missing_columns(
    headers: Any, columns: Mapping[str, str] | None, mapping: dict[str, str], layout: str
) -> list[StatsProblem]:
    """The problems of a header that lacks a column the layout needs (or that ``columns=``
    names); the tracker's campaign id stands for the network's (a map turns one into the
    other)."""
    seen = {norm(h) for h in headers}
    problems = [
        StatsProblem(None, h, None, f"no such column (columns= maps it to {n!r})")
        for h, n in (columns or {}).items()
        if norm(h) not in seen
    ]
    for name in REQUIRED:
        if name not in mapping and not (name == "campaign_id" and "tracker_campaign" in mapping):
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


def _roles(mapping: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """``(labels, keys, metrics)`` headers for :func:`toolkit.stats.totals.totals_rows`."""
    keys = [mapping[n] for n in ("date", *KEY_NAMES) if n in mapping]
    labels = keys + [mapping[n] for n in ("campaign_id", "tracker_campaign") if n in mapping]
    return labels, keys, [mapping[m] for m in METRICS if m in mapping]


def _campaign(mapping: dict[str, str]) -> tuple[str, bool] | None:
    """The header the network's campaign id comes from, and whether it is the tracker's."""
    if "campaign_id" in mapping:
        return mapping["campaign_id"], False
    if "tracker_campaign" in mapping:
        return mapping["tracker_campaign"], True
    return None


def _refuse(where: str | None, header: str, message: str) -> StatsError:
    return StatsError([StatsProblem(None, header, None, message)], where)


def _grouped(mapping: dict[str, str]) -> tuple[str, str] | None:
    if "group_level" in mapping and "group_name" in mapping:
        return mapping["group_level"], mapping["group_name"]
    return None


# --------------------------------------------------------------------------- DataFrame


def prepare_frame(
    raw: pd.DataFrame,
    columns: Mapping[str, str] | None,
    layout: str | None,
    cmap: dict[str, str] | None,
    where: str | None,
) -> tuple[pd.DataFrame, dict[str, str], Skipped]:
    """``(raw, mapping, skipped)``: the export ready for its values to be read (rows left
    out are emptied in place, so that positions stay lines), the columns' mapping, and the
    ``(line, reason)`` of the totals rows left out."""
    layout, mapping = resolve(raw.columns, columns, layout)
    skipped: Skipped = []
    group = _grouped(mapping)
    if group:
        metrics = _roles(mapping)[2]
        raw, skipped = _skip(raw, totals.totals_rows(raw, list(group), list(group), metrics))
        if not grouped.names_levels(columns):
            raise _refuse(where, group[0], grouped.UNNAMED)
        raw, problems = grouped.flatten(raw, *group)
        if problems:
            raise StatsError(problems, where)
        layout, mapping = resolve(raw.columns, columns, layout)
    missing = missing_columns(raw.columns, columns, mapping, layout)
    if missing:
        raise StatsError(missing, where)
    if not group:
        raw, skipped = _skip(raw, totals.totals_rows(raw, *_roles(mapping)))
    raw, mapping = _network_ids(raw, mapping, layout, cmap, where)
    return raw, mapping, skipped


def _skip(raw: pd.DataFrame, rows: Skipped) -> tuple[pd.DataFrame, Skipped]:
    if not rows:
        return raw, []
    raw = raw.astype(object)
    raw.iloc[[i for i, _ in rows], :] = None
    return raw, [(i + 2, reason) for i, reason in rows]


def _ids(raw: pd.Series) -> pd.Series:
    """Campaign id cells as text (whole numbers of a typed column without ``.0``)."""
    if raw.dtype.kind == "f":
        whole = raw.notna() & (raw % 1 == 0)
        out = raw.astype(object).where(~whole, raw.where(whole, 0).astype("int64"))
        return out.where(raw.notna(), "").astype(str)
    return raw.astype(object).where(raw.notna(), "").astype(str).str.strip()


def _network_ids(
    raw: pd.DataFrame,
    mapping: dict[str, str],
    layout: str,
    cmap: dict[str, str] | None,
    where: str | None,
) -> tuple[pd.DataFrame, dict[str, str]]:
    found = _campaign(mapping)
    if found is None:
        return raw, mapping
    h, tracker = found
    text = _ids(raw[h])
    if cmap is None:
        what = campaigns.looks_like(text[text != ""].unique())
        if what:
            raise _refuse(where, h, campaigns.foreign(what))
        if tracker:
            raise _refuse(where, h, campaigns.own(layout, h))
        return raw, mapping
    mapped = text.map(cmap)
    bad = ((text != "") & mapped.isna()).to_numpy()
    if bad.any():
        problems = [
            StatsProblem(int(i) + 2, h, text.iloc[i], campaigns.missing(text.iloc[i]))
            for i in np.flatnonzero(bad)[:10_000]
        ]
        raise StatsError(problems, where)
    raw = raw.copy()
    raw[h] = mapped.where(text != "", "")
    mapping = {n: c for n, c in mapping.items() if n != "tracker_campaign"}
    return raw, {**mapping, "campaign_id": h}


def announce(frame: pd.DataFrame, skipped: Skipped, where: str | None) -> pd.DataFrame:
    """Put the rows left out on the frame (``frame.attrs["skipped"]``) and warn of them
    (:class:`toolkit.errors.StatsNote`)."""
    frame.attrs["skipped"] = list(skipped)
    if skipped:
        warnings.warn(StatsNote(totals.note(skipped, where)), stacklevel=3)
    return frame


# --------------------------------------------------------------------------- DuckDB


def _q(header: str) -> str:
    return '"' + header.replace('"', '""') + '"'


def prepare_view(
    con: Any,
    headers: Sequence[str],
    columns: Mapping[str, str] | None,
    layout: str | None,
    cmap: dict[str, str] | None,
    where: str | None,
    known: Skipped | None = None,
    defer: bool = False,
) -> tuple[dict[str, str], Skipped | None]:
    """Over the view ``src`` (the file with its row number ``__line``), create the view
    ``raw`` ready for the values to be checked and summed; return the columns' mapping and
    the totals rows left out, as :func:`prepare_frame` does for a DataFrame. ``known``: the
    totals rows of a file checked already (:mod:`toolkit.stats.checked`): they are not
    looked for again, nor are its campaign ids. ``defer``: where a scan of the caller can
    count the totals rows (:func:`totals_reason`; a flat file without a campaign map), none
    is looked for and ``None`` is returned for them: the caller counts them in its own scan,
    and calls this again without ``defer`` when there are some."""
    headers = list(headers)
    layout, mapping = resolve(headers, columns, layout)
    source, skipped = "src", []
    group = _grouped(mapping)
    if group:
        reason = totals.totals_sql(list(group), list(group), _roles(mapping)[2])
        skipped = _blank_view(con, "kept", source, headers, reason)
        if not grouped.names_levels(columns):
            raise _refuse(where, group[0], grouped.UNNAMED)
        source, headers = _flat_view(con, "kept", headers, group, where)
        layout, mapping = resolve(headers, columns, layout)
    missing = missing_columns(headers, columns, mapping, layout)
    if missing:
        raise StatsError(missing, where)
    if not group:
        typed = _typed_columns(con, source)
        reason = totals.totals_sql(*_roles(mapping), typed)
        deferred = defer and known is None and cmap is None
        skipped = _blank_view(con, "kept", source, headers, reason, [] if deferred else known)
        skipped = None if deferred else skipped
        source = "kept"
    cells = {h: _q(h) for h in headers}
    found = _campaign(mapping)
    if found is not None:
        h, tracker = found
        if cmap is None and known is None:
            what = campaigns.looks_like_sql(con, source, h)
            if what:
                raise _refuse(where, h, campaigns.foreign(what))
            if tracker:
                raise _refuse(where, h, campaigns.own(layout, h))
        elif cmap is not None:
            cells[h] = campaigns.mapped_sql(con, source, h, cmap, where, known is None)
            mapping = {n: c for n, c in mapping.items() if n != "tracker_campaign"}
            mapping["campaign_id"] = h
    select = ", ".join(f"{sql} AS {_q(h)}" for h, sql in cells.items())
    joined = cmap is not None and found is not None  # a join may reorder: lines stay lines
    order = " ORDER BY __line" if joined else ""
    con.execute(f"CREATE OR REPLACE TEMP VIEW raw AS SELECT {select} FROM {source}{order}")
    return mapping, skipped


def totals_reason(con: Any, mapping: dict[str, str]) -> str:
    """SQL of a row's totals reason (NULL: not a totals row) over the columns of the view
    ``raw`` of a flat file without a campaign map (:func:`prepare_view` with ``defer``)."""
    return totals.totals_sql(*_roles(mapping), _typed_columns(con, "src"))


def key_totals_reason(con: Any, mapping: dict[str, str]) -> str:
    """:func:`totals_reason`, but of the key columns only (``key`` and a column per level):
    the cells whose every text is a valid value. A "Total" anywhere else (the date, the
    level, the campaign id) or a row of sums without keys fails a value check, so the
    checking scan needs the full reason only when some value failed."""
    labels = [mapping[n] for n in (*LEVELS, "key") if n in mapping]
    return totals.totals_sql(labels, [], [], _typed_columns(con, "src"))


def _typed_columns(con: Any, source: str) -> set[str]:
    """The columns of ``source`` that DuckDB reads as other than text (a Parquet file's
    numbers and dates; a CSV's columns are all text)."""
    rows = con.execute(f"DESCRIBE {source}").fetchall()
    dated = ("DATE", "TIMESTAMP", "TIME")
    return {
        str(h)
        for h, t, *_ in rows
        if values_sql.NUMERIC_TYPES.match(str(t)) or str(t).upper().startswith(dated)
    }


def _blank_view(
    con: Any, name: str, source: str, headers: list[str], reason: str, known: Skipped | None = None
) -> Skipped:
    """Create the view ``name``: ``source`` with the rows whose ``reason`` is not NULL
    emptied (by their line: the reason is found in one scan, not in every later one);
    return their ``(line, reason)``. ``known``: those found by an earlier read."""
    if known is not None:
        rows = [(line - 1, reason) for line, reason in known]
    else:
        rows = _reasons(con, source, reason)
    cols = ", ".join(_q(h) for h in headers)
    if rows:
        lines = ", ".join(str(int(n)) for n, _ in rows)
        skip = f"__line IN ({lines})"
        cols = ", ".join(f"CASE WHEN NOT ({skip}) THEN {_q(h)} END AS {_q(h)}" for h in headers)
    con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT __line, {cols} FROM {source}")
    return [(int(n) + 1, str(r)) for n, r in rows]


def _reasons(con: Any, source: str, reason: str) -> list[tuple[int, str]]:
    """The ``(__line, reason)`` of the rows of ``source`` whose ``reason`` is not NULL."""
    # without the line numbers the scan runs in parallel, and most files have no such row
    found = con.execute(f"SELECT count(*) FROM {source} WHERE ({reason}) IS NOT NULL").fetchone()
    if not found[0]:
        return []
    return con.execute(
        f"SELECT __line, r FROM (SELECT __line, {reason} AS r FROM {source}) "
        "WHERE r IS NOT NULL ORDER BY __line LIMIT 10000"
    ).fetchall()


def _flat_view(
    con: Any, source: str, headers: list[str], group: tuple[str, str], where: str | None
) -> tuple[str, list[str]]:
    level, name = group
    lv = grouped.depth_sql(level)
    filled = " OR ".join(f"COALESCE(TRIM(CAST({_q(h)} AS VARCHAR)), '') <> ''" for h in headers)
    bad = con.execute(
        f"SELECT __line + 1, {_q(level)} FROM {source} WHERE ({filled}) AND "
        f"({lv} IS NULL OR {lv} < 1 OR {lv} <> FLOOR({lv})) ORDER BY __line LIMIT 10000"
    ).fetchall()
    if bad:
        problems = [StatsProblem(int(n), level, v, grouped.BAD_LEVEL) for n, v in bad]
        raise StatsError(problems, where)
    depth = con.execute(f"SELECT max({lv}) FROM {source}").fetchone()[0] or 1
    others = [h for h in headers if h not in group]
    sql, flat = grouped.flatten_sql(source, level, name, others, int(depth))
    con.execute(f"CREATE TEMP VIEW flat AS {sql}")
    return "flat", flat


__all__ = ["announce", "missing_columns", "prepare_frame", "prepare_view", "totals_reason"]
