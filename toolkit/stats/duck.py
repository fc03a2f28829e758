"""Out-of-core aggregation of large tracker exports with DuckDB.

The file is never loaded whole: DuckDB scans it (in parallel, spilling to disk when memory is
short) and only the per-item sums come back as a pandas frame.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import StatsError
from . import checked, day_sums, values, values_sql
from .campaigns import CampaignMap, load_map
from .engine import connect
from .files import as_utf8, csv_form, file_kind, header, refuse, unique
from .layouts import resolve
from .read import LEVEL_NAMES, read_stats, several_accounts
from .schema import COUNTS, LEVELS, METRICS, stats_frame
from .shape import announce, key_totals_reason, prepare_view, totals_reason
from .totals import trimmed_sql
from .value_checks import (
    bad_lines,
    blank,
    checks,
    converted,
    counted,
    level_name,
    plain_row_of,
)

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
    campaign_map: CampaignMap | None = None,
    date_format: str | None = None,
    decimal: str | None = None,
) -> pd.DataFrame:
    """The sums of a CSV or Parquet export per ``by`` (of ``date``, ``campaign_id``,
    ``level``, ``key``), over the days ``since`` to ``until`` (both included), as the
    statistics frame (the columns not in ``by`` are missing; ``date`` is the day).

    The values are checked as :func:`toolkit.stats.read_stats` checks them, and a file with
    bad values raises :class:`toolkit.errors.StatsError` with their lines. An XLSX file is
    read whole (a sheet holds at most a million rows) and summed with pandas.
    ``columns``, ``layout`` and ``campaign_map`` are those of :func:`read_stats`; totals rows
    are left out the same way (``attrs["skipped"]``, a ``StatsNote``). Values are read by
    the rules of :mod:`toolkit.stats.values`, in SQL: ``date_format`` and ``decimal`` as
    :func:`read_stats` takes them.
    """
    by = list(by)
    unknown = [b for b in by if b not in GROUPS]
    if unknown:
        raise ValueError(f"aggregate: cannot group by {unknown}; choose from {GROUPS}")
    path = Path(path)
    read = (columns, layout, campaign_map, date_format, decimal)
    if path.suffix.lower() in SHEETS:
        frame = _read_sheet(path, read)
        sums = _pandas_sums(frame, by, since, until)
        sums.attrs["skipped"] = frame.attrs["skipped"]  # read_stats warned of them
        return sums
    with _opened(path, *read) as (con, mapping, skipped, _last):
        sums = con.execute(_query(mapping, by, since, until)).df()
    return announce(_typed(sums, by), skipped, str(path))


Window = tuple[dt.date | None, dt.date | None]


def window_sums(
    path: str | os.PathLike[str],
    days: Sequence[int | None],
    *,
    as_of: dt.date | str | None = None,
    columns: Mapping[str, str] | None = None,
    layout: str | None = None,
    campaign_map: CampaignMap | None = None,
    date_format: str | None = None,
    decimal: str | None = None,
    per_day: bool = False,
) -> tuple[dt.date | None, dict[Window, pd.DataFrame]]:
    """The per-item sums (``campaign_id``, ``level``, ``key``) of a CSV or Parquet export over
    several windows at once, in two scans of the file (one checks every value and finds the
    last day, one sums every window): the file's last day, and per window ``(since, until)``
    its sums, for each of ``days``: the last N days up to ``as_of`` (default: the last day),
    or for ``None`` every row (the window ``(None, None)``), up to ``as_of`` when given
    (``(None, as_of)``).

    ``per_day``: the sums of each window with both ends also have the item's days, summed in
    the same scan (:data:`toolkit.stats.day_sums.DAY_SUMS`).

    The values are checked as :func:`toolkit.stats.read_stats` checks them (a bad file raises
    :class:`toolkit.errors.StatsError` with the lines). XLSX files are summed with pandas.
    ``date_format`` and ``decimal``: as :func:`read_stats` takes them.
    """
    path = Path(path)
    read = (columns, layout, campaign_map, date_format, decimal)
    if path.suffix.lower() in SHEETS:
        return _sheet_window_sums(path, days, as_of, read, per_day)
    with _opened(path, *read) as (con, mapping, skipped, last):
        announce(pd.DataFrame(), skipped, str(path))
        windows = _windows(days, _day(as_of) or last, _day(as_of))
        mode = "rows" if per_day and day_sums.span(windows) else ""
        wide = con.execute(_windows_query(mapping, windows, mode)).df()
        if mode and not day_sums.one_row_a_day(wide):  # some item has several rows of a day
            wide = con.execute(_windows_query(mapping, windows, "days")).df()
    out = {}
    for i, window in enumerate(windows):
        rows = wide[wide[f"n{i}"] > 0]
        extra = day_sums.DAY_SUMS if f"days{i}" in wide else ()
        sums = {m: rows[f"{m}{i}"] for m in (*METRICS, *extra)}
        out[window] = _typed(
            pd.DataFrame({**{g: rows[g] for g in GROUPS[1:]}, **sums}),
            list(GROUPS[1:]),
            ordered=True,  # the query's order
        )
    return last, out


def _sheet_window_sums(
    path: Path, days: Sequence[int | None], as_of: Any, read: tuple[Any, ...], per_day: bool
) -> tuple[dt.date | None, dict[Window, pd.DataFrame]]:
    """:func:`window_sums` of a workbook: read whole, summed with pandas."""
    frame = _read_sheet(path, read)
    last = _day(frame["date"].max())
    windows = _windows(days, _day(as_of) or last, _day(as_of))
    out = {w: _pandas_sums(frame, list(GROUPS[1:]), *w) for w in windows}
    if per_day:  # the windows with both ends, as the SQL sums them
        bounded = [w for w in out if None not in w]
        out.update({w: day_sums.of_frame(frame, out[w], *w) for w in bounded})
    return last, out


#: Workbooks: read whole by :func:`read_stats` (a sheet holds at most a million rows).
SHEETS = (".xlsx", ".xlsm", ".xls", ".ods")


def _read_sheet(path: Path, read: tuple[Any, ...]) -> pd.DataFrame:
    columns, layout, campaign_map, date_format, decimal = read
    return read_stats(
        path,
        columns,
        layout=layout,
        campaign_map=campaign_map,
        date_format=date_format,
        decimal=decimal,
    )


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
    path: Path,
    columns: Mapping[str, str] | None,
    layout: str | None,
    campaign_map: CampaignMap | None = None,
    date_format: str | None = None,
    decimal: str | None = None,
) -> Iterator[tuple[Any, dict[str, str], list[tuple[int, str]], dt.date | None]]:
    """A DuckDB connection with the views ``raw`` over the file (totals rows emptied, a
    grouped report flattened, campaign ids mapped) and ``vals`` of its values, every value
    checked (:func:`_check`); the column mapping, the totals rows left out and the last day.
    A file this process checked already with the same options is not checked again
    (:mod:`toolkit.stats.checked`). A CSV that is not UTF-8 is read from a UTF-8 copy,
    removed on exit."""
    cmap = load_map(campaign_map)
    read = (columns, layout, cmap)
    options = {"columns": columns, "layout": layout, "map": cmap}
    key = checked.file_key(path, {**options, "date_format": date_format, "decimal": decimal})
    seen = checked.known(key)
    with connect() as con, ExitStack() as stack:
        try:
            if seen is None:
                seen = _checked_file(con, path, read, date_format, decimal, stack)
                checked.remember(key, seen)
            else:
                _summed_views(con, path, read, seen, stack)
            yield con, seen.mapping, seen.skipped, seen.last
        except Exception as exc:
            if type(exc).__name__ not in ("InvalidInputException", "IOException"):
                raise
            # the file's fault (DuckDB's reader), not a bug
            raise refuse(path, f"cannot be read as {_kind(path)}: {_reason(exc)}") from None


Read = tuple[Mapping[str, str] | None, str | None, dict[str, str] | None]


def _views(
    con: Any,
    path: Path,
    stack: ExitStack,
    types: Mapping[str, str] | None = None,
    form: tuple[str, str] | None = None,
) -> tuple[list[str], tuple[str, str] | None]:
    """Create the view ``src`` over the file (``types``: CSV columns read as those DuckDB
    types, not as text; ``form``: a CSV's encoding and separator, when known); its header
    and a CSV's form."""
    source, headers, form = _source(path, path.suffix.lower(), stack, types, form)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW src AS SELECT *, row_number() OVER () AS __line FROM {source}"
    )
    return headers, form


def _checked_file(
    con: Any,
    path: Path,
    read: Read,
    date_format: str | None,
    decimal: str | None,
    stack: ExitStack,
) -> checked.Checked:
    """Create the views of the file (:func:`toolkit.stats.shape.prepare_view`, ``vals``)
    and check every value (:func:`_check`): what was found. The totals rows are counted in
    the checking scan; only a file that has some is scanned for them, and checked again.
    A CSV whose columns the check found plain as written is then read typed for its sums
    (:func:`_summed_views`)."""
    where = str(path)
    headers, form = _views(con, path, stack)
    _accounts(con, headers, where)
    mapping, skipped = prepare_view(con, headers, *read, where, None, True)
    totals = None
    if skipped is None:
        totals = (key_totals_reason(con, mapping), totals_reason(con, mapping))
    found = _check(con, mapping, where, date_format, decimal, totals)
    if found is None:  # it has totals rows: leave them out, and check again
        mapping, skipped = prepare_view(con, headers, *read, where)
        found = _check(con, mapping, where, date_format, decimal)
    last, rules, typable = found
    if {"group_level", "group_name"} <= set(resolve(headers, *read[:2])[1]):
        typable = {}  # a grouped report's rows are rebuilt: read as text
    if read[2] is not None:  # the ids looked at were the map's, not the file's
        typable.pop(mapping["campaign_id"], None)
    seen = checked.Checked(mapping, skipped or [], rules, last, typable, form)
    if _typed_columns(seen, path):
        _summed_views(con, path, read, seen, stack)
    return seen


def _accounts(con: Any, headers: Sequence[str], where: str) -> None:
    """A file whose ``account`` column names several accounts is refused (one account's
    rules would count them all as its own)."""
    label = next((h for h in headers if str(h).strip().lower() == "account"), None)
    if label is None:
        return
    rows = con.execute(
        f"SELECT DISTINCT v FROM (SELECT {trimmed_sql(label)} AS v FROM src)"
        " WHERE v IS NOT NULL AND v <> '' ORDER BY v LIMIT 6"
    ).fetchall()
    several_accounts(label, [str(r[0]) for r in rows], where)


def _typed_columns(seen: checked.Checked, path: Path) -> dict[str, str]:
    """The columns of a checked CSV that are read typed for its sums: those the check found
    plain as written (``seen.typable``), unless totals rows were left out (their cells are
    not numbers: the file is read as text)."""
    if seen.skipped or file_kind(path) != "csv":
        return {}
    return dict(seen.typable)


def _summed_views(
    con: Any, path: Path, read: Read, seen: checked.Checked, stack: ExitStack
) -> None:
    """Create the views of a file that passed its checks (``seen``), to be summed: the
    columns it holds plain as written read typed by DuckDB's CSV reader, the others
    converted by the rules the check decided; nothing is checked again."""
    headers, _ = _views(con, path, stack, _typed_columns(seen, path), seen.form)
    prepare_view(con, headers, *read, str(path), seen.skipped)
    types = values_sql.column_types(con)
    con.execute(f"CREATE OR REPLACE TEMP VIEW vals AS {converted(seen.mapping, seen.rules, types)}")


def _reason(exc: Exception) -> str:
    """DuckDB's reader's error in a line: where, and what it expected."""
    lines = [x.strip().removeprefix("Invalid Input Error: ") for x in str(exc).splitlines()]
    keep = [x for x in lines if x.startswith(("CSV Error on Line", "Expected Number"))]
    return ("; ".join(keep) or (lines or [""])[0])[:200]


def _kind(path: Path) -> str:
    return "Parquet" if path.suffix.lower() in (".parquet", ".pq") else "CSV"


def _source(
    path: Path,
    suffix: str,
    stack: ExitStack,
    types: Mapping[str, str] | None = None,
    form: tuple[str, str] | None = None,
) -> tuple[str, list[str], tuple[str, str] | None]:
    """The SQL reading the file, its header and a CSV's encoding and separator (``form``,
    found when not given: :func:`~toolkit.stats.files.csv_form` reads the whole file); a
    CSV that is not UTF-8 is copied as UTF-8 for as long as ``stack`` lasts. A CSV's
    columns are text, but those of ``types`` (header -> DuckDB type: only columns whose
    every value is that type as written)."""
    kind = file_kind(path)
    quoted = str(path).replace("'", "''")
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            names = list(pq.read_schema(path).names)
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors of a damaged file
            raise refuse(path, f"cannot be read as Parquet: {str(exc).splitlines()[0]}") from None
        return f"read_parquet('{quoted}')", names, None
    if kind == "sheet":
        raise refuse(path, "a workbook is read with read_stats, not DuckDB")
    encoding, sep = form or csv_form(path)
    headers = unique(header(path, encoding, sep))
    utf8 = stack.enter_context(as_utf8(path, encoding))
    quoted = str(utf8).replace("'", "''")
    delim = sep.replace("\t", "\\t")
    # the header as the file's first line has it (DuckDB's sniffer would take a wider row's)
    kinds = {h: (types or {}).get(h, "VARCHAR") for h in headers}
    names = ", ".join("'" + h.replace("'", "''") + f"': '{kinds[h]}'" for h in headers)
    src = (
        f"read_csv('{quoted}', header=true, auto_detect=false, columns={{{names}}}, "
        f"delim='{delim}', quote='\"', escape='\"', null_padding=true)"
    )
    return src, headers, (encoding, sep)


def _check(
    con: Any,
    mapping: dict[str, str],
    where: str,
    date_format: str | None = None,
    decimal: str | None = None,
    totals: tuple[str, str] | None = None,
) -> tuple[dt.date | None, values.Rules, dict[str, str]] | None:
    """Decide the file's value rules (:mod:`toolkit.stats.values`), create the view
    ``vals`` of the converted values, and raise :class:`StatsError` with the file's
    problems and the lines of the bad values; else return the last day, the rules and the
    columns whose values are all plain as written (:func:`toolkit.stats.values_sql.typable`:
    header -> type; none when the rules are not those of a plain file).
    ``totals``: SQL of a row's totals reason in its key columns and in all of them
    (:func:`toolkit.stats.shape.key_totals_reason`, :func:`~toolkit.stats.shape.totals_reason`),
    when the totals rows are not left out yet: the first scan counts those of the keys (a
    "Total" elsewhere fails a value check by any rules), a file that would be refused is
    scanned for the others, and ``None`` is returned when there are some (nothing is judged
    on those rows).

    One scan finds the values' shapes and checks every value by the rules of a file of plain
    values (:func:`toolkit.stats.values_sql.plain_rules`); only when the shapes decide other
    rules does a second scan check the values by those, and only a file with bad values is
    scanned again, for its lines."""
    types = values_sql.column_types(con)
    numeric = {mapping[m]: m for m in METRICS if m in mapping}
    plain = values_sql.plain_rules(mapping["date"], numeric, types, date_format)
    dated = date_format is None  # else the format decides, not the dates' shapes
    plain_rows = plain_row_of(mapping, types) is not None
    shape_sql = values_sql.shape_sql(
        "vals", '"__sd"' if dated else None, numeric, types, plain_rows
    )
    date_header = mapping["date"] if dated else None
    typed = values_sql.typable(date_header, mapping["campaign_id"], numeric, types, plain_rows)
    counts = [f"count(*) FILTER (WHERE ({totals[0]}) IS NOT NULL)"] if totals else []
    aggs = shape_sql[1] + [agg for _, _, agg in typed] + counts
    row = _scan(con, mapping, plain, types, shape_sql[0], aggs)
    if totals and row[-1]:
        return None
    first_bad = row[0]
    flags = row[2 + len(shape_sql[1]) :]
    typable = {h: kind for (h, kind, _), ok in zip(typed, flags, strict=False) if ok}
    dates, shapes = values_sql.read_shapes(row[2:], dated, numeric, types)
    values_sql.all_currencies(con, shape_sql[0], numeric, types, shapes)
    rules = values.decide(mapping["date"], dates, shapes, date_format=date_format, decimal=decimal)
    if (rules.date, rules.numbers) != (plain.date, plain.numbers):
        row, typable = _scan(con, mapping, rules, types, "vals", []), {}
    if not row[0] and not rules.problems:
        return _day(row[1]), rules, typable
    # a totals row outside the keys fails a check by any rules: look for one only now
    if totals and first_bad and counted(con, totals[1]):
        return None
    lines = bad_lines(con, mapping, checks(mapping, rules)) if row[0] else []
    raise StatsError(rules.problems + lines, where)


def _scan(
    con: Any,
    mapping: dict[str, str],
    rules: values.Rules,
    types: dict[str, str],
    relation: str,
    aggs: list[str],
) -> tuple[Any, ...]:
    """Create the view ``vals`` by ``rules`` and scan it once: the number of rows with a bad
    value, the last time, then ``aggs`` over ``relation`` (``vals`` with more columns)."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW vals AS {converted(mapping, rules, types)}")
    anybad = " OR ".join(f"COALESCE({cond}, TRUE)" for _, cond, _ in checks(mapping, rules))
    counts = [f"count(*) FILTER (WHERE NOT ({blank(mapping)}) AND ({anybad}))", 'max("__t")']
    return tuple(con.execute(f"SELECT {', '.join(counts + aggs)} FROM {relation}").fetchone())


def _rows(mapping: dict[str, str]) -> str:
    """SQL of the rows, one per row and level: date (a day), campaign_id, the metrics,
    level and key, from the view ``vals`` of the converted values (see :func:`_check`)."""
    base = ['CAST("__t" AS DATE) AS date', '"__id" AS campaign_id']
    base += [f'"__v_{m}" AS {m}' for m in METRICS]
    parts = []
    if "level" in mapping and "key" in mapping:
        lv = level_name(mapping["level"])
        cases = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in LEVEL_NAMES.items())
        key = trimmed_sql(mapping["key"])
        parts.append(
            f"SELECT {', '.join(base)}, CASE {lv} {cases} END AS level, "
            f"{key} AS key FROM vals WHERE {key} <> ''"
        )
    for level in LEVELS:
        if level in mapping:
            key = trimmed_sql(mapping[level])
            parts.append(
                f"SELECT {', '.join(base)}, '{level}' AS level, {key} AS key "
                f"FROM vals WHERE COALESCE({key}, '') <> ''"
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
        f"{'GROUP BY ' + group if by else ''}"
    )


def _windows_query(mapping: dict[str, str], windows: list[Window], per_day: str = "") -> str:
    """Per item, for window ``i``: its rows ``n{i}`` and sums ``{metric}{i}`` (rows before
    every window's first day are not read). ``per_day``, for the windows with both ends:
    their :mod:`~toolkit.stats.day_sums`, the rows summed per day first (``"days"``) or each
    row taken as a day, with the columns that check it (``"rows"``)."""
    group = ", ".join(GROUPS[1:])
    source, rows = f"({_rows(mapping)})", "count(*)"
    if windows and all(since is not None for since, _ in windows):
        first = min(since for since, _ in windows)
        source = f"(SELECT * FROM {source} WHERE {_between(first, None)[0]})"
    if per_day == "days":
        sums = ", ".join(f"SUM({m}) AS {m}" for m in METRICS)
        source = f"(SELECT {group}, date, count(*) AS __r, {sums} FROM {source} GROUP BY ALL)"
        rows = "SUM(__r)"
    cols = []
    for i, (since, until) in enumerate(windows):
        where = " AND ".join(_between(since, until)) or "TRUE"
        cols.append(f"{rows} FILTER (WHERE {where}) AS n{i}")
        cols += [f"SUM({m}) FILTER (WHERE {where}) AS {m}{i}" for m in METRICS]
        if per_day and since is not None and until is not None:
            cols += day_sums.columns(i, where)
    if per_day == "rows":
        cols += day_sums.check_columns(windows)
    levels = " ".join(f"WHEN '{lv}' THEN {i}" for i, lv in enumerate(LEVELS))
    order = f"campaign_id, CASE level {levels} END, key"  # the frame's order (_typed)
    return f"SELECT {group}, {', '.join(cols)} FROM {source} GROUP BY {group} ORDER BY {order}"


def _typed(sums: pd.DataFrame, by: list[str], ordered: bool = False) -> pd.DataFrame:
    """``sums`` as the statistics frame, in the frame's order (levels as declared, then
    keys); ``ordered``: they come in that order already (:func:`_windows_query`)."""
    cols: dict[str, Any] = {}
    for c in by:
        cols[c] = sums[c]
    for m in METRICS:
        cols[m] = sums[m].fillna(0).round().astype("int64") if m in COUNTS else sums[m].fillna(0)
    if "date" in cols:
        cols["date"] = pd.to_datetime(cols["date"]).dt.tz_localize("UTC")
    out = stats_frame(cols)
    for c in day_sums.DAY_SUMS:  # what window_sums adds per_day
        if c in sums:
            out[c] = sums[c].fillna(0).to_numpy(dtype=float)
    if by and len(out) and not ordered:
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
