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

from .key_codes import dense_codes


def changed_rows(
    desired: pd.DataFrame,
    base: pd.DataFrame,
    key: Sequence[str],
    values: Sequence[str] = (),
    *,
    group: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The masks of :func:`coded_changed_rows` (without the codes)."""
    return coded_changed_rows(desired, base, key, values, group=group)[:2]


def coded_changed_rows(
    desired: pd.DataFrame,
    base: pd.DataFrame,
    key: Sequence[str],
    values: Sequence[str] = (),
    *,
    group: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
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

    Third, the key codes (:func:`~toolkit.bulk.key_codes.joint_codes`) of the rows of
    ``desired`` then ``base`` compared as sets (-1 for the others), or None when none were.

    >>> d = pd.DataFrame({"campaign_id": [1, 2], "country": ["US", "FR"], "bid": [0.5, 0.2]})
    >>> b = pd.DataFrame({"campaign_id": [1, 2], "country": ["US", "FR"], "bid": [0.4, 0.2]})
    >>> [m.tolist() for m in coded_changed_rows(d, b, ["campaign_id", "country"], ["bid"])[:2]]
    [[True, False], [True, False]]
    """
    n_d, n_b = len(desired), len(base)
    if not n_d or not n_b:
        return np.ones(n_d, dtype=bool), np.ones(n_b, dtype=bool), None
    columns = [*key, *values]
    pairs = [(_column(desired, c), _column(base, c)) for c in columns]
    if n_d == n_b and all(d.equals(b) for d, b in pairs):
        return np.zeros(n_d, dtype=bool), np.zeros(n_b, dtype=bool), None
    ends = _equal_ends(pairs, n_d, n_b)
    if group is not None and ends is not None:
        rows_d, rows_b = _groups_between(pairs, columns.index(group), n_d, n_b, ends)
        if rows_d is not None and rows_b is not None:
            sub = [
                (d[rows_d].reset_index(drop=True), b[rows_b].reset_index(drop=True))
                for d, b in pairs
            ]
            marks_d, marks_b, sub_codes = _marks(sub, len(key))
            out_d, out_b = np.zeros(n_d, dtype=bool), np.zeros(n_b, dtype=bool)
            out_d[rows_d] = marks_d
            out_b[rows_b] = marks_b
            codes = np.full(n_d + n_b, -1, dtype=np.int64)
            codes[np.r_[rows_d, rows_b]] = sub_codes
            return out_d, out_b, codes
    return _marks(pairs, len(key), ends)


def _marks(
    pairs: Sequence[tuple[pd.Series, pd.Series]],
    n_key: int,
    ends: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows whose key and values are not on the other side, or whose key is repeated;
    and the key codes of the rows, desired then base. ``ends``: how many rows at the head
    and at the tail the two sides share row by row (those of base are not coded again)."""
    n_d, n_b = len(pairs[0][0]), len(pairs[0][1])
    head, tail = ends or (0, 0)
    coded = [(d, b.iloc[head : n_b - tail].reset_index(drop=True)) for d, b in pairs]
    # equal for equal keys, desired then base; dense, in order of first appearance
    keys = dense_codes(coded[:n_key])
    rows = dense_codes(coded[n_key:], keys) if len(pairs) > n_key else keys
    keys, rows = (_with_ends(c, n_d, head, tail) for c in (keys, rows))
    on_d, on_b = _counts(rows, n_d)
    marked_d = on_b[rows[:n_d]] == 0
    marked_b = on_d[rows[n_d:]] == 0
    in_d, in_b = _counts(keys, n_d)
    repeated = (in_d > 1) | (in_b > 1)
    if repeated.any():
        marked_d |= repeated[keys[:n_d]]
        marked_b |= repeated[keys[n_d:]]
    return marked_d, marked_b, keys


def _with_ends(codes: np.ndarray, n_d: int, head: int, tail: int) -> np.ndarray:
    """The codes of desired and of the rows of base between its equal ``head`` and
    ``tail``, made the codes of desired and of all of base (those rows are desired's
    twins, so still dense in order of first appearance)."""
    if not head and not tail:
        return codes
    d = codes[:n_d]
    return np.concatenate([d, d[:head], codes[n_d:], d[n_d - tail :]])


def _counts(codes: np.ndarray, n_d: int) -> tuple[np.ndarray, np.ndarray]:
    """Per dense code, how many rows of desired (the first ``n_d``) and of base hold it."""
    size = int(codes.max()) + 1 if len(codes) else 0
    return (
        np.bincount(codes[:n_d], minlength=size),
        np.bincount(codes[n_d:], minlength=size),
    )


def _equal_ends(
    pairs: Sequence[tuple[pd.Series, pd.Series]], n_d: int, n_b: int
) -> tuple[int, int] | None:
    """How many rows at the head and at the tail the two tables share row by row (every
    column equal, missing equal to missing); None when columns differ in dtype."""
    most = min(n_d, n_b)
    head = tail = most
    for d, b in pairs:
        if d.dtype != b.dtype:
            return None
        head = min(head, _equal_run(d.iloc[:head], b.iloc[:head]))
    for d, b in pairs:
        tail = min(tail, most - head)
        tail = min(tail, _equal_run(d.iloc[n_d - tail :][::-1], b.iloc[n_b - tail :][::-1]))
    return head, tail


def _groups_between(
    pairs: Sequence[tuple[pd.Series, pd.Series]],
    at: int,
    n_d: int,
    n_b: int,
    ends: tuple[int, int],
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Masks of the rows (on each side) of the groups that have a row between the head and
    the tail (``ends``) the two tables share row by row; ``None`` when that cannot be told
    (a missing group) or would not narrow anything."""
    head, tail = ends
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


__all__ = ["changed_rows", "coded_changed_rows"]
