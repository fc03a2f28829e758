"""How fast ``load_accounts`` loads many accounts on one pool, against one ``load_account``
after the other, and against the latency bound.

Run: ``python tests/benchmarks/load_accounts.py [--accounts 20] [--campaigns 250]
[--latency-ms 20] [--workers 16] [--rate-limit 0]``. Not part of the test suite.

A sandbox in a child process (a remote service's CPU is not the client's) seeds
``--accounts + 1`` accounts; the first (``--campaigns`` x 10 campaigns) is not loaded, each other
one has ``--campaigns`` campaigns. Every request is answered after ``--latency-ms``.

Measured in one run, each on fresh clients, after a warm-up load, alternated ``--repeat``
times (the best of each is shown):
1. ``load_accounts`` of the accounts, ``workers`` threads shared by all of them;
2. ``load_account`` of each account in turn, ``workers`` threads each (the way to load many
   accounts before ``load_accounts``);
3. the latency bound: ``requests x latency / workers``.
Targets: (1) within 1.2x of (3). With ``--rate-limit R`` the sandbox answers 429 past R
requests per second per api-key; the bound is then also at least each account's requests / R,
and the 429s each account met are counted (the adaptive gate of each client keeps its own
account under its limit).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from pathlib import Path
from typing import Any

import requests

import toolkit
from toolkit.sandbox import Sandbox


def _serve(campaigns: int, accounts: int, latency_ms: float, rate: int | None, q: Any, stop: Any):
    sb = Sandbox(
        campaigns=campaigns * 10, accounts=accounts + 1, latency_ms=latency_ms, rate_limit=rate
    ).start()
    q.put((sb.url, sb.api_keys[1:]))
    stop.wait()
    sb.stop()


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process used so far (Linux /proc), NaN elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stats(url: str) -> dict[str, Any]:
    return requests.get(f"{url}/_sandbox/stats", timeout=30).json()


def clients(url: str, keys: list[str], workers: int) -> dict[str, toolkit.Client]:
    return {
        f"account-{i + 1:02d}": toolkit.Client(url, key, pool_size=workers)
        for i, key in enumerate(keys)
    }


def run(args: argparse.Namespace) -> None:
    ctx = mp.get_context("spawn")
    q, stop = ctx.Queue(), ctx.Event()
    rate = args.rate_limit or None
    proc = ctx.Process(
        target=_serve, args=(args.campaigns, args.accounts, args.latency_ms, rate, q, stop)
    )
    t = time.perf_counter()
    proc.start()
    try:
        url, keys = q.get(timeout=900)
        print(
            f"sandbox: {args.accounts} accounts x {args.campaigns} campaigns at"
            f" {args.latency_ms:g} ms{f', {rate} requests/s per key' if rate else ''},"
            f" up in {time.perf_counter() - t:.0f} s (load average {os.getloadavg()[0]:.1f})"
        )
        warm = toolkit.Client(url, keys[0], pool_size=args.workers)
        toolkit.load_account(warm, workers=args.workers, progress=False)  # imports, first calls
        warm.close()
        together, sequential = [], []
        for _ in range(args.repeat):  # alternated, best of each: the machine's load varies
            requests.delete(f"{url}/_sandbox/stats", timeout=30)
            set_clients = clients(url, keys, args.workers)
            t, mine, theirs = time.perf_counter(), time.process_time(), cpu_of(proc.pid)
            loaded = toolkit.load_accounts(set_clients, workers=args.workers, progress=False)
            together.append(time.perf_counter() - t)
            cpu = (time.process_time() - mine, cpu_of(proc.pid) - theirs)
            answered = stats(url)
            one_by_one = clients(url, keys, args.workers)
            t = time.perf_counter()
            for client in one_by_one.values():
                toolkit.load_account(client, workers=args.workers, progress=False)
            sequential.append(time.perf_counter() - t)
            for c in [*set_clients.values(), *one_by_one.values()]:
                c.close()
        n = sum(v for k, v in answered["requests"].items() if " /api/" in k and " 200" in k)
        limited = sum(v for k, v in answered["requests"].items() if k.endswith(" 429"))
        assert len(loaded.failures) == 0, loaded.failures
        assert answered["foreign"] == [], "a call carried another account's key"
        best, best_seq = min(together), min(sequential)
        print(
            f"  load_accounts: {best:.2f} s (best of {args.repeat}) for {n} requests,"
            f" {len(loaded.campaigns)} campaigns, {limited} answers 429"
        )
        print(f"  load_account of each in turn: {best_seq:.2f} s")
        print(
            f"  CPU per request (last load_accounts): client {cpu[0] / n * 1000:.2f} ms,"
            f" sandbox {cpu[1] / n * 1000:.2f} ms"
        )
        bound = n * args.latency_ms / 1000 / args.workers
        if rate:
            bound = max(bound, max(answered["by_account"].values()) / rate)
        print(f"  latency bound: {bound:.2f} s (load average {os.getloadavg()[0]:.1f})")
        print(
            f"  load_accounts / bound: {best / bound:.2f}x (target <= 1.2x);"
            f" one by one / load_accounts: {best_seq / best:.2f}x"
        )
    finally:
        stop.set()
        proc.join(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--accounts", type=int, default=20)
    parser.add_argument("--campaigns", type=int, default=250)
    parser.add_argument("--latency-ms", type=float, default=20)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--rate-limit", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
