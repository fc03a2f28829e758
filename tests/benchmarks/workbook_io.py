"""How fast the workbook is written and read, against pandas' own ``to_excel``/``read_excel``.

Run: ``python tests/benchmarks/workbook_io.py [--rows 200000] [--campaigns 100]
[--repeat 3]``. Not part of the test suite.

An account of ``--campaigns`` campaigns whose ``lists`` table has ``--rows`` rows (source ids
and 16-digit subIds, both kinds of list) is exported with
:func:`toolkit.bulk.workbook.export_workbook` and read back with
:func:`~toolkit.bulk.workbook.read_workbook` (every check included). The same lists table
goes through ``DataFrame.to_excel`` and ``pandas.read_excel`` with pandas' default engines,
in the same run. The export writes the lists twice (the visible sheet and the hidden
exported state) plus styles, validation and the other sheets; the read reads both, checks
every cell and builds the declared dtypes. pandas writes and reads the one sheet.

Targets: export at least 2x faster than ``to_excel``, read at least 3x faster than
``read_excel``. Each timing is the best of ``--repeat`` runs. For reference, ``read_excel``
with ``engine="calamine"`` (the reader pandas says will become its default) is timed too.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit import spec
from toolkit.bulk.workbook import COLUMNS, export_workbook, read_workbook
from toolkit.frames import Account, frame
from toolkit.frames.schemas import SCHEMAS


def make_account(rows: int, campaigns: int, seed: int = 7) -> Account:
    """An account whose lists table has ``rows`` rows over ``campaigns`` campaigns."""
    rng = np.random.default_rng(seed)
    ids = np.arange(1_000_001, 1_000_001 + campaigns)
    formats = rng.choice(spec.FORMAT_CODES, campaigns)
    camp = frame(
        "campaigns",
        {
            "id": ids,
            "name": [f"campaign {i}" for i in ids],
            "ad_format": formats,
            "mode": rng.choice(spec.MODES, campaigns),
            "status": ["Approved"] * campaigns,
            "work_status": rng.choice(spec.WORK_STATUSES, campaigns),
            "frequency_capping": rng.integers(0, 5, campaigns),
            "note": [None if i % 3 else "=check" for i in range(campaigns)],
            "t_created": pd.Timestamp("2026-01-05 12:25:42", tz="UTC")
            + pd.to_timedelta(rng.integers(0, 10**7, campaigns), unit="s"),
            "limit_sum": np.round(rng.random(campaigns) * 1000, 2),
        },
    )
    lists = rng.choice(list(spec.LISTS), rows)
    source = np.char.mod("%d", rng.integers(10_000_000, 99_999_999, rows))
    subid = np.char.mod("%016x", rng.integers(0, 2**62, rows, dtype=np.int64))
    item = np.where(np.char.startswith(lists.astype(str), "source"), source, subid)
    table = frame(
        "lists",
        {"campaign_id": rng.choice(ids, rows), "list": lists, "item": item.astype(object)},
    ).drop_duplicates(["campaign_id", "list", "item"], ignore_index=True)
    return Account(campaigns=camp, lists=table)


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--campaigns", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    account = make_account(args.rows, args.campaigns)
    lists = account.lists
    print(f"lists: {len(lists):,} rows; campaigns: {len(account.campaigns)}")
    from pandas.io.excel._util import get_default_engine

    writer, reader = get_default_engine("xlsx", "writer"), get_default_engine("xlsx", "reader")
    print(f"pandas {pd.__version__}: to_excel engine {writer}, read_excel engine {reader}")

    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "account.xlsx"
        theirs = Path(tmp) / "pandas.xlsx"
        t_export, _ = best(lambda: export_workbook(account, ours), args.repeat)
        t_to_excel, _ = best(
            lambda: lists.to_excel(theirs, sheet_name="lists", index=False), args.repeat
        )
        t_read, tables = best(lambda: read_workbook(ours), args.repeat)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the notice about pandas' next default reader
            t_read_excel, _ = best(lambda: pd.read_excel(theirs, sheet_name="lists"), args.repeat)
            t_read_calamine = None
            if reader != "calamine":  # pandas' announced next default reader, for reference
                t_read_calamine, _ = best(
                    lambda: pd.read_excel(theirs, sheet_name="lists", engine="calamine"),
                    args.repeat,
                )
        size_ours, size_theirs = ours.stat().st_size, theirs.stat().st_size

    expected = lists[list(COLUMNS["lists"])]
    pd.testing.assert_frame_equal(tables.desired["lists"], expected)
    pd.testing.assert_frame_equal(tables.base["lists"], expected)
    assert dict(tables.desired["lists"].dtypes) == {c: SCHEMAS["lists"][c] for c in expected}

    print(f"export_workbook   {t_export:7.2f} s  ({size_ours / 1e6:.1f} MB, lists twice)")
    print(f"to_excel          {t_to_excel:7.2f} s  ({size_theirs / 1e6:.1f} MB)")
    print(f"read_workbook     {t_read:7.2f} s  (both sheets, checked, declared dtypes)")
    print(f"read_excel        {t_read_excel:7.2f} s")
    if t_read_calamine is not None:
        print(
            f"read_excel(engine='calamine') {t_read_calamine:.2f} s (one sheet, no checks; "
            f"for reference)"
        )
    export_ratio = t_to_excel / t_export
    read_ratio = t_read_excel / t_read
    print(f"export: {export_ratio:.1f}x faster than to_excel (target >= 2x)")
    print(f"read:   {read_ratio:.1f}x faster than read_excel (target >= 3x)")


if __name__ == "__main__":
    main()
