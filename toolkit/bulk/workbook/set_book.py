"""One workbook across several accounts: exported with an ``account`` column on every sheet,
read back and split into one account's tables each, planned with each account's own client.

The export (:func:`export_set_workbook`) writes the tables of an
:class:`~toolkit.frames.AccountSet` one under the other, as the set's frames hold them:
``account`` (the profile name) is the first column of every sheet, read-only. ``_meta``
records the accounts and their user ids (``accounts: client-a=1001, client-b=1002``) and a
digest of which campaign is in which account, kept on the hidden ``_base_campaigns`` sheet.

Reading (:func:`read_set_workbook`) checks every sheet as for one account, then every row's
account: a name the workbook does not hold, or another account than its campaign's (an edit
cannot move a row between accounts), is refused with its cell; a new row may leave it empty
(its campaign's account). The tables are then split per account, each a
:class:`~toolkit.bulk.workbook.book.WorkbookTables` bound to its account's user id, so the
planner refuses it with another account's key. :func:`plan_accounts` plans each account
with its own client into a :class:`~toolkit.bulk.plan_set.PlanSet`; an account the user has
no profile for is refused with the first cell that names it.

>>> parse_accounts("client-a=1001, client-b=")
{'client-a': 1001, 'client-b': None}
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...errors import ConfigError, WorkbookError, WorkbookProblem
from ...frames.account import CAMPAIGN_COLUMN, TABLES
from ...text import single_spaced
from ..plan_set import PlanSet, plan_each, plan_tables
from .account import ACCOUNT_KEY, ACCOUNTS_KEY, user_id
from .book import WorkbookTables, read_workbook
from .cells import Book, is_empty
from .export import export_workbook as export_one
from .export import meta_facts, write_book
from .layout import ACCOUNT_COLUMN, BASE_PREFIX, COLUMNS, META_SHEET, set_sheet

if TYPE_CHECKING:  # pragma: no cover
    from ...client import Client
    from ...frames import AccountSet

#: ``_meta`` keys of a workbook of several accounts: its accounts (name=user id, ...), and
#: the digest of each campaign's account.
ACCOUNT_DIGEST_KEY = "account_digest"


def parse_accounts(text: str) -> dict[str, int | None]:
    """``name -> user id`` (None when unknown) from the ``_meta`` value."""
    out: dict[str, int | None] = {}
    for entry in str(text).split(","):
        name, _, number = entry.strip().partition("=")
        if name:
            out[name] = int(number) if number.strip().isdigit() else None
    return out


def account_digest(ids: Iterable[Any], names: Iterable[Any]) -> str:
    """The digest of which campaign is in which account (order does not count)."""
    pairs = sorted((int(i), str(n)) for i, n in zip(ids, names, strict=True))
    return hashlib.sha256(repr(pairs).encode()).hexdigest()[:32]


# --------------------------------------------------------------------------- export


def export_set_workbook(
    accounts: AccountSet, path: str | os.PathLike[str], *, protect: bool = True
) -> Path:
    """Write one editable workbook of every account of ``accounts`` (an
    :class:`~toolkit.frames.AccountSet`), an ``account`` column first on every sheet.

    Campaign ids must be unique across the set (accounts of one service); accounts of
    different services whose ids meet are refused: export them one by one.

    >>> export_set_workbook(toolkit.load_accounts("all"), "agency.xlsx")  # doctest: +SKIP
    PosixPath('agency.xlsx')
    """
    if not len(accounts):
        raise ConfigError("the set holds no account: nothing to export")
    _check_unique_ids(accounts)
    loaded = set.intersection(*(set(a.loaded_tables) for a in accounts.members.values()))
    tables = {
        t: accounts.table(t)[[ACCOUNT_COLUMN, *COLUMNS[t]]].reset_index(drop=True)
        for t in TABLES
        if t in loaded
    }
    first = next(iter(accounts.members.values()))
    info = [
        (k, v)
        for k, v in meta_facts(first, tables)
        if k not in (ACCOUNT_KEY, "source", "loaded_at")
    ]
    ids = {n: user_id(a) for n, a in accounts.members.items()}
    campaigns = tables.get("campaigns")
    digest = "" if campaigns is None else account_digest(campaigns["id"], campaigns["account"])
    info += [
        ("loaded_at", accounts.loaded_at.isoformat()),
        (ACCOUNTS_KEY, ", ".join(f"{n}={'' if i is None else i}" for n, i in ids.items())),
        (ACCOUNT_DIGEST_KEY, digest),
    ]
    sheets = {t: set_sheet(t) for t in tables}
    return write_book(tables, path, accounts.refs, info, protect=protect, sheets=sheets)


def _check_unique_ids(accounts: AccountSet) -> None:
    seen: dict[int, str] = {}
    for name, account in accounts.members.items():
        for cid in account.campaigns["id"].dropna().astype(int):
            if cid in seen:
                raise ConfigError(
                    f"campaign {cid} is in accounts {seen[cid]} and {name} (different"
                    " services): one workbook cannot tell their rows apart; export them one"
                    " by one"
                )
            seen[cid] = name


def export_workbook(
    source: Any,
    path: str | os.PathLike[str],
    campaign_ids: Iterable[int] | None = None,
    *,
    protect: bool = True,
) -> Path:
    """``toolkit.export_workbook``: an account, a client (see
    :func:`toolkit.bulk.workbook.export.export_workbook`) or a set of accounts (see
    :func:`export_set_workbook`; ``campaign_ids`` does not apply to it)."""
    from ...frames import AccountSet

    if isinstance(source, AccountSet):
        if campaign_ids is not None:
            raise ValueError("campaign_ids applies to one account; export the set whole")
        return export_set_workbook(source, path, protect=protect)
    return export_one(source, path, campaign_ids, protect=protect)


# --------------------------------------------------------------------------- read


@dataclass
class SetWorkbook:
    """A workbook of several accounts, read: ``tables`` as read whole, ``accounts`` (name ->
    user id, None when unknown), and per account its own tables (``members``), each bound to
    its account. ``cells`` says, per account, the first cell naming it (sheet, row) for the
    messages."""

    tables: WorkbookTables
    accounts: dict[str, int | None]
    members: dict[str, WorkbookTables] = field(default_factory=dict)
    cells: dict[str, tuple[str, int]] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.tables.path

    def __repr__(self) -> str:
        counts = ", ".join(
            f"{n} {len(t.desired.get('campaigns', ())):,}" for n, t in self.members.items()
        )
        return f"<SetWorkbook {self.path.name}: campaigns by account: {counts}>"


def is_set_workbook(meta: Mapping[str, str]) -> bool:
    """Whether a workbook's ``_meta`` says it holds several accounts."""
    return bool(str(meta.get(ACCOUNTS_KEY) or "").strip())


def read_set_workbook(path: str | os.PathLike[str], *, engine: str | None = None) -> SetWorkbook:
    """Read a workbook of several accounts (see the module): every cell checked as
    :func:`~toolkit.bulk.workbook.read_workbook` checks it, then each row's account; one
    :class:`~toolkit.errors.WorkbookError` lists every problem."""
    tables = read_workbook(path, engine=engine)
    if not is_set_workbook(tables.meta):
        raise WorkbookError(
            [WorkbookProblem(META_SHEET, None, ACCOUNTS_KEY, None, _NOT_A_SET)], str(path)
        )
    accounts = parse_accounts(tables.meta[ACCOUNTS_KEY])
    owner = _campaign_accounts(path, tables, engine)
    problems: list[WorkbookProblem] = []
    names = {t: _row_names(t, tables, owner, accounts, problems) for t in tables.desired}
    if problems:
        raise WorkbookError(problems, str(path))
    found = SetWorkbook(tables, accounts)
    for table, rows in names.items():
        where = tables.row_accounts.get(table)
        for i, name in enumerate(rows):
            if where is not None and name not in found.cells:
                found.cells[name] = (where.sheets[i], where.rows[i])
    for name, number in accounts.items():
        found.members[name] = _member(tables, name, number, names, owner)
    return found


_NOT_A_SET = (
    "not a workbook of several accounts (no accounts in _meta): plan it for one account"
    " (campaign-toolkit plan --account NAME)"
)


def _campaign_accounts(
    path: str | os.PathLike[str], tables: WorkbookTables, engine: str | None
) -> dict[int, str]:
    """Campaign id -> account, from the hidden ``_base_campaigns`` sheet, checked against
    the digest of the export."""
    ids: list[int] = []
    names: list[str] = []
    with Book(path, engine) as book:
        for sheet in [s for s in book.names if s.startswith(BASE_PREFIX + "campaigns")]:
            rows = book.rows(sheet)
            header = [str(c).strip() if not is_empty(c) else "" for c in (rows[0] if rows else [])]
            if "id" not in header or ACCOUNT_COLUMN not in header:
                continue
            i, a = header.index("id"), header.index(ACCOUNT_COLUMN)
            for row in rows[1:]:
                if len(row) > max(i, a) and not is_empty(row[i]) and not is_empty(row[a]):
                    ids.append(int(float(row[i])))
                    names.append(str(row[a]).strip())
    expected = tables.meta.get(ACCOUNT_DIGEST_KEY, "")
    if expected and account_digest(ids, names) != expected:
        message = (
            "edited: this hidden sheet says which campaign is in which account, and it no"
            " longer says what was exported; export the workbook again"
        )
        raise WorkbookError(
            [WorkbookProblem(BASE_PREFIX + "campaigns", None, ACCOUNT_COLUMN, None, message)],
            str(path),
        )
    return dict(zip(ids, names, strict=True))


def _row_names(
    table: str,
    tables: WorkbookTables,
    owner: Mapping[int, str],
    accounts: Mapping[str, int | None],
    problems: list[WorkbookProblem],
) -> list[str]:
    """The account of each row of ``table``: its campaign's; a cell naming another account,
    or an account the workbook does not hold, is a problem."""
    df = tables.desired[table]
    where = tables.row_accounts.get(table)
    cells = where.cells if where is not None else [None] * len(df)
    spelled = {v: None if is_empty(v) else single_spaced(v) for v in set(cells)}
    written = pd.Series([spelled[v] for v in cells], index=df.index, dtype=object)
    ids = df[CAMPAIGN_COLUMN[table]]
    mapped = ids.map(owner)
    campaign = mapped.astype(object).where(mapped.notna(), None)
    named = campaign.where(campaign.notna(), written)
    odd = written.notna() & (
        ~written.isin(list(accounts)) | (campaign.notna() & written.ne(campaign))
    )
    for i in np.flatnonzero((odd | named.isna()).to_numpy()):
        problem = _account_problem(written.iloc[i], campaign.iloc[i], ids.iloc[i], accounts)
        sheet, row = (where.sheets[i], where.rows[i]) if where is not None else (table, None)
        message = problem or "no account: name the account of the row"
        problems.append(WorkbookProblem(sheet, row, ACCOUNT_COLUMN, cells[i], message))
    return named.tolist()


def _account_problem(
    written: str | None, campaign: str | None, cid: Any, accounts: Mapping[str, int | None]
) -> str | None:
    if written is None:
        return None
    if written not in accounts:
        return f"unknown account {written!r}: this workbook holds {', '.join(accounts)}"
    if campaign is not None and written != campaign:
        return (
            f"campaign {int(cid)} is in account {campaign}, not {written}: an edit cannot move"
            " a row to another account"
        )
    return None


def _member(
    tables: WorkbookTables,
    name: str,
    number: int | None,
    names: Mapping[str, list[str]],
    owner: Mapping[int, str],
) -> WorkbookTables:
    """The tables of one account, as a workbook of that account alone would read."""
    desired = {
        t: df[pd.Series(names[t], index=df.index, dtype=object).eq(name)].reset_index(drop=True)
        for t, df in tables.desired.items()
    }
    ours = {cid for cid, n in owner.items() if n == name}
    base = {
        t: df[df[CAMPAIGN_COLUMN[t]].isin(ours)].reset_index(drop=True)
        for t, df in tables.base.items()
    }
    meta = {k: v for k, v in tables.meta.items() if k not in (ACCOUNTS_KEY, ACCOUNT_DIGEST_KEY)}
    meta[ACCOUNT_KEY] = "" if number is None else str(number)
    forms = [c for c in tables.bid_forms if owner.get(c.campaign_id) == name]
    return replace(tables, desired=desired, base=base, meta=meta, bid_forms=forms, row_accounts={})


# --------------------------------------------------------------------------- plan


def plan_accounts(
    book: SetWorkbook | str | os.PathLike[str] | Mapping[str, pd.DataFrame],
    clients: Mapping[str, Client] | None = None,
    *,
    accounts: Sequence[str] | None = None,
    allow: Iterable[str] = (),
    **options: Any,
) -> PlanSet:
    """Plan a workbook of several accounts: each account's tables with its own client
    (``clients``, else connected by profile name), into a
    :class:`~toolkit.bulk.plan_set.PlanSet`. ``accounts`` plans only those (the rows of the
    others are not read into any plan). An account without a client or a profile is refused
    with the first cell naming it; so is a set whose plans together archive more campaigns
    than the guard allows. ``options`` go to :func:`~toolkit.bulk.plan.make_plan` for each
    account.

    Tables of a set edited in pandas (a dict of tables with ``account`` first) are planned
    the same way, three ways against ``base=`` (the set they came from) when given: see
    :func:`~toolkit.bulk.plan_set.plan_tables`.

    >>> plans = plan_accounts("agency.xlsx")                         # doctest: +SKIP
    >>> plans.changes()                                                   # doctest: +SKIP
    """
    if isinstance(book, Mapping):
        return plan_tables(book, clients, accounts=accounts, allow=allow, **options)
    found = book if isinstance(book, SetWorkbook) else read_set_workbook(book)
    chosen = _chosen(found, accounts)
    given = dict(clients) if clients is not None else _connect(found, chosen)
    members = {n: found.members[n] for n in chosen}
    return plan_each(members, given, allow=allow, **options)


def _chosen(found: SetWorkbook, accounts: Sequence[str] | None) -> list[str]:
    """The accounts to plan: ``accounts`` (each must be in the workbook), else every one
    the workbook holds."""
    if accounts is None:
        return list(found.accounts)
    unknown = [a for a in accounts if a not in found.accounts]
    if unknown:
        raise ConfigError(
            f"account(s) {', '.join(unknown)} not in {found.path.name}; it holds"
            f" {', '.join(found.accounts)}"
        )
    return list(dict.fromkeys(accounts))


def _connect(found: SetWorkbook, names: Sequence[str]) -> dict[str, Client]:
    """Each account's client by its profile; an account without one is refused with the
    first cell that names it."""
    from ...client.client import profile_clients, profiles

    known = set(profiles())
    lacking = [n for n in names if n not in known]
    if lacking:
        problems = [
            WorkbookProblem(
                *found.cells.get(n, (META_SHEET, None)),
                ACCOUNT_COLUMN,
                n,
                f"no profile for account {n!r} in the config file (profiles:"
                f" {', '.join(sorted(known)) or 'none'}); add [profiles.{n}], or plan the"
                " other accounts only",
            )
            for n in lacking
        ]
        raise WorkbookError(problems, str(found.path))
    return profile_clients(names)


__all__ = [
    "ACCOUNTS_KEY",
    "SetWorkbook",
    "export_set_workbook",
    "export_workbook",
    "is_set_workbook",
    "parse_accounts",
    "plan_accounts",
    "read_set_workbook",
]
