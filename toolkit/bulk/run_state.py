"""What a journaled run meant, as tables: undo and repair plan from them like any edit.

The journal holds the whole plan of every run (:meth:`~toolkit.bulk.journal.Journal.planned`).
From it, :func:`run_states` tells, for each item of the item tables (countries and bids, bid
rules, source and subId lists, targets) and each field of a record it changed (a campaign's
settings and work status, a creative's work status, a CPA rule's fields), the value before the
run and the value the run planned, and the values its calls could leave on the way (a bid
change cut off between its drop and its add leaves the item absent).

Undo plans the before-state as desired against the after-state as base; repair plans the
after-state as desired against the before-state as base. Both are three-way against live
(:func:`toolkit.bulk.diff.three_way`): what live already shows is skipped, and what someone
changed since the run is a conflict, left alone and listed.

>>> calls = [{"step": "add", "action": "add", "target": "subid_black",
...            "campaign_ids": [7], "items": ["ab12"]}]
>>> states = run_states(calls)
>>> states.after, states.campaigns
({('subid_black', None, 7, 'ab12'): True}, {7})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import spec
from .call_kinds import ITEM_TABLES, item_kind
from .calls import CAMPAIGN, CPA_RULE, CREATIVE
from .diff import ABSENT
from .outcome_states import OutcomeState
from .read_back import LiveState, live_state, same_value

if TYPE_CHECKING:  # pragma: no cover
    from ..frames import Account

#: One item of an item table as the calls name it: target, list type, campaign id, item.
Key = tuple[str, str | None, int, str]
#: The record tables a run may change field by field, and the column naming their campaign.
RECORDS: dict[str, str] = {
    "campaigns": "id",
    "creatives": "campaign_id",
    "cpa_rules": "campaign_id",
}


@dataclass
class RunStates:
    """Per item: ``before`` (``ABSENT`` if it was not there), ``after`` (a bid, ``True`` for
    presence, ``ABSENT``) and ``between`` (every value the run's calls could leave it with,
    ``after`` last). Per record table: ``{id: {field: value}}`` before and after (with the
    record's campaign under its campaign column). ``campaigns``: every campaign the run
    touched."""

    before: dict[Key, Any] = field(default_factory=dict)
    after: dict[Key, Any] = field(default_factory=dict)
    between: dict[Key, list[Any]] = field(default_factory=dict)
    records_before: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    records_after: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    campaigns: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.after or any(self.records_after.values()))

    def record(self, table: str, rid: int, cid: int, name: str, old: Any, new: Any) -> None:
        """One field of one record: its first old value and its last new one."""
        column = RECORDS[table]
        before = self.records_before.setdefault(table, {}).setdefault(rid, {column: cid})
        after = self.records_after.setdefault(table, {}).setdefault(rid, {column: cid})
        before.setdefault(name, old)
        after[name] = new
        self.campaigns.add(cid)


def run_states(calls: Iterable[Mapping[str, Any]]) -> RunStates:
    """The states of a run from its journaled calls (:meth:`~toolkit.bulk.calls.Call.record`);
    CPA rule adds and drops are left to their call kind (their ids are known only live)."""
    states = RunStates()
    for call in calls:
        if item_kind(call["target"]) is not None:
            _items(states, call)
        else:
            _records(states, call)
    return states


def _items(states: RunStates, call: Mapping[str, Any]) -> None:
    target, action = call["target"], call["action"]
    kind = item_kind(target)
    assert kind is not None
    bids = call.get("bids") or {}
    for cid in call["campaign_ids"]:
        states.campaigns.add(int(cid))
        for raw in call.get("items") or list(bids):
            item = str(raw)
            key = (target, call.get("list_type"), int(cid), item)
            if action == "drop":
                states.before.setdefault(key, kind.journaled_previous(call, int(cid), item))
                states.after[key] = ABSENT
            else:
                states.before.setdefault(key, ABSENT)
                value = bids.get(item, call.get("bid"))
                states.after[key] = True if value is None else float(value)
            states.between.setdefault(key, []).append(states.after[key])


def _records(states: RunStates, call: Mapping[str, Any]) -> None:
    """Campaign settings and work status, creative work status, CPA rule edits."""
    action = call["action"]
    if action in spec.WORK_ACTIONS:
        action = "move"
    record = RECORD_CALLS.get((call["target"], action))
    if record is not None:
        record(states, call, call.get("previous") or {}, [int(c) for c in call["campaign_ids"]])


def _settings(states: RunStates, call: Mapping[str, Any], previous: Any, ids: list[int]) -> None:
    params = call.get("params") or {}
    for name, old in previous.items():
        if name != "vertical" and name in params:
            states.record("campaigns", ids[0], ids[0], name, old, params[name])


def _campaign_moves(
    states: RunStates, call: Mapping[str, Any], previous: Any, ids: list[int]
) -> None:
    new = spec.WORK_ACTIONS[call["action"]]
    for cid in ids:
        if str(cid) in previous:
            states.record("campaigns", cid, cid, "work_status", previous[str(cid)], new)


def _creative_moves(
    states: RunStates, call: Mapping[str, Any], previous: Any, ids: list[int]
) -> None:
    new = spec.WORK_ACTIONS[call["action"]]
    for crid in call.get("items") or []:
        if str(crid) in previous:
            old = previous[str(crid)]
            states.record("creatives", int(crid), ids[0], "work_status", old, new)


def _cpa_edits(states: RunStates, call: Mapping[str, Any], previous: Any, ids: list[int]) -> None:
    olds = {int(r["id"]): r for r in previous.get("rules") or [] if r.get("id") is not None}
    for rule in (call.get("params") or {}).get("rules") or []:
        rid = int(rule["id"])
        for name, new in rule.items():
            if name != "id":
                states.record("cpa_rules", rid, ids[0], name, olds.get(rid, {}).get(name), new)


#: The record calls a run's states are read from, by (target, action; ``move`` for a work
#: status move). CPA rule adds and drops are undone by their call kind.
RECORD_CALLS = {
    (CAMPAIGN, "update"): _settings,
    (CAMPAIGN, "move"): _campaign_moves,
    (CREATIVE, "move"): _creative_moves,
    (CPA_RULE, "edit"): _cpa_edits,
}


# --------------------------------------------------------------------------- bases


def finished_by_the_run(states: RunStates, outcomes: pd.DataFrame) -> RunStates:
    """``states`` with the values on the way dropped for the items whose last outcome in the
    journaled ``outcomes`` of the call that ends their change (the add of a bid change, which
    a cut-off run may never have sent) says the run left them as planned (``applied`` or
    ``already``):
    a bid change whose add landed did not leave its item absent, so an absent item is
    someone else's change, not the run's."""
    done: dict[Key, bool] = {}
    for row in outcomes.itertuples(index=False):
        if row.item is None or (isinstance(row.item, float) and row.item != row.item):
            continue
        list_type = row.list_type if isinstance(row.list_type, str) else None
        key = (str(row.target), list_type, int(row.campaign_id), str(row.item))
        last = "drop" if states.after.get(key, ABSENT) is ABSENT else "add"
        if key in states.between and row.action == last:  # the call that ends the change
            done[key] = row.outcome in (OutcomeState.APPLIED, OutcomeState.ALREADY)
    for key, finished in done.items():
        if finished:
            states.between[key] = [states.after[key]]
    return states


def run_made(states: RunStates, live: LiveState, key: Key) -> bool:
    """Whether the live value of ``key`` is one the run's own calls could have left."""
    now = live.lookup(*key)
    return any(same_value(now, None if v is ABSENT else v) for v in states.between[key])


def live_value(live: LiveState, key: Key) -> Any:
    """The live value of ``key`` (``ABSENT`` when the item is not there)."""
    now = live.lookup(*key)
    return ABSENT if now is None else now


def way_tables(
    states: RunStates, live: Account, *, back: bool
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """The desired tables and their base for the way back (``back``: undo, the state before
    the run desired, after it the base) or forth (repair: after desired, before the base).
    An item whose live value is one the run's own calls left on the way is planned from
    live: it is no one else's change."""
    state, _ = live_state(live)
    start, end = (states.after, states.before) if back else (states.before, states.after)
    base = {
        key: live_value(state, key) if run_made(states, state, key) else start[key] for key in start
    }
    ids = code_ids(live.refs)
    records = (states.records_before, states.records_after)
    desired_records, base_records = record_tables(*(records if back else records[::-1]))
    desired = {**item_tables(end, ids), **desired_records}
    return desired, {**item_tables(base, ids), **base_records}


# --------------------------------------------------------------------------- tables


def item_tables(
    values: Mapping[Key, Any], ids: Mapping[str, Mapping[str, str]]
) -> dict[str, pd.DataFrame]:
    """The item tables holding ``values`` (items ``ABSENT`` left out). ``ids``: per kind
    sent as codes (``language``), its codes -> ids, for the ``targets`` table holds ids."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in ITEM_TABLES}
    for (target, list_type, cid, item), value in values.items():
        if value is ABSENT:
            continue
        kind = item_kind(target)
        assert kind is not None, target
        item = ids.get(kind.name, {}).get(item, item)
        key, bid = ITEM_TABLES[kind.table]
        row = dict(zip(key, kind.table_key(cid, list_type, item), strict=True))
        rows[kind.table].append(row if bid is None else {**row, bid: value})
    out = {}
    for name, (key, bid) in ITEM_TABLES.items():
        cols = [*key, *([bid] if bid else [])]
        frame = pd.DataFrame(rows[name], columns=cols)
        frame["campaign_id"] = frame["campaign_id"].astype("Int64")
        if bid:
            frame[bid] = frame[bid].astype("float64")
        for c in cols:
            if c not in ("campaign_id", bid):
                frame[c] = frame[c].astype("string")
        out[name] = frame
    return out


def record_tables(
    desired: Mapping[str, Mapping[int, Mapping[str, Any]]],
    base: Mapping[str, Mapping[int, Mapping[str, Any]]],
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """The record tables of ``desired`` and ``base`` (``{table: {id: {field: value}}}``), with
    the same rows and columns: a field one record changed and another did not is missing in
    both for the other, so that it makes no change."""
    out_d: dict[str, pd.DataFrame] = {}
    out_b: dict[str, pd.DataFrame] = {}
    for table, column in RECORDS.items():
        d_rows, b_rows = desired.get(table) or {}, base.get(table) or {}
        if not d_rows:
            continue
        names = sorted({n for r in d_rows.values() for n in r} - {column})
        cols = ["id", *([column] if column != "id" else []), *names]
        frames = []
        for rows in (d_rows, b_rows):
            records = [{"id": rid, **rows.get(rid, {})} for rid in d_rows]
            frame = pd.DataFrame(records, columns=cols, dtype=object)
            frame["id"] = frame["id"].astype("Int64")
            frame[column] = frame[column].astype("Int64")
            frames.append(frame)
        out_d[table], out_b[table] = frames
    return out_d, out_b


def code_ids(refs: Mapping[str, pd.DataFrame] | None) -> dict[str, dict[str, str]]:
    """Per kind sent as codes, its codes -> ids (the inverse of
    :func:`~toolkit.bulk.call_kinds.codes_of`)."""
    from .call_kinds import codes_of

    return {k: {code: i for i, code in v.items()} for k, v in codes_of(refs).items()}


__all__ = [
    "RECORDS",
    "Key",
    "RunStates",
    "code_ids",
    "finished_by_the_run",
    "item_tables",
    "live_value",
    "record_tables",
    "run_made",
    "run_states",
    "way_tables",
]
