"""The kinds of call a plan makes, one row per ``Call.target``: how its calls are built from
the changes of an item table, sent with the client, inverted for undo and read back.

Every target kind of :data:`toolkit.spec.TARGET_KINDS` and every list of
:data:`toolkit.spec.LISTS` is a row, made from its spec row; bid rules, CPA rules, campaigns
(settings and work status) and creatives are rows of their own. :func:`call_kind` finds the
row of a target; the planner, apply, the read-back, undo and repair read it instead of
switching on the target's name.

>>> call_kind("subid_black").send.__qualname__
'ListCalls.send'
>>> call_kind("country").valued, call_kind("os").valued, call_kind("campaign").itemised
(True, False, False)
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .. import spec
from ..errors import ToolkitError
from .calls import BID_RULE, CAMPAIGN, CPA_RULE, CREATIVE, STEPS, WORK_MOVES, Call
from .cpa_ids import added_ids

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..client import BatchResult, Client

#: Items by campaign: ``{campaign id: {item: bid, or True}}``.
PerCampaign = Mapping[int, Mapping[Any, Any]]
#: One item of an item table as the calls name it: kind, list type, campaign id, item, value.
Item = tuple["ItemCalls", str | None, int, Any, Any]

#: The item tables, diffed as sets (or maps to a bid): key columns and value column.
ITEM_TABLES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "countries": (("campaign_id", "country"), "bid"),
    "targets": (("campaign_id", "kind", "list_type", "value"), None),
    "lists": (("campaign_id", "list", "item"), None),
    "bid_rules": (("campaign_id", "item"), "bid"),
}


class SendContext:
    """What the calls of a run are sent with: the client, and what they look up once on it
    (vertical ids by name)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._verticals: dict[str, int] | None = None

    def vertical_id(self, name: Any) -> int:
        if self._verticals is None:
            names = self.client.account.dictionary("vertical")
            self._verticals = {str(v): int(k) for k, v in names.items()}
        if name not in self._verticals:
            raise ToolkitError(f"unknown vertical {name!r}")
        return self._verticals[name]


@dataclass
class Inverse:
    """The inverse of a run as :meth:`CallKind.invert` builds it: whole calls, item inverses
    grouped by (action, target, list type) and campaign, and campaign moves."""

    calls: list[Call] = field(default_factory=list)
    items: dict[tuple[str, str, str | None], dict[int, dict[Any, Any]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(dict))
    )
    moves: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))

    def ordered(self) -> list[Call]:
        """Every inverse call, in the order of the steps."""
        calls = list(self.calls)
        for (action, target, list_type), per_campaign in self.items.items():
            calls += call_kind(target).inverse_calls(action, list_type, per_campaign)
        for move, cids in self.moves.items():
            calls.append(Call(move, move, CAMPAIGN, tuple(sorted(cids))))
        rank = {s: i for i, s in enumerate(STEPS)}
        return sorted(calls, key=lambda c: rank[c.step])


@dataclass(frozen=True)
class CallKind:
    """How the calls of one target are sent, answered item by item, inverted and checked.

    ``valued``: its items carry a bid (a bid change is a drop and an add, compensated when
    the add fails; the read-back checks the bid). ``itemised``: its calls add and drop items
    that the read-back checks one by one, that guards count and that repair finishes.
    """

    name: str
    valued: bool = False
    itemised: bool = False

    def send(self, context: SendContext, call: Call) -> BatchResult | None:
        """Send ``call``; a batch answer, or None when a single call raised nothing."""
        raise NotImplementedError  # pragma: no cover - every row sends

    def items_of(self, call: Call) -> list[tuple[Any, float | None]]:
        """The items of ``call`` that get an outcome each, with their bids."""
        if call.bids:
            return [(k, float(v)) for k, v in call.bids.items()]
        return [(i, call.bid) for i in call.items]

    def previous(self, call: Call, cid: int, item: Any) -> Any:
        """What ``call`` replaces for ``item`` of campaign ``cid`` (undo puts it back)."""
        return None

    def invert(self, row: Any, previous: Any, inverse: Inverse) -> None:
        """Add the inverse of one journaled outcome ``row`` to ``inverse``."""

    def prepare_undo(self, client: Client, call: Call) -> Call | None:
        """An inverse call completed from live state before it is sent (a new ``Call``:
        ``call`` is left as it is); None to skip it."""
        return call


# --------------------------------------------------------------------------- item kinds


@dataclass(frozen=True)
class ItemCalls(CallKind):
    """Adds and drops of items of one campaign table (``table``, keyed by its key columns)."""

    itemised: bool = True
    table: str = ""
    batch: bool = True  # the kind has batch operations: campaigns needing the same items
    typed: bool = False
    sent_as_code: bool = False

    # ------------------------------------------------------------------ planning

    def build(self, action: str, list_type: str | None, per_campaign: PerCampaign) -> list[Call]:
        """One call per group of campaigns that need exactly the same items (and bids)."""
        groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        for cid, items in per_campaign.items():
            if self.valued and action == "add":
                signature = tuple(sorted((k, float(v)) for k, v in items.items()))
            elif set(map(type, items)) == {str}:  # text sorts as its str: no key to call
                signature = tuple(sorted(items))
            else:
                signature = tuple(sorted(items, key=str))
            groups[signature].append(cid)
        calls = []
        for signature, cids in groups.items():
            for ids in [cids] if self.batch else [[c] for c in cids]:
                previous = None
                if self.valued and action == "drop":
                    previous = {c: dict(per_campaign[c]) for c in ids}
                calls.append(self._call(action, list_type, tuple(sorted(ids)), signature, previous))
        return calls

    def _call(
        self,
        action: str,
        list_type: str | None,
        ids: tuple[int, ...],
        signature: tuple[Any, ...],
        previous: Mapping[Any, Any] | None,
    ) -> Call:
        if self.valued and action == "add":
            items = tuple(k for k, _ in signature)
            return Call(
                action, action, self.name, ids, items=items, bids=dict(signature), previous=previous
            )
        return Call(
            action, action, self.name, ids, items=signature, list_type=list_type, previous=previous
        )

    def journaled_previous(self, call: Mapping[str, Any], cid: int, item: str) -> Any:
        """The value a journaled drop (``Call.record()``) replaced: its bid, or ``True``."""
        return True

    def readd(self, cid: int, item: Any, bid: float) -> Call:
        """The add of one item with its bid (the add half of a bid change, or its restore)."""
        return self.build("add", None, {cid: {item: bid}})[0]

    # ------------------------------------------------------------------ undo

    def previous(self, call: Call, cid: int, item: Any) -> Any:
        if self.valued and call.previous:
            return (call.previous.get(cid) or {}).get(item)
        return None

    def invert(self, row: Any, previous: Any, inverse: Inverse) -> None:
        action = "drop" if row.action == "add" else "add"
        bid = None
        if action == "add" and self.valued:
            if previous is None:
                return
            bid = previous
        list_type = row.list_type if isinstance(row.list_type, str) else None
        inverse.items[(action, self.name, list_type)][int(row.campaign_id)][row.item] = bid

    def inverse_calls(
        self, action: str, list_type: str | None, per_campaign: PerCampaign
    ) -> list[Call]:
        """The inverse calls of one group: one per campaign."""
        if self.valued and action == "add":
            return [
                Call(
                    action,
                    action,
                    self.name,
                    (cid,),
                    items=tuple(items),
                    bids={k: float(v) for k, v in items.items()},
                )
                for cid, items in per_campaign.items()
            ]
        return [
            Call(action, action, self.name, (cid,), items=tuple(items), list_type=list_type)
            for cid, items in per_campaign.items()
        ]

    # ------------------------------------------------------------------ read-back

    def live_key(self, list_type: str | None, cid: int, item: Any) -> tuple[Any, ...]:
        """The key of one item in the read-back's live state."""
        return (self.name, (list_type or "black") if self.typed else None, cid, str(item))

    def table_key(self, cid: int, list_type: str | None, item: Any) -> tuple[Any, ...]:
        """The item's key in its table (the columns of :data:`ITEM_TABLES`)."""
        return (cid, item)


@dataclass(frozen=True)
class TargetCalls(ItemCalls):
    """A target kind of :mod:`toolkit.spec` (its bids, typed lists, codes and batches)."""

    def send(self, context: SendContext, call: Call) -> BatchResult | None:
        targeting = context.client.targeting
        items: Any = dict(call.bids) if call.bids else list(call.items)
        ids = list(call.campaign_ids)
        if not self.batch:
            getattr(targeting, call.action)(ids[0], self.name, items, list_type=call.list_type)
            return None
        method = getattr(targeting, f"{call.action}_batch")
        return method(ids, self.name, items, list_type=call.list_type)

    def sent_item(self, value: Any, codes: Mapping[str, Mapping[str, str]]) -> Any:
        """A value of the ``targets`` table as it is sent: the code of an id for a kind sent
        as codes (None when the id has no code), else the value."""
        if not self.sent_as_code:
            return value
        return codes.get(self.name, {}).get(str(value))

    def table_key(self, cid: int, list_type: str | None, item: Any) -> tuple[Any, ...]:
        return (cid, item) if self.valued else (cid, self.name, list_type, item)

    def journaled_previous(self, call: Mapping[str, Any], cid: int, item: str) -> Any:
        if not self.valued:
            return True
        return ((call.get("previous") or {}).get(str(cid)) or {}).get(item)


@dataclass(frozen=True)
class ListCalls(ItemCalls):
    """A source or subId list: always sent as a batch."""

    table: str = "lists"

    def send(self, context: SendContext, call: Call) -> BatchResult | None:
        method = getattr(context.client.lists, f"{call.action}_batch")
        return method(list(call.campaign_ids), self.name, list(call.items))

    def table_key(self, cid: int, list_type: str | None, item: Any) -> tuple[Any, ...]:
        return (cid, self.name, item)


@dataclass(frozen=True)
class BidRuleCalls(ItemCalls):
    """Bid rules: one campaign a call; an add sets one bid for its items."""

    name: str = BID_RULE
    valued: bool = True
    table: str = "bid_rules"
    batch: bool = False

    def send(self, context: SendContext, call: Call) -> BatchResult | None:
        rules = context.client.bid_rules
        if call.action == "add":
            rules.add(call.campaign_ids[0], list(call.items), call.bid)
        else:
            rules.drop(call.campaign_ids[0], list(call.items))
        return None

    def build(self, action: str, list_type: str | None, per_campaign: PerCampaign) -> list[Call]:
        calls = []
        for cid, items in per_campaign.items():
            if action == "drop":
                keys = tuple(sorted(items))
                calls.append(Call(action, action, self.name, (cid,), keys, previous=dict(items)))
                continue
            by_bid: dict[float, list[str]] = defaultdict(list)
            for item, bid in items.items():
                by_bid[float(bid)].append(item)
            for bid, group in by_bid.items():
                calls.append(Call(action, action, self.name, (cid,), tuple(sorted(group)), bid=bid))
        return calls

    def previous(self, call: Call, cid: int, item: Any) -> Any:
        return call.previous.get(item) if call.previous else None

    def journaled_previous(self, call: Mapping[str, Any], cid: int, item: str) -> Any:
        return (call.get("previous") or {}).get(item)

    def inverse_calls(
        self, action: str, list_type: str | None, per_campaign: PerCampaign
    ) -> list[Call]:
        if action != "add":
            return super().inverse_calls(action, list_type, per_campaign)
        return [
            Call("add", "add", self.name, (cid,), items=(item,), bid=float(bid))
            for cid, items in per_campaign.items()
            for item, bid in items.items()
        ]


# --------------------------------------------------------------------------- record kinds


@dataclass(frozen=True)
class CampaignCalls(CallKind):
    """A campaign's settings (``update``) and work status (``start``/``pause``/``archive``)."""

    name: str = CAMPAIGN

    def send(self, context: SendContext, call: Call) -> BatchResult | None:
        campaigns = context.client.campaigns
        ids = list(call.campaign_ids)
        if call.action != "update":
            return getattr(campaigns, f"{call.action}_batch")(ids)
        params = dict(call.params or {})
        name = params.pop("name")
        vertical = context.vertical_id(params.pop("vertical"))
        settings = {k: ("" if v is None else v) for k, v in params.items()}
        campaigns.update(ids[0], name, vertical, **settings)
        return None

    def items_of(self, call: Call) -> list[tuple[Any, float | None]]:
        return [(None, None)]

    def previous(self, call: Call, cid: int, item: Any) -> Any:
        if not call.previous:
            return None
        return dict(call.previous) if call.action == "update" else call.previous.get(cid)

    def invert(self, row: Any, previous: Any, inverse: Inverse) -> None:
        if not previous:
            return
        cid = int(row.campaign_id)
        if row.action == "update":
            params = {**previous, "vertical": None}  # read live before it is sent
            inverse.calls.append(Call("update", "update", CAMPAIGN, (cid,), params=params))
        elif row.action in spec.WORK_ACTIONS and WORK_MOVES.get(str(previous)):
            inverse.moves[WORK_MOVES[str(previous)]].add(cid)

    def prepare_undo(self, client: Client, call: Call) -> Call | None:
        if call.action == "update":
            detail = client.campaigns.get(call.campaign_ids[0])
            params = {**(call.params or {}), "vertical": detail.get("vertical")}
            return replace(call, params=params)
        return call


@dataclass(frozen=True)
class CreativeCalls(CallKind):
    """Work status moves of creatives (``items`` are creative ids)."""

    name: str = CREATIVE

    def send(self, context: SendContext, call: Call) -> BatchResult | None:
        for creative_id in call.items:
            getattr(context.client.creatives, call.action)(int(creative_id))
        return None

    def previous(self, call: Call, cid: int, item: Any) -> Any:
        return call.previous.get(item) if call.previous else None

    def invert(self, row: Any, previous: Any, inverse: Inverse) -> None:
        move = WORK_MOVES.get(previous) if isinstance(previous, str) else None
        if move:
            call = Call(move, move, CREATIVE, (int(row.campaign_id),), items=(int(row.item),))
            inverse.calls.append(call)


@dataclass(frozen=True)
class CpaRuleCalls(CallKind):
    """CPA rules of one campaign: add (``params["rules"]``), edit (one rule), drop (ids)."""

    name: str = CPA_RULE

    def send(self, context: SendContext, call: Call) -> BatchResult | None:
        rules = context.client.cpa_rules
        cid = call.campaign_ids[0]
        if call.action == "drop":
            rules.drop(cid, list(call.items))
        else:
            getattr(rules, call.action)(cid, (call.params or {}).get("rules"))
        return None

    def items_of(self, call: Call) -> list[tuple[Any, float | None]]:
        if call.action == "edit":
            rules = (call.params or {}).get("rules") or [{}]
            return [(rules[0].get("id"), None)]
        if call.action == "drop":
            return super().items_of(call)
        return [(None, None)]

    def previous(self, call: Call, cid: int, item: Any) -> Any:
        rules = (call.previous or {}).get("rules") or []
        if not call.previous:
            return None
        if call.action == "add":  # the rules added and the ids live before
            return dict(call.previous)
        if call.action == "drop":  # each dropped rule's outcome holds that rule only
            own = [r for r in rules if r.get("id") is not None and str(r["id"]) == str(item)]
            return own or rules
        return rules

    def invert(self, row: Any, previous: Any, inverse: Inverse) -> None:
        if not previous:
            return
        cid = int(row.campaign_id)
        if row.action == "add" and isinstance(previous, dict):  # ids found when undone
            inverse.calls.append(Call("rules", "drop", CPA_RULE, (cid,), params=previous))
        elif row.action == "drop":  # ids kept until undo has checked which rules are gone
            rules = [dict(r) for r in previous]
            inverse.calls.append(Call("rules", "add", CPA_RULE, (cid,), params={"rules": rules}))
        elif row.action == "edit":
            inverse.calls.append(
                Call("rules", "edit", CPA_RULE, (cid,), params={"rules": previous})
            )

    def prepare_undo(self, client: Client, call: Call) -> Call | None:
        """The re-add of dropped rules keeps only those whose id is no longer live (a drop
        cut off before it landed must not be undone by a duplicate), without their ids; the
        drop of added rules finds their ids: live rules not there before the add, alike
        field by field, one per rule added (none when the add never landed)."""
        if call.action == "drop" and "before" in (call.params or {}):
            ids = added_ids(client.cpa_rules.list(call.campaign_ids[0]), call.params or {})
            return replace(call, items=tuple(ids)) if ids else None
        if call.action != "add":
            return call
        live = {int(r["id"]) for r in client.cpa_rules.list(call.campaign_ids[0])}
        rules = [
            {k: v for k, v in r.items() if k != "id"}
            for r in (call.params or {}).get("rules", [])
            if r.get("id") is None or int(r["id"]) not in live
        ]
        return replace(call, params={**(call.params or {}), "rules": rules}) if rules else None


# --------------------------------------------------------------------------- the table

RECORD_KINDS: dict[str, CallKind] = {
    k.name: k for k in (CampaignCalls(), CreativeCalls(), CpaRuleCalls(), BidRuleCalls())
}


@functools.cache
def _target_calls(
    name: str, valued: bool, batch: bool, typed: bool, sent_as_code: bool
) -> TargetCalls:
    """The row of a target kind, made once per set of traits it is made from (a kind
    replaced with other traits is another key, so a row is never out of date)."""
    table = "countries" if valued else "targets"
    return TargetCalls(
        name, valued=valued, table=table, batch=batch, typed=typed, sent_as_code=sent_as_code
    )


@functools.cache
def _list_calls_of(name: str) -> ListCalls:
    return ListCalls(name)


def call_kind(target: str) -> CallKind:
    """The row of ``target``: a target kind (either spelling), a list, ``bid_rule``,
    ``cpa_rule``, ``campaign`` or ``creative``. Raises KeyError for anything else."""
    if target in RECORD_KINDS:
        return RECORD_KINDS[target]
    if target in spec.LISTS:
        return _list_calls_of(target)
    kind = spec.target_kind(target)
    return _target_calls(kind.name, kind.bids, kind.batch_listed, kind.typed, kind.sent_as_code)


def item_kind(target: str) -> ItemCalls | None:
    """The row of ``target`` if its calls add and drop items, else None."""
    try:
        kind = call_kind(target)
    except KeyError:
        return None
    return kind if isinstance(kind, ItemCalls) else None


def is_valued(target: str) -> bool:
    """Whether the items of ``target`` carry a bid."""
    kind = item_kind(target)
    return kind is not None and kind.valued


# --------------------------------------------------------------------------- table keys


def _list_calls(name: Any) -> ItemCalls:
    if name not in spec.LISTS:
        raise KeyError(name)
    return call_kind(str(name))  # type: ignore[return-value]


_KEYS: dict[str, Callable[[tuple[Any, ...]], tuple[ItemCalls, str | None, Any]]] = {
    "countries": lambda key: (call_kind(spec.bid_kind().name), None, key[1]),  # type: ignore[dict-item]
    "lists": lambda key: (_list_calls(key[1]), None, key[2]),
    "bid_rules": lambda key: (RECORD_KINDS[BID_RULE], None, key[1]),  # type: ignore[dict-item]
    "targets": lambda key: (call_kind(spec.target_kind(str(key[1])).name), key[2], key[3]),  # type: ignore[dict-item]
}


def call_key(table: str, key: tuple[Any, ...]) -> tuple[ItemCalls, str | None, Any]:
    """The call kind, list type and item of the key of an item table's row (campaign id
    first). Raises KeyError for a kind or list the spec does not know."""
    return _KEYS[table](key)


def codes_of(refs: Mapping[str, pd.DataFrame] | None) -> dict[str, dict[str, str]]:
    """Per kind sent as codes (``language``): its ids -> codes, from the dictionary that
    labels the kind (its ``id`` and ``code`` columns)."""
    out: dict[str, dict[str, str]] = {}
    for kind in spec.TARGET_KINDS.values():
        df = (refs or {}).get(kind.labels or "") if kind.sent_as_code else None
        if df is not None and len(df):
            out[kind.name] = dict(zip(df["id"].astype(str), df["code"].astype(str), strict=True))
    return out


def table_items(
    table: str, values: Mapping[tuple[Any, ...], Any], codes: Mapping[str, Mapping[str, str]]
) -> Iterator[Item]:
    """The items of one item table (``{key: value}``, see :func:`toolkit.bulk.diff.as_map`)
    as the calls name them: values of kinds sent as codes as their codes (the id when it has
    none); rows of a kind the spec does not know are left out."""
    for key, value in values.items():
        try:
            kind, list_type, item = call_key(table, key)
        except KeyError:
            continue
        if isinstance(kind, TargetCalls):
            sent = kind.sent_item(item, codes)
            item = item if sent is None else sent
        yield kind, list_type, int(key[0]), item, value


__all__ = [
    "ITEM_TABLES",
    "RECORD_KINDS",
    "BidRuleCalls",
    "CallKind",
    "CampaignCalls",
    "CpaRuleCalls",
    "CreativeCalls",
    "Inverse",
    "ItemCalls",
    "ListCalls",
    "SendContext",
    "TargetCalls",
    "call_key",
    "call_kind",
    "codes_of",
    "is_valued",
    "item_kind",
    "table_items",
]
