"""How long the notebook forms take to build and to answer on big accounts, against loading
the same account.

Run: ``python tests/benchmarks/widgets.py [--campaigns 1000 5000] [--latency-ms 10]``. Not
part of the test suite.

For each size, a sandbox of that many campaigns runs in a child process (as a remote service
would) answering after ``--latency-ms``; in the same run:

1. ``toolkit.load_account`` of the whole account (the reference);
2. ``toolkit.widgets.open(account, client=...)``: the picker and the three forms built;
3. every campaign selected (the picker's *Select all matching*): the forms redraw (the
   targeting form's values with how many campaigns have each, the bid table's first page,
   the lists' counts);
4. each target kind shown in turn in the targeting form;
5. 1,000 subIds pasted into the list form, added to every campaign, and the plan made;
6. a +10 % change of every country bid shown in the bid form, and its plan.

Printed: each time in seconds and as a share of the load.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_scope import Service  # noqa: E402  (the child-process sandbox of that benchmark)

import toolkit  # noqa: E402
import toolkit.widgets  # noqa: E402
from toolkit import spec  # noqa: E402


def timed(func: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    value = func()
    return time.perf_counter() - t, value


def run(campaigns: int, latency_ms: float, journal: Path) -> list[tuple[str, float]]:
    with Service(campaigns, latency_ms) as service:
        client = toolkit.connect(api_key=service.key, base_url=service.url)
        load_s, account = timed(lambda: toolkit.load_account(client, progress=False))
        rows = [(f"load_account ({len(account.lists):,} list rows)", load_s)]
        build_s, app = timed(lambda: toolkit.widgets.open(account, client=client, journal=journal))
        rows.append(("open(): picker and 3 forms built", build_s))
        rows.append(("select all: 3 forms redrawn", timed(app.picker.select_all.click)[0]))
        form = app.forms["targeting"]

        def every_kind() -> None:
            for kind in spec.TARGET_KINDS:
                form.kind.value = kind

        rows.append((f"targeting: {len(spec.TARGET_KINDS)} kinds shown", timed(every_kind)[0]))
        lists = app.forms["lists"]
        lists.list_name.value = next(lk.name for lk in spec.LISTS.values() if lk.item_type is str)
        paste_s, _ = timed(
            lambda: setattr(
                lists.paste, "value", "\n".join(f"{0xFACE0000 + i:x}" for i in range(1000))
            )
        )
        rows.append(("lists: 1,000 subIds pasted and checked", paste_s))
        rows.append(("lists: added to every campaign", timed(lists.add_button.click)[0]))
        plan_s, plan = timed(lists.plan)
        rows.append((f"lists: plan ({len(plan)} call(s))", plan_s))
        bids = app.forms["bids"]
        bids.how.value, bids.amount.value = "percent", 10
        rows.append(("bids: +10 % on every row", timed(bids.change_button.click)[0]))
        plan_s, plan = timed(bids.plan)
        rows.append((f"bids: plan ({len(plan)} call(s))", plan_s))
        for f in app.forms.values():
            assert f.level != "error", f.message
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--campaigns", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--latency-ms", type=float, default=10)
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        for n in args.campaigns:
            rows = run(n, args.latency_ms, Path(d) / "journal.db")
            load = rows[0][1]
            print(f"\n{n:,} campaigns, {args.latency_ms:g} ms a request:")
            for label, seconds in rows:
                print(f"  {label:<45} {seconds:7.2f} s  {seconds / load:6.1%} of the load")


if __name__ == "__main__":
    main()
