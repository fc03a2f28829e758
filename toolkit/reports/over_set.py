"""Bid reports over a set of accounts: one report per account, each account's prices asked
with its own client, stacked with an ``account`` column first.

>>> import toolkit
>>> accounts = toolkit.load_accounts("all")                           # doctest: +SKIP
>>> report = toolkit.bid_report(accounts, ctr=0.01)   # clients by profile name  # doctest: +SKIP
>>> report.summary()          # money per account and zone, and for the set   # doctest: +SKIP
>>> plans = report.propose("minimum")    # a PlanSet: one Plan per account    # doctest: +SKIP
>>> result = plans.apply()    # each account's plan with its own client       # doctest: +SKIP

:func:`set_report` is what :func:`toolkit.bid_report` does when its source is an
:class:`~toolkit.frames.AccountSet` or a mapping of account names to clients. Each member's
report is the one ``bid_report`` makes of that account alone (:attr:`SetReport.reports`);
the set's frame is theirs one under the other. Statistics and payouts for the profit
columns name their account (a frame with an ``account`` column, or a mapping account ->
statistics: :func:`toolkit.frames.set_inputs.by_account`). Proposals become a
:class:`~toolkit.bulk.plan_set.PlanSet`: each account's plan made with its own client.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..bulk.plan_set import PlanSet, check_set_guards
from ..client import Client
from ..errors import PlanRefused, ValidationError
from ..frames.account_set import ACCOUNT, AccountSet, stacked
from ..frames.set_inputs import by_account, set_and_clients
from . import files, live, view
from . import profit_proposals as profit_plan

#: The ``account`` of the set's own rows in :meth:`SetReport.summary` (no profile is so named).
WHOLE_SET = "all"


def _one_key(frame: pd.DataFrame) -> pd.DataFrame:
    """The stacked frame with each ``(account, campaign_id)`` numbered as one campaign, for
    counts of campaigns over the set (ids are unique per account only)."""
    out = frame.drop(columns=ACCOUNT)
    pairs = pd.MultiIndex.from_arrays([frame[ACCOUNT], frame["campaign_id"]])
    out["campaign_id"] = pd.factorize(pairs)[0]
    return out


@dataclass(eq=False, repr=False)
class SetReport:
    """A bid report of several accounts: :attr:`reports` (account -> its own
    :class:`~toolkit.reports.report.BidReport`) and :attr:`frame`, their frames one under
    the other with ``account`` first. :attr:`failures` lists the accounts (and campaigns)
    that could not be loaded, as :attr:`AccountSet.failures` does."""

    reports: dict[str, Any]
    accounts: AccountSet
    frame: pd.DataFrame = field(init=False)
    made_at: pd.Timestamp = field(default_factory=lambda: pd.Timestamp.now(tz="UTC"))

    def __post_init__(self) -> None:
        self.frame = stacked({n: r.frame for n, r in self.reports.items()})

    @property
    def names(self) -> list[str]:
        """The accounts reported, in the set's order."""
        return list(self.reports)

    def report(self, name: str) -> Any:
        """One account's :class:`~toolkit.reports.report.BidReport`."""
        if name not in self.reports:
            raise KeyError(f"no account {name!r} in the report; accounts: {self.names}")
        return self.reports[name]

    @property
    def failures(self) -> pd.DataFrame:
        """What could not be loaded, with ``account`` first (:attr:`AccountSet.failures`)."""
        return self.accounts.failures

    @property
    def calls(self) -> int:
        """Price calls made, over every account."""
        return sum(r.calls for r in self.reports.values())

    @property
    def left_out(self) -> pd.DataFrame:
        """The campaigns each report left out, with ``account`` first."""
        return stacked({n: r.left_out for n, r in self.reports.items()})

    @property
    def left_out_note(self) -> str:
        """How many campaigns the reports left out, and why ("" when none)."""
        first = next(iter(self.reports.values()))
        return live.note(len(self.left_out), first.include)

    def summary(self, by: str = "zone") -> pd.DataFrame:
        """Each account's :meth:`BidReport.summary` and the set's (``account`` ``"all"``),
        indexed by ``account`` and then the summary's own index; the set's campaigns are
        counted by account and id."""
        parts = {n: r.summary(by) for n, r in self.reports.items()}
        first = next(iter(self.reports.values()))
        parts[WHOLE_SET] = replace(first, frame=_one_key(self.frame)).summary(by)
        return pd.concat(parts, names=[ACCOUNT])

    def proposals(self, to: str = "minimum") -> pd.DataFrame:
        """Each account's :meth:`BidReport.proposals`, with ``account`` first."""
        return stacked({n: r.proposals(to) for n, r in self.reports.items()})

    @property
    def bid_rules(self) -> pd.DataFrame:
        """Each account's bid rules with their statistics, with ``account`` first."""
        return stacked({n: r.bid_rules for n, r in self.reports.items()})

    @property
    def stats(self) -> pd.DataFrame | None:
        """The statistics joined, with ``account`` first (None when none was)."""
        joined = {n: r.stats for n, r in self.reports.items() if r.stats is not None}
        return stacked(joined) if joined else None

    def history(self) -> pd.DataFrame | None:
        """The price history of every account's queries (None when no report kept one)."""
        parts = [h for r in self.reports.values() if (h := r.history()) is not None]
        return pd.concat(parts).drop_duplicates().reset_index(drop=True) if parts else None

    def propose(
        self,
        to: str = "minimum",
        *,
        clients: Mapping[str, Client] | None = None,
        allow: Iterable[str] = (),
        **options: Any,
    ) -> PlanSet:
        """Each account's :meth:`BidReport.propose` (made with its own client, or
        ``clients[name]``), as a :class:`~toolkit.bulk.plan_set.PlanSet`: preview it, then
        ``plans.apply()``. A guard that refuses an account's plan names the account; the
        guards of the whole set are then counted (:func:`check_set_guards`)."""
        clients = dict(clients or {})
        plans, used = {}, {}
        for name, r in self.reports.items():
            used[name] = clients.get(name) or r.client
            try:
                plans[name] = r.propose(to, client=used[name], allow=allow, **options)
            except PlanRefused as exc:
                details = [f"account {name}: {d}" for d in exc.details]
                how = f"report.propose({to!r}, allow=[{exc.guard!r}])"
                raise PlanRefused(exc.guard, details, how=how, rule=exc.rule) from None
        check_set_guards(plans, allow)
        return PlanSet(plans, clients=used)

    # ------------------------------------------------------------------ faces

    def to_html(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """One HTML page of the whole set, every row with its account
        (:func:`toolkit.reports.files.to_html`)."""
        options.setdefault("title", self._title())
        return files.to_html(self, path, **options)

    def to_excel(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """An .xlsx workbook of the whole set (``account`` first on every sheet of rows; the
        proposals' sheets are for review: apply them with :meth:`propose`)."""
        from .excel import to_excel

        options.setdefault("title", self._title())
        return to_excel(self, path, **options)

    def to_pdf(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """A PDF of the whole set's summary and plots (:func:`toolkit.reports.files.to_pdf`)."""
        options.setdefault("title", self._title())
        return files.to_pdf(self, path, **options)

    def _title(self) -> str:
        return f"Bid report of {len(self.reports)} accounts"

    def __repr__(self) -> str:
        lines = [
            f"<SetReport of {len(self.reports)} accounts: {len(self.frame)} rows,"
            f" {self.calls} price calls"
        ]
        lines += [f"  {n}: {r!r}" for n, r in self.reports.items()]
        lost = self.failures[self.failures["campaign_id"].isna()]
        lost_pairs = zip(lost[ACCOUNT], lost["error"], strict=True)
        lines += [f"  {a}: not loaded ({e})" for a, e in lost_pairs]
        return "\n".join(lines) + ">"

    def _repr_html_(self) -> str:
        return view.repr_html(self.frame, left_out=self.left_out_note)


def _read_inputs(names: Sequence[str], stats: Any, payouts: Any) -> dict[str, tuple[Any, Any]]:
    """Each account's statistics and payouts, read and checked before any price call."""
    stats_of = by_account(stats, names, "stats")
    payouts_of = by_account(payouts, names, "payouts")
    out = {}
    for name in names:
        try:
            out[name] = profit_plan.read_inputs(stats_of.get(name), payouts_of.get(name))
        except ValidationError as exc:
            raise ValidationError(f"account {name}: {exc}") from None
    return out


def set_report(
    one: Callable[..., Any],
    source: AccountSet | Mapping[str, Client],
    campaign_ids: Mapping[str, Sequence[int]] | None = None,
    *,
    client: Client | None = None,
    clients: Mapping[str, Client] | None = None,
    progress: bool = True,
    stats: Any = None,
    payouts: Any = None,
    **options: Any,
) -> SetReport:
    """The report of each account of ``source`` made by ``one`` (the one-account
    :func:`~toolkit.reports.report.bid_report`) with the account's own client, as a
    :class:`SetReport`. ``campaign_ids`` maps accounts to the campaigns to keep;
    ``stats``/``payouts`` name their accounts (see the module)."""
    if client is not None:
        raise ValueError(
            "client= is one account's client: over a set of accounts give clients={name:"
            " client} (or nothing: each account connects by its profile name)"
        )
    if campaign_ids is not None and not isinstance(campaign_ids, Mapping):
        raise ValueError(
            "campaign ids are an account's: over a set give campaign_ids={account: [ids]}"
        )
    accounts, given = set_and_clients(source, clients, progress=progress)
    ids = by_account(campaign_ids, accounts.names, "campaign_ids")
    inputs = _read_inputs(accounts.names, stats, payouts)
    reports = {
        name: one(
            accounts.account(name),
            ids.get(name),
            client=given[name],
            progress=progress,
            stats=inputs[name][0],
            payouts=inputs[name][1],
            **options,
        )
        for name in accounts.names
    }
    return SetReport(reports, accounts)


__all__ = ["WHOLE_SET", "SetReport", "set_report"]
