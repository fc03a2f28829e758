"""The rows of an edited table that may differ from its base, marked over whole columns:
what the planner's scope step (:mod:`toolkit.bulk.plan_scope`) narrows a plan with before
any read.

>>> import pandas as pd
>>> d = pd.DataFrame({"campaign_id": [1, 2], "country": ["US", "FR"], "bid": [0.5, 0.2]})
>>> b = d.assign(bid=[0.4, 0.2])
>>> [m.tolist() for m in changed_rows(d, b, ["campaign_id", "country"], ["bid"])]
[[True, False], [True, False]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .key_codes import joint_codes


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
    keys = joint_codes(pairs[:n_key])  # equal for equal keys, desired then base
    rows = joint_codes(pairs[n_key:], keys)
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


__all__ = ["changed_rows"]
