"""Rules to a plan: the decisions of :mod:`toolkit.rules.decide` checked against the account
and written into its tables, then planned by the one planner every face uses.

>>> import toolkit
>>> plan, decisions = toolkit.evaluate_rules("rules.yaml", "stats.csv", client)  # doctest: +SKIP
>>> plan                       # the preview: every change with its numbers     # doctest: +SKIP
>>> plan.apply(client)                                                          # doctest: +SKIP

Each decided row gets a ``status``: ``planned`` (in the plan), ``already`` (the account is
already so), ``conflict`` (an earlier rule decided the same item otherwise), ``unknown
campaign``, ``not targeted`` (a country bid of a campaign without the country), ``no bid``
(a ``factor`` with no current bid to scale), ``archived`` (a campaign to pause that is
archived); rows past a rule's ``limit`` stay ``over limit``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from .. import spec
from ..bulk.calls import BID_RULE, CAMPAIGN
from ..bulk.plan import Plan, make_plan, read_live
from ..bulk.workbook_layout import MAX_BID
from ..frames import Account
from ..stats.schema import COUNTRY
from .decide import DECIDED, Stats, decide, typed
from .model import Rule, load_rules

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client

PLANNED, ALREADY, CONFLICT = "planned", "already", "conflict"
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
        return cls(
            triples,
            {(c, n) for c, n, _ in triples if spec.LISTS[n].list_type == "white"},
            _bids(rules, "item"),
            _bids(countries, COUNTRY),
            dict(
                zip(campaigns["id"].astype(int), campaigns["work_status"].astype(str), strict=True)
            ),
        )


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


def _whitelist(s: _State, rule: Rule, cid: int, key: str) -> Outcome:
    black, white = list_name(rule.level, "black"), list_name(rule.level, "white")
    if (cid, white, key) in s.lists:
        return ALREADY, white, "whitelisted", None
    if (cid, black, key) in s.lists:
        s.drops.append((cid, black, key))
    s.adds.append((cid, white, key))
    return PLANNED, white, None, "whitelisted"


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
    seen: dict[tuple[int, str, str], tuple[str, str]] = {}
    out = decisions.copy()
    results: list[Outcome] = []
    for row in out.itertuples(index=False):
        if row.status != DECIDED:
            results.append((row.status, None, None, None))
            continue
        rule, cid, key = by_name[row.rule], int(row.campaign_id), str(row.key)
        earlier = seen.get((cid, row.level, key))
        if earlier is not None and earlier[1] != rule.action:
            results.append((CONFLICT, None, f"rule {earlier[0]!r}: {earlier[1]}", None))
            continue
        if cid not in state.work:
            results.append((UNKNOWN, None, None, None))
            continue
        seen.setdefault((cid, row.level, key), (rule.name, rule.action))
        results.append(EFFECTS[rule.action](state, rule, cid, key))
    columns = ["status", "target", "old", "new"]
    out[columns] = pd.DataFrame(results, columns=columns, index=out.index, dtype=object)
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


def reasons(decisions: pd.DataFrame) -> dict[tuple[int, str, str], str]:
    """``(campaign_id, target, key) -> "rule: why"`` of the planned decisions, as the plan
    preview looks them up (a campaign's move has the key ``""``)."""
    planned = decisions[decisions["status"] == PLANNED]
    return {
        (int(c), str(t), "" if t == CAMPAIGN else str(k)): f"{r}: {w}"
        for c, t, k, r, w in zip(
            planned["campaign_id"],
            planned["target"],
            planned["key"],
            planned["rule"],
            planned["why"],
            strict=True,
        )
    }


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
    if not isinstance(account, Account):
        client, account = account, read_live(account)
    campaigns = account.table("campaigns")
    formats = dict(
        zip(campaigns["id"].astype(int), campaigns["ad_format"].astype(str), strict=True)
    )
    decisions = decide(rules, Stats(stats, columns=columns), formats=formats, as_of=as_of)
    state = _State.of(account)
    decisions = settle(decisions, rules, state)
    names = dict(zip(campaigns["id"].astype(int), campaigns["name"].astype(str), strict=True))
    decisions.insert(2, "campaign_name", decisions["campaign_id"].astype(int).map(names))
    plan = make_plan(client, desired(account, state), live=account, **plan_options)
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
    "PLANNED",
    "RulesResult",
    "evaluate_rules",
    "list_name",
    "reasons",
    "settle",
]
