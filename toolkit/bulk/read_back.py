"""The read-back after a run: the affected campaigns read again, each outcome checked and
settled against what is live.

A write whose answer the network hid is ``unknown`` until the read-back says whether it was
carried out; an "already been taken" answer proves that the item is there, not that it has
the planned bid, so ``already`` is checked by value.

>>> check = read_back(client, result.outcomes)                        # doctest: +SKIP
>>> check.differences, check.unverified                               # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ToolkitError
from ..frames import load_account
from ..text import single_spaced
from .call_kinds import ITEM_TABLES, codes_of, is_valued, item_kind, table_items
from .diff import as_map
from .outcome_states import OutcomeState
from .outcomes import Outcome
from .record_settle import is_record_move, settle_records

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..frames import Account

#: Outcomes the read-back looks at.
CHECKED = (OutcomeState.APPLIED, OutcomeState.ALREADY, OutcomeState.RESTORED, OutcomeState.UNKNOWN)


@dataclass
class LiveState:
    """What the read-back found live: the items of the item tables, keyed as their call
    kinds name them (:meth:`~toolkit.bulk.call_kinds.ItemCalls.live_key`), with their bids
    (``True`` for an item without one); ``unread`` maps a campaign id (``-1``: the
    dictionaries) to why it could not be read."""

    items: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    unread: dict[int, str] = field(default_factory=dict)
    #: The campaigns read: id -> their fields (settings and work status).
    campaigns: dict[int, dict[str, Any]] = field(default_factory=dict)

    def readable(self, o: Outcome) -> bool:
        kind = item_kind(o.target)
        coded = kind is not None and kind.sent_as_code
        return o.campaign_id not in self.unread and not (coded and -1 in self.unread)

    def value(self, o: Outcome) -> Any:
        """The live bid of ``o``'s item (countries, bid rules), ``True`` when a listed item or
        target is there, ``None`` when absent."""
        return self.lookup(o.target, o.list_type, o.campaign_id, o.item)

    def lookup(self, target: str, list_type: str | None, cid: int, item: Any) -> Any:
        """The live value of one item (see :meth:`value`)."""
        kind = item_kind(target)
        if kind is None:
            return None
        return self.items.get(kind.live_key(list_type, cid, item))


def same_value(a: Any, b: Any) -> bool:
    """Two live values alike: both absent (``None``), both present (``True``), or bids
    equal to 1e-9."""
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is True and b is True
    return abs(float(a) - float(b)) < 1e-9


def planned(o: Outcome) -> Any:
    """The value ``o`` leaves when carried out: its bid (or ``True``) for an add or a
    restore, ``None`` (absent) for a drop."""
    if o.action == "drop":
        return None
    if is_valued(o.target):
        return o.bid if o.bid is not None else True
    return True


def carried_out(o: Outcome, live: Any) -> bool:
    """True when ``live`` shows ``o`` carried out: an add's item there with its bid; a
    drop's item gone, or holding another bid than the dropped one (a bid change's add)."""
    if o.action != "drop":
        want = planned(o)
        if want is True and is_valued(o.target):
            return live is not None
        return same_value(live, want)
    if live is None:
        return True
    return is_valued(o.target) and o.previous is not None and not same_value(live, o.previous)


@dataclass
class ReadBack:
    """What reading the affected campaigns back found: the ``differences`` from the applied
    outcomes, the outcomes it could not check (``unverified``) and why (``error``), and the
    live state it read (``live``, for settling outcomes)."""

    differences: list[str] = field(default_factory=list)
    unverified: list[Outcome] = field(default_factory=list)
    error: str | None = None
    live: LiveState | None = None


def verify_outcomes(client: Client, outcomes: Iterable[Outcome]) -> list[str]:
    """Read back the affected campaigns; what does not match the applied outcomes (see
    :func:`read_back`, which also says what could not be checked)."""
    return read_back(client, outcomes).differences


def _checked(outcomes: Iterable[Outcome]) -> list[Outcome]:
    return [
        o
        for o in outcomes
        if o.outcome in CHECKED and item_kind(o.target) is not None and o.item is not None
    ]


def _read_ids(outcomes: list[Outcome]) -> list[int]:
    """The campaigns to read back: those of checked items and of unknown campaign moves."""
    ids = {o.campaign_id for o in _checked(outcomes)}
    ids |= {
        o.campaign_id for o in outcomes if o.outcome == OutcomeState.UNKNOWN and is_record_move(o)
    }
    return sorted(ids)


def read_live_state(client: Client, ids: list[int]) -> tuple[LiveState, str | None]:
    """The live items of campaigns ``ids``, and the first read error (with a count of the
    others), if any. Never raises for a failed read: what could not be read is ``unread``."""
    try:
        live = load_account(client, ids, progress=False)
    except ToolkitError as exc:  # AuthError: the key was refused meanwhile
        state = LiveState(unread=dict.fromkeys([*ids, -1], single_spaced(exc)))
        return state, single_spaced(exc)
    return live_state(live)


def live_state(live: Account) -> tuple[LiveState, str | None]:
    """The items of a loaded account as a :class:`LiveState`, and the first read error."""
    state = LiveState()
    errors: list[str] = []
    for f in live.failures.itertuples(index=False):
        message = single_spaced(f.message)
        if pd.isna(f.campaign_id):
            if f.operation != "account.dictionaries":
                continue  # the balance and the creative list are not compared
            state.unread[-1] = message
        else:
            state.unread.setdefault(int(f.campaign_id), message)
        errors.append(message)
    error = None
    if errors:
        others = len(set(errors)) - 1
        error = errors[0] + (f"; and {others} other error(s)" if others else "")
    campaigns = live.table("campaigns")
    if len(campaigns):
        for row in campaigns.astype(object).where(campaigns.notna(), None).to_dict("records"):
            state.campaigns[int(row["id"])] = row
    codes = codes_of(live.refs)
    for table, (key, value) in ITEM_TABLES.items():
        found = as_map(live.table(table), key, value)
        for kind, list_type, cid, item, v in table_items(table, found, codes):
            state.items[kind.live_key(list_type, cid, item)] = True if value is None else float(v)
    return state, error


def read_back(
    client: Client, outcomes: Iterable[Outcome], *, settle_outcomes: bool = False
) -> ReadBack:
    """Read back the affected campaigns and compare them with the outcomes.

    With ``settle_outcomes``, the outcomes are first settled in place (see
    :func:`settle_by_live`).
    A failed read never raises: the outcomes of a campaign whose detail or rules could not be
    read (after the client's retries), and language targets when the dictionaries could not
    be, are returned as ``unverified`` with the first error, not as differences.
    """
    outcomes = list(outcomes)
    ids = _read_ids(outcomes)
    if not ids:
        return ReadBack()
    live, error = read_live_state(client, ids)
    if settle_outcomes:
        settle_by_live(outcomes, live)
    check = ReadBack(error=error, live=live)
    final: dict[tuple[Any, ...], Outcome] = {}
    for o in _checked(outcomes):
        final[(o.target, o.list_type, o.campaign_id, str(o.item))] = o
    for o in final.values():
        if not live.readable(o):
            check.unverified.append(o)
            continue
        if o.outcome == OutcomeState.UNKNOWN or carried_out(o, live.value(o)):
            continue
        present = o.action != "drop"
        state = "present" if present else "absent"
        check.differences.append(
            f"campaign {o.campaign_id} {o.target} {o.item}: expected {state}"
            + (f" with bid {o.bid}" if present and o.bid is not None else "")
        )
    return check


def settle_by_live(outcomes: list[Outcome], live: LiveState) -> int:
    """Settle, item by item, what the answers left open: an ``unknown`` write becomes
    ``applied`` when live shows it carried out and ``failed`` when it does not; an ``already``
    whose item holds another value than planned becomes ``failed``. A drop followed in the
    same run by an add of the same item that was carried out is judged by that add (it found
    the item gone), not by live, which shows the add. Outcomes of campaigns that could not be
    read stay as they are. Returns how many outcomes changed."""
    open_ = [
        o
        for o in outcomes
        if o.outcome in (OutcomeState.UNKNOWN, OutcomeState.ALREADY)
        and o.item is not None
        and item_kind(o.target)
    ]
    readable = {c: f for c, f in live.campaigns.items() if c not in live.unread}
    changed = settle_records(outcomes, readable)
    # adds first: a drop is judged by the add after it, once that add is settled
    changed += sum(_settle_one(o, live) for o in open_ if o.action != "drop")
    # a restore of the old value is an add after the drop too (it found the item gone)
    added = {
        _key(o): o.seq
        for o in outcomes
        if o.action == "add" and o.outcome in (OutcomeState.APPLIED, OutcomeState.RESTORED)
    }
    for o in (o for o in open_ if o.action == "drop"):
        if added.get(_key(o), -1) > o.seq:
            changed += _settled_by_the_add(o)
        else:
            changed += _settle_one(o, live)
    return changed


def _key(o: Outcome) -> tuple[Any, ...]:
    return (o.target, o.list_type, o.campaign_id, str(o.item))


def _settled_by_the_add(o: Outcome) -> int:
    """A drop whose item a later add of the run found gone: ``already`` stands, ``unknown``
    is carried out (either way the item was gone before the add)."""
    if o.outcome != OutcomeState.UNKNOWN:
        return 0
    o.outcome = OutcomeState.APPLIED
    o.message = f"carried out (the add after it found the item gone) after: {o.message}"
    return 1


def _settle_one(o: Outcome, live: LiveState) -> int:
    """Settle one open outcome against live (see :func:`settle_by_live`); 1 when it changed."""
    if not live.readable(o):  # "already" proves presence, not the bid: unknown
        if o.outcome == OutcomeState.ALREADY and is_valued(o.target) and o.action != "drop":
            o.outcome = OutcomeState.UNKNOWN
            o.message = f"already there, its bid could not be read back: {o.message}"
            return 1
        return 0
    have = live.value(o)
    done = carried_out(o, have)
    shown = "absent" if have is None else ("there" if have is True else f"bid {have}")
    if o.outcome == OutcomeState.UNKNOWN:
        o.outcome = OutcomeState.APPLIED if done else OutcomeState.FAILED
        o.message = (
            f"{'carried out' if done else 'not carried out'} (settled by the read-back:"
            f" live {shown}) after: {o.message}"
        )
        return 1
    if done:
        return 0
    o.outcome = OutcomeState.FAILED
    o.message = f"answered as already done, but live is {shown}, not {planned(o)}: {o.message}"
    return 1


__all__ = [
    "LiveState",
    "ReadBack",
    "live_state",
    "same_value",
    "read_back",
    "read_live_state",
    "settle_by_live",
    "verify_outcomes",
]
