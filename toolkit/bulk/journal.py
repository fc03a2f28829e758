"""The journal of applied runs (SQLite), ``toolkit.history()`` and ``toolkit.undo()``.

Each run records every call's outcome per campaign and item with the previous value, so that
:func:`undo` can build the inverse plan: drops for adds, adds (with their old bids) for drops,
the old settings and work status back. The api-key is never written.

The journal is written ahead: each call is committed (with one ``unknown`` outcome per
campaign and item, carrying the previous value needed to invert it) before it is sent, and its
outcomes replace those as soon as the answer arrives. A client killed mid-apply leaves a run
that :func:`history` shows as ``unfinished`` with how many calls were sent and answered, and
that :func:`undo` inverts call by call: the ``unknown`` items too, whose inverse is harmless
when the call never landed (the service answers "already" or "not found", counted as done).

The journal lives in ``$CAMPAIGN_TOOLKIT_JOURNAL``, or ``journal.db`` in the user's data
directory (``$XDG_DATA_HOME/campaign-toolkit``, by default ``~/.local/share/campaign-toolkit``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ToolkitError
from .plan import Call, Plan

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .outcomes import ApplyResult, Outcome

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
CREATE TABLE IF NOT EXISTS planned(
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    call TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS calls(
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    call TEXT NOT NULL,
    sent TEXT NOT NULL,
    answered TEXT,
    PRIMARY KEY (run_id, seq)
);
"""

# Outcomes whose call may have changed the account, and so are inverted by undo.
INVERTED: tuple[str, ...] = ("applied", "already", "unknown")
PENDING = "sent; no answer recorded (the run was cut off)"


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
            with self._write() as db:
                db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ToolkitError(f"journal {self.path}: cannot be opened ({exc})") from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        # WAL without a sync per commit: a commit survives the death of the process (what the
        # write-ahead is for) and costs no disk flush per call.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One committed transaction on a connection of its own, closed after."""
        db = self._connect()
        try:
            with db:
                yield db
        finally:
            db.close()

    def start_run(self, client: Client, plan: Plan, undoes: str | None = None) -> str:
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        with self._write() as db:  # the whole plan, so that a cut-off run can be finished
            db.execute(
                "INSERT INTO runs(run_id, started, base_url, calls, undoes) VALUES (?,?,?,?,?)",
                (run_id, _now(), client.base_url, len(plan), undoes),
            )
            db.executemany(
                "INSERT INTO planned VALUES (?,?,?)",
                [
                    (run_id, seq, json.dumps(_call_record(call), default=str))
                    for seq, call in enumerate(plan.calls)
                ],
            )
        return run_id

    def planned(self, run_id: str) -> list[dict[str, Any]]:
        """The calls run ``run_id`` planned, in order, as journaled when it started (for runs
        journaled before plans were: the calls it sent)."""
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT call FROM planned WHERE run_id=? ORDER BY seq", (run_id,)
            ).fetchall()
            if not rows:
                rows = db.execute(
                    "SELECT call FROM calls WHERE run_id=? AND kind='plan' ORDER BY seq",
                    (run_id,),
                ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def record(self, run_id: str | None, outcomes: Iterable[Outcome]) -> None:
        """Replace every outcome of the run with ``outcomes`` (one transaction)."""
        with self._write() as db:
            db.execute("DELETE FROM outcomes WHERE run_id=?", (run_id,))
            db.executemany(INSERT_OUTCOME, _rows(run_id, outcomes))

    def call_sent(
        self,
        run_id: str | None,
        seq: int,
        call: Call,
        pending: Iterable[Outcome] = (),
        kind: str = "plan",
    ) -> None:
        """Write ahead, before the call is sent: the call and its ``pending`` outcomes
        (``unknown``, with the previous values that invert them), committed at once."""
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO calls(run_id, seq, kind, call, sent) VALUES (?,?,?,?,?)",
                (run_id, seq, kind, json.dumps(_call_record(call), default=str), _now()),
            )
            db.executemany(INSERT_OUTCOME, _rows(run_id, pending))

    def call_answered(self, run_id: str | None, seq: int, outcomes: Iterable[Outcome]) -> None:
        """The call's answer: its outcomes replace the pending ones, committed at once."""
        with self._write() as db:
            db.execute("DELETE FROM outcomes WHERE run_id=? AND seq=?", (run_id, seq))
            db.executemany(INSERT_OUTCOME, _rows(run_id, outcomes))
            db.execute(
                "UPDATE calls SET answered=? WHERE run_id=? AND seq=?", (_now(), run_id, seq)
            )

    def add_outcomes(self, run_id: str | None, outcomes: Iterable[Outcome]) -> None:
        """Append outcomes (compensations of failed bid changes), committed at once."""
        with self._write() as db:
            db.executemany(INSERT_OUTCOME, _rows(run_id, outcomes))

    def finish_run(
        self,
        run_id: str | None,
        result: ApplyResult,
        outcomes: Iterable[Outcome] | None = None,
    ) -> None:
        """Mark the run finished with its summary; with ``outcomes``, they replace the
        journaled ones in the same transaction (as settled by the read-back)."""
        with self._write() as db:
            if outcomes is not None:
                db.execute("DELETE FROM outcomes WHERE run_id=?", (run_id,))
                db.executemany(INSERT_OUTCOME, _rows(run_id, outcomes))
            db.execute(
                "UPDATE runs SET finished=?, summary=? WHERE run_id=?",
                (_now(), result.summary(), run_id),
            )

    def runs(self) -> pd.DataFrame:
        """One row per run, oldest first: run_id, started, finished, state (``finished`` or
        ``unfinished``: cut off, or still running), base_url, calls (planned), sent and
        answered (calls of the plan sent, and those whose answer is journaled; missing for
        runs journaled before calls were), applied, failed, unknown (outcome counts), undoes."""
        with closing(self._connect()) as db:
            frame = pd.read_sql_query(
                "SELECT r.run_id, r.started, r.finished,"
                " CASE WHEN r.finished IS NULL THEN 'unfinished' ELSE 'finished' END AS state,"
                " r.base_url, r.calls, c.sent, c.answered,"
                " coalesce(o.applied, 0) AS applied, coalesce(o.failed, 0) AS failed,"
                " coalesce(o.unknown, 0) AS unknown, r.undoes"
                " FROM runs r"
                " LEFT JOIN (SELECT run_id, count(*) AS sent, count(answered) AS answered"
                "  FROM calls WHERE kind='plan' GROUP BY run_id) c ON c.run_id = r.run_id"
                " LEFT JOIN (SELECT run_id, sum(outcome='applied') AS applied,"
                "  sum(outcome='failed') AS failed, sum(outcome='unknown') AS unknown"
                "  FROM outcomes GROUP BY run_id) o ON o.run_id = r.run_id"
                " ORDER BY r.started, r.rowid",
                db,
            )
        for name in ("sent", "answered"):
            frame[name] = frame[name].astype("Int64")
        return frame

    def unfinished_note(self, runs: pd.DataFrame | None = None, advice: bool = True) -> list[str]:
        """One line per unfinished run of ``runs`` (by default all): calls sent of those
        planned, and answers known; with ``advice``, the command that undoes it."""
        runs = self.runs() if runs is None else runs
        lines = []
        for r in runs[runs["state"] == "unfinished"].itertuples(index=False):
            sent = 0 if pd.isna(r.sent) else int(r.sent)
            answered = 0 if pd.isna(r.answered) else int(r.answered)
            line = (
                f"Run {r.run_id} did not finish: {sent} of {r.calls} call(s) sent, the outcomes"
                f" of {answered} known ({int(r.unknown)} item(s) unknown)"
            )
            if advice:
                line += (
                    f"; undo it with `campaign-toolkit undo {r.run_id}` (inverts every call sent)"
                )
            lines.append(line)
        return lines

    def outcomes(self, run_id: str) -> pd.DataFrame:
        with closing(self._connect()) as db:
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


INSERT_OUTCOME = "INSERT INTO outcomes VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"


def _rows(run_id: str | None, outcomes: Iterable[Outcome]) -> list[tuple[Any, ...]]:
    return [
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


def _call_record(call: Call) -> dict[str, Any]:
    """What a call will change, as JSON: its fields (``previous``'s keys as text)."""
    return {
        "step": call.step,
        "action": call.action,
        "target": call.target,
        "campaign_ids": list(call.campaign_ids),
        "items": list(call.items),
        "bids": None if call.bids is None else dict(call.bids),
        "bid": call.bid,
        "list_type": call.list_type,
        "params": None if call.params is None else dict(call.params),
        "previous": None
        if call.previous is None
        else {str(k): v for k, v in call.previous.items()},
    }


def open_journal(journal: Journal | str | os.PathLike[str] | None) -> Journal:
    if isinstance(journal, Journal):
        return journal
    if journal in (None, "default"):
        return Journal()
    return Journal(journal)


def history(journal: Journal | str | None = None) -> pd.DataFrame:
    """Runs in the journal, oldest first: run id, times, state (``finished`` or
    ``unfinished``), calls planned, sent and answered, applied, failed and unknown counts."""
    return open_journal(journal).runs()


def inverse_plan(outcomes: pd.DataFrame) -> Plan:
    """The plan that undoes one run: the inverse of each applied outcome, and of each
    ``unknown`` one (sent, fate not known: its inverse is harmless if it never landed)."""
    calls: list[Call] = []
    applied = outcomes[outcomes["outcome"].isin(INVERTED)]
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
                        # ids kept until undo has checked which rules are really gone
                        params={"rules": [dict(r) for r in prev]},
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


def _readd_only_gone_rules(client: Client, call: Call) -> bool:
    """For the re-add of dropped CPA rules: keep only the rules whose id is no longer live
    (a drop cut off before it landed must not be undone by a duplicate), without their ids.
    False when no rule is left to re-add."""
    if not (call.target == "cpa_rule" and call.action == "add"):
        return True
    live = {int(r["id"]) for r in client.cpa_rules.list(call.campaign_ids[0])}
    rules = [
        {k: v for k, v in r.items() if k != "id"}
        for r in (call.params or {}).get("rules", [])
        if r.get("id") is None or int(r["id"]) not in live
    ]
    object.__setattr__(call, "params", {**(call.params or {}), "rules": rules})
    return bool(rules)


def undo(
    client: Client, run_id: str, *, journal: Journal | str | None = None, progress: bool = True
) -> ApplyResult:
    """Apply the inverse of run ``run_id``; the undo is journaled as a run of its own."""
    from .apply import apply_plan

    book = open_journal(journal)
    plan = inverse_plan(book.outcomes(run_id))
    plan.calls[:] = [c for c in plan.calls if _readd_only_gone_rules(client, c)]
    for call in plan.calls:
        if call.target == "campaign" and call.action == "update":
            detail = client.campaigns.get(call.campaign_ids[0])
            params = dict(call.params or {})
            params["vertical"] = detail.get("vertical")
            object.__setattr__(call, "params", params)
    return apply_plan(plan, client, progress=progress, journal=book)
