"""The journal of applied runs (SQLite), ``toolkit.history()`` and ``toolkit.undo()``.

Each run records every call's outcome per campaign and item with the previous value, so that
:func:`undo` can build the inverse plan: drops for adds, adds (with their old bids) for drops,
the old settings and work status back. The api-key is never written.

The journal lives in ``$CAMPAIGN_TOOLKIT_JOURNAL``, or ``journal.db`` in the user's data
directory (``$XDG_DATA_HOME/campaign-toolkit``, by default ``~/.local/share/campaign-toolkit``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ToolkitError
from .plan import Call, Plan

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .apply import ApplyResult, Outcome

ENV_JOURNAL = "CAMPAIGN_TOOLKIT_JOURNAL"

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs(
    run_id TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    finished TEXT,
    base_url TEXT NOT NULL,
    calls INTEGER NOT NULL,
    summary TEXT,
    undoes TEXT
);
CREATE TABLE IF NOT EXISTS outcomes(
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    list_type TEXT,
    campaign_id INTEGER NOT NULL,
    item TEXT,
    bid REAL,
    outcome TEXT NOT NULL,
    message TEXT,
    previous TEXT
);
CREATE INDEX IF NOT EXISTS outcomes_run ON outcomes(run_id);
"""


def default_path() -> Path:
    env = os.environ.get(ENV_JOURNAL)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "campaign-toolkit" / "journal.db"


class Journal:
    """One SQLite journal file."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        try:
            if self.path.is_dir():
                raise ToolkitError(f"journal {self.path}: is a folder; give a file (journal.db)")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ToolkitError(f"journal {self.path}: cannot be opened ({exc})") from None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path)

    def start_run(self, client: Client, plan: Plan, undoes: str | None = None) -> str:
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        with self._connect() as db:
            db.execute(
                "INSERT INTO runs(run_id, started, base_url, calls, undoes) VALUES (?,?,?,?,?)",
                (run_id, _now(), client.base_url, len(plan), undoes),
            )
        return run_id

    def record(self, run_id: str | None, outcomes: Iterable[Outcome]) -> None:
        rows = [
            (
                run_id,
                o.seq,
                o.step,
                o.action,
                o.target,
                o.list_type,
                o.campaign_id,
                None if o.item is None else str(o.item),
                o.bid,
                o.outcome,
                o.message,
                None if o.previous is None else json.dumps(o.previous, default=str),
            )
            for o in outcomes
        ]
        with self._connect() as db:
            db.execute("DELETE FROM outcomes WHERE run_id=?", (run_id,))
            db.executemany("INSERT INTO outcomes VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)

    def finish_run(self, run_id: str | None, result: ApplyResult) -> None:
        with self._connect() as db:
            db.execute(
                "UPDATE runs SET finished=?, summary=? WHERE run_id=?",
                (_now(), result.summary(), run_id),
            )

    def runs(self) -> pd.DataFrame:
        with self._connect() as db:
            frame = pd.read_sql_query(
                "SELECT r.run_id, r.started, r.finished, r.base_url, r.calls, r.undoes,"
                " sum(o.outcome='applied') AS applied, sum(o.outcome='failed') AS failed"
                " FROM runs r LEFT JOIN outcomes o ON o.run_id = r.run_id"
                " GROUP BY r.run_id ORDER BY r.started",
                db,
            )
        return frame

    def outcomes(self, run_id: str) -> pd.DataFrame:
        with self._connect() as db:
            frame = pd.read_sql_query(
                "SELECT * FROM outcomes WHERE run_id=? ORDER BY rowid", db, params=(run_id,)
            )
        if frame.empty:
            known = self.runs()["run_id"].tolist()
            if run_id not in known:
                raise ToolkitError(f"no run {run_id!r} in the journal {self.path}")
        return frame


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def open_journal(journal: Journal | str | os.PathLike[str] | None) -> Journal:
    if isinstance(journal, Journal):
        return journal
    if journal in (None, "default"):
        return Journal()
    return Journal(journal)


def history(journal: Journal | str | None = None) -> pd.DataFrame:
    """Runs in the journal, oldest first: run id, times, calls, applied and failed counts."""
    return open_journal(journal).runs()


def inverse_plan(outcomes: pd.DataFrame) -> Plan:
    """The plan that undoes the applied outcomes of one run (latest first)."""
    calls: list[Call] = []
    applied = outcomes[outcomes["outcome"].isin(["applied"])]
    grouped: dict[tuple[Any, ...], dict[int, dict[str, Any]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for row in applied.itertuples(index=False):
        prev = json.loads(row.previous) if isinstance(row.previous, str) else None
        cid = int(row.campaign_id)
        if row.target == "campaign":
            if row.action == "update" and prev:
                params = {k: v for k, v in prev.items()}
                calls.append(
                    Call(
                        "update", "update", "campaign", (cid,), params={**params, "vertical": None}
                    )
                )
            elif row.action in ("start", "pause", "archive") and prev:
                move = {"Started": "start", "Paused": "pause", "Archived": "archive"}.get(prev)
                if move:
                    grouped[("move", move)][cid]["*"] = None
            continue
        if row.target == "creative":
            move = {"Started": "start", "Paused": "pause", "Archived": "archive"}.get(prev)
            if move:
                calls.append(Call(move, move, "creative", (cid,), items=(int(row.item),)))
            continue
        if row.target == "cpa_rule":
            if row.action == "drop" and prev:
                calls.append(
                    Call(
                        "rules",
                        "add",
                        "cpa_rule",
                        (cid,),
                        params={"rules": [{k: v for k, v in r.items() if k != "id"} for r in prev]},
                    )
                )
            elif row.action == "edit" and prev:
                calls.append(Call("rules", "edit", "cpa_rule", (cid,), params={"rules": prev}))
            continue
        inverse = "drop" if row.action == "add" else "add"
        item = row.item
        bid = None
        if inverse == "add" and row.target in ("country", "bid_rule"):
            bid = prev if prev is not None else None
            if bid is None:
                continue
        key = (inverse, row.target, row.list_type)
        grouped[key][cid][item] = bid
    for key, per_campaign in grouped.items():
        if key[0] == "move":
            calls.append(
                Call(
                    "start" if key[1] == "start" else key[1],
                    key[1],
                    "campaign",
                    tuple(sorted(per_campaign)),
                )
            )
            continue
        action, target, list_type = key
        for cid, items in per_campaign.items():
            if target == "country" and action == "add":
                calls.append(
                    Call(
                        "add",
                        "add",
                        "country",
                        (cid,),
                        items=tuple(items),
                        bids={k: float(v) for k, v in items.items()},
                    )
                )
            elif target == "bid_rule" and action == "add":
                for item, bid in items.items():
                    calls.append(
                        Call("add", "add", "bid_rule", (cid,), items=(item,), bid=float(bid))
                    )
            else:
                calls.append(
                    Call(
                        action,
                        action,
                        target,
                        (cid,),
                        items=tuple(items),
                        list_type=None if pd.isna(list_type) else list_type,
                    )
                )
    order = {"pause": 0, "archive": 1, "update": 2, "drop": 3, "add": 4, "rules": 5, "start": 6}
    return Plan(sorted(calls, key=lambda c: order[c.step]))


def undo(
    client: Client, run_id: str, *, journal: Journal | str | None = None, progress: bool = True
) -> ApplyResult:
    """Apply the inverse of run ``run_id``; the undo is journaled as a run of its own."""
    from .apply import apply_plan

    book = open_journal(journal)
    plan = inverse_plan(book.outcomes(run_id))
    for call in plan.calls:
        if call.target == "campaign" and call.action == "update":
            detail = client.campaigns.get(call.campaign_ids[0])
            params = dict(call.params or {})
            params["vertical"] = detail.get("vertical")
            object.__setattr__(call, "params", params)
    return apply_plan(plan, client, progress=progress, journal=book)
