"""Command line: ``campaign-toolkit sandbox [--host] [--port] [--db] [--campaigns] [--latency-ms]``.

Each command is one library call.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence


def _sandbox(args: argparse.Namespace) -> int:
    from .sandbox import Sandbox

    started = time.perf_counter()
    sandbox = Sandbox(
        campaigns=args.campaigns,
        latency_ms=args.latency_ms,
        db=args.db,
        seed=args.seed,
        host=args.host,
        port=args.port,
        auto_approve=args.auto_approve,
    )
    try:
        sandbox.start()
    except OSError as exc:
        print(f"campaign-toolkit: {exc}", file=sys.stderr)
        return 2
    took = time.perf_counter() - started
    keys = sandbox.api_keys
    print(f"Sandbox running at {sandbox.url} (ready in {took:.1f} s)")
    print(f"Demo account api-key: {keys[0]}")
    for i, key in enumerate(keys[1:], start=2):
        print(f"Account {i} api-key:    {key}")
    print(f"Try: curl '{sandbox.url}/api/campaign/list?api-key={keys[0]}'")
    print("Press Ctrl-C to stop.", flush=True)
    if args.once:
        sandbox.stop()
        return 0
    try:
        sandbox.wait()
    except KeyboardInterrupt:
        print("\nStopping.")
    finally:
        sandbox.stop()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="campaign-toolkit", description="Campaign Management toolkit."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sb = sub.add_parser("sandbox", help="run the local sandbox of the service")
    sb.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    sb.add_argument("--port", type=int, default=8765, help="port to listen on (8765; 0: any)")
    sb.add_argument("--db", default=None, help="SQLite file that keeps state across restarts")
    sb.add_argument("--campaigns", type=int, default=50, help="campaigns of the demo account")
    sb.add_argument("--latency-ms", type=float, default=0, help="latency added to each request")
    sb.add_argument("--seed", type=int, default=None, help="seed of the demo data")
    sb.add_argument("--auto-approve", action="store_true", help="approve new campaigns/creatives")
    sb.add_argument("--once", action="store_true", help="start, print, and stop (for checks)")
    sb.set_defaults(func=_sandbox)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "seed", None) is None and args.command == "sandbox":
        from .sandbox import DEFAULT_SEED

        args.seed = DEFAULT_SEED
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
