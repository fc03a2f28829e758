"""Integer codes of table keys, equal for equal keys as a dict of Python values tells them
(missing equal to missing), over whole columns: what the planner's scope and diff steps
compare rows and keys with, without a dict of tuples.

>>> import pandas as pd
>>> ids = [pd.Series([1, 2]), pd.Series([2, 1])]  # desired, then base
>>> codes = joint_codes([ids, [pd.Series(["US", "FR"]), pd.Series(["FR", "US"])]])
>>> bool(codes[0] == codes[3] and codes[1] == codes[2] and codes[0] != codes[1])
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def joint_codes(
    pairs: Sequence[Sequence[pd.Series]], start: np.ndarray | None = None
) -> np.ndarray:
    """One integer per row of the sides one after the other: equal for equal keys, as a
    dict of Python values tells them (missing equal to missing); ``start``: codes to extend."""
    columns = [_factorize(parts) for parts in pairs]
    if start is not None:
        columns.insert(0, (start, 0))
    return _joint(columns)


def dense_codes(
    pairs: Sequence[Sequence[pd.Series]], start: np.ndarray | None = None
) -> np.ndarray:
    """The codes of :func:`joint_codes` made dense, 0, 1, 2... in order of first appearance
    (what :func:`pandas.factorize` of them gives), without hashing the joint codes where a
    column (the widest, an item) tells the others: the rows whose other columns are those
    of the first row of their item take its code, and only the others are factorized.

    >>> ids = [pd.Series([7, 7, 8]), pd.Series([8])]
    >>> dense_codes([ids, [pd.Series(["a", "b", "a"]), pd.Series(["a"])]]).tolist()
    [0, 1, 2, 2]
    """
    columns = [_factorize(parts) for parts in pairs]
    if start is not None:
        columns.insert(0, (start, int(start.max()) + 1 if len(start) else 1))
    if not columns or not len(columns[0][0]):
        return np.zeros(len(columns[0][0]) if columns else 0, dtype=np.int64)
    widest = max(range(len(columns)), key=lambda i: columns[i][1])
    item, width = columns.pop(widest)
    if not columns:
        return _first_appearance(item, width)
    others = _joint(columns)
    first = np.empty(width, dtype=np.int64)
    first[item[::-1]] = np.arange(len(item) - 1, -1, -1)  # the last write, the first row
    other = others != others[first[item]]
    if not other.any():
        return _first_appearance(item, width)
    pairs_of = pd.factorize(_joint([(item[other], width), (others[other], 0)]))[0]
    codes = item.copy()
    codes[other] = width + pairs_of.astype(np.int64)
    return _first_appearance(codes, width + int(pairs_of.max()) + 1)


def _joint(columns: Sequence[tuple[np.ndarray, int]]) -> np.ndarray:
    """One integer per row, equal for equal rows of ``columns`` (codes and widths; width 0:
    unknown), hashed again only where their product would overflow."""
    out = columns[0][0]
    for codes, width in columns[1:]:
        width = width or int(codes.max()) + 1
        if int(out.max()) >= (2**62) // width:
            out = pd.factorize(out)[0].astype(np.int64)
        out = out * width + codes
    return out


def _first_appearance(codes: np.ndarray, size: int) -> np.ndarray:
    """``codes`` (each below ``size``) renumbered 0, 1, 2... in order of first appearance."""
    rows = np.arange(len(codes))
    first = np.empty(size, dtype=np.int64)
    first[codes[::-1]] = rows[::-1]
    starts = first[codes] == rows  # the rows where a code first appears
    number = np.empty(size, dtype=np.int64)
    number[codes[starts]] = np.arange(int(starts.sum()))
    return number[codes]


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
    if (found := _int_codes(both)) is not None:
        return found
    codes, uniques = pd.factorize(both, use_na_sentinel=True)
    return codes.astype(np.int64) + 1, len(uniques) + 1


def _int_codes(values: pd.Series) -> tuple[np.ndarray, int] | None:
    """Codes of a column of signed integers whose range is not much wider than the column
    (ids): each value less the least, plus 1 (missing 0), without hashing; None otherwise."""
    if not pd.api.types.is_signed_integer_dtype(values.dtype) or not len(values):
        return None
    missing = values.isna().to_numpy()
    ints = values.to_numpy(dtype=np.int64, na_value=0)
    present = ints[~missing] if missing.any() else ints
    if not len(present):
        return None
    low, high = int(present.min()), int(present.max())
    if high - low > 4 * len(ints) + 1024:
        return None
    codes = ints - (low - 1)
    codes[missing] = 0
    return codes, high - low + 2


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


@dataclass(frozen=True)
class TableCodes:
    """The key codes (:func:`joint_codes`) of the rows of a table, ``desired`` then ``base``,
    as the scope step found them; the diff step reuses them for these very frames."""

    desired: pd.DataFrame
    base: pd.DataFrame
    codes: np.ndarray

    def of(self, desired: Any, base: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """The codes of the rows of ``desired`` and of ``base`` when they are the frames
        coded (the same objects), else None."""
        if desired is not self.desired or base is not self.base:
            return None
        n = len(desired)
        if len(self.codes) != n + len(base):
            return None
        return self.codes[:n], self.codes[n:]


__all__ = ["TableCodes", "dense_codes", "joint_codes"]
