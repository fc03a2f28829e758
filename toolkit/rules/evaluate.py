"""Rules to a plan: the decisions of :mod:`toolkit.rules.decide` checked against the account
and written into its tables, then planned by the one planner every face uses.

>>> import toolkit
>>> plan, decisions = toolkit.evaluate_rules("rules.yaml", "stats.csv", client)  # doctest: +SKIP
>>> plan                       # the preview: every change with its numbers     # doctest: +SKIP
>>> plan.apply(client)                                                          # doctest: +SKIP

Each decided row gets a ``status``; the first rule to decide an item wins:

- ``planned``: in the plan;
- ``already``: the account is already so, or the rule stepped the bid by its ``factor``
  already on this evidence (``earlier_run`` names the run; :mod:`toolkit.rules.memory`);
  it takes no place in the rule's ``limit``;
- ``over limit``: past the rule's ``limit`` for its campaign (the changes made on the same
  evidence already count);
- ``conflict``: an earlier rule decided the same item otherwise (another action, or another
  bid or factor);
- ``earlier rule``: an earlier rule decided the same item the same way (planned once, with
  the earlier rule's reason);
- ``campaign not in the account``: the statistics name a campaign the account does not
  have (the plan's warnings name them all; are they the tracker's ids?);
- ``not accepted: <rule>``: an item the service does not take (a subId that is not 1 to 64
  hexadecimal digits, a source id that is not a positive integer, a country key that is no
  ISO code), left out of the plan so that the rest of its batch applies;
- ``no whitelist``: a whitelist rule on a campaign without a whitelist at that level (its
  first item would shut out every other source or subId);
- ``not targeted``: a country bid of a campaign that does not target the country;
- ``no bid``: a ``factor`` with no current bid to scale;
- ``archived``: a campaign to pause that is archived;
- ``guard drop_share`` / ``guard empty_whitelist``: the list's drops would trip that guard
  of the planner; the list's changes are held back and the rest of the plan goes ahead
  (``allow=`` lifts the guard, as for :func:`toolkit.plan`);
- ``guard bid_jump``: the new bid would trip that guard (raised more than ``max_bid_raise``
  times the live bid, cut by more than ``max_bid_cut`` of it, or below ``minimum_prices``
  when given); that bid is held back and the rest of the plan goes ahead.

A ``factor`` scales the current bid: a country's bid, or a source's or subId's bid rule; an
item without a bid rule of its own is bought at its campaign's country bids, so its new bid
rule is the factor times the campaign's highest country bid (``old`` shows that bid).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from .. import spec
from ..bulk.calls import BID_RULE, CAMPAIGN
from ..bulk.guards import (
    DEFAULT_MAX_BID_CUT,
    DEFAULT_MAX_BID_RAISE,
    DEFAULT_MAX_DROP_SHARE,
    BidChange,
    bid_jumps,
    live_counts,
    tripped,
)
from ..bulk.journal import service_of
from ..bulk.plan import Plan, account_of, make_plan, read_live
from ..errors import RuleProblem, RulesError
from ..frames import Account
from ..spec import MAX_BID
from ..stats.schema import COUNTRY
from .changes import PLANNED, list_name, reasons, with_outcomes
from .decide import (
    ALREADY,
    DECIDED,
    Stats,
    as_of_day,
    check_as_of,
    decide,
    last_day,
    read_windows,
    typed,
)
from .fit import Fit
from .memory import Memory, provenance
from .model import Rule, load_rules
from .payouts import read_payouts

if TYPE_CHECKING:  # pragma: no cover
    from ..bulk.journal import Journal
    from ..client import Client

CONFLICT, EARLIER = "conflict", "earlier rule"
NO_WHITELIST = "no whitelist"
UNKNOWN = "campaign not in the account"
NOT_TARGETED, NO_BID, ARCHIVED = "not targeted", "no bid", "archived"
#: The columns evaluation adds to the decisions frame.
EXTRA_COLUMNS = ("campaign_name", "target", "old", "new", "earlier_run")


class _PlanAndDecisions(NamedTuple):
    plan: Plan
    decisions: pd.DataFrame


class RulesResult(_PlanAndDecisions):
    """What :func:`evaluate_rules` returns: the plan and every decision with its evidence
    (``plan, decisions = evaluate_rules(...)``), and ``fit``: how the statistics met the
    account and the service (:class:`~toolkit.rules.fit.Fit`: the campaigns the account does
    not have, the items the service does not take, the rows the reader skipped)."""

    fit: Fit

    def __new__(cls, plan: Plan, decisions: pd.DataFrame, fit: Fit | None = None) -> RulesResult:
        self = super().__new__(cls, plan, decisions)
        self.fit = fit if fit is not None else Fit()
        return self


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


EffectResult = tuple[str, str | None, Any, Any]  # an effect's status, target, old, new


def _blacklist(s: _State, rule: Rule, cid: int, key: str) -> EffectResult:
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


def _bid_set(s: _State, rule: Rule, cid: int, key: str) -> bool:
    """Whether the item's live bid is the one the rule would set (a fixed bid set already,
    or a factor's bid held at the service's bounds)."""
    _, old = _live_bid(s, rule, cid, key)
    new = _new_bid(rule, old)
    return old is not None and new is not None and abs(old - min(max(new, 0.0001), MAX_BID)) < 1e-9


#: Per action, whether the account already is as it wants (before any change is made).
DONE: dict[str, Callable[[_State, Rule, int, str], bool]] = {
    "blacklist": _blacklisted,
    "whitelist": _whitelisted,
    "bid": _bid_set,
    "pause": _paused,
}


def _whitelist(s: _State, rule: Rule, cid: int, key: str) -> EffectResult:
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


def _live_bid(s: _State, rule: Rule, cid: int, key: str) -> tuple[str, float | None]:
    """The target of a bid decision and the live bid it scales or replaces (None: none)."""
    if rule.level == COUNTRY:
        return COUNTRY, s.countries.get((cid, key.strip().upper()))
    old = s.bid_rules.get((cid, key))
    if old is None and rule.factor is not None:  # bought at the campaign's bids
        old = s.top_bids.get(cid)
    return BID_RULE, old


def _bid(s: _State, rule: Rule, cid: int, key: str) -> EffectResult:
    target, old = _live_bid(s, rule, cid, key)
    if target == COUNTRY:
        if old is None:
            return NOT_TARGETED, COUNTRY, None, None
        book, where = s.country_bids, (cid, key.strip().upper())
    else:
        book, where = s.rule_bids, (cid, key)
    new = _new_bid(rule, old)
    if new is None:
        return NO_BID, target, old, None
    new = min(max(new, 0.0001), MAX_BID)
    if old is not None and abs(old - new) < 1e-9:
        return ALREADY, target, old, new
    book[where] = new
    return PLANNED, target, old, new


def _pause(s: _State, rule: Rule, cid: int, key: str) -> EffectResult:
    status = s.work.get(cid)
    if status == "Archived":
        return ARCHIVED, CAMPAIGN, status, None
    if status == "Paused":
        return ALREADY, CAMPAIGN, status, None
    s.pauses.add(cid)
    return PLANNED, CAMPAIGN, status, "Paused"


#: How each action meets the account: one row per action of ``model.ACTIONS``.
EFFECTS: dict[str, Callable[[_State, Rule, int, str], EffectResult]] = {
    "blacklist": _blacklist,
    "whitelist": _whitelist,
    "bid": _bid,
    "pause": _pause,
}


def settle_by_account(decisions: pd.DataFrame, rules: list[Rule], state: _State) -> pd.DataFrame:
    """The decisions with their status against the account, in rule order (the first rule
    to decide an item wins), and the state's edits filled in."""
    by_name = {r.name: r for r in rules}
    seen: dict[tuple[int, str, str], tuple[Any, ...]] = {}
    out = decisions.copy()
    results: list[EffectResult] = []
    for row in out.itertuples(index=False):
        rule, cid, key = by_name[row.rule], int(row.campaign_id), str(row.key)
        if cid not in state.work:  # whatever else: nothing of it can be planned
            results.append((UNKNOWN, None, None, None))
            continue
        if row.status == ALREADY and rule.action == "bid":  # the target and its live bid
            results.append((ALREADY, *_live_bid(state, rule, cid, key), None))
            seen.setdefault((cid, row.level, key), (rule.name, rule.action, rule.bid, rule.factor))
            continue
        if row.status != DECIDED:
            results.append((row.status, None, None, None))
            continue
        earlier = seen.get((cid, row.level, key))
        if earlier is not None:
            same = earlier[1:] == (rule.action, rule.bid, rule.factor)
            status = EARLIER if same else CONFLICT
            results.append((status, None, f"rule {earlier[0]!r}: {earlier[1]}", None))
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
    **bid_options: Any,
) -> pd.DataFrame:
    """Hold back the list changes of the lists whose drops would trip a guard
    (``drop_share``, ``empty_whitelist``) and the bids that would trip ``bid_jump``: those
    decisions get the status ``guard <name>`` and nothing of them is planned, so the rest of
    the plan goes ahead; ``allow`` lifts the guards by name, as for :func:`toolkit.plan`.
    ``bid_options`` are the planner's ``max_bid_raise``, ``max_bid_cut`` and
    ``minimum_prices``."""
    decisions = _hold_back_bids(decisions, state, set(allow), **bid_options)
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


def _hold_back_bids(
    decisions: pd.DataFrame,
    state: _State,
    allowed: set[str],
    max_bid_raise: float = DEFAULT_MAX_BID_RAISE,
    max_bid_cut: float = DEFAULT_MAX_BID_CUT,
    minimum_prices: Any = None,
) -> pd.DataFrame:
    """The planned bids that would trip ``bid_jump`` (against the live bid they replace, as
    the planner judges them) taken out of the state, their decisions ``guard bid_jump``."""
    if "bid_jump" in allowed:
        return decisions
    books = {  # the decisions' target: the planner's, the new bids, the live ones
        COUNTRY: (spec.bid_kind().name, state.country_bids, state.countries),
        BID_RULE: (BID_RULE, state.rule_bids, state.bid_rules),
    }
    held: set[tuple[int, str, str]] = set()
    for target, (planned, book, live) in books.items():
        for (cid, key), new in list(book.items()):
            change = BidChange(cid, planned, key, live.get((cid, key)), new)
            if bid_jumps([change], None, max_bid_raise, max_bid_cut, minimum_prices):
                held.add((cid, target, key))
                del book[(cid, key)]
    if not held:
        return decisions
    out = decisions.copy()
    for i, row in zip(out.index, out.itertuples(index=False), strict=True):
        if row.status != PLANNED:
            continue
        key = str(row.key).strip().upper() if row.target == COUNTRY else str(row.key)
        if (int(row.campaign_id), str(row.target), key) in held:
            out.loc[i, "status"] = "guard bid_jump"
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
    there = set(pairs)  # built once, not once per bid
    new = [(c, k, b) for (c, k), b in bids.items() if (c, k) not in there]
    if not new:
        return df
    extra = pd.DataFrame(new, columns=["campaign_id", key, "bid"])
    extra = extra.reindex(columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, extra], ignore_index=True)


def _some(rules: list[Rule], source: Any) -> list[Rule]:
    """The rules, or a :class:`RulesError` when there are none: an empty file evaluated to an
    empty plan would say nothing of the mistake."""
    if rules:
        return rules
    where = str(source) if isinstance(source, (str, os.PathLike)) else None
    said = "the rules file is empty" if where else "no rules given"
    raise RulesError(
        [RuleProblem(None, None, None, f"{said}; write rules (see docs/rules.md)")], where
    )


def evaluate_rules(
    rules: Any,
    stats: Any,
    account: Account | Client,
    *,
    client: Client | None = None,
    as_of: Any = None,
    columns: Mapping[str, str] | None = None,
    date_format: str | None = None,
    decimal: str | None = None,
    campaign_map: Any = None,
    journal: Journal | str | os.PathLike[str] | None = "default",
    payouts: Any = None,
    **plan_options: Any,
) -> RulesResult:
    """The plan that carries out the rules' decisions on the account, and every decision
    with its evidence (``plan, decisions = evaluate_rules(...)``).

    ``rules``: a dict, a list, or a YAML/JSON file (:func:`~toolkit.rules.model.load_rules`).
    ``stats``: a stats frame (:func:`toolkit.read_stats`) or an export's path (summed by
    DuckDB, never loaded whole). ``account``: a client (the live account is read) or an
    :class:`~toolkit.frames.Account` snapshot (``client=`` is then only needed to apply).
    ``as_of``: the day the statistics are cut at (every rule reads its data up to it; a day
    outside the statistics is a :class:`~toolkit.errors.ValidationError`).
    ``columns``, ``date_format`` (strptime, ``"%d/%m/%Y"``), ``decimal`` (``","``) and
    ``campaign_map`` go to the statistics readers (an export's path only; those not given
    are not passed).
    ``journal``: where earlier runs are remembered (``"default"``: the command line's;
    ``None``: nothing remembered), so that a ``factor`` rule steps an item once per evidence
    (:mod:`toolkit.rules.memory`); the plan carries the provenance of each change
    (``plan.provenance``) for its run to journal. ``payouts``: a payouts table (a CSV or XLSX
    path or a frame: :mod:`toolkit.rules.payouts`); without a payout an item is ``no payout
    known``.
    ``plan_options`` go to :func:`toolkit.plan` (``allow=``, ``max_drop_share=``...).
    The plan's preview shows each change with the rule and the numbers that decided it,
    and warns of the statistics' campaigns the account does not have and of the items the
    service does not take (``result.fit``, :class:`~toolkit.rules.fit.Fit`).
    """
    rules = _some(load_rules(rules), rules)
    read = {"date_format": date_format, "decimal": decimal, "campaign_map": campaign_map}
    source, as_of = Stats(stats, columns=columns, **read), as_of_day(as_of)
    read_windows(rules, source, as_of, whole=as_of is not None)  # a bad export fails first
    check_as_of(source, as_of)  # and an as-of day outside it, before the account is read
    plan_options["payouts"] = None if payouts is None else read_payouts(payouts)  # and these
    if not isinstance(account, Account):
        client, account = account, read_live(account)
    state = _State.of(account)
    where = service_of(client) if client is not None else account.source
    memory = Memory.read(journal, rules, where, account_of(account), last_day(source, as_of))
    decisions = _decided(rules, source, account, state, memory, as_of, plan_options)
    tables = desired(account, state)
    base = {name: account.table(name) for name in tables}  # only the edited rows are diffed
    plan_options.pop("payouts")
    plan = make_plan(client, tables, base, live=account, **plan_options)
    plan.reasons = reasons(decisions)
    plan.provenance = provenance(decisions[decisions["status"] == PLANNED], rules, memory.evidence)
    fit = _fit(source, account, decisions)
    plan.warnings = [*fit.lines(), *plan.warnings]
    return RulesResult(plan, _typed(decisions), fit)


def _fit(source: Stats, account: Account, decisions: pd.DataFrame) -> Fit:
    """How the statistics met the account (their campaigns), the service (the items it does
    not take) and the reader (the rows it skipped)."""
    ids = account.table("campaigns")["id"].astype(int)
    return Fit.of(source.campaigns(), ids, decisions, source.skipped)


def _decided(
    rules: list[Rule],
    source: Stats,
    account: Account,
    state: _State,
    memory: Memory,
    as_of: Any,
    plan_options: Mapping[str, Any],
) -> pd.DataFrame:
    """Every decision settled against the account and what the rules remember (the steps
    made already), the guarded changes held back, with the campaigns' names."""
    campaigns = account.table("campaigns")
    formats = dict(
        zip(campaigns["id"].astype(int), campaigns["ad_format"].astype(str), strict=True)
    )

    def done(rule: Rule, rows: pd.DataFrame) -> np.ndarray:
        return state.is_done(rule, rows) | memory.is_done(rule, rows)

    decisions = decide(
        rules,
        source,
        formats=formats,
        as_of=as_of,
        done=done,
        made=memory.made_by,
        payouts=plan_options["payouts"],
    )
    decisions = settle_by_account(decisions, rules, state)
    decisions = memory.stepped(decisions, rules)
    decisions = hold_back(
        decisions,
        state,
        account,
        plan_options.get("allow", ()),
        plan_options.get("max_drop_share", DEFAULT_MAX_DROP_SHARE),
        **{
            k: plan_options[k]
            for k in ("max_bid_raise", "max_bid_cut", "minimum_prices")
            if k in plan_options
        },
    )
    names = dict(zip(campaigns["id"].astype(int), campaigns["name"].astype(str), strict=True))
    decisions.insert(2, "campaign_name", decisions["campaign_id"].astype(int).map(names))
    return decisions


def _typed(decisions: pd.DataFrame) -> pd.DataFrame:
    out = typed(decisions.drop(columns=list(EXTRA_COLUMNS)))
    out.insert(2, "campaign_name", decisions["campaign_name"].astype("string").to_numpy())
    at = out.columns.get_loc("status") + 1
    for i, col in enumerate(("target", "old", "new", "earlier_run")):
        out.insert(at + i, col, decisions[col].to_numpy())
    out["target"] = out["target"].astype("string")
    out["earlier_run"] = out["earlier_run"].astype("string")
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
    "settle_by_account",
    "with_outcomes",
]
