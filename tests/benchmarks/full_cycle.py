"""The full cycle on a big account: load and export it, read the workbook back, plan it.

Run: ``python tests/benchmarks/full_cycle.py [--campaigns 5000] [--latency-ms 10]
[--full-plan]``. Not part of the test suite.

A sandbox of ``--campaigns`` campaigns runs in a child process (see
``tests/benchmarks/plan_scope.py``) and answers every request after ``--latency-ms``. Timed,
one after another in one run:

1. ``load_account`` of the whole account (what ``campaign-toolkit export`` loads);
2. ``export_workbook`` of the loaded account;
3. ``read_workbook`` of the file, unedited;
4. ``make_plan`` of it: no edit, so nothing to read and nothing to do.

Target: the four under 60 s on 2 cores. Printed: each stage's time and share of the total,
and the requests the plan sent. ``--full-plan`` also times the plan reading every campaign
(``narrow_reads=False``, as the planner did before), for the ratio.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from plan_scope import Service  # the same child-process sandbox

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import export_workbook, read_workbook


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--campaigns", type=int, default=5000)
    parser.add_argument("--latency-ms", type=float, default=10)
    parser.add_argument("--full-plan", action="store_true")
    args = parser.parse_args()
    with Service(args.campaigns, args.latency_ms) as service, tempfile.TemporaryDirectory() as d:
        client = toolkit.connect(api_key=service.key, base_url=service.url)
        book = Path(d) / "account.xlsx"
        times: dict[str, float] = {}

        service.reset_stats()
        t = time.perf_counter()
        account = toolkit.load_account(client, progress=False)
        times["load_account"] = time.perf_counter() - t
        loaded = service.answered()
        assert len(account.failures) == 0, account.failures

        t = time.perf_counter()
        export_workbook(account, book)
        times["export_workbook"] = time.perf_counter() - t

        t = time.perf_counter()
        tables = read_workbook(book)
        times["read_workbook"] = time.perf_counter() - t

        service.reset_stats()
        t = time.perf_counter()
        plan = make_plan(client, tables)
        times["make_plan"] = time.perf_counter() - t
        sent = service.answered()
        assert len(plan) == 0 and not plan.warnings and plan.conflicts.empty

        total = sum(times.values())
        print(
            f"full cycle on {args.campaigns:,} campaigns ({len(account.lists):,} list rows, "
            f"{book.stat().st_size / 1e6:.0f} MB workbook), {os.cpu_count()} cores:"
        )
        for stage, seconds in times.items():
            print(f"  {stage:<16} {seconds:7.2f} s  {seconds / total:4.0%}")
        print(f"  {'total':<16} {total:7.2f} s  (target < 60 s) {'OK' if total < 60 else 'MISSED'}")
        print(
            f"  load_account sent {loaded:,} requests; the plan of the unedited workbook "
            f"sent {sent} and read {len(plan.scope)} campaigns"
        )
        if args.full_plan:
            service.reset_stats()
            t = time.perf_counter()
            full = make_plan(client, tables, narrow_reads=False)
            full_s = time.perf_counter() - t
            assert len(full) == 0
            print(
                f"  make_plan reading every campaign (narrow_reads=False): {full_s:.2f} s, "
                f"{service.answered():,} requests; {full_s / times['make_plan']:.0f}x the plan "
                f"above; the cycle with it: {total - times['make_plan'] + full_s:.2f} s"
            )


if __name__ == "__main__":
    main()
