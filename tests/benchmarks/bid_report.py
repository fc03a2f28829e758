"""How many price calls a bid report makes, and how long they take against the latency bound.

Run: ``python tests/benchmarks/bid_report.py [--campaigns 1000] [--latency-ms 20]
[--workers 8]``. Not part of the test suite.

A sandbox of ``--campaigns`` campaigns (in this process) answers every request after
``--latency-ms``. The account is loaded once (``mode=full``, timed apart), then
``bid_report`` is made from it and timed: the price calls it made (distinct queries, counted
by the sandbox too) against the naive count (one per campaign x country), and its time
against the latency bound, ``calls x latency / workers``.
"""

from __future__ import annotations

import argparse
import time

import toolkit
from toolkit.sandbox import Sandbox

PRICE = "GET /api/campaign/price 200"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=20)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    t = time.perf_counter()
    with Sandbox(campaigns=args.campaigns, latency_ms=args.latency_ms, accounts=1) as sb:
        print(f"sandbox of {args.campaigns} campaigns up in {time.perf_counter() - t:.1f} s")
        client = toolkit.Client(sb.url, sb.api_keys[0])
        t = time.perf_counter()
        account = toolkit.load_account(client, progress=False)
        print(f"load_account (mode=full): {time.perf_counter() - t:.2f} s")
        before = sb.stats().get(PRICE, 0)
        t = time.perf_counter()
        report = toolkit.bid_report(
            account, client=client, workers=args.workers, progress=False, history=None
        )
        took = time.perf_counter() - t
        asked = sb.stats().get(PRICE, 0) - before
        naive = report.naive_calls
        bound = report.calls * args.latency_ms / 1000 / args.workers
        naive_bound = naive * args.latency_ms / 1000 / args.workers
        errors = int(report.frame["error"].notna().sum())
        print(f"rows (campaign x country):        {naive:,}")
        print(f"price calls made:                 {report.calls:,} (the sandbox counted {asked:,})")
        print(f"naive calls (one per row):        {naive:,}")
        print(
            f"calls saved by asking each query once: {naive - report.calls:,}"
            f" ({(1 - report.calls / naive) * 100 if naive else 0:.1f}%)"
        )
        print(f"bid_report time:                  {took:.2f} s")
        print(
            f"latency bound (calls x {args.latency_ms:g} ms / {args.workers} workers): "
            f"{bound:.2f} s  -> ratio {took / bound if bound else float('nan'):.2f}x"
        )
        print(f"naive latency bound:              {naive_bound:.2f} s")
        print(f"rows with an error:               {errors}")


if __name__ == "__main__":
    main()
