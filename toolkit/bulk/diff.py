"""Three-way comparison of a table: desired (edited) against base (exported) and live.

A row is keyed by the table's key columns and carries an optional value (a bid). For each
key the states are compared:

- desired equals base: the user did not touch it, nothing to do (whatever live says);
- live equals base: live is unchanged since export, so the change is live -> desired;
- live equals desired: already done;
- otherwise live changed since export on the same key: a *conflict*, left out unless the
  caller says which side wins (``prefer="desired"`` applies the edit, ``"live"`` keeps live).

Without a base (an action workbook, or a plain DataFrame), desired is compared with live.

>>> d = {(1, "US"): 0.5}
>>> b = {(1, "US"): 0.4}
>>> l = {(1, "US"): 0.4}
>>> three_way(d, b, l)[0]
[Change(key=(1, 'US'), old=0.4, new=0.5)]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

ABSENT: Any = object()  # marks a key that is not in a table


@dataclass(frozen=True)
class Change:
    """``key`` goes from ``old`` (live) to ``new`` (desired); ABSENT means not present."""

    key: tuple[Hashable, ...]
    old: Any
    new: Any

    @property
    def is_add(self) -> bool:
        return self.old is ABSENT and self.new is not ABSENT

    @property
    def is_drop(self) -> bool:
        return self.new is ABSENT and self.old is not ABSENT


@dataclass(frozen=True)
class Conflict:
    """Live changed since export on a key the user also changed."""

    key: tuple[Hashable, ...]
    base: Any
    live: Any
    desired: Any


def as_map(
    df: pd.DataFrame | None, key: Iterable[str], value: str | None = None
) -> dict[tuple[Hashable, ...], Any]:
    """``{key tuple: value}`` of a table (value ``True`` when the table has no value column)."""
    if df is None or df.empty:
        return {}
    cols = list(key)
    keys = zip(*(_plain(df[c]) for c in cols), strict=True)
    if value is None:
        return dict.fromkeys(keys, True)
    return dict(zip(keys, _plain(df[value]), strict=True))


def _plain(series: pd.Series) -> list[Any]:
    """Python values (never numpy scalars), missing ones as None."""
    return series.astype(object).where(series.notna(), None).tolist()


def same(a: Any, b: Any) -> bool:
    """Whether two values are the same for the diff: floats within a relative 1e-9, ABSENT
    only equal to ABSENT, anything else by ``==``."""
    if a is ABSENT or b is ABSENT:
        return a is b
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b


def three_way(
    desired: Mapping[tuple[Hashable, ...], Any],
    base: Mapping[tuple[Hashable, ...], Any] | None,
    live: Mapping[tuple[Hashable, ...], Any],
    prefer: str | None = None,
) -> tuple[list[Change], list[Conflict]]:
    """Changes to make (live -> desired) and conflicts, in key order of first appearance."""
    changes: list[Change] = []
    conflicts: list[Conflict] = []
    keys = dict.fromkeys(desired)
    keys.update(dict.fromkeys(live))
    if base is not None:
        keys.update(dict.fromkeys(base))
    for key in keys:
        d = desired.get(key, ABSENT)
        l_ = live.get(key, ABSENT)
        if base is None:
            if not same(d, l_):
                changes.append(Change(key, l_, d))
            continue
        b = base.get(key, ABSENT)
        if same(d, b) or same(l_, d):
            continue
        if same(l_, b):
            changes.append(Change(key, l_, d))
            continue
        conflicts.append(Conflict(key, b, l_, d))
        if prefer == "desired":
            changes.append(Change(key, l_, d))
    return changes, conflicts


# --------------------------------------------------------------------------- vectorised


def changed_rows(
    desired: pd.DataFrame,
    base: pd.DataFrame,
    key: Sequence[str],
    values: Sequence[str] = (),
    *,
    group: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of the rows of ``desired`` and of ``base`` that may differ, vectorised.

    Every key :func:`three_way` finds changed (or in conflict) between the two has a marked
    row on one side or the other: the marks are a superset (floats compare exactly here,
    within a tolerance there). A row is left unmarked when its exact twin is on the other
    side (key and ``values`` equal, missing equal to missing) and its key is on neither side
    twice. A column missing from ``base`` counts as empty.

    ``group``, a key column (the campaign): the two tables are first compared row by row
    from the top and from the bottom, and only the groups with a row between the equal head
    and tail are compared as sets (an edit in Excel changes a few rows in place, or inserts
    or deletes some); the rows of the other groups are left unmarked, for a key of theirs
    has every occurrence in the equal head and tail, so the same value on both sides.

    >>> d = pd.DataFrame({"campaign_id": [1, 2], "country": ["US", "FR"], "bid": [0.5, 0.2]})
    >>> b = pd.DataFrame({"campaign_id": [1, 2], "country": ["US", "FR"], "bid": [0.4, 0.2]})
    >>> [m.tolist() for m in changed_rows(d, b, ["campaign_id", "country"], ["bid"])]
    [[True, False], [True, False]]
    """
    n_d, n_b = len(desired), len(base)
    if not n_d or not n_b:
        return np.ones(n_d, dtype=bool), np.ones(n_b, dtype=bool)
    columns = [*key, *values]
    pairs = [(_column(desired, c), _column(base, c)) for c in columns]
    if n_d == n_b and all(d.equals(b) for d, b in pairs):
        return np.zeros(n_d, dtype=bool), np.zeros(n_b, dtype=bool)
    if group is not None:
        rows_d, rows_b = _groups_between(pairs, columns.index(group), n_d, n_b)
        if rows_d is not None and rows_b is not None:
            sub = [
                (d[rows_d].reset_index(drop=True), b[rows_b].reset_index(drop=True))
                for d, b in pairs
            ]
            marks_d, marks_b = _marks(sub, len(key))
            out_d, out_b = np.zeros(n_d, dtype=bool), np.zeros(n_b, dtype=bool)
            out_d[rows_d] = marks_d
            out_b[rows_b] = marks_b
            return out_d, out_b
    return _marks(pairs, len(key))


def _marks(
    pairs: Sequence[tuple[pd.Series, pd.Series]], n_key: int
) -> tuple[np.ndarray, np.ndarray]:
    """The rows whose key and values are not on the other side, or whose key is repeated."""
    n_d = len(pairs[0][0])
    keys = _codes(pairs[:n_key])
    rows = _codes(pairs[n_key:], keys)
    d_rows, b_rows = pd.Series(rows[:n_d]), pd.Series(rows[n_d:])
    marked_d = ~d_rows.isin(b_rows).to_numpy()
    marked_b = ~b_rows.isin(d_rows).to_numpy()
    d_keys, b_keys = pd.Series(keys[:n_d]), pd.Series(keys[n_d:])
    repeated = np.union1d(
        d_keys[d_keys.duplicated(keep=False)].unique(),
        b_keys[b_keys.duplicated(keep=False)].unique(),
    )
    if len(repeated):
        marked_d |= d_keys.isin(repeated).to_numpy()
        marked_b |= b_keys.isin(repeated).to_numpy()
    return marked_d, marked_b


def _groups_between(
    pairs: Sequence[tuple[pd.Series, pd.Series]], at: int, n_d: int, n_b: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Masks of the rows (on each side) of the groups that have a row between the head and
    the tail the two tables share row by row; ``None`` when that cannot be told (columns of
    different dtypes, a missing group) or would not narrow anything."""
    most = min(n_d, n_b)
    head = tail = most
    for d, b in pairs:
        if d.dtype != b.dtype:
            return None, None
        head = min(head, _equal_run(d.iloc[:head], b.iloc[:head]))
    for d, b in pairs:
        tail = min(tail, most - head)
        tail = min(tail, _equal_run(d.iloc[n_d - tail :][::-1], b.iloc[n_b - tail :][::-1]))
    d_group, b_group = pairs[at]
    between = pd.concat([d_group.iloc[head : n_d - tail], b_group.iloc[head : n_b - tail]])
    if between.isna().any():
        return None, None
    groups = between.unique()
    if len(groups) * 2 > d_group.nunique():
        return None, None
    return d_group.isin(groups).to_numpy(), b_group.isin(groups).to_numpy()


def _equal_run(d: pd.Series, b: pd.Series) -> int:
    """How many leading rows of ``d`` and ``b`` are equal (missing equal to missing)."""
    if not len(d):
        return 0
    d, b = d.reset_index(drop=True), b.reset_index(drop=True)
    equal = d.eq(b)
    ok = equal.fillna(False).to_numpy(dtype=bool) | (d.isna().to_numpy() & b.isna().to_numpy())
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if len(bad) else len(ok)


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    """A column with a fresh range index (all missing when the table has no such column)."""
    if name in df.columns:
        return df[name].reset_index(drop=True)
    return pd.Series([None] * len(df), dtype=object)


def _codes(
    pairs: Sequence[tuple[pd.Series, pd.Series]], start: np.ndarray | None = None
) -> np.ndarray:
    """One integer per row of desired then base: equal integers for equal tuples of values
    (missing equal to missing), :func:`pandas.factorize` over both sides at once."""
    out = start
    for d, b in pairs:
        if d.dtype != b.dtype:  # compared as Python values, as :func:`as_map` does
            d, b = d.astype(object), b.astype(object)
        both = pd.concat([d, b], ignore_index=True)
        codes, uniques = pd.factorize(both, use_na_sentinel=True)
        codes = codes.astype(np.int64) + 1  # missing is 0
        width = len(uniques) + 1
        if out is None:
            out = codes
            continue
        if int(out.max()) >= (2**62) // width:
            out = pd.factorize(out)[0].astype(np.int64)
        out = out * width + codes
    assert out is not None
    return out
