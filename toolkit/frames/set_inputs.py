"""What a job over a set of accounts takes: each member's client, and inputs split per account.

A bid report or rules over several accounts run once per account, each with its own client
(its key: a call of one account never carries another's), then stack what they made with an
``account`` column first. :func:`set_and_clients` gives the set and the client of each member;
:func:`by_account` splits an input given for the whole set (statistics, payouts, campaign ids)
into each account's part, refusing a value that names no account of the set.

>>> import pandas as pd
>>> parts = by_account(pd.DataFrame({"account": ["a", "b", "a"], "x": [1, 2, 3]}), ["a", "b"])
>>> {name: part["x"].tolist() for name, part in parts.items()}
{'a': [1, 3], 'b': [2]}
>>> by_account(pd.DataFrame({"account": ["a", "c", "c"], "x": [1, 2, 3]}), ["a", "b"])
Traceback (most recent call last):
...
toolkit.errors.ValidationError: statistics: the account column names 'c' (2 rows), not an ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..client import Client
from ..client.client import profile_clients
from ..errors import ValidationError
from .account_set import ACCOUNT, AccountSet
from .load_set import load_accounts


def is_set(source: Any) -> bool:
    """Whether ``source`` means several accounts: an :class:`AccountSet`, or a mapping of
    account names to clients."""
    return isinstance(source, AccountSet) or (
        isinstance(source, Mapping) and all(isinstance(c, Client) for c in source.values())
    )


def set_and_clients(
    source: AccountSet | Mapping[str, Client],
    clients: Mapping[str, Client] | None = None,
    *,
    mode: str = "full",
    progress: bool = True,
) -> tuple[AccountSet, dict[str, Client]]:
    """The set and each member's client.

    ``source`` is a loaded :class:`AccountSet` (its members' clients are ``clients[name]``,
    else connected by profile name: :func:`toolkit.connect` ``(profile=name)``), or a mapping
    of names to clients (the set is loaded with them, ``mode``).
    """
    if not isinstance(source, AccountSet):
        if clients is not None:
            raise ValueError(
                "the clients are given twice: pass a mapping of clients as the source, or an"
                " AccountSet with clients="
            )
        given = dict(source)
        if not given:
            raise ValueError("no account given: the mapping of clients is empty")
        return load_accounts(given, mode=mode, progress=progress), given
    if not len(source):
        raise ValueError("the set holds no account (see its .failures)")
    if source.mode != mode:
        raise ValueError(
            f"this needs the accounts loaded with mode={mode!r} (the set is"
            f" mode={source.mode!r}): toolkit.load_accounts(..., mode={mode!r})"
        )
    clients = dict(clients or {})
    unknown = [n for n in clients if n not in source.members]
    if unknown:
        raise ValueError(
            f"clients= names {', '.join(map(repr, unknown))}, not an account of the set;"
            f" the accounts are {', '.join(source.names)}"
        )
    return source, profile_clients(source.names, clients)


def _counted(names: pd.Series, unknown: Sequence[str]) -> str:
    counts = names.value_counts()
    return ", ".join(
        f"{name!r} ({counts[name]} row{'s' if counts[name] != 1 else ''})" for name in unknown
    )


def _split(frame: pd.DataFrame, names: Sequence[str], what: str) -> dict[str, pd.DataFrame]:
    column = frame[ACCOUNT]
    blank = int(column.isna().sum())
    if blank:
        raise ValidationError(
            f"{what}: {blank} row(s) with no account in the account column; name each row's"
            f" account (one of {', '.join(names)})"
        )
    given = column.astype(str).str.strip()
    unknown = [n for n in dict.fromkeys(given) if n not in names]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise ValidationError(
            f"{what}: the account column names {_counted(given, unknown)}, not an account{plural}"
            f" of the set; the accounts are {', '.join(names)}"
        )
    rest = frame.drop(columns=ACCOUNT)
    return {
        n: rest[(given == n).to_numpy()].reset_index(drop=True) for n in names if (given == n).any()
    }


def by_account(value: Any, names: Sequence[str], what: str = "statistics") -> dict[str, Any]:
    """``value`` split per account of ``names``: a mapping of account names (to anything:
    a path, a frame) taken as it is, or a frame with an ``account`` column split into one
    frame per account named (the column dropped); ``{}`` for None. A name that is no account
    of the set, a row with no account, or a value that names no account at all (a path, a
    frame without the column: which account would it be?) is a
    :class:`~toolkit.errors.ValidationError` saying how to give it."""
    if value is None:
        return {}
    if isinstance(value, pd.DataFrame) and ACCOUNT in value.columns:
        return _split(value, names, what)
    if isinstance(value, Mapping):
        unknown = [str(n) for n in value if n not in names]
        if unknown:
            raise ValidationError(
                f"{what}: {', '.join(map(repr, unknown))} is not an account of the set; the"
                f" accounts are {', '.join(names)}"
            )
        return {n: value[n] for n in names if n in value and value[n] is not None}
    raise ValidationError(
        f"{what} over several accounts must say whose they are: give a frame with an"
        f" {ACCOUNT!r} column (the profile names) or a mapping account -> {what}"
        f" (this {type(value).__name__} names no account)"
    )


__all__ = ["by_account", "is_set", "set_and_clients"]
