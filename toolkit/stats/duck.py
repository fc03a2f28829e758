"""Out-of-core aggregation of large tracker exports with DuckDB.

The file is never loaded whole: DuckDB scans it (in parallel, spilling to disk when memory is
short) and only the per-item sums come back as a pandas frame.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import StatsError, StatsProblem
from .engine import connect
from .layouts import resolve
from .read import LEVEL_NAMES, _missing, _separator, read_stats
from .schema import COUNTS, LEVELS, METRICS, stats_frame

#: The columns ``by`` may name.
GROUPS = ("date", "campaign_id", "level", "key")


def aggregate(
    path: str | os.PathLike[str],
    by: Sequence[str] = ("campaign_id", "level", "key"),
    since: dt.date | str | None = None,
    until: dt.date | str | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    layout: str | None = None,
) -> pd.DataFrame:
    """The sums of a CSV or Parquet export per ``by`` (of ``date``, ``campaign_id``,
    ``level``, ``key``), over the days ``since`` to ``until`` (both included), as the
    statistics frame (the columns not in ``by`` are missing; ``date`` is the day).

    The values are checked as :func:`toolkit.stats.read_stats` checks them, and a file with
    bad values raises :class:`toolkit.errors.StatsError` with their lines. An XLSX file is
    read whole (a sheet holds at most a million rows) and summed with pandas.
    """
    by = list(by)
    unknown = [b for b in by if b not in GROUPS]
    if unknown:
        raise ValueError(f"aggregate: cannot group by {unknown}; choose from {GROUPS}")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm", ".xls", ".ods"):
        return _pandas_sums(read_stats(path, columns, layout=layout), by, since, until)
    with _opened(path, columns, layout) as (con, mapping):
        _check(con, mapping, str(path))
        sums = con.execute(_query(mapping, by, since, until)).df()
    return _typed(sums, by)


Window = tuple[dt.date | None, dt.date | None]


def window_sums(
    path: str | os.PathLike[str],
    days: Sequence[int | None],
    *,
    as_of: dt.date | str | None = None,
    columns: Mapping[str, str] | None = None,
    layout: str | None = None,
) -> tuple[dt.date | None, dict[Window, pd.DataFrame]]:
    """The per-item sums (``campaign_id``, ``level``, ``key``) of a CSV or Parquet export over
    several windows at once, in two scans of the file (one checks every value and finds the
    last day, one sums every window): the file's last day, and per window ``(since, until)``
    its sums, for each of ``days``: the last N days up to ``as_of`` (default: the last day),
    or for ``None`` every row (the window ``(None, None)``), up to ``as_of`` when given
    (``(None, as_of)``).

    The values are checked as :func:`toolkit.stats.read_stats` checks them (a bad file raises
    :class:`toolkit.errors.StatsError` with the lines). XLSX files are summed with pandas.
    """
    path = Path(path)
    if path.suffix.lower() in (".xlsx", ".xlsm", ".xls", ".ods"):
        frame = read_stats(path, columns, layout=layout)
        last = _day(frame["date"].max())
        windows = _windows(days, _day(as_of) or last, _day(as_of))
        return last, {w: _pandas_sums(frame, list(GROUPS[1:]), *w) for w in windows}
    with _opened(path, columns, layout) as (con, mapping):
        last = _check(con, mapping, str(path))
        windows = _windows(days, _day(as_of) or last, _day(as_of))
        wide = con.execute(_windows_query(mapping, windows)).df()
    out = {}
    for i, window in enumerate(windows):
        rows = wide[wide[f"n{i}"] > 0]
        sums = {m: rows[f"{m}{i}"] for m in METRICS}
        out[window] = _typed(
            pd.DataFrame({**{g: rows[g] for g in GROUPS[1:]}, **sums}), list(GROUPS[1:])
        )
    return last, out


def _day(value: Any) -> dt.date | None:
    return None if value is None or pd.isna(value) else pd.Timestamp(value).date()


def _windows(
    days: Sequence[int | None], last: dt.date | None, cut: dt.date | None = None
) -> list[Window]:
    """The ``(since, until)`` of each of ``days`` ending on ``last``; ``None`` days: every
    day, up to ``cut`` when given."""
    out: list[Window] = []
    for n in days:
        if n is None or last is None:
            window: Window = (None, cut)
        else:
            window = (last - dt.timedelta(days=int(n) - 1), last)
        if window not in out:
            out.append(window)
    return out


@contextmanager
def _opened(
    path: Path, columns: Mapping[str, str] | None, layout: str | None
) -> Iterator[tuple[Any, dict[str, str]]]:
    """A DuckDB connection with the view ``raw`` over the file, and the column mapping."""
    with connect() as con:
        source, headers = _source(path, path.suffix.lower())
        layout, mapping = resolve(headers, columns, layout)
        missing = _missing(headers, columns, mapping, layout)
        if missing:
            raise StatsError(missing, str(path))
        con.execute(f"CREATE TEMP VIEW raw AS SELECT * FROM {source}")
        yield con, mapping


def _source(path: Path, suffix: str) -> tuple[str, list[str]]:
    quoted = str(path).replace("'", "''")
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return f"read_parquet('{quoted}')", list(pq.read_schema(path).names)
    sep = _separator(path)
    with open(path, encoding="utf-8-sig", newline="") as f:
        headers = next(csv.reader(f, delimiter=sep), [])
    delim = sep.replace("\t", "\\t")
    src = f"read_csv('{quoted}', header=true, all_varchar=true, delim='{delim}', quote='\"')"
    return src, headers


def _col(header: str) -> str:
    return 'TRIM(CAST("' + header.replace('"', '""') + '" AS VARCHAR))'


def _num(header: str) -> str:
    c = _col(header)
    return f"TRY_CAST(COALESCE(NULLIF(REGEXP_REPLACE({c}, '^\\$', ''), ''), '0') AS DOUBLE)"


def _when(header: str) -> str:
    return f"TRY_CAST({_col(header)} AS TIMESTAMPTZ)"


def _checks(
    mapping: dict[str, str],
    num: Callable[[str], str] = _num,
    when: Callable[[str], str] = _when,
) -> list[tuple[str, str, str]]:
    """``(header, SQL true on a bad value, message)`` per checked column; ``num`` and
    ``when`` give the SQL of a column's number and time (the conversion itself, or the name
    of a column that holds it)."""
    h = mapping["date"]
    out = [(h, f"{when(h)} IS NULL", "not a date")]
    h = mapping["campaign_id"]
    n = num(h)
    out.append(
        (
            h,
            f"{n} IS NULL OR {n} <= 0 OR {n} <> FLOOR({n}) OR {_col(h)} = ''",
            "not a campaign id (a positive whole number)",
        )
    )
    for name in METRICS:
        h = mapping.get(name)
        if h is None:
            continue
        n = num(h)
        cond = f"{n} IS NULL OR isinf({n})"
        message = "not a number"
        if name in COUNTS:
            cond += f" OR {n} < 0 OR {n} <> FLOOR({n})"
            message = "not a count (a whole number >= 0)"
        elif name != "revenue":
            cond += f" OR {n} < 0"
            message = "not an amount (a number >= 0)"
        out.append((h, cond, message))
    if "level" in mapping and "key" in mapping:
        names = ", ".join(f"'{k}'" for k in LEVEL_NAMES)
        lv = f"LOWER(REGEXP_REPLACE({_col(mapping['level'])}, '[\\s_\\-]+', ' ', 'g'))"
        out.append(
            (mapping["level"], f"{lv} NOT IN ({names})", f"not a level ({', '.join(LEVELS)})")
        )
        out.append((mapping["key"], f"{_col(mapping['key'])} = ''", "empty key"))
    return out


def _check(con: Any, mapping: dict[str, str], where: str) -> dt.date | None:
    """Raise :class:`StatsError` with the lines of the bad values; else the last day.

    One scan converts each column once (the checks read the converted columns); only a file
    with bad values is scanned again, for its lines."""
    blank = " AND ".join(f"COALESCE({_col(h)}, '') = ''" for h in mapping.values())
    numeric = sorted({mapping[m] for m in ("campaign_id", *METRICS) if m in mapping})
    alias = {h: f'"__n{i}"' for i, h in enumerate(numeric)}
    typed = [f"{_num(h)} AS {alias[h]}" for h in numeric]
    typed.append(f'{_when(mapping["date"])} AS "__t"')
    fast = _checks(mapping, num=alias.__getitem__, when=lambda h: '"__t"')
    anybad = " OR ".join(f"COALESCE({cond}, TRUE)" for _, cond, _ in fast)
    bad, last = con.execute(
        f'SELECT count(*) FILTER (WHERE NOT ({blank}) AND ({anybad})), max("__t") '
        f"FROM (SELECT *, {', '.join(typed)} FROM raw)"
    ).fetchone()
    if not bad:
        return _day(last)
    checks = _checks(mapping)
    anybad = " OR ".join(f"COALESCE({cond}, TRUE)" for _, cond, _ in checks)
    flags = ", ".join(f"COALESCE({cond}, TRUE) AS b{i}" for i, (_, cond, _) in enumerate(checks))
    cells = ", ".join(f"{_col(h)} AS v{i}" for i, (h, _, _) in enumerate(checks))
    anyflag = " OR ".join(f"b{i}" for i in range(len(checks)))
    rows = con.execute(
        f"SELECT * FROM (SELECT row_number() OVER () + 1 AS line, {flags}, {cells}, "
        f"NOT ({blank}) AS filled FROM raw) WHERE filled AND ({anyflag}) "
        f"ORDER BY line LIMIT 1000"
    ).fetchall()
    problems = []
    k = len(checks)
    for row in rows:
        for i, (h, _, message) in enumerate(checks):
            if row[1 + i]:
                problems.append(StatsProblem(int(row[0]), h, row[1 + k + i], message))
    raise StatsError(problems, where)


def _rows(mapping: dict[str, str]) -> str:
    """SQL of the rows, one per row and level: date (a day), campaign_id, the metrics,
    level and key."""
    date = f"CAST(TRY_CAST({_col(mapping['date'])} AS TIMESTAMPTZ) AS DATE)"
    base = [f"{date} AS date", f"CAST({_num(mapping['campaign_id'])} AS BIGINT) AS campaign_id"]
    base += [f"{_num(mapping[m])} AS {m}" if m in mapping else f"0 AS {m}" for m in METRICS]
    parts = []
    if "level" in mapping and "key" in mapping:
        lv = f"LOWER(REGEXP_REPLACE({_col(mapping['level'])}, '[\\s_\\-]+', ' ', 'g'))"
        cases = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in LEVEL_NAMES.items())
        parts.append(
            f"SELECT {', '.join(base)}, CASE {lv} {cases} END AS level, "
            f"{_col(mapping['key'])} AS key FROM raw WHERE {_col(mapping['key'])} <> ''"
        )
    for level in LEVELS:
        if level in mapping:
            key = _col(mapping[level])
            parts.append(
                f"SELECT {', '.join(base)}, '{level}' AS level, {key} AS key "
                f"FROM raw WHERE COALESCE({key}, '') <> ''"
            )
    return " UNION ALL ".join(parts)


def _between(since: Any, until: Any) -> list[str]:
    where = []
    if since is not None:
        where.append(f"date >= DATE '{pd.Timestamp(since).date()}'")
    if until is not None:
        where.append(f"date <= DATE '{pd.Timestamp(until).date()}'")
    return where


def _query(mapping: dict[str, str], by: list[str], since: Any, until: Any) -> str:
    where = _between(since, until)
    sums = ", ".join(f"SUM({m}) AS {m}" for m in METRICS)
    group = ", ".join(by)
    return (
        f"SELECT {group}{', ' if by else ''}{sums} FROM ({_rows(mapping)}) "
        f"{'WHERE ' + ' AND '.join(where) if where else ''} "
        f"{'GROUP BY ' + group + ' ORDER BY ' + group if by else ''}"
    )


def _windows_query(mapping: dict[str, str], windows: list[Window]) -> str:
    """Per item, for window ``i``: its rows ``n{i}`` and sums ``{metric}{i}``."""
    cols = []
    for i, (since, until) in enumerate(windows):
        where = " AND ".join(_between(since, until)) or "TRUE"
        cols.append(f"count(*) FILTER (WHERE {where}) AS n{i}")
        cols += [f"SUM({m}) FILTER (WHERE {where}) AS {m}{i}" for m in METRICS]
    group = ", ".join(GROUPS[1:])
    return f"SELECT {group}, {', '.join(cols)} FROM ({_rows(mapping)}) GROUP BY {group}"


def _typed(sums: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    cols: dict[str, Any] = {}
    for c in by:
        cols[c] = sums[c]
    for m in METRICS:
        cols[m] = sums[m].fillna(0).round().astype("int64") if m in COUNTS else sums[m].fillna(0)
    if "date" in cols:
        cols["date"] = pd.to_datetime(cols["date"]).dt.tz_localize("UTC")
    out = stats_frame(cols)
    if by and len(out):  # in the frame's order: levels as declared, then keys
        out = out.sort_values(by, kind="stable").reset_index(drop=True)
    return out


def _pandas_sums(df: pd.DataFrame, by: list[str], since: Any, until: Any) -> pd.DataFrame:
    day = df["date"].dt.floor("D")
    if since is not None:
        df = df[day >= pd.Timestamp(since, tz="UTC")]
    if until is not None:
        df = df[df["date"].dt.floor("D") <= pd.Timestamp(until, tz="UTC")]
    df = df.assign(date=df["date"].dt.floor("D"))
    if not by:
        return _typed(df[list(METRICS)].sum().to_frame().T, by)
    sums = df.groupby(by, observed=True, sort=True)[list(METRICS)].sum().reset_index()
    if "date" in by:
        sums["date"] = sums["date"].dt.tz_localize(None)
    return _typed(sums, by)


__all__ = ["GROUPS", "aggregate", "window_sums"]
