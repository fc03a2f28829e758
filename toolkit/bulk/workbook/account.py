"""The account a workbook was exported from, and the check that a plan is made with its key.

The service names an account by its user id: the balance operation answers it
(``/api/campaign/balance``: ``user_id``), and every campaign carries it. The export records
that id (``account`` on the hidden ``_meta`` sheet, shown on the README), never the key nor
anything made from it. A plan of the workbook made with the key of another account is
refused in one line before any campaign is read (one read of the balance tells the two apart),
so nothing is sent: planned anyway, every row would be a campaign the account does not have.

A workbook exported before the account was recorded (or from an account whose balance could
not be read) has no ``account``, and is planned as before.

>>> account_id({"format": "campaign-toolkit workbook", "account": "1001"})
1001
>>> account_id({}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...errors import (
    AccountMismatchError,
    ApiError,
    AuthError,
    IncompleteReadError,
    TransportError,
    WorkbookError,
    WorkbookProblem,
)
from .layout import META_SHEET

if TYPE_CHECKING:  # pragma: no cover
    from ...client import Client
    from ...frames import Account

#: The key of ``_meta`` that holds the user id of the account a workbook was exported from.
ACCOUNT_KEY = "account"


def user_id(account: Account) -> int | None:
    """The user id of a loaded account (from its balance), or None when it was not read."""
    balance = getattr(account, "balance", None)
    if balance is None or not len(balance) or "user_id" not in balance:
        return None
    value = balance["user_id"].iloc[0]
    return None if pd.isna(value) else int(value)


def exported_account(account: Account) -> str:
    """What the export records as ``account``: the user id as text, ``""`` when unknown."""
    found = user_id(account)
    return "" if found is None else str(found)


def account_id(meta: Mapping[str, str], path: str | None = None) -> int | None:
    """The user id a workbook's ``_meta`` records, or None when it records none; a value
    that is no user id is a :class:`~toolkit.errors.WorkbookError` (the hidden sheet was
    edited)."""
    text = str(meta.get(ACCOUNT_KEY) or "").strip()
    if not text:
        return None
    if not (text.isascii() and text.isdigit()):
        problem = WorkbookProblem(
            META_SHEET,
            None,
            ACCOUNT_KEY,
            text,
            "not a user id: the hidden sheet was edited; export the workbook again",
        )
        raise WorkbookError([problem], path)
    return int(text)


def connected_account(client: Client, live: Account | None = None) -> int:
    """The user id of the account ``client``'s key belongs to: from ``live`` when it holds
    the balance, else one read of the balance. A failed read is an
    :class:`~toolkit.errors.IncompleteReadError` (no plan, nothing sent)."""
    known = None if live is None else user_id(live)
    if known is not None:
        return known
    try:
        answer = client.account.balance()
    except AuthError:
        raise
    except (ApiError, TransportError) as exc:
        raise IncompleteReadError([f"the account's user id (account.balance: {exc})"]) from exc
    value = answer.get("user_id") if isinstance(answer, Mapping) else None
    if value is None:
        raise IncompleteReadError(["the account's user id (account.balance: no user_id)"])
    return int(value)


#: The ``_meta`` key of a workbook of several accounts (:mod:`.set_book`).
ACCOUNTS_KEY = "accounts"


def refuse_set_workbook(desired: Any) -> None:
    """Raise :class:`~toolkit.errors.WorkbookError` when ``desired`` is a workbook of several
    accounts: one client would plan every account's rows against its own account."""
    meta = getattr(desired, "meta", None)
    if not isinstance(meta, Mapping) or not str(meta.get(ACCOUNTS_KEY) or "").strip():
        return
    path = getattr(desired, "path", None)
    names = ", ".join(n.partition("=")[0].strip() for n in str(meta[ACCOUNTS_KEY]).split(","))
    message = (
        f"holds the accounts {names}: plan it with each account's own key"
        " (toolkit.plan_accounts, or campaign-toolkit plan --account all)"
    )
    raise WorkbookError(
        [WorkbookProblem(META_SHEET, None, ACCOUNTS_KEY, None, message)],
        None if path is None else str(path),
    )


def check_account(desired: Any, client: Client, live: Account | None = None) -> None:
    """Raise :class:`~toolkit.errors.AccountMismatchError` when ``desired`` is a read
    workbook exported from another account than ``client``'s; anything else (tables, an
    account, a workbook that records no account) passes without a request."""
    meta = getattr(desired, "meta", None)
    if not isinstance(meta, Mapping):
        return
    path = getattr(desired, "path", None)
    name = Path(path).name if path is not None else "the workbook"
    exported = account_id(meta, None if path is None else str(path))
    if exported is None:
        return
    connected = connected_account(client, live)
    if connected != exported:
        raise AccountMismatchError(name, exported, connected)


__all__ = [
    "ACCOUNT_KEY",
    "account_id",
    "check_account",
    "refuse_set_workbook",
    "connected_account",
    "exported_account",
    "user_id",
]
