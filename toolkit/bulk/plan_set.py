"""Plans of a set of accounts: one :class:`~toolkit.bulk.plan.Plan` per account, applied as
one run of the set.

Each account's plan is made with that account's own client (its key, its live state, its
guards), so a call of one account never carries another's key. :class:`PlanSet` previews
them together (every frame with an ``account`` column first) and counts the guards of the
whole set (:func:`check_set_guards`). :meth:`PlanSet.apply` applies each account's plan as
a journaled run of its own, every run carrying the same set id (``run_set``) and the
account's name (``profile``), so that the set is undone or repaired whole or one account
at a time (:mod:`toolkit.bulk.undo_set`).

>>> plans = PlanSet({"a": Plan(), "b": Plan()})
>>> len(plans), plans.names
(0, ['a', 'b'])
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import PlanRefused, ToolkitError
from ..frames.account_set import ACCOUNT, stacked
from ..text import single_spaced
from .guards import DEFAULT_MAX_ARCHIVE, GUARDS, archived
from .outcomes import ApplyResult
from .plan import Plan

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .journal import Journal


#: How the id of a run of a set starts.
SET_PREFIX = "set-"


def new_set_id() -> str:
    """A new id for a run of a set: ``set-<UTC time>-<6 hex>``."""
    return SET_PREFIX + datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


@dataclass
class PlanSet:
    """One plan per account (by the account's name, in the set's order), and the clients
    they were made with (never shown).

    ``purpose`` is ``edit``, ``undo`` or ``repair``; ``undoes`` (for an undo) maps each
    account to the run its plan undoes, ``repairs`` the set id a repair finishes.
    """

    plans: dict[str, Plan]
    clients: dict[str, Client] = field(default_factory=dict, repr=False)
    warnings: list[str] = field(default_factory=list)
    purpose: str = "edit"
    undoes: dict[str, str] = field(default_factory=dict)
    #: The set id an undo or a repair of a set is about.
    about: str | None = None

    @property
    def names(self) -> list[str]:
        """The accounts, in order."""
        return list(self.plans)

    def plan(self, name: str) -> Plan:
        """The plan of one account."""
        if name not in self.plans:
            raise KeyError(f"no account {name!r} in the plan set; accounts: {self.names}")
        return self.plans[name]

    def __len__(self) -> int:
        return sum(len(p) for p in self.plans.values())

    @property
    def conflicts(self) -> pd.DataFrame:
        """Every account's conflicts, with ``account`` first."""
        return stacked({n: p.conflicts for n, p in self.plans.items()})

    def to_frame(self) -> pd.DataFrame:
        """Every account's calls (:meth:`Plan.to_frame`), with ``account`` first."""
        return stacked({n: p.to_frame() for n, p in self.plans.items()})

    def changes(self) -> pd.DataFrame:
        """Every account's changes (:meth:`Plan.changes`), with ``account`` first."""
        return stacked({n: p.changes() for n, p in self.plans.items()})

    def counts(self) -> pd.DataFrame:
        """One row per account: calls, changes, conflicts, warnings."""
        rows = [
            {
                ACCOUNT: name,
                "calls": len(p),
                "changes": len(p.edits()),
                "conflicts": len(p.conflicts),
                "warnings": len(p.warnings),
            }
            for name, p in self.plans.items()
        ]
        return pd.DataFrame(rows, columns=[ACCOUNT, "calls", "changes", "conflicts", "warnings"])

    def summary(self, **options: Any) -> str:
        """Each account's preview (:meth:`Plan.summary`) under its name, then the set's
        warnings."""
        total = sum(len(p.edits()) for p in self.plans.values())
        head = (
            f"Plan of {len(self.plans)} account(s): {len(self)} call(s), {total} change(s)"
            if self.purpose == "edit"
            else f"{self.purpose.capitalize()} of {self.about or 'a set'} in"
            f" {len(self.plans)} account(s): {len(self)} call(s), {total} change(s)"
        )
        parts = [head]
        for name, p in self.plans.items():
            parts.append(f"\n== account {name} ==\n{p.summary(**options)}")
        parts += [f"warning: {w}" for w in self.warnings]
        return "\n".join(parts)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        body = "".join(
            f"<h4>account {escape(name)}</h4>{p._repr_html_()}" for name, p in self.plans.items()
        )
        warn = "".join(f"<p>warning: {escape(w)}</p>" for w in self.warnings)
        return f"<div><p>{escape(self.summary().splitlines()[0])}</p>{body}{warn}</div>"

    def apply(
        self,
        clients: Mapping[str, Client] | None = None,
        *,
        journal: Journal | str | None = "default",
        progress: bool = True,
        verify: bool = True,
    ) -> SetResult:
        """Apply each account's plan with its own client (``clients``, else those it was
        made with), one journaled run per account, all of them one run of the set; see
        :func:`apply_set`."""
        return apply_set(self, clients, journal=journal, progress=progress, verify=verify)


@dataclass
class SetResult:
    """What applying a :class:`PlanSet` did: each account's
    :class:`~toolkit.bulk.outcomes.ApplyResult`, and the accounts whose run stopped on an
    error (``errors``: account -> the error in one line; what their run did before it is in
    the journal, and ``repair`` finishes it)."""

    set_id: str | None = None
    results: dict[str, ApplyResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    #: What the run is, beside an edit: ``undo of the set set-...``, ``repair of ...``.
    what: str = ""

    @property
    def ok(self) -> bool:
        """True when every account's run applied every change."""
        return not self.errors and all(r.ok for r in self.results.values())

    @property
    def run_ids(self) -> dict[str, str]:
        """Account -> the id of its journaled run (accounts with nothing to send have none)."""
        return {n: r.run_id for n, r in self.results.items() if r.run_id}

    def to_frame(self) -> pd.DataFrame:
        """Every account's outcomes, item by item, with ``account`` first."""
        return stacked({n: r.to_frame() for n, r in self.results.items()})

    def summary(self) -> str:
        """One block per account (its run and outcomes), then the errors."""
        lines = [f"Run of the set {self.set_id}" if self.set_id else "Nothing sent"]
        if self.what:
            lines[0] += f" ({self.what})"
        for name, r in self.results.items():
            lines.append(f"== account {name} (run {r.run_id or '-'}) ==\n{r.summary()}")
        lines += [f"== account {n}: stopped: {e}" for n, e in self.errors.items()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()


# --------------------------------------------------------------------------- guards


def check_set_guards(
    plans: Mapping[str, Plan],
    allow: Any = (),
    max_archive: int = DEFAULT_MAX_ARCHIVE,
) -> None:
    """Guards counted over the whole set (each account's plan was checked on its own
    already): more than ``max_archive`` campaigns archived across the accounts raises
    :class:`~toolkit.errors.PlanRefused` (``bulk_archive``), unless ``allow`` names it."""
    if "bulk_archive" in set(allow):
        return
    every = [c for p in plans.values() for c in p.calls]
    if not archived(every, max_archive):
        return
    per = ", ".join(
        f"{name} {n}"
        for name, p in plans.items()
        if (n := len({cid for c in p.calls if c.action == "archive" for cid in c.campaign_ids}))
    )
    detail = archived(every, max_archive)[0].replace("archives", "the set archives", 1)
    raise PlanRefused("bulk_archive", [f"{detail} (by account: {per})"])


def refused_in(name: str, exc: PlanRefused) -> PlanRefused:
    """An account's guard refusal, its details naming the account."""
    return PlanRefused(exc.guard, [f"account {name}: {d}" for d in exc.details], rule=exc.rule)


# --------------------------------------------------------------------------- planning


def plan_each(
    desired: Mapping[str, Any],
    clients: Mapping[str, Client],
    *,
    bases: Mapping[str, Any] | None = None,
    allow: Any = (),
    **options: Any,
) -> PlanSet:
    """Each account's ``desired`` tables planned with its own client
    (:func:`~toolkit.bulk.plan.make_plan`, three ways against ``bases[name]`` when given),
    a guard's refusal naming the account, then the guards of the whole set."""
    from .plan import make_plan

    plans = {}
    for name, tables in desired.items():
        base = None if bases is None else bases.get(name)
        try:
            plans[name] = make_plan(clients[name], tables, base, allow=allow, **options)
        except PlanRefused as exc:
            raise refused_in(name, exc) from None
    check_set_guards(plans, allow, options.get("max_archive", DEFAULT_MAX_ARCHIVE))
    return PlanSet(plans, clients={n: clients[n] for n in desired})


def split_tables(
    tables: Mapping[str, pd.DataFrame], names: Sequence[str], what: str = "the tables"
) -> dict[str, dict[str, pd.DataFrame]]:
    """Tables of a set (``account`` first) as each account's own tables, without the column,
    for the accounts ``names``. A table without the column, or a row naming no account of
    ``names``, is a :class:`ValueError` that says which table and how many rows."""
    out: dict[str, dict[str, pd.DataFrame]] = {n: {} for n in names}
    for table, df in tables.items():
        if ACCOUNT not in df.columns:
            raise ValueError(
                f"{what}: table {table} has no {ACCOUNT!r} column: a set's tables name each"
                " row's account (toolkit.load_accounts gives them so)"
            )
        accounts = df[ACCOUNT].astype(object)
        stray = accounts[~accounts.isin(list(names))]
        if len(stray):
            counts = stray.fillna("<empty>").value_counts()
            shown = ", ".join(f"{v!r} ({n} rows)" for v, n in counts.head(5).items())
            raise ValueError(
                f"{what}: table {table} names accounts not in the set: {shown}; the accounts"
                f" are {', '.join(names)}"
            )
        rest = df.drop(columns=ACCOUNT)
        for name in names:
            out[name][table] = rest[accounts.eq(name).to_numpy()].reset_index(drop=True)
    return out


def plan_tables(
    tables: Mapping[str, pd.DataFrame],
    clients: Mapping[str, Client] | None = None,
    *,
    base: Any = None,
    accounts: Sequence[str] | None = None,
    allow: Any = (),
    **options: Any,
) -> PlanSet:
    """Plan a set's tables edited in pandas (each with ``account`` first, as an
    :class:`~toolkit.frames.AccountSet` gives them): each account's rows with its own client
    (``clients``, else connected by profile name), three ways against ``base`` (the
    :class:`~toolkit.frames.AccountSet` they were taken from, or its tables) when given.

    >>> accounts = toolkit.load_accounts("all")                         # doctest: +SKIP
    >>> bids = accounts.countries.assign(bid=lambda d: d["bid"] * 1.1)  # doctest: +SKIP
    >>> plans = toolkit.plan_accounts({"countries": bids}, base=accounts)  # doctest: +SKIP
    """
    names = list(accounts) if accounts is not None else _named(tables, clients)
    if clients is None:  # a name no profile has is a row of no account of the set
        from ..client.client import profiles

        names = [n for n in names if n in set(profiles())]
    if accounts is not None:  # the rows of the other accounts are not planned
        tables = {
            t: df[df[ACCOUNT].isin(names)] if ACCOUNT in df else df for t, df in tables.items()
        }
    desired = split_tables(tables, names)
    bases = None
    if base is not None:
        stacked = {t: base.table(t) for t in tables} if hasattr(base, "members") else base
        bases = split_tables({t: stacked[t] for t in tables}, names, "the base")
    if clients is None:
        from ..client.client import profile_clients

        clients = profile_clients(names)
    lacking = [n for n in names if n not in clients]
    if lacking:
        raise ToolkitError(f"no client for account(s) {', '.join(lacking)}; nothing planned")
    return plan_each(desired, clients, bases=bases, allow=allow, **options)


def _named(tables: Mapping[str, pd.DataFrame], clients: Mapping[str, Client] | None) -> list[str]:
    """The accounts of a set's tables: those of ``clients``, else every name in the rows."""
    if clients is not None:
        return list(clients)
    seen: dict[str, None] = {}
    for df in tables.values():
        if ACCOUNT in df.columns:
            seen.update(dict.fromkeys(str(v) for v in df[ACCOUNT].dropna().unique()))
    return list(seen)


# --------------------------------------------------------------------------- apply


def apply_set(
    plans: PlanSet,
    clients: Mapping[str, Client] | None = None,
    *,
    journal: Journal | str | None = "default",
    progress: bool = True,
    verify: bool = True,
    set_id: str | None = None,
) -> SetResult:
    """Apply each account's plan in turn with its own client, as journaled runs linked by one
    set id. Every account's run is journaled whole before the first call of the set is sent,
    so a set cut off half-way (the process killed) leaves each account's run unfinished, and
    :func:`~toolkit.bulk.undo_set.repair_set` finishes every one of them, those not begun
    too. An account whose run stops on an error (its key refused, the service gone) is
    listed in ``errors`` and the next account is applied."""
    from .apply import apply_plan, start_run
    from .journal import open_journal

    given = dict(plans.clients) | dict(clients or {})
    missing = [n for n, p in plans.plans.items() if len(p) and n not in given]
    if missing:
        raise ToolkitError(f"no client for account(s) {', '.join(missing)}; nothing sent")
    book = open_journal(journal) if journal is not None else None
    result = SetResult(set_id=set_id or new_set_id())
    if plans.purpose != "edit":
        result.what = f"{plans.purpose} of the set {plans.about}"
    started: dict[str, str | None] = {}
    for name, plan in plans.plans.items():  # every account's run journaled before any call
        if not len(plan):
            continue
        plan.run_set, plan.profile = result.set_id, name
        try:
            started[name] = start_run(plan, given[name], book, plans.undoes.get(name))
        except ToolkitError as exc:
            result.errors[name] = single_spaced(exc)
    for name, run_id in started.items():
        try:
            result.results[name] = apply_plan(
                plans.plans[name],
                given[name],
                progress=progress,
                journal=book,
                verify=verify,
                undoes=plans.undoes.get(name),
                run_id=run_id,
            )
        except ToolkitError as exc:
            result.errors[name] = single_spaced(exc)
    return result


__all__ = [
    "ACCOUNT",
    "GUARDS",
    "SET_PREFIX",
    "refused_in",
    "PlanSet",
    "SetResult",
    "apply_set",
    "check_set_guards",
]
