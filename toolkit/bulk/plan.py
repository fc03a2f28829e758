"""Plans: the calls that turn the live account into the desired tables, previewed first.

>>> import toolkit
>>> tables = toolkit.read_workbook("account.xlsx")                    # doctest: +SKIP
>>> plan = toolkit.plan(client, tables)                               # doctest: +SKIP
>>> len(plan), plan.to_frame()                                        # doctest: +SKIP

:func:`make_plan` takes three steps, each in its own module and in this order only: the
scope (:mod:`toolkit.bulk.plan_scope`: the tables in play, the rows of them the edit may
change, the campaigns whose live state is read), the diff (:mod:`toolkit.bulk.plan_diff`:
each table three ways, what changes and the conflicts), then the build
(:mod:`toolkit.bulk.plan_build`: campaigns that need the same items grouped into one batch
call, the calls ordered safely: pauses and archives first, then settings, drops before adds,
and starts last). A bid change is a drop and an add. Guards refuse suspicious deletions and
bids moved far from their old value unless lifted with ``allow=``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import (
    ApiError,
    AuthError,
    IncompleteReadError,
    NotFoundError,
    PlanRefused,
    TransportError,
)
from ..frames import Account, load_account
from ..frames.schemas import plan_calls_schema
from ..text import single_spaced
from . import preview
from .apply import apply_plan
from .calls import STEPS, Call
from .diff_types import ABSENT, Conflict
from .guards import (
    DEFAULT_MAX_ARCHIVE,
    DEFAULT_MAX_BID_CUT,
    DEFAULT_MAX_BID_RAISE,
    DEFAULT_MAX_DROP_SHARE,
    Guards,
    MinimumPrices,
)
from .journal import service_of
from .outcomes import ApplyResult
from .plan_build import build_calls
from .plan_diff import diff_tables
from .plan_scope import scope_of
from .provenance import Provenance
from .relative_bids import written
from .relative_prices import fill_prices
from .workbook.account import check_account, refuse_set_workbook

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client


@dataclass
class Plan:
    """An ordered list of calls, with the conflicts left out; preview it before applying.

    ``scope`` is the campaigns whose live state the plan was made against: with the
    exported state known, those the edit touches (none for an edit that changes nothing);
    without it, every campaign of the tables. ``names`` maps campaign ids to their names
    (for the preview). ``reasons`` maps ``(campaign_id, target, key)`` (``key`` ``""``
    for a campaign's move) to why the change was made (a rule and its numbers), shown
    beside the change. ``provenance`` holds, per change a rule planned, the rule, the item
    and the data it was decided on (:class:`~toolkit.bulk.provenance.Provenance`); applying
    the plan journals them with the run. The preview shows each
    change as the user thinks of it (:meth:`changes`, :meth:`summary`, the HTML view in a
    notebook); :meth:`to_frame` shows the calls.
    """

    calls: list[Call] = field(default_factory=list)
    conflicts: pd.DataFrame = field(default_factory=lambda: _conflict_frame([]))
    warnings: list[str] = field(default_factory=list)
    scope: tuple[int, ...] = ()
    names: dict[int, str] = field(default_factory=dict)
    reasons: dict[tuple[int, str, str], str] = field(default_factory=dict)
    provenance: list[Provenance] = field(default_factory=list)
    #: The account (user id) of the live state the plan was made against, when read: the
    #: journal binds the run to it, so that undo and repair refuse another account.
    account: int | None = None
    #: The service (as a journal names it, :func:`~toolkit.bulk.journal.service_of`) the
    #: plan was made on; applying it with a client of another service is refused.
    service: str | None = None
    #: What the plan is for: ``edit`` (a workbook, form, rule...), ``undo`` or ``repair`` of
    #: a run; it words the conflicts in the preview.
    purpose: str = "edit"
    #: The side that settled the conflicts (``desired``, ``live``), or None: left out.
    prefer: str | None = None
    #: The run a repair plan finishes (the journal links the two).
    repairs: str | None = None
    #: The bids written as changes (``+10%``, ``x1.2``, ``min``, ``rec-5%``), per
    #: ``(campaign_id, target, key)``: the preview shows the form beside the old and new bid.
    written: dict[tuple[int, str, str], str] = field(default_factory=dict)
    #: What made the plan (a form's name, ``form:bids``), journaled with its run.
    source: str | None = None
    #: The run of a set of accounts this plan is part of (:mod:`toolkit.bulk.plan_set`),
    #: and the name of its account in the set; journaled with its run.
    run_set: str | None = None
    profile: str | None = None
    _edits: tuple[tuple[int, ...], list[Any]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __len__(self) -> int:
        return len(self.calls)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.calls)

    def edits(self) -> list[preview.Edit]:
        """Every change as the user thinks of it (a bid change's drop and add are one)."""
        key = tuple(map(id, self.calls))
        if self._edits is None or self._edits[0] != key:
            self._edits = (key, preview.edits_of(self.calls))
        return self._edits[1]

    def changes(self) -> pd.DataFrame:
        """One row per campaign x change: call, calls, step, campaign_id, campaign_name,
        what, target, list_type, key, old, new, change (the words, ``bid US 0.30 -> 0.33``),
        why (the reason in ``reasons``, a rule and its numbers; else missing), written (a bid
        written as a change, ``+10%``, ``x1.2``, ``min``, ``rec-5%``; else missing)."""
        return preview.change_frame(self)

    def to_frame(self) -> pd.DataFrame:
        """One row per call: step, action, target, list_type, campaigns, campaign_ids, items,
        bid (the call's one bid; NaN when its items carry different bids), bids (country
        adds: code -> bid), changes (how many), detail (the changes in words), call."""
        details = preview.call_details(self) if self.calls else []
        per_call: dict[int, int] = defaultdict(int)
        for e in self.edits():
            per_call[e.call] += 1
        rows = []
        for n, c in enumerate(self.calls, start=1):
            bids = dict(c.bids) if c.bids else None
            one = {float(v) for v in bids.values()} if bids else set()
            rows.append(
                {
                    "step": c.step,
                    "action": c.action,
                    "target": c.target,
                    "list_type": c.list_type,
                    "campaigns": len(c.campaign_ids),
                    "campaign_ids": list(c.campaign_ids),
                    "items": len(c.bids) if c.bids else len(c.items),
                    "bid": c.bid if c.bid is not None else (one.pop() if len(one) == 1 else None),
                    "bids": bids,
                    "changes": per_call.get(n, 0),
                    "detail": details[n - 1],
                    "call": n,
                }
            )
        columns = plan_calls_schema(STEPS)
        return pd.DataFrame(rows, columns=list(columns)).astype(columns)

    def summary(
        self,
        *,
        max_calls: int | None = 30,
        max_lines: int | None = 5,
        pointers: preview.Pointers = preview.IN_PYTHON,
    ) -> str:
        """The preview for a terminal: each call with its campaigns' changes in words,
        at most ``max_calls`` calls and ``max_lines`` lines per call (the rest counted, and
        ``pointers`` say where to see them; None for both shows every change and conflict),
        then conflicts and warnings."""
        every = max_calls is None and max_lines is None
        return preview.plan_text(
            self,
            max_calls=max_calls,
            max_lines=max_lines,
            items=None if every else 3,
            most=None if every else 4,
            pointers=pointers,
        )

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return preview.plan_html(self)

    def apply(self, client: Client, **options: Any) -> ApplyResult:
        """Send the calls; see :func:`toolkit.bulk.apply.apply_plan`."""
        return apply_plan(self, client, **options)


def _conflict_frame(conflicts: list[tuple[str, Conflict]]) -> pd.DataFrame:
    rows = [
        {
            "table": table,
            "key": c.key,
            "base": _shown(c.base),
            "live": _shown(c.live),
            "desired": _shown(c.desired),
        }
        for table, c in conflicts
    ]
    return pd.DataFrame(rows, columns=["table", "key", "base", "live", "desired"])


def _shown(value: Any) -> Any:
    return "<absent>" if value is ABSENT else value


# --------------------------------------------------------------------------- planning


def make_plan(
    client: Client,
    desired: Any,
    base: Mapping[str, pd.DataFrame] | None = None,
    *,
    live: Account | None = None,
    prefer: str | None = None,
    allow: Iterable[str] = (),
    max_drop_share: float = DEFAULT_MAX_DROP_SHARE,
    max_archive: int = DEFAULT_MAX_ARCHIVE,
    max_bid_raise: float = DEFAULT_MAX_BID_RAISE,
    max_bid_cut: float = DEFAULT_MAX_BID_CUT,
    minimum_prices: MinimumPrices | None = None,
    narrow_reads: bool = True,
) -> Plan:
    """The plan that turns live into ``desired``, three-way against ``base`` when known.

    ``desired`` is what :func:`toolkit.read_workbook` returns (its exported state is then the
    base), an :class:`~toolkit.frames.Account`, or a dict of table name -> DataFrame; tables
    not given mean "no change". ``prefer`` settles conflicts (``"desired"`` or ``"live"``;
    by default they are left out and listed in ``plan.conflicts``). ``allow`` lifts guards by
    name (``drop_share``, ``empty_whitelist``, ``bulk_archive``, ``bid_jump``); ``max_*`` are
    their thresholds, ``minimum_prices`` the service's minimum price per ``(campaign id,
    country)`` that ``bid_jump`` checks bids against (unchecked without it: a plan asks none).

    With a base, the edited tables are first compared with it locally, and live state is
    read only for the campaigns the edit touches (``plan.scope``): a key whose desired value
    equals its base is no change whatever live says, so the other campaigns cannot give a
    call, a conflict or a warning; an edit that changes nothing sends no request.
    ``narrow_reads=False`` reads every campaign of the tables instead (the same plan, at the
    cost of the whole account). Without a base, every campaign of the tables is read.
    """
    if prefer not in (None, "desired", "live"):
        raise ValueError("prefer must be None, 'desired' or 'live'")
    refuse_set_workbook(desired)  # several accounts: each planned with its own key
    guards = Guards(allow, max_drop_share, max_archive, max_bid_raise, max_bid_cut, minimum_prices)
    # 1. scope: the tables in play, the rows of them to plan, the campaigns to read
    scope = scope_of(desired, base, narrow_reads=narrow_reads)
    live = _live_state(client, live, scope.campaigns, scope.narrowed, desired)
    live_tables = scope.live_tables(live)
    tables = _with_prices(client, desired, scope.tables, live)  # bids written min, rec...
    # 2. diff: what changes, table by table, and the conflicts
    found = diff_tables(tables, scope.base, live_tables, prefer, scope.codes)
    # 3. build: the calls that make the changes, in safe order
    built = build_calls(found, live)
    plan = Plan(
        built.calls,
        _conflict_frame(found.conflicts),
        built.warnings,
        tuple(sorted(scope.campaigns)),
        names=_names(live_tables["campaigns"]),
        account=account_of(live),
        service=service_of(client) if client is not None else None,
        prefer=prefer,
        written=written(getattr(desired, "bid_forms", ())),
    )
    guards.check(plan.calls, live_tables)
    return plan


def _live_state(
    client: Client, live: Account | None, scope: set[int], narrowed: bool, desired: Any = None
) -> Account:
    """The live state given (checked complete), or read for the campaigns ``scope``; first,
    when there is a read to make, a workbook of another account is refused."""
    if live is not None or not narrowed or scope:
        check_account(desired, client, live)
    if live is None:
        return _read(client, scope, narrowed)
    check_complete(live)
    return live


def _with_prices(
    client: Client, desired: Any, tables: dict[str, pd.DataFrame], live: Account
) -> dict[str, pd.DataFrame]:
    """The tables with the bids a workbook wrote ``min`` or ``rec`` (``rec-5%``...) set from
    the service's prices (:mod:`toolkit.bulk.relative_prices`)."""
    cells = [c for c in getattr(desired, "bid_forms", ()) if c.form.needs_price]
    if not cells:
        return tables
    path = getattr(desired, "path", None)
    return fill_prices(client, tables, cells, live, None if path is None else str(path))


def _read(client: Client, scope: set[int], narrowed: bool) -> Account:
    """Live state of the campaigns ``scope``; nothing at all for a narrowed edit that
    touches no campaign (its plan is empty whatever live says)."""
    if narrowed and not scope:
        return Account.empty()
    return read_live(client, sorted(scope))


#: Account-wide reads a plan does not use: their failure does not stop planning.
UNUSED_READS: tuple[str, ...] = ("account.balance",)


def read_live(client: Client, campaign_ids: Iterable[int] | None = None) -> Account:
    """The live account (or its campaigns ``campaign_ids``) to plan against, read whole.

    Raises :class:`~toolkit.errors.IncompleteReadError` when a part a plan needs could not be
    read after the client's retries (the campaign list, a campaign's detail or rules, the
    dictionaries, the creative list): a plan built on a partial read would mistake what was
    not read for what is not there. A campaign the service says does not exist is no failure:
    the plan skips it with a warning. ``AuthError`` is raised as it is.
    """
    ids = None if campaign_ids is None else list(campaign_ids)
    try:
        live = load_account(client, ids, progress=False)
    except AuthError:
        raise
    except (ApiError, TransportError) as exc:  # the campaign list: the only read not kept
        raise IncompleteReadError([f"the campaign list ({single_spaced(exc)})"]) from exc
    check_complete(live)
    return live


def check_complete(live: Account) -> None:
    """Raise :class:`~toolkit.errors.IncompleteReadError` naming each part of ``live`` that a
    plan needs and that could not be read (``live.failures``), if any."""
    failures = getattr(live, "failures", None)
    if failures is None or not len(failures):
        return
    parts = []
    for f in failures.itertuples(index=False):
        operation, error = str(f.operation), str(f.error)
        if operation in UNUSED_READS or error == NotFoundError.__name__:
            continue
        message = single_spaced(f.message)
        detail = message if message.startswith(operation) else f"{operation}: {message}"
        parts.append(detail if pd.isna(f.campaign_id) else f"campaign {f.campaign_id} ({detail})")
    if parts:
        raise IncompleteReadError(parts)


def account_of(live: Account) -> int | None:
    """The user id of a live read (from its balance), or None when it was not read."""
    balance = getattr(live, "balance", None)
    if balance is None or not len(balance) or "user_id" not in balance:
        return None
    value = balance["user_id"].iloc[0]
    return None if pd.isna(value) else int(value)


def _names(campaigns: pd.DataFrame) -> dict[int, str]:
    if campaigns is None or campaigns.empty:
        return {}
    names = campaigns["name"].astype(object).where(campaigns["name"].notna(), None)
    return {int(i): str(n) for i, n in zip(campaigns["id"], names, strict=True) if n is not None}


def plan(
    client: Client, desired: Any, base: Mapping[str, pd.DataFrame] | None = None, **options: Any
) -> Plan:
    """``toolkit.plan``: see :func:`make_plan`."""
    return make_plan(client, desired, base, **options)


__all__ = ["Call", "Plan", "PlanRefused", "check_complete", "make_plan", "plan", "read_live"]
