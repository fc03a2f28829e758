"""What a diff finds, shared by the planner's diff and build steps: a key's :class:`Change`
(also as a :data:`Move` tuple; by the million kept as columns, :class:`FrameMoves`), a
:class:`Conflict`, the :data:`ABSENT` mark of a key not in
a table, and :func:`same`, how two values compare; per table a :class:`TableDiff`, and the
diff step's whole answer, a :class:`PlanDiff`, which the build step turns into calls.

>>> Change((1, "US"), ABSENT, 0.5).is_add
True
>>> same(0.1 + 0.2, 0.3), same(ABSENT, None)
(True, False)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

ABSENT: Any = object()  # marks a key that is not in a table

#: A change as a tuple, cheaper than a :class:`Change` by the million: key, old, new.
Move = tuple[tuple[Hashable, ...], Any, Any]


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


def same(a: Any, b: Any) -> bool:
    """Whether two values are the same for the diff: floats within a relative 1e-9, ABSENT
    only equal to ABSENT, anything else by ``==``."""
    if a is ABSENT or b is ABSENT:
        return a is b
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b


@dataclass
class Edited:
    """A record (campaign, CPA rule, creative) with changes: its id, its live row (the
    build step reads the fields a call repeats from it) and its fields' changes."""

    id: int
    live: dict[str, Any]
    changes: dict[str, Change]


@dataclass
class TableDiff:
    """What changes in one table: an item table's :data:`Move` tuples, or a record table's
    edited records, new CPA rules (rows without an id, with the ``live`` table the build
    step finds the ids before them in) and records gone (id, live row); the table's
    conflicts, and its warnings (a record not in the live account)."""

    table: str
    moves: Sequence[Move] = field(default_factory=list)  # a list, or columns (FrameMoves)
    edited: list[Edited] = field(default_factory=list)
    added: pd.DataFrame | None = None
    dropped: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    live: pd.DataFrame | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def edit(self, rid: int, live: dict[str, Any], changes: dict[str, Change]) -> None:
        """Note the changes of record ``rid`` (none: nothing noted)."""
        if changes:
            self.edited.append(Edited(rid, live, changes))


@dataclass
class PlanDiff:
    """The diff step's answer: the tables' diffs in the order they are built (item tables,
    then campaigns, CPA rules, creatives)."""

    tables: list[TableDiff] = field(default_factory=list)

    @property
    def conflicts(self) -> list[tuple[str, Conflict]]:
        """Every conflict, with its table, in table order."""
        return [(t.table, c) for t in self.tables for c in t.conflicts]


# --------------------------------------------------------------------------- changes as columns

#: Per key (dense code) of one side: present, present with a missing value, its value.
State = tuple[np.ndarray, np.ndarray, np.ndarray]


class FrameMoves(Sequence[Move]):
    """The changes of a table diffed over whole columns, kept as columns: a sequence of
    :data:`Move` tuples (made on first use) that the build step can also read column by
    column (:meth:`key_columns`, :meth:`values`) without a tuple per change.

    >>> from toolkit.bulk.diff import three_way_frames
    >>> d = pd.DataFrame({"campaign_id": [1], "country": ["US"], "bid": [0.5]})
    >>> moves = three_way_frames(d, None, None, ["campaign_id", "country"], "bid")[0]
    >>> moves == [((1, "US"), ABSENT, 0.5)], moves.key_columns()[1].tolist()
    (True, ['US'])
    """

    def __init__(
        self,
        frames: Sequence[pd.DataFrame],
        first: np.ndarray,
        key: Sequence[str],
        sides: tuple[State, State],
        wanted: np.ndarray,
        valued: bool,
    ) -> None:
        self._frames, self._first, self._key = frames, first, key
        self.key = tuple(key)  # the key columns
        self._sides, self._wanted, self.valued = sides, wanted, valued
        self._columns: list[np.ndarray] | None = None
        self._list: list[Move] | None = None

    def key_columns(self) -> list[np.ndarray]:
        """Per key column, the keys' values (Python values, missing None) as an object array."""
        if self._columns is None:
            columns = key_columns(self._frames, self._first, self._key, self._wanted)
            self._columns = [np.array(c, dtype=object) for c in columns]
        return self._columns

    def keys_at(self, at: np.ndarray) -> list[tuple[Any, ...]]:
        """The keys (Python values) of the changes ``at`` (ascending)."""
        columns = key_columns(self._frames, self._first, self._key, self._wanted[at])
        return list(zip(*columns, strict=True))

    def column(self, i: int) -> pd.Series:
        """Key column ``i`` of the changes as it is held (not made Python values)."""
        parts = [_taken(f[self._key[i]], rows) for f, rows in self._rows()]
        if not parts:
            return pd.Series([], dtype=object)
        return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]

    def items(self) -> np.ndarray:
        """The last key column (the item) of the changes, as Python values (missing None)."""
        parts = [_objects(_taken(f[self._key[-1]], rows)) for f, rows in self._rows()]
        return np.concatenate(parts) if parts else np.empty(0, dtype=object)

    def values(self, side: int) -> tuple[np.ndarray, list[Any] | None]:
        """Side 0 (old: live) or 1 (new: desired): where each key is present, and the values
        of those present (None or a float; None for all in a table without values, where
        each is True)."""
        state = self._sides[side]
        present = state[0][self._wanted]
        if not self.valued:
            return present, None
        return present, state_values(state, self._wanted[present], self.valued)

    def _rows(self) -> list[tuple[pd.DataFrame, np.ndarray]]:
        """Per frame holding some, the frame and the rows where the changes' keys first
        appear."""
        rows, out, at = self._first[self._wanted], [], 0
        for f in self._frames:
            mine = rows[(rows >= at) & (rows < at + len(f))]
            if len(mine):
                out.append((f, mine - at))
            at += len(f)
        return out

    def moves(self) -> list[Move]:
        """The changes as :data:`Move` tuples."""
        if self._list is None:
            keys = zip(*self.key_columns(), strict=True) if len(self._wanted) else []
            self._list = list(
                zip(
                    keys,
                    state_values(self._sides[0], self._wanted, self.valued),
                    state_values(self._sides[1], self._wanted, self.valued),
                    strict=True,
                )
            )
        return self._list

    def __len__(self) -> int:
        return len(self._wanted)

    def __getitem__(self, at: Any) -> Any:
        return self.moves()[at]

    def __iter__(self) -> Iterator[Move]:
        return iter(self.moves())

    def __eq__(self, other: object) -> bool:
        return self.moves() == (other.moves() if isinstance(other, FrameMoves) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.moves())


def _taken(series: pd.Series, rows: np.ndarray) -> pd.Series:
    """The rows ``rows`` (ascending) of ``series``: a slice, without a copy, when they follow
    one another (the rows added at the end of a table), else taken."""
    if len(rows) and int(rows[-1]) - int(rows[0]) == len(rows) - 1:
        return series.iloc[int(rows[0]) : int(rows[-1]) + 1]
    return series.iloc[rows]


def python_values(series: pd.Series) -> list[Any]:
    """Python values (never numpy scalars), missing ones as None."""
    return series.astype(object).where(series.notna(), None).tolist()


def _objects(series: pd.Series) -> np.ndarray:
    """:func:`python_values` as an object array (text held by pyarrow made Python in one
    pass)."""
    dtype = series.dtype
    held = getattr(series.array, "_pa_array", None)
    if isinstance(dtype, pd.StringDtype) and isinstance(held, pa.ChunkedArray):
        return held.to_numpy(zero_copy_only=False)  # Python str, missing None
    return np.fromiter(python_values(series), dtype=object, count=len(series))


def state_values(state: State, at: np.ndarray, valued: bool) -> list[Any]:
    """The values of the keys ``at`` on one side, as :func:`~toolkit.bulk.diff.as_map` gives:
    ABSENT, None (a missing value), a float, or True in a table without values."""
    present, missing, values = (a[at] for a in state)
    out = np.full(len(at), ABSENT, dtype=object)
    if not valued:
        out[present] = True
        return out.tolist()
    out[present & missing] = None
    out[present & ~missing] = values[present & ~missing]  # stored as Python floats
    return out.tolist()


def key_columns(
    frames: Sequence[pd.DataFrame], first: np.ndarray, key: Sequence[str], wanted: np.ndarray
) -> list[list[Any]]:
    """Per key column, the values (Python values, from the row where each key first
    appears) of the dense codes ``wanted`` (ascending), in that order."""
    rows = first[wanted]  # the row where each code first appears: ascending
    out: list[list[Any]] = [[] for _ in key]
    at = 0
    for f in frames:
        mine = rows[(rows >= at) & (rows < at + len(f))]
        if len(mine):
            part = f.iloc[mine - at]
            for column, c in zip(out, key, strict=True):
                column += python_values(part[c])
        at += len(f)
    return out


__all__ = [
    "ABSENT",
    "Change",
    "Conflict",
    "Edited",
    "FrameMoves",
    "Move",
    "PlanDiff",
    "State",
    "TableDiff",
    "key_columns",
    "python_values",
    "same",
    "state_values",
]
