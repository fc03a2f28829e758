"""The planner's build step: the diff step's answer (a
:class:`~toolkit.bulk.diff_types.PlanDiff`) turned into grouped calls, in safe order.

Campaigns that need the same items become one batch call (the client chunks it); record
changes become the calls of :mod:`toolkit.bulk.plan_records`. The calls are ordered by step
(:data:`~toolkit.bulk.calls.STEPS`): pauses and archives first, then settings, drops before
adds, starts last. Nothing here diffs or reads: it takes what changes and the live account's
campaigns and dictionaries.

>>> built = build_calls(found, live)                                  # doctest: +SKIP
>>> built.calls, built.warnings                                       # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .call_kinds import ItemCalls, TargetCalls, call_key, codes_of
from .calls import STEPS, Call
from .diff_types import ABSENT, FrameMoves, Move, PlanDiff, TableDiff
from .key_codes import dense_codes
from .plan_records import RecordPlanner

if TYPE_CHECKING:  # pragma: no cover
    from ..frames import Account


@dataclass
class Built:
    """The calls of a plan, in order, and the warnings of what was skipped."""

    calls: list[Call]
    warnings: list[str]


def build_calls(found: PlanDiff, live: Account) -> Built:
    """The calls that make the changes of ``found`` (each table's warnings first, then those
    its calls gave), against the campaigns and dictionaries of ``live``."""
    builder = _Builder(live)
    records: dict[str, Callable[[TableDiff], None]] = {
        "campaigns": builder.campaigns,
        "cpa_rules": builder.cpa_rules,
        "creatives": builder.creatives,
    }
    for table in found.tables:
        builder.warnings += table.warnings
        if table.table in records:
            records[table.table](table)
        else:
            builder.items(table.table, table.moves)
    return Built(builder.ordered(), builder.warnings)


#: Items per (call kind, list type), per campaign: ``{item: value}``.
_Sides = dict[tuple[ItemCalls, str | None], dict[int, dict[Any, Any]]]


class _Builder(RecordPlanner):
    """Turns changes into grouped, chunk-free calls (the client chunks them)."""

    def __init__(self, live: Account) -> None:
        campaigns = live.table("campaigns")
        self.live_ids = set(campaigns["id"].astype(int)) if len(campaigns) else set()
        self.codes = codes_of(live.refs)
        self.calls: list[Call] = []
        self.warnings: list[str] = []

    # ------------------------------------------------------------------ item tables

    def items(self, table: str, changes: Sequence[Move]) -> None:
        if isinstance(changes, FrameMoves) and self._item_columns(table, changes):
            return
        adds: _Sides = defaultdict(lambda: defaultdict(dict))
        drops: _Sides = defaultdict(lambda: defaultdict(dict))
        slots: dict[tuple[Any, ...], list[Any]] = {}  # key before the item: kind, list type...
        for key, old, new in changes:
            cid = int(key[0])
            if cid not in self.live_ids:
                self.warnings.append(f"{table}: campaign {cid} is not in the live account; skipped")
                continue
            slot = slots.get(key[1:-1])
            if slot is None:
                slot = slots[key[1:-1]] = [*self._kind_of(table, key), None, None]
            item = self._item_of(table, slot[0], key)
            if item is ABSENT:
                continue
            if old is not ABSENT:
                if slot[2] is None:
                    slot[2] = drops[(slot[0], slot[1])]
                slot[2][cid][item] = old
            if new is not ABSENT:
                if slot[3] is None:
                    slot[3] = adds[(slot[0], slot[1])]
                slot[3][cid][item] = new
        self._build("drop", drops)
        self._build("add", adds)

    def _item_columns(self, table: str, changes: FrameMoves) -> bool:
        """:meth:`items` of changes kept as columns, grouped per campaign over whole
        columns; False (nothing done) when a change would warn or two of its keys could give
        the same item (a campaign not live, a kind unknown or sent as codes): then
        :meth:`items` goes change by change."""
        cids = _campaign_ids(changes.column(0))
        if cids is None or not len(cids):
            return False
        if not np.isin(cids, np.fromiter(self.live_ids, np.int64, len(self.live_ids))).all():
            return False
        slot_codes, kinds = self._slots(table, changes)
        if kinds is None:
            return False
        items = changes.items()
        for action, side in (("drop", 0), ("add", 1)):
            present, values = changes.values(side)
            at = np.flatnonzero(present)
            sides: _Sides = {}
            slots = slot_codes[at]
            valued = None if values is None else np.asarray(values, dtype=object)
            for slot in pd.unique(slots):  # in order of first appearance
                mine = slots == slot
                rows = at[mine]
                mine_values = None if valued is None else valued[mine]
                sides[kinds[slot]] = _per_campaign(cids[rows], items[rows], mine_values)
            self._build(action, sides)
        return True

    def _slots(
        self, table: str, changes: FrameMoves
    ) -> tuple[np.ndarray, list[tuple[ItemCalls, str | None]] | None]:
        """Per change the code of its slot (the key's columns between the campaign and the
        item), and per code the call kind and list type; None when a slot's kind is unknown
        or sent as codes, or two slots share one."""
        middle = [[changes.column(i)] for i in range(1, len(changes.key) - 1)]
        # dense, in order of first appearance
        codes = dense_codes(middle) if middle else np.zeros(len(changes), dtype=np.int64)
        first_rows = _first_rows(codes)
        kinds = []
        for key in changes.keys_at(first_rows):
            kind, list_type = self._kind_of(table, key)
            if kind is None or (isinstance(kind, TargetCalls) and kind.sent_as_code):
                return codes, None
            kinds.append((kind, list_type))
        return codes, kinds if len(set(kinds)) == len(kinds) else None

    def _build(self, action: str, sides: _Sides) -> None:
        for (kind, list_type), per_campaign in sides.items():
            self.calls += kind.build(action, list_type, per_campaign)

    @staticmethod
    def _kind_of(table: str, key: tuple[Any, ...]) -> tuple[ItemCalls | None, str | None]:
        """The call kind and list type of an item table's key (None: unknown to the spec)."""
        try:
            return call_key(table, key)[:2]
        except KeyError:
            return None, None

    def _item_of(self, table: str, kind: ItemCalls | None, key: tuple[Any, ...]) -> Any:
        """The item of a key as sent (a kind's code...), or ABSENT after a warning."""
        if kind is None:
            self.warnings.append(f"{table}: unknown kind {key[1]!r}; skipped")
            return ABSENT
        item = key[-1]
        if isinstance(kind, TargetCalls) and kind.sent_as_code:
            if (code := kind.sent_item(item, self.codes)) is None:
                self.warnings.append(f"{table}: unknown {kind.name} id {item!r}; skipped")
                return ABSENT
            return code
        return item

    def ordered(self) -> list[Call]:
        rank = {s: i for i, s in enumerate(STEPS)}
        return sorted(self.calls, key=lambda c: rank[c.step])


class _Present(Mapping[Any, bool]):
    """Distinct items, each mapped to True (a table without values), kept as the list they
    came in: read in order without hashing each item (looked up, they are hashed once)."""

    __slots__ = ("_items", "_set")

    def __init__(self, items: list[Any]) -> None:
        self._items = items
        self._set: set[Any] | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, item: Any) -> bool:
        if self._set is None:
            self._set = set(self._items)
        if item not in self._set:
            raise KeyError(item)
        return True


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Per dense code (in order of first appearance), the row where it first appears."""
    starts = np.r_[True, codes[1:] > np.maximum.accumulate(codes)[:-1]] if len(codes) else codes
    return np.flatnonzero(starts)


def _campaign_ids(column: pd.Series) -> np.ndarray | None:
    """The campaign ids of the changes as integers (as ``int()`` makes them); None when one
    is missing or not a number."""
    if not pd.api.types.is_numeric_dtype(column.dtype) or column.isna().any():
        return None
    return column.to_numpy(dtype=np.float64 if column.dtype.kind == "f" else np.int64).astype(
        np.int64
    )


def _per_campaign(
    cids: np.ndarray, items: np.ndarray, values: np.ndarray | None
) -> dict[int, Mapping[Any, Any]]:
    """``{campaign: {item: value}}`` of one slot's changes (``values`` None: each True, as
    :class:`_Present`), campaigns and items in order of first appearance; the items of a
    campaign are distinct (one change per key)."""
    if len(cids) < 2 or bool((cids[1:] >= cids[:-1]).all()):  # campaign by campaign already
        order, ordered, item_list = None, cids, items.tolist()
    else:
        order = np.argsort(cids, kind="stable")
        ordered, item_list = cids[order], items[order].tolist()
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(ordered)].tolist()
    value_list = None if values is None else (values if order is None else values[order]).tolist()
    groups = range(len(starts)) if order is None else np.argsort(order[starts], kind="stable")
    out: dict[int, Mapping[Any, Any]] = {}
    for g in groups if order is None else groups.tolist():
        s, e = int(starts[g]), ends[g]
        if value_list is None:
            out[int(ordered[s])] = _Present(item_list[s:e])
        else:
            out[int(ordered[s])] = dict(zip(item_list[s:e], value_list[s:e], strict=True))
    return out


__all__ = ["Built", "build_calls"]
