"""The SQL of a file's values in DuckDB: the view ``vals`` of its converted values (by the
rules of :mod:`toolkit.stats.values`), the checks over it, and the lines of the bad values;
:mod:`toolkit.stats.duck` runs them in its checking scan."""

from __future__ import annotations

from typing import Any

from ..errors import StatsProblem
from . import values, values_sql
from .read import LEVEL_NAMES
from .schema import LEVELS, METRICS
from .totals import trimmed_sql


def level_name(header: str) -> str:
    """SQL of a level cell as :data:`toolkit.stats.read.LEVEL_NAMES` names it (lower case,
    runs of blanks, ``_`` and ``-`` as one space); a cell that is already a name is taken as
    it is, without the regular expression."""
    names = ", ".join(f"'{k}'" for k in LEVEL_NAMES)
    cell = values_sql.cell(header)
    norm = f"LOWER(REGEXP_REPLACE({trimmed_sql(header)}, '[\\s_\\-]+', ' ', 'g'))"
    return f"CASE WHEN {cell} IN ({names}) THEN {cell} ELSE {norm} END"


def converted(mapping: dict[str, str], rules: values.Rules, types: dict[str, str]) -> str:
    """SQL of the view ``vals``: ``raw`` with each value converted once (``__t`` the time,
    ``__id`` the campaign id, ``__v_{metric}`` and ``__pct_{metric}``; ``__sd`` the date's
    text)."""
    h, sd = mapping["date"], '"__sd"'
    row = plain_row_of(mapping, types)
    texts = [f"{values_sql.date_text(h, row is not None)} AS {sd}"]
    day = f'{values_sql.date(h, rules.date, sd)} AS "__t"'
    if str(types.get(h)).upper() in ("DATE", "TIMESTAMP") and rules.date.order != "format":
        # a date as DuckDB holds it is its own day: no text to read (nor a blank one)
        q = values_sql.quoted(h)
        texts = [f"CASE WHEN {q} IS NULL THEN '' END AS {sd}"]
        day = f'CASE WHEN NOT {rules.date.refused} THEN CAST({q} AS TIMESTAMP) END AS "__t"'
    cid = mapping["campaign_id"]
    cols = [
        day,
        f'{values_sql.campaign_id(cid, types.get(cid, "VARCHAR"), row is not None)} AS "__id"',
    ]
    for i, m in enumerate(METRICS):
        rule = rules.numbers.get(mapping.get(m, ""))
        if rule is None or rule.refused:
            cols += [f'0.0 AS "__v_{m}"', f'FALSE AS "__pct_{m}"']
            continue
        typed = bool(values_sql.NUMERIC_TYPES.match(types.get(mapping[m], "VARCHAR")))
        t = None
        if not (typed or rule.plain):  # the general grammar reads the text often: strip once
            t = f'"__s{i}"'
            texts.append(f"{values_sql.text(mapping[m])} AS {t}")
        n, pct = values_sql.number(mapping[m], rule, m, typed, t)
        cols += [f'{n} AS "__v_{m}"', f'{pct} AS "__pct_{m}"']
    source = "raw" if row is None else f"(SELECT *, {row} AS {values_sql.ROW} FROM raw)"
    return f"SELECT *, {', '.join(cols)} FROM (SELECT *, {', '.join(texts)} FROM {source})"


def plain_row_of(mapping: dict[str, str], types: dict[str, str]) -> str | None:
    """:func:`toolkit.stats.values_sql.plain_row` of the file's columns."""
    numeric = [mapping[m] for m in METRICS if m in mapping]
    return values_sql.plain_row(mapping["date"], mapping["campaign_id"], numeric, types)


def checks(mapping: dict[str, str], rules: values.Rules) -> list[tuple[str, str, str]]:
    """``(header, SQL true on a bad value, message)`` per checked column, over the view
    ``vals``; a column refused as a whole is not checked row by row."""
    out = []
    if not rules.date.refused:
        fmt = rules.date.fmt
        message = values.NOT_A_DATE if fmt is None else values.date_format_message(fmt)
        out.append((mapping["date"], '"__t" IS NULL', message))
    out.append((mapping["campaign_id"], '"__id" IS NULL', values.NOT_AN_ID))
    for name in METRICS:
        h = mapping.get(name)
        if h is None or rules.numbers[h].refused:
            continue
        n, pct = f'"__v_{name}"', f'"__pct_{name}"'
        out.append((h, values_sql.bad_number(n, pct, name), values.message(name)))
        out.append((h, values_sql.is_percent(n, pct), values.PERCENTAGE))
    if "level" in mapping and "key" in mapping:
        names = ", ".join(f"'{k}'" for k in LEVEL_NAMES)
        lv = level_name(mapping["level"])
        out.append(
            (mapping["level"], f"{lv} NOT IN ({names})", f"not a level ({', '.join(LEVELS)})")
        )
        out.append((mapping["key"], f"{trimmed_sql(mapping['key'])} = ''", "empty key"))
    return out


def counted(con: Any, reason: str) -> int:
    """The rows of ``vals`` with a totals ``reason``."""
    return int(con.execute(f"SELECT count(*) FROM vals WHERE ({reason}) IS NOT NULL").fetchone()[0])


def blank(mapping: dict[str, str]) -> str:
    """SQL true on a row of ``vals`` whose cells are all empty; a row with a ``yyyy-mm-dd``
    date (its text ``__sd`` is NULL) is not, and its other cells are not looked at."""
    cells = " AND ".join(f"COALESCE({trimmed_sql(h)}, '') = ''" for h in mapping.values())
    return f'CASE WHEN "__sd" IS NULL THEN FALSE ELSE {cells} END'


def bad_lines(
    con: Any, mapping: dict[str, str], checks: list[tuple[str, str, str]]
) -> list[StatsProblem]:
    """The problems of the first 1000 lines with a bad value (of ``checks``, over ``vals``)."""
    flags = ", ".join(f"COALESCE({cond}, TRUE) AS b{i}" for i, (_, cond, _) in enumerate(checks))
    cells = ", ".join(f"{trimmed_sql(h)} AS v{i}" for i, (h, _, _) in enumerate(checks))
    anyflag = " OR ".join(f"b{i}" for i in range(len(checks)))
    rows = con.execute(
        f"SELECT * FROM (SELECT row_number() OVER () + 1 AS line, {flags}, {cells}, "
        f"NOT ({blank(mapping)}) AS filled FROM vals) WHERE filled AND ({anyflag}) "
        f"ORDER BY line LIMIT 1000"
    ).fetchall()
    problems = []
    k = len(checks)
    for row in rows:
        for i, (h, _, message) in enumerate(checks):
            if row[1 + i]:
                problems.append(StatsProblem(int(row[0]), h, row[1 + k + i], message))
    return problems


__all__ = [
    "bad_lines",
    "blank",
    "checks",
    "converted",
    "counted",
    "level_name",
    "plain_row_of",
]
