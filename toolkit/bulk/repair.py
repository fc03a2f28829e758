"""Finishing a run: what a run planned and the account does not show yet, applied again.

A run can end with items not as planned: a write refused or lost under faults (``failed``,
``unknown``), a bid change whose old value could not even be restored (``lost``), or a run cut
off half-way (the client was killed). The journal holds the whole plan of every run, so
:func:`repair` knows each item's intent (the last value the plan gave it) and its value
before the run. It reads live state for those campaigns only, and plans what is still
missing, three ways: what live already shows is skipped, and what someone else changed since
the run is a conflict, left out and listed. The rest is applied as a new journaled run.

>>> result = toolkit.repair(client, run_id)                           # doctest: +SKIP
>>> result.summary()                                                  # doctest: +SKIP

Only the item tables are repaired (countries and their bids, bid rules, source and subId
lists, targets of every kind); a campaign's settings, work status, CPA rules and creatives
are single calls whose outcome the run reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ToolkitError
from .apply import apply_plan
from .call_kinds import ITEM_TABLES, item_kind
from .diff import ABSENT
from .guards import GUARDS
from .journal import Journal, open_journal
from .outcomes import UNFINISHED, ApplyResult
from .plan import Plan, make_plan, read_live
from .read_back import live_state, same_value

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client

Key = tuple[str, str | None, int, str]  # target, list_type, campaign id, item


def intents(
    calls: list[dict[str, Any]],
) -> tuple[dict[Key, Any], dict[Key, Any], dict[Key, list[Any]]]:
    """Per item of the item tables: the value before the run (``ABSENT`` if it was not
    there), the value the plan left it with (a bid, ``True`` for presence, ``ABSENT``), and
    every value the run's calls could have left it with on the way (a bid change cut off
    between its drop and its add leaves it absent)."""
    before: dict[Key, Any] = {}
    after: dict[Key, Any] = {}
    between: dict[Key, list[Any]] = {}
    for call in calls:
        target, action = call["target"], call["action"]
        kind = item_kind(target)
        if kind is None:
            continue
        bids = call.get("bids") or {}
        for cid in call["campaign_ids"]:
            for raw in call.get("items") or list(bids):
                item = str(raw)
                key = (target, call.get("list_type"), int(cid), item)
                if action == "drop":
                    before.setdefault(key, kind.journaled_previous(call, int(cid), item))
                    after[key] = ABSENT
                else:
                    before.setdefault(key, ABSENT)
                    value = bids.get(item, call.get("bid"))
                    after[key] = True if value is None else float(value)
                between.setdefault(key, []).append(after[key])
    return before, after, between


def _tables(values: dict[Key, Any]) -> dict[str, pd.DataFrame]:
    """The item tables holding ``values`` (items ``ABSENT`` left out)."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in ITEM_TABLES}
    for (target, list_type, cid, item), value in values.items():
        if value is ABSENT:
            continue
        kind = item_kind(target)
        assert kind is not None, target
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


def run_to_repair(book: Journal) -> str:
    """The newest run that did not finish or left items failed, unknown or lost."""
    runs = book.runs()
    for run in reversed(list(runs.itertuples(index=False))):
        if run.state == "unfinished":
            return str(run.run_id)
        outcomes = book.outcomes(str(run.run_id))
        if outcomes["outcome"].isin(UNFINISHED).any():
            return str(run.run_id)
    raise ToolkitError(f"no run to repair in the journal {book.path}: every run finished")


def repair_plan(
    client: Client, run_id: str | None = None, *, journal: Journal | str | None = "default"
) -> tuple[str, Plan]:
    """The run to repair (``run_id``, or the newest unfinished one) and the plan that
    finishes it: the items whose live state is neither as the run planned nor changed by
    someone else since (those are ``plan.conflicts``)."""
    book = open_journal(journal)
    run_id = run_id or run_to_repair(book)
    if run_id not in set(book.runs()["run_id"]):
        raise ToolkitError(f"no run {run_id!r} in the journal {book.path}")
    before, after, between = intents(book.planned(run_id))
    if not after:
        return run_id, Plan()
    live = read_live(client, sorted({key[2] for key in after}))
    state, _ = live_state(live)
    base = {}
    for key, old in before.items():
        now = state.lookup(key[0], key[1], key[2], key[3])  # None: absent
        # what the run itself left on the way is no one else's change: plan from it
        if any(same_value(now, None if v is ABSENT else v) for v in between[key]):
            base[key] = ABSENT if now is None else now
        else:
            base[key] = old
    plan = make_plan(client, _tables(after), base=_tables(base), live=live, allow=GUARDS)
    return run_id, plan


def repair(
    client: Client,
    run_id: str | None = None,
    *,
    journal: Journal | str | None = "default",
    progress: bool = True,
    **options: Any,
) -> ApplyResult:
    """Finish run ``run_id`` (default: the newest run not finished as planned): apply what
    the account does not show yet as a new journaled run. Nothing to do gives an empty
    result (no run). ``options`` go to :func:`toolkit.bulk.apply.apply_plan`."""
    book = open_journal(journal)
    _, plan = repair_plan(client, run_id, journal=book)
    if not len(plan):
        return ApplyResult()
    return apply_plan(plan, client, progress=progress, journal=book, **options)


__all__ = ["intents", "repair", "repair_plan", "run_to_repair"]
