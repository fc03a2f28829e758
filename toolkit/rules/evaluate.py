"""Rules to a plan: the decisions of :mod:`toolkit.rules.decide` checked against the account
and written into its tables, then planned by the one planner every face uses.

>>> import toolkit
>>> plan, decisions = toolkit.evaluate_rules("rules.yaml", "stats.csv", client)  # doctest: +SKIP
>>> plan                       # the preview: every change with its numbers     # doctest: +SKIP
>>> plan.apply(client)                                                          # doctest: +SKIP

Each decided row gets a ``status``; the first rule to decide an item wins:

- ``planned``: in the plan;
- ``already``: the account is already so (it takes no place in the rule's ``limit``);
- ``over limit``: past the rule's ``limit`` for its campaign;
- ``conflict``: an earlier rule decided the same item otherwise (another action, or another
  bid or factor);
- ``earlier rule``: an earlier rule decided the same item the same way (planned once, with
  the earlier rule's reason);
- ``unknown campaign``: the statistics name a campaign the account does not have;
- ``no whitelist``: a whitelist rule on a campaign without a whitelist at that level (its
  first item would shut out every other source or subId);
- ``not targeted``: a country bid of a campaign that does not target the country;
- ``no bid``: a ``factor`` with no current bid to scale;
- ``archived``: a campaign to pause that is archived;
- ``guard drop_share`` / ``guard empty_whitelist``: the list's drops would trip that guard
  of the planner; the list's changes are held back and the rest of the plan goes ahead
  (``allow=`` lifts the guard, as for :func:`toolkit.plan`).

A ``factor`` scales the current bid: a country's bid, or a source's or subId's bid rule; an
item without a bid rule of its own is bought at its campaign's country bids, so its new bid
rule is the factor times the campaign's highest country bid (``old`` shows that bid).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from .. import spec
from ..bulk.calls import BID_RULE, CAMPAIGN
from ..bulk.guards import DEFAULT_MAX_DROP_SHARE, live_counts, tripped
from ..bulk.plan import Plan, make_plan, read_live
from ..bulk.result_book import worst_of
from ..bulk.workbook_layout import MAX_BID
from ..frames import Account
from ..stats.schema import COUNTRY
from .decide import ALREADY, DECIDED, Stats, decide, read_windows, typed
from .model import Rule, load_rules

if TYPE_CHECKING:  # pragma: no cover
    from ..bulk.outcomes import ApplyResult
    from ..client import Client

PLANNED, CONFLICT, EARLIER = "planned", "conflict", "earlier rule"
NO_WHITELIST = "no whitelist"
UNKNOWN, NOT_TARGETED, NO_BID, ARCHIVED = "unknown campaign", "not targeted", "no bid", "archived"
#: The columns evaluation adds to the decisions frame.
EXTRA_COLUMNS = ("campaign_name", "target", "old", "new")


class RulesResult(NamedTuple):
    """What :func:`evaluate_rules` returns: the plan and every decision with its evidence."""

    plan: Plan
    decisions: pd.DataFrame


def list_name(level: str, colour: str) -> str:
    """The list of ``level`` items (``source``/``subid``) of a colour (``black``/``white``)."""
    return next(
        lk.name for lk in spec.LISTS.values() if lk.entity == level and lk.list_type == colour
    )


@dataclass
class _State:
    """The account as the decisions meet it, and the edits they make."""

    lists: set[tuple[int, str, str]]
    whitelisting: set[tuple[int, str]]
    bid_rules: dict[tuple[int, str], float]
    countries: dict[tuple[int, str], float]
    work: dict[int, str]
    adds: list[tuple[int, str, str]] = field(default_factory=list)
    drops: list[tuple[int, str, str]] = field(default_factory=list)
    rule_bids: dict[tuple[int, str], float] = field(default_factory=dict)
    country_bids: dict[tuple[int, str], float] = field(default_factory=dict)
    pauses: set[int] = field(default_factory=set)
    top_bids: dict[int, float] = field(default_factory=dict)

    @classmethod
    def of(cls, account: Account) -> _State:
        lists = account.table("lists")
        triples = set(
            zip(
                lists["campaign_id"].astype(int),
                lists["list"].astype(str),
                lists["item"].astype(str),
                strict=True,
            )
        )
        rules = account.table("bid_rules")
        countries = account.table("countries")
        campaigns = account.table("campaigns")
        top = countries.groupby("campaign_id", observed=True)["bid"].max().dropna()
        return cls(
            triples,
            {(c, n) for c, n, _ in triples if spec.LISTS[n].list_type == "white"},
            _bids(rules, "item"),
            _bids(countries, COUNTRY),
            dict(
                zip(campaigns["id"].astype(int), campaigns["work_status"].astype(str), strict=True)
            ),
            top_bids={int(c): float(b) for c, b in top.items()},
        )

    def is_done(self, rule: Rule, rows: pd.DataFrame) -> np.ndarray:
        """Which decided rows the account already is as the rule wants (nothing to change:
        they take no place in the rule's limit)."""
        check = DONE.get(rule.action)
        if check is None:
            return np.zeros(len(rows), dtype=bool)
        pairs = zip(rows["campaign_id"].astype(int), rows["key"].astype(str), strict=True)
        return np.fromiter((check(self, rule, c, k) for c, k in pairs), bool, len(rows))


def _bids(df: pd.DataFrame, key: str) -> dict[tuple[int, str], float]:
    return {
        (int(c), str(k)): float(b)
        for c, k, b in zip(df["campaign_id"], df[key], df["bid"], strict=True)
    }


Outcome = tuple[str, str | None, Any, Any]  # status, target, old, new


def _blacklist(s: _State, rule: Rule, cid: int, key: str) -> Outcome:
    black, white = list_name(rule.level, "black"), list_name(rule.level, "white")
    if (cid, white, key) in s.lists:
        s.drops.append((cid, white, key))
        return PLANNED, white, "whitelisted", "dropped"
    if (cid, white) in s.whitelisting:  # a whitelist without it: no traffic from it
        return ALREADY, white, "not whitelisted", None
    if (cid, black, key) in s.lists:
        return ALREADY, black, "blacklisted", None
    s.adds.append((cid, black, key))
    return PLANNED, black, None, "blacklisted"


def _blacklisted(s: _State, rule: Rule, cid: int, key: str) -> bool:
    black, white = list_name(rule.level, "black"), list_name(rule.level, "white")
    if (cid, white, key) in s.lists:
        return False
    return (cid, white) in s.whitelisting or (cid, black, key) in s.lists


def _whitelisted(s: _State, rule: Rule, cid: int, key: str) -> bool:
    return (cid, list_name(rule.level, "white"), key) in s.lists


def _paused(s: _State, rule: Rule, cid: int, key: str) -> bool:
    return s.work.get(cid) == "Paused"


#: Per action, whether the account already is as it wants (before any change is made).
DONE: dict[str, Callable[[_State, Rule, int, str], bool]] = {
    "blacklist": _blacklisted,
    "whitelist": _whitelisted,
    "pause": _paused,
}


def _whitelist(s: _State, rule: Rule, cid: int, key: str) -> Outcome:
    black, white = list_name(rule.level, "black"), list_name(rule.level, "white")
    if (cid, white, key) in s.lists:
        return ALREADY, white, "whitelisted", None
    if (cid, white) not in s.whitelisting:  # a first whitelist item would shut out the rest
        return NO_WHITELIST, white, None, None
    was = None
    if (cid, black, key) in s.lists:
        s.drops.append((cid, black, key))
        was = "blacklisted"
    s.adds.append((cid, white, key))
    return PLANNED, white, was, "whitelisted"


def _new_bid(rule: Rule, old: float | None) -> float | None:
    if rule.bid is not None:
        return round(rule.bid, 4)
    if old is None or rule.factor is None:
        return None
    return round(old * rule.factor, 4)


def _bid(s: _State, rule: Rule, cid: int, key: str) -> Outcome:
    if rule.level == COUNTRY:
        code = key.strip().upper()
        old = s.countries.get((cid, code))
        if old is None:
            return NOT_TARGETED, COUNTRY, None, None
        target, book, where = COUNTRY, s.country_bids, (cid, code)
    else:
        old = s.bid_rules.get((cid, key))
        if old is None and rule.factor is not None:  # bought at the campaign's bids
            old = s.top_bids.get(cid)
        target, book, where = BID_RULE, s.rule_bids, (cid, key)
    new = _new_bid(rule, old)
    if new is None:
        return NO_BID, target, old, None
    new = min(max(new, 0.0001), MAX_BID)
    if old is not None and abs(old - new) < 1e-9:
        return ALREADY, target, old, new
    book[where] = new
    return PLANNED, target, old, new


def _pause(s: _State, rule: Rule, cid: int, key: str) -> Outcome:
    status = s.work.get(cid)
    if status == "Archived":
        return ARCHIVED, CAMPAIGN, status, None
    if status == "Paused":
        return ALREADY, CAMPAIGN, status, None
    s.pauses.add(cid)
    return PLANNED, CAMPAIGN, status, "Paused"


#: How each action meets the account: one row per action of ``model.ACTIONS``.
EFFECTS: dict[str, Callable[[_State, Rule, int, str], Outcome]] = {
    "blacklist": _blacklist,
    "whitelist": _whitelist,
    "bid": _bid,
    "pause": _pause,
}


def settle(decisions: pd.DataFrame, rules: list[Rule], state: _State) -> pd.DataFrame:
    """The decisions with their status against the account, in rule order (the first rule
    to decide an item wins), and the state's edits filled in."""
    by_name = {r.name: r for r in rules}
    seen: dict[tuple[int, str, str], tuple[Any, ...]] = {}
    out = decisions.copy()
    results: list[Outcome] = []
    for row in out.itertuples(index=False):
        if row.status != DECIDED:
            results.append((row.status, None, None, None))
            continue
        rule, cid, key = by_name[row.rule], int(row.campaign_id), str(row.key)
        earlier = seen.get((cid, row.level, key))
        if earlier is not None:
            same = earlier[1:] == (rule.action, rule.bid, rule.factor)
            status = EARLIER if same else CONFLICT
            results.append((status, None, f"rule {earlier[0]!r}: {earlier[1]}", None))
            continue
        if cid not in state.work:
            results.append((UNKNOWN, None, None, None))
            continue
        seen.setdefault((cid, row.level, key), (rule.name, rule.action, rule.bid, rule.factor))
        results.append(EFFECTS[rule.action](state, rule, cid, key))
    columns = ["status", "target", "old", "new"]
    out[columns] = pd.DataFrame(results, columns=columns, index=out.index, dtype=object)
    return out


def hold_back(
    decisions: pd.DataFrame,
    state: _State,
    account: Account,
    allow: Any = (),
    max_drop_share: float = DEFAULT_MAX_DROP_SHARE,
) -> pd.DataFrame:
    """Hold back the list changes of the lists whose drops would trip a guard
    (``drop_share``, ``empty_whitelist``): those decisions get the status ``guard <name>``
    and nothing of them is planned, so the rest of the plan goes ahead; ``allow`` lifts the
    guards by name, as for :func:`toolkit.plan`."""
    dropped: dict[tuple[int, str], set[Any]] = defaultdict(set)
    added: dict[tuple[int, str], set[Any]] = defaultdict(set)
    for cid, name, key in state.drops:
        dropped[(cid, name)].add(key)
    for cid, name, key in state.adds:
        added[(cid, name)].add(key)
    counts = live_counts({"lists": account.table("lists")})
    trip = tripped(dropped, added, counts, set(allow), max_drop_share)
    if not trip:
        return decisions
    held = {(c, k): trip[(c, n)] for c, n, k in state.drops if (c, n) in trip}
    state.drops = [d for d in state.drops if (d[0], d[2]) not in held]
    state.adds = [a for a in state.adds if (a[0], a[2]) not in held]
    out = decisions.copy()
    planned = out["status"] == PLANNED
    guard = [
        held.get((int(c), str(k))) if ok else None
        for c, k, ok in zip(out["campaign_id"], out["key"], planned, strict=True)
    ]
    for i, g in zip(out.index, guard, strict=True):
        if g is not None:
            out.loc[i, "status"] = f"guard {g}"
    return out


def desired(account: Account, state: _State) -> dict[str, pd.DataFrame]:
    """The account's tables with the state's edits written in (only the tables touched)."""
    out: dict[str, pd.DataFrame] = {}
    if state.adds or state.drops:
        out["lists"] = _listed(account.table("lists"), state)
    if state.rule_bids:
        out["bid_rules"] = _upsert(account.table("bid_rules"), "item", state.rule_bids)
    if state.country_bids:
        out["countries"] = _upsert(account.table("countries"), COUNTRY, state.country_bids)
    if state.pauses:
        df = account.table("campaigns").copy()
        df.loc[df["id"].isin(state.pauses), "work_status"] = "Paused"
        out["campaigns"] = df
    return out


def _listed(lists: pd.DataFrame, state: _State) -> pd.DataFrame:
    keys = pd.Series(
        list(
            zip(
                lists["campaign_id"].astype(int),
                lists["list"].astype(str),
                lists["item"].astype(str),
                strict=True,
            )
        ),
        index=lists.index,
        dtype=object,
    )
    kept = lists[~keys.isin(set(state.drops)).to_numpy(dtype=bool)]
    added = pd.DataFrame(state.adds, columns=["campaign_id", "list", "item"])
    return pd.concat([kept, added.astype(lists.dtypes.to_dict())], ignore_index=True)


def _upsert(df: pd.DataFrame, key: str, bids: Mapping[tuple[int, str], float]) -> pd.DataFrame:
    """``df`` with the bids set (rows added for keys it lacks)."""
    df = df.copy()
    pairs = list(zip(df["campaign_id"].astype(int), df[key].astype(str), strict=True))
    df["bid"] = [bids.get(p, b) for p, b in zip(pairs, df["bid"], strict=True)]
    new = [(c, k, b) for (c, k), b in bids.items() if (c, k) not in set(pairs)]
    if not new:
        return df
    extra = pd.DataFrame(new, columns=["campaign_id", key, "bid"])
    extra = extra.reindex(columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, extra], ignore_index=True)


def _changes(decisions: pd.DataFrame) -> list[tuple[Any, list[tuple[int, str, str]]]]:
    """Per planned decision (its row), the ``(campaign_id, target, key)`` of the changes it
    may make, as the plan's edits and outcomes name them: a list change may also drop the
    item from the other list of its level; a campaign's move has the key ``""``."""
    out = []
    for row in decisions[decisions["status"] == PLANNED].itertuples():
        cid, target = int(row.campaign_id), str(row.target)
        key = "" if target == CAMPAIGN else str(row.key)
        names = [target]
        if target in spec.LISTS:
            names += [list_name(str(row.level), c) for c in ("black", "white")]
        out.append((row, [(cid, n, key) for n in dict.fromkeys(names)]))
    return out


def reasons(decisions: pd.DataFrame) -> dict[tuple[int, str, str], str]:
    """``(campaign_id, target, key) -> "rule: why"`` of the planned decisions, as the plan
    preview looks them up (a campaign's move has the key ``""``)."""
    out: dict[tuple[int, str, str], str] = {}
    for row, keys in _changes(decisions):
        for key in keys:
            out.setdefault(key, f"{row.rule}: {row.why}")
    return out


def with_outcomes(decisions: pd.DataFrame, result: ApplyResult) -> pd.DataFrame:
    """The decisions with what became of each planned one when its plan was applied:
    ``outcome`` (the worst outcome of its changes: ``applied``, ``already``, ``failed``,
    ``unknown``, ``restored``, ``lost``; missing for a decision not planned or not sent)
    and ``message`` (the service's words, when it refused).

    >>> result = plan.apply(client)                                     # doctest: +SKIP
    >>> with_outcomes(decisions, result).outcome.value_counts()         # doctest: +SKIP
    """
    found: dict[tuple[int, str, str], list[tuple[str, str | None]]] = defaultdict(list)
    for r in result.to_frame().itertuples(index=False):
        key = "" if r.target == CAMPAIGN or r.item is None else str(r.item)
        message = None if pd.isna(r.message) else str(r.message)
        found[(int(r.campaign_id), str(r.target), key)].append((str(r.outcome), message))
    out = decisions.copy()
    out["outcome"] = pd.Series(pd.NA, index=out.index, dtype="string")
    out["message"] = pd.Series(pd.NA, index=out.index, dtype="string")
    for row, keys in _changes(decisions):
        pairs = [p for k in keys for p in found.get(k, [])]
        if pairs:
            out.loc[row.Index, ["outcome", "message"]] = worst_of(pairs)
    return out


def evaluate_rules(
    rules: Any,
    stats: Any,
    account: Account | Client,
    *,
    client: Client | None = None,
    as_of: Any = None,
    columns: Mapping[str, str] | None = None,
    **plan_options: Any,
) -> RulesResult:
    """The plan that carries out the rules' decisions on the account, and every decision
    with its evidence (``plan, decisions = evaluate_rules(...)``).

    ``rules``: a dict, a list, or a YAML/JSON file (:func:`~toolkit.rules.model.load_rules`).
    ``stats``: a stats frame (:func:`toolkit.read_stats`) or an export's path (summed by
    DuckDB, never loaded whole). ``account``: a client (the live account is read) or an
    :class:`~toolkit.frames.Account` snapshot (``client=`` is then only needed to apply).
    ``plan_options`` go to :func:`toolkit.plan` (``allow=``, ``max_drop_share=``...).
    The plan's preview shows each change with the rule and the numbers that decided it.
    """
    rules = load_rules(rules)
    source = Stats(stats, columns=columns)
    read_windows(rules, source, as_of)  # a bad export fails before the account is read
    if not isinstance(account, Account):
        client, account = account, read_live(account)
    campaigns = account.table("campaigns")
    formats = dict(
        zip(campaigns["id"].astype(int), campaigns["ad_format"].astype(str), strict=True)
    )
    state = _State.of(account)
    decisions = decide(rules, source, formats=formats, as_of=as_of, done=state.is_done)
    decisions = settle(decisions, rules, state)
    decisions = hold_back(
        decisions,
        state,
        account,
        plan_options.get("allow", ()),
        plan_options.get("max_drop_share", DEFAULT_MAX_DROP_SHARE),
    )
    names = dict(zip(campaigns["id"].astype(int), campaigns["name"].astype(str), strict=True))
    decisions.insert(2, "campaign_name", decisions["campaign_id"].astype(int).map(names))
    tables = desired(account, state)
    base = {name: account.table(name) for name in tables}  # only the edited rows are diffed
    plan = make_plan(client, tables, base, live=account, **plan_options)
    plan.reasons = reasons(decisions)
    return RulesResult(plan, _typed(decisions))


def _typed(decisions: pd.DataFrame) -> pd.DataFrame:
    out = typed(decisions.drop(columns=list(EXTRA_COLUMNS)))
    out.insert(2, "campaign_name", decisions["campaign_name"].astype("string").to_numpy())
    at = out.columns.get_loc("status") + 1
    for i, col in enumerate(("target", "old", "new")):
        out.insert(at + i, col, decisions[col].to_numpy())
    out["target"] = out["target"].astype("string")
    return out


__all__ = [
    "ALREADY",
    "CONFLICT",
    "EARLIER",
    "NO_WHITELIST",
    "PLANNED",
    "RulesResult",
    "evaluate_rules",
    "list_name",
    "reasons",
    "settle",
    "with_outcomes",
]
