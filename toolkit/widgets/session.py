"""What the forms share: the client, the loaded account, the journal, and the reload after a run.

A :class:`Session` is made once from a client (the account is loaded) or from a loaded
:class:`~toolkit.frames.Account` (then ``client=`` is needed to plan and apply). After a run
or an undo, the campaigns it touched are read again and spliced into the account, so the next
plan starts from what is live; the forms listening to the session redraw.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from ..bulk.journal import Journal
from ..client import Client
from ..errors import ToolkitError
from ..frames import TABLES, Account, load_account
from ..frames.account import CAMPAIGN_COLUMN


class ProgressJournal(Journal):
    """A journal that also reports each answered call of a run to ``on_answer(seq, items)``
    (the forms' progress bar: ``items`` outcomes answered); everything else is
    :class:`~toolkit.bulk.journal.Journal`'s."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(path)
        self.on_answer: Callable[[int, int], None] | None = None

    def call_answered(self, run_id: str | None, seq: int, outcomes: Iterable[Any]) -> None:
        outcomes = list(outcomes)
        super().call_answered(run_id, seq, outcomes)
        if self.on_answer is not None:
            self.on_answer(seq, len(outcomes))


def progress_journal(journal: Journal | str | os.PathLike[str] | None) -> ProgressJournal:
    """The journal ``journal`` names (``None`` or ``"default"``: the user's default one)."""
    if isinstance(journal, ProgressJournal):
        return journal
    if isinstance(journal, Journal):
        return ProgressJournal(journal.path)
    return ProgressJournal(None if journal in (None, "default") else journal)


class Session:
    """The client, the account and the journal the forms of one notebook share."""

    def __init__(
        self,
        source: Client | Account,
        *,
        client: Client | None = None,
        journal: Journal | str | os.PathLike[str] | None = None,
        progress: bool = False,
    ) -> None:
        if isinstance(source, Account):
            self.account = source
            self._client = client
        else:
            self._client = source
            self.account = load_account(source, progress=progress)
        self.journal = progress_journal(journal)
        self.listeners: list[Callable[[], None]] = []
        self.runs: list[str] = []

    @classmethod
    def of(cls, source: Any, **options: Any) -> Session:
        """``source`` if it is a session already, else a new one over it."""
        if isinstance(source, Session):
            return source
        return cls(source, **options)

    @property
    def client(self) -> Client:
        if self._client is None:
            raise ToolkitError(
                "this form was opened on an Account without a client: pass client= to plan and "
                "apply"
            )
        return self._client

    def campaign_formats(self) -> pd.Series:
        """``ad_format`` (as text) by campaign id."""
        c = self.account.campaigns
        return pd.Series(c["ad_format"].astype(str).to_numpy(), index=c["id"].astype("int64"))

    def reload(self, campaign_ids: Sequence[int]) -> list[str]:
        """Read the campaigns ``campaign_ids`` again and splice them into the account; the
        listeners redraw. Returns the failures (one line each) of campaigns not read."""
        ids = sorted({int(c) for c in campaign_ids})
        if not ids:
            return []
        fresh = load_account(self.client, ids, progress=False)
        failed = fresh.failures
        bad = {int(c) for c in failed["campaign_id"].dropna()}
        self.account = splice(self.account, fresh, [i for i in ids if i not in bad])
        self.notify()
        return [f"{r.operation}: {r.message}" for r in failed.itertuples(index=False)]

    def notify(self) -> None:
        for listener in list(self.listeners):
            listener()


def splice(account: Account, fresh: Account, ids: Sequence[int]) -> Account:
    """``account`` with the rows of the campaigns ``ids`` taken from ``fresh``."""
    if not ids:
        return account
    tables: dict[str, pd.DataFrame] = {}
    for name in TABLES:
        column = CAMPAIGN_COLUMN[name]
        old = account.table(name)
        kept = old[~old[column].isin(ids)]
        new = fresh.table(name)
        new = new[new[column].isin(ids)]
        parts = [df for df in (kept, new) if len(df)]
        joined = pd.concat(parts, ignore_index=True) if parts else old.iloc[:0]
        if name == "campaigns":
            joined = joined.sort_values("id", kind="stable").reset_index(drop=True)
        tables[name] = joined.astype(old.dtypes.to_dict())
    return dataclasses.replace(account, **tables)


__all__ = ["ProgressJournal", "Session", "progress_journal", "splice"]
