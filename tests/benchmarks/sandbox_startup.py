"""Start-up of a sandbox with many campaigns, and the cost of its first requests.

Run: ``python tests/benchmarks/sandbox_startup.py [--campaigns 5000] [--repeat 3]``.
Not part of the test suite. The baseline measured in the same run is a sandbox of 50
campaigns (the default demo account), so the report reads as a ratio as well as seconds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import requests

from toolkit.sandbox import Sandbox
from toolkit.sandbox.refs import load_refs


def start_once(campaigns: int) -> tuple[float, dict[str, int], float]:
    started = time.perf_counter()
    sb = Sandbox(campaigns=campaigns).start()
    took = time.perf_counter() - started
    try:
        assert sb.store is not None
        with sb.store.lock:
            counts = {
                table: sb.store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in (
                    "campaigns",
                    "targets",
                    "countries",
                    "lists",
                    "bid_rules",
                    "cpa_rules",
                    "creatives",
                )
            }
        t = time.perf_counter()
        r = requests.get(
            f"{sb.url}/api/campaign/list", params={"api-key": sb.api_keys[0]}, timeout=60
        )
        r.raise_for_status()
        list_s = time.perf_counter() - t
    finally:
        sb.stop()
    return took, counts, list_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--campaigns", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    t = time.perf_counter()
    load_refs()
    print(f"reference data loaded in {time.perf_counter() - t:.2f} s (once per process)")
    base = [start_once(50)[0] for _ in range(args.repeat)]
    runs = [start_once(args.campaigns) for _ in range(args.repeat)]
    big = [r[0] for r in runs]
    print(f"baseline  50 campaigns: median start {statistics.median(base):.2f} s")
    print(
        f"{args.campaigns:>5} campaigns: median start {statistics.median(big):.2f} s "
        f"(max {max(big):.2f} s; {statistics.median(big) / statistics.median(base):.1f}x the "
        f"baseline; target < 30 s)"
    )
    print(f"rows: {runs[-1][1]}")
    print(f"list of all campaigns: {runs[-1][2] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
