"""Bid estimate reports: every campaign's country bids against the service's minimum and
recommended price, with the traffic each buys, and proposals that become plans.

>>> import toolkit
>>> client = toolkit.connect()                                        # doctest: +SKIP
>>> report = toolkit.bid_report(client, ctr=0.01)                     # doctest: +SKIP
>>> report.frame.groupby("zone", observed=False).size()               # doctest: +SKIP
>>> plan = report.propose("minimum")                                  # doctest: +SKIP
>>> result = plan.apply(client)                                       # doctest: +SKIP
>>> toolkit.undo(client, result.run_id)                               # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..bulk.plan import Plan, make_plan
from ..bulk.workbook.actions_templates import write_template
from ..client import Client
from ..client import connect as connect_client
from ..errors import PlanRefused
from ..frames import Account, AccountSet, load_account, load_balance
from ..frames.set_inputs import is_set
from . import files, money, rule_rows, view
from . import frame as report_frame
from . import history as price_store
from . import live as live_rows
from . import profit_proposals as profit_plan
from . import proposals as proposal
from . import sensitivity as sens
from .over_set import SetReport, set_report
from .queries import Answer, Query, ask_all, build_query, campaign_targeting, query_codes
from .style import NOT_COMPARABLE, states
from .units import Ctr, check_ctr
from .zones import DEFAULT_OVERPAY, DEFAULT_TOLERANCE, ZONES, check_bounds

log = logging.getLogger("toolkit.reports")


@dataclass(eq=False, repr=False)
class BidReport:
    """A bid report: :attr:`frame` (one row per campaign x country, see :func:`bid_report`),
    the :attr:`account` it was made from, and the :attr:`client` that asked the prices.

    ``calls`` is the number of price calls made (distinct queries), ``naive_calls`` the
    number a call per row would have made; ``queries`` maps each row's query key to the
    :class:`~toolkit.reports.queries.Query`, ``answers`` to its answer.
    """

    frame: pd.DataFrame
    account: Account
    client: Client | None
    queries: dict[str, Query] = field(default_factory=dict)
    answers: dict[str, Answer] = field(default_factory=dict)
    ctr: Ctr = None
    overpay: float = DEFAULT_OVERPAY
    tolerance: float = DEFAULT_TOLERANCE
    progress: bool = True
    made_at: pd.Timestamp = field(default_factory=lambda: pd.Timestamp.now(tz="UTC"))
    sensitivity_frame: pd.DataFrame | None = None
    history_path: Path | None = None
    #: The statistics and payouts joined (``bid_report(stats=..., payouts=...)``), or None.
    stats: pd.DataFrame | None = None
    payouts: Any = None
    include: str = "live"
    left_out: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["campaign_id"]))

    # ------------------------------------------------------------------ figures

    @property
    def calls(self) -> int:
        """Price calls made for the report (one per distinct query)."""
        return sum(1 for q in self.queries.values() if not q.problem)

    @property
    def naive_calls(self) -> int:
        """Price calls of one call per campaign x country."""
        return len(self.frame)

    @property
    def balance(self) -> float | None:
        """The account balance (USD), or None when it could not be read."""
        table = self.account.balance
        if len(table) and pd.notna(table["balance"].iloc[0]):
            return float(table["balance"].iloc[0])
        if self.client is None:
            return None
        try:
            return float(load_balance(self.client)["balance"].iloc[0])
        except Exception:  # noqa: BLE001 - the balance is a figure of the budget, not needed
            return None

    def summary(self, by: str = "zone") -> pd.DataFrame:
        """Money per zone (``by="zone"``, :func:`toolkit.reports.money.by_zone`): one row
        per zone and ``all``, with ``bids``, ``campaigns``, ``spend_day`` (USD a day at the
        current bid, over the rows with an estimate) and ``spend_unknown`` (rows without
        one, not counted), and ``profit_day``/``profit_unknown`` when the frame has
        ``profit_day_now``. ``by="ad_format"``: rows per format and zone (not comparable
        and failed rows in their own columns)."""
        if by == "zone":
            return money.by_zone(self.frame)
        if by != "ad_format":
            raise ValueError(f"by must be 'zone' or 'ad_format', got {by!r}")
        df = self.frame
        counts = df.groupby(["ad_format", "zone"], observed=False).size().unstack("zone")
        counts = counts.reindex(columns=list(ZONES), fill_value=0)
        by_format = df.groupby("ad_format", observed=False)
        counts["not comparable"] = by_format["comparable"].apply(lambda s: int((~s).sum()))
        counts["error"] = by_format["error"].apply(lambda s: int(s.notna().sum()))
        counts["rows"] = by_format.size()
        return counts

    def history(self) -> pd.DataFrame | None:
        """The price history of this report's queries (every report that asked them, this
        one included), oldest first; None when the report wrote no history."""
        if self.history_path is None:
            return None
        df = price_store.price_history(self.history_path)
        return df[df["query"].isin(list(self.queries))].reset_index(drop=True)

    def __repr__(self) -> str:
        zones = self.frame["zone"].value_counts().reindex(list(ZONES), fill_value=0)
        shown = ", ".join(f"{z} {n}" for z, n in zones.items())
        errors = int(self.frame["error"].notna().sum())
        return (
            f"<BidReport {len(self.frame)} rows, {self.frame['campaign_id'].nunique()} "
            f"campaigns, {self.calls} price calls ({self.naive_calls} rows): {shown}; "
            f"not comparable {int((states(self.frame) == NOT_COMPARABLE).sum())}, "
            f"errors {errors}"
            f"{'; ' + self.left_out_note if self.left_out_note else ''}>"
        )

    @property
    def left_out_note(self) -> str:
        """How many campaigns the report left out, and why ("" when none)."""
        return live_rows.note(len(self.left_out), self.include)

    def _repr_html_(self) -> str:
        return view.repr_html(self.frame, left_out=self.left_out_note)

    # ------------------------------------------------------------------ files

    def to_html(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """One self-contained HTML page (:func:`toolkit.reports.files.to_html`)."""
        return files.to_html(self, path, **options)

    def to_excel(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """An .xlsx workbook with the proposals as action sheets
        (:func:`toolkit.reports.files.to_excel`)."""
        return files.to_excel(self, path, **options)

    def to_pdf(self, path: str | os.PathLike[str], **options: Any) -> Path:
        """A PDF of the summary and the plots (:func:`toolkit.reports.files.to_pdf`)."""
        return files.to_pdf(self, path, **options)

    # ------------------------------------------------------------------ proposals

    def proposals(self, to: str = "minimum") -> pd.DataFrame:
        """The bids a proposal moves, with their budget impact; see
        :mod:`toolkit.reports.proposals` (``to="profit"``:
        :mod:`toolkit.reports.profit_proposals`)."""
        if to == profit_plan.PROFIT:
            return profit_plan.proposals(self.frame, self._profit_moves())
        campaigns = self.account.campaigns
        limits = pd.Series(
            campaigns["limit_day_sum"].to_numpy(), index=campaigns["id"].astype("int64")
        )
        return proposal.proposals(self.frame, to, limits, self.balance)

    def _profit_moves(self) -> pd.DataFrame:
        return profit_plan.moves_of(self.frame, self._countries(), self.overpay)

    @property
    def bid_rules(self) -> pd.DataFrame:
        """The account's bid rules of the report's campaigns as rows with their statistics
        (:func:`toolkit.reports.rule_rows.bid_rule_rows`)."""
        ids = self.frame["campaign_id"].unique()
        rules = self.account.bid_rules
        rules = rules[rules["campaign_id"].isin(ids)].reset_index(drop=True)
        campaigns = self.account.campaigns
        modes = dict(zip(campaigns["id"].astype(int), campaigns["mode"].astype(str), strict=True))
        return rule_rows.bid_rule_rows(rules, self.stats, self.payouts, modes)

    def _countries(self) -> pd.DataFrame:
        countries = self.account.countries
        ids = self.frame["campaign_id"].unique()
        return countries[countries["campaign_id"].isin(ids)].reset_index(drop=True)

    def propose(
        self,
        to: str = "minimum",
        *,
        client: Client | None = None,
        live: Account | None = None,
        allow: Iterable[str] = (),
        **options: Any,
    ) -> Plan:
        """The :class:`~toolkit.bulk.plan.Plan` that moves the bids of :meth:`proposals`.

        The desired ``countries`` table is the report's with the new bids; the report's
        account is the base of the three-way diff, and live state is read again for the
        campaigns the proposal touches (or ``live`` is used), so a bid changed since the
        report is a conflict, not overwritten. ``options`` go to
        :func:`~toolkit.bulk.plan.make_plan` (``prefer=``, ``max_bid_raise=``...). Preview it,
        then ``plan.apply(client)``; the run is journaled and ``toolkit.undo`` restores the bids.

        The planner's guards hold, with the report's minimum prices (of its comparable rows)
        given to ``bid_jump``: a bid the proposal moves more than 3x up, or cuts by more than
        two thirds, is refused (:class:`~toolkit.errors.PlanRefused`) unless
        ``allow=["bid_jump"]``:

        >>> plan = report.propose("recommended", allow=["bid_jump"])  # doctest: +SKIP

        ``to="profit"`` also drops countries and pauses campaigns
        (:mod:`toolkit.reports.profit_proposals`); undo adds and starts them again.
        """
        base = self._countries()
        if to == profit_plan.PROFIT:
            desired, bases = profit_plan.desired_tables(
                base, self.account.campaigns, self.frame, self._profit_moves()
            )
        else:
            moved = proposal.chosen(self.frame, to)
            desired = {"countries": proposal.desired_countries(base, moved)}
            bases = {"countries": base}
        options.setdefault("minimum_prices", proposal.minimum_prices(self.frame))
        try:
            return make_plan(
                self._client(client),
                desired,
                base=bases,
                live=live,
                allow=allow,
                **options,
            )
        except PlanRefused as exc:
            how = f"report.propose({to!r}, allow=[{exc.guard!r}])"
            raise PlanRefused(exc.guard, exc.details, how=how, rule=exc.rule) from None

    def to_actions(self, path: str | os.PathLike[str], to: str = "minimum") -> Path:
        """Write the proposal as a country-bids action workbook (one ``set`` row per moved
        bid); :func:`toolkit.bulk.workbook.actions.plan_actions` reads it back into the same calls.
        ``to="profit"``: ``set`` and ``drop`` rows of countries, ``pause`` rows of campaigns."""
        if to == profit_plan.PROFIT:
            moves = self._profit_moves()
            title = "Country bids proposed by a bid report (for profit)"
            text = [f"Made {self.made_at:%Y-%m-%d %H:%M} UTC: {len(moves)} move(s) for profit."]
            return write_template(path, title, text, profit_plan.action_rows(self.frame, moves))
        moved = proposal.chosen(self.frame, to)
        title = f"Country bids proposed by a bid report (to {to})"
        text = [
            f"Made {self.made_at:%Y-%m-%d %H:%M} UTC: {len(moved)} bid(s) moved to the {to} "
            "price. action set, target country, item the ISO country code, bid in USD per the "
            "campaign's buying model (CPM: per 1000 impressions, CPC: per click)."
        ]
        return write_template(path, title, text, proposal.action_rows(moved))

    # ------------------------------------------------------------------ sensitivity

    def sensitivity_cost(self, campaign_id: int | None = None, country: str | None = None) -> int:
        """How many extra price calls :meth:`sensitivity` would make."""
        return len(sens.plan_queries(self._rows(campaign_id, country), self.answers)[1])

    def sensitivity(
        self, campaign_id: int | None = None, country: str | None = None
    ) -> pd.DataFrame:
        """Prices and traffic with one targeting dimension dropped at a time, for one row
        (or every row of a campaign, or of the report); the extra calls are counted and
        announced first (logger ``toolkit.reports``, and on standard error when the report
        shows progress; :meth:`sensitivity_cost` counts them without asking)."""
        planned, new = sens.plan_queries(self._rows(campaign_id, country), self.answers)
        log.info("sensitivity: %d extra price call(s)", len(new))
        if self.progress:
            print(f"Sensitivity: {len(new)} extra price call(s)", file=sys.stderr)
        if new:
            self.answers.update(
                ask_all(self._client(None), new, progress=self.progress, desc="Sensitivity")
            )
        return sens.frame(planned, self.answers)

    def _rows(self, campaign_id: int | None, country: str | None) -> list[tuple[int, str, Query]]:
        df = self.frame
        geo = report_frame.geo()
        mask = pd.Series(True, index=df.index)
        if campaign_id is not None:
            mask &= df["campaign_id"] == int(campaign_id)
        if country is not None:
            mask &= df[geo] == str(country).upper()
        picked = df[mask]
        if not len(picked):
            raise KeyError(f"no row of the report for campaign {campaign_id}, {country}")
        return [
            (int(c), str(g), self.queries[k])
            for c, g, k in zip(picked["campaign_id"], picked[geo], picked["query"], strict=True)
        ]

    def _client(self, client: Client | None) -> Client:
        client = client or self.client
        if client is None:
            raise ValueError("this needs a client: pass client=")
        return client


def _source(
    source: Client | Account,
    campaign_ids: Sequence[int] | None,
    client: Client | None,
    progress: bool,
) -> tuple[Account, Client]:
    """The account (loaded with ``mode="full"`` from a client) and the client for prices."""
    if isinstance(source, Account):
        if source.mode != "full":
            raise ValueError(
                f"a bid report needs the campaigns' targeting: load the account with "
                f"mode='full' (this one is mode={source.mode!r})"
            )
        return source, client or connect_client(base_url=source.source)
    account = load_account(source, campaign_ids, mode="full", progress=progress)
    return account, client or source


def row_queries(account: Account, rows: pd.DataFrame) -> list[Query]:
    """The price query of each row: its campaign's format and targeting, its country."""
    targeting = campaign_targeting(account.targets)
    codes = query_codes(account.refs)
    return [
        build_query(str(fmt), targeting.get(int(cid), {}), str(g), codes)
        for cid, fmt, g in zip(
            rows["campaign_id"], rows["ad_format"], rows[report_frame.geo()], strict=True
        )
    ]


def _history(
    history: str | os.PathLike[str] | None,
    queries: Sequence[Query],
    answers: Mapping[str, Answer],
    account: Account,
) -> Path | None:
    """The prices asked appended to the price history file (None: none kept)."""
    if history is None:
        return None
    stored = price_store.history_path(None if str(history) == "default" else history)
    price_store.append(stored, queries, answers, source=account.source)
    return stored


def bid_report(
    source: Client | Account | AccountSet | Mapping[str, Client],
    campaign_ids: Sequence[int] | Mapping[str, Sequence[int]] | None = None,
    *,
    client: Client | None = None,
    clients: Mapping[str, Client] | None = None,
    overpay: float = DEFAULT_OVERPAY,
    tolerance: float = DEFAULT_TOLERANCE,
    ctr: float | Mapping[str, float] | None = None,
    progress: bool = True,
    history: str | os.PathLike[str] | None = "default",
    sensitivity: bool = False,
    workers: int = 8,
    include: str = "live",
    stats: Any = None,
    payouts: Any = None,
) -> BidReport | SetReport:
    """Every country bid of the campaigns against the minimum and recommended price.

    ``source`` is a client (the account is loaded with ``mode="full"``, the campaigns
    ``campaign_ids`` or all) or a loaded :class:`~toolkit.Account` (``mode="full"``;
    ``campaign_ids`` keeps some of its campaigns). Prices are asked with ``client=``, or the
    client given as ``source``, else one connected to the account's ``source`` URL.

    Each row's price is asked with the campaign's own targeting and the row's country;
    identical queries are asked once, ``workers`` at a time; a failed call sets ``error``.

    Units (:mod:`toolkit.reports.units`): a campaign buying in the other unit than its
    format's prices (``price_unit``) is ``comparable=False`` unless ``ctr=`` (a share, or
    ``{format: share}``) converts them; prices are in the bid's unit when comparable.

    Zones (``overpay``, ``tolerance``) and ``traffic_estimate``: :mod:`toolkit.reports.zones`.
    ``history``: the price history file (``"default"``: beside the journal; ``None``: none).
    ``sensitivity=True`` fills :attr:`BidReport.sensitivity_frame`.

    ``include="live"`` (the default) takes the started and approved campaigns only
    (:mod:`toolkit.reports.live`): the others buy nothing, so their bids are neither
    reported, proposed nor counted against the balance; :attr:`BidReport.left_out` lists
    them and every face of the report says how many. ``include="all"`` takes every campaign.

    ``stats`` (a stats frame or export) and ``payouts`` join statistics: :mod:`.profit`.

    Several accounts (an :class:`~toolkit.AccountSet` with ``clients={name: client}``, else
    each connected by its profile name; or a mapping of names to clients): one report per
    account with its own client, a :class:`~toolkit.reports.over_set.SetReport`.
    """
    live_rows.check_include(include)
    check_ctr(ctr)
    check_bounds(overpay, tolerance)
    kw = {"overpay": overpay, "tolerance": tolerance, "ctr": ctr, "progress": progress}
    kw |= {"history": history, "sensitivity": sensitivity, "workers": workers, "include": include}
    if is_set(source):
        kw |= {"stats": stats, "payouts": payouts, "client": client, "clients": clients}
        return set_report(_account_report, source, campaign_ids, **kw)
    if clients is not None:
        raise ValueError("clients= goes with a set of accounts; one account takes client=")
    stats, payouts = profit_plan.read_inputs(stats, payouts)  # refused before any price call
    return _account_report(source, campaign_ids, client=client, stats=stats, payouts=payouts, **kw)


def _account_report(
    source: Client | Account,
    campaign_ids: Sequence[int] | None,
    *,
    client: Client | None,
    overpay: float,
    tolerance: float,
    ctr: float | Mapping[str, float] | None,
    progress: bool,
    history: str | os.PathLike[str] | None,
    sensitivity: bool,
    workers: int,
    include: str,
    stats: pd.DataFrame | None,
    payouts: pd.DataFrame | None,
) -> BidReport:
    """The report of one account (:func:`bid_report`), its options checked and its
    statistics read already."""
    account, client = _source(source, campaign_ids, client, progress)
    rows, left_out = live_rows.split(report_frame.rows_of(account, campaign_ids), include)
    queries = row_queries(account, rows)
    answers = ask_all(client, queries, workers=workers, progress=progress)
    keys = [q.key for q in queries]
    df = report_frame.build(rows, keys, answers, ctr=ctr, overpay=overpay, tolerance=tolerance)
    df = profit_plan.with_profit(df, account.countries, stats, payouts, overpay)
    queried = {q.key: q for q in queries}
    report = BidReport(df, account, client, queried, answers, ctr, overpay, tolerance, progress)
    report.history_path = _history(history, queries, answers, account)
    report.include, report.left_out = include, left_out
    report.stats, report.payouts = stats, payouts
    if sensitivity and len(df):
        report.sensitivity_frame = report.sensitivity()
    return report


__all__ = ["BidReport", "bid_report"]
