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

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

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


def _same(a: Any, b: Any) -> bool:
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
            if not _same(d, l_):
                changes.append(Change(key, l_, d))
            continue
        b = base.get(key, ABSENT)
        if _same(d, b) or _same(l_, d):
            continue
        if _same(l_, b):
            changes.append(Change(key, l_, d))
            continue
        conflicts.append(Conflict(key, b, l_, d))
        if prefer == "desired":
            changes.append(Change(key, l_, d))
    return changes, conflicts
