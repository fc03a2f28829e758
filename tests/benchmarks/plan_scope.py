"""How long a small edit of a big exported workbook takes to plan, against a full reload.

Run: ``python tests/benchmarks/plan_scope.py [--campaigns 5000] [--latency-ms 10]
[--edited 3]``. Not part of the test suite.

A sandbox of ``--campaigns`` campaigns runs in a child process (as a remote service would:
its work does not compete with the client for this interpreter's GIL) and answers every
request after ``--latency-ms``. The account is loaded and exported (set-up, timed for
reference); then, in the same run:

1. the workbook is read back (:func:`toolkit.read_workbook`), the first country bid of
   ``--edited`` campaigns is raised in the desired tables (as an edit in Excel would, without
   rewriting a 100 MB file here), and the plan is made (:func:`toolkit.bulk.make_plan`): it
   compares the edited tables with the exported state and reads live state only for the
   campaigns the edit touches. Target: read + plan under 3 s.
2. the full reload: the same plan with ``narrow_reads=False``, which reads every campaign of
   the workbook (``load_account`` of all of them) as the planner did before.

Printed: each time, the requests the sandbox answered for each (its counters), the campaign
detail reads (one per touched campaign), and the ratios.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.sandbox import Sandbox


class Service:
    """A sandbox of ``campaigns`` campaigns in a child process, answering after
    ``latency_ms``; its request counters over HTTP."""

    def __init__(self, campaigns: int, latency_ms: float) -> None:
        t = time.perf_counter()
        ctx = mp.get_context("spawn")
        self.queue: Any = ctx.Queue()
        self.stop_event: Any = ctx.Event()
        self.proc = ctx.Process(
            target=_serve, args=(campaigns, latency_ms, self.queue, self.stop_event)
        )
        self.proc.start()
        self.url, self.key = self.queue.get(timeout=600)
        print(
            f"sandbox of {campaigns:,} campaigns in a child process ({latency_ms:g} ms a "
            f"request), up in {time.perf_counter() - t:.1f} s"
        )

    def reset_stats(self) -> None:
        requests.delete(f"{self.url}/_sandbox/stats", timeout=30).raise_for_status()

    def answered(self, prefix: str = "") -> int:
        """Requests to the interface answered since the last reset (``prefix``: only those
        whose ``"METHOD /path STATUS"`` starts with it)."""
        stats = requests.get(f"{self.url}/_sandbox/stats", timeout=30).json()["requests"]
        return sum(n for key, n in stats.items() if " /api/" in key and key.startswith(prefix))

    def stop(self) -> None:
        self.stop_event.set()
        self.proc.join(timeout=60)

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve(campaigns: int, latency_ms: float, queue: Any, stop_event: Any) -> None:
    sb = Sandbox(campaigns=campaigns, latency_ms=latency_ms, accounts=1).start()
    queue.put((sb.url, sb.api_keys[0]))
    stop_event.wait()
    sb.stop()


ITEM_READS = "GET /api/campaign/item"


def raise_bids(tables: Any, campaigns: int) -> list[int]:
    """Raise the first country bid of ``campaigns`` campaigns in the desired tables."""
    countries = tables.desired["countries"]
    rows = countries.groupby("campaign_id").head(1).index[:campaigns]
    countries.loc[rows, "bid"] = (countries.loc[rows, "bid"] + 0.01).round(4)
    return sorted(int(c) for c in countries.loc[rows, "campaign_id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--campaigns", type=int, default=5000)
    parser.add_argument("--latency-ms", type=float, default=10)
    parser.add_argument("--edited", type=int, default=3)
    args = parser.parse_args()
    with Service(args.campaigns, args.latency_ms) as service, tempfile.TemporaryDirectory() as d:
        client = toolkit.connect(api_key=service.key, base_url=service.url)
        book = Path(d) / "account.xlsx"
        t = time.perf_counter()
        account = toolkit.load_account(client, progress=False)
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        export_workbook(account, book)
        export_s = time.perf_counter() - t
        print(
            f"set-up: load_account {load_s:.2f} s, export {export_s:.2f} s "
            f"({book.stat().st_size / 1e6:.0f} MB; {len(account.lists):,} list rows)"
        )

        t = time.perf_counter()
        tables = read_workbook(book)
        read_s = time.perf_counter() - t
        edited = raise_bids(tables, args.edited)
        service.reset_stats()
        t = time.perf_counter()
        plan = make_plan(client, tables)
        plan_s = time.perf_counter() - t
        sent, details = service.answered(), service.answered(ITEM_READS)
        assert sorted(plan.scope) == edited, (plan.scope, edited)
        assert details == len(edited)

        service.reset_stats()
        t = time.perf_counter()
        full = make_plan(client, tables, narrow_reads=False)
        full_s = time.perf_counter() - t
        full_sent, full_details = service.answered(), service.answered(ITEM_READS)
        assert full.calls == plan.calls and full.warnings == plan.warnings
        assert full.conflicts.equals(plan.conflicts)

        total = read_s + plan_s
        print(
            f"{args.edited}-campaign edit of a {args.campaigns:,}-campaign workbook "
            f"({len(plan)} calls):"
        )
        print(f"  read_workbook: {read_s:.2f} s")
        print(
            f"  make_plan, live read for the touched campaigns: {plan_s:.2f} s, "
            f"{sent} requests ({details} campaign detail reads for {len(edited)} campaigns)"
        )
        print(f"  read + plan: {total:.2f} s (target < 3 s) {'OK' if total < 3 else 'MISSED'}")
        print(
            f"  full reload (make_plan reading all {len(full.scope):,} campaigns): {full_s:.2f} s,"
            f" {full_sent:,} requests ({full_details:,} detail reads); the same plan"
        )
        print(
            f"  ratios: plan {full_s / plan_s:.0f}x faster than the full reload; "
            f"read + plan {(read_s + full_s) / total:.1f}x faster than read + full reload; "
            f"{full_sent / max(sent, 1):.0f}x fewer requests"
        )


if __name__ == "__main__":
    main()
