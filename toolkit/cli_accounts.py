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
            f"--account brings its own key and URL: leave out {', '.join(given)}"
        )
    if account == ALL or "," in account:
        raise toolkit.ConfigError(
            f"--account {account}: {args.command} works on one account; name one of"
            f" {', '.join(toolkit.profiles())}"
        )
    return toolkit.connect(profile=account)


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


__all__ = ["accounts", "add_parser", "profile_client"]
