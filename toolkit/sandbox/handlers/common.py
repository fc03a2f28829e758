"""What every handler shares: the request context, answer shapes and campaign lookup."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ... import spec
from ..errors import Business
from ..params import Params
from ..refs import Refs


@dataclass
class Config:
    """Behaviour switches of a sandbox instance."""

    auto_approve: bool = False
    max_batch_campaigns: int | None = None
    max_items: int | None = None


@dataclass
class Ctx:
    """One request: the open transaction, the caller's account and its parameters."""

    db: sqlite3.Connection
    refs: Refs
    user_id: int
    params: Params
    base_url: str
    config: Config
    files: dict[str, Any] = field(default_factory=dict)
    #: Where a call naming another account's campaign is written down: ``(caller, campaign)``.
    foreign: list[tuple[int, int]] | None = None

    def campaign(self, cid: int) -> sqlite3.Row | None:
        """The caller's campaign ``cid``; another account's campaign is reported as missing."""
        row = self.db.execute(
            "SELECT * FROM campaigns WHERE id=? AND user_id=?", (cid, self.user_id)
        ).fetchone()
        if row is None:
            self._note_foreign([cid])
        return row

    def _note_foreign(self, ids: list[int]) -> None:
        """Write down the ids among ``ids`` that are campaigns of another account: a client
        that sends one account's campaigns with another account's key shows up here."""
        if self.foreign is None or not ids:
            return
        rows = self._rows_among("SELECT id FROM campaigns WHERE user_id<>?", ids)
        self.foreign.extend((self.user_id, r[0]) for r in rows)

    def _rows_among(self, query: str, ids: list[int]) -> list[sqlite3.Row]:
        """``query`` (which takes the caller's user id) for the rows whose id is in ``ids``,
        asked 500 ids at a time (SQLite's limit of parameters)."""
        rows: list[sqlite3.Row] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"{query} AND id IN ({marks})"
            rows.extend(self.db.execute(sql, (self.user_id, *chunk)).fetchall())
        return rows

    def campaign_or_fail(self, cid: int, message: str = spec.MSG_CAMPAIGN_NOT_FOUND) -> sqlite3.Row:
        row = self.campaign(cid)
        if row is None:
            raise Business(message.format(campaign_id=cid))
        return row

    def campaigns(self, ids: list[int]) -> dict[int, sqlite3.Row]:
        """The caller's campaigns among ``ids`` (missing ones left out)."""
        unique = list(dict.fromkeys(ids))
        rows = self._rows_among("SELECT * FROM campaigns WHERE user_id=?", unique)
        found: dict[int, sqlite3.Row] = {r["id"]: r for r in rows}
        self._note_foreign([i for i in unique if i not in found])
        return found

    def batch_ids(self) -> list[int]:
        ids = self.params.get_list("campaignId", int, required=True)
        limit = self.config.max_batch_campaigns
        if limit is not None and len(set(ids)) > limit:
            raise Business(f"Too many campaigns in one request: {len(set(ids))} (maximum {limit})")
        return list(dict.fromkeys(ids))

    def check_items_limit(self, count: int) -> None:
        limit = self.config.max_items
        if limit is not None and count > limit:
            raise Business(f"Too many items in one request: {count} (maximum {limit})")


Handler = Callable[[Ctx], dict[str, Any]]


def ok(**extra: Any) -> dict[str, Any]:
    return {"status": "ok", **extra}


def error_body(messages: list[str]) -> dict[str, Any]:
    return {"status": "error", "errorList": messages}


def batch_body(success: list[int], failed: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": "ok", "mode": "batch", "result": {"success": success, "failed": failed}}


def now() -> str:
    """The current time as the service writes it: ``YYYY-MM-DDTHH:MM:SS+hh:mm``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def run_batch(
    ctx: Ctx,
    ids: list[int],
    missing_message: str,
    apply: Callable[[sqlite3.Row], list[str] | dict[str, str]],
    rows: dict[int, sqlite3.Row] | None = None,
) -> dict[str, Any]:
    """Apply ``apply`` to each campaign; campaigns with messages are listed as failed."""
    rows = ctx.campaigns(ids) if rows is None else rows
    success: list[int] = []
    failed: list[dict[str, Any]] = []
    for cid in ids:
        row = rows.get(cid)
        if row is None:
            failed.append({"id": cid, "errorList": [missing_message.format(campaign_id=cid)]})
            continue
        errors = apply(row)
        if errors:
            failed.append({"id": cid, "errorList": errors})
        else:
            success.append(cid)
    return batch_body(success, failed)
