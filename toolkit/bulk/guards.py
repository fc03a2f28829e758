"""Guards: a plan that would lose a large share of a list, empty a whitelist or archive many
campaigns is refused before any call, unless the guard is lifted by name.

Losses are counted by identity: an item is lost when the plan drops its key and does not add
the same key back. A bid change (drop and add of the same country) loses nothing; dropping
US and adding CA loses one country, whatever else is added.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from .. import spec
from ..errors import PlanRefused
from .call_kinds import item_kind
from .calls import BID_RULE, CAMPAIGN, Call

GUARDS: tuple[str, ...] = ("drop_share", "empty_whitelist", "bulk_archive")
DEFAULT_MAX_DROP_SHARE = 0.2
DEFAULT_MAX_ARCHIVE = 1
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
) -> None:
    """Raise :class:`PlanRefused` for the first guard the calls trip (unless allowed)."""
    calls = list(calls)
    counts = live_counts(live)
    dropped, added = _sides(calls)
    checks: dict[str, Callable[[], list[str]]] = {
        "drop_share": lambda: _over_share(dropped, added, counts, max_drop_share),
        "empty_whitelist": lambda: _emptied(dropped, added, counts),
        "bulk_archive": lambda: _archived(calls, max_archive),
    }
    for guard, check in checks.items():
        found = [] if guard in allowed else check()
        if found:
            raise PlanRefused(guard, found)


Keys = dict[tuple[int, str], set[Any]]


def _sides(calls: list[Call]) -> tuple[Keys, Keys]:
    """The keys the item calls drop and add, per campaign and label."""
    dropped: Keys = defaultdict(set)
    added: Keys = defaultdict(set)
    for call in calls:
        if item_kind(call.target) is None or call.action not in ("drop", "add"):
            continue
        keys = {str(k) for k in (call.bids or call.items)}
        side = dropped if call.action == "drop" else added
        for cid in call.campaign_ids:
            side[(cid, _label(call))] |= keys
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


def _archived(calls: list[Call], max_archive: int) -> list[str]:
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
    return [f"archives {len(archived)} campaigns (more than {max_archive}): {archived[:20]}"]


def live_counts(live: Mapping[str, pd.DataFrame]) -> dict[tuple[int, str], int]:
    """Items per campaign and label (``country``, ``subid_black``, ``cidr:white``...)."""
    counts: dict[tuple[int, str], int] = defaultdict(int)
    countries = live.get("countries")
    if countries is not None and len(countries):
        for cid, n in countries.groupby(countries["campaign_id"].astype(int)).size().items():
            counts[(int(cid), spec.bid_kind().name)] = int(n)
    lists = live.get("lists")
    if lists is not None and len(lists):
        for (cid, name), n in (
            lists.groupby([lists["campaign_id"].astype(int), lists["list"].astype(str)])
            .size()
            .items()
        ):
            counts[(int(cid), name)] = int(n)
    rules = live.get("bid_rules")
    if rules is not None and len(rules):
        for cid, n in rules.groupby(rules["campaign_id"].astype(int)).size().items():
            counts[(int(cid), BID_RULE)] = int(n)
    targets = live.get("targets")
    if targets is not None and len(targets):
        for row in targets.itertuples(index=False):
            label = row.kind + (f":{row.list_type}" if row.list_type else "")
            counts[(int(row.campaign_id), label)] += 1
    return counts


__all__ = ["GUARDS", "PlanRefused", "check_guards", "live_counts", "tripped"]
