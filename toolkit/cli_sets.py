"""``report bids`` and ``rules`` over a set of accounts (``--account all`` or ``--account
a,b``): one report of the set, and the rules' plans of every account asked once and applied
as one run of the set, each account with its own profile's key.

Statistics over a set say whose they are, one of two ways (never both):

- one export with an ``account`` column (the profile names): ``rules RULES STATS.csv
  --account all``, ``report bids --stats STATS.csv --account all``;
- one export per account: ``--stats NAME=FILE`` (repeatable).

>>> main(["rules", "rules.yaml", "all.csv", "--account", "all"])            # doctest: +SKIP
>>> main(["rules", "rules.yaml", "--account", "a,b", "--stats", "a=a.csv",
...       "--stats", "b=b.csv", "--apply"])                                  # doctest: +SKIP
>>> main(["report", "bids", "-o", "bids.html", "--account", "all"])          # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_accounts import _refuse_key_options, show_set, show_set_result
from .errors import CliError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .cli_rules import Conventions

#: The column of a statistics export that names each row's account.
ACCOUNT = "account"


def _pair(text: str) -> tuple[str, str] | None:
    """``NAME=FILE`` as (name, file) when the part before ``=`` can name an account; None
    when ``text`` is a file's name (``./a=b.csv``)."""
    from .client.profiles import ALL, NAME

    name, eq, file = text.partition("=")
    if not eq or not NAME.fullmatch(name.strip()) or name.strip() == ALL:
        return None
    if Path(text).exists():
        raise CliError(
            f"{text}: a file of that name exists and it reads as NAME=FILE too; write"
            f" ./{text} for the file, or rename it"
        )
    return name.strip(), file.strip()


def _existing(text: str, what: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise CliError(f"{text}: {'is a folder' if path.is_dir() else 'no such file'} ({what})")
    return path


def per_account(
    values: list[str], option: str, names: list[str], what: str
) -> tuple[Path | None, dict[str, Path]]:
    """``option``'s values over the set: one file for every account (with an ``account``
    column), or ``NAME=FILE`` per account; mixing them, two files, a name twice or a name
    not in the set is refused in one line."""
    pairs = [(v, _pair(v)) for v in values]
    files = [v for v, p in pairs if p is None]
    named = [p for _, p in pairs if p is not None]
    if files and named or len(files) > 1:
        raise CliError(
            f"{option}: give {what} one way: one file with an {ACCOUNT!r} column, or"
            f" {option} NAME=FILE for each account"
        )
    if files:
        return _existing(files[0], what), {}
    out: dict[str, Path] = {}
    for name, file in named:
        if name not in names:
            raise CliError(
                f"{option} {name}={file}: {name!r} is not an account of the set; the accounts"
                f" are {', '.join(names)}"
            )
        if name in out:
            raise CliError(f"{option}: account {name!r} given twice; give one file per account")
        out[name] = _existing(file, f"{what} of account {name}")
    return None, out


def _account_column(raw: pd.DataFrame, path: Path) -> str:
    found = [c for c in raw.columns if str(c).strip().lower() == ACCOUNT]
    if len(found) != 1:
        why = "no" if not found else "more than one"
        raise CliError(
            f"{path}: {why} {ACCOUNT!r} column; over several accounts each row names its"
            " account (a column 'account' of profile names), or give --stats NAME=FILE for"
            " each account"
        )
    return str(found[0])


def split_stats(path: Path, names: list[str], read: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """The statistics export at ``path`` (with an ``account`` column) read whole and checked
    (its problems named by the file's lines), then split per account: each account's
    statistics frame, read with the options ``read`` (``columns``, ``date_format``...)."""
    import numpy as np

    from .frames.set_inputs import by_account
    from .stats import read_stats
    from .stats.read import parse, read_cells

    raw = read_cells(path)
    column = _account_column(raw, path)
    whole = parse(raw.drop(columns=column), where=str(path), **read)  # bad values: file lines
    left_out = [line - 2 for line, _ in whole.attrs.get("skipped", [])]
    raw = raw.drop(index=[i for i in left_out if 0 <= i < len(raw)])
    text = raw.astype(str).apply(lambda c: c.str.strip())
    raw = raw[~np.asarray((text == "").all(axis=1))]
    raw = raw.rename(columns={column: ACCOUNT})
    raw[ACCOUNT] = raw[ACCOUNT].where(raw[ACCOUNT].astype(str).str.strip() != "", None)
    parts = by_account(raw, names, f"{path}")
    with warnings.catch_warnings():  # the totals rows were named once, by the file's lines
        warnings.simplefilter("ignore")
        return {name: read_stats(part, **read) for name, part in parts.items()}


def _load_set(names: list[str]) -> Any:
    """The accounts loaded together; one that failed to load stops the command."""
    import toolkit

    loaded = toolkit.load_accounts(names, progress=False)
    if len(loaded.failures):
        first = loaded.failures.iloc[0]
        raise CliError(
            f"could not load {len(loaded.failures)} part(s) of the accounts (first: account"
            f" {first['account']}, {first['operation']}: {first['message']}); nothing written"
        )
    return loaded


def _set_names(args: argparse.Namespace, what: str) -> list[str]:
    import toolkit

    from .client.profiles import pick_profiles

    _refuse_key_options(args, f"{what} --account {args.account}")
    if getattr(args, "campaigns", None):
        raise CliError(
            "--campaigns names one account's campaigns (ids are unique per account only);"
            " leave it out over a set, or give --account NAME"
        )
    return pick_profiles(args.account, toolkit.profiles())


def report_set(args: argparse.Namespace, path: Path, method: str, **options: Any) -> int:
    """``report bids --account all|a,b``: one report of the set (``account`` first on every
    row), each account's prices asked with its own profile's key, written with ``method``
    (``to_html``...); ``options`` (``ctr``, ``history``) go to :func:`toolkit.bid_report`."""
    import toolkit

    names = _set_names(args, "report bids")
    whole, stats = per_account(args.stats or [], "--stats", names, "the statistics export")
    one, payouts = per_account(args.payouts or [], "--payouts", names, "the payouts table")
    if one is not None:
        raise CliError(
            f"--payouts {one}: over several accounts give --payouts NAME=FILE for each account"
        )
    if payouts and not (whole or stats):
        raise CliError("--payouts: the payouts go with --stats (the tracker's statistics)")
    given = split_stats(whole, names, {}) if whole is not None else stats
    report = toolkit.bid_report(
        _load_set(names), stats=given or None, payouts=payouts or None, overpay=args.overpay,
        include=args.include, progress=sys.stderr.isatty(), **options,
    )  # fmt: skip
    if given:
        from .reports.profit import zone_line

        print(zone_line(report.frame))
    print(f"{report}\nWrote {getattr(report, method)(path)}")
    return 0


def _rules_inputs(
    args: argparse.Namespace, names: list[str], read: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Path], dict[str, Any]]:
    """Each account's statistics, its payouts, and the read options left for the readers."""
    if args.stats is not None and args.stats_of:
        raise CliError(
            f"statistics given twice ({args.stats} and --stats): give one export with an"
            f" {ACCOUNT!r} column, or --stats NAME=FILE for each account"
        )
    if args.stats is None and not args.stats_of:
        raise CliError("no statistics: give STATS (with an 'account' column) or --stats NAME=FILE")
    whole, stats = per_account(args.stats_of or [], "--stats", names, "the statistics export")
    if args.stats is not None:  # STATS is a file, whatever its name
        whole = Path(args.stats)
    one, payouts = per_account(args.payouts or [], "--payouts", names, "the payouts table")
    if one is not None:
        raise CliError(
            f"--payouts {one}: over several accounts give --payouts NAME=FILE for each account"
        )
    if whole is None:
        return dict(stats), payouts, read
    from .cli_rules import stats_path

    return split_stats(stats_path(str(whole)), names, read), payouts, {}


def _checked_outputs(args: argparse.Namespace) -> Path | None:
    """Where ``--decisions`` writes (checked first); ``--actions`` is one account's."""
    from .cli_rules import decisions_path
    from .cli_show import changes_path

    if args.actions is not None:
        raise CliError(
            "--actions writes one account's action workbook; over several accounts leave it out"
            " (or give --account NAME)"
        )
    changes_path(args)
    return decisions_path(args.decisions)


def rules_set(args: argparse.Namespace, rules: list[Any], conv: Conventions) -> int:
    """``rules ... --account all|a,b``: each account's statistics evaluated against it with
    its own profile's key, the plans shown and asked once, applied as one run of the set."""

    from .cli_rules import counts_text, read_options, write_decisions
    from .client.client import profile_clients
    from .rules.over_set import evaluate_rules_set

    names = _set_names(args, "rules")
    out = _checked_outputs(args)
    read = read_options(argparse.Namespace(**{**vars(args), "payouts": None}))
    stats, payouts, read = _rules_inputs(args, names, read)
    journal = args.journal or "default"
    clients = profile_clients(names)
    evaluated = evaluate_rules_set(
        rules, stats, clients, as_of=args.as_of, allow=args.allow or (), journal=journal,
        payouts=payouts or None, **read,
    )  # fmt: skip
    plans, decisions = evaluated
    for name, result in evaluated.results.items():
        if result.fit.none_known:  # statistics of another account's campaigns
            raise CliError(f"account {name}: {result.fit.missing_line()}")
    show_set(plans, args)
    print(counts_text(decisions, rules))
    if out is not None:
        print(f"Decisions with their evidence: {write_decisions(decisions, out)}")
    if not len(plans):
        return 0
    if not args.apply:
        print("Nothing sent (add --apply to apply the plans).")
        return 0
    if not conv.ask(f"Apply {len(plans)} call(s) in {len(plans.plans)} account(s)?", args.yes):
        print("Nothing sent.")
        return 1
    result = plans.apply(journal=journal)
    code = show_set_result(result, args)
    if out is not None:
        done = write_decisions(_with_outcomes(decisions, result), out)
        print(f"Decisions with their evidence and outcomes: {done}")
    return code


def _with_outcomes(decisions: pd.DataFrame, result: Any) -> pd.DataFrame:
    """Each account's decisions with what became of them in its run (none for an account
    whose run did not start)."""
    import pandas as pd

    from .rules import with_outcomes

    parts = []
    for name, part in decisions.groupby(ACCOUNT, sort=False):
        own = part.drop(columns=ACCOUNT)
        run = result.results.get(name)
        done = with_outcomes(own, run) if run is not None else own
        parts.append(done.assign(**{ACCOUNT: name}))
    if not parts:
        return decisions
    out = pd.concat(parts, ignore_index=True)
    return out[[ACCOUNT, *[c for c in out.columns if c != ACCOUNT]]]


__all__ = ["ACCOUNT", "per_account", "report_set", "rules_set", "split_stats"]
