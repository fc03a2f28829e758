"""The rows and cells of a block of sheet XML, found with numpy: what
:mod:`.guard` checks.

Only the form that Excel, LibreOffice, openpyxl and the toolkit write is taken: each
``<row`` and ``<c`` tag starts with its reference (``<c r="B2"``), its other attributes are
``name="value"`` after one space each, with no entity, apostrophe, tab or line break, and a
shared-string cell's value follows its tag (``<c r="B2" t="s"><v>7</v>``). The tags of a
block differ only by reference, mostly: what follows the references is read once per kind.
Anything else (a comment, CDATA, a declaration or an instruction, too) returns None, and the
caller reads the sheet with an XML parser instead.

>>> e = fast_entries(b'<row r="2"><c r="B2" t="s"><v>7</v></c></row>', Names(b"", 0))
>>> e.is_row.tolist(), e.col.tolist(), e.row.tolist(), e.ss_value.tolist(), e.ref(1)
([True, False], [0, 2], [2, 2], [7], 'B2')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Bytes of a reference or a shared-string index read (longer ones are not one).
WIDTH = 12
#: Zero bytes after a block, so that reading past a position never leaves the array.
PAD = bytes(64)
#: Past the last column and row (the checks say so): values are clipped here.
_PAST_COLUMN = 16_385
_PAST_ROW = 1_048_577
#: The longest tag read (longer ones go to the XML parser).
MAX_TAG = 512


def _table(*codes: int) -> np.ndarray:
    table = np.zeros(256, bool)
    table[list(codes)] = True
    return table


#: Bytes that end a tag's name (space, TAB, LF, CR, / and >).
_DELIM = _table(32, 9, 10, 13, 47, 62)
_POW10 = 10 ** np.arange(WIDTH, dtype=np.int64)
#: ``!`` and ``?`` after ``<``: markup other than elements, which only the XML parser reads.
_MARKUP = np.frombuffer(b"!?", np.uint8)


@dataclass(frozen=True)
class Names:
    """The tags of a sheet whose elements have the namespace ``prefix`` (``b"x:"`` or
    ``b""``); ``skip`` bytes of XML declaration come first."""

    prefix: bytes
    skip: int

    @property
    def row(self) -> bytes:
        return b"<" + self.prefix + b"row"

    @property
    def cell(self) -> bytes:
        return b"<" + self.prefix + b"c"

    def last_start(self, data: bytes) -> int:
        """Where the last row of ``data`` starts (-1: none): blocks hold whole rows."""
        return data.rfind(self.row + b' r="')


@dataclass
class Entries:
    """Rows and cells in the order of the XML: ``col`` (0 for a row) and ``row`` as their
    references say, ``ok`` where the reference is one; ``ss`` the entries that are
    shared-string cells and ``ss_value`` their index (-1: not a whole number)."""

    is_row: np.ndarray
    col: np.ndarray
    row: np.ndarray
    ok: np.ndarray
    ss: np.ndarray
    ss_value: np.ndarray
    _text: bytes
    _ref_at: np.ndarray
    _ref_len: np.ndarray
    _value_at: np.ndarray
    _value_len: np.ndarray
    #: Cells that no row element holds (a reader may read or drop them).
    outside: np.ndarray | None = None

    def ref(self, i: int) -> str:
        """The reference of entry ``i`` as written ("" when it has none)."""
        return self._cut(int(self._ref_at[i]), int(self._ref_len[i])) or ""

    def ss_text(self, k: int) -> str | None:
        """The value of the ``k``-th shared-string cell as written (None: it has none)."""
        return self._cut(int(self._value_at[k]), int(self._value_len[k]))

    def _cut(self, at: int, length: int) -> str | None:
        if length < 0:
            return None
        return self._text[at : at + min(length, 40)].decode("utf-8", "replace")


def fast_entries(region: bytes, names: Names, n: int | None = None) -> Entries | None:
    """The rows and cells of the first ``n`` bytes of ``region`` (whole tags; all of it by
    default), or None when they hold another form."""
    if n is None or len(region) < n + len(PAD):
        n = len(region) if n is None else n
        region = region[:n] + PAD
    a = np.frombuffer(region, np.uint8)
    lt = np.flatnonzero(a[:n] == 60)
    if np.isin(a[lt + 1], _MARKUP).any():  # a comment, CDATA, a declaration, an instruction
        return None
    gt = np.flatnonzero(a[:n] == 62)
    rows, cells = _tags(a, lt, gt, names.row), _tags(a, lt, gt, names.cell)
    if rows is None or cells is None:
        return None
    starts = np.concatenate([rows.starts, cells.starts])
    order = np.argsort(starts, kind="stable")
    is_row = (np.arange(len(order)) < len(rows.starts))[order]
    ref_at = np.concatenate([rows.ref_at, cells.ref_at])[order]
    ref_len = np.concatenate([rows.ref_len, cells.ref_len])[order]
    shared = np.concatenate([np.zeros(len(rows.starts), bool), cells.shared])[order]
    ends = np.concatenate([rows.ends, cells.ends])[order]
    ss = np.flatnonzero(shared)
    values = _values(a, ends[ss], names)
    if values is None:
        return None
    value_at, value_len = values
    outside = _outside(a, lt, rows, cells.starts, names)
    if outside is None:
        return None
    col, row, ok = parse_refs(a, ref_at, ref_len, is_row)
    value = whole_numbers(a, value_at, value_len)
    entries = Entries(is_row, col, row, ok, ss, value, region, ref_at, ref_len, value_at, value_len)
    entries.outside = np.concatenate([np.zeros(len(rows.starts), bool), outside])[order]
    return entries


def _outside(
    a: np.ndarray, lt: np.ndarray, rows: _Tags, cells: np.ndarray, names: Names
) -> np.ndarray | None:
    """Which cells no row element holds, in a block of whole rows; None unless each row
    closes (``</row>``, or ``/>``) before the next starts."""
    closing = b"</" + names.row[1:] + b">"
    closes = lt
    for k, byte in enumerate(closing[1:], start=1):
        closes = closes[a[closes + k] == byte]
    empty = a[rows.ends - 1] == 47
    if len(closes) != (~empty).sum():
        return None
    row_end = rows.ends.copy()
    row_end[~empty] = closes
    following = np.append(rows.starts[1:], np.iinfo(np.int64).max)
    if ((row_end < rows.starts) | (row_end > following)).any():
        return None
    if not len(rows.starts):
        return np.ones(len(cells), bool)
    holder = np.searchsorted(rows.starts, cells, side="right") - 1
    return (holder < 0) | (cells > row_end[np.maximum(holder, 0)])


@dataclass
class _Tags:
    """The tags of one element: where each starts and ends, where its reference is and how
    long, and (for cells) whether it is a shared-string cell."""

    starts: np.ndarray
    ends: np.ndarray
    ref_at: np.ndarray
    ref_len: np.ndarray
    shared: np.ndarray


def _tags(a: np.ndarray, lt: np.ndarray, gt: np.ndarray, name: bytes) -> _Tags | None:
    """The tags ``name`` of the block ``a``; None unless each starts with ``name r="``, its
    reference ends within :data:`WIDTH` bytes, it holds no ``<``, and what follows the
    reference is plain (:func:`_tail_kinds`)."""
    starts = lt
    for k, byte in enumerate(name[1:], start=1):
        starts = starts[a[starts + k] == byte]
    starts = starts[_DELIM[a[starts + len(name)]]]
    k = np.searchsorted(gt, starts)
    if len(starts) and k[-1] >= len(gt):
        return None
    ends = gt[k]
    following = np.searchsorted(lt, starts, side="right")
    if ((following < len(lt)) & (lt[np.minimum(following, len(lt) - 1)] < ends)).any():
        return None
    if not (
        a[starts[:, None] + len(name) + np.arange(4)] == np.frombuffer(b' r="', np.uint8)
    ).all():
        return None
    ref_at = starts + len(name) + 4
    closing = a[ref_at[:, None] + np.arange(WIDTH + 1)] == 34
    if not closing.any(1).all():
        return None
    ref_len = np.argmax(closing, axis=1)
    shared = _tail_kinds(a, ref_at + ref_len, ends)
    if shared is None:
        return None
    return _Tags(starts, ends, ref_at, ref_len, shared)


_TAIL_RE = re.compile(rb'"((?: [A-Za-z_][\w.:-]*="[^"<>&\'\t\r\n]*")*) ?/?>')
_ATTRIBUTE_RE = re.compile(rb' ([A-Za-z_][\w.:-]*)="([^"]*)"')


def _tail_kinds(a: np.ndarray, at: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Whether each tag is a shared-string cell, from what follows its reference (from the
    reference's closing quote at ``at`` to the ``>`` at ``ends``); None unless each is
    ``" name="value" ...>`` with no name twice. The few different tails of a block (one per
    column's style and type) are each read once."""
    length = ends - at + 1
    if len(at) == 0:
        return np.zeros(0, bool)
    if length.min() < 2 or length.max() > MAX_TAG:
        return None
    width = int(length.max())
    tails = np.zeros((len(at), width + 2), np.uint8)
    tails[:, :width] = a[at[:, None] + np.arange(width)]
    tails[:, :width][np.arange(width) >= length[:, None]] = 0
    tails[:, width], tails[:, width + 1] = length & 255, length >> 8
    keys = np.ascontiguousarray(tails).view(np.dtype((np.void, width + 2))).ravel()
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    kinds = np.zeros(len(unique), bool)
    for u, i in enumerate(first):
        tail = bytes(tails[i, : length[i]])
        match = _TAIL_RE.fullmatch(tail)
        if match is None:
            return None
        attributes = dict(_ATTRIBUTE_RE.findall(match.group(1)))
        if len(attributes) != len(_ATTRIBUTE_RE.findall(match.group(1))) or b"r" in attributes:
            return None
        kinds[u] = attributes.get(b"t") == b"s"
    return kinds[inverse.ravel()]


def _values(a: np.ndarray, ends: np.ndarray, names: Names) -> tuple[np.ndarray, np.ndarray] | None:
    """Where the value of each shared-string cell (tag ending at ``ends``) starts and how
    long it is (-1: the tag closes itself, no value); None unless ``<v>`` follows the tag,
    a value of at most :data:`WIDTH` bytes and ``</v>``."""
    opening = np.frombuffer(b"<" + names.prefix + b"v>", np.uint8)
    closing = np.frombuffer(b"</" + names.prefix + b"v>", np.uint8)
    empty = a[ends - 1] == 47
    full = ends[~empty]
    if not (a[full[:, None] + 1 + np.arange(len(opening))] == opening).all():
        return None
    start = full + 1 + len(opening)
    window = a[start[:, None] + np.arange(WIDTH + 1)] == 60
    if not window.any(1).all():
        return None
    length = np.argmax(window, axis=1)
    if not (a[(start + length)[:, None] + np.arange(len(closing))] == closing).all():
        return None
    value_at = np.zeros(len(ends), np.int64)
    value_len = np.full(len(ends), -1, np.int64)
    value_at[~empty], value_len[~empty] = start, length
    return value_at, value_len


def parse_refs(
    a: np.ndarray, at: np.ndarray, length: np.ndarray, is_row: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column and row numbers of the references at ``at`` (``length`` bytes) in ``a``, and
    whether each is one (letters then digits for a cell, digits for a row); numbers past the
    last column or row are clipped just past it."""
    mat = a[at[:, None] + np.arange(WIDTH)]
    inside = np.arange(WIDTH) < length[:, None]
    letter = (mat >= 65) & (mat <= 90) & inside
    digit = (mat >= 48) & (mat <= 57) & inside
    leading = np.logical_and.accumulate(letter, axis=1).sum(1)
    col = np.zeros(len(at), np.int64)
    for i in range(3):
        col = np.where(i < leading, col * 26 + mat[:, i] - 64, col)
    col = np.where(leading > 3, _PAST_COLUMN, col)
    row = np.zeros(len(at), np.int64)
    for i in range(WIDTH):
        row = np.where(digit[:, i], np.minimum(row * 10 + mat[:, i] - 48, _PAST_ROW), row)
    ok = (
        (length <= WIDTH)
        & (letter.sum(1) == leading)
        & (leading + digit.sum(1) == length)
        & (row >= 1)
        & np.where(is_row, leading == 0, leading >= 1)
    )
    return col, row, ok


def whole_numbers(a: np.ndarray, at: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The whole numbers of at most 10 digits at ``at`` in ``a`` (-1 for anything else)."""
    k = np.arange(10)
    mat = a[at[:, None] + k].astype(np.int64)
    digit = (mat >= 48) & (mat <= 57) & (k < length[:, None])
    places = np.clip(length[:, None] - 1 - k, 0, 9)
    value = ((mat - 48) * _POW10[places] * digit).sum(1)
    ok = (length >= 1) & (length <= 10) & (digit.sum(1) == length)
    return np.where(ok, value, -1)


def entries_of(
    refs: Sequence[bytes | None],
    rows: Sequence[bool],
    ss: Sequence[int],
    values: Sequence[str | None],
    outside: Sequence[bool],
) -> Entries:
    """Entries from what an XML parser read: each entry's reference (None: none), whether it
    is a row, the shared-string cells and their values (None: none), and whether each entry
    is a cell no row holds."""
    parts = [r or b"" for r in refs] + [(v or "").encode("utf-8", "replace") for v in values]
    offsets = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    text = b"".join(parts)
    a = np.frombuffer(text + PAD, np.uint8)
    count = len(refs)
    is_row = np.array(rows, bool)
    ref_at = offsets[:count]
    ref_len = np.array([len(r) if r is not None else -1 for r in refs], np.int64)
    value_at = offsets[count:-1]
    value_len = np.array(
        [len(p) if v is not None else -1 for p, v in zip(parts[count:], values, strict=True)],
        np.int64,
    )
    col, row, ok = parse_refs(a, ref_at, np.maximum(ref_len, 0), is_row)
    value = whole_numbers(a, value_at, np.maximum(value_len, 0))
    return Entries(
        is_row,
        col,
        row,
        ok & (ref_len >= 0),
        np.array(ss, np.int64),
        value,
        text,
        ref_at,
        ref_len,
        value_at,
        value_len,
        np.array(outside, bool),
    )


__all__ = [
    "PAD",
    "WIDTH",
    "Entries",
    "Names",
    "entries_of",
    "fast_entries",
    "parse_refs",
    "whole_numbers",
]
