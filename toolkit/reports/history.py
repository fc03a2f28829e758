"""The price history: every bid report appends the prices it asked to a local SQLite file.

The file is ``prices.db`` in the folder of the journal (``$CAMPAIGN_TOOLKIT_JOURNAL``'s
folder, or ``$XDG_DATA_HOME/campaign-toolkit``, by default ``~/.local/share/campaign-toolkit``),
or any path given. One row per price query answered: when it was asked (UTC), the format, the
country, the query's key (the format and its sorted parameters: the same targeting has the
same key in every report), the minimum and recommended prices as the service gave them (in the
format's price unit, also stored) and their estimated traffics. Failed queries are not
stored. :func:`price_history` reads it back as a frame, oldest first, to follow prices drift.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "prices.db")
>>> len(price_history(path))
0
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

import pandas as pd

from .. import spec
from ..bulk.journal import default_path
from ..errors import ToolkitError
from ..frames.schemas import AD_FORMAT, FLOAT, INT, STRING, TIME
from .queries import Answer, Query
from .units import price_unit

FILE_NAME = "prices.db"


def _geo() -> str:
    return spec.bid_kind().column


def _schema() -> str:
    return f"""
CREATE TABLE IF NOT EXISTS prices(
    asked_at TEXT NOT NULL,
    ad_format TEXT NOT NULL,
    {_geo()} TEXT,
    query TEXT NOT NULL,
    minimum REAL,
    recommended REAL,
    minimum_traffic INTEGER,
    recommended_traffic INTEGER,
    price_unit TEXT,
    source TEXT
);
CREATE INDEX IF NOT EXISTS prices_where ON prices({_geo()}, ad_format, asked_at);
"""


def history_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The history file: ``path``, or ``prices.db`` beside the default journal."""
    return Path(path).expanduser() if path is not None else default_path().parent / FILE_NAME


def _open(path: Path) -> sqlite3.Connection:
    try:
        if path.is_dir():
            raise ToolkitError(f"price history {path}: is a folder; give a file (prices.db)")
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path)
        db.executescript(_schema())
        return db
    except (OSError, sqlite3.Error) as exc:
        raise ToolkitError(f"price history {path}: cannot be opened ({exc})") from None


def append(
    path: str | os.PathLike[str] | None,
    queries: Iterable[Query],
    answers: Mapping[str, Answer],
    source: str | None = None,
) -> int:
    """Append the answered queries; the number of rows written."""
    rows = []
    for q in {q.key: q for q in queries}.values():
        a = answers.get(q.key)
        if a is None or a.error is not None or a.asked_at is None:
            continue
        countries = dict(q.params).get(spec.bid_kind().price_param or "", ())
        rows.append(
            (
                a.asked_at.isoformat(),
                q.ad_format,
                countries[0] if len(countries) == 1 else None,
                q.key,
                a.minimum,
                a.recommended,
                a.minimum_traffic,
                a.recommended_traffic,
                price_unit(q.ad_format),
                source,
            )
        )
    with closing(_open(history_path(path))) as db, db:
        db.executemany(f"INSERT INTO prices VALUES ({', '.join('?' * 10)})", rows)
    return len(rows)


def price_history(
    path: str | os.PathLike[str] | None = None,
    country: str | None = None,
    ad_format: str | None = None,
) -> pd.DataFrame:
    """The stored prices, oldest first: ``asked_at`` (UTC), ``ad_format``, ``country``,
    ``query``, ``minimum``, ``recommended`` (USD per the format's price unit),
    ``minimum_traffic``, ``recommended_traffic`` (impressions a day), ``price_unit``,
    ``source``; only one country or format when given."""
    where, args = [], []
    if country is not None:
        where.append(f"{_geo()} = ?")
        args.append(str(country).strip().upper())
    if ad_format is not None:
        where.append("ad_format = ?")
        args.append(str(ad_format).strip().lower())
    sql = "SELECT * FROM prices" + (" WHERE " + " AND ".join(where) if where else "")
    with closing(_open(history_path(path))) as db:
        cursor = db.execute(sql + " ORDER BY asked_at, rowid", args)
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    return _frame(names, rows)


def _frame(names: list[str], rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    df = pd.DataFrame.from_records(rows, columns=names)
    dtypes = {
        "ad_format": AD_FORMAT,
        _geo(): STRING,
        "query": STRING,
        "minimum": FLOAT,
        "recommended": FLOAT,
        "minimum_traffic": INT,
        "recommended_traffic": INT,
        "price_unit": STRING,
        "source": STRING,
    }
    out = df.astype({k: v for k, v in dtypes.items() if k in df.columns})
    out["asked_at"] = pd.to_datetime(df["asked_at"], utc=True, format="ISO8601").astype(TIME)
    return out.reset_index(drop=True)


__all__ = ["FILE_NAME", "append", "history_path", "price_history"]
