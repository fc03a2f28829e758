"""What the forms share over several accounts: one :class:`~toolkit.widgets.session.Session`
per account (its own client and key, its loaded Account), one journal, and the reload after a
run.

An :class:`AccountsSession` is made from an :class:`~toolkit.frames.AccountSet` (each member
connected by its profile name, or with ``clients=``), from profile names (``"all"``, a comma
list, a list: connected and loaded at once) or from a mapping of names to clients. Each
account's client is used for that account only: its plans, its prices, its reloads.

>>> accounts = AccountsSession("all")                                  # doctest: +SKIP
>>> accounts.names, accounts.campaigns.columns[0]                      # doctest: +SKIP
(['demo', 'northwind-media'], 'account')
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from ..bulk.journal import Journal
from ..bulk.plan import account_of
from ..client import Client
from ..client.client import profile_clients, profiles
from ..client.profiles import pick_profiles
from ..errors import ToolkitError
from ..frames import AccountSet
from ..frames.account_set import stacked
from ..frames.load_set import load_accounts
from ..frames.schemas import empty
from .session import Session, progress_journal


def load_set(
    accounts: Any, clients: Mapping[str, Client] | None, progress: bool
) -> tuple[AccountSet, dict[str, Client]]:
    """The set ``accounts`` names, loaded unless it is an AccountSet, and a client per
    loaded account."""
    if isinstance(accounts, AccountSet):
        return accounts, profile_clients(accounts.names, clients)
    if isinstance(accounts, Mapping):
        given = dict(accounts)
    else:
        given = profile_clients(pick_profiles(accounts, profiles()), clients)
    loaded = load_accounts(given, progress=progress)
    return loaded, {n: given[n] for n in loaded.names}


def check_owner(name: str, client: Client, account: Any) -> None:
    """Refuse a client whose key is of another account than the loaded one (named alike)."""
    loaded = account_of(account)
    if loaded is None:
        return
    connected = client.account.user_id()
    if connected is not None and connected != loaded:
        raise ToolkitError(
            f"account {name!r}: the client given is of user {connected}, the loaded account of"
            f" user {loaded}; pass clients={{{name!r}: <its own client>}}"
        )


class AccountsSession:
    """The sessions of several accounts (``sessions``: name -> Session, each with its own
    client), the journal they share, and the listeners told after a reload. ``failures``
    lists the accounts (and campaigns) that could not be loaded, as the set lists them."""

    def __init__(
        self,
        accounts: Any,
        *,
        clients: Mapping[str, Client] | None = None,
        journal: Journal | str | os.PathLike[str] | None = None,
        progress: bool = False,
    ) -> None:
        loaded, by_name = load_set(accounts, clients, progress)
        if not loaded.names:
            raise ToolkitError("no account of the set could be loaded; see its failures")
        self.journal = progress_journal(journal)
        self.failures = loaded.failures
        self.sessions: dict[str, Session] = {}
        for name in loaded.names:
            account = loaded.account(name)
            check_owner(name, by_name[name], account)
            self.sessions[name] = Session(account, client=by_name[name], journal=self.journal)
        self.listeners: list[Callable[[], None]] = []

    @classmethod
    def of(cls, source: Any, **options: Any) -> AccountsSession:
        """``source`` if it is an AccountsSession already, else a new one over it."""
        if isinstance(source, AccountsSession):
            return source
        return cls(source, **options)

    @property
    def names(self) -> list[str]:
        return list(self.sessions)

    def session(self, name: str) -> Session:
        """The session of one account."""
        if name not in self.sessions:
            raise KeyError(f"no account {name!r} in the forms; accounts: {self.names}")
        return self.sessions[name]

    @property
    def clients(self) -> dict[str, Client]:
        return {n: s.client for n, s in self.sessions.items()}

    @property
    def campaigns(self) -> pd.DataFrame:
        """Every account's campaigns, ``account`` first (as an AccountSet stacks them)."""
        frames = {n: s.account.campaigns for n, s in self.sessions.items()}
        return stacked(frames, empty("campaigns"))

    def reload(self, campaigns: Mapping[str, list[int]]) -> list[str]:
        """Read again each account's campaigns (``name -> ids``) with its own client; the
        listeners redraw once. Returns the failures, each line naming its account."""
        failed = []
        for name, ids in campaigns.items():
            failed += [f"{name}: {line}" for line in self.session(name).reload(ids)]
        self.notify()
        return failed

    def notify(self) -> None:
        for listener in list(self.listeners):
            listener()


def is_set_source(source: Any) -> bool:
    """Whether ``source`` names several accounts (a set, names, ``"all"``, name -> client)."""
    if isinstance(source, (AccountsSession, AccountSet, str, Mapping)):
        return True
    return isinstance(source, (list, tuple)) and all(isinstance(s, str) for s in source)


__all__ = ["AccountsSession", "check_owner", "is_set_source", "load_set"]
