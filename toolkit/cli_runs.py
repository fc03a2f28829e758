"""Command line: the way back. ``campaign-toolkit undo RUN [--dry-run] [--prefer desired]
[--yes]``, ``campaign-toolkit repair [RUN] [--dry-run] [--yes]`` and ``campaign-toolkit
history``.

Undo and repair are plans like any edit (:mod:`toolkit.bulk.undo`, :mod:`toolkit.bulk.repair`):
each command shows the plan (names, old -> new, what was changed since the run and is left
alone), asks (``--yes`` does not; ``--dry-run`` sends nothing), applies it as a journaled run,
and prints what happened item by item. Connection, confirmation, messages and exit codes are
those of :mod:`toolkit.cli`, handed over when it registers the commands
(:class:`~toolkit.cli_rules.Conventions`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .cli_accounts import way_back_set

#: How the id of a run of several accounts starts (:mod:`toolkit.bulk.undo_set`).
SET_PREFIX = "set-"

if TYPE_CHECKING:  # pragma: no cover
    from .bulk.plan import Plan
    from .cli_rules import Conventions


def _undo(args: argparse.Namespace) -> int:
    from .bulk.journal import open_journal
    from .bulk.undo import nothing_to_undo, undo, undo_plan
    from .cli_show import changes_path

    changes_path(args)  # checked before anything is read
    if args.run.startswith(SET_PREFIX):
        return way_back_set(args, args.conv.ask, undo=True)
    book = open_journal(args.journal or None)
    runs = book.runs()
    for line in book.unfinished_note(runs[runs["run_id"] == args.run], advice=False):
        print(line + "; undo puts back what its calls that landed changed")
    client = args.conv.connect(args)
    plan = undo_plan(client, args.run, journal=book, prefer=args.prefer)
    if not len(plan):
        print(nothing_to_undo(args.run, plan))
        _print_conflicts(plan)
        return 0
    return _show_ask_apply(
        args,
        f"Undo of run {args.run}",
        plan,
        lambda: undo(client, args.run, journal=book, plan=plan),
    )


def _repair(args: argparse.Namespace) -> int:
    from .bulk.apply import apply_plan
    from .bulk.journal import open_journal
    from .bulk.repair import nothing_to_repair, repair_plan, run_to_repair
    from .cli_show import changes_path

    changes_path(args)  # checked before anything is read
    if args.run and args.run.startswith(SET_PREFIX):
        return way_back_set(args, args.conv.ask, undo=False)
    book = open_journal(args.journal or None)
    run_id = args.run or run_to_repair(book)
    reason = nothing_to_repair(book, run_id)
    if reason is not None:
        print(reason)
        return 0
    client = args.conv.connect(args)
    run_id, plan = repair_plan(client, run_id, journal=book)
    if not len(plan):
        print(f"Nothing to repair: run {run_id} is as planned in the account.")
        _print_conflicts(plan)
        return 0
    return _show_ask_apply(
        args, f"Repair of run {run_id}", plan, lambda: apply_plan(plan, client, journal=book)
    )


def _show_ask_apply(args: argparse.Namespace, title: str, plan: Plan, apply: Any) -> int:
    """Show the plan, stop for ``--dry-run``, ask (unless ``--yes``), apply, report."""
    from .cli_show import show_plan, show_result

    show_plan(plan, args, title)
    if args.dry_run:
        print("Dry run: nothing sent.")
        return 0
    if not args.conv.ask(f"{title}: apply {len(plan)} call(s)?", args.yes):
        print("Nothing sent.")
        return 1
    result = apply()
    show_result(result, args)
    return 0 if result.ok else 3


def _print_conflicts(plan: Plan) -> None:
    """The conflicts of a plan without calls (a plan with calls shows them in its summary)."""
    if len(plan.conflicts):
        from .bulk.preview import plan_text
        from .cli_show import pointers

        print("\n".join(plan_text(plan, pointers=pointers()).splitlines()[1:]))


def _history(args: argparse.Namespace) -> int:
    import shutil
    import textwrap

    from .bulk import history
    from .bulk.journal import open_journal

    book = open_journal(args.journal or None)
    runs = history(book)
    width = shutil.get_terminal_size((100, 24)).columns
    print(history_table(runs, book, width) if len(runs) else "No runs in the journal.")
    for line in book.unfinished_note(runs):
        print(textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False))
    return 0


#: The columns of :func:`history_table` after the run id and its state.
HISTORY_COUNTS: tuple[str, ...] = ("calls", "changes", "applied", "failed", "unknown", "not sent")


def _links(runs: Any, r: Any) -> str:
    """How run ``r`` links to others: ``undoes X``, ``repairs X``, ``undone by X``."""
    from .bulk.run_check import undone_in_force

    links = []
    if isinstance(r.undoes, str):
        links.append(f"undoes {r.undoes}")
    if isinstance(r.repairs, str):
        links.append(f"repairs {r.repairs}")
    if isinstance(getattr(r, "run_set", None), str):
        links.append(f"set {r.run_set} account {r.profile}")
    by = undone_in_force(runs, str(r.run_id))
    if by is not None:
        links.append(f"undone by {by}")
    return "; ".join(links)


def history_table(runs: Any, journal: Any = None, width: int | None = None) -> str:
    """The runs as the terminal shows them: the run id (its start time), state, calls, and
    its changes counted as its plan counted them (with ``journal``: applied, failed,
    unknown, not sent), then how it links to other runs (undoes, repairs, undone by), on a
    line of its own when the row would pass ``width`` (the terminal's, 100 when unknown)."""
    import shutil

    from .bulk.run_counts import count_changes

    width = width or shutil.get_terminal_size((100, 24)).columns
    rows, links = [], []
    for r in runs.itertuples(index=False):
        if hasattr(r, "changes"):  # toolkit.history(): counted already
            counts = {k: getattr(r, k.replace(" ", "_"), 0) for k in HISTORY_COUNTS[1:]}
        else:
            counts = count_changes(journal, str(r.run_id)) if journal is not None else {}
        numbers = [int(r.calls), *(counts.get(k, 0) for k in HISTORY_COUNTS[1:])]
        rows.append((str(r.run_id), str(r.state), *map(str, numbers)))
        links.append(_links(runs, r))
    header: tuple[str, ...] = ("run", "state", *HISTORY_COUNTS)
    if all(row[-1] == "0" for row in rows):  # "not sent" only for a run cut off
        header, rows = header[:-1], [row[:-1] for row in rows]
    widths = [max(len(x[i]) for x in (header, *rows)) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        cells = (v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in pairs)
        return "  ".join(cells).rstrip()

    lines = [line(header)]
    for row, link in zip(rows, links, strict=True):
        text = line(row)
        if link and len(text) + 2 + len(link) <= width:
            text += f"  {link}"
        elif link:
            text += f"\n    {link}"
        lines.append(text)
    return "\n".join(lines)


def add_run_parsers(sub: argparse._SubParsersAction, conv: Conventions) -> None:
    """Register ``undo``, ``repair`` and ``history``."""
    from .cli_show import add_show_options

    un = sub.add_parser(
        "undo", help="put back what a journaled run changed (a plan: preview, ask, apply)"
    )
    un.add_argument("run", help="the run id, or a set's id (set-...) for every account's run of it")
    un.add_argument("--yes", action="store_true", help="undo without asking")
    un.add_argument(
        "--prefer",
        choices=["desired"],
        default=None,
        help="put the old values back over items changed since the run too (by default they"
        " are left alone and listed)",
    )
    re_ = sub.add_parser("repair", help="finish a run that faults or a crash left unfinished")
    re_.add_argument(
        "run", nargs="?", default=None, help="the run id (default: the newest unfinished run)"
    )
    re_.add_argument("--yes", action="store_true", help="repair without asking")
    for p, func in ((un, _undo), (re_, _repair)):
        p.add_argument("--dry-run", action="store_true", help="show the plan; send nothing")
        conv.journal_option(p)
        add_show_options(p)  # --max-calls, --changes FILE, --all
        conv.account_options(p)
        p.set_defaults(func=func, conv=conv)
    hi = sub.add_parser("history", help="list the journaled runs")
    conv.journal_option(hi)
    hi.set_defaults(func=_history, conv=conv)


__all__ = ["add_run_parsers", "history_table"]
