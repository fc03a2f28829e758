"""How fast ``load_account`` loads an account, and how much memory a big lists table takes.

Run: ``python tests/benchmarks/load_account.py [--campaigns 1000] [--latency-ms 20]
[--workers 8] [--naive-sample 0] [--rows 1000000] [--sandbox both|process|thread]``.
Not part of the test suite.

1. Speed. A sandbox of ``--campaigns`` campaigns answers every request after ``--latency-ms``.
   It runs in a child process (as a remote service would, its work does not compete with
   the client for this interpreter's GIL) and, for comparison, in this process.
   Measured: ``load_account`` (``mode=full``, ``progress=False``); a naive serial loop over
   the client (detail ``mode=full``, bid rules and CPA rules of each campaign, one request
   at a time); and the ideal, ``requests x latency / workers``. Targets: at least 6x faster
   than the naive loop, within 1.5x of the ideal. ``--naive-sample N`` times the naive loop
   on N campaigns and scales it up, to save a minute.
   The floor: a minimal client (``http.client`` and ``json``, one keep-alive connection per
   thread, no retries, no checks, no frames) sends the same requests on ``--workers``
   threads. What it takes above the ideal is the sandbox's own CPU per request and the
   machine's, which no client removes; ``load_account`` over it is the client's share.
2. Memory. A lists table of ``--rows`` subId rows built by the loader's frame constructor
   (:func:`toolkit.frames.lists_frame`), measured with ``DataFrame.memory_usage(deep=True)``
   for the declared dtype of ``item`` and for the alternatives. Target: under 200 MB.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import requests

import toolkit
from toolkit.frames import lists_frame
from toolkit.sandbox import Sandbox

MB = 1_000_000


class Service:
    """A sandbox in this process, or in a child process of its own (a remote service's CPU
    is not the client's: the child process keeps the sandbox's work off the client's GIL)."""

    def __init__(self, campaigns: int, latency_ms: float, separate: bool) -> None:
        self.separate = separate
        t = time.perf_counter()
        if separate:
            ctx = mp.get_context("spawn")
            self.queue: Any = ctx.Queue()
            self.stop_event: Any = ctx.Event()
            self.proc = ctx.Process(
                target=_serve, args=(campaigns, latency_ms, self.queue, self.stop_event)
            )
            self.proc.start()
            self.url, self.key = self.queue.get(timeout=300)
        else:
            self.sb = Sandbox(campaigns=campaigns, latency_ms=latency_ms, accounts=1).start()
            self.url, self.key = self.sb.url, self.sb.api_keys[0]
        where = "a child process" if separate else "this process"
        print(f"sandbox of {campaigns} campaigns in {where}, up in {time.perf_counter() - t:.1f} s")

    def reset_stats(self) -> None:
        requests.delete(f"{self.url}/_sandbox/stats", timeout=10).raise_for_status()

    def requests_answered(self) -> int:
        stats = requests.get(f"{self.url}/_sandbox/stats", timeout=10).json()["requests"]
        return sum(n for key, n in stats.items() if " /api/" in key)

    def stop(self) -> None:
        if self.separate:
            self.stop_event.set()
            self.proc.join(timeout=30)
        else:
            self.sb.stop()


def _serve(campaigns: int, latency_ms: float, queue: Any, stop_event: Any) -> None:
    sb = Sandbox(campaigns=campaigns, latency_ms=latency_ms, accounts=1).start()
    queue.put((sb.url, sb.api_keys[0]))
    stop_event.wait()
    sb.stop()


def minimal_load(url: str, key: str, workers: int) -> float:
    """Seconds for a minimal client to send what ``load_account`` sends: the three
    account-wide calls beside the campaign list, then detail (``mode=full``), bid rules and
    CPA rules of each campaign, on ``workers`` threads with a connection each."""
    parts = urlsplit(url)
    local = threading.local()

    def get(path: str) -> Any:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        conn.request("GET", f"{path}{'&' if '?' in path else '?'}api-key={key}")
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"{path}: HTTP {response.status}")
        return json.loads(body)

    def campaign(cid: int) -> None:
        get(f"/api/campaign/item?id={cid}&mode=full")
        get(f"/api/campaign/bid-rules?id={cid}")
        get(f"/api/campaign/cpa-rules?id={cid}")

    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        wide = [
            pool.submit(get, p)
            for p in ("/api/campaign/list-refs-data", "/api/campaign/balance", "/api/creative/list")
        ]
        ids = [int(item["id"]) for item in get("/api/campaign/list")["items"]]
        list(pool.map(campaign, ids))
        for future in wide:
            future.result()
    return time.perf_counter() - t


def speed(
    campaigns: int, latency_ms: float, workers: int, naive_sample: int, separate: bool
) -> dict[str, float]:
    service = Service(campaigns, latency_ms, separate)
    try:
        client = toolkit.connect(api_key=service.key, base_url=service.url, pool_size=workers)
        client.account.balance()  # a first connection

        service.reset_stats()
        t = time.perf_counter()
        account = toolkit.load_account(client, workers=workers, progress=False)
        load_s = time.perf_counter() - t
        n_requests = service.requests_answered()
        assert len(account.failures) == 0, account.failures
        print(
            f"  load_account: {load_s:.2f} s for {n_requests} requests "
            f"({len(account.campaigns)} campaigns, {len(account.lists):,} list rows, "
            f"{len(account.targets):,} targets, {len(account.countries):,} countries)"
        )

        ids = [int(i) for i in account.campaigns["id"]]
        sample = ids if naive_sample <= 0 else ids[:naive_sample]
        t = time.perf_counter()
        for cid in sample:
            client.campaigns.get(cid, "full")
            client.bid_rules.list(cid)
            client.cpa_rules.list(cid)
        naive_s = (time.perf_counter() - t) * len(ids) / len(sample)
        how = "measured" if len(sample) == len(ids) else f"scaled from {len(sample)} campaigns"
        print(f"  naive serial loop: {naive_s:.2f} s ({how}; {3 * len(ids)} requests)")

        ideal_s = n_requests * latency_ms / 1000 / workers
        print(
            f"  ideal ({n_requests} requests x {latency_ms:g} ms / {workers} workers): "
            f"{ideal_s:.2f} s"
        )
        speedup = naive_s / load_s
        over = load_s / ideal_s
        print(
            f"  speed-up over the naive loop: {speedup:.1f}x (target >= 6x) "
            f"{'OK' if speedup >= 6 else 'MISSED'}"
        )
        print(
            f"  load_account / ideal: {over:.2f}x (target <= 1.5x) "
            f"{'OK' if over <= 1.5 else 'MISSED'}"
        )
        service.reset_stats()
        floor_s = minimal_load(service.url, service.key, workers)
        floor_requests = service.requests_answered()
        print(
            f"  floor, a minimal client on the same {floor_requests} requests: {floor_s:.2f} s "
            f"({floor_s / ideal_s:.2f}x the ideal); load_account / floor: {load_s / floor_s:.2f}x"
        )
        return {"load": load_s, "naive": naive_s, "ideal": ideal_s, "floor": floor_s}
    finally:
        service.stop()


def memory(rows: int, per_campaign: int = 10_000) -> None:
    rng = random.Random(1)
    details = []
    left = rows
    cid = 1_000_000
    while left > 0:
        n = min(per_campaign, left)
        details.append({"id": cid, "subIdBlack": [f"{rng.getrandbits(64):016x}" for _ in range(n)]})
        left -= n
        cid += 1
    t = time.perf_counter()
    df = lists_frame(details)
    build_s = time.perf_counter() - t
    assert len(df) == rows

    def mb(frame: pd.DataFrame) -> float:
        return frame.memory_usage(deep=True, index=False).sum() / MB

    chosen = mb(df)
    print(
        f"lists table, {rows:,} subId rows ({len(details)} campaigns) built in {build_s:.2f} s: "
        f"{chosen:.1f} MB with item as string[pyarrow] (declared; target < 200 MB) "
        f"{'OK' if chosen < 200 else 'MISSED'}"
    )
    per_col = df.memory_usage(deep=True, index=False) / MB
    print("  by column: " + ", ".join(f"{c} {v:.1f} MB" for c, v in per_col.items()))
    for label, dtype in (
        ("string[python]", pd.StringDtype("python")),
        ("category", "category"),
        ("object", object),
    ):
        alt = df.assign(item=df["item"].astype(dtype))
        print(f"  item as {label}: {mb(alt):.1f} MB")
    alt = df.assign(campaign_id=df["campaign_id"].astype("category"))
    print(f"  campaign_id as category instead of Int64: {mb(alt):.1f} MB (not chosen)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=20)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--naive-sample", type=int, default=0)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument(
        "--sandbox",
        choices=("both", "process", "thread"),
        default="both",
        help="run the sandbox in a child process, in this process, or measure both",
    )
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    if not args.skip_speed:
        for where in ("process", "thread"):
            if args.sandbox in (where, "both"):
                speed(
                    args.campaigns,
                    args.latency_ms,
                    args.workers,
                    args.naive_sample,
                    separate=where == "process",
                )
    memory(args.rows)


if __name__ == "__main__":
    main()
