"""``Account``: every table of an account, joined by ``campaign_id``, saved and loaded offline.

>>> import toolkit
>>> account = toolkit.load_account(toolkit.connect())                 # doctest: +SKIP
>>> account                                                           # doctest: +SKIP
Account: 50 campaigns from http://127.0.0.1:54321, loaded 2026-05-10 09:30:00 UTC (mode full)
  campaigns        50  push 13, pops 13, video 12, inpage 12
  countries       181  48 campaigns
  ...
>>> account.join("countries").groupby("ad_format", observed=True)["bid"].median()
... # doctest: +SKIP
>>> account.save("snapshot")                                          # doctest: +SKIP
>>> toolkit.Account.load("snapshot")                                  # doctest: +SKIP
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..client import redact
from ..errors import SnapshotError
from .dictionaries import empty_refs
from .schemas import REF_SCHEMAS, SCHEMA_VERSION, conform, empty

#: The tables of an account keyed by campaign, in the order they are shown.
TABLES: tuple[str, ...] = (
    "campaigns",
    "countries",
    "targets",
    "lists",
    "bid_rules",
    "cpa_rules",
    "creatives",
)
#: The column of each table that names a row's campaign: ``id`` for the campaigns themselves.
CAMPAIGN_COLUMN: dict[str, str] = {t: "id" if t == "campaigns" else "campaign_id" for t in TABLES}
#: Tables that only a ``mode=full`` load fills.
FULL_TABLES: tuple[str, ...] = ("countries", "targets", "lists")
MANIFEST = "manifest.json"
SNAPSHOT_FORMAT = "campaign-toolkit account snapshot"


def _now() -> pd.Timestamp:
    return pd.Timestamp.now(tz="UTC")


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Write a snapshot's manifest whole or not at all (a temporary file, then renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_manifest(
    path: str | os.PathLike[str], name: str, form: str, what: str
) -> tuple[Path, dict[str, Any]]:
    """The folder of a saved snapshot (given as the folder or its manifest ``name``) and its
    manifest, checked to be of format ``form``; :class:`SnapshotError` says what is wrong."""
    folder = Path(path)
    if folder.name == name:
        folder = folder.parent
    manifest_path = folder / name
    if not manifest_path.is_file():
        raise SnapshotError(f"{folder} is not {what}: no {name}")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("format") != form:
        raise SnapshotError(f"{manifest_path} is not {what} manifest")
    return folder, manifest


@dataclass(eq=False, repr=False)
class Account:
    """The tables of one account (or of some of its campaigns) at one moment.

    ``campaigns``, ``countries``, ``targets``, ``lists``, ``bid_rules``, ``cpa_rules`` and
    ``creatives`` are DataFrames keyed by ``campaign_id`` (``campaigns`` by ``id``), with the
    columns and dtypes of :data:`toolkit.frames.schemas.SCHEMAS`; ``refs`` maps each
    dictionary type to its frame; ``balance`` is a one-row frame; ``failures`` lists the
    campaigns (and account-wide calls) that could not be loaded, whose rows are absent from
    every table. ``mode`` is the detail mode of the load (``countries``, ``targets`` and
    ``lists`` are only loaded with ``full``); ``source`` is the service's base URL.

    >>> acc = Account.empty()
    >>> len(acc.campaigns), list(acc.failures.columns)
    (0, ['campaign_id', 'operation', 'error', 'message'])
    """

    campaigns: pd.DataFrame = field(default_factory=lambda: empty("campaigns"))
    countries: pd.DataFrame = field(default_factory=lambda: empty("countries"))
    targets: pd.DataFrame = field(default_factory=lambda: empty("targets"))
    lists: pd.DataFrame = field(default_factory=lambda: empty("lists"))
    bid_rules: pd.DataFrame = field(default_factory=lambda: empty("bid_rules"))
    cpa_rules: pd.DataFrame = field(default_factory=lambda: empty("cpa_rules"))
    creatives: pd.DataFrame = field(default_factory=lambda: empty("creatives"))
    refs: dict[str, pd.DataFrame] = field(default_factory=empty_refs)
    balance: pd.DataFrame = field(default_factory=lambda: empty("balance"))
    failures: pd.DataFrame = field(default_factory=lambda: empty("failures"))
    loaded_at: pd.Timestamp = field(default_factory=_now)
    mode: str = "full"
    source: str | None = None

    @classmethod
    def empty(cls, **kwargs: Any) -> Account:
        """An account with no rows in any table."""
        return cls(**kwargs)

    # ------------------------------------------------------------------ tables

    def tables(self) -> dict[str, pd.DataFrame]:
        """The campaign-keyed tables by name (``campaigns`` first)."""
        return {name: getattr(self, name) for name in TABLES}

    def table(self, name: str) -> pd.DataFrame:
        """One campaign-keyed table by name."""
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r}; tables: {', '.join(TABLES)}")
        return getattr(self, name)

    @property
    def loaded_tables(self) -> tuple[str, ...]:
        """Tables this load filled (``countries``, ``targets``, ``lists`` need mode full)."""
        return tuple(t for t in TABLES if self.mode == "full" or t not in FULL_TABLES)

    def join(self, table: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """``table`` with the columns of its campaign merged in by ``campaign_id``.

        ``columns`` picks campaign columns (default: all). A campaign column whose name the
        table already has (``status``, ``url``, ``t_created`` ...) gets the suffix
        ``_campaign``. Rows keep the table's order; dtypes are kept.

        >>> Account.empty().join("countries", ["name", "ad_format"]).columns.tolist()[-2:]
        ['name', 'ad_format']
        """
        left = self.table(table)
        if table == "campaigns":
            return left.copy()
        picked = list(self.campaigns.columns) if columns is None else list(columns)
        unknown = [c for c in picked if c not in self.campaigns.columns]
        if unknown:
            raise KeyError(f"unknown campaign columns {unknown}")
        right = self.campaigns[["id", *[c for c in picked if c != "id"]]].rename(
            columns={"id": "campaign_id"}
        )
        return left.merge(
            right, on="campaign_id", how="left", suffixes=("", "_campaign"), validate="m:1"
        )

    # ------------------------------------------------------------------ summary

    def summary(self) -> list[tuple[str, str, str]]:
        """``(table, rows, note)`` for each table, as the repr shows them."""
        lines: list[tuple[str, str, str]] = []
        for name in TABLES:
            df = self.table(name)
            if name not in self.loaded_tables:
                lines.append((name, "-", f"not loaded (mode={self.mode})"))
                continue
            note = ""
            if name == "campaigns" and len(df):
                counts = df["ad_format"].value_counts(sort=False)
                note = ", ".join(f"{fmt} {n:,}" for fmt, n in counts.items() if n)
            elif name in ("targets", "lists") and len(df):
                col = "kind" if name == "targets" else "list"
                counts = df[col].value_counts()
                shown = [f"{k} {n:,}" for k, n in counts.items() if n]
                note = ", ".join(shown[:6]) + (", ..." if len(shown) > 6 else "")
            elif name != "campaigns" and len(df) and "campaign_id" in df:
                note = f"{df['campaign_id'].nunique():,} campaigns"
            lines.append((name, f"{len(df):,}", note))
        non_empty = sum(1 for df in self.refs.values() if len(df))
        lines.append(("refs", f"{non_empty}", ", ".join(k for k, v in self.refs.items() if len(v))))
        if len(self.balance):
            row = self.balance.iloc[0]
            amount = row["balance"]
            lines.append(("balance", f"{amount:,.2f}", str(row["currency"])))
        else:
            lines.append(("balance", "-", "not loaded"))
        note = ""
        if len(self.failures):
            by = self.failures.groupby(["operation", "error"], observed=True).size()
            note = ", ".join(f"{op} {err} {n}" for (op, err), n in by.items())
        lines.append(("failures", f"{len(self.failures):,}", note))
        return lines

    def _title(self) -> str:
        where = f" from {self.source}" if self.source else ""
        when = self.loaded_at.strftime("%Y-%m-%d %H:%M:%S %Z")
        return f"Account: {len(self.campaigns):,} campaigns{where}, loaded {when}"

    def __repr__(self) -> str:
        rows = self.summary()
        width = max(len(r[0]) for r in rows)
        count = max(len(r[1]) for r in rows)
        body = "\n".join(f"  {n:<{width}}  {c:>{count}}  {note}".rstrip() for n, c, note in rows)
        return f"{self._title()} (mode {self.mode})\n{body}"

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><td style='text-align:left'><code>{html.escape(n)}</code></td>"
            f"<td style='text-align:right'>{html.escape(c)}</td>"
            f"<td style='text-align:left'>{html.escape(note)}</td></tr>"
            for n, c, note in self.summary()
        )
        return (
            f"<div><strong>{html.escape(self._title())}</strong> (mode {html.escape(self.mode)})"
            "<table><thead><tr><th>table</th><th>rows</th><th></th></tr></thead>"
            f"<tbody>{cells}</tbody></table></div>"
        )

    # ------------------------------------------------------------------ files

    def _frames(self) -> dict[str, tuple[str, pd.DataFrame]]:
        """``{file stem: (schema name, frame)}`` of everything a snapshot holds."""
        out = {name: (name, self.table(name)) for name in TABLES}
        out["balance"] = ("balance", self.balance)
        out["failures"] = ("failures", self.failures)
        for kind, schema_name in REF_SCHEMAS.items():
            out[f"refs/{kind}"] = (schema_name, self.refs.get(kind, empty(schema_name)))
        return out

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write a snapshot folder: one Parquet file per table (refs under ``refs/``) and
        ``manifest.json`` (schema version, load time, mode, source, tables, failures).

        The api-key is never written. The manifest is written last, so an interrupted save
        leaves no readable snapshot. Returns the folder.

        >>> account.save("snapshots/2026-05-10")                          # doctest: +SKIP
        PosixPath('snapshots/2026-05-10')
        """
        folder = Path(path)
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        manifest_path = folder / MANIFEST
        if manifest_path.exists():
            manifest_path.unlink()
        files: dict[str, dict[str, Any]] = {}
        for stem, (schema_name, df) in self._frames().items():
            name = f"{stem}.parquet"
            conform(schema_name, df).to_parquet(folder / name, index=False)
            files[stem] = {"file": name, "schema": schema_name, "rows": len(df)}
        manifest = {
            "format": SNAPSHOT_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "loaded_at": self.loaded_at.isoformat(),
            "saved_at": _now().isoformat(),
            "mode": self.mode,
            "source": redact(self.source) if self.source else None,
            "campaigns": len(self.campaigns),
            "failures": self.failures.astype(object)
            .where(self.failures.notna(), None)
            .to_dict("records"),
            "files": files,
        }
        write_manifest(manifest_path, manifest)
        return folder

    def to_excel(
        self,
        path: str | os.PathLike[str],
        tables: Sequence[str] | None = None,
        *,
        joined: Sequence[str] | bool = (),
        join_columns: Sequence[str] | None = None,
    ) -> Path:
        """Write the tables to an ``.xlsx`` file for people: one sheet per table.

        ``tables`` picks the tables (default: those this load filled, ``campaigns`` first).
        ``joined`` adds, for each table named (``True``: every one picked but ``campaigns``),
        a sheet ``<table>_joined`` with :meth:`join`'s frame (``join_columns`` picks the
        campaign columns; default all). Timestamps are written in UTC without a zone (Excel
        holds none), text that starts like a formula stays text, a table past a million rows
        continues on ``<table> (2)`` (see :func:`toolkit.frames.export.write_excel`).

        This is a file to read, filter and chart; to edit the account in Excel and apply the
        edits, export the editable workbook instead (``toolkit.export_workbook``).

        >>> account.to_excel("account.xlsx", joined=["countries"])        # doctest: +SKIP
        PosixPath('account.xlsx')
        """
        from .export import write_excel

        names = list(self.loaded_tables if tables is None else tables)
        for name in names:
            self.table(name)  # KeyError naming the tables for an unknown one
        if joined is True:
            joined = [n for n in names if n != "campaigns"]
        elif isinstance(joined, str):
            joined = [joined]
        sheets = {name: self.table(name) for name in names}
        for name in joined or ():
            sheets[f"{name}_joined"] = self.join(name, join_columns)
        return write_excel(sheets, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Account:
        """Read a snapshot written by :meth:`save` (the folder or its ``manifest.json``).

        Every frame comes back with its declared dtypes and the values it was saved with.

        >>> toolkit.Account.load("snapshots/2026-05-10")                  # doctest: +SKIP
        """
        folder, manifest = read_manifest(path, MANIFEST, SNAPSHOT_FORMAT, "an account snapshot")
        version = manifest.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SnapshotError(
                f"{folder} has schema version {version}; this toolkit reads {SCHEMA_VERSION}"
            )
        frames: dict[str, pd.DataFrame] = {}
        for stem, entry in manifest["files"].items():
            df = pd.read_parquet(folder / entry["file"])
            frames[stem] = conform(entry["schema"], df)
        refs = {k: frames.pop(f"refs/{k}") for k in REF_SCHEMAS if f"refs/{k}" in frames}
        return cls(
            **{name: frames[name] for name in TABLES},
            refs={**empty_refs(), **refs},
            balance=frames["balance"],
            failures=frames["failures"],
            loaded_at=pd.Timestamp(manifest["loaded_at"]),
            mode=manifest.get("mode", "full"),
            source=manifest.get("source"),
        )


__all__ = ["CAMPAIGN_COLUMN", "FULL_TABLES", "TABLES", "Account", "SnapshotError"]
