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
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ValidationError
from .diff_types import (
    ABSENT,
    Change,
    Conflict,
    FrameMoves,
    Move,
    State,
    key_columns,
    python_values,
    same,
    state_values,
)
from .key_codes import TableCodes, dense_codes


def as_map(
    df: pd.DataFrame | None, key: Iterable[str], value: str | None = None
) -> dict[tuple[Hashable, ...], Any]:
    """``{key tuple: value}`` of a table (value ``True`` when the table has no value column)."""
    if df is None or df.empty:
        return {}
    cols = list(key)
    keys = zip(*(python_values(df[c]) for c in cols), strict=True)
    if value is None:
        return dict.fromkeys(keys, True)
    return dict(zip(keys, python_values(df[value]), strict=True))


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


# --------------------------------------------------------------------------- three-way, vectorised

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
    known: TableCodes | None = None,
) -> tuple[Sequence[Move], list[Conflict]] | None:
    """:func:`three_way` of ``as_map(desired)``, ``as_map(base)`` and ``as_map(live)``,
    computed over whole columns; the same changes (as :data:`Move` tuples, kept as columns:
    :class:`~toolkit.bulk.diff_types.FrameMoves`) and conflicts in the same order. ``None``
    when it cannot be told the same way (a table without the key or value columns, a value
    column that is not of floats): then use :func:`three_way`. ``known``: the key codes of
    ``desired`` and ``base`` found before (by the scope step), used when they are of these
    frames (:func:`_dense_codes`).

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
    codes = _dense_codes(frames, key, known)
    n_keys = int(codes.max()) + 1 if len(codes) else 0
    states, at = [], 0
    for f in frames:
        size = 0 if f is None else len(f)
        states.append(_state(f, value, codes[at : at + size], n_keys))
        at += size
    d, l_, b = states
    v = value is not None
    if base is None:
        changed = ~_same(d, l_, v)
        conflict = np.zeros(n_keys, dtype=bool)
    else:
        skip = _same(d, b, v) | _same(l_, d, v)
        moved = ~skip & ~_same(l_, b, v)
        changed = (~skip & ~moved) | (moved if prefer == "desired" else False)
        conflict = moved
    return _found(present, codes, key, (d, b, l_), changed, conflict, v)


def _found(
    frames: Sequence[pd.DataFrame],
    codes: np.ndarray,
    key: Sequence[str],
    sides: tuple[State, State, State],
    changed: np.ndarray,
    conflict: np.ndarray,
    v: bool,
) -> tuple[FrameMoves, list[Conflict]]:
    """The changes (kept as columns, :class:`FrameMoves`) and the conflicts (as Python
    values) of the keys marked, in key order."""
    d, b, l_ = sides
    first = _first_rows(codes)
    moves = FrameMoves(frames, first, key, (l_, d), np.flatnonzero(changed), v)
    picked = np.flatnonzero(conflict)
    keys = list(zip(*key_columns(frames, first, key, picked), strict=True)) if len(picked) else []
    conflicts = [
        Conflict(k, *values)
        for k, *values in zip(
            keys,
            state_values(b, picked, v),
            state_values(l_, picked, v),
            state_values(d, picked, v),
            strict=True,
        )
    ]
    return moves, conflicts


def _dense_codes(
    frames: Sequence[pd.DataFrame | None], key: Sequence[str], known: TableCodes | None
) -> np.ndarray:
    """Dense key codes of the rows of ``frames`` (desired, live, base; None: empty) one
    after the other, in order of first appearance. Live unchanged since export (its key
    columns equal the base's row for row) takes the base's codes, and desired and base
    those of ``known`` when it holds these very frames: then nothing is coded again."""
    d, l_, b = frames
    reuse = l_ is not None and b is not None and _same_keys(l_, b, key)
    coded = [d, b] if reuse else [d, l_, b]
    parts = known.of(d, b) if reuse and known is not None else None
    if parts is None:
        present = [f for f in coded if f is not None]
        joint = dense_codes([[f[c].reset_index(drop=True) for f in present] for c in key])
        sizes = np.cumsum([0 if f is None else len(f) for f in coded])
        parts = tuple(np.split(joint, sizes[:-1]))
    joint = np.concatenate(parts)
    if not _dense(joint):
        joint = pd.factorize(joint)[0]
    if not reuse:
        return joint
    # live as base: no key first appears in live, so base rows repeat live's codes
    return np.concatenate([joint, joint[len(parts[0]) :]])


def _dense(codes: np.ndarray) -> bool:
    """Whether ``codes`` are 0, 1, 2... in order of first appearance (as
    :func:`pandas.factorize` numbers them)."""
    if not len(codes):
        return True
    before = np.maximum.accumulate(codes)
    return bool(codes[0] == 0 and (codes[1:] <= before[:-1] + 1).all())


def _same_keys(live: pd.DataFrame, base: pd.DataFrame, key: Sequence[str]) -> bool:
    """Whether the key columns of ``live`` equal those of ``base`` row for row (same
    dtypes; missing equal to missing)."""
    return len(live) == len(base) and all(live[c].array.equals(base[c].array) for c in key)


def table_changes(
    desired: pd.DataFrame | None,
    base: pd.DataFrame | None,
    live: pd.DataFrame | None,
    key: Sequence[str],
    value: str | None = None,
    prefer: str | None = None,
    known: TableCodes | None = None,
) -> tuple[Sequence[Move], list[Conflict]]:
    """:func:`three_way` of three tables (``base`` None: no base; an empty table: a base
    without rows), its changes as :data:`Move` tuples: over whole columns
    (:func:`three_way_frames`) above :data:`FRAME_DIFF_ROWS` rows, else over dicts; the
    same answer either way."""
    rows = sum(len(t) for t in (desired, base, live) if t is not None)
    if rows > FRAME_DIFF_ROWS:
        found = three_way_frames(desired, base, live, key, value, prefer, known)
        if found is not None:
            return found
    changes, conflicts = three_way(
        as_map(desired, key, value),
        None if base is None else as_map(base, key, value),
        as_map(live, key, value),
        prefer,
    )
    return [(c.key, c.old, c.new) for c in changes], conflicts


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


def _state(f: pd.DataFrame | None, value: str | None, codes: np.ndarray, n: int) -> State:
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


def _same(a: State, b: State, valued: bool = True) -> np.ndarray:
    """:func:`same` of two sides, key by key (``valued`` False: a table without values,
    where a key is the same on both sides when present on both or on neither)."""
    (pa, ma, va), (pb, mb, vb) = a, b
    if not valued:
        return pa == pb
    with np.errstate(invalid="ignore"):
        close = np.abs(va - vb) <= 1e-9 * np.maximum(1.0, np.maximum(np.abs(va), np.abs(vb)))
    both = pa & pb
    values = (ma & mb) | (~ma & ~mb & close)
    return (~pa & ~pb) | (both & values)


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Per dense code, the row (of the sides one after the other) where it first appears."""
    first = np.empty(int(codes.max()) + 1 if len(codes) else 0, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # the last write, the first row
    return first


__all__ = [
    "ABSENT",
    "FRAME_DIFF_ROWS",
    "Change",
    "Conflict",
    "FrameMoves",
    "Move",
    "as_map",
    "same",
    "table_changes",
    "three_way",
    "three_way_frames",
    "valued",
]
