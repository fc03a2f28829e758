"""SQLite files in write-ahead mode: the journal and the built-in sandbox's state.

A new file is switched to write-ahead logging by the first connection that opens it. The
switch takes an exclusive lock, and when two connections switch the same new file at once
SQLite answers one of them "database is locked" at once, without calling its busy handler
(it would wait on a lock the other waits on). :func:`to_wal` tries that one again.
"""

from __future__ import annotations

import random
import sqlite3
import time

__all__ = ["to_wal"]


def to_wal(db: sqlite3.Connection, wait: float = 30.0) -> None:
    """Switch ``db`` to write-ahead logging, tried again for up to ``wait`` seconds while
    the file is locked; any other error is raised at once.

    >>> import sqlite3, tempfile, pathlib
    >>> db = sqlite3.connect(pathlib.Path(tempfile.mkdtemp()) / "x.db")
    >>> to_wal(db)
    >>> db.execute("PRAGMA journal_mode").fetchone()[0]
    'wal'
    """
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(pause + random.random() * pause)
        pause = min(pause * 2, 0.2)
