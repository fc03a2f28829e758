"""Command line: ``campaign-toolkit rules RULES.yaml STATS.csv [--apply] [--yes]
[--decisions OUT.csv|.xlsx] [--as-of DATE] [--date-format FMT] [--decimal MARK]
[--campaign-map FILE] [--payouts FILE] [--allow GUARD ...]``.

One library call, :func:`toolkit.evaluate_rules`: the rules over the tracker statistics,
checked against the live account, become a plan whose preview shows each change with the
rule and the numbers that decided it. Without ``--apply`` nothing is sent; with it the
command asks (``--yes`` does not), applies, and journals the run so that
``campaign-toolkit undo RUN_ID`` undoes it; the journal also tells the rules which steps
they made already (a ``factor`` rule steps an item once per evidence). Connection,
confirmation, messages and exit codes are those of :mod:`toolkit.cli`, which hands its
helpers over when it registers the command (:class:`Conventions`), so that this module does
not import the one that imports it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_show import output_path
from .errors import CliError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: The files ``--decisions`` writes, by suffix.
DECISION_SUFFIXES: tuple[str, ...] = (".csv", ".xlsx")


@dataclass(frozen=True)
class Conventions:
    """What the command borrows from :mod:`toolkit.cli`: the account options (key, base URL)
    and the journal option of a parser, the client they give (``connect(args)``; no key
    configured means the built-in sandbox), the confirmation (``ask(question, yes)``), the
    guards ``--allow`` may lift, and the command over several accounts
    (``over_set(args, rules, conventions)``; None: one account only)."""

    account_options: Callable[[argparse.ArgumentParser], None]
    journal_option: Callable[[argparse.ArgumentParser], None]
    connect: Callable[[argparse.Namespace], Any]
    ask: Callable[[str, bool], bool]
    guards: tuple[str, ...]
    over_set: Callable[[argparse.Namespace, list[Any], Conventions], int] | None = None


def as_of_date(text: str) -> dt.date:
    """``--as-of 2026-01-31``: the last day of the rules' windows."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date; give it as YYYY-MM-DD, like 2026-01-31"
        ) from None


def stats_path(text: str) -> Path:
    """The statistics export the command reads: an existing file, or a :class:`CliError`."""
    path = Path(text)
    if not path.exists():
        raise CliError(f"{text}: no such file (the statistics export: CSV, XLSX or Parquet)")
    if path.is_dir():
        raise CliError(f"{text}: is a folder, not a statistics export (CSV, XLSX or Parquet)")
    return path


#: Suffixes of a rules file (a workbook is rules when it has a ``rules`` sheet).
RULES_SUFFIXES: tuple[str, ...] = (".yaml", ".yml", ".json")
#: Suffixes of a statistics export that is never a rules file (a workbook may be either).
STATS_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".txt", ".parquet", ".pq")
WORKBOOKS: tuple[str, ...] = (".xlsx", ".xlsm")


def _has_rules_sheet(path: Path) -> bool | None:
    """Whether the workbook at ``path`` has a ``rules`` sheet; None when it cannot tell."""
    import re
    import zipfile

    try:
        with zipfile.ZipFile(path) as book:
            info = book.getinfo("xl/workbook.xml")
            if info.file_size > 1_000_000:  # a sheet list, not a payload
                return None
            text = book.read(info).decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    names = re.findall(r"<(?:\w+:)?sheet\b[^>]*\bname=\"([^\"]*)\"", text)
    return any(n.strip().lower() == "rules" for n in names)


def _looks_like(path: Path) -> str | None:
    """``rules`` or ``statistics`` when the file's name (and a workbook's sheets) tell."""
    suffix = path.suffix.lower()
    if suffix in RULES_SUFFIXES:
        return "rules"
    if suffix in STATS_SUFFIXES:
        return "statistics"
    if suffix in WORKBOOKS and path.is_file():
        has = _has_rules_sheet(path)
        return None if has is None else "rules" if has else "statistics"
    return None


def check_order(rules: str, stats: str) -> None:
    """A :class:`CliError` in one line when the rules file and the statistics export are
    given the other way round (``rules STATS RULES``)."""
    if _looks_like(Path(rules)) == "statistics" and _looks_like(Path(stats)) == "rules":
        raise CliError(
            f"{rules} looks like statistics and {stats} like rules: the rules file comes"
            f" first (campaign-toolkit rules {stats} {rules})"
        )


def is_empty_file(path: str | os.PathLike[str]) -> bool:
    """Whether a YAML or JSON rules file holds nothing but blanks and comments."""
    p = Path(path)
    if p.suffix.lower() in WORKBOOKS or not p.is_file():
        return False
    try:
        text = p.read_bytes()[:65536].decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def some_rules(rules: list[Any], path: str | os.PathLike[str] | None = None) -> list[Any]:
    """The rules read, or a :class:`CliError` when the file (at ``path``) is empty, holds
    no rules, or none enabled."""
    if not rules and path is not None and is_empty_file(path):
        raise CliError(f"{path}: the rules file is empty; write rules in it (see docs/rules.md)")
    if not rules:
        raise CliError("the rules file holds no rules")
    if not any(r.enabled for r in rules):
        raise CliError(f"the rules file holds no enabled rules ({len(rules)} disabled)")
    return rules


def one_value(values: list[str] | None, option: str) -> str | None:
    """The one value of a repeatable option where one account takes one (None: not given)."""
    if not values:
        return None
    if len(values) > 1:
        raise CliError(
            f"{option} given {len(values)} times: one account takes one file (several accounts:"
            f" --account all with {option} NAME=FILE per account)"
        )
    return values[0]


def date_format(text: str) -> str:
    """``--date-format %d/%m/%Y``: a strptime format with at least one directive."""
    if "%" not in text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date format; write it as strptime does, like %d/%m/%Y"
        )
    return text


def read_options(args: argparse.Namespace) -> dict[str, Any]:
    """The statistics readers' options the command line sets (``--date-format``, and ``--payouts``,
    ``--decimal``, ``--column``, ``--campaign-map``, an existing file), as
    :func:`toolkit.evaluate_rules` takes them; those not given are left out."""
    options: dict[str, Any] = {"date_format": args.date_format, "decimal": args.decimal}
    if getattr(args, "column", None):
        options["columns"] = dict(args.column)
    payouts = one_value(getattr(args, "payouts", None), "--payouts")
    if payouts is not None:
        options["payouts"] = _existing(payouts, "the payouts table: campaign_id, country, payout")
    if args.campaign_map is not None:
        path = Path(args.campaign_map)
        if not path.is_file():
            why = "is a folder" if path.is_dir() else "no such file"
            raise CliError(f"{args.campaign_map}: {why} (the campaign map: tracker id -> id)")
        options["campaign_map"] = path
    return {k: v for k, v in options.items() if v is not None}


def _existing(text: str, what: str) -> Path:
    """``text`` as the path of an existing file, or a :class:`CliError` saying what it is."""
    path = Path(text)
    if not path.is_file():
        raise CliError(f"{text}: {'is a folder' if path.is_dir() else 'no such file'} ({what})")
    return path


def decisions_path(text: str | None) -> Path | None:
    """Where ``--decisions`` writes (``.csv`` or ``.xlsx``)."""
    return output_path(text, DECISION_SUFFIXES, "the decisions")


def actions_path(text: str | None) -> Path | None:
    """Where ``--actions`` writes the action workbook (``.xlsx``)."""
    return output_path(text, (".xlsx",), "the changes to review")


def decision_counts(decisions: pd.DataFrame, rules: list[Any]) -> pd.DataFrame:
    """Decisions per rule (in the rules' order, every enabled rule) and status, with a
    ``total`` column."""
    import pandas as pd

    names = [r.name for r in rules if r.enabled]
    counts = pd.crosstab(decisions["rule"].astype(str), decisions["status"].astype(str))
    counts = counts.reindex(index=names, fill_value=0)
    counts.index.name, counts.columns.name = "rule", None
    counts["total"] = counts.sum(axis=1)
    return counts


def counts_text(decisions: pd.DataFrame, rules: list[Any]) -> str:
    """The decisions in a few lines for a terminal: how many, then per rule and status."""
    if not len(decisions):
        return "Decisions: none (no rule's condition holds for any item)"
    by_status = decisions["status"].astype(str).value_counts()
    head = ", ".join(f"{n} {s}" for s, n in by_status.items())
    table = decision_counts(decisions, rules).to_string()
    return f"Decisions: {len(decisions)} ({head})\n{table}"


def write_decisions(decisions: pd.DataFrame, path: Path) -> Path:
    """Every decision with its evidence, as CSV or as a workbook; text that starts like a
    formula (a key ``=HYPERLINK(...)``) is written ``'=HYPERLINK(...)``, and
    :func:`toolkit.frames.cells.read_table` reads the file back as it was."""
    if path.suffix.lower() == ".xlsx":
        from .frames.export import write_excel

        return write_excel({"decisions": decisions}, path)
    from .frames.cells import write_csv

    return write_csv(decisions, path)


def _over_set(args: argparse.Namespace, conv: Conventions) -> bool:
    """Whether the command runs over several accounts; the statistics checked given once,
    after the rules file (``STATS``, or over several accounts ``--stats NAME=FILE``)."""
    from .cli_accounts import several

    if args.stats is not None:
        check_order(args.rules, args.stats)
    if conv.over_set is not None and several(args.account):
        return True
    if args.stats is None or args.stats_of:
        raise CliError(
            "one account takes one statistics export: campaign-toolkit rules RULES STATS"
            " (--stats NAME=FILE is for several accounts: --account all or --account a,b)"
        )
    return False


def run_rules(args: argparse.Namespace, conv: Conventions) -> int:
    """The ``rules`` command: preview (and, with ``--apply``, apply) what the rules decide;
    over several accounts (``--account all``), ``conv.over_set``'s."""
    import toolkit

    from .cli_show import changes_path, show_plan, show_result

    if _over_set(args, conv):
        return conv.over_set(args, some_rules(toolkit.load_rules(args.rules), args.rules), conv)
    rules = some_rules(toolkit.load_rules(args.rules), args.rules)  # named before connecting
    stats = stats_path(args.stats)
    read = read_options(args)
    out = decisions_path(args.decisions)
    review = actions_path(args.actions)
    changes_path(args)
    client = conv.connect(args)
    journal = args.journal or "default"  # where earlier runs are remembered, and this one
    result = toolkit.evaluate_rules(
        rules, stats, client, as_of=args.as_of, allow=args.allow or (), journal=journal, **read
    )
    if result.fit.none_known:  # a plan of nothing, for statistics of another account's ids
        raise CliError(str(result.fit.missing_line()))
    plan, decisions = result
    show_plan(plan, args)
    print(counts_text(decisions, rules))
    if out is not None:
        print(f"Decisions with their evidence: {write_decisions(decisions, out)}")
    if review is not None:
        from .rules import to_actions

        print(
            f"Changes to review in Excel: {to_actions(decisions, review)} (delete the rows you"
            " do not want, then: campaign-toolkit apply THAT_FILE)"
        )
    if not len(plan):
        return 0
    if not args.apply:
        print("Nothing sent (add --apply to apply the plan).")
        return 0
    if not conv.ask(f"Apply {len(plan)} call(s)?", args.yes):
        print("Nothing sent.")
        return 1
    result = plan.apply(client, journal=journal)
    show_result(result, args)
    if out is not None:
        from .rules import with_outcomes

        done = with_outcomes(decisions, result)
        print(f"Decisions with their evidence and outcomes: {write_decisions(done, out)}")
    return 0 if result.ok else 3


def column_pair(text: str) -> tuple[str, str]:
    """``--column "Sub ID 3=campaign_id"``: a column of the export and the field it holds
    (``columns=`` in Python)."""
    name, eq, field = text.rpartition("=")
    if not eq or not name.strip() or not field.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not NAME=FIELD; give the export's column and the field it holds,"
            " like 'Sub ID 3=campaign_id'"
        )
    return name.strip(), field.strip()


def read_arguments(p: argparse.ArgumentParser) -> None:
    """The options of reading a statistics export: ``--date-format``, ``--decimal``,
    ``--column``, ``--campaign-map`` (:func:`read_options` gathers them)."""
    p.add_argument(
        "--date-format",
        type=date_format,
        default=None,
        metavar="FMT",
        help="how the export writes its dates, as strptime does (%%d/%%m/%%Y for 31/01/2026;"
        " default: as the statistics reader finds them)",
    )
    p.add_argument(
        "--decimal",
        choices=(".", ","),
        default=None,
        metavar="MARK",
        help="the export's decimal mark: '.' or ',' (',' for 1,25; default: as the reader"
        " finds it)",
    )
    p.add_argument(
        "--column",
        type=column_pair,
        action="append",
        default=None,
        metavar="NAME=FIELD",
        help="a column of the export and the field it holds, as columns= does in Python"
        " (repeatable): 'Sub ID 3=campaign_id' names the network's campaign id, 'Level 1=date'"
        " a level of a grouped report",
    )
    p.add_argument(
        "--payouts",
        action="append",
        default=None,
        metavar="FILE",
        help="a payouts table (CSV or XLSX: campaign_id, country, payout in USD per"
        " conversion; country blank for every country): the break-even of campaigns without"
        " conversions in the window; over several accounts, NAME=FILE for each account",
    )
    p.add_argument(
        "--campaign-map",
        default=None,
        metavar="FILE",
        help="a file mapping the tracker's campaign ids to the network's (when the export"
        " names campaigns by the tracker's ids)",
    )


def stats_arguments(p: argparse.ArgumentParser) -> None:
    """``STATS`` (one export; over several accounts, with an ``account`` column), or over
    several accounts ``--stats NAME=FILE`` for each account."""
    p.add_argument(
        "stats",
        nargs="?",
        default=None,
        help="the statistics export (.csv, .xlsx or .parquet); over several accounts, with an"
        " 'account' column",
    )
    p.add_argument(
        "--stats",
        dest="stats_of",
        action="append",
        default=None,
        metavar="NAME=FILE",
        help="with --account all or a,b: account NAME's statistics export (repeatable),"
        " instead of STATS",
    )


def add_rules_parser(sub: argparse._SubParsersAction, conv: Conventions) -> None:
    """Register ``campaign-toolkit rules`` on the command line's subcommands."""
    p = sub.add_parser(
        "rules",
        help="rules over tracker statistics: preview the plan, --apply to apply it",
        description="Evaluate rules (YAML/JSON, see docs/rules.md) over a tracker's statistics"
        " export against the live account: print the plan with the reason of each change and"
        " the decisions per rule and status. Nothing is sent without --apply. Items the"
        " service does not take (a subId that is not hexadecimal...) are left out of the plan"
        " with their status; campaigns of the statistics the account does not have are named,"
        " and when it has none of them the command stops (exit 2). An export that is not read"
        " right: see --date-format, --decimal and --campaign-map.",
    )
    p.add_argument("rules", help="the rules file (.yaml, .yml, .json, or .xlsx with a rules sheet)")
    stats_arguments(p)
    p.add_argument("--apply", action="store_true", help="apply the plan (asks first)")
    p.add_argument("--yes", action="store_true", help="with --apply: apply without asking")
    p.add_argument(
        "--decisions", default=None, metavar="OUT", help="write every decision (.csv or .xlsx)"
    )
    p.add_argument(
        "--actions",
        default=None,
        metavar="OUT.xlsx",
        help="write the planned changes as an action workbook to review in Excel and apply",
    )
    p.add_argument(
        "--as-of",
        type=as_of_date,
        default=None,
        metavar="DATE",
        help="cut the statistics at this day (YYYY-MM-DD, a day they cover; default: their"
        " last day)",
    )
    read_arguments(p)
    p.add_argument(
        "--allow",
        action="append",
        choices=conv.guards,
        help=f"lift a guard (repeatable): {', '.join(conv.guards)}",
    )
    from .cli_show import add_show_options

    add_show_options(p)  # --max-calls, --changes FILE, --all
    conv.journal_option(p)
    conv.account_options(p)
    p.set_defaults(func=lambda args: run_rules(args, conv))


__all__ = [
    "DECISION_SUFFIXES",
    "actions_path",
    "Conventions",
    "add_rules_parser",
    "as_of_date",
    "check_order",
    "column_pair",
    "is_empty_file",
    "counts_text",
    "date_format",
    "one_value",
    "decision_counts",
    "decisions_path",
    "output_path",
    "read_arguments",
    "read_options",
    "run_rules",
    "some_rules",
    "stats_arguments",
    "stats_path",
    "write_decisions",
]
