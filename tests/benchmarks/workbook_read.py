"""How fast ``read_workbook`` reads a workbook, against the raw calamine parse of the same
sheets.

Run: ``python tests/benchmarks/workbook_read.py [--rows 200000] [--campaigns 5000]
[--repeat 3] [--cache DIR] [--profile]``. Not part of the test suite.

Two workbooks, exported once per run into a temporary directory (or kept in ``--cache``):

1. ``lists``: an account of 100 campaigns whose lists table has ``--rows`` rows (the account
   of ``tests/benchmarks/workbook_io.py``), exported with
   :func:`toolkit.bulk.workbook.export_workbook`;
2. ``account``: a :class:`~toolkit.sandbox.Sandbox` of ``--campaigns`` campaigns loaded with
   :func:`toolkit.load_account` and exported.

For each, :func:`~toolkit.bulk.workbook.read_workbook` (every check, the exported state, the
declared dtypes) is timed against the baseline: ``CalamineWorkbook.from_path`` and
``get_sheet_by_name(name).to_python()`` of every sheet ``read_workbook`` reads (the tables,
their ``_base_`` sheets, ``_refs`` and ``_meta``), one after the other, in the same run and on
the same file. Each timing is the best of ``--repeat`` runs. Target: read_workbook / raw at
most 1.5x on both. ``--profile`` prints the top of a cProfile of one ``read_workbook``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import python_calamine

import toolkit
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.bulk.workbook.layout import META_SHEET, REFS_SHEET
from toolkit.bulk.workbook.sheets import map_sheets
from toolkit.sandbox import Sandbox

sys.path.insert(0, str(Path(__file__).parent))
from workbook_io import make_account  # noqa: E402

TARGET = 1.5


def read_sheets(path: Path) -> list[str]:
    """The sheets ``read_workbook`` parses: ``_meta``, ``_refs``, tables and their bases."""
    wb = python_calamine.CalamineWorkbook.from_path(str(path))
    try:
        names = list(wb.sheet_names)
        meta = {}
        if META_SHEET in names:
            for row in wb.get_sheet_by_name(META_SHEET).to_python()[1:]:
                if len(row) >= 2 and row[0]:
                    meta[str(row[0])] = str(row[1])
    finally:
        wb.close()
    sheets = map_sheets(names, meta)
    parts = [s for p in sheets.tables.values() for s in p]
    bases = [s for p in sheets.bases.values() for s in p]
    return [n for n in (META_SHEET, REFS_SHEET) if n in names] + bases + parts


def raw_parse(path: Path, names: list[str]) -> int:
    """The baseline: every sheet of ``names`` parsed by calamine into Python rows."""
    wb = python_calamine.CalamineWorkbook.from_path(str(path))
    try:
        cells = 0
        for name in names:
            rows = wb.get_sheet_by_name(name).to_python()
            cells += sum(map(len, rows))
        return cells
    finally:
        wb.close()


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def lists_workbook(folder: Path, rows: int) -> Path:
    path = folder / f"lists-{rows}.xlsx"
    if not path.exists():
        t = time.perf_counter()
        export_workbook(make_account(rows, 100), path)
        print(f"exported {path.name} in {time.perf_counter() - t:.1f} s")
    return path


def account_workbook(folder: Path, campaigns: int) -> Path:
    path = folder / f"account-{campaigns}.xlsx"
    if not path.exists():
        t = time.perf_counter()
        with Sandbox(campaigns=campaigns, accounts=1) as sb:
            client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
            account = toolkit.load_account(client, progress=False)
            export_workbook(account, path)
        print(f"loaded and exported {path.name} in {time.perf_counter() - t:.1f} s")
    return path


def measure(label: str, path: Path, repeat: int, profile: bool) -> float:
    names = read_sheets(path)
    t_raw, cells = best(lambda: raw_parse(path, names), repeat)
    t_read, tables = best(lambda: read_workbook(path), repeat)
    rows = {t: len(df) for t, df in tables.desired.items()}
    ratio = t_read / t_raw
    print(f"{label}: {path.stat().st_size / 1e6:.1f} MB, {len(names)} sheets, {cells:,} cells")
    print(f"  rows read: {rows}")
    print(f"  raw calamine parse  {t_raw:7.3f} s")
    print(f"  read_workbook       {t_read:7.3f} s")
    print(
        f"  read_workbook / raw: {ratio:.2f}x (target <= {TARGET}x) "
        f"{'OK' if ratio <= TARGET else 'MISSED'}"
    )
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        read_workbook(path)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--campaigns", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=None, help="keep the workbooks here")
    parser.add_argument("--only", choices=("lists", "account"), default=None)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.cache or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.only in (None, "lists"):
            path = lists_workbook(folder, args.rows)
            measure(f"lists workbook ({args.rows:,} rows)", path, args.repeat, args.profile)
        if args.only in (None, "account"):
            path = account_workbook(folder, args.campaigns)
            label = f"account workbook ({args.campaigns:,} campaigns)"
            measure(label, path, args.repeat, args.profile)


if __name__ == "__main__":
    main()
