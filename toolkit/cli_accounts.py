"""``campaign-toolkit accounts``: the named accounts, loaded together; ``--account`` of the
other commands.

>>> main(["accounts"])                                     # the profiles   # doctest: +SKIP
>>> main(["accounts", "--load", "--save", "snapshots/agency"])             # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def profile_client(args: argparse.Namespace, account: str) -> Any:
    """The client of the one account ``--account`` names; a key or URL given too is refused,
    and so are ``all`` and comma lists where a command works on one account."""
    import toolkit

    from .client.profiles import ALL

    _refuse_key_options(args, "--account")
    if account == ALL or "," in account:
        raise toolkit.ConfigError(
            f"--account {account}: {args.command} works on one account; name one of"
            f" {', '.join(toolkit.profiles())}"
        )
    return toolkit.connect(profile=account)


def several(account: str | None) -> bool:
    """Whether ``--account`` names several accounts (``all``, or a comma list)."""
    from .client.profiles import ALL

    return account is not None and (account.strip() == ALL or "," in account)


def _refuse_key_options(args: argparse.Namespace, what: str) -> None:
    """``--account`` brings each account's key and URL (its profile): a key or URL option
    given too is refused, naming the options."""
    import toolkit

    given = [
        option
        for option, attr in (
            ("--api-key", "api_key"),
            ("--api-key-file", "api_key_file"),
            ("--ask-api-key", "ask_api_key"),
            ("--base-url", "base_url"),
        )
        if getattr(args, attr, None)
    ]
    if given:
        raise toolkit.ConfigError(
            f"{what} uses each account's own key and URL (its profile): leave out"
            f" {', '.join(given)}"
        )


def _names(args: argparse.Namespace) -> list[str] | None:
    """The accounts ``--account`` restricts a set to (None: all of them)."""
    account = getattr(args, "account", None)
    if account is None or account.strip() == "all":
        return None
    return [a.strip() for a in account.split(",") if a.strip()]


def export_set(args: argparse.Namespace) -> int:
    """``export --account all|a,b FILE``: one workbook of several accounts, ``account``
    first on every sheet; nothing written when an account fails to load."""
    import toolkit

    from .bulk.workbook import export_workbook
    from .client.profiles import pick_profiles

    _refuse_key_options(args, "export --account " + args.account)
    if args.campaigns:
        raise toolkit.ConfigError("--campaigns applies to one account; export the set whole")
    loaded = toolkit.load_accounts(pick_profiles(args.account, toolkit.profiles()), progress=False)
    if len(loaded.failures):
        first = loaded.failures.iloc[0]
        raise toolkit.ToolkitError(
            f"could not load {len(loaded.failures)} part(s) of the accounts (first: account"
            f" {first['account']}, {first['operation']}: {first['message']}); nothing written"
        )
    path = export_workbook(loaded, args.file)
    counts = loaded.campaigns.groupby("account", sort=False).size()
    print(
        f"Exported {path}: {len(loaded)} accounts ("
        + ", ".join(f"{n} {int(counts.get(n, 0))} campaigns" for n in loaded.names)
        + ")"
    )
    return 0


def is_set_file(path: Any) -> bool:
    """Whether the workbook at ``path`` holds several accounts (its ``_meta`` says so)."""
    from .bulk.workbook.account import ACCOUNTS_KEY
    from .bulk.workbook.cells import Book
    from .bulk.workbook.hidden import read_meta

    try:
        with Book(path) as book:
            return bool(read_meta(book).get(ACCOUNTS_KEY, "").strip())
    except Exception:  # noqa: BLE001 - the one-account reader says what is wrong with it
        return False


def show_set(plans: Any, args: argparse.Namespace) -> None:
    """Each account's plan as ``plan`` shows one, then ``--changes`` for the whole set."""
    from .cli_show import changes_path, show_plan, write_changes

    quiet = argparse.Namespace(**{**vars(args), "changes": None})
    print(plans.summary().splitlines()[0])
    for name, plan in plans.plans.items():
        show_plan(plan, quiet, f"account {name}")
    for warning in plans.warnings:
        print(f"warning: {warning}")
    path = changes_path(args)
    if path is not None:
        print(f"Every change ({len(plans.changes())}): {write_changes(plans, path)}")


def show_set_result(result: Any, args: argparse.Namespace) -> int:
    """What each account's run did; exit 0 when every change was applied, else 3."""
    from .cli_show import show_result

    for name, one in result.results.items():
        print(f"account {name}:")
        show_result(one, args)
    for name, error in result.errors.items():
        print(f"account {name}: stopped: {error}", file=sys.stderr)
    if result.results:
        print(
            f"Run of the set {result.set_id}: `campaign-toolkit undo {result.set_id}` undoes"
            " it (--account NAME: one account)"
        )
    return 0 if result.ok else 3


def plan_set_command(args: argparse.Namespace, ask: Any, apply: bool) -> int:
    """``plan``/``apply`` of a workbook of several accounts: each account planned with its
    own profile's client, shown, asked once, applied as one run of the set."""
    from .bulk.workbook import plan_accounts

    _refuse_key_options(args, "a workbook of several accounts")
    plans = plan_accounts(
        args.file, accounts=_names(args), prefer=args.prefer, allow=args.allow or ()
    )
    show_set(plans, args)
    if not apply or not len(plans):
        return 0
    if not ask(f"Apply {len(plans)} call(s) in {len(plans.plans)} account(s)?", args.yes):
        print("Nothing sent.")
        return 1
    return show_set_result(plans.apply(journal=args.journal or "default"), args)


def way_back_set(args: argparse.Namespace, ask: Any, undo: bool) -> int:
    """``undo SET`` / ``repair SET``: every account's run of the set (``--account``: some),
    each with its profile's client; shown, asked once, applied as a run of a new set."""
    from .bulk.journal import open_journal
    from .bulk.plan_set import apply_set
    from .bulk.undo_set import repair_set_plan, undo_set_plan

    _refuse_key_options(args, f"{'undo' if undo else 'repair'} of a set")
    book = open_journal(args.journal or None)
    if undo:
        plans = undo_set_plan(args.run, accounts=_names(args), journal=book, prefer=args.prefer)
    else:
        plans = repair_set_plan(args.run, accounts=_names(args), journal=book)
    show_set(plans, args)
    if not len(plans):
        print(f"Nothing to {'undo' if undo else 'repair'} in the set {args.run}.")
        return 0
    if args.dry_run:
        print("Dry run: nothing sent.")
        return 0
    title = f"{'Undo' if undo else 'Repair'} of the set {args.run}"
    if not ask(f"{title}: apply {len(plans)} call(s)?", args.yes):
        print("Nothing sent.")
        return 1
    return show_set_result(apply_set(plans, journal=book), args)


def accounts(args: argparse.Namespace) -> int:
    """List the accounts; with ``--load``, load them together, show each one's campaigns and
    failures, and with ``--save`` keep the set as a folder. Exit 3 when an account failed."""
    import toolkit

    from .client.profiles import pick_profiles

    names = pick_profiles(args.account, toolkit.profiles())
    if not args.load:
        for name in names:
            print(name)
        return 0
    loaded = toolkit.load_accounts(names, mode=args.mode, progress=not args.quiet)
    print(repr(loaded))
    if args.save:
        folder = loaded.save(args.save)
        print(f"Saved the set of {len(loaded)} accounts to {folder}")
    whole = loaded.failures["campaign_id"].isna()
    if len(loaded.failures):
        print(
            f"{int(whole.sum())} account(s) not loaded, {int((~whole).sum())} failed call(s):"
            " see the lines above",
            file=sys.stderr,
        )
        return 3
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``accounts`` command's options."""
    p = sub.add_parser(
        "accounts",
        help="list the named accounts ([profiles.NAME] of the config file); --load loads them",
    )
    p.add_argument(
        "--account",
        default="all",
        metavar="NAMES",
        help="'all' (default), a name, or names separated by commas",
    )
    p.add_argument("--load", action="store_true", help="load every table of each account")
    p.add_argument("--mode", choices=("full", "short", "count"), default="full")
    p.add_argument("--save", default=None, metavar="FOLDER", help="with --load: save the set")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=accounts)


__all__ = [
    "accounts",
    "add_parser",
    "export_set",
    "is_set_file",
    "plan_set_command",
    "profile_client",
    "several",
    "way_back_set",
]
