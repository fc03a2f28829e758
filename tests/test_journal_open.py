"""A journal opened by several processes at once (two commands started together on a new
data folder): each opens it, and its columns are added once."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from toolkit.bulk.journal import RUN_COLUMNS, Journal


def test_a_new_journal_opened_at_once_by_several_opens_for_each(tmp_path: Path) -> None:
    failures: list[str] = []
    for attempt in range(12):
        path = tmp_path / f"journal-{attempt}.db"
        start = threading.Barrier(6)

        def open_it(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                Journal(path)
            except Exception as exc:  # noqa: BLE001 - what the test reports
                failures.append(str(exc))

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        with sqlite3.connect(path) as db:
            columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        assert all(columns.count(name) == 1 for name in RUN_COLUMNS), columns
    assert failures == [], failures[:3]
