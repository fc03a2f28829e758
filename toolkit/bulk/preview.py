"""A plan previewed as the user thinks of it: one change per campaign and item, with the
campaign's name and old -> new values, grouped under the calls that will be sent.

The service needs a bid change as a drop and an add; the preview pairs them back into one
change (``bid US 0.30 -> 0.33``). Three forms: :func:`change_frame` (one row per campaign x
change), :func:`plan_text` (the terminal) and :func:`plan_html` (a notebook), the last two
truncated so that a plan of any size stays readable.

>>> plan.changes()                                                  # doctest: +SKIP
>>> print(plan.summary())                                           # doctest: +SKIP
Plan: 2 calls, 2 changes on 1 campaign
  call 1  drop country on campaign 1000001 (the old bids of the bid changes below)
  call 2  add country on campaign 1000001
      1000001 "Multi-geo Push #1": bid US 0.30 -> 0.33, add country CA 0.31
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .call_kinds import is_valued
from .calls import CPA_RULE, STEPS, Call, call_title
from .edits import Edit, edits_of, is_present, money, shown, verb
from .faces import PlanLike as Plan

#: Columns of :func:`change_frame`.
CHANGE_COLUMNS: tuple[str, ...] = (
    "call",
    "calls",
    "step",
    "campaign_id",
    "campaign_name",
    "what",
    "target",
    "list_type",
    "key",
    "old",
    "new",
    "change",
    "why",
    "written",
)


@dataclass(frozen=True)
class Pointers:
    """Where a cut preview sends the reader for what it left out, in the words of where it
    is read: Python (:data:`IN_PYTHON`) or the command line, which names its options.

    >>> Pointers(changes="--changes FILE writes them all").changes
    '--changes FILE writes them all'
    """

    #: Every change of the plan.
    changes: str = "see plan.changes()"
    #: Every conflict of the plan.
    conflicts: str = "see plan.conflicts"


#: The pointers of the Python API (``plan.summary()``, ``repr(plan)``, a notebook).
IN_PYTHON = Pointers()


def _cut(total: int, most: int | None) -> bool:
    """Whether a list of ``total`` is cut when ``most`` are shown (None: never)."""
    return most is not None and total > most


def reason(plan: Plan, e: Edit) -> str | None:
    """Why the change was made (``plan.reasons``), or None."""
    if not plan.reasons:
        return None
    return plan.reasons.get((e.campaign_id, e.target, "" if e.key is None else str(e.key)))


def written(plan: Plan, e: Edit) -> str | None:
    """The bid as written when it was a change (``+10%``, ``rec-5%``: ``plan.written``)."""
    key = (e.campaign_id, e.target, "" if e.key is None else str(e.key))
    return getattr(plan, "written", {}).get(key) if e.what in ("bid", "add") else None


def _beside(plan: Plan | None, e: Edit) -> str | None:
    """What the preview shows in brackets after a change: the bid as written, the reason."""
    if plan is None:
        return None
    return "; ".join(t for t in (written(plan, e), reason(plan, e)) if t) or None


def _keyed(plan: Plan | None, e: Edit) -> str:
    why = _beside(plan, e)
    return f"{e.key} ({why})" if why else str(e.key)


def _phrases(
    edits: Sequence[Edit], items: int | None, most: int | None, plan: Plan | None = None
) -> str:
    """One campaign's edits of one call, items of the same kind run together:
    ``blacklist source 12345, 12346 (+8 more)``; at most ``most`` phrases (None: all). A
    change with a reason in ``plan.reasons`` is followed by it in brackets."""
    runs: dict[str, list[Edit]] = {}
    for e in edits:
        plain = e.what in ("add", "drop") and not is_valued(e.target) and e.target != CPA_RULE
        runs.setdefault(verb(e) if plain else f"#{id(e)}", []).append(e)
    parts = []
    for head, group in runs.items():
        if head.startswith("#"):
            why = _beside(plan, group[0])
            parts.append(group[0].text() + (f" ({why})" if why else ""))
            continue
        keys = ", ".join(_keyed(plan, e) for e in group[:items])
        more = f" (+{len(group) - items} more)" if _cut(len(group), items) else ""
        parts.append(f"{head} {keys}{more}")
    if most is not None and len(parts) > most:
        parts = [*parts[:most], f"... and {len(parts) - most} more"]
    return ", ".join(parts)


# --------------------------------------------------------------------------- forms


def change_frame(plan: Plan) -> pd.DataFrame:
    """One row per campaign x change (see :data:`CHANGE_COLUMNS`); ``old``/``new`` hold the
    values as planned (a bid, a setting, a work status), ``change`` the words."""
    names = plan.names
    rows = [
        (
            e.call,
            e.calls,
            e.step,
            e.campaign_id,
            names.get(e.campaign_id),
            e.what,
            e.target,
            e.list_type,
            None if e.key is None else str(e.key),
            e.old if is_present(e.old) else None,
            e.new if is_present(e.new) else None,
            e.text(),
            reason(plan, e),
            written(plan, e),
        )
        for e in plan.edits()
    ]
    frame = pd.DataFrame(rows, columns=list(CHANGE_COLUMNS))
    return frame.astype(
        {
            "call": "Int64",
            "step": pd.CategoricalDtype(list(STEPS), ordered=True),
            "campaign_id": "Int64",
            "campaign_name": "string",
            "what": "string",
            "target": "string",
            "list_type": "string",
            "key": "string",
            "change": "string",
            "why": "string",
            "written": "string",
        }
    )


@dataclass(frozen=True)
class _Line:
    call: int
    campaigns: tuple[int, ...]
    text: str


def _lines(plan: Plan, items: int, most: int) -> dict[int, list[_Line]]:
    """Per call, one line per group of campaigns whose changes read the same."""
    per: dict[int, dict[int, list[Edit]]] = defaultdict(lambda: defaultdict(list))
    for e in plan.edits():
        per[e.call][e.campaign_id].append(e)
    out: dict[int, list[_Line]] = {}
    for n, by_campaign in per.items():
        groups: dict[str, list[int]] = {}
        for cid, edits in by_campaign.items():
            groups.setdefault(_phrases(edits, items, most, plan), []).append(cid)
        out[n] = [_Line(n, tuple(cids), text) for text, cids in groups.items()]
    return out


def who(cids: Sequence[int], names: Mapping[int, str], most: int | None = 3) -> str:
    """``1000001 "Name"``, or the first few and ``(+N more campaigns)`` (None: all)."""
    parts = []
    for cid in cids[:most]:
        name = names.get(cid)
        parts.append(f"{cid} {shown(name)}" if name else str(cid))
    extra = f" (+{len(cids) - most} more campaigns)" if _cut(len(cids), most) else ""
    return ", ".join(parts) + extra


def _header(plan: Plan) -> str:
    if not plan.calls:
        return "Plan: nothing to do."
    edits = plan.edits()
    n, k = len(plan.calls), len(edits)
    campaigns = len(
        {e.campaign_id for e in edits} | {c for x in plan.calls for c in x.campaign_ids}
    )
    return (
        f"Plan: {n} call{'s' if n != 1 else ''}, {k} change{'s' if k != 1 else ''}"
        f" on {campaigns} campaign{'s' if campaigns != 1 else ''}"
    )


#: How the conflicts of a plan are told, by what the plan is for (``Plan.purpose``): the
#: opening line, and the words for the base, live and desired values.
CONFLICT_WORDS: dict[str, tuple[str, tuple[str, str, str]]] = {
    "edit": (
        "{n} conflict(s) left out (live changed since the export on keys you edited):"
        " plan again with prefer='desired' (apply your edit) or 'live' (keep live);"
        " on the command line --prefer desired or --prefer live",
        ("exported", "live", "yours"),
    ),
    "undo": (
        "{n} item(s) changed by someone else since the run, left alone: undo with"
        " prefer='desired' (on the command line --prefer desired) to put the old values back"
        " over them",
        ("the run set", "live now", "before the run"),
    ),
    "repair": (
        "{n} item(s) changed by someone else since the run, left alone",
        ("before the run", "live now", "the run planned"),
    ),
}


def _notes(plan: Plan, most: int | None = 5, pointers: Pointers = IN_PYTHON) -> list[str]:
    """Conflicts (the first ``most`` shown; None: all) and warnings."""
    lines = []
    n = len(plan.conflicts)
    if n:
        opening, (base, live, desired) = CONFLICT_WORDS[plan.purpose]
        if plan.prefer is not None:
            side = "yours" if plan.purpose == "edit" else desired
            side = side if plan.prefer == "desired" else "live"
            opening = f"{{n}} conflict(s) settled with prefer={plan.prefer!r}: {side} kept"
        lines.append(opening.format(n=n))
        shown = plan.conflicts if most is None else plan.conflicts.head(most)
        for row in shown.itertuples(index=False):
            key = ", ".join(map(str, row.key)) if isinstance(row.key, tuple) else row.key
            lines.append(
                f"  {row.table} {key}: {base} {_value(row.base)}, {live} {_value(row.live)},"
                f" {desired} {_value(row.desired)}"
            )
        if _cut(n, most):
            lines.append(f"  ... and {n - most} more; {pointers.conflicts}")
    lines += [f"warning: {w}" for w in plan.warnings]
    return lines


def _value(value: Any) -> str:
    if isinstance(value, str) and value == "<absent>":
        return "absent"
    if value is True:
        return "present"
    if isinstance(value, float) and not value.is_integer():
        return money(value)
    return shown(value)


def _paired(edits: Sequence[Edit]) -> dict[int, set[int]]:
    """Per drop call that holds the old halves of bid changes: the calls of their new bids."""
    paired: dict[int, set[int]] = defaultdict(set)
    for e in edits:
        if e.what == "bid":
            for n in e.calls:
                if n != e.call:
                    paired[n].add(e.call)
    return paired


def spans(numbers: Sequence[int]) -> str:
    """``1-4, 7, 9-10`` for 1, 2, 3, 4, 7, 9, 10."""
    out: list[str] = []
    ordered = sorted(set(numbers))
    start = prev = ordered[0] if ordered else 0
    for n in [*ordered[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out) if ordered else ""


@dataclass
class _Block:
    """One call, or a run of drop calls that only hold the old bids of bid changes."""

    numbers: list[int]
    calls: list[Call]
    lines: list[_Line]
    paired: set[int]

    def label(self) -> str:
        if len(self.numbers) == 1:
            return f"call {self.numbers[0]}"
        return f"calls {spans(self.numbers)}"

    def title(self, names: Mapping[int, str]) -> str:
        first = self.calls[0]
        if len(self.calls) == 1:
            text = call_title(first)
        else:
            ids = {c for call in self.calls for c in call.campaign_ids}
            text = f"{first.action} {first.target} on {len(ids)} campaigns"
        if self.paired:
            many = "s" if len(self.paired) > 1 else ""
            text += f" (the old bids of the bid changes in call{many} {spans(list(self.paired))})"
        return text


def _blocks(plan: Plan, items: int, most: int) -> list[_Block]:
    paired = _paired(plan.edits())
    grouped = _lines(plan, items, most)
    blocks: list[_Block] = []
    for n, call in enumerate(plan.calls, start=1):
        mine = grouped.get(n, [])
        last = blocks[-1] if blocks else None
        if (
            not mine
            and n in paired
            and last is not None
            and not last.lines
            and last.paired
            and (last.calls[0].action, last.calls[0].target) == (call.action, call.target)
        ):
            last.numbers.append(n)
            last.calls.append(call)
            last.paired |= paired[n]
            continue
        blocks.append(_Block([n], [call], mine, set(paired.get(n, ()))))
    return blocks


def plan_text(
    plan: Plan,
    *,
    max_calls: int | None = 30,
    max_lines: int | None = 5,
    items: int | None = 3,
    most: int | None = 4,
    pointers: Pointers = IN_PYTHON,
) -> str:
    """The preview for a terminal: each call, and under it each group of campaigns with the
    changes it makes; at most ``max_calls`` calls (or runs of drop calls that only hold the
    old bids of bid changes) and ``max_lines`` lines per call, the rest counted
    (``... and N more``, with where to see them: ``pointers``). None shows every one (and,
    with ``items`` and ``most`` None too, every change and conflict)."""
    lines = [_header(plan)]
    blocks = _blocks(plan, items, most)
    width = max((len(b.label()) for b in blocks[:max_calls]), default=0)
    for block in blocks[:max_calls]:
        lines.append(f"  {block.label():<{width}}  {block.title(plan.names)}")
        for line in block.lines[:max_lines]:
            names = who(line.campaigns, plan.names, 3 if most is not None else None)
            lines.append(f"      {names}: {line.text}")
        if _cut(len(block.lines), max_lines):
            rest = sum(len(x.campaigns) for x in block.lines[max_lines:])
            lines.append(f"      ... and {rest} more campaign(s); {pointers.changes}")
    if _cut(len(blocks), max_calls):
        rest = [c for b in blocks[max_calls:] for c in b.calls]
        lines.append(
            f"  ... and {len(rest)} more call(s) on"
            f" {len({c for x in rest for c in x.campaign_ids})} campaign(s); {pointers.changes}"
        )
    conflicts = 5 if most is not None else None
    lines += [f"  {note}" for note in _notes(plan, conflicts, pointers)]
    return "\n".join(lines)


def plan_html(
    plan: Plan,
    *,
    max_rows: int = 200,
    items: int = 3,
    most: int = 6,
    pointers: Pointers = IN_PYTHON,
) -> str:
    """The preview for a notebook: a table of calls and their campaigns' changes, every
    text escaped; at most ``max_rows`` rows, the rest counted (with where to see them:
    ``pointers``)."""
    esc = html.escape
    parts = [f"<div><b>{esc(_header(plan))}</b>"]
    parts += [f"<br>{esc(note)}" for note in _notes(plan, pointers=pointers)]
    parts.append("</div>")
    if not plan.calls:
        return "".join(parts)
    rows: list[str] = []
    total = 0
    for block in _blocks(plan, items, most):
        title = esc(block.title(plan.names))
        label = esc(block.label().split(" ", 1)[1])
        for line in block.lines or [_Line(0, (), "")]:
            total += 1
            if len(rows) >= max_rows:
                continue
            rows.append(
                f"<tr><td>{label}</td><td>{esc(block.calls[0].step)}</td><td>{title}</td>"
                f"<td>{esc(who(line.campaigns, plan.names))}</td><td>{esc(line.text)}</td></tr>"
            )
    if total > len(rows):
        rows.append(
            f"<tr><td colspan='5'>... and {total - len(rows)} more row(s);"
            f" {esc(pointers.changes)}</td></tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in ("call", "step", "sends", "campaigns", "changes"))
    parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return "".join(parts)


def call_details(plan: Plan, items: int = 3, most: int = 4) -> list[str]:
    """One line per call: its first group of campaigns and their changes."""
    grouped = _lines(plan, items, most)
    paired = _paired(plan.edits())
    out = []
    for n, call in enumerate(plan.calls, start=1):
        mine = grouped.get(n, [])
        if not mine:
            out.append(_Block([n], [call], [], paired.get(n, set())).title(plan.names))
            continue
        text = f"{who(mine[0].campaigns, plan.names, 2)}: {mine[0].text}"
        if len(mine) > 1:
            text += f"; and {sum(len(x.campaigns) for x in mine[1:])} more campaign(s)"
        out.append(text)
    return out


__all__ = [
    "CHANGE_COLUMNS",
    "IN_PYTHON",
    "Edit",
    "Pointers",
    "call_details",
    "call_title",
    "change_frame",
    "edits_of",
    "money",
    "plan_html",
    "plan_text",
    "shown",
    "spans",
]
