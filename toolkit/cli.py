"""Command line: ``campaign-toolkit sandbox [--host] [--port] [--db] [--campaigns] [--latency-ms]``.

Each command is one library call.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path


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


def _client(args: argparse.Namespace):  # noqa: ANN202
    import toolkit

    return toolkit.connect(
        api_key=getattr(args, "api_key", None), base_url=getattr(args, "base_url", None)
    )


def _ask(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        print("Not a terminal: pass --yes to apply without asking.", file=sys.stderr)
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _export(args: argparse.Namespace) -> int:
    from .bulk.workbook import export_workbook

    ids = [int(i) for i in args.campaigns.split(",")] if args.campaigns else None
    path = export_workbook(_client(args), args.file, campaign_ids=ids)
    print(f"Exported {path}")
    return 0


def _make_plan(args: argparse.Namespace, client):  # noqa: ANN001, ANN202
    from .bulk import make_plan
    from .bulk.actions import is_action_workbook, plan_actions
    from .bulk.workbook import read_workbook

    if is_action_workbook(args.file):
        args.desired = None
        return plan_actions(client, args.file, allow=args.allow or ())
    tables = read_workbook(args.file)
    args.desired = dict(tables.desired)
    return make_plan(client, tables, prefer=args.prefer, allow=args.allow or ())


def _plan(args: argparse.Namespace) -> int:
    plan = _make_plan(args, _client(args))
    print(plan.summary())
    if len(plan):
        print(
            plan.to_frame()[["step", "action", "target", "campaigns", "items", "detail"]].to_string(
                index=False, max_colwidth=80
            )
        )
    return 0


def _apply(args: argparse.Namespace) -> int:
    client = _client(args)
    plan = _make_plan(args, client)
    print(plan.summary())
    if not len(plan):
        return 0
    if not _ask(f"Apply {len(plan)} call(s)?", args.yes):
        print("Nothing sent.")
        return 1
    result = plan.apply(client, journal=args.journal or "default")
    print(result.summary())
    if args.desired is not None:
        from .bulk.apply import write_result_workbook

        report = Path(args.file).with_suffix(".result.xlsx")
        write_result_workbook(result, args.desired, report)
        print(f"Outcome of each row: {report}")
    return 0 if result.ok else 3


def _undo(args: argparse.Namespace) -> int:
    from .bulk import undo

    client = _client(args)
    if not _ask(f"Undo run {args.run}?", args.yes):
        print("Nothing sent.")
        return 1
    result = undo(client, args.run, journal=args.journal or None)
    print(result.summary())
    return 0 if result.ok else 3


def _history(args: argparse.Namespace) -> int:
    from .bulk import history

    runs = history(args.journal or None)
    print(runs.to_string(index=False) if len(runs) else "No runs in the journal.")
    return 0


def _demo(args: argparse.Namespace) -> int:
    """The main job, on the built-in sandbox: load, export, edit from a template, plan,
    apply, report."""
    import toolkit

    from .bulk.actions import TEMPLATES, plan_actions, write_template
    from .bulk.workbook import export_workbook

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    client = toolkit.connect(api_key=None, base_url=None)
    print(f"1. Loading the account from {client.base_url} ...")
    account = toolkit.load_account(client, progress=not args.quiet)
    print(account)
    workbook = export_workbook(account, out / "account.xlsx")
    print(f"2. Exported {workbook}")
    countries = account.table("countries").groupby("campaign_id").head(1).head(3)
    rows = [
        {"action": "add", "target": "subid_black", "campaign": "push", "item": sub}
        for sub in ("deadbeef01", "deadbeef02", "deadbeef03")
    ]
    rows += [
        {
            "action": "set",
            "target": "country",
            "campaign": int(r.campaign_id),
            "item": r.country,
            "bid": round(float(r.bid) * 1.1, 4),
        }
        for r in countries.itertuples(index=False)
    ]
    title, text, _examples = TEMPLATES["blacklist.xlsx"]
    actions = write_template(out / "actions.xlsx", title, text, rows)
    print(
        f"3. Edit from the blacklist template ({actions}): 3 subIds blacklisted in every push"
        f" campaign, {len(countries)} country bids raised by 10%"
    )
    plan = plan_actions(client, actions)
    print(plan.summary())
    columns = ["step", "action", "target", "campaigns", "items"]
    print(plan.to_frame()[columns].to_string(index=False))
    result = plan.apply(client, progress=not args.quiet, journal=out / "journal.db")
    frame = result.to_frame()
    print(result.summary())
    shown = ["action", "target", "campaign_id", "item", "bid", "outcome"]
    print(frame[shown].head(15).to_string(index=False))
    report = out / "result.csv"
    frame.to_csv(report, index=False)
    print(
        f"4. Files left for you in {out}/: account.xlsx (the export), actions.xlsx (the edit),"
        " result.csv (one row per campaign and item), journal.db (for undo)"
    )
    return 0 if result.ok else 3


def _bulk_errors(func):  # noqa: ANN001, ANN202
    """Library errors become one clear line on stderr and exit code 2, never a traceback."""

    def run(args: argparse.Namespace) -> int:
        from .errors import ToolkitError

        try:
            return func(args)
        except ToolkitError as exc:
            print(f"campaign-toolkit: {exc}", file=sys.stderr)
            return 2
        except FileNotFoundError as exc:
            print(f"campaign-toolkit: no such file: {exc.filename}", file=sys.stderr)
            return 2

    return run


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

    def account_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--api-key", default=None, help="key (default: env, config, sandbox)")
        p.add_argument("--base-url", default=None, help="service URL (default: env, config)")

    def plan_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("file", help="the edited workbook (.xlsx)")
        p.add_argument(
            "--prefer",
            choices=("desired", "live"),
            default=None,
            help="settle conflicts: apply the edit, or keep live",
        )
        p.add_argument(
            "--allow",
            action="append",
            choices=("drop_share", "empty_whitelist", "bulk_archive"),
            help="lift a guard (repeatable)",
        )
        account_options(p)

    ex = sub.add_parser("export", help="export the account to an editable workbook")
    ex.add_argument("file", help="the workbook to write (.xlsx)")
    ex.add_argument("--campaigns", default=None, help="comma-separated campaign ids")
    account_options(ex)
    ex.set_defaults(func=_bulk_errors(_export))
    pl = sub.add_parser("plan", help="show the calls an edited workbook means")
    plan_options(pl)
    pl.set_defaults(func=_bulk_errors(_plan))
    ap = sub.add_parser("apply", help="show the plan, ask, and apply it")
    plan_options(ap)
    ap.add_argument("--yes", action="store_true", help="apply without asking")
    ap.add_argument("--journal", default=None, help="journal file (default: user data dir)")
    ap.set_defaults(func=_bulk_errors(_apply))
    un = sub.add_parser("undo", help="apply the inverse of a journaled run")
    un.add_argument("run", help="the run id (see: campaign-toolkit history)")
    un.add_argument("--yes", action="store_true", help="undo without asking")
    un.add_argument("--journal", default=None, help="journal file (default: user data dir)")
    account_options(un)
    un.set_defaults(func=_bulk_errors(_undo))
    de = sub.add_parser("demo", help="load, export, edit, plan and apply on the sandbox")
    de.add_argument("--out", default="campaign-toolkit-demo", help="folder for the files")
    de.add_argument("--quiet", action="store_true", help="no progress bars")
    de.set_defaults(func=_bulk_errors(_demo))
    hi = sub.add_parser("history", help="list the journaled runs")
    hi.add_argument("--journal", default=None, help="journal file (default: user data dir)")
    hi.set_defaults(func=_bulk_errors(_history))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "seed", None) is None and args.command == "sandbox":
        from .sandbox import DEFAULT_SEED

        args.seed = DEFAULT_SEED
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
