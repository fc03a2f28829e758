"""``load_account`` under a rate limit: the adaptive gate against today's fixed pool.

Run: ``python tests/benchmarks/rate_limit.py [--campaigns 1000] [--rate 200] [--workers 8]
[--latency-ms 0] [--rounds 1]``. Not part of the test suite.

A sandbox of ``--campaigns`` campaigns runs in a child process (as a remote service would, its
work does not compete with the client for this interpreter's GIL) and answers HTTP 429, with
``Retry-After`` the time until a slot frees, past ``--rate`` ``/api/`` requests per second
(a sliding one-second window). ``load_account`` (``mode=full``, ``--workers`` threads) runs
with the client's adaptive pacing (``adaptive=True``, the default) and with it switched off
(``adaptive=False``: each thread waits out its own 429s with backoff, as a fixed pool did),
in the same run, on a fresh window each. For each: the wall time against the ideal
``requests / rate`` (the requests the sandbox accepted, i.e. the load's own), the number of
429s the sandbox answered, and the campaigns that failed. Target: the adaptive load within
1.2x of the ideal.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import requests

import toolkit

sys.path.insert(0, str(Path(__file__).parent))
from load_account import Service  # noqa: E402 - the child-process sandbox of that benchmark


def statuses(url: str) -> dict[int, int]:
    """HTTP status -> ``/api/`` requests the sandbox answered with it."""
    stats = requests.get(f"{url}/_sandbox/stats", timeout=10).json()["requests"]
    out: dict[int, int] = {}
    for key, n in stats.items():
        if " /api/" in key:
            status = int(key.rsplit(" ", 1)[1])
            out[status] = out.get(status, 0) + n
    return out


def one_load(service: Service, rate: int, workers: int, adaptive: bool) -> dict[str, float]:
    url = service.url
    faults = f"{url}/_sandbox/faults"
    requests.post(faults, json={"rate_limit": None}, timeout=10).raise_for_status()
    client = toolkit.connect(
        api_key=service.key, base_url=url, pool_size=workers, adaptive=adaptive
    )
    client.account.balance()  # a first connection, before the limit
    time.sleep(1.1)
    requests.post(faults, json={"rate_limit": rate}, timeout=10).raise_for_status()  # fresh
    service.reset_stats()
    t = time.perf_counter()
    account = toolkit.load_account(client, workers=workers, progress=False)
    took = time.perf_counter() - t
    seen = statuses(url)
    accepted = sum(n for status, n in seen.items() if status != 429)
    ideal = accepted / rate
    failed = account.failures["campaign_id"].nunique() if len(account.failures) else 0
    gate = client.transport.gate
    label = "adaptive gate" if adaptive else "fixed pool (adaptive=False)"
    print(
        f"  {label:28s} {took:6.2f} s = {took / ideal:.2f}x ideal; 429s answered: "
        f"{seen.get(429, 0):5d}; failures: {len(account.failures)} ({failed} campaigns)"
        + (f"; cuts of the rate: {gate.cuts}" if gate is not None else "")
    )
    client.close()
    return {"time": took, "ratio": took / ideal, "429": seen.get(429, 0), "failures": failed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    service = Service(args.campaigns, args.latency_ms, separate=True)
    try:
        n = 3 * args.campaigns + 4
        print(
            f"rate limit {args.rate}/s, {args.workers} workers, latency {args.latency_ms:g} ms;"
            f" ideal for {n} requests: {n / args.rate:.2f} s"
        )
        results: list[dict[str, float]] = []
        for i in range(args.rounds):
            print(f"round {i + 1}")
            results.append(one_load(service, args.rate, args.workers, adaptive=True))
            one_load(service, args.rate, args.workers, adaptive=False)
        worst = max(r["ratio"] for r in results)
        print(
            f"adaptive load / ideal, worst of {len(results)}: {worst:.2f}x (target <= 1.2x) "
            f"{'OK' if worst <= 1.2 else 'MISSED'}"
        )
    finally:
        service.stop()


if __name__ == "__main__":
    main()
