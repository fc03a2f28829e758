"""``AccountSet``: several accounts as one set of tables, each row naming its ``account``.

>>> import toolkit
>>> accounts = toolkit.load_accounts("all")                          # doctest: +SKIP
>>> accounts.campaigns.groupby("account")["id"].count()              # doctest: +SKIP
>>> accounts.join("countries", ["name"])                             # doctest: +SKIP
>>> accounts.account("demo")          # one member, a plain Account  # doctest: +SKIP
>>> accounts.save("snapshots/agency"); toolkit.AccountSet.load("snapshots/agency")  # doctest: +SKIP
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .account import TABLES, Account, read_manifest, write_manifest
from .dictionaries import empty_refs
from .schemas import STRING, conform, empty

#: The column that names each row's account, first in every table of a set.
ACCOUNT = "account"
MANIFEST = "accounts.json"
SET_FORMAT = "campaign-toolkit account set"


def _now() -> pd.Timestamp:
    return pd.Timestamp.now(tz="UTC")


def stacked(frames: Mapping[str, pd.DataFrame], like: pd.DataFrame | None = None) -> pd.DataFrame:
    """The frames of several accounts one under the other (copied once), with ``account``
    first naming each row's; ``like`` gives the columns and dtypes when there is none (by
    default the first frame's; no column at all without a frame).

    >>> stacked({"a": pd.DataFrame({"id": [1, 2]}), "b": pd.DataFrame({"id": [3]})},
    ...         pd.DataFrame({"id": []}))["account"].tolist()
    ['a', 'a', 'b']
    """
    parts = list(frames.values())
    if like is None:
        like = parts[0].iloc[:0] if parts else pd.DataFrame()
    out = pd.concat(parts, ignore_index=True) if parts else like.iloc[:0].copy()
    for col in like.columns:  # a categorical of different categories would become object
        if out[col].dtype != like[col].dtype and isinstance(like[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(like[col].dtype)
    names = np.repeat(np.array(list(frames), dtype=object), [len(df) for df in parts])
    out.insert(0, ACCOUNT, pd.array(names, dtype=STRING))
    return out


@dataclass(eq=False, repr=False)
class AccountSet:
    """The accounts of a set, by name, and their tables stacked with an ``account`` column.

    ``members`` maps each loaded account's name (its profile) to its :class:`Account`;
    ``failures`` lists, with their ``account``, every campaign or call that could not be
    loaded and every account that could not be loaded at all (its ``campaign_id`` is
    ``<NA>``, its operation ``connect``, ``campaign.list`` or ``account``): such an account is
    absent from ``members`` and from every table, and the others are complete.

    ``campaigns``, ``countries``, ... and ``balance`` are the members' tables one under the
    other with ``account`` first; campaign ids are unique per account, so rows are keyed by
    ``(account, campaign_id)``. ``refs`` are the service's dictionaries (the same for every
    account of one service).

    >>> s = AccountSet({"a": Account.empty(), "b": Account.empty()})
    >>> s.names, s.campaigns.columns[0], len(s.failures)
    (['a', 'b'], 'account', 0)
    """

    members: dict[str, Account]
    failures: pd.DataFrame = field(default_factory=lambda: empty("account_failures"))
    loaded_at: pd.Timestamp = field(default_factory=_now)
    mode: str = "full"
    _cache: dict[str, pd.DataFrame] = field(default_factory=dict, init=False)

    # ------------------------------------------------------------------ members

    @property
    def names(self) -> list[str]:
        """The loaded accounts' names, in the order they were asked for."""
        return list(self.members)

    def account(self, name: str) -> Account:
        """One member, as an :class:`Account` (its tables without the ``account`` column)."""
        if name not in self.members:
            failed = set(self.failures.loc[self.failures["campaign_id"].isna(), ACCOUNT])
            why = " (it failed to load: see .failures)" if name in failed else ""
            raise KeyError(f"no account {name!r} in the set{why}; accounts: {self.names}")
        return self.members[name]

    def __len__(self) -> int:
        return len(self.members)

    # ------------------------------------------------------------------ tables

    def table(self, name: str) -> pd.DataFrame:
        """One table of every member, with ``account`` first (see :data:`TABLES`)."""
        if name not in TABLES and name != "balance":
            raise KeyError(f"unknown table {name!r}; tables: {', '.join(TABLES)}, balance")
        if name not in self._cache:
            self._cache[name] = stacked(
                {n: getattr(a, name) for n, a in self.members.items()}, empty(name)
            )
        return self._cache[name]

    def tables(self) -> dict[str, pd.DataFrame]:
        """The campaign-keyed tables by name (``campaigns`` first), each with ``account``."""
        return {name: self.table(name) for name in TABLES}

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name in TABLES or name == "balance":
            return self.table(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def refs(self) -> dict[str, pd.DataFrame]:
        """The service's dictionaries, from the first member that loaded them."""
        for member in self.members.values():
            if any(len(df) for df in member.refs.values()):
                return member.refs
        return empty_refs()

    def join(self, table: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """``table`` with its campaign's columns merged in by ``(account, campaign_id)``, as
        :meth:`Account.join` does for one account."""
        parts = {n: a.join(table, columns) for n, a in self.members.items()}
        like = Account.empty().join(table, columns)
        return stacked(parts, like)

    # ------------------------------------------------------------------ summary

    def summary(self) -> pd.DataFrame:
        """One row per account asked for: campaigns, rows of each table, failures, balance."""
        rows = []
        failed = self.failures.groupby(ACCOUNT, observed=True).size()
        for name, member in self.members.items():
            row: dict[str, Any] = {ACCOUNT: name}
            row.update({t: len(member.table(t)) for t in TABLES})
            row["failures"] = int(failed.get(name, 0))
            row["balance"] = (
                float(member.balance["balance"].iloc[0]) if len(member.balance) else None
            )
            rows.append(row)
        whole = self.failures[self.failures["campaign_id"].isna()]
        for name in dict.fromkeys(whole[ACCOUNT]):
            if name not in self.members:
                rows.append({ACCOUNT: name, "failures": int(failed.get(name, 0))})
        return pd.DataFrame(rows, columns=[ACCOUNT, *TABLES, "failures", "balance"])

    def _title(self) -> str:
        when = self.loaded_at.strftime("%Y-%m-%d %H:%M:%S %Z")
        failed = self.failures.loc[self.failures["campaign_id"].isna(), ACCOUNT].nunique()
        not_loaded = f", {failed} not loaded" if failed else ""
        return (
            f"AccountSet: {len(self.members)} accounts{not_loaded},"
            f" {len(self.table('campaigns')):,} campaigns, loaded {when}"
        )

    def __repr__(self) -> str:
        lines = [f"{self._title()} (mode {self.mode})"]
        for row in self.summary().itertuples(index=False):
            if row.account in self.members:
                note = f"  {row.failures} failures" if row.failures else ""
                lines.append(f"  {row.account}: {row.campaigns:,} campaigns{note}")
            else:
                why = self.failures[self.failures[ACCOUNT] == row.account].iloc[0]
                lines.append(f"  {row.account}: not loaded, {why['error']}: {why['message']}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        body = html.escape(repr(self)).replace("\n", "<br>")
        return f"<div style='font-family:monospace'>{body}</div>"

    # ------------------------------------------------------------------ files

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the set: each member's snapshot (:meth:`Account.save`) in ``<name>/`` and
        ``accounts.json`` (the names, the load, the failures) last. Returns the folder."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        manifest_path = folder / MANIFEST
        if manifest_path.exists():
            manifest_path.unlink()
        for name, member in self.members.items():
            member.save(folder / name)
        failures = conform("account_failures", self.failures)
        manifest = {
            "format": SET_FORMAT,
            "accounts": self.names,
            "loaded_at": self.loaded_at.isoformat(),
            "mode": self.mode,
            "failures": failures.astype(object).where(failures.notna(), None).to_dict("records"),
        }
        write_manifest(manifest_path, manifest)
        return folder

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> AccountSet:
        """Read a set written by :meth:`save`; every member with its declared dtypes."""
        folder, manifest = read_manifest(path, MANIFEST, SET_FORMAT, "a saved account set")
        members = {name: Account.load(folder / name) for name in manifest["accounts"]}
        records = manifest.get("failures") or []
        failures = pd.DataFrame.from_records(records, columns=list(empty("account_failures")))
        return cls(
            members,
            failures=conform("account_failures", failures),
            loaded_at=pd.Timestamp(manifest["loaded_at"]),
            mode=manifest.get("mode", "full"),
        )


__all__ = ["ACCOUNT", "AccountSet", "stacked"]
