"""``read_stats`` (the pandas reader: every value checked, totals rows found, levels split)
against ``pd.read_csv(dtype=str)`` of the same file (which reads the cells and checks
nothing), in the same run.

Run: ``python tests/benchmarks/read_stats.py [--days 28] [--seed 5] [--repeat 3] [--file F]``.
Not part of the test suite (no timed assertions there).

The file is the demo account's statistics (``Sandbox.stats_export``, as ``campaign-toolkit
demo`` and notebook 07 write them: about 4,200 rows a day), or ``--file``. Each reader runs
``--repeat`` times in turns; the best time of each and their ratio are printed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--file", type=Path, default=None)
    args = parser.parse_args()

    import pandas as pd

    import toolkit
    from toolkit.sandbox import Sandbox

    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            path = Path(tmp) / "stats.csv"
            with Sandbox() as sandbox:
                sandbox.stats_export(path, days=args.days, seed=args.seed)
        readers = {
            "read_stats": lambda: toolkit.read_stats(path),
            "pd.read_csv(dtype=str)": lambda: pd.read_csv(path, dtype=str, keep_default_na=False),
        }
        best = {name: float("inf") for name in readers}
        rows = 0
        for _ in range(args.repeat):
            for name, read in readers.items():
                started = time.perf_counter()
                got = read()
                best[name] = min(best[name], time.perf_counter() - started)
                rows = max(rows, len(got))
        size = path.stat().st_size / 1e6
        print(f"{path.name}: {size:.1f} MB, {rows:,} rows read; best of {args.repeat}")
        for name, seconds in best.items():
            print(f"  {name:<24} {seconds:6.2f} s")
        ratio = best["read_stats"] / best["pd.read_csv(dtype=str)"]
        print(f"  read_stats / read_csv   {ratio:6.2f}x")


if __name__ == "__main__":
    main()
