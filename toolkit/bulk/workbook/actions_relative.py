"""The relative bids of an action workbook (``set country US +10%``, ``add country DE min``,
``set bid_rule ab12 x0.9``; see :mod:`toolkit.bulk.relative_bids`), settled against the live
account when the plan is made, and applied once.

An action workbook has no exported state: ``+10%`` and ``x1.2`` change each campaign's live
bid, so the same row planned again after it was applied would change the bid again from its
new value (+10% twice is +21%). The plan journals, with its run, each bid it sets this way
(the campaign, the item and the form, as :class:`~toolkit.bulk.provenance.Provenance` of the
rule :data:`RULE`); a later plan that would make the same change on the same campaign and
item, while the earlier run's change stands (applied, and not undone), is refused in one
line naming that run, unless ``again=True`` (``--again`` on the command line). ``min`` and
``rec`` set a price, not a change of the bid: applied twice they give the same bid, and are
not journaled so.

A form needs a bid to change: a campaign that has none for the item (``add`` of a country it
does not target, a bid rule it does not have) is refused with the row.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ... import spec
from ...errors import ToolkitError, WorkbookError, WorkbookProblem
from ..journal import INVERTED, Journal, open_journal
from ..provenance import Provenance
from ..relative_bids import BidCell, BidForm, settle
from ..relative_prices import ask_prices, unpriced
from ..run_check import undone_in_force

if TYPE_CHECKING:  # pragma: no cover
    from ...client import Client
    from ...frames import Account

#: The rule name of the journaled relative bids of action workbooks.
RULE = "relative bid"
#: The way to go ahead anyway, in the words of every refusal.
AGAIN = "again=True in Python, --again on the command line"


class AppliedBefore(ToolkitError):
    """A relative bid of an action workbook that an earlier run applied already."""


def settle_actions(
    client: Client, actions: Sequence[Any], account: Account, path: str, sheet: str
) -> tuple[list[Any], list[BidCell]]:
    """The actions with each relative bid settled per campaign (``Action.bids``), and the
    cells they were written in; one :class:`~toolkit.errors.WorkbookError` names every row
    that cannot be set."""
    cells = {a.row: _cells(a, sheet) for a in actions if a.form is not None}
    if not cells:
        return list(actions), []
    flat = [c for row in cells.values() for c in row]
    current = _current(account)
    answers, problems = ask_prices(client, flat, account)
    bids: dict[BidCell, float] = {}
    for cell in flat:
        if cell.form.needs_price and cell not in answers:
            continue  # its problem is known
        key = (cell.table, cell.campaign_id, cell.key)
        new = settle(cell, current.get(key), answers.get(cell))
        if isinstance(new, str):
            problems.append(cell.problem(new))
        else:
            bids[cell] = new
    if problems:
        raise WorkbookError(sorted(problems, key=lambda p: p.row or 0), path)
    out = [
        dataclasses.replace(a, bids={c.campaign_id: bids[c] for c in cells[a.row]})
        if a.row in cells
        else a
        for a in actions
    ]
    return out, flat


def form_problems(actions: Sequence[Any], account: Account, sheet: str) -> list[WorkbookProblem]:
    """The problems of the relative bids that the live account tells, reported with the rows'
    other problems: a change of the bid (``+10%``, ``x1.2``) on a campaign that has no bid
    for the item or whose new bid is out of range, ``min``/``rec`` on a campaign that cannot
    take a price as its bid. Those of the prices themselves (a price not read, a new bid
    below the service's minimum) are known only once the prices are asked:
    :func:`settle_actions`."""
    cells = [c for a in actions if a.form is not None for c in _cells(a, sheet)]
    current = _current(account)
    problems = unpriced(cells, account)
    for cell in cells:
        if not cell.form.needs_price:
            new = settle(cell, current.get((cell.table, cell.campaign_id, cell.key)))
            if isinstance(new, str):
                problems.append(cell.problem(new))
    return problems


def _cells(action: Any, sheet: str) -> list[BidCell]:
    """One cell per campaign of a relative action."""
    kind = spec.bid_kind()
    table = "countries" if action.target == kind.name else "bid_rules"
    key = str(action.item).upper() if table == "countries" else str(action.item)
    form: BidForm = action.form
    return [BidCell(sheet, action.row, table, c, key, form.text, form) for c in action.campaigns]


def _current(account: Account) -> dict[tuple[str, int, str], float]:
    """``(table, campaign id, key) -> live bid`` of countries and bid rules."""
    out: dict[tuple[str, int, str], float] = {}
    for table, key in (("countries", spec.bid_kind().column), ("bid_rules", "item")):
        df = account.table(table)
        if df is None or df.empty:
            continue
        for cid, item, bid in zip(df["campaign_id"], df[key], df["bid"], strict=True):
            if not (pd.isna(cid) or pd.isna(item) or pd.isna(bid)):
                out[(table, int(cid), str(item))] = float(bid)
    return out


def percent_bids(
    sheet: str,
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    shown: Iterable[int],
) -> list[WorkbookProblem]:
    """The bid cells that hold a number shown as a percentage (``shown``: their Excel rows,
    :meth:`toolkit.bulk.workbook.cells.Book.percent_rows`): Excel and LibreOffice turn ``+10%``
    typed in a cell that is not text into the number 0.1 (and show it 10%); read as a bid, it
    would set 0.10 USD."""
    if "bid" not in header:
        return []
    col = list(header).index("bid")
    return [
        WorkbookProblem(sheet, i, "bid", rows[i - 1][col], PERCENT)
        for i in sorted(set(shown))
        if i <= len(rows) and col < len(rows[i - 1])
    ]


def bid_letter(rows: Sequence[Sequence[Any]]) -> str | None:
    """The column letter of a sheet's ``bid`` header (any case, spaces around), if any."""
    from openpyxl.utils import get_column_letter

    for i, cell in enumerate(rows[0] if rows else [], start=1):
        if isinstance(cell, str) and cell.strip().lower() == "bid":
            return get_column_letter(i)
    return None


#: Why a bid cell shown as a percentage is refused.
PERCENT = (
    "a number shown as a percentage (the spreadsheet made +10% typed there a number): type the"
    " change as text ('+10%), or format the bid column as text"
)


# --------------------------------------------------------------------------- once


def provenance_of(cells: Iterable[BidCell]) -> list[Provenance]:
    """What the journal keeps of the changes of the bid (``+10%``, ``x1.2``) a plan sets."""
    return [
        Provenance(RULE, c.campaign_id, c.table, c.target, c.key, None, None, c.form.text)
        for c in cells
        if not c.form.needs_price
    ]


def refuse_again(
    journal: Journal | str | None, client: Client, account: int | None, cells: Iterable[BidCell]
) -> None:
    """Raise :class:`AppliedBefore` when an earlier run on this service and account made the
    same change of the bid (campaign, item, form) and it stands."""
    changes = [c for c in cells if not c.form.needs_price]
    if not changes or journal is None:
        return
    book = open_journal(journal)
    rows = book.provenance([RULE])
    if rows.empty:
        return
    rows = _same_service(rows, client, account)
    done: dict[tuple[int, str, str, str], list[str]] = defaultdict(list)
    for r in rows.itertuples(index=False):
        done[(int(r.campaign_id), str(r.target), str(r.key), str(r.value))].append(str(r.run_id))
    done = {k: list(dict.fromkeys(v)) for k, v in done.items()}
    stands = _Stands(book)
    found = []
    for cell in changes:  # the newest earlier run whose change stands
        earlier = next((r for r in reversed(done.get(_key(cell), [])) if stands(r, cell)), None)
        if earlier is not None:
            found.append((cell, earlier))
    if found:
        raise AppliedBefore(_message(*found[0], len(found)))


def _key(cell: BidCell) -> tuple[int, str, str, str]:
    return (cell.campaign_id, cell.target, cell.key, cell.form.text)


def _message(cell: BidCell, run_id: str, total: int) -> str:
    more = f" (and {total - 1} more bid(s) of this workbook)" if total > 1 else ""
    return (
        f"{cell.sheet} row {cell.row}: {cell.form.text} on campaign {cell.campaign_id}"
        f" {cell.target} {cell.key} was applied by run {run_id}{more}; applying it again"
        f" would change the bid again from its new value. Undo that run, or to go ahead"
        f" anyway: {AGAIN}; nothing sent"
    )


def _same_service(rows: pd.DataFrame, client: Client, account: int | None) -> pd.DataFrame:
    service = str(getattr(client, "service", None) or client.base_url).rstrip("/")
    keep = rows["base_url"].astype(str).str.rstrip("/") == service
    if account is not None:
        keep &= rows["account"].isna() | (rows["account"] == account)
    return rows[keep.to_numpy(dtype=bool)]


class _Stands:
    """Whether a run's change of a bid stands: an outcome that may have changed the bid
    (applied, already, unknown), and the run not undone."""

    def __init__(self, book: Journal) -> None:
        self.book = book
        self.runs = book.runs()

    def __call__(self, run_id: str, cell: BidCell) -> bool:
        if undone_in_force(self.runs, run_id) is not None:
            return False
        out = self.book.outcomes(run_id)
        mine = out[
            (out["campaign_id"] == cell.campaign_id)
            & (out["target"] == cell.target)
            & (out["item"].astype(str) == cell.key)
            & (out["action"] == "add")
        ]
        return bool(mine["outcome"].isin(INVERTED).any())


__all__ = [
    "AGAIN",
    "PERCENT",
    "RULE",
    "AppliedBefore",
    "form_problems",
    "bid_letter",
    "percent_bids",
    "provenance_of",
    "refuse_again",
    "settle_actions",
]
