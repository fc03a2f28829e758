"""The DuckDB connections of the statistics: how many threads and how much memory they take.

By default DuckDB uses one thread per core and up to 80 % of the machine's memory, spilling
to a temporary folder beyond it. On a shared machine, cap them for the process with
:func:`configure` or the environment (``CAMPAIGN_TOOLKIT_DUCKDB_THREADS=2``,
``CAMPAIGN_TOOLKIT_DUCKDB_MEMORY=2GB``); arguments win over the environment.

>>> configure(threads=2, memory_limit="2GB")
>>> settings()
{'threads': 2, 'memory_limit': '2GB'}
>>> configure()  # back to the environment, or DuckDB's defaults
"""

from __future__ import annotations

import os
from typing import Any

ENV_THREADS = "CAMPAIGN_TOOLKIT_DUCKDB_THREADS"
ENV_MEMORY = "CAMPAIGN_TOOLKIT_DUCKDB_MEMORY"
_SET: dict[str, Any] = {}


def configure(threads: int | None = None, memory_limit: str | None = None) -> None:
    """Cap every DuckDB connection the statistics open from now on: ``threads`` (a whole
    number >= 1) and ``memory_limit`` (DuckDB's size syntax: ``"2GB"``, ``"512MB"``);
    ``None`` leaves the environment's value, or DuckDB's default."""
    if threads is not None and (
        isinstance(threads, bool) or int(threads) != threads or threads < 1
    ):
        raise ValueError(f"threads must be a whole number >= 1, not {threads!r}")
    _SET.clear()
    if threads is not None:
        _SET["threads"] = int(threads)
    if memory_limit is not None:
        _SET["memory_limit"] = str(memory_limit)


def settings() -> dict[str, Any]:
    """The caps in force: ``threads`` and ``memory_limit`` (missing: DuckDB's default)."""
    out: dict[str, Any] = {}
    threads = _SET.get("threads", os.environ.get(ENV_THREADS) or None)
    if threads is not None:
        out["threads"] = int(threads)
    memory = _SET.get("memory_limit", os.environ.get(ENV_MEMORY) or None)
    if memory is not None:
        out["memory_limit"] = str(memory)
    return out


def connect() -> Any:
    """A DuckDB connection with the caps in force and UTC as its time zone."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    caps = settings()
    if "threads" in caps:
        con.execute(f"SET threads = {int(caps['threads'])}")
    if "memory_limit" in caps:
        con.execute("SET memory_limit = ?", [caps["memory_limit"]])
    return con


__all__ = ["ENV_MEMORY", "ENV_THREADS", "configure", "connect", "settings"]
