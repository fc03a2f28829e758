"""Command line: ``campaign-toolkit sandbox [--host] [--port] [--db] [--campaigns] [--latency-ms]
[--rate-limit R]``.

Each command is one library call.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .cli_accounts import export_set, is_set_file, plan_set_command, several
from .errors import (
    ApiError,
    AuthError,
    CliError,
    PlanRefused,
    ToolkitError,
    TransportError,
    WorkbookError,
)

if TYPE_CHECKING:  # pragma: no cover
    pass

#: What each exit code means.
EXIT_CODES: dict[int, str] = {
    0: "done",
    1: "not confirmed: nothing sent",
    2: "a mistake in the input (arguments, file, workbook, key, address), a guard refused, or"
    " the live account could not be read whole to plan: nothing sent",
    3: "the run had failed items (see the result workbook or the outcomes)",
    4: "the service could not be reached, or answered an error",
    70: "a bug in the toolkit: rerun with --traceback and report it",
    130: "interrupted",
}
WORKBOOK_SUFFIXES: tuple[str, ...] = (".xlsx", ".xlsm")
#: The guards ``--allow`` lifts (those of :mod:`toolkit.bulk.guards`, named here so that the
#: command line starts without loading pandas).
GUARDS: tuple[str, ...] = ("drop_share", "empty_whitelist", "bulk_archive", "bid_jump")


PREFIX = "campaign-toolkit: "


def explain(exc: BaseException) -> tuple[int, str]:
    """The exit code and the message for an error that ended a command."""
    if isinstance(exc, PlanRefused):
        details = "\n".join(f"  {d}" for d in exc.details[:20])
        if len(exc.details) > 20:
            details += f"\n  ... and {len(exc.details) - 20} more"
        rule = f"{exc.rule}.\n" if exc.rule else ""
        return 2, (
            f"{PREFIX}plan refused by the guard {exc.guard}; nothing sent:\n{details}\n{rule}"
            f"To go ahead anyway, add --allow {exc.guard}"
        )
    if isinstance(exc, ToolkitError):
        # a refused key or a partial read (IncompleteReadError) is the input's mistake
        unreachable = isinstance(exc, (TransportError, ApiError)) and not isinstance(exc, AuthError)
        return (4 if unreachable else 2), f"{PREFIX}{exc}"
    if isinstance(exc, OSError):
        return 2, f"{PREFIX}{_explain_os(exc)}"
    return 70, (
        f"{PREFIX}internal error ({type(exc).__name__}: {exc}); this is a bug in the toolkit:"
        " rerun with --traceback and report it"
    )


def _explain_os(exc: OSError) -> str:
    if isinstance(exc, IsADirectoryError):
        return f"{exc.filename}: is a folder, not a file"
    if isinstance(exc, FileNotFoundError):
        return f"{exc.filename}: no such file or folder"
    if isinstance(exc, PermissionError):
        return f"{exc.filename}: permission denied"
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _sandbox(args: argparse.Namespace) -> int:
    from .sandbox import Sandbox

    if args.action == "reset":
        from .cli_sandbox import reset

        return reset(args)
    started = time.perf_counter()
    try:
        sandbox = Sandbox(
            campaigns=args.campaigns,
            latency_ms=args.latency_ms,
            db=args.db,
            seed=args.seed,
            host=args.host,
            port=args.port,
            auto_approve=args.auto_approve,
            rate_limit=args.rate_limit,
            accounts=args.accounts,
        )
    except ValueError as exc:  # a bad option value: say which
        print(f"campaign-toolkit: sandbox: {exc}", file=sys.stderr)
        return 2
    try:
        sandbox.start()
    except OSError as exc:
        print(f"campaign-toolkit: {exc}", file=sys.stderr)
        return 2
    took = time.perf_counter() - started
    keys = sandbox.api_keys
    print(f"Sandbox running at {sandbox.url} (ready in {took:.1f} s)")
    if args.rate_limit is not None:
        print(f"Rate limit: {args.rate_limit} requests per second per api-key (429 past it)")
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
    """The client; its key from --api-key-file, --ask-api-key or --api-key, else from
    $CAMPAIGN_API_KEY or the config file, so that a refused key says where it came from."""
    import toolkit

    from .client.apikey import ask_key, read_key_file

    account = getattr(args, "account", None)
    if account is not None:
        from .cli_accounts import profile_client

        return profile_client(args, account)
    key = getattr(args, "api_key", None)  # an ApiKey: never shown
    if getattr(args, "api_key_file", None):
        key = read_key_file(args.api_key_file)
    elif getattr(args, "ask_api_key", False):
        key = ask_key()
    elif key:
        print(
            "campaign-toolkit: warning: --api-key is visible to other users of this machine"
            " (ps); prefer $CAMPAIGN_API_KEY, --api-key-file or --ask-api-key",
            file=sys.stderr,
        )
    return toolkit.connect(api_key=key, base_url=getattr(args, "base_url", None))


def _ask(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        print("Not a terminal: pass --yes to apply without asking.", file=sys.stderr)
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def campaign_ids(text: str) -> list[int]:
    """``--campaigns 1000001,1000002``: campaign ids, comma-separated (spaces allowed)."""
    parts = [p.strip() for p in text.split(",")]
    bad = [p for p in parts if not p.isascii() or not p.isdigit() or int(p) <= 0]
    if bad or not text.strip():
        shown = ", ".join(repr(p) for p in bad[:5]) or repr(text)
        shown += f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise argparse.ArgumentTypeError(
            f"{shown} is not a campaign id; give ids separated by commas, like 1000001,1000002"
        )
    return list(dict.fromkeys(int(p) for p in parts))


def _export(args: argparse.Namespace) -> int:
    import toolkit

    from .bulk.workbook import export_workbook

    target = Path(args.file)
    if target.is_dir() or not target.parent.is_dir():
        raise CliError(f"{args.file}: {'is a folder' if target.is_dir() else 'no such folder'}")
    if target.suffix.lower() != ".xlsx":
        raise CliError(f"{args.file}: export writes an Excel workbook; name it .xlsx")
    if several(args.account):
        return export_set(args)
    client = _client(args)
    account = toolkit.load_account(client, args.campaigns, progress=False)
    failures = account.failures
    if len(failures):
        ids = failures["campaign_id"].dropna().astype(int).tolist()
        missing = failures["error"].astype(str).eq("NotFoundError")
        unknown = failures.loc[missing, "campaign_id"].dropna().astype(int).tolist()
        if unknown:
            raise CliError(
                f"unknown campaign id(s) {', '.join(map(str, unknown))}: not in the account;"
                " nothing written"
            )
        first = failures.iloc[0]
        more = f" and {len(ids) - 10} more" if len(ids) > 10 else ""
        raise CliError(
            f"could not load {len(failures)} part(s) of the account"
            + (f" (campaigns {', '.join(map(str, ids[:10]))}{more})" if ids else "")
            + f": {first['operation']}: {first['message']}; nothing written"
        )
    path = export_workbook(account, args.file)
    print(f"Exported {path}")
    return 0


def _workbook_path(text: str) -> Path:
    """The workbook a command reads: an existing ``.xlsx`` file, or a :class:`CliError`."""
    path = Path(text)
    if not path.exists():
        raise CliError(f"{text}: no such file")
    if path.is_dir():
        raise CliError(f"{text}: is a folder, not a workbook (.xlsx)")
    if path.suffix.lower() not in WORKBOOK_SUFFIXES:
        raise CliError(
            f"{text}: not an Excel workbook; plan and apply read .xlsx files (an exported"
            " account, or an action workbook from templates/); save it as .xlsx"
        )
    from .xlsx.archive import check_file

    try:
        check_file(path)  # says what the file is instead: CSV, .xls, .ods, empty, truncated
    except WorkbookError as exc:
        raise CliError(f"{text}: {exc.problems[0].message}") from None
    return path


class _Planned(NamedTuple):
    """A command's plan, and for an exported account's workbook its desired tables and
    references (for the result workbook; None for an action workbook)."""

    plan: Any
    desired: dict[str, Any] | None = None
    refs: dict[str, Any] | None = None


def _make_plan(args: argparse.Namespace, client: Any) -> _Planned:
    import zipfile

    from .bulk import make_plan
    from .bulk.workbook import read_workbook
    from .bulk.workbook.actions import is_action_workbook, plan_actions

    path = _workbook_path(args.file)
    try:
        actions = is_action_workbook(path)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise CliError(f"{args.file}: not a readable .xlsx workbook ({exc})") from None
    if actions:
        journal = getattr(args, "journal", None) or "default"
        planned = plan_actions(
            client, path, allow=args.allow or (), again=args.again, journal=journal
        )
        return _Planned(planned)
    tables = read_workbook(path)
    plan = make_plan(client, tables, prefer=args.prefer, allow=args.allow or ())
    return _Planned(plan, dict(tables.desired), dict(tables.refs))


def _plan(args: argparse.Namespace) -> int:
    from .cli_show import changes_path, show_plan

    _workbook_path(args.file)  # before connecting (which may start a sandbox)
    changes_path(args)
    if is_set_file(args.file):
        return plan_set_command(args, _ask, apply=False)
    show_plan(_make_plan(args, _client(args)).plan, args)
    return 0


def _apply(args: argparse.Namespace) -> int:
    from .cli_show import changes_path, show_plan, show_result

    _workbook_path(args.file)
    changes_path(args)
    if is_set_file(args.file):
        return plan_set_command(args, _ask, apply=True)
    client = _client(args)
    plan, desired, refs = _make_plan(args, client)
    show_plan(plan, args)
    if not len(plan):
        return 0
    if not _ask(f"Apply {len(plan)} call(s)?", args.yes):
        print("Nothing sent.")
        return 1
    result = plan.apply(client, journal=args.journal or "default")
    show_result(result, args)
    if desired is not None:
        from .bulk.apply import write_result_workbook

        report = Path(args.file).with_suffix(".result.xlsx")
        write_result_workbook(result, desired, report, refs)
        print(f"Outcome of each row: {report}")
    return 0 if result.ok else 3


#: ``report bids --format`` -> the report's method that writes it.
REPORT_FORMATS: dict[str, str] = {"html": "to_html", "xlsx": "to_excel", "pdf": "to_pdf"}


def _input_file(text: str, what: str) -> Path:
    """An existing file the command reads, or a :class:`CliError` naming ``what`` it is."""
    path = Path(text)
    if not path.is_file():
        raise CliError(f"{text}: {'is a folder' if path.is_dir() else 'no such file'} ({what})")
    return path


def _report_bids(args: argparse.Namespace) -> int:
    import toolkit

    from .reports.units import parse_ctr
    from .reports.zones import DEFAULT_TOLERANCE, check_bounds

    path = Path(args.output)
    fmt = args.format or path.suffix.lower().lstrip(".")
    if fmt not in REPORT_FORMATS:
        raise CliError(f"{args.output}: name it .html, .xlsx or .pdf, or give --format")
    if path.is_dir() or not path.parent.is_dir():
        raise CliError(f"{args.output}: {'is a folder' if path.is_dir() else 'no such folder'}")
    try:
        ctr = parse_ctr(args.ctr)
        check_bounds(args.overpay, DEFAULT_TOLERANCE)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    history = None if args.no_history else "default"
    if several(args.account):
        from .cli_sets import report_set

        return report_set(args, path, REPORT_FORMATS[fmt], ctr=ctr, history=history)
    from .cli_rules import one_value

    stats, payouts = one_value(args.stats, "--stats"), one_value(args.payouts, "--payouts")
    stats = None if stats is None else _input_file(stats, "the statistics export")
    if payouts is not None and stats is None:
        raise CliError("--payouts: the payouts go with --stats FILE (the tracker's statistics)")
    payouts = None if payouts is None else _input_file(payouts, "the payouts table")
    report = toolkit.bid_report(
        _client(args), args.campaigns, overpay=args.overpay, ctr=ctr, history=history,
        progress=sys.stderr.isatty(), stats=stats, payouts=payouts, include=args.include,
    )  # fmt: skip
    failed = report.account.failures
    unknown = failed.loc[failed["error"].astype(str) == "NotFoundError", "campaign_id"]
    if len(unknown):
        raise CliError(f"unknown campaign id(s) {', '.join(map(str, unknown))}; nothing written")
    if stats is not None:
        from .reports.profit import zone_line

        print(zone_line(report.frame))
    print(f"{report}\nWrote {getattr(report, REPORT_FORMATS[fmt])(path)}")
    return 0


def _report_parser(sub: argparse._SubParsersAction) -> None:
    rp = sub.add_parser("report", help="reports on the account")
    bids = rp.add_subparsers(dest="report", required=True).add_parser(
        "bids", help="country bids against the minimum and recommended bid (html, xlsx, pdf)"
    )
    bids.add_argument("-o", "--output", required=True, help="the file to write")
    bids.add_argument("--format", choices=tuple(REPORT_FORMATS), help="default: from -o")
    bids.add_argument("--campaigns", type=campaign_ids, default=None, help="ids, comma-separated")
    bids.add_argument("--overpay", type=float, default=1.5, help="overpaying past X x recommended")
    bids.add_argument("--ctr", default=None, help="click-through rate (0.01, or push=0.01,...)")
    bids.add_argument("--no-history", action="store_true", help="do not keep the prices asked")
    bids.add_argument(
        "--include", choices=("live", "all"), default="live",
        help="live: started and approved campaigns (default); all: every campaign",
    )  # fmt: skip
    bids.add_argument("--stats", action="append", help="tracker statistics: profit per bid")
    bids.add_argument("--payouts", action="append", help="payouts (campaign_id,country,payout)")
    _account_options(bids)
    bids.set_defaults(func=_report_bids)


def _run_parsers(sub: argparse._SubParsersAction) -> None:
    from .cli_rules import Conventions
    from .cli_runs import add_run_parsers

    conventions = Conventions(_account_options, _journal_option, _client, _ask, GUARDS)
    add_run_parsers(sub, conventions)  # undo, repair, history: toolkit/cli_runs.py


def _rules_parser(sub: argparse._SubParsersAction) -> None:
    from .cli_rules import Conventions, add_rules_parser
    from .cli_sets import rules_set

    conventions = Conventions(_account_options, _journal_option, _client, _ask, GUARDS, rules_set)
    add_rules_parser(sub, conventions)  # rules over tracker statistics: toolkit/cli_rules.py


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(Path(args.out), quiet=args.quiet)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="campaign-toolkit",
        description="Campaign Management toolkit.",
        epilog="Exit codes: 0 done; 1 not confirmed; 2 a mistake in the input, the workbook,"
        " the key or the address (the message says what and where), a guard refused the"
        " plan, or a part of the live account could not be read to plan it; 3 a run with"
        " failed items; 4 the service could not be reached or answered an error; 70 a bug"
        " in the toolkit (rerun with --traceback and report it); 130 interrupted.",
    )
    parser.add_argument(
        "--traceback", action="store_true", help="show the Python traceback of an error"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _sandbox_parser(sub)
    _export_parser(sub)
    _plan_parsers(sub)
    _run_parsers(sub)
    _report_parser(sub)
    _rules_parser(sub)
    from .cli_accounts import add_parser as accounts_parser

    accounts_parser(sub)
    de = sub.add_parser("demo", help="load, export, edit, plan and apply on the sandbox")
    de.add_argument(
        "--out",
        default="campaign-toolkit-demo",
        metavar="DIR",
        help="folder for the files (campaign-toolkit-demo in the current folder)",
    )
    de.add_argument("--quiet", action="store_true", help="no progress bars")
    de.set_defaults(func=_demo)
    return parser


def _sandbox_parser(sub: argparse._SubParsersAction) -> None:
    sb = sub.add_parser(
        "sandbox",
        help="run the local sandbox of the service; 'sandbox reset' starts the built-in one over",
    )
    sb.add_argument(
        "action",
        nargs="?",
        choices=("reset",),
        help="reset: seed the built-in sandbox's state (or --db FILE) anew, then stop",
    )
    sb.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    sb.add_argument("--port", type=int, default=8765, help="port to listen on (8765; 0: any)")
    sb.add_argument("--db", default=None, help="SQLite file that keeps state across restarts")
    sb.add_argument("--campaigns", type=int, default=50, help="campaigns of the demo account")
    sb.add_argument("--latency-ms", type=float, default=0, help="latency added to each request")
    sb.add_argument("--seed", type=int, default=None, help="seed of the demo data")
    sb.add_argument(
        "--rate-limit",
        type=int,
        default=None,
        metavar="R",
        help="answer 429 past R /api/ requests per second per api-key (default: no limit)",
    )
    sb.add_argument(
        "--accounts",
        type=int,
        default=2,
        metavar="N",
        help="accounts to seed, each with its own key (default 2; the first has --campaigns"
        " campaigns, the others a tenth of them, at least 3)",
    )
    sb.add_argument("--auto-approve", action="store_true", help="approve new campaigns/creatives")
    sb.add_argument("--once", action="store_true", help="start, print, and stop (for checks)")
    sb.set_defaults(func=_sandbox)


def _account_options(p: argparse.ArgumentParser) -> None:
    from .client.apikey import FROM_CLI_OPTION, ApiKey

    key = p.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key",
        type=lambda text: ApiKey(text, FROM_CLI_OPTION),
        default=None,
        metavar="KEY",
        help="the key; other users of the machine see it in ps, so prefer"
        " $CAMPAIGN_API_KEY, --api-key-file or --ask-api-key (default: $CAMPAIGN_API_KEY,"
        " the config file, else the built-in sandbox)",
    )
    key.add_argument(
        "--api-key-file",
        default=None,
        metavar="PATH",
        help="read the key from the first line of a file ('-': standard input)",
    )
    key.add_argument(
        "--ask-api-key", action="store_true", help="type the key at a prompt that does not echo"
    )
    p.add_argument("--base-url", default=None, help="service URL (default: env, config)")
    p.add_argument(
        "--account",
        default=None,
        metavar="NAME",
        help="a named account of the config file's [profiles.NAME] tables, with its own key and"
        " URL (with no key configured: the built-in sandbox's accounts, such as"
        " northwind-media); 'all' or names separated by commas for export, report bids,"
        " rules, and a workbook or run of several accounts; see docs/accounts.md",
    )


def _journal_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--journal", default=None, help="journal file (default: user data dir)")


def _export_parser(sub: argparse._SubParsersAction) -> None:
    ex = sub.add_parser("export", help="export the account to an editable workbook")
    ex.add_argument("file", help="the workbook to write (.xlsx)")
    ex.add_argument(
        "--campaigns",
        type=campaign_ids,
        default=None,
        help="only these campaigns: ids separated by commas (1000001,1000002)",
    )
    _account_options(ex)
    ex.set_defaults(func=_export)


def _plan_options(p: argparse.ArgumentParser) -> None:
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
        choices=GUARDS,
        help="lift a guard (repeatable): drop_share, empty_whitelist, bulk_archive, bid_jump (a"
        " bid raised past 3x, cut by more than two thirds, or below the minimum)",
    )
    p.add_argument(
        "--again",
        action="store_true",
        help="an action workbook's +10%% or x1.2 bids that a run applied already: apply them"
        " again (each time on the new bid)",
    )
    from .cli_show import add_show_options

    add_show_options(p)  # --max-calls, --changes FILE, --all
    _account_options(p)


def _plan_parsers(sub: argparse._SubParsersAction) -> None:
    pl = sub.add_parser("plan", help="show the calls an edited workbook means")
    _plan_options(pl)
    pl.set_defaults(func=_plan)
    ap = sub.add_parser("apply", help="show the plan, ask, and apply it")
    _plan_options(ap)
    ap.add_argument("--yes", action="store_true", help="apply without asking")
    _journal_option(ap)
    ap.set_defaults(func=_apply)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a user's mistake prints what is wrong (never a traceback) and
    returns a non-zero exit code (see :data:`EXIT_CODES`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "seed", None) is None and args.command == "sandbox":
        from .sandbox import DEFAULT_SEED

        args.seed = DEFAULT_SEED
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\ncampaign-toolkit: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - every error becomes a message and a code
        if args.traceback:
            raise
        code, message = explain(exc)
        print(message, file=sys.stderr)
        return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
