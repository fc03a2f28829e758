"""Tracker statistics: exports (CSV, XLSX, Parquet) read into one typed frame, and large
files aggregated out of core with DuckDB. See docs/stats.md.
"""

from __future__ import annotations

from .duck import aggregate
from .layouts import LAYOUTS, detect_layout
from .read import read_stats
from .schema import LEVELS, STATS, empty_stats, stats_frame

__all__ = [
    "LAYOUTS",
    "LEVELS",
    "STATS",
    "aggregate",
    "detect_layout",
    "empty_stats",
    "read_stats",
    "stats_frame",
]
