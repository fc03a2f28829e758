"""Guards: a plan that would lose a large share of a list, empty a whitelist, archive many
campaigns or move a bid far from its old value is refused before any call, unless the guard
is lifted by name.

Losses are counted by identity: an item is lost when the plan drops its key and does not add
the same key back. A bid change (drop and add of the same country) loses nothing; dropping
US and adding CA loses one country, whatever else is added.

A bid (a country's, or a bid rule's) trips ``bid_jump`` when it is raised more than
``max_bid_raise`` (3) times its old value, cut by more than ``max_bid_cut`` (two thirds) of
it, or set below the service's minimum price of its campaign and country where the planner
is given that price (``minimum_prices``). A new item has no old value: only the minimum
applies to it.

>>> bid_jump(0.0344, 50.0), bid_jump(0.30, 0.90), bid_jump(0.30, 0.0999)
('x1453.5, raised more than 3x', None, 'x0.33, cut by more than 67%')
>>> bid_jump(None, 0.05, minimum=0.3)
'below the minimum 0.30'
"""

from __future__ import annotations

import functools
import math
import numbers
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pandas as pd

from .. import spec
from ..errors import PlanRefused
from .call_kinds import is_valued, item_kind
from .calls import BID_RULE, CAMPAIGN, Call
from .edits import edits_of, money

GUARDS: tuple[str, ...] = ("drop_share", "empty_whitelist", "bulk_archive", "bid_jump")
DEFAULT_MAX_DROP_SHARE = 0.2
DEFAULT_MAX_ARCHIVE = 1
DEFAULT_MAX_BID_RAISE = 3.0
DEFAULT_MAX_BID_CUT = 2 / 3
#: The service's minimum price of a country's bid, per ``(campaign id, country code)``.
MinimumPrices = Mapping[tuple[int, str], float]
#: Relative slack of the bid comparisons, so that a bid exactly at a threshold (3x, a third,
#: the minimum) passes whatever the floating point rounding of the bids.
_SLACK = 1e-9
WHITELISTS: frozenset[str] = frozenset(
    {lk.name for lk in spec.LISTS.values() if lk.list_type == "white"}
    | {f"{k.name}:white" for k in spec.TARGET_KINDS.values() if k.typed}
)


def _label(call: Call) -> str:
    return call.target + (f":{call.list_type}" if call.list_type else "")


def check_guards(
    calls: Iterable[Call],
    live: Mapping[str, pd.DataFrame],
    allowed: set[str],
    max_drop_share: float = DEFAULT_MAX_DROP_SHARE,
    max_archive: int = DEFAULT_MAX_ARCHIVE,
    *,
    max_bid_raise: float = DEFAULT_MAX_BID_RAISE,
    max_bid_cut: float = DEFAULT_MAX_BID_CUT,
    minimum_prices: MinimumPrices | None = None,
) -> None:
    """Raise :class:`PlanRefused` for the first guard the calls trip (unless allowed)."""
    calls = list(calls)
    # with drop_share lifted, only white lists are checked (empty_whitelist): only theirs kept
    dropped, added = _sides(calls, None if "drop_share" not in allowed else WHITELISTS)
    counts = functools.cache(lambda: live_counts(live))  # counted once, and only if asked

    checks: dict[str, Callable[[], list[str]]] = {
        "drop_share": lambda: (
            _over_share(dropped, added, counts(), max_drop_share) if dropped else []
        ),
        "empty_whitelist": lambda: _emptied(dropped, added, counts()) if dropped else [],
        "bulk_archive": lambda: archived(calls, max_archive),
        "bid_jump": lambda: bid_jumps(
            bid_changes(calls),
            _campaign_names(live.get("campaigns")),
            max_bid_raise,
            max_bid_cut,
            minimum_prices,
        ),
    }
    rules = {"bid_jump": bid_rule(max_bid_raise, max_bid_cut)}
    for guard, check in checks.items():
        found = [] if guard in allowed else check()
        if found:
            raise PlanRefused(guard, found, rule=rules.get(guard))


def bid_rule(max_bid_raise: float, max_bid_cut: float) -> str:
    """What ``bid_jump`` refuses, in words, with its thresholds."""
    return (
        f"bid_jump refuses a bid raised more than {max_bid_raise:g}x its old value, cut by more"
        f" than {max_bid_cut:.0%} of it, or set below the service's minimum price where the plan"
        " knows it (thresholds: max_bid_raise, max_bid_cut)"
    )


@dataclass(frozen=True)
class Guards:
    """The guards a plan is checked by: those lifted by name (``allowed``) and their options,
    checked when made (an unknown guard, a threshold that means nothing, a minimum price that
    is not ``(campaign id, country) -> price`` raise ValueError).

    >>> Guards({"bid_jump"}, max_bid_raise=2.0).allowed
    frozenset({'bid_jump'})
    """

    allowed: Iterable[str] = frozenset()
    max_drop_share: float = DEFAULT_MAX_DROP_SHARE
    max_archive: int = DEFAULT_MAX_ARCHIVE
    max_bid_raise: float = DEFAULT_MAX_BID_RAISE
    max_bid_cut: float = DEFAULT_MAX_BID_CUT
    minimum_prices: MinimumPrices | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        allowed = frozenset(self.allowed)
        unknown = allowed - set(GUARDS)
        if unknown:
            raise ValueError(f"unknown guards {sorted(unknown)}; guards: {', '.join(GUARDS)}")
        check_bid_limits(self.max_bid_raise, self.max_bid_cut)
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "minimum_prices", minimum_prices_of(self.minimum_prices))

    def check(self, calls: Iterable[Call], live: Mapping[str, pd.DataFrame]) -> None:
        """Raise :class:`PlanRefused` for the first guard the calls trip (unless allowed)."""
        check_guards(
            calls,
            live,
            set(self.allowed),
            self.max_drop_share,
            self.max_archive,
            max_bid_raise=self.max_bid_raise,
            max_bid_cut=self.max_bid_cut,
            minimum_prices=self.minimum_prices,
        )


Keys = dict[tuple[int, str], set[Any]]


def _sides(calls: list[Call], labels: Collection[str] | None = None) -> tuple[Keys, Keys]:
    """The keys the item calls drop and add, per campaign and label (those of ``labels``
    only, unless None)."""
    dropped: Keys = defaultdict(set)
    added: Keys = defaultdict(set)
    for call in calls:
        if item_kind(call.target) is None or call.action not in ("drop", "add"):
            continue
        if labels is not None and _label(call) not in labels:
            continue
        keys = set(map(str, call.bids or call.items))
        side = dropped if call.action == "drop" else added
        label, shared = _label(call), len(call.campaign_ids) > 1
        for cid in call.campaign_ids:
            if (cid, label) in side:
                side[(cid, label)] |= keys
            else:  # a set of its own (this call's when it has one campaign)
                side[(cid, label)] = set(keys) if shared else keys
    return dropped, added


def tripped(
    dropped: Keys,
    added: Keys,
    counts: dict[tuple[int, str], int],
    allowed: Iterable[str] = (),
    max_drop_share: float = DEFAULT_MAX_DROP_SHARE,
) -> dict[tuple[int, str], str]:
    """``(campaign_id, label) -> guard`` for each list the drops would trip a guard on
    (``drop_share``, ``empty_whitelist``) unless allowed: what a planner that keeps the rest
    of its changes leaves out."""
    allowed = set(allowed)
    out: dict[tuple[int, str], str] = {}
    for (cid, label), keys in sorted(dropped.items()):
        total = counts.get((cid, label), 0)
        if "empty_whitelist" not in allowed and _empties(label, keys, total, added, cid):
            out[(cid, label)] = "empty_whitelist"
        elif "drop_share" not in allowed and _over(keys, added, cid, label, total, max_drop_share):
            out[(cid, label)] = "drop_share"
    return out


def _lost(keys: set[Any], added: Keys, cid: int, label: str) -> int:
    return len(keys - added.get((cid, label), set()))


def _over(
    keys: set[Any], added: Keys, cid: int, label: str, total: int, max_drop_share: float
) -> bool:
    return bool(total) and _lost(keys, added, cid, label) / total > max_drop_share


def _empties(label: str, keys: set[Any], total: int, added: Keys, cid: int) -> bool:
    return label in WHITELISTS and len(keys) >= total > 0 and not added.get((cid, label))


def _over_share(
    dropped: Keys, added: Keys, counts: dict[tuple[int, str], int], max_drop_share: float
) -> list[str]:
    over = []
    for (cid, label), keys in sorted(dropped.items()):
        total = counts.get((cid, label), 0)
        lost = _lost(keys, added, cid, label)
        if _over(keys, added, cid, label, total, max_drop_share):
            over.append(
                f"campaign {cid} {label}: loses {lost} of {total} ({lost / total:.0%}"
                f" > {max_drop_share:.0%})"
            )
    return over


def _emptied(dropped: Keys, added: Keys, counts: dict[tuple[int, str], int]) -> list[str]:
    emptied = []
    for (cid, label), keys in sorted(dropped.items()):
        total = counts.get((cid, label), 0)
        if _empties(label, keys, total, added, cid):
            emptied.append(
                f"campaign {cid} {label}: all {len(keys)} items dropped (traffic widens)"
            )
    return emptied


def archived(calls: list[Call], max_archive: int) -> list[str]:
    """The ``bulk_archive`` refusal of ``calls`` (more than ``max_archive`` campaigns
    archived), or nothing."""
    archived = sorted(
        {
            c
            for call in calls
            if call.action == "archive" and call.target == CAMPAIGN
            for c in call.campaign_ids
        }
    )
    if len(archived) <= max_archive:
        return []
    shown = ", ".join(map(str, archived[:20]))
    more = f" and {len(archived) - 20} more" if len(archived) > 20 else ""
    return [f"archives {len(archived)} campaigns (more than {max_archive}): {shown}{more}"]


class BidChange(NamedTuple):
    """A bid a plan sets: ``target`` ``country`` or ``bid_rule``, ``key`` the country code or
    the bid rule's item, ``old`` the live bid it replaces (None for a new item)."""

    campaign_id: int
    target: str
    key: str
    old: float | None
    new: float


def bid_changes(calls: Iterable[Call]) -> list[BidChange]:
    """Every bid the calls set: the changed bids (a drop carrying the old bid, then an add)
    and the bids of new items."""
    out = []
    # only valued calls carry bids, and a bid change pairs a drop and an add of one target
    for e in edits_of([c for c in calls if is_valued(c.target)]):
        if e.what in ("bid", "add") and is_valued(e.target) and e.new is not None:
            old = float(e.old) if e.what == "bid" and e.old is not None else None
            out.append(BidChange(e.campaign_id, e.target, str(e.key), old, float(e.new)))
    return out


def check_bid_limits(max_bid_raise: float, max_bid_cut: float) -> None:
    """Raise ValueError for thresholds of ``bid_jump`` that mean nothing."""
    if not (_number(max_bid_raise) and max_bid_raise >= 1):
        raise ValueError(
            f"max_bid_raise must be a number of times the old bid, at least 1 (3.0: a bid may"
            f" triple), got {max_bid_raise!r}"
        )
    if not (_number(max_bid_cut) and 0 <= max_bid_cut <= 1):
        raise ValueError(
            f"max_bid_cut must be the share of the old bid a cut may take, from 0 to 1 (2/3: a"
            f" bid may fall to a third), got {max_bid_cut!r}"
        )


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def minimum_prices_of(prices: MinimumPrices | None) -> dict[tuple[int, str], float]:
    """``prices`` keyed ``(int campaign id, upper-case country code)``, missing prices left
    out; a key or price that is not one raises ValueError naming it."""
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise ValueError(
            f"minimum_prices must map (campaign id, country) to a price, got {type(prices)}"
        )
    out: dict[tuple[int, str], float] = {}
    for key, price in prices.items():
        try:
            if not (isinstance(key, tuple) and len(key) == 2):
                raise ValueError(key)
            number = float(price)
            out_key = (int(key[0]), str(key[1]).strip().upper())
        except (TypeError, ValueError):
            raise ValueError(
                f"minimum_prices: {key!r}: {price!r} is not (campaign id, country) -> price"
            ) from None
        if not math.isnan(number):
            out[out_key] = number
    return out


def bid_jump(
    old: float | None,
    new: float,
    max_bid_raise: float = DEFAULT_MAX_BID_RAISE,
    max_bid_cut: float = DEFAULT_MAX_BID_CUT,
    minimum: float | None = None,
) -> str | None:
    """Why a bid moved from ``old`` (None: a new item) to ``new`` trips ``bid_jump``, or None.

    Exactly ``max_bid_raise`` times the old bid, exactly ``1 - max_bid_cut`` of it, or exactly
    the minimum pass.
    """
    why = []
    if old is not None and old > 0:
        ratio = new / old
        if ratio > max_bid_raise * (1 + _SLACK):
            why.append(f"x{_ratio(ratio)}, raised more than {max_bid_raise:g}x")
        elif ratio < (1 - max_bid_cut) * (1 - _SLACK):
            why.append(f"x{_ratio(ratio)}, cut by more than {max_bid_cut:.0%}")
    if minimum is not None and new < minimum * (1 - _SLACK):
        why.append(f"below the minimum {money(minimum)}")
    return "; ".join(why) or None


def _ratio(ratio: float) -> str:
    """``1453.5``, ``3.5``, ``0.01``, ``0.33``."""
    return f"{ratio:.1f}" if ratio >= 1 else f"{ratio:.2g}"


def bid_jumps(
    changes: Iterable[BidChange],
    names: Mapping[int, str] | None = None,
    max_bid_raise: float = DEFAULT_MAX_BID_RAISE,
    max_bid_cut: float = DEFAULT_MAX_BID_CUT,
    minimum_prices: MinimumPrices | None = None,
) -> list[str]:
    """One line per bid that trips ``bid_jump``:
    ``campaign 1000003 (Name) country IN: 0.0344 -> 50.00 (x1453.5, raised more than 3x)``."""
    check_bid_limits(max_bid_raise, max_bid_cut)
    minimums = minimum_prices_of(minimum_prices)
    country = spec.bid_kind().name
    out = []
    for c in changes:
        minimum = minimums.get((c.campaign_id, c.key.upper())) if c.target == country else None
        why = bid_jump(c.old, c.new, max_bid_raise, max_bid_cut, minimum)
        if why is None:
            continue
        name = (names or {}).get(c.campaign_id)
        who = f"campaign {c.campaign_id}" + (f" ({name})" if name else "")
        what = "bid rule" if c.target == BID_RULE else c.target
        was = "new" if c.old is None else money(c.old)
        out.append(f"{who} {what} {c.key}: {was} -> {money(c.new)} ({why})")
    return out


def _campaign_names(campaigns: pd.DataFrame | None) -> dict[int, str]:
    if campaigns is None or campaigns.empty or "name" not in campaigns:
        return {}
    return {
        int(i): str(n)
        for i, n in zip(campaigns["id"], campaigns["name"], strict=True)
        if isinstance(n, str) and n
    }


def live_counts(live: Mapping[str, pd.DataFrame]) -> dict[tuple[int, str], int]:
    """Items per campaign and label (``country``, ``subid_black``, ``cidr:white``...)."""
    counts: dict[tuple[int, str], int] = defaultdict(int)
    countries = live.get("countries")
    if countries is not None and len(countries):
        for cid, n in countries.groupby(countries["campaign_id"].astype(int)).size().items():
            counts[(int(cid), spec.bid_kind().name)] = int(n)
    lists = live.get("lists")
    if lists is not None and len(lists):
        names = lists["list"]
        if not isinstance(names.dtype, pd.CategoricalDtype) or names.isna().any():
            names = names.astype(str)  # categories without a missing one: grouped as they are
        groups = lists.groupby([lists["campaign_id"].astype(int), names], observed=True)
        for (cid, name), n in groups.size().items():
            counts[(int(cid), str(name))] = int(n)
    rules = live.get("bid_rules")
    if rules is not None and len(rules):
        for cid, n in rules.groupby(rules["campaign_id"].astype(int)).size().items():
            counts[(int(cid), BID_RULE)] = int(n)
    targets = live.get("targets")
    if targets is not None and len(targets):
        cids = targets["campaign_id"].astype(int).tolist()
        for key, n in Counter(zip(cids, _target_labels(targets), strict=True)).items():
            counts[key] += n
    return counts


def _target_labels(targets: pd.DataFrame) -> list[str]:
    """Per row of the targets table, its label (``os``, ``cidr:white``...)."""
    made: dict[tuple[Any, Any], str] = {}  # kind and list type -> label, made once
    out = []
    for kind, list_type in zip(targets["kind"], targets["list_type"], strict=True):
        label = made.get((kind, list_type))
        if label is None:
            label = made[(kind, list_type)] = kind + (f":{list_type}" if list_type else "")
        out.append(label)
    return out


__all__ = [
    "archived",
    "DEFAULT_MAX_BID_CUT",
    "DEFAULT_MAX_BID_RAISE",
    "GUARDS",
    "BidChange",
    "Guards",
    "MinimumPrices",
    "PlanRefused",
    "bid_changes",
    "bid_jump",
    "bid_jumps",
    "bid_rule",
    "check_bid_limits",
    "check_guards",
    "live_counts",
    "minimum_prices_of",
    "tripped",
]
