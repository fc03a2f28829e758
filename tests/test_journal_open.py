"""A journal opened by several processes at once (two commands started together on a new
data folder): each opens it, and its columns are added once."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from toolkit.bulk.journal import RUN_COLUMNS, Journal
from toolkit.wal import to_wal


def test_a_new_journal_opened_at_once_by_several_opens_for_each(tmp_path: Path) -> None:
    failures: list[str] = []
    # the switch to write-ahead logging of a new file loses a race about once in 300 files
    # opened by 8 at once: 60 files give the race its chance, and the test below forces it
    for attempt in range(60):
        path = tmp_path / f"journal-{attempt}.db"
        start = threading.Barrier(8)

        def open_it(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                Journal(path)
            except Exception as exc:  # noqa: BLE001 - what the test reports
                failures.append(str(exc))

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        with sqlite3.connect(path) as db:
            columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        assert all(columns.count(name) == 1 for name in RUN_COLUMNS), columns
    assert failures == [], failures[:3]


class _Locked:
    """A connection whose switch to write-ahead logging is refused ``times`` times, as SQLite
    refuses it, without waiting, to one of two connections switching a new file at once."""

    def __init__(self, times: int, message: str = "database is locked") -> None:
        self.times = times
        self.message = message
        self.tries = 0

    def execute(self, sql: str) -> None:
        assert sql == "PRAGMA journal_mode=WAL"
        self.tries += 1
        if self.tries <= self.times:
            raise sqlite3.OperationalError(self.message)


def test_the_switch_to_write_ahead_is_tried_again_while_the_file_is_locked() -> None:
    db = _Locked(times=3)
    to_wal(db, wait=5.0)  # type: ignore[arg-type]
    assert db.tries == 4


def test_the_switch_gives_up_after_its_wait_and_on_any_other_error() -> None:
    locked = _Locked(times=10**6)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        to_wal(locked, wait=0.05)  # type: ignore[arg-type]
    assert 1 < locked.tries < 100
    broken = _Locked(times=10**6, message="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        to_wal(broken, wait=5.0)  # type: ignore[arg-type]
    assert broken.tries == 1
