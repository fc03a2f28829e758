"""SQLite state of the sandbox: schema, connection and locking.

One connection is shared by all request threads and guarded by a lock, so each request's
reads and writes form one transaction that no other request interleaves with. Latency and
fault injection happen outside the lock, so concurrent clients still overlap their waits.

State lives in memory by default, or in a file (``db="state.db"``) that survives a restart.
Several processes may serve the same file at once: each transaction starts with
``BEGIN IMMEDIATE`` (one writer at a time, the others wait up to :data:`BUSY_TIMEOUT`
seconds), ids come from SQLite inside that transaction, and nothing of the state is kept in
memory between requests, so no process reads a stale copy of another's writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..wal import to_wal

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts(
    user_id INTEGER PRIMARY KEY,
    api_key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    currency TEXT NOT NULL DEFAULT 'USD',
    balance REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS campaigns(
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES accounts(user_id),
    t_created TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'New',
    status_note TEXT,
    work_status TEXT NOT NULL DEFAULT 'Paused',
    mode TEXT NOT NULL DEFAULT 'CPM',
    ad_format TEXT NOT NULL,
    frequency_capping INTEGER NOT NULL DEFAULT 0,
    note TEXT,
    vertical_id INTEGER NOT NULL,
    url TEXT,
    allow_proxy INTEGER NOT NULL DEFAULT 1,
    web_view TEXT NOT NULL DEFAULT 'no',
    vpaid TEXT NOT NULL DEFAULT 'no',
    placement TEXT NOT NULL DEFAULT 'all',
    limit_sum REAL,
    limit_show INTEGER,
    limit_click INTEGER,
    limit_day_sum REAL,
    limit_day_show INTEGER,
    limit_day_click INTEGER,
    limit_sum_value REAL NOT NULL DEFAULT 0,
    limit_show_value INTEGER NOT NULL DEFAULT 0,
    limit_click_value INTEGER NOT NULL DEFAULT 0,
    limit_day_sum_value REAL NOT NULL DEFAULT 0,
    limit_day_show_value INTEGER NOT NULL DEFAULT 0,
    limit_day_click_value INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS campaigns_user ON campaigns(user_id);
-- every target kind but country; list_type is '' except for cidr and domain
CREATE TABLE IF NOT EXISTS targets(
    campaign_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    list_type TEXT NOT NULL DEFAULT '',
    value TEXT NOT NULL,
    PRIMARY KEY(campaign_id, kind, list_type, value)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS countries(
    campaign_id INTEGER NOT NULL,
    code TEXT NOT NULL,
    bid REAL NOT NULL,
    PRIMARY KEY(campaign_id, code)
) WITHOUT ROWID;
-- list: source_black, source_white, subid_black, subid_white
CREATE TABLE IF NOT EXISTS lists(
    campaign_id INTEGER NOT NULL,
    list TEXT NOT NULL,
    item TEXT NOT NULL,
    PRIMARY KEY(campaign_id, list, item)
) WITHOUT ROWID;
-- one row per item of a bid rule; rows sharing (campaign_id, rule) form one rule
CREATE TABLE IF NOT EXISTS bid_rules(
    campaign_id INTEGER NOT NULL,
    item TEXT NOT NULL,
    rule INTEGER NOT NULL,
    bid REAL NOT NULL,
    PRIMARY KEY(campaign_id, item)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cpa_rules(
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL,
    type TEXT NOT NULL,
    cond TEXT NOT NULL,
    amount REAL NOT NULL,
    lead_type TEXT NOT NULL,
    lead_cond TEXT NOT NULL,
    lead_amount REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS cpa_rules_campaign ON cpa_rules(campaign_id);
CREATE TABLE IF NOT EXISTS creatives(
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL,
    t_created TEXT NOT NULL,
    name TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT,
    url TEXT,
    icon_url TEXT,
    image_url TEXT,
    status TEXT NOT NULL DEFAULT 'New',
    status_note TEXT,
    work_status TEXT NOT NULL DEFAULT 'Paused',
    ctr REAL NOT NULL DEFAULT 0,
    type TEXT,
    convert TEXT,
    duration INTEGER,
    video_url TEXT,
    youtube_url TEXT
);
CREATE INDEX IF NOT EXISTS creatives_campaign ON creatives(campaign_id);
CREATE TABLE IF NOT EXISTS creative_files(
    creative_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    t_event TEXT NOT NULL,
    type TEXT NOT NULL,
    mime TEXT NOT NULL,
    codec TEXT NOT NULL,
    codec_name TEXT NOT NULL,
    bit_rate INTEGER NOT NULL,
    duration INTEGER NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    url TEXT NOT NULL,
    PRIMARY KEY(creative_id, seq)
) WITHOUT ROWID;
-- uploaded files, served under /files/<id>
CREATE TABLE IF NOT EXISTS files(
    id TEXT PRIMARY KEY,
    mime TEXT NOT NULL,
    data BLOB NOT NULL
) WITHOUT ROWID;
"""

#: Seconds a transaction waits for another process's transaction on the same file.
BUSY_TIMEOUT = 60.0

TABLES: tuple[str, ...] = (
    "files",
    "creative_files",
    "creatives",
    "cpa_rules",
    "bid_rules",
    "lists",
    "countries",
    "targets",
    "campaigns",
    "accounts",
    "meta",
)


def _fold(value: object) -> str:
    return "" if value is None else str(value).casefold()


class Store:
    """The sandbox's SQLite database.

    >>> store = Store()
    >>> with store.transaction() as db:
    ...     db.execute("SELECT count(*) FROM campaigns").fetchone()[0]
    0
    """

    def __init__(self, db: str | Path | None = None) -> None:
        self.path = str(db) if db else ":memory:"
        self.lock = threading.RLock()
        self._depth = 0  # transactions open on this connection (nested ones join the outer)
        self.conn = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT
        )
        self.conn.row_factory = sqlite3.Row
        # case-insensitive substring filters beyond ASCII (SQLite's lower() is ASCII only)
        self.conn.create_function("fold", 1, _fold, deterministic=True)
        if self.path != ":memory:":
            to_wal(self.conn, wait=BUSY_TIMEOUT)
            self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Hold the lock and run one transaction: committed on success, rolled back on error.

        A transaction opened inside another (of the same thread) joins it: the outer one
        commits or rolls back the whole."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                self.conn.execute("ROLLBACK")
                raise
            self._depth = 0
            self.conn.execute("COMMIT")

    def is_empty(self) -> bool:
        with self.lock:
            return self.conn.execute("SELECT count(*) FROM accounts").fetchone()[0] == 0

    def clear(self) -> None:
        """Delete every row of every table."""
        with self.transaction() as db:
            for table in TABLES:
                db.execute(f"DELETE FROM {table}")

    def meta(self, key: str, default: str | None = None) -> str | None:
        with self.lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def api_keys(self) -> list[str]:
        """Keys of all accounts, ordered by user id (the demo account first)."""
        with self.lock:
            rows = self.conn.execute("SELECT api_key FROM accounts ORDER BY user_id").fetchall()
        return [r[0] for r in rows]

    def account_names(self) -> list[str]:
        """Names of all accounts, ordered by user id (the demo account first)."""
        with self.lock:
            rows = self.conn.execute("SELECT name FROM accounts ORDER BY user_id").fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        with self.lock:
            self.conn.close()
