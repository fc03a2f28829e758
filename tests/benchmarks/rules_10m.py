"""Rules over a 10-million-row stats export: ``evaluate_rules`` on the file (DuckDB sums, never
loaded whole) against pandas reading the same CSV whole and summing per item by hand.

Run: ``python tests/benchmarks/rules_10m.py [--rows 10000000] [--days 30] [--campaigns 150]
[--seed 7] [--dir DIR] [--threads 2] [--only both|toolkit|pandas|parquet|unchecked]``.
Not part of the test suite (no timed assertions there).

1. A sandbox of ``--campaigns`` campaigns on 127.0.0.1; the account is loaded and saved as a
   snapshot (``Account.save``) under ``--dir``.
2. A stats CSV in the generic layout (``date, campaign_id, level, key, impressions, clicks,
   cost, conversions, revenue``) of ``--rows`` rows: ``--days`` days x ``rows / days`` items
   of the account's campaigns (their listed sources and subIds first, then made-up ones,
   about a tenth sources; their targeted countries and two they do not target). Per campaign
   a payout, a base conversion rate and a CPC a little under break-even; per item a rate
   around the base (a quarter losers at 0-0.4x, some winners at 2-4x) and a lognormal
   volume; clicks Poisson, conversions Binomial. Written with numpy and pyarrow a day at a
   time; reused when a file of the same parameters is already under ``--dir`` (default: a
   folder in the system's temp directory).
3. Each measurement in a fresh child process, so that its peak memory is its own (``VmHWM``
   read inside the child, after the work; ``RUSAGE_CHILDREN`` in this process as a
   cross-check): wall time and peak RSS of

   - toolkit: ``evaluate_rules(RULES, csv_path, snapshot)`` up to the built plan (decisions,
     calls, changes), with the time spent in each phase (DuckDB checks and sums, evidence,
     settling against the account, planning);
   - pandas: ``pd.read_csv`` of the whole file with dtypes, then per rule the rows of its
     level and window grouped per item and summed (what one writes by hand; only the sums,
     no evidence and no plan, so the comparison flatters pandas).

   - parquet: the same ``evaluate_rules`` on a Parquet export of the same rows (typed
     columns, written once next to the CSV with pyarrow, a batch at a time), with every
     check the CSV gets.
   - unchecked: the same ``evaluate_rules`` on the CSV with its value checks replaced by
     what they find on this file (:func:`skip_checks`): what the rest of the path costs,
     the floor under the CSV's target as the path is built. Not a way to use the toolkit.

4. A table of rows, seconds and peak MB, the ratios toolkit / pandas and parquet / pandas
   measured in the same run, and the targets (PASS/FAIL printed): the toolkit on the CSV
   under 60 s and 2 GB peak on a 2-core machine, at most pandas' time at under half its
   peak memory; the Parquet export under a third of pandas' time. ``--only both`` runs all
   four.

``--threads N`` caps each child to N CPUs (``sched_setaffinity``, when the machine has more)
and DuckDB to N threads (``toolkit.stats.engine.configure(threads=N)``, the setting users
have too). ``0`` leaves both as they are (DuckDB: one thread per core).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MB = 1_000_000
#: Bumped whenever the generated file would differ, so an old cached file is not reused.
GENERATOR = 1
END = dt.date(2026, 1, 31)
#: A realistic rule set: a statistical subId blacklist, a threshold source blacklist, a
#: country bid cut.
RULES: list[dict[str, Any]] = [
    {
        "name": "subid losers",
        "level": "subid",
        "when": "p_loss >= 0.95 and clicks >= 300",
        "action": "blacklist",
        "window": 7,
        "limit": 50,
    },
    {
        "name": "source no conversions",
        "level": "source",
        "when": "cost > 25 and conversions = 0",
        "action": "blacklist",
        "window": 14,
    },
    {
        "name": "country bid down",
        "level": "country",
        "when": "roi < -15 and clicks >= 2000",
        "action": "bid",
        "factor": 0.8,
        "window": 30,
    },
]
#: Countries no campaign of the sandbox is likely to target (rows for them: ``not targeted``).
UNTARGETED = ("ZZ", "AQ")
TARGET_SECONDS, TARGET_MB = 60.0, 2000.0
#: Against pandas in the same run: the CSV at most its time and under half its peak memory,
#: the Parquet export under a third of its time.
TARGET_TIME_RATIO, TARGET_MEMORY_RATIO, TARGET_PARQUET_RATIO = 1.0, 0.5, 1 / 3


# --- the statistics file -------------------------------------------------------------------


def plan_items(account: Any, n_items: int, seed: int) -> dict[str, Any]:
    """The items of the file (campaign, level, key) and their truth (volume, rate, CPC,
    payout), as numpy arrays, about ``n_items`` of them."""
    import numpy as np

    rng = np.random.default_rng(seed)
    campaigns = [int(c) for c in account.table("campaigns")["id"]]
    lists = account.table("lists")
    listed: dict[tuple[int, str], list[str]] = {}
    for cid, name, item in zip(lists["campaign_id"], lists["list"], lists["item"], strict=True):
        level = "source" if str(name).startswith("source") else "subid"
        listed.setdefault((int(cid), level), []).append(str(item))
    rules = account.table("bid_rules")
    for cid, item in zip(rules["campaign_id"], rules["item"], strict=True):
        listed.setdefault((int(cid), "subid"), []).append(str(item))
    countries: dict[int, list[str]] = {}
    table = account.table("countries")
    for cid, code in zip(table["campaign_id"], table["country"], strict=True):
        countries.setdefault(int(cid), []).append(str(code))

    weights = rng.uniform(0.5, 1.5, len(campaigns))
    per_campaign = np.maximum(weights / weights.sum() * n_items, 10).astype(int)
    cids, levels, keys, volume, mult = [], [], [], [], []
    for cid, n in zip(campaigns, per_campaign, strict=True):
        codes = list(dict.fromkeys([*countries.get(cid, []), *UNTARGETED]))
        n_source = max(int(n * 0.1), 1)
        n_subid = max(int(n) - n_source - len(codes), 1)
        for level, count in (("source", n_source), ("subid", n_subid)):
            known = list(dict.fromkeys(listed.get((cid, level), [])))[:count]
            seen = set(known)
            made = rng.integers(1_000_000, 99_999_999, count * 2)
            fresh = [k for k in map(str, made) if k not in seen and not seen.add(k)]
            chosen = (known + fresh)[:count]
            cids += [cid] * len(chosen)
            levels += [level] * len(chosen)
            keys += chosen
        cids += [cid] * len(codes)
        levels += ["country"] * len(codes)
        keys += codes
    levels_arr = np.array(levels)
    n = len(keys)
    scale = np.select(
        [levels_arr == "subid", levels_arr == "source"], [np.log(8.0), np.log(60.0)], np.log(2000.0)
    )
    volume = rng.lognormal(scale, np.where(levels_arr == "country", 0.8, 1.3))
    r = rng.random(n)
    mult = np.where(
        r < 0.25,
        rng.uniform(0.0, 0.4, n),
        np.where(r < 0.85, rng.uniform(0.6, 1.6, n), rng.uniform(2.0, 4.0, n)),
    )
    ids = np.array(cids, dtype=np.int64)
    index = {c: i for i, c in enumerate(campaigns)}
    at = np.array([index[c] for c in cids])
    payout = rng.uniform(2.0, 20.0, len(campaigns)).round(2)
    base = rng.uniform(0.003, 0.03, len(campaigns))
    cpc = base * payout / rng.uniform(1.05, 1.4, len(campaigns))  # profitable on average
    return {
        "campaign_id": ids,
        "level": levels_arr,
        "key": np.array(keys, dtype=object),
        "volume": volume,
        "cr": np.clip(base[at] * mult, 0.0, 1.0),
        "cpc": cpc[at] * rng.uniform(0.8, 1.2, n),
        "payout": payout[at],
    }


def write_stats(path: Path, items: dict[str, Any], days: int, seed: int) -> int:
    """Write ``days`` days of every item to ``path`` (a day at a time); the rows written."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed + 1)
    n = len(items["key"])
    fixed = {
        "campaign_id": pa.array(items["campaign_id"]),
        "level": pa.array(items["level"].astype(object), pa.string()),
        "key": pa.array(items["key"], pa.string()),
    }
    schema = pa.schema(
        [("date", pa.string()), ("campaign_id", pa.int64()), ("level", pa.string())]
        + [("key", pa.string()), ("impressions", pa.int64()), ("clicks", pa.int64())]
        + [("cost", pa.float64()), ("conversions", pa.int64()), ("revenue", pa.float64())]
    )
    tmp = path.with_suffix(".tmp")
    options = pacsv.WriteOptions(quoting_style="needed")
    rows = 0
    with pacsv.CSVWriter(str(tmp), schema, write_options=options) as out:
        for d in range(days):
            day = (END - dt.timedelta(days=days - 1 - d)).isoformat()
            # weekly swing of traffic, each item's own day-to-day noise on top
            swing = 1.0 + 0.15 * np.sin(2 * np.pi * d / 7)
            clicks = rng.poisson(items["volume"] * swing)
            conversions = rng.binomial(clicks, items["cr"])
            table = pa.table(
                {
                    "date": pa.array(np.full(n, day, dtype=object), pa.string()),
                    **fixed,
                    "impressions": clicks * rng.integers(20, 80, n),
                    "clicks": clicks,
                    "cost": (clicks * items["cpc"]).round(4),
                    "conversions": conversions,
                    "revenue": (conversions * items["payout"]).round(2),
                },
                schema=schema,
            )
            out.write_table(table)
            rows += n
    tmp.replace(path)
    return rows


def ensure_stats(folder: Path, args: argparse.Namespace, account: Any) -> tuple[Path, int, float]:
    """The stats file for these parameters (written unless already there), its rows, and the
    seconds spent writing it (0 when reused)."""
    params = {
        "generator": GENERATOR,
        "rows": args.rows,
        "days": args.days,
        "campaigns": args.campaigns,
        "seed": args.seed,
        "end": END.isoformat(),
    }
    name = f"stats-{args.rows}-{args.days}d-{args.campaigns}c-s{args.seed}-g{GENERATOR}"
    path, meta = folder / f"{name}.csv", folder / f"{name}.json"
    if path.is_file() and meta.is_file():
        known = json.loads(meta.read_text())
        if known.get("params") == params:
            return path, int(known["written"]), 0.0
    started = time.perf_counter()
    items = plan_items(account, args.rows // args.days, args.seed)
    written = write_stats(path, items, args.days, args.seed)
    took = time.perf_counter() - started
    meta.write_text(json.dumps({"params": params, "written": written}, indent=2))
    return path, written, took


def ensure_parquet(csv_path: Path) -> tuple[Path, float]:
    """A Parquet export of the rows of ``csv_path`` (typed columns, the date a DATE), written
    next to it a batch at a time unless already there; its path and the seconds spent."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    path = csv_path.with_suffix(".parquet")
    if path.is_file() and path.stat().st_mtime >= csv_path.stat().st_mtime:
        return path, 0.0
    started = time.perf_counter()
    types = {"date": pa.date32(), "campaign_id": pa.int64(), "level": pa.string()}
    types |= {"key": pa.string(), "cost": pa.float64(), "revenue": pa.float64()}
    types |= {m: pa.int64() for m in ("impressions", "clicks", "conversions")}
    reader = pacsv.open_csv(str(csv_path), convert_options=pacsv.ConvertOptions(column_types=types))
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(str(tmp), reader.schema) as out:
        for batch in reader:
            out.write_batch(batch)
    tmp.replace(path)
    return path, time.perf_counter() - started


# --- the children ---------------------------------------------------------------------------


def peak_mb() -> float:
    """This process's peak resident set (VmHWM) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024 / MB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB


def cap_threads(threads: int) -> None:
    """At most ``threads`` CPUs for this process and ``threads`` threads per DuckDB
    connection of the statistics (``toolkit.stats.engine.configure``)."""
    if threads <= 0:
        return
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) > threads:
        os.sched_setaffinity(0, cpus[:threads])
    from toolkit.stats import engine

    engine.configure(threads=threads)


class Phases:
    """Seconds (and the peak RSS so far) per phase, by wrapping module functions."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.peak: dict[str, float] = {}

    def wrap(self, module: Any, name: str, label: str) -> None:
        inner = getattr(module, name)

        def timed(*a: Any, **k: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - started
                self.calls[label] = self.calls.get(label, 0) + 1
                self.peak[label] = peak_mb()

        setattr(module, name, timed)


def skip_checks(csv_path: str) -> None:
    """For the ``unchecked`` run only (a measurement, not a way to use the toolkit): the
    value checks of ``toolkit.stats.duck`` are replaced by what they find on this
    generator's file (plain values, every column read typed, the last day from the file's
    JSON), so that the run shows what the rest of the path costs."""
    import datetime as dt

    import toolkit.stats.duck as duck
    from toolkit.stats import values_sql
    from toolkit.stats.schema import METRICS

    meta = json.loads(Path(csv_path).with_suffix(".json").read_text())
    last = dt.date.fromisoformat(meta["params"]["end"])

    def unchecked(con: Any, mapping: dict[str, str], *_: Any, **__: Any) -> tuple:
        types = values_sql.column_types(con)
        numeric = {mapping[m]: m for m in METRICS if m in mapping}
        rules = values_sql.plain_rules(mapping["date"], numeric, types, None)
        typable = {mapping["date"]: "DATE", mapping["campaign_id"]: "BIGINT"}
        return last, rules, {**typable, **{h: "DOUBLE" for h in numeric}}

    duck._check = unchecked


def child_toolkit(csv_path: str, snapshot: str, checks: bool = True) -> dict[str, Any]:
    import pandas as pd

    import toolkit
    import toolkit.rules.decide as decide
    import toolkit.rules.evaluate as evaluate
    import toolkit.stats.duck as duck
    from toolkit.frames import Account

    if not checks:
        skip_checks(csv_path)
    phases = Phases()
    # nested: "sums (DuckDB)" includes "checks (DuckDB scan)"
    phases.wrap(duck, "window_sums", "sums (DuckDB, incl. checks)")
    phases.wrap(duck, "_check", "  of which value checks")
    phases.wrap(decide, "evidence_of", "evidence (prior, posterior)")
    phases.wrap(decide, "_limited", "rank and limit")
    phases.wrap(decide, "why_words", "why texts")
    phases.wrap(decide, "typed", "decisions typed")
    phases.wrap(evaluate, "settle_by_account", "settle against account")
    phases.wrap(evaluate, "desired", "desired tables")
    phases.wrap(evaluate, "make_plan", "planning (make_plan)")
    started = time.perf_counter()
    account = Account.load(snapshot)
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    plan, decisions = toolkit.evaluate_rules(RULES, csv_path, account)
    took = time.perf_counter() - started
    status = decisions.groupby(["rule", "status"], observed=True).size()
    changes = plan.changes()
    return {
        "seconds": took,
        "load_snapshot_s": load_s,
        "peak_mb": peak_mb(),
        "decisions": len(decisions),
        "by_status": {f"{r} / {s}": int(n) for (r, s), n in status.items()},
        "calls": len(plan),
        "changes": len(changes) if isinstance(changes, pd.DataFrame) else None,
        "phases": phases.seconds,
        "phase_calls": phases.calls,
        "phase_peak_mb": phases.peak,
    }


def child_pandas(csv_path: str, engine: str) -> dict[str, Any]:
    import pandas as pd

    from toolkit.stats.schema import METRICS

    started = time.perf_counter()
    dtypes = {
        "campaign_id": "int64",
        "level": "category",
        "key": str,
        "impressions": "int64",
        "clicks": "int64",
        "cost": "float64",
        "conversions": "int64",
        "revenue": "float64",
    }
    df = pd.read_csv(csv_path, dtype=dtypes, parse_dates=["date"], engine=engine)
    read_s = time.perf_counter() - started
    read_peak = peak_mb()
    last = df["date"].max()
    items = 0
    for rule in RULES:
        since = last - pd.Timedelta(days=rule["window"] - 1)
        rows = df[(df["level"] == rule["level"]) & (df["date"] >= since)]
        sums = rows.groupby(["campaign_id", "key"], sort=False)[list(METRICS)].sum()
        items += len(sums)
    took = time.perf_counter() - started
    return {
        "seconds": took,
        "read_s": read_s,
        "read_peak_mb": read_peak,
        "peak_mb": peak_mb(),
        "rows": len(df),
        "items": items,
    }


def run_child(kind: str, args: argparse.Namespace, csv_path: Path, snapshot: Path) -> dict:
    """One measurement in a fresh interpreter; its JSON answer with the parent's view of the
    child's peak RSS added."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", kind]
    command += ["--csv", str(csv_path), "--snapshot", str(snapshot)]
    command += ["--threads", str(args.threads), "--engine", args.engine]
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    if args.threads > 0:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(args.threads)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"{kind} child failed ({done.returncode})")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    answer["process_s"] = wall
    # the largest child so far: the child's own peak only when it is the largest
    answer["rusage_children_mb"] = (
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / MB
    )
    return answer


# --- the report -----------------------------------------------------------------------------


def report(rows: int, args: argparse.Namespace, results: dict[str, dict]) -> None:
    cpus = os.cpu_count()
    threads = args.threads or "all"
    print(f"\nnproc {cpus}, threads per child: {threads} (DuckDB and CPU affinity)")
    print(f"{'path':10s} {'rows':>12s} {'seconds':>9s} {'peak MB':>9s}")
    for kind, res in results.items():
        print(f"{kind:10s} {rows:12,d} {res['seconds']:9.1f} {res['peak_mb']:9.0f}")
    if "pandas" in results:
        ratios(results)
    if "pandas" in results:
        p = results["pandas"]
        print(
            f"pandas: read_csv {p['read_s']:.1f} s (peak {p['read_peak_mb']:.0f} MB after the "
            f"read), {p['items']:,} item sums over the three windows"
        )
    if "toolkit" in results:
        tk = results["toolkit"]
        print(
            f"toolkit: {tk['decisions']:,} decisions, {tk['calls']} calls, "
            f"{tk['changes']:,} changes (snapshot loaded in {tk['load_snapshot_s']:.2f} s, "
            "not counted)"
        )
        for name, n in tk["by_status"].items():
            print(f"  {name:50s} {n:7,d}")
        phases_of("toolkit", tk)
        ok_time, ok_mem = tk["seconds"] < TARGET_SECONDS, tk["peak_mb"] < TARGET_MB
        print(
            f"target under {TARGET_SECONDS:.0f} s: {'PASS' if ok_time else 'FAIL'} "
            f"({tk['seconds']:.1f} s); under {TARGET_MB / 1000:.0f} GB peak: "
            f"{'PASS' if ok_mem else 'FAIL'} ({tk['peak_mb']:.0f} MB); at {threads} threads "
            f"on {cpus} cores"
        )

    for kind in ("parquet", "unchecked"):
        if kind in results:
            phases_of(kind, results[kind])


def phases_of(kind: str, res: dict[str, Any]) -> None:
    """Where the run ``kind`` of the toolkit spent its time."""
    print(f"{kind} phases (seconds, calls, peak RSS so far):")
    for name, s in res["phases"].items():
        print(
            f"  {name:32s} {s:7.2f} s {res['phase_calls'][name]:4d}x "
            f"{res['phase_peak_mb'][name]:7.0f} MB"
        )
    counted = sum(s for n, s in res["phases"].items() if not n.startswith(" "))
    print(f"  {'rest':32s} {res['seconds'] - counted:7.2f} s")


def ratios(results: dict[str, dict]) -> None:
    """The ratios to pandas of the same run, and the targets on them."""
    pdx = results["pandas"]
    for kind in ("toolkit", "parquet", "unchecked"):
        if kind not in results:
            continue
        time_x = results[kind]["seconds"] / pdx["seconds"]
        mem_x = results[kind]["peak_mb"] / pdx["peak_mb"]
        print(f"ratios {kind} / pandas: time {time_x:.2f}x, peak memory {mem_x:.2f}x")
        if kind == "unchecked":
            print("  (no target: the toolkit on the CSV with its value checks left out)")
            continue
        if kind == "toolkit":
            ok = time_x <= TARGET_TIME_RATIO and mem_x < TARGET_MEMORY_RATIO
            goal = f"time <= {TARGET_TIME_RATIO:.2f}x and memory < {TARGET_MEMORY_RATIO:.2f}x"
        else:
            ok, goal = time_x < TARGET_PARQUET_RATIO, f"time < {TARGET_PARQUET_RATIO:.2f}x"
        print(f"  target {goal}: {'PASS' if ok else 'FAIL'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--campaigns", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "rules_10m")
    parser.add_argument("--threads", type=int, default=2, help="0: as many as the machine")
    parser.add_argument(
        "--only", choices=("both", "toolkit", "pandas", "parquet", "unchecked"), default="both"
    )
    parser.add_argument("--engine", default="c", help="pd.read_csv engine of the baseline")
    parser.add_argument(
        "--child", choices=("toolkit", "pandas", "unchecked"), help=argparse.SUPPRESS
    )
    parser.add_argument("--csv", help=argparse.SUPPRESS)
    parser.add_argument("--snapshot", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        cap_threads(args.threads)
        if args.child in ("toolkit", "unchecked"):
            answer = child_toolkit(args.csv, args.snapshot, checks=args.child == "toolkit")
        else:
            answer = child_pandas(args.csv, args.engine)
        print(json.dumps(answer))
        return

    import toolkit
    from toolkit.sandbox import Sandbox

    args.dir.mkdir(parents=True, exist_ok=True)
    snapshot = args.dir / f"account-{args.campaigns}c-s{args.seed}"
    with Sandbox(campaigns=args.campaigns, seed=args.seed) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        account = toolkit.load_account(client, progress=False)
        account.save(snapshot)
        n_campaigns = len(account.table("campaigns"))
        csv_path, rows, wrote = ensure_stats(args.dir, args, account)
        size = csv_path.stat().st_size / MB
        how = f"written in {wrote:.1f} s" if wrote else "reused"
        print(
            f"account: {n_campaigns} campaigns; stats: {csv_path} ({rows:,} rows, "
            f"{size:,.0f} MB, {how})"
        )
        results: dict[str, dict] = {}
        for kind in ("toolkit", "pandas", "parquet", "unchecked"):
            if args.only in (kind, "both"):
                source = csv_path
                if kind == "parquet":
                    source, took = ensure_parquet(csv_path)
                    print(
                        f"parquet: {source} ({source.stat().st_size / MB:,.0f} MB, "
                        f"{f'written in {took:.1f} s' if took else 'reused'})"
                    )
                child = "toolkit" if kind == "parquet" else kind
                results[kind] = run_child(child, args, source, snapshot)
                res = results[kind]
                print(
                    f"{kind}: {res['seconds']:.1f} s, peak {res['peak_mb']:.0f} MB (process "
                    f"{res['process_s']:.1f} s; largest child so far by RUSAGE_CHILDREN "
                    f"{res['rusage_children_mb']:.0f} MB)"
                )
    report(rows, args, results)


if __name__ == "__main__":
    main()
