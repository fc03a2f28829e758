"""How many HTTP calls a bulk blacklist takes, against one call per campaign and item kind.

Run: ``python tests/benchmarks/bulk_plan.py [--campaigns 1000] [--items 200]``. Not part of
the test suite. Two edits on a sandbox of ``--campaigns`` campaigns:

1. the same ``--items`` subIds blacklisted in every campaign (shared): target at most
   ``ceil(campaigns / max campaigns per call)`` calls;
2. a different set of ``--items`` subIds in each campaign (distinct).

For each: the plan's calls, the HTTP requests the apply really sent (the sandbox's
counters), the baseline of one call per campaign, and the times to plan and to apply.

``--plan-only``: instead, ``--items`` new subIds in every campaign planned (adds), then the
same edit undone (drops), nothing applied; each ``make_plan`` time against a pandas anti-join
of the same frames in the same run, the best of ``--repeat`` runs of each, with the load
average before and after (``--campaigns 1000 --items 1000``: 1M items; ``--items 5000``: 5M,
about 3 GB of memory).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import os
import time

import pandas as pd

import toolkit
from toolkit.bulk import make_plan
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox


def requests_sent(sb: Sandbox) -> int:
    return sum(n for key, n in sb.stats().items() if " /api/" in key)


def run(sb: Sandbox, client: toolkit.Client, label: str, items_for) -> None:  # noqa: ANN001
    account = load_account(client, progress=False)
    lists = account.table("lists")
    ids = [int(i) for i in account.table("campaigns")["id"]]
    rows = [
        {"campaign_id": c, "list": "subid_black", "item": item}
        for c in ids
        for item in items_for(c)
    ]
    extra = pd.DataFrame(rows, columns=lists.columns).astype(lists.dtypes.to_dict())
    desired = {"lists": pd.concat([lists, extra], ignore_index=True)}
    started = time.perf_counter()
    plan = make_plan(client, desired, base={"lists": lists}, live=account)
    plan_s = time.perf_counter() - started
    before = requests_sent(sb)
    started = time.perf_counter()
    result = plan.apply(client, progress=False, journal=None, verify=False)
    apply_s = time.perf_counter() - started
    sent = requests_sent(sb) - before
    per_call = client.options.max_batch_campaigns
    bound = math.ceil(len(ids) / per_call)
    print(f"{label}: {len(rows):,} items in {len(ids):,} campaigns")
    print(f"  plan: {len(plan)} call(s) before chunking, planned in {plan_s:.2f} s")
    print(
        f"  HTTP requests sent: {sent} (baseline, one per campaign: {len(ids)}; "
        f"{len(ids) / max(sent, 1):.0f}x fewer); shared-case bound ceil({len(ids)}/{per_call})"
        f" = {bound}"
    )
    print(f"  applied in {apply_s:.2f} s: {result.summary().splitlines()[0]}")


def anti_join(left: pd.DataFrame, right: pd.DataFrame) -> float:
    """Seconds to find the rows of ``left`` not in ``right`` with a pandas merge."""
    started = time.perf_counter()
    merged = left.merge(right.drop_duplicates(), how="left", indicator=True)
    merged = merged[merged["_merge"] == "left_only"]
    return time.perf_counter() - started


def big_edits(client: toolkit.Client, items: int, repeat: int = 3) -> None:
    """Plan ``items`` new subIds in every campaign (adds), then the same edit undone (drops:
    live and the exported state hold them, the workbook no more), without applying; each
    against a pandas anti-join of the same frames."""
    account = load_account(client, progress=False)
    lists = account.table("lists")
    ids = account.table("campaigns")["id"].astype(int).tolist()
    extra = pd.DataFrame(
        {
            "campaign_id": [c for c in ids for _ in range(items)],
            "list": "subid_black",
            "item": [f"d{c:07x}{n:05x}" for c in ids for n in range(items)],
        },
        columns=lists.columns,
    ).astype(lists.dtypes.to_dict())
    full = pd.concat([lists, extra], ignore_index=True)
    edits = {
        "adds": (full, lists, account),
        "drops": (lists, full, dataclasses.replace(account, lists=full)),
    }
    print(f"load average {os.getloadavg()[0]:.2f}")
    for label, (desired, base, live) in edits.items():
        join_s = plan_s = math.inf
        for _ in range(repeat):  # alternated, so that both see the same load
            sides = (base, desired) if label == "drops" else (desired, base)
            join_s = min(join_s, anti_join(*sides))
            plan = None
            gc.collect()
            started = time.perf_counter()
            plan = make_plan(
                client, {"lists": desired}, base={"lists": base}, live=live, allow={"drop_share"}
            )
            plan_s = min(plan_s, time.perf_counter() - started)
        print(
            f"{label}: {len(extra):,} items in {len(ids):,} campaigns: {len(plan)} call(s); "
            f"make_plan {plan_s:.2f} s, anti-join {join_s:.2f} s (best of {repeat}): "
            f"{plan_s / join_s:.2f}x; load average {os.getloadavg()[0]:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many (--plan-only)")
    parser.add_argument(
        "--plan-only",
        action="store_true",
        help="only plan (adds, then drops) against a pandas anti-join; nothing applied",
    )
    args = parser.parse_args()
    with Sandbox(campaigns=args.campaigns, accounts=1) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        if args.plan_only:
            big_edits(client, args.items, args.repeat)
            return
        shared = [f"5a{n:06x}" for n in range(args.items)]
        run(sb, client, "shared set", lambda c: shared)
        run(sb, client, "distinct sets", lambda c: [f"d{c:07x}{n:04x}" for n in range(args.items)])


if __name__ == "__main__":
    main()
