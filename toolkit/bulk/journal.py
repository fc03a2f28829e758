"""The journal of applied runs (SQLite): it stores and reads runs (``toolkit.history()``
shows them, counted in changes, from :mod:`toolkit.bulk.run_counts`).

Each run records every call's outcome per campaign and item with the previous value, so that
:func:`toolkit.bulk.undo.undo` can build the inverse plan: drops for adds, adds (with their
old bids) for drops, the old settings and work status back. The api-key is never written.

The journal is written ahead: each call is committed (with one ``unknown`` outcome per
campaign and item, carrying the previous value needed to invert it) before it is sent, and its
outcomes replace those as soon as the answer arrives. A client killed mid-apply leaves a run
that :func:`history` shows as ``unfinished`` with how many calls were sent and answered, and
that undo inverts call by call: the ``unknown`` items too, whose inverse is harmless
when the call never landed (the service answers "already" or "not found", counted as done).

The journal lives in ``$CAMPAIGN_TOOLKIT_JOURNAL``, or ``journal.db`` in the user's data
folder (:func:`toolkit.datadir.data_dir`: ``$CAMPAIGN_TOOLKIT_DATA``, else
``$XDG_DATA_HOME/campaign-toolkit``, by default ``~/.local/share/campaign-toolkit``), beside the
built-in sandbox's state.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..datadir import data_dir
from ..errors import ToolkitError
from ..wal import to_wal
from .outcome_states import UNFINISHED, OutcomeState

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .calls import Call
    from .outcomes import ApplyResult, Outcome
    from .provenance import Provenance

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
CREATE INDEX IF NOT EXISTS runs_undoes ON runs(undoes);
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
CREATE TABLE IF NOT EXISTS provenance(
    run_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    campaign_id INTEGER NOT NULL,
    level TEXT NOT NULL,
    target TEXT NOT NULL,
    key TEXT NOT NULL,
    window INTEGER,
    evidence TEXT,
    value TEXT
);
CREATE INDEX IF NOT EXISTS provenance_rule ON provenance(rule, campaign_id);
"""

#: Columns added to ``runs`` since the first journals (added to an older journal on open):
#: the account a run was made on (the user id of the live state its plan was made against)
#: how many conflicts its plan left alone, the run a repair finishes, and what made the run
#: (a form's name, ``form:bids``; the plan's ``source``), so that a form finds its last run.
RUN_COLUMNS: dict[str, str] = {
    "account": "INTEGER",
    "conflicts": "INTEGER",
    "repairs": "TEXT",
    "source": "TEXT",
    "run_set": "TEXT",
    "profile": "TEXT",
}

# Outcomes whose call may have changed the account, and so are inverted by undo.
INVERTED: tuple[str, ...] = (OutcomeState.APPLIED, OutcomeState.ALREADY, OutcomeState.UNKNOWN)
PENDING = "sent; no answer recorded (the run was cut off)"


def default_path() -> Path:
    env = os.environ.get(ENV_JOURNAL)
    if env:
        return Path(env).expanduser()
    return data_dir() / "journal.db"


def service_of(client: Any) -> str:
    """What a run is bound to: the client's base URL, or for the built-in sandbox (a new port
    in each process) its state file and the seeding of its state,
    ``sandbox:/path/to/sandbox.db#1a2b3c4d`` (see ``Client.service``)."""
    return str(getattr(client, "service", None) or client.base_url)


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
                # the columns read and added under one write lock: two processes opening a
                # new journal at once would both add a column otherwise
                db.execute("BEGIN IMMEDIATE")
                have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
                for name, kind in RUN_COLUMNS.items():
                    if name not in have:
                        db.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")
        except (OSError, sqlite3.Error) as exc:
            raise ToolkitError(f"journal {self.path}: cannot be opened ({exc})") from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        # WAL without a sync per commit: a commit survives the death of the process (what the
        # write-ahead is for) and costs no disk flush per call.
        to_wal(db)
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

    def start_run(self, client: Client, calls: Iterable[Call], undoes: str | None = None) -> str:
        """A new run of ``calls`` (a plan), journaled whole before anything is sent, with the
        service and account it is made on (a :class:`~toolkit.bulk.plan.Plan` knows the
        account of the live state it was made against) and the conflicts it left alone."""
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        account = getattr(calls, "account", None)
        conflicts = getattr(calls, "conflicts", None)
        repairs = getattr(calls, "repairs", None)
        source = getattr(calls, "source", None)
        run_set = getattr(calls, "run_set", None)
        profile = getattr(calls, "profile", None)
        calls = list(calls)
        with self._write() as db:  # the whole plan, so that a cut-off run can be finished
            db.execute(
                "INSERT INTO runs(run_id, started, base_url, calls, undoes, account, conflicts,"
                " repairs, source, run_set, profile) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    _now(),
                    service_of(client),
                    len(calls),
                    undoes,
                    account,
                    0 if conflicts is None else len(conflicts),
                    repairs,
                    source,
                    run_set,
                    profile,
                ),
            )
            db.executemany(
                "INSERT INTO planned VALUES (?,?,?)",
                [
                    (run_id, seq, json.dumps(call.record(), default=str))
                    for seq, call in enumerate(calls)
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
                (run_id, seq, kind, json.dumps(call.record(), default=str), _now()),
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
        runs journaled before calls were), applied, failed, unknown (outcome counts), undoes
        (the run this one undoes), repairs (the run it finishes), account (the user id it
        was made on, when known),
        conflicts (items its plan left alone), unfinished (items failed, unknown or lost),
        source (what made it: a form's name, ``form:bids``; missing otherwise)."""
        with closing(self._connect()) as db:
            frame = pd.read_sql_query(
                "SELECT r.run_id, r.started, r.finished,"
                " CASE WHEN r.finished IS NULL THEN 'unfinished' ELSE 'finished' END AS state,"
                " r.base_url, r.calls, c.sent, c.answered,"
                " coalesce(o.applied, 0) AS applied, coalesce(o.failed, 0) AS failed,"
                " coalesce(o.unknown, 0) AS unknown, r.undoes, r.repairs, r.account, r.conflicts,"
                " coalesce(o.unfinished, 0) AS unfinished, r.source, r.run_set, r.profile"
                " FROM runs r"
                " LEFT JOIN (SELECT run_id, count(*) AS sent, count(answered) AS answered"
                "  FROM calls WHERE kind='plan' GROUP BY run_id) c ON c.run_id = r.run_id"
                " LEFT JOIN (SELECT run_id, sum(outcome=?) AS applied,"
                "  sum(outcome=?) AS failed, sum(outcome=?) AS unknown,"
                f"  sum(outcome IN ({', '.join('?' * len(UNFINISHED))})) AS unfinished"
                "  FROM outcomes GROUP BY run_id) o ON o.run_id = r.run_id"
                " ORDER BY r.started, r.rowid",
                db,
                params=(
                    OutcomeState.APPLIED,
                    OutcomeState.FAILED,
                    OutcomeState.UNKNOWN,
                    *UNFINISHED,
                ),
            )
        for name in ("sent", "answered", "account", "conflicts"):
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
            unknown = int(getattr(r, "items_unknown", r.unknown))  # history() counts changes
            line = (
                f"Run {r.run_id} did not finish: {sent} of {r.calls} call(s) sent, the outcomes"
                f" of {answered} known ({unknown} item(s) unknown)"
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

    def add_provenance(self, run_id: str | None, records: Iterable[Provenance]) -> None:
        """Journal why each change of run ``run_id`` was planned (the rule, the item and the
        data it was decided on: :class:`~toolkit.bulk.provenance.Provenance`), before any
        call is sent; nothing for a plan without any."""
        rows = [(run_id, *r.row()) for r in records]
        if rows:
            with self._write() as db:
                db.executemany("INSERT INTO provenance VALUES (?,?,?,?,?,?,?,?,?)", rows)

    def provenance(self, rules: Iterable[str] | None = None) -> pd.DataFrame:
        """The journaled provenance (of the rules named ``rules``, or all), oldest run first:
        run_id, the columns of :data:`~toolkit.bulk.provenance.COLUMNS`, and the run's
        started, base_url and account."""
        names = None if rules is None else sorted(set(rules))
        where = "" if names is None else f" WHERE p.rule IN ({','.join('?' * len(names))})"
        with closing(self._connect()) as db:
            frame = pd.read_sql_query(
                "SELECT p.*, r.started, r.base_url, r.account FROM provenance p"
                f" JOIN runs r ON r.run_id = p.run_id{where}"
                " ORDER BY r.started, r.rowid, p.rowid",
                db,
                params=names or (),
            )
        return frame.astype({"window": "Int64", "account": "Int64"})


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


def open_journal(journal: Journal | str | os.PathLike[str] | None) -> Journal:
    if isinstance(journal, Journal):
        return journal
    if journal in (None, "default"):
        return Journal()
    return Journal(journal)


__all__ = [
    "ENV_JOURNAL",
    "INVERTED",
    "PENDING",
    "Journal",
    "default_path",
    "open_journal",
    "service_of",
]
