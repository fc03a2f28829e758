"""Totals rows of tracker exports: the row of sums a tracker (or a user in Excel) adds at the
end of a report. It is no item's statistics; read as one it would double every sum, so it is
left out, and the read says so.

A totals row is one whose key, date or campaign cell says ``Total``, ``Totals``, ``Grand
total``, ``Итого`` or ``Всего`` (any case, a trailing colon allowed), or one whose key and
date cells are all empty while it holds numbers (the sums).

>>> import pandas as pd
>>> raw = pd.DataFrame({"Date": ["2026-01-01", "Total", ""], "Zone": ["z1", "", ""],
...                     "Cost": ["1.5", "1.5", ""]})
>>> totals_rows(raw, labels=["Date", "Zone"], keys=["Date", "Zone"], metrics=["Cost"])
[(1, "totals row ('Total' in Date)")]
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: A cell that names a totals row (matched case-insensitively, the whole cell).
PATTERN = r"(?:grand\s+)?totals?:?|итого:?|всего:?"
SUMS_ONLY = "totals row (no date or key, only sums)"


def trimmed(raw: pd.Series, chars: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, text)`` of a column: its distinct cells as text stripped of ``chars``
    (default: white space), each stripped once and each stripped value once (a missing
    cell is ``""``), and per row the position of its cell in ``text``.

    >>> codes, text = trimmed(pd.Series([" a", None, "a ", " a"]))
    >>> text.tolist(), text[codes].tolist()
    (['a', ''], ['a', '', 'a', 'a'])
    """
    text_cells = isinstance(raw.dtype, pd.StringDtype) or (
        raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=True) == "string"
    )
    if not text_cells:  # 1, 1.0 and True are one value to a hash table, three cells as text
        raw = raw.where(raw.isna(), raw.astype(str))
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)  # Arrow's own for its strings
    cells = np.asarray(uniques, dtype=object)
    text = pd.Series(cells, dtype=object).str.strip(chars).to_numpy(dtype=object)
    missing = bool((codes < 0).any())
    if not missing and (text == cells).all():  # distinct already
        return codes, text
    text = np.append(text, "") if missing else text  # code -1 (missing): the last
    again, distinct = pd.factorize(text)  # " a" and "a " are "a"
    return again[codes], np.asarray(distinct, dtype=object)


def empty_cells(raw: pd.Series) -> np.ndarray:
    """Per row, whether the cell is empty or blank."""
    codes, text = trimmed(raw)
    return (text == "")[codes]


def totals_rows(
    raw: pd.DataFrame, labels: Sequence[str], keys: Sequence[str], metrics: Sequence[str]
) -> list[tuple[int, str]]:
    """``(row position, reason)`` of the totals rows of ``raw``: ``labels`` are the headers
    whose cell may say "Total", ``keys`` those that are all empty in a row of sums, and
    ``metrics`` those that hold the sums."""
    n = len(raw)
    reasons = np.full(n, None, dtype=object)
    for h in labels:
        codes, text = trimmed(raw[h])
        hit = pd.Series(text).str.fullmatch(PATTERN, case=False).to_numpy(dtype=bool)
        for i in np.flatnonzero(hit[codes] & pd.isna(reasons)):
            reasons[i] = f"totals row ({text[codes[i]]!r} in {h})"
    if keys and metrics:
        empty = np.all([empty_cells(raw[h]) for h in keys], axis=0)
        sums = np.any([~empty_cells(raw[h]) for h in metrics], axis=0)
        for i in np.flatnonzero(empty & sums & pd.isna(reasons)):
            reasons[i] = SUMS_ONLY
    return [(int(i), str(reasons[i])) for i in np.flatnonzero(pd.notna(reasons))]


def trimmed_sql(header: str) -> str:
    """SQL of a column's cell as trimmed text (NULL for a missing one)."""
    return 'TRIM(CAST("' + header.replace('"', '""') + '" AS VARCHAR))'


def totals_sql(
    labels: Sequence[str],
    keys: Sequence[str],
    metrics: Sequence[str],
    typed: Collection[str] = (),
) -> str:
    """SQL giving a totals row's reason (NULL for any other row), as :func:`totals_rows`;
    ``typed``: the columns that hold numbers or dates (a Parquet file's), never a label."""
    cases = []
    for h in labels:
        if h in typed:  # a number or a date is never "Total": no pattern to try on it
            continue
        cell = trimmed_sql(h)
        quoted = h.replace("'", "''")
        cases.append(
            f"WHEN regexp_full_match(COALESCE({cell}, ''), '{PATTERN}', 'i') "
            f"THEN 'totals row (''' || {cell} || ''' in {quoted})'"
        )
    if keys and metrics:
        empty = " AND ".join(f"COALESCE({trimmed_sql(h)}, '') = ''" for h in keys)
        sums = " OR ".join(f"COALESCE({trimmed_sql(h)}, '') <> ''" for h in metrics)
        cases.append(f"WHEN ({empty}) AND ({sums}) THEN '{SUMS_ONLY}'")
    return f"CASE {' '.join(cases)} END" if cases else "NULL"


def note(skipped: Sequence[tuple[int, Any]], where: str | None) -> str:
    """The line a read prints about its skipped rows.

    >>> note([(42, "totals row ('Total' in Date)")], "s.csv")
    's.csv: skipped 1 totals row (line 42)'
    """
    n = len(skipped)
    more = f" and {n - 5} more" if n > 5 else ""
    lines = ", ".join(str(line) for line, _ in skipped[:5]) + more
    rows, at = ("row", "line") if n == 1 else ("rows", "lines")
    return f"{where or 'statistics'}: skipped {n} totals {rows} ({at} {lines})"


__all__ = ["PATTERN", "empty_cells", "note", "totals_rows", "totals_sql", "trimmed", "trimmed_sql"]
