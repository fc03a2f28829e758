"""Rules over the statistics of several accounts: each account's statistics evaluated against
that account with its own client, the decisions stacked with ``account`` first, the plans a
:class:`~toolkit.bulk.plan_set.PlanSet`.

The statistics say whose they are: a stats frame with an ``account`` column (the profile
names; a row naming an account that is not in the set is refused, with the name and its
rows), or a mapping account -> statistics (an export's path or a frame each).

>>> import toolkit
>>> from toolkit.rules.over_set import evaluate_rules_set
>>> accounts = toolkit.load_accounts("client-a,client-b")              # doctest: +SKIP
>>> stats = {"client-a": "a.csv", "client-b": "b.csv"}                  # doctest: +SKIP
>>> plans, decisions = evaluate_rules_set("rules.yaml", stats, accounts)  # doctest: +SKIP
>>> decisions.groupby(["account", "status"]).size()                     # doctest: +SKIP
>>> plans.apply()             # each account's plan with its own client  # doctest: +SKIP

Each account is evaluated by :func:`~toolkit.rules.evaluate.evaluate_rules`, exactly as it
would be alone (its journal memory, its guards, its warnings); the guards of the whole set
are then counted (:func:`~toolkit.bulk.plan_set.check_set_guards`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pandas as pd

from ..bulk.plan_set import PlanSet, check_set_guards, refused_in
from ..client import Client
from ..client.profiles import check_name
from ..errors import PlanRefused, ValidationError
from ..frames import Account, AccountSet
from ..frames.account_set import stacked
from ..frames.set_inputs import by_account, set_and_clients
from .decide import empty_decisions
from .evaluate import RulesResult, evaluate_rules


class _PlansAndDecisions(NamedTuple):
    plans: PlanSet
    decisions: pd.DataFrame


class SetRulesResult(_PlansAndDecisions):
    """What :func:`evaluate_rules_set` returns: the :class:`~toolkit.bulk.plan_set.PlanSet`
    and every decision with ``account`` first (``plans, decisions = ...``), and ``results``:
    each account's own :class:`~toolkit.rules.evaluate.RulesResult` (its ``fit``...)."""

    results: dict[str, RulesResult]

    def __new__(
        cls, plans: PlanSet, decisions: pd.DataFrame, results: dict[str, RulesResult]
    ) -> SetRulesResult:
        self = super().__new__(cls, plans, decisions)
        self.results = results
        return self


def _members(
    accounts: AccountSet | Mapping[str, Client], clients: Mapping[str, Client] | None
) -> tuple[dict[str, Account | Client], dict[str, Client]]:
    """What each account is evaluated against (its snapshot, or its client: the live
    account is read) and its client."""
    if isinstance(accounts, AccountSet):
        loaded, given = set_and_clients(accounts, clients, progress=False)
        return {n: loaded.account(n) for n in loaded.names}, given
    if clients is not None:
        raise ValueError("the clients are given twice: pass them as the accounts or as clients=")
    for name in accounts:
        check_name(name, f"account name {name!r}")
    if not accounts:
        raise ValueError("no account given: the mapping of clients is empty")
    return dict(accounts), dict(accounts)


def evaluate_rules_set(
    rules: Any,
    stats: pd.DataFrame | Mapping[str, Any],
    accounts: AccountSet | Mapping[str, Client],
    *,
    clients: Mapping[str, Client] | None = None,
    allow: Iterable[str] = (),
    journal: Any = "default",
    payouts: pd.DataFrame | Mapping[str, Any] | None = None,
    **options: Any,
) -> SetRulesResult:
    """The rules over each account's statistics, evaluated against that account
    (:func:`~toolkit.rules.evaluate.evaluate_rules`) with its own client.

    ``stats``: a stats frame with an ``account`` column, or a mapping account -> statistics
    (a path or a frame; :func:`toolkit.frames.set_inputs.by_account`). ``accounts``: an
    :class:`~toolkit.frames.AccountSet` (each member's snapshot is the state the rules meet;
    its client is ``clients[name]``, else connected by its profile name), or a mapping of
    names to clients (each live account is read). ``payouts`` name their accounts as the
    statistics do. ``options`` go to ``evaluate_rules`` for every account. An account of the
    set without statistics is not evaluated (the plans' warnings name it).

    >>> plans, decisions = evaluate_rules_set(rules, stats_by_account, accounts)  # doctest: +SKIP
    """
    against, given = _members(accounts, clients)
    names = list(against)
    parts = by_account(stats, names, "statistics")
    if not parts:
        raise ValidationError(f"statistics: none for any account of the set ({', '.join(names)})")
    paid = by_account(payouts, names, "payouts")
    results: dict[str, RulesResult] = {}
    for name in (n for n in names if n in parts):
        source = against[name]
        client = None if isinstance(source, Client) else given[name]
        try:
            results[name] = evaluate_rules(
                rules,
                parts[name],
                source,
                client=client,
                allow=allow,
                journal=journal,
                payouts=paid.get(name),
                **options,
            )
        except PlanRefused as exc:
            raise refused_in(name, exc) from None
    plans = {n: r.plan for n, r in results.items()}
    check_set_guards(plans, allow)
    idle = [n for n in names if n not in parts]
    warnings = [f"no statistics for account(s) {', '.join(idle)}: not evaluated"] if idle else []
    plan_set = PlanSet(plans, clients={n: given[n] for n in plans}, warnings=warnings)
    decisions = stacked({n: r.decisions for n, r in results.items()}, _like(results))
    return SetRulesResult(plan_set, decisions, results)


def _like(results: Mapping[str, RulesResult]) -> pd.DataFrame:
    """The decisions' columns and dtypes (of the first account's)."""
    first = next(iter(results.values()), None)
    return first.decisions.iloc[:0] if first is not None else empty_decisions()


__all__ = ["SetRulesResult", "evaluate_rules_set"]
