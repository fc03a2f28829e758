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
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ValidationError

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


def valued(name: str, desired: pd.DataFrame, key: Sequence[str], value: str | None) -> pd.DataFrame:
    """``desired`` as it is, once every row of a table with a value (a bid) has one: a row
    without is a :class:`~toolkit.errors.ValidationError` naming the table, the row and its
    key (the planner would otherwise send an item with no bid).

    >>> rows = pd.DataFrame({"campaign_id": [7, 7], "country": ["US", "FR"],
    ...                      "bid": [0.5, None]})
    >>> valued("countries", rows, ("campaign_id", "country"), "bid")
    Traceback (most recent call last):
    ...
    toolkit.errors.ValidationError: countries: the row of campaign_id 7, country FR has no \
bid (1 row without one); give every row a bid, or leave the row out to drop it
    """
    if value is None or value not in desired or not desired[value].isna().any():
        return desired
    missing = desired[value].isna().to_numpy()
    row = desired.iloc[int(np.flatnonzero(missing)[0])]
    where = ", ".join(f"{k} {row[k]}" for k in key if k in desired)
    raise ValidationError(
        f"{name}: the row of {where} has no {value} ({int(missing.sum())} row"
        f"{'' if missing.sum() == 1 else 's'} without one); give every row a {value}, or leave"
        " the row out to drop it"
    )


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
    keys = _joint_codes(pairs[:n_key])  # equal for equal keys, desired then base
    rows = _joint_codes(pairs[n_key:], keys)
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


# --------------------------------------------------------------------------- three-way, vectorised

#: A change as a tuple, cheaper than a :class:`Change` by the million: key, old, new.
Move = tuple[tuple[Hashable, ...], Any, Any]

#: Above this many rows (desired, base and live together) an item table is diffed by
#: :func:`three_way_frames` instead of :func:`three_way` over dicts.
FRAME_DIFF_ROWS = 20_000


def three_way_frames(
    desired: pd.DataFrame | None,
    base: pd.DataFrame | None,
    live: pd.DataFrame | None,
    key: Sequence[str],
    value: str | None = None,
    prefer: str | None = None,
) -> tuple[list[Move], list[Conflict]] | None:
    """:func:`three_way` of ``as_map(desired)``, ``as_map(base)`` and ``as_map(live)``,
    computed over whole columns; the same changes (as :data:`Move` tuples) and conflicts in
    the same order. ``None``
    when it cannot be told the same way (a table without the key or value columns, a value
    column that is not of floats): then use :func:`three_way`.

    >>> d = pd.DataFrame({"campaign_id": [1, 1], "country": ["US", "FR"], "bid": [0.5, 0.2]})
    >>> b = d.assign(bid=[0.4, 0.2])
    >>> three_way_frames(d, b, b, ["campaign_id", "country"], "bid")[0]
    [((1, 'US'), 0.4, 0.5)]
    """
    sides = [_side(df, key, value) for df in (desired, live, base)]
    if any(s is False for s in sides):
        return None
    frames = [s if isinstance(s, pd.DataFrame) else None for s in sides]
    present = [f for f in frames if f is not None]
    if not present:
        return [], []
    pairs = [[f[c].reset_index(drop=True) for f in present] for c in key]
    codes = pd.factorize(_joint_codes(pairs))[0]  # dense, in order of first appearance
    n_keys = int(codes.max()) + 1 if len(codes) else 0
    states, at = [], 0
    for f in frames:
        size = 0 if f is None else len(f)
        states.append(_state(f, value, codes[at : at + size], n_keys))
        at += size
    d, l_, b = states
    if base is None:
        changed = ~_same(d, l_)
        conflict = np.zeros(n_keys, dtype=bool)
    else:
        skip = _same(d, b) | _same(l_, d)
        moved = ~skip & ~_same(l_, b)
        changed = (~skip & ~moved) | (moved if prefer == "desired" else False)
        conflict = moved
    return _found(present, codes, key, (d, b, l_), changed, conflict, value is not None)


def _found(
    frames: Sequence[pd.DataFrame],
    codes: np.ndarray,
    key: Sequence[str],
    sides: tuple[_State, _State, _State],
    changed: np.ndarray,
    conflict: np.ndarray,
    v: bool,
) -> tuple[list[Move], list[Conflict]]:
    """The changes and conflicts of the keys marked, in key order, as Python values."""
    d, b, l_ = sides
    wanted = np.flatnonzero(changed | conflict)
    keys = _key_tuples(frames, codes, key, wanted)
    at_change = np.flatnonzero(changed[wanted])
    moves = list(
        zip(
            [keys[i] for i in at_change.tolist()],
            _objects(l_, wanted[at_change], v),
            _objects(d, wanted[at_change], v),
            strict=True,
        )
    )
    at_conflict = np.flatnonzero(conflict[wanted])
    picked = wanted[at_conflict]
    conflicts = [
        Conflict(keys[i], *values)
        for i, *values in zip(
            at_conflict.tolist(),
            _objects(b, picked, v),
            _objects(l_, picked, v),
            _objects(d, picked, v),
            strict=True,
        )
    ]
    return moves, conflicts


def table_changes(
    desired: pd.DataFrame | None,
    base: pd.DataFrame | None,
    live: pd.DataFrame | None,
    key: Sequence[str],
    value: str | None = None,
    prefer: str | None = None,
) -> tuple[list[Move], list[Conflict]]:
    """:func:`three_way` of three tables (``base`` None: no base; an empty table: a base
    without rows), its changes as :data:`Move` tuples: over whole columns
    (:func:`three_way_frames`) above :data:`FRAME_DIFF_ROWS` rows, else over dicts; the
    same answer either way."""
    rows = sum(len(t) for t in (desired, base, live) if t is not None)
    if rows > FRAME_DIFF_ROWS:
        found = three_way_frames(desired, base, live, key, value, prefer)
        if found is not None:
            return found
    changes, conflicts = three_way(
        as_map(desired, key, value),
        None if base is None else as_map(base, key, value),
        as_map(live, key, value),
        prefer,
    )
    return [(c.key, c.old, c.new) for c in changes], conflicts


_State = tuple[np.ndarray, np.ndarray, np.ndarray]  # present, missing value, value


def _side(df: pd.DataFrame | None, key: Sequence[str], value: str | None) -> Any:
    """The table as the diff reads it: None when empty, False when it cannot be read here."""
    if df is None or df.empty:
        return None
    if any(c not in df.columns for c in key):
        return False
    floats = value is None or (
        value in df.columns and str(df[value].dtype) in ("float64", "Float64")
    )
    return df if floats else False


def _joint_codes(
    pairs: Sequence[Sequence[pd.Series]], start: np.ndarray | None = None
) -> np.ndarray:
    """One integer per row of the sides one after the other: equal for equal keys, as a
    dict of Python values tells them (missing equal to missing); ``start``: codes to extend."""
    out = start
    for parts in pairs:
        codes, width = _factorize(parts)
        if out is None:
            out = codes
            continue
        if int(out.max()) >= (2**62) // width:
            out = pd.factorize(out)[0].astype(np.int64)
        out = out * width + codes
    assert out is not None
    return out


def _factorize(parts: Sequence[pd.Series]) -> tuple[np.ndarray, int]:
    """Codes of the values of ``parts`` one after the other, equal for equal values as
    Python compares them, missing 0 (and equal to missing), and how many codes there are.
    Text held by pyarrow is encoded by pyarrow (as a pandas merge does): many times faster
    than :func:`pandas.factorize` on it."""
    if len({p.dtype for p in parts}) > 1:  # compared as Python values, as :func:`as_map` does
        parts = [p.astype(object) for p in parts]
    held = [_arrow_chunks(p) for p in parts]
    if all(h is not None for h in held):
        chunks = [c for h in held for c in h or ()]
        encoded = pa.chunked_array(chunks).combine_chunks().dictionary_encode()
        codes = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int64) + 1
        return codes, len(encoded.dictionary) + 1
    both = pd.concat(parts, ignore_index=True)
    codes, uniques = pd.factorize(both, use_na_sentinel=True)
    return codes.astype(np.int64) + 1, len(uniques) + 1


def _arrow_chunks(series: pd.Series) -> list[Any] | None:
    """The pyarrow chunks of a column of text held by pyarrow; None for any other column."""
    dtype = series.dtype
    arrow = isinstance(dtype, pd.ArrowDtype) or (
        isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"
    )
    held = getattr(series.array, "_pa_array", None) if arrow else None
    if held is None or not (pa.types.is_string(held.type) or pa.types.is_large_string(held.type)):
        return None
    return list(held.chunks)


def _state(f: pd.DataFrame | None, value: str | None, codes: np.ndarray, n: int) -> _State:
    """Per key (dense code): present, present with a missing value, its value; the last row
    of a key repeated in the table wins, as in a dict."""
    present = np.zeros(n, dtype=bool)
    missing = np.zeros(n, dtype=bool)
    values = np.zeros(n, dtype=np.float64)
    if f is None:
        return present, missing, values
    present[codes] = True
    if value is not None:
        column = f[value].to_numpy(dtype=np.float64, na_value=np.nan)
        missing[codes] = np.isnan(column)  # fancy assignment: the last repeat wins
        values[codes] = column
    return present, missing, values


def _same(a: _State, b: _State) -> np.ndarray:
    """:func:`same` of two sides, key by key."""
    (pa, ma, va), (pb, mb, vb) = a, b
    with np.errstate(invalid="ignore"):
        close = np.abs(va - vb) <= 1e-9 * np.maximum(1.0, np.maximum(np.abs(va), np.abs(vb)))
    both = pa & pb
    values = (ma & mb) | (~ma & ~mb & close)
    return (~pa & ~pb) | (both & values)


def _objects(state: _State, at: np.ndarray, valued: bool) -> list[Any]:
    """The values of the keys ``at`` on one side, as :func:`as_map` gives them: ABSENT,
    None (a missing value), a float, or True in a table without values."""
    present, missing, values = (a[at] for a in state)
    out = np.full(len(at), ABSENT, dtype=object)
    if not valued:
        out[present] = True
        return out.tolist()
    out[present & missing] = None
    out[present & ~missing] = values[present & ~missing]  # stored as Python floats
    return out.tolist()


def _key_tuples(
    frames: Sequence[pd.DataFrame], codes: np.ndarray, key: Sequence[str], wanted: np.ndarray
) -> list[tuple[Hashable, ...]]:
    """The key tuples (Python values, from the row where each key first appears) of the
    dense codes ``wanted`` (ascending), in that order."""
    first = np.empty(int(codes.max()) + 1 if len(codes) else 0, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # the last write, the first row
    rows = first[wanted]  # the row where each code first appears: ascending
    out: list[tuple[Hashable, ...]] = []
    at = 0
    for f in frames:
        mine = rows[(rows >= at) & (rows < at + len(f))]
        if len(mine):
            part = f.iloc[mine - at]
            out += zip(*(_plain(part[c]) for c in key), strict=True)
        at += len(f)
    return out
