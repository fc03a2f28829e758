"""How trackers write values, and one set of rules to read them, for pandas and for DuckDB.

A tracker's UI exports numbers as its locale shows them (``$1,237.02``, ``€12,50``,
``1 234``, ``($15.00)``) and dates in its own order (``05/01/2026``). Nothing is guessed:

1. the *shapes* of each column's values are gathered in one scan (:func:`number_shapes`,
   :func:`date_shapes` on pandas; :func:`number_shapes_sql`, :func:`date_shapes_sql` in
   DuckDB), so a column's convention is decided in Python from what the column holds;
2. :func:`decide` turns the shapes into one :class:`Rules` per file (the decimal separator
   of each numeric column, the file's date order) and the problems of the file: a column
   whose values could mean two things is refused in one line saying how to choose;
3. the same normalisation is applied by pandas string operations (:func:`numbers`,
   :func:`dates`, :func:`campaign_ids`) and by the equivalent SQL (:mod:`.values_sql`).

>>> parse_number("$1,237.02"), parse_number("($15.00)"), parse_number("€12,50")
(1237.02, -15.0, 12.5)
>>> parse_number("1 234"), parse_number("12.5%"), parse_number("1,234", decimal=",")
(1234.0, 0.125, 1.234)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import StatsProblem
from .totals import trimmed

#: Counts are whole numbers below this (a float holds every whole number below it exactly).
COUNT_LIMIT = 2**53
#: The largest campaign id: the service's ids are 64-bit signed integers.
ID_MAX = 2**63 - 1
#: The columns that may carry a currency sign, and the one that may be negative.
MONEY = ("cost", "revenue")
SIGNED = ("revenue",)
#: Stripped from both ends of every value: spaces, tabs, line ends, no-break spaces.
BLANKS = " \t\r\n\u00a0\u202f"

# ------------------------------------------------------------------- the value grammar

_GROUPING = "[ \u00a0\u202f'\u2019]"  # only ever a thousands separator
_EXP = "[eE][-+]?[0-9]+"
_CORE = "[0-9][0-9.,' \u00a0\u202f\u2019]*[0-9]|[0-9]|[.,][0-9]+"
_SP = "[ \u00a0]?"
#: A number as written: groups 1 ``(``, 2 sign, 3 currency, 4 sign after the currency,
#: 5 digits and separators, 6 exponent, 7 currency after, 8 ``%``, 9 ``)``.
NUMBER = f"^(\\(?)([-+\u2212]?)([$€£]?)([-\u2212]?){_SP}({_CORE})({_EXP})?{_SP}([$€£]?)(%?)(\\)?)$"
#: The digits of a number (groups 5 and 6 of ``NUMBER``) with ``.`` / ``,`` as decimal.
DOT_BODY = (
    "^([0-9]+|[0-9]*\\.[0-9]+|[1-9][0-9]{0,2}(,[0-9]{3})+(\\.[0-9]+)?"
    f"|[1-9][0-9]{{0,2}}({_GROUPING}[0-9]{{3}})+(\\.[0-9]+)?|[0-9]+(\\.[0-9]+)?{_EXP})$"
)
COMMA_BODY = (
    "^([0-9]+|[0-9]*,[0-9]+|[1-9][0-9]{0,2}(\\.[0-9]{3})+(,[0-9]+)?"
    f"|[1-9][0-9]{{0,2}}({_GROUPING}[0-9]{{3}})+(,[0-9]+)?|[0-9]+{_EXP})$"
)
#: Digits read differently with either decimal separator (``1,234``: 1234 or 1.234).
AMBIGUOUS_BODY = "^[1-9][0-9]{0,2}[.,][0-9]{3}$"
#: What each decimal separator leaves out of the digits before they are cast.
DROPPED = {".": "[,' \u00a0\u202f\u2019]", ",": "[.' \u00a0\u202f\u2019]"}
#: Values cast as they are: whole numbers and plain decimals that are not ambiguous.
PLAIN_INT = "^-?[0-9]+$"
PLAIN_DOT = "^-?[0-9]*\\.[0-9]+$"
PLAIN_AMBIGUOUS = "^-?[1-9][0-9]{0,2}\\.[0-9]{3}$"
#: A campaign id: digits (a float's ``.0`` allowed), no separators.
ID = "^[0-9]+(\\.0+)?$"

_TIME = "((?:[T ](?:[01]?[0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,6})?)?)?)"
_ZONE = "(?: ?(?:Z|UTC|[+-][0-9]{2}(?::?[0-9]{2})?))?"
#: Year first (ISO 8601, ``2026-01-05T00:30:00+03:00``): groups year, month, day, time.
DATE_YMD = f"^([0-9]{{4}})[-/.]([0-9]{{1,2}})[-/.]([0-9]{{1,2}}){_TIME}{_ZONE}$"
#: Day or month first (``05/01/2026 10:30``): groups first part, second part, year, time.
DATE_XY = f"^([0-9]{{1,2}})[-/.]([0-9]{{1,2}})[-/.]([0-9]{{4}}){_TIME}{_ZONE}$"
#: A zone offset after a time, dropped before ``date_format`` reads the value.
ZONE_AFTER_TIME = (
    "([0-9]:[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]+)?)?) ?(?:Z|UTC|[+-][0-9]{2}(?::?[0-9]{2})?)$"
)
#: The canonical ``year-month-day[ time]`` of each date order, from its pattern's groups.
CANONICAL = {"ymd": (DATE_YMD, "\\1-\\2-\\3\\4"), "dmy": (DATE_XY, "\\3-\\2-\\1\\4"),
             "mdy": (DATE_XY, "\\3-\\1-\\2\\4")}  # fmt: skip

# ------------------------------------------------------------------- messages

NOT_A_DATE = "not a date"
NOT_AN_ID = "not a campaign id (a whole number from 1 to 2**63 - 1)"
NOT_A_COUNT = "not a count (a whole number from 0 to 2**53 - 1)"
NOT_AN_AMOUNT = "not an amount (a number >= 0)"
NOT_A_NUMBER = "not a number"
PERCENTAGE = "a percentage: this column takes counts or amounts, not rates"
DATES_MIXED = (
    "the dates look day-first and month-first (a first part over 12 in some, a second part "
    "over 12 in others): fix the file, or pass date_format= (--date-format) to read one order"
)
DATES_AMBIGUOUS = (
    "every date could be day-first or month-first: pass date_format= (--date-format), "
    'e.g. date_format="%d/%m/%Y" or date_format="%m/%d/%Y"'
)
DECIMAL_AMBIGUOUS = (
    "the values could have thousands separators or decimal commas (1,234 is 1234 or 1.234), "
    'and no other column settles it: pass decimal="." or decimal="," (--decimal)'
)
DECIMAL_MIXED = "mixes decimal points and decimal commas (like 1,234.5 and 12,50)"
DECIMAL_CONFLICT = "the values' decimal separator is not the one decimal= gives"
CURRENCIES = "mixes currencies"


def message(name: str) -> str:
    """The problem message of a bad value of the frame's column ``name``."""
    if name == "campaign_id":
        return NOT_AN_ID
    if name in ("impressions", "clicks"):
        return NOT_A_COUNT
    return NOT_A_NUMBER if name in SIGNED else NOT_AN_AMOUNT


def date_format_message(date_format: str) -> str:
    """The message of a value that ``date_format`` does not read."""
    return f"not a date in date_format {date_format!r}"


# ------------------------------------------------------------------- shapes and rules


@dataclass
class NumberShapes:
    """What a numeric column holds: an example value of each kind that settles (or leaves
    open) its decimal separator, the currency signs seen, and whether every value is plain
    (empty, a whole number or a plain decimal: cast as it is once the separator is a
    point)."""

    dot: str | None = None
    comma: str | None = None
    ambiguous: str | None = None
    currencies: tuple[str, ...] = ()
    plain: bool = True
    typed: bool = False


@dataclass
class DateShapes:
    """Examples of the dates written day or month first: a first part over 12, a second
    part over 12, and both parts 12 or under."""

    day_first: str | None = None
    month_first: str | None = None
    ambiguous: str | None = None


@dataclass(frozen=True)
class NumberRule:
    """How one numeric column is read: its decimal separator, cast as it is (``plain``),
    already numbers (``typed``), or refused (no value of it is checked)."""

    decimal: str = "."
    plain: bool = True
    typed: bool = False
    refused: bool = False


@dataclass(frozen=True)
class DateRule:
    """How the file's dates are read: ``order`` ``ymd``, ``dmy`` or ``mdy``, or ``format``
    (a strptime ``fmt``); ``refused``: no date of it is checked."""

    order: str = "ymd"
    fmt: str | None = None
    refused: bool = False


@dataclass
class Rules:
    """The decisions of one file: the date rule, a rule per numeric header, and the problems
    of the whole file (line ``None``)."""

    date: DateRule
    numbers: dict[str, NumberRule]
    problems: list[StatsProblem] = field(default_factory=list)


def check_options(date_format: str | None, decimal: str | None) -> None:
    """Refuse a ``decimal`` other than ``"."`` / ``","``, and a ``date_format`` with a zone
    (``%z``, ``%Z``: the day is read as written, an offset after the time is dropped)."""
    if decimal is not None and decimal not in (".", ","):
        raise ValueError(f'decimal must be "." or ",", not {decimal!r}')
    if date_format is not None and ("%z" in date_format or "%Z" in date_format):
        raise ValueError(
            f"date_format {date_format!r}: leave the zone out (%z, %Z); the day is read as "
            "written and an offset after the time is dropped"
        )


def decide(
    date_header: str,
    date_shapes: DateShapes | None,
    numbers: Mapping[str, tuple[str, NumberShapes]],
    *,
    date_format: str | None = None,
    decimal: str | None = None,
) -> Rules:
    """The :class:`Rules` of a file from its shapes: ``numbers`` maps each numeric header to
    ``(frame column, shapes)``. A column settles its own decimal separator; a column that
    only holds ambiguous values takes the one of the file's other columns when they agree,
    else ``decimal``, else it is refused; a ``decimal`` its own values contradict is
    refused. The date order: ``date_format`` when given, else a first part over 12 settles
    day-first and a second part over 12 month-first; both, or neither with dates written
    day or month first, are refused."""
    check_options(date_format, decimal)
    problems: list[StatsProblem] = []
    date = _date_rule(date_header, date_shapes, date_format, problems)
    own = {h: _own(s) for h, (_, s) in numbers.items()}
    settled = {d for o in own.values() if len(o) == 1 for d in o}
    rules = {}
    for h, (name, s) in numbers.items():
        refused = False
        if len(s.currencies) > 1 and name in MONEY:
            problems.append(StatsProblem(None, h, " ".join(s.currencies), CURRENCIES))
            refused = True
        if len(own[h]) == 2:
            problems.append(StatsProblem(None, h, f"{s.dot} / {s.comma}", DECIMAL_MIXED))
            refused = True
        elif decimal is not None and own[h] and own[h] != {decimal}:
            problems.append(StatsProblem(None, h, s.dot or s.comma, DECIMAL_CONFLICT))
            refused = True
        if own[h] and len(own[h]) == 1:
            chosen = next(iter(own[h]))
        elif s.ambiguous is None:
            chosen = "."
        elif decimal is not None or len(settled) == 1:
            chosen = decimal or next(iter(settled))
        else:
            problems.append(StatsProblem(None, h, s.ambiguous, DECIMAL_AMBIGUOUS))
            chosen, refused = ".", True
        plain = s.plain and chosen == "."
        rules[h] = NumberRule(chosen, plain, s.typed, refused)
    return Rules(date, rules, problems)


def _own(s: NumberShapes) -> set[str]:
    return {d for d, ex in ((".", s.dot), (",", s.comma)) if ex is not None}


def _date_rule(
    header: str, s: DateShapes | None, date_format: str | None, problems: list[StatsProblem]
) -> DateRule:
    if date_format is not None:
        return DateRule("format", date_format)
    if s is None or (s.day_first is None and s.month_first is None and s.ambiguous is None):
        return DateRule("ymd")
    if s.day_first is not None and s.month_first is not None:
        problems.append(StatsProblem(None, header, f"{s.day_first} / {s.month_first}", DATES_MIXED))
        return DateRule("ymd", refused=True)
    if s.day_first is not None:
        return DateRule("dmy")
    if s.month_first is not None:
        return DateRule("mdy")
    problems.append(StatsProblem(None, header, s.ambiguous, DATES_AMBIGUOUS))
    return DateRule("ymd", refused=True)


# ------------------------------------------------------------------- pandas


class Column:
    """One column of an export: its values as stripped text, factorized (each distinct
    value is looked at once), and the values that are already numbers (Parquet, XLSX)."""

    def __init__(self, raw: pd.Series) -> None:
        self.n = len(raw)
        self.typed: np.ndarray | None = None  # float64 for every row (NaN: not a number)
        kind = raw.dtype.kind
        if kind in "iuf":
            self.typed = raw.to_numpy(dtype="float64", na_value=np.nan)
            self.is_typed = np.ones(self.n, dtype=bool)
            self.exact = raw if kind in "iu" else None
            text = pd.Series([""] * self.n, dtype=object)
        elif isinstance(raw.dtype, pd.StringDtype):  # a CSV's cells: text, each stripped once
            self.is_typed, self.exact = np.zeros(self.n, dtype=bool), None
            self.codes, distinct = trimmed(raw, BLANKS)
            self.uniques = pd.Series(distinct, dtype=object)
            return
        else:
            obj = raw.astype(object)
            self.is_typed = _numeric_objects(obj)
            self.exact = None
            if self.is_typed.any():
                typed = pd.to_numeric(obj.where(self.is_typed), errors="coerce")
                self.typed = typed.to_numpy(dtype="float64", na_value=np.nan)
            text = obj.where(obj.notna() & ~self.is_typed, "").astype(str).str.strip(BLANKS)
        codes, uniques = pd.factorize(text.to_numpy(dtype=object))
        self.codes = codes
        self.uniques = pd.Series(np.asarray(uniques, dtype=object), dtype=object)

    def take(self, per_unique: Any) -> np.ndarray:
        """Per row, from an array over the distinct values."""
        return np.asarray(per_unique)[self.codes]


def _numeric_objects(obj: pd.Series) -> np.ndarray:
    """Which cells of an object column are numbers (not text), without a loop in Python
    when the column is all text or all numbers."""
    kind = pd.api.types.infer_dtype(obj, skipna=True)
    if kind in ("string", "empty", "datetime", "date", "datetime64"):
        return np.zeros(len(obj), dtype=bool)
    if kind in ("floating", "integer", "mixed-integer-float", "decimal"):
        return obj.notna().to_numpy()
    test = np.frompyfunc(
        lambda x: isinstance(x, (int, float, np.number)) and not isinstance(x, bool), 1, 1
    )
    return test(obj.to_numpy()).astype(bool)


def _classes(u: pd.Series) -> tuple[pd.Series, pd.DataFrame]:
    """Per distinct value: ``e`` empty, ``i`` whole, ``p`` plain decimal, ``q`` a plain
    decimal that could be thousands (``1.234``), ``a`` ambiguous,
    ``n`` the same either way, ``d``/``c`` settles ``.``/``,``, ``b`` not a number; and the
    groups of ``NUMBER``."""
    groups = u.str.extract(NUMBER).fillna("")
    groups.columns = range(1, 10)
    body = groups[5] + groups[6]
    dot = body.str.match(DOT_BODY)
    comma = body.str.match(COMMA_BODY)
    amb = body.str.match(AMBIGUOUS_BODY)
    cls = np.select(
        [
            u == "",
            u.str.match(PLAIN_INT),
            u.str.match(PLAIN_DOT) & ~u.str.match(PLAIN_AMBIGUOUS),
            u.str.match(PLAIN_AMBIGUOUS),
            body == "",
            dot & comma & amb,
            dot & comma,
            dot,
            comma,
        ],
        ["e", "i", "p", "q", "b", "a", "n", "d", "c"],
        "b",
    )
    return pd.Series(cls, index=u.index), groups


def _plain_classes(u: pd.Series) -> np.ndarray | None:
    """:func:`_classes` of distinct values that are all empty or plain (``e``, ``i``,
    ``p``, ``q``), found by RE2 over the whole array at once (a value is stripped, so
    ``$`` means the same to RE2 as to ``re``); None when some value is not plain."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(u.to_numpy(dtype=object), type=pa.string())
    empty = pc.equal(arr, "")
    whole = pc.match_substring_regex(arr, PLAIN_INT)
    dot = pc.match_substring_regex(arr, PLAIN_DOT)
    if not pc.all(pc.or_(empty, pc.or_(whole, dot)), min_count=0).as_py():
        return None
    amb = pc.match_substring_regex(arr, PLAIN_AMBIGUOUS)
    e, i, d, q = (np.asarray(x, dtype=bool) for x in (empty, whole, dot, amb))
    return np.select([e, i, d & ~q, q], ["e", "i", "p", "q"], "b")


def number_shapes(col: Column) -> NumberShapes:
    """The shapes of a numeric column (see :class:`NumberShapes`)."""
    u = col.uniques
    fast = _plain_classes(u)
    if fast is not None:  # every value is plain: no currency, nothing to settle
        cls, cur = pd.Series(fast, index=u.index), pd.Series([], dtype=object)
    else:
        cls, groups = _classes(u)
        cur = (groups[3] + groups[7])[cls.isin(["a", "n", "d", "c"])]

    def first(mask: pd.Series) -> str | None:
        return str(u[mask].min()) if mask.any() else None

    return NumberShapes(
        dot=first(cls.isin(["p", "d"])),
        comma=first(cls == "c"),
        ambiguous=first(cls.isin(["a", "q"])),
        currencies=tuple(sorted(set(cur) - {""})),
        plain=bool(cls.isin(["e", "i", "p", "q"]).all()),
        typed=col.typed is not None and bool(col.is_typed.all()),
    )


def numbers(col: Column, rule: NumberRule, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(values, percent)`` per row: the numbers (NaN where a value is not a number of the
    column ``name``: bad grammar, a currency where no money goes, a sign where no negative
    goes is still a number) and where a value is a valid percentage (its value / 100)."""
    u = col.uniques
    if rule.plain:
        values = pd.to_numeric(u.where(u != "", "0"), errors="coerce").to_numpy(dtype="float64")
        percent = np.zeros(len(u), dtype=bool)
    else:
        values, percent = _general(u, rule.decimal, name in MONEY)
    values, percent = col.take(values), col.take(percent)
    if col.typed is not None:
        typed = np.where(np.isnan(col.typed), 0.0, col.typed)
        values = np.where(col.is_typed, typed, values)
        percent = percent & ~col.is_typed
    return values, percent


def _general(u: pd.Series, decimal: str, money: bool) -> tuple[np.ndarray, np.ndarray]:
    groups = u.str.extract(NUMBER).fillna("")
    groups.columns = range(1, 10)
    body = groups[5] + groups[6]
    valid = body.str.match(DOT_BODY if decimal == "." else COMMA_BODY)
    marks = groups[1] + groups[2] + groups[4] + groups[9]
    sign = marks.map({"": 1.0, "+": 1.0, "-": -1.0, "\u2212": -1.0, "()": -1.0})
    cur = groups[3] + groups[7]
    valid &= cur.isin(["", "$", "€", "£"] if money else [""])
    digits = body.str.replace(DROPPED[decimal], "", regex=True)
    if decimal == ",":
        digits = digits.str.replace(",", ".", regex=False)
    percent = (groups[8] == "%").to_numpy()
    values = pd.to_numeric(digits.where(valid, ""), errors="coerce") * sign
    values = values.to_numpy(dtype="float64") / np.where(percent, 100.0, 1.0)
    values = np.where(u == "", 0.0, values)
    return values, percent & ~np.isnan(values)


def bad_numbers(values: np.ndarray, percent: np.ndarray, name: str) -> tuple[Any, Any]:
    """``(bad, percentage)`` per row: values that are not a number of the column ``name``
    (its message: :func:`message`), and valid percentages (:data:`PERCENTAGE`)."""
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(values)
        if name not in SIGNED:
            bad |= values < 0
        if name in ("impressions", "clicks"):
            bad |= (values % 1 != 0) | (values >= COUNT_LIMIT)
    return bad & ~percent, percent


def campaign_ids(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, bad)`` per row: ids are whole numbers from 1 to :data:`ID_MAX`, read exactly
    (no float in between); a float id must be whole and under 2**53."""
    u = col.uniques
    ok = u.str.match(ID)
    digits = u.str.replace("\\.0+$", "", regex=True).str.lstrip("0")
    ok &= (digits.str.len() < 19) | ((digits.str.len() == 19) & (digits <= str(ID_MAX)))
    ok &= digits != ""
    ids = col.take(digits.where(ok, "1").astype("int64").to_numpy())
    bad = ~col.take(ok.to_numpy())
    if col.typed is not None:
        t = col.typed
        with np.errstate(invalid="ignore"):
            typed_ok = np.isfinite(t) & (t % 1 == 0) & (t >= 1) & (t < COUNT_LIMIT)
        if col.exact is not None:  # integers: exact, up to the 64-bit bound
            exact = col.exact
            typed_ok = (exact.notna() & (exact >= 1)).to_numpy()
            if exact.dtype.kind == "u":
                typed_ok &= (exact <= ID_MAX).to_numpy()
            t = exact.where(pd.Series(typed_ok, index=exact.index), 1).astype("int64").to_numpy()
        ids = np.where(col.is_typed, np.where(typed_ok, t, 1), ids).astype("int64")
        bad = np.where(col.is_typed, ~typed_ok, bad)
    return ids, bad


def date_shapes(col: Column) -> DateShapes:
    """The shapes of the date column (see :class:`DateShapes`)."""
    u = col.uniques
    parts = u.str.extract(DATE_XY)
    first = pd.to_numeric(parts[0], errors="coerce")
    second = pd.to_numeric(parts[1], errors="coerce")

    def example(mask: pd.Series) -> str | None:
        return str(u[mask].min()) if mask.any() else None

    return DateShapes(
        day_first=example((first > 12) & (second <= 12)),
        month_first=example((second > 12) & (first <= 12)),
        ambiguous=example((first <= 12) & (second <= 12)),
    )


def dates(col: Column, rule: DateRule) -> np.ndarray:
    """The dates per row as ``datetime64`` (NaT: not a date): the wall time as written, an
    offset after the time dropped (a tracker's day is the day of its reporting zone)."""
    u = col.uniques
    if rule.order == "format":
        text = u.str.replace(ZONE_AFTER_TIME, "\\1", regex=True)
        got = pd.to_datetime(text, format=rule.fmt, errors="coerce")
    else:  # year first is read in any file; the file's order for the others
        text = pd.Series("", index=u.index, dtype=object)
        for order in dict.fromkeys(("ymd", rule.order)):
            pattern, canonical = CANONICAL[order]
            ok = u.str.match(pattern) & (text == "")
            text = text.where(~ok, u.str.replace(pattern, canonical, regex=True))
        got = pd.to_datetime(text, format="ISO8601", errors="coerce")
    if getattr(got.dt, "tz", None) is not None:
        got = got.dt.tz_localize(None)
    return col.take(got.to_numpy(dtype="datetime64[ns]"))


Flag = tuple[np.ndarray, str, str]


def frame_values(
    raw: pd.DataFrame,
    mapping: Mapping[str, str],
    metrics: tuple[str, ...],
    *,
    date_format: str | None = None,
    decimal: str | None = None,
) -> tuple[dict[str, np.ndarray], list[StatsProblem], list[Flag]]:
    """The values of an export's rows (``mapping``: frame column -> header; ``metrics``: the
    frame's numeric columns): ``(columns, problems of the file, [(bad rows, header,
    message)])``. A column refused as a whole (its problem is among the file's) is not
    checked row by row, and its values are 0."""
    n = len(raw)
    cols = {name: Column(raw[mapping[name]]) for name in ("date", *metrics) if name in mapping}
    shapes = {mapping[m]: (m, number_shapes(cols[m])) for m in metrics if m in cols}
    rules = decide(
        mapping["date"],
        date_shapes(cols["date"]),
        shapes,
        date_format=date_format,
        decimal=decimal,
    )
    out: dict[str, np.ndarray] = {}
    flags: list[Flag] = []
    h = mapping["date"]
    if rules.date.refused:
        out["date"] = np.full(n, np.datetime64("1970-01-01", "ns"))
    else:
        out["date"] = dates(cols["date"], rules.date)
        what = NOT_A_DATE if rules.date.fmt is None else date_format_message(rules.date.fmt)
        flags.append((np.isnat(out["date"]), h, what))
    ids, bad = campaign_ids(Column(raw[mapping["campaign_id"]]))
    out["campaign_id"] = ids
    flags.append((bad, mapping["campaign_id"], NOT_AN_ID))
    for name in metrics:
        h = mapping.get(name, "")
        rule = rules.numbers.get(h)
        if rule is None or rule.refused:
            out[name] = np.zeros(n)
            continue
        values, percent = numbers(cols[name], rule, name)
        bad, pct = bad_numbers(values, percent, name)
        flags += [(bad, h, message(name)), (pct, h, PERCENTAGE)]
        out[name] = np.where(bad | pct, 0.0, values)
    return out, rules.problems, flags


def parse_number(text: str, decimal: str | None = None) -> float:
    """One value as a tracker writes it, by the rules above (``12.5%`` is 0.125); raises
    ValueError for an ambiguous value (``1,234``) without ``decimal``, or for a value that
    is not a number."""
    check_options(None, decimal)
    col = Column(pd.Series([text], dtype=object))
    rules = decide("value", None, {"value": ("revenue", number_shapes(col))}, decimal=decimal)
    if rules.problems:
        raise ValueError(f"{text!r}: {rules.problems[0].message}")
    values, _ = numbers(col, rules.numbers["value"], "revenue")
    if np.isnan(values[0]):
        raise ValueError(f"{text!r}: {NOT_A_NUMBER}")
    return float(values[0])


__all__ = [
    "COUNT_LIMIT",
    "ID_MAX",
    "Column",
    "DateRule",
    "DateShapes",
    "NumberRule",
    "NumberShapes",
    "Rules",
    "campaign_ids",
    "date_shapes",
    "dates",
    "decide",
    "number_shapes",
    "numbers",
    "parse_number",
]
