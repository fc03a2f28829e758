"""The value rules of :mod:`toolkit.stats.values` as DuckDB SQL: the shapes of a file's
columns, gathered in the scan that checks its values by the rules of a plain file
(:func:`plain_rules`), and each value's conversion, with the same patterns and the same
decisions as the pandas path. A plain value as written (:data:`PLAIN`, :data:`PLAIN_DAY`,
:data:`PLAIN_ID`) is classed and read by that one short test; only the others are stripped
and read by the full patterns.

>>> print(literal("it's"))
'it''s'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from . import values as v

#: DuckDB's numeric column types (Parquet columns may already be numbers).
NUMERIC_TYPES = re.compile(
    r"^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|REAL|DECIMAL.*)$", re.IGNORECASE
)
INTEGER_TYPES = re.compile(r"^U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?$", re.IGNORECASE)
_BLANKS = " || ".join(f"chr({ord(c)})" for c in v.BLANKS)
#: A whole number or plain decimal as written (``PLAIN_INT`` or ``PLAIN_DOT``, nothing to
#: strip): class ``i``, ``p`` or ``q``, cast as it is.
PLAIN = "^-?[0-9]*\\.?[0-9]+$"
#: ``yyyy-mm-dd`` alone: matches ``DATE_YMD`` and is its own canonical form.
PLAIN_DAY = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
#: A campaign id of 1 to 18 digits without leading zeros: a BIGINT from 1 up, as it is.
PLAIN_ID = "^[1-9][0-9]{0,17}$"


#: The column of a row whose date, campaign id and numbers are all plain as written
#: (:func:`plain_row`): the tests of each value by its own pattern are skipped on it.
ROW = '"__p"'


def plain_row(
    date_header: str, id_header: str, numeric: Sequence[str], types: Mapping[str, str]
) -> str | None:
    """SQL true on a row whose date is :data:`PLAIN_DAY`, campaign id :data:`PLAIN_ID` and
    every number :data:`PLAIN`, as written: one pattern over the cells joined by ``|``
    (a missing cell is empty and fails its part; a cell holding a ``|`` makes a part too
    many), cheaper than a pattern per cell. None when a column is not text."""
    headers = [date_header, id_header, *numeric]
    if any(_typed_type(types.get(h, "VARCHAR")) for h in headers):
        return None
    parts = [PLAIN_DAY, PLAIN_ID] + [PLAIN] * len(numeric)
    pattern = "\\|".join(p.removeprefix("^").removesuffix("$") for p in parts)
    joined = ", '|', ".join(quoted(h) for h in headers)
    return f"regexp_full_match(concat({joined}), {literal(pattern)})"


def literal(text: str) -> str:
    """A SQL string literal (DuckDB does not read backslashes in literals)."""
    return "'" + text.replace("'", "''") + "'"


def quoted(header: str) -> str:
    """A column name as SQL."""
    return '"' + header.replace('"', '""') + '"'


def cell(header: str) -> str:
    """A column's value as written (NULL for a missing one)."""
    return f"CAST({quoted(header)} AS VARCHAR)"


def stripped(x: str) -> str:
    """The SQL ``x`` stripped of :data:`toolkit.stats.values.BLANKS` ('' for NULL); a
    trim with a set of characters is slow, so the SQL below strips only the values that a
    short test (:data:`PLAIN`, :data:`PLAIN_DAY`, :data:`PLAIN_ID`) does not settle as
    written (a ``CASE`` computes a branch only for its rows)."""
    return f"COALESCE(trim({x}, {_BLANKS}), '')"


def text(header: str) -> str:
    """A column's value as stripped text ('' for a missing one)."""
    return stripped(cell(header))


def _m(expr: str, pattern: str) -> str:
    return f"regexp_matches({expr}, {literal(pattern)})"


def _group(expr: str, groups: str) -> str:
    return f"regexp_replace({expr}, {literal(v.NUMBER)}, {literal(groups)})"


def column_types(con: Any, view: str = "raw") -> dict[str, str]:
    """``header -> DuckDB type`` of the view's columns."""
    return {row[0]: str(row[1]) for row in con.execute(f"DESCRIBE {view}").fetchall()}


def _plain_regex(t: str) -> list[tuple[str, str]]:
    """``(SQL condition, class)`` of the plain values: ``i`` whole, ``p`` a plain decimal,
    ``q`` a plain decimal that could be thousands (short regular expressions are cheap)."""
    dot, amb = _m(t, v.PLAIN_DOT), _m(t, v.PLAIN_AMBIGUOUS)
    return [(_m(t, v.PLAIN_INT), "i"), (f"{dot} AND NOT {amb}", "p"), (amb, "q")]


def number_text(header: str, row: bool = False) -> str:
    """A numeric column's :func:`text`, but NULL for a whole number or plain decimal as
    written (:data:`PLAIN`: it is its own text, and is classed without the full grammar);
    ``row``: the relation has :data:`ROW` (a plain row's values are plain)."""
    x = cell(header)
    first = f"WHEN {ROW} THEN NULL " if row else ""
    return f"CASE {first}WHEN {x} IS NULL OR NOT {_m(x, PLAIN)} THEN {stripped(x)} END"


def number_class(x: str, t: str) -> str:
    """SQL of a value's class (as :func:`toolkit.stats.values._classes`), followed by its
    currency sign for the classes that may carry one: ``x`` the value as written, ``t`` its
    :func:`number_text` (NULL: a plain value, classed by where its point is)."""
    body = _group(t, "\\5\\6")
    dot, comma = _m(body, v.DOT_BODY), _m(body, v.COMMA_BODY)
    general = (
        f"CASE WHEN {dot} AND {comma} THEN (CASE WHEN {_m(body, v.AMBIGUOUS_BODY)} THEN 'a' "
        f"ELSE 'n' END) WHEN {dot} THEN 'd' WHEN {comma} THEN 'c' ELSE 'b' END"
    )
    plain = (
        f"CASE WHEN NOT contains({x}, '.') THEN 'i' WHEN length({x}) - strpos({x}, '.') = 3 "
        f"AND {_m(x, v.PLAIN_AMBIGUOUS)} THEN 'q' ELSE 'p' END"
    )
    return (
        f"CASE WHEN {t} IS NULL THEN {plain} WHEN {t} = '' THEN 'e' "
        + " ".join(f"WHEN {cond} THEN '{k}'" for cond, k in _plain_regex(t))
        + f" WHEN NOT {_m(t, v.NUMBER)} THEN 'b' "
        f"ELSE ({general}) || {_group(t, chr(92) + '3' + chr(92) + '7')} END"
    )


def shape_sql(
    source: str,
    date_text: str | None,
    numeric: Mapping[str, str],
    types: Mapping[str, str],
    row: bool = False,
) -> tuple[str, list[str]]:
    """``(relation, aggregates)``: ``source`` (a view of the file) with the columns that
    classify its values, and the SQL of the aggregates over it that give the shapes of the
    date column (``date_text``: the column of ``source`` holding its :func:`date_text`;
    ``None``: not needed) and of each numeric column (``header -> frame column``);
    :func:`read_shapes` reads the aggregates' row. Columns already typed as numbers have
    none. ``row``: ``source`` has :data:`ROW`."""
    texts, classes, aggs = [], [], []
    if date_text is not None:
        t = date_text
        for i in (1, 2):
            part = f"regexp_extract({t}, {literal(v.DATE_XY)}, {i})"
            classes.append(f"TRY_CAST({part} AS INTEGER) AS __d{i}")
        for first, second in (("> 12", "<= 12"), ("<= 12", "> 12"), ("<= 12", "<= 12")):
            aggs.append(f"min(CASE WHEN __d1 {first} AND __d2 {second} THEN {t} END)")
    for i, h in enumerate(_texts(numeric, types)):
        x, t, c = cell(h), f"__n{i}", f"__c{i}"
        texts.append(f"{number_text(h, row)} AS {t}")
        classes.append(f"{number_class(x, t)} AS {c}")
        example = f"COALESCE({t}, {x})"
        cur = f"CASE WHEN length({c}) > 1 AND {c} NOT LIKE 'b%' THEN substr({c}, 2) END"
        aggs += [
            f"min(CASE WHEN {c} = 'p' OR {c} LIKE 'd%' THEN {example} END)",
            f"min(CASE WHEN {c} LIKE 'c%' THEN {t} END)",
            f"min(CASE WHEN {c} = 'q' OR {c} LIKE 'a%' THEN {example} END)",
            # the lowest and highest currency seen (a histogram or DISTINCT would keep the
            # rows to group them; :func:`all_currencies` lists them when they differ)
            f"min({cur})",
            f"max({cur})",
            f"COALESCE(bool_and({c} IN ('e', 'i', 'p', 'q')), TRUE)",
        ]
    relation = f"(SELECT *, {', '.join(texts)} FROM {source})" if texts else source
    if classes:
        relation = f"(SELECT *, {', '.join(classes)} FROM {relation})"
    return relation, aggs


def _texts(numeric: Mapping[str, str], types: Mapping[str, str]) -> list[str]:
    return [h for h in numeric if not NUMERIC_TYPES.match(types.get(h, "VARCHAR"))]


def read_shapes(
    row: Sequence[Any], dated: bool, numeric: Mapping[str, str], types: Mapping[str, str]
) -> tuple[v.DateShapes | None, dict[str, tuple[str, v.NumberShapes]]]:
    """The shapes from the row of :func:`shape_sql`'s aggregates (``dated``: it was given a
    date header)."""
    dates = v.DateShapes(*row[:3]) if dated else None
    at = {h: 3 * dated + 6 * i for i, h in enumerate(_texts(numeric, types))}
    out: dict[str, tuple[str, v.NumberShapes]] = {}
    for h, name in numeric.items():
        if h not in at:
            out[h] = (name, v.NumberShapes(typed=True))
            continue
        dot, comma, amb, low, high, plain = row[at[h] : at[h] + 6]
        curs = tuple(sorted({low, high} - {None}))
        out[h] = (name, v.NumberShapes(dot, comma, amb, curs, bool(plain)))
    return dates, out


def all_currencies(
    con: Any,
    relation: str,
    numeric: Mapping[str, str],
    types: Mapping[str, str],
    shapes: dict[str, tuple[str, v.NumberShapes]],
) -> None:
    """Every currency of the columns of ``shapes`` (from :func:`read_shapes`) in which the
    scan saw two (its lowest and highest), put in ``shapes``: one scan more, only for a file
    that mixes currencies (``relation``: :func:`shape_sql`'s, over the view ``vals``)."""
    for i, h in enumerate(_texts(numeric, types)):
        name, s = shapes[h]
        if len(s.currencies) < 2:
            continue
        c = f"__c{i}"
        rows = con.execute(
            f"SELECT DISTINCT substr({c}, 2) FROM {relation} "
            f"WHERE length({c}) > 1 AND {c} NOT LIKE 'b%'"
        ).fetchall()
        curs = tuple(sorted(str(r[0]) for r in rows))
        shapes[h] = (name, v.NumberShapes(s.dot, s.comma, s.ambiguous, curs, s.plain, s.typed))


def typable(
    date_header: str | None,
    id_header: str,
    numeric: Mapping[str, str],
    types: Mapping[str, str],
    row: bool = False,
) -> list[tuple[str, str, str]]:
    """``(header, DuckDB type, aggregate)`` of the text columns that DuckDB's CSV reader
    could read typed: the aggregate, over :func:`shape_sql`'s relation, is true when every
    value of the column is that type as written (or missing): the date column
    (``date_header``, None: not this way) all ``yyyy-mm-dd`` (:data:`PLAIN_DAY`), the
    campaign ids all :data:`PLAIN_ID`, a numeric column all :data:`PLAIN` (its
    :func:`number_text` NULL). Such values read typed are the numbers their text is.
    ``row``: the relation has :data:`ROW`."""
    out = []
    if date_header is not None and not _typed_type(types.get(date_header)):
        out.append((date_header, "DATE", 'COALESCE(bool_and("__sd" IS NULL), FALSE)'))
    if not _typed_type(types.get(id_header)):
        x = cell(id_header)
        plain = f"{x} IS NULL OR {_m(x, PLAIN_ID)}"
        if row:
            plain = f"CASE WHEN {ROW} THEN TRUE ELSE {plain} END"
        out.append((id_header, "BIGINT", f"COALESCE(bool_and({plain}), FALSE)"))
    for i, h in enumerate(_texts(numeric, types)):
        out.append((h, "DOUBLE", f"COALESCE(bool_and(__n{i} IS NULL), FALSE)"))
    return out


def _typed_type(kind: str | None) -> bool:
    return kind is not None and kind.upper() != "VARCHAR"


def plain_rules(
    date_header: str, numeric: Mapping[str, str], types: Mapping[str, str], date_format: str | None
) -> v.Rules:
    """The rules :func:`toolkit.stats.values.decide` gives a file of plain values (ISO
    dates, whole numbers and plain decimals), known before its shapes are: a scan may check
    the values by them while it gathers the shapes, and its checks stand when the shapes
    give the same rules."""
    date = v.DateRule("ymd") if date_format is None else v.DateRule("format", date_format)
    typed = {h: bool(NUMERIC_TYPES.match(types.get(h, "VARCHAR"))) for h in numeric}
    return v.Rules(date, {h: v.NumberRule(".", True, typed[h]) for h in numeric})


def number(
    header: str, rule: v.NumberRule, name: str, typed: bool, t: str | None = None
) -> tuple[str, str]:
    """``(value, percent)`` SQL of a numeric column: the value (NULL: not a number; an empty
    value is 0) and whether it is a valid percentage (the value is then / 100); ``t``: the
    SQL of the column's :func:`text`, when already computed.

    A ``plain`` column holds only plain values (empty, whole numbers, plain decimals, once
    stripped): a value as written that DuckDB casts (it skips the blanks it knows) is that
    number, and only the others are stripped."""
    if typed:
        c = f"CAST({quoted(header)} AS DOUBLE)"
        return f"CASE WHEN {c} IS NULL OR isnan({c}) THEN 0.0 ELSE {c} END", "FALSE"
    if rule.plain:
        x = cell(header)
        s = stripped(x)
        rest = f"CASE WHEN {s} = '' THEN 0.0 ELSE TRY_CAST({s} AS DOUBLE) END"
        value = f"COALESCE(TRY_CAST({x} AS DOUBLE), {rest})"
        return f"CASE WHEN {x} IS NULL THEN 0.0 ELSE {value} END", "FALSE"
    t = t or text(header)
    body = _group(t, "\\5\\6")
    digits = f"regexp_replace({body}, {literal(v.DROPPED[rule.decimal])}, '', 'g')"
    if rule.decimal == ",":
        digits = f"replace({digits}, ',', '.')"
    currencies = "'', '$', '€', '£'" if name in v.MONEY else "''"
    marks = _group(t, "\\1\\2\\4\\9")
    sign = (
        f"CASE {marks} WHEN '' THEN 1.0 WHEN '+' THEN 1.0 WHEN '-' THEN -1.0 "
        "WHEN '\u2212' THEN -1.0 WHEN '()' THEN -1.0 END"
    )
    pct = f"{_group(t, chr(92) + '8')} = '%'"
    valid = (
        f"{_m(t, v.NUMBER)} AND {_m(body, v.DOT_BODY if rule.decimal == '.' else v.COMMA_BODY)}"
        f" AND {_group(t, chr(92) + '3' + chr(92) + '7')} IN ({currencies})"
    )
    value = (
        f"CASE WHEN {t} = '' THEN 0.0 WHEN {valid} THEN {sign} * TRY_CAST({digits} AS DOUBLE)"
        f" / CASE WHEN {pct} THEN 100.0 ELSE 1.0 END END"
    )
    return value, f"({t} <> '' AND {_m(t, v.NUMBER)} AND {pct})"


def bad_number(n: str, percent: str, name: str) -> str:
    """SQL true on a value of the frame's column ``name`` that is not one (message:
    :func:`toolkit.stats.values.message`); ``n`` and ``percent`` as :func:`number` gives."""
    cond = f"{n} IS NULL OR NOT isfinite({n})"
    if name not in v.SIGNED:
        cond += f" OR {n} < 0"
    if name in ("impressions", "clicks"):
        cond += f" OR {n} <> floor({n}) OR {n} >= {v.COUNT_LIMIT}"
    return f"NOT COALESCE({percent} AND {n} IS NOT NULL, FALSE) AND ({cond})"


def is_percent(n: str, percent: str) -> str:
    """SQL true on a valid percentage (message :data:`toolkit.stats.values.PERCENTAGE`)."""
    return f"COALESCE({percent} AND {n} IS NOT NULL, FALSE)"


def campaign_id(header: str, ctype: str, row: bool = False) -> str:
    """SQL of a campaign id (BIGINT; NULL: not an id): digits, 1 to 2**63 - 1, exact;
    ``row``: the relation has :data:`ROW` (a plain row's id is :data:`PLAIN_ID`)."""
    c = quoted(header)
    if INTEGER_TYPES.match(ctype):
        return f"CASE WHEN {c} >= 1 AND {c} <= {v.ID_MAX} THEN CAST({c} AS BIGINT) END"
    if NUMERIC_TYPES.match(ctype):
        d = f"CAST({c} AS DOUBLE)"
        return (
            f"CASE WHEN isfinite({d}) AND {d} = floor({d}) AND {d} >= 1 AND "
            f"{d} < {v.COUNT_LIMIT} THEN CAST({d} AS BIGINT) END"
        )
    x, t = cell(header), text(header)
    digits = f"regexp_replace({t}, '\\.0+$', '')"
    first = f"WHEN {ROW} THEN CAST({x} AS BIGINT) " if row else ""
    return (
        f"CASE {first}WHEN {_m(x, PLAIN_ID)} THEN CAST({x} AS BIGINT) "
        f"WHEN {_m(t, v.ID)} AND TRY_CAST({digits} AS BIGINT) >= 1 "
        f"THEN TRY_CAST({digits} AS BIGINT) END"
    )


def date(header: str, rule: v.DateRule, t: str | None = None) -> str:
    """SQL of a date (TIMESTAMP, the wall time as written; NULL: not a date); ``t``: the
    SQL of the column's :func:`date_text`, when already computed."""
    t, x = t or date_text(header), cell(header)
    if rule.refused:
        return "CAST(NULL AS TIMESTAMP)"
    if rule.order == "format":
        dropped = f"regexp_replace(COALESCE({t}, {x}), {literal(v.ZONE_AFTER_TIME)}, '\\1')"
        return f"try_strptime({dropped}, {literal(rule.fmt or '')})"
    cases = [f"WHEN {t} IS NULL THEN TRY_CAST({x} AS TIMESTAMP)"]
    for order in dict.fromkeys(("ymd", rule.order)):  # year first in any file
        pattern, canonical = v.CANONICAL[order]
        cases.append(
            f"WHEN {_m(t, pattern)} THEN TRY_CAST(regexp_replace({t}, {literal(pattern)}, "
            f"{literal(canonical)}) AS TIMESTAMP)"
        )
    return f"CASE {' '.join(cases)} END"


def date_text(header: str, row: bool = False) -> str:
    """The date column's :func:`text`, but NULL for a ``yyyy-mm-dd`` as written (it is its
    own text, and it is read without a pattern); ``row``: the relation has :data:`ROW`."""
    x = cell(header)
    first = f"WHEN {ROW} THEN NULL " if row else ""
    return f"CASE {first}WHEN {x} IS NULL OR NOT {_m(x, PLAIN_DAY)} THEN {stripped(x)} END"


__all__ = [
    "PLAIN",
    "ROW",
    "PLAIN_DAY",
    "PLAIN_ID",
    "all_currencies",
    "bad_number",
    "campaign_id",
    "cell",
    "column_types",
    "date",
    "date_text",
    "is_percent",
    "literal",
    "number",
    "number_class",
    "number_text",
    "plain_row",
    "plain_rules",
    "quoted",
    "read_shapes",
    "shape_sql",
    "stripped",
    "text",
    "typable",
]
