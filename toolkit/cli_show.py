"""Command line: how ``plan``, ``apply``, ``rules``, ``undo`` and ``repair`` show a plan and
a run, in the command line's own words.

A preview is cut to stay readable; where Python says ``see plan.changes()``, the command
line names its options: ``--changes FILE`` writes every change of the plan (``.csv``, or
``.xlsx`` with a ``conflicts`` sheet too; text that starts like a formula is written with a
``'`` in front, as every file the toolkit writes), ``--all`` prints every change, conflict
and failed item::

    $ campaign-toolkit plan account.xlsx --max-calls 2
    Plan: 12 calls, 12 changes on 7 campaigns
      ...
      ... and 10 more call(s) on 6 campaign(s); --changes FILE writes every change, --all
      prints them
    $ campaign-toolkit plan account.xlsx --changes changes.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CliError

if TYPE_CHECKING:  # pragma: no cover
    from .bulk.outcomes import ApplyResult
    from .bulk.plan import Plan
    from .bulk.preview import Pointers

#: The files ``--changes`` writes, by suffix.
CHANGE_SUFFIXES: tuple[str, ...] = (".csv", ".xlsx")
#: Where a cut preview on the command line sends the reader.
MORE_CHANGES = "--changes FILE writes every change, --all prints them"
MORE_CONFLICTS = "--all prints them, --changes FILE.xlsx writes them"


def pointers() -> Pointers:
    """The words of a cut preview on the command line (:class:`~toolkit.bulk.preview.Pointers`)."""
    from .bulk.preview import Pointers

    return Pointers(changes=MORE_CHANGES, conflicts=MORE_CONFLICTS)


def output_path(text: str | None, suffixes: tuple[str, ...], what: str) -> Path | None:
    """Where an option writes ``what`` (a file named with one of ``suffixes`` in an existing
    folder), checked before anything is read."""
    if text is None:
        return None
    path = Path(text)
    if path.is_dir() or not path.parent.is_dir():
        raise CliError(f"{text}: {'is a folder' if path.is_dir() else 'no such folder'}")
    if path.suffix.lower() not in suffixes:
        raise CliError(f"{text}: {what} are written as {' or '.join(suffixes)}; name it so")
    return path


def add_show_options(p: argparse.ArgumentParser) -> None:
    """``--max-calls N``, ``--changes FILE`` and ``--all`` on a command that previews a plan."""
    p.add_argument(
        "--max-calls",
        type=int,
        default=30,
        help="calls shown in the preview (30; the rest are counted)",
    )
    p.add_argument(
        "--changes",
        default=None,
        metavar="FILE",
        help="write every change of the plan, one row per campaign and change (.csv, or .xlsx"
        " with the conflicts on a sheet of their own)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        dest="show_all",
        help="print every change, conflict and failed item (nothing cut)",
    )


def changes_path(args: argparse.Namespace) -> Path | None:
    """Where ``--changes`` writes, checked before anything is read or sent."""
    return output_path(getattr(args, "changes", None), CHANGE_SUFFIXES, "the changes")


def show_plan(plan: Plan, args: argparse.Namespace, title: str = "") -> None:
    """Print the preview (cut at ``--max-calls``, or whole with ``--all``), and write every
    change to ``--changes FILE`` when given."""
    every = getattr(args, "show_all", False)
    text = plan.summary(
        max_calls=None if every else args.max_calls,
        max_lines=None if every else 5,
        pointers=pointers(),
    )
    print(f"{title}: {text}" if title else text)
    path = changes_path(args)
    if path is not None:
        print(f"Every change ({len(plan.edits())}): {write_changes(plan, path)}")


def write_changes(plan: Plan, path: Path) -> Path:
    """``plan.changes()`` as CSV, or as a workbook with the conflicts on a ``conflicts``
    sheet; a change's calls are written ``2, 5``."""
    changes = plan.changes()
    changes["calls"] = changes["calls"].map(lambda calls: ", ".join(map(str, calls)))
    if path.suffix.lower() == ".xlsx":
        from .frames.export import write_excel

        sheets: dict[str, Any] = {"changes": changes}
        if len(plan.conflicts):
            conflicts = plan.conflicts.copy()
            conflicts["key"] = conflicts["key"].map(_key_text)
            sheets["conflicts"] = conflicts
        return write_excel(sheets, path)
    from .frames.cells import write_csv

    return write_csv(changes, path)


def _key_text(key: Any) -> str:
    return ", ".join(map(str, key)) if isinstance(key, tuple) else str(key)


def show_result(result: ApplyResult, args: argparse.Namespace) -> None:
    """Print what the run did: the changes counted, then the items that failed (all of them
    with ``--all``, else the first ten and how to see the rest)."""
    if getattr(args, "show_all", False):
        print(result.summary(most=None))
        return
    more = (
        f"`campaign-toolkit repair {result.run_id} --dry-run --all` lists what is left to finish"
        if result.run_id
        else "--all prints them"
    )
    print(result.summary(more=more))


__all__ = [
    "CHANGE_SUFFIXES",
    "MORE_CHANGES",
    "MORE_CONFLICTS",
    "add_show_options",
    "changes_path",
    "output_path",
    "pointers",
    "show_plan",
    "show_result",
    "write_changes",
]
