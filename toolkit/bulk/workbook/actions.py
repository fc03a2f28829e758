"""Action workbooks: one row per change ("add subId ab12 to the blacklist of campaign 7"),
read into the same kind of :class:`~toolkit.bulk.plan.Plan` as an edited account workbook.

The ``actions`` sheet has the columns ``action``, ``target``, ``campaign``, ``item``, ``bid``
and ``list_type``:

- ``add`` / ``drop`` a list item: target ``source_black``, ``subid_black``, ``source_white``
  or ``subid_white``; item a source id or subId;
- ``add`` / ``drop`` targeting: target a kind (``os``, ``quality``, ``cidr``, ``language``,
  ...); item its value (``list_type`` black or white for cidr and domain);
- ``set`` / ``add`` / ``drop`` a country: item the country code. ``set`` changes the
  ``bid`` of campaigns that target the country and never adds it: other campaigns of
  ``all`` or a format are left out with a warning (``plan.warnings``), and a campaign id
  that does not target it is a problem of the row. ``add`` targets the country at the bid
  (added where missing, its bid set where already targeted);
- ``set`` / ``drop`` a bid rule: target ``bid_rule``; item a source id or subId;
- ``start`` / ``pause`` / ``archive``: target ``campaign``.

``campaign`` is a campaign id, ``all`` (every campaign of the account), or a format code
(``push``, ``pops``, ``inpage``, ``video``: every campaign of that format).

Every problem of every row is reported at once (a :class:`~toolkit.errors.WorkbookError`).
A text cell's one leading ``'`` is dropped (:mod:`toolkit.frames.cells`): the toolkit writes
``-abc`` as ``'-abc`` so that no spreadsheet takes it for a formula, and reads it back as
``-abc``; a text that really starts with ``'`` is written with two.
The shipped templates (:func:`write_templates`) have an empty ``actions`` sheet and their
example rows on an ``examples`` sheet, which is never read: an untouched template plans
nothing.

>>> plan = plan_actions(client, "my_blacklist.xlsx")                  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from openpyxl.utils import get_column_letter

from ... import spec
from ...errors import WorkbookError, WorkbookProblem
from ...frames.cells import unescape_formula
from ...stats.countries import code_advice
from ..relative_bids import BidForm, BidFormError, parse_bid
from .action_cells import campaign_cell, campaigns_of, code_kind, item_code
from .actions_relative import bid_letter, form_problems, percent_bids
from .actions_templates import (
    COLUMNS,
    EXAMPLES_SHEET,
    SHEET,
    TEMPLATES,
    write_template,
    write_templates,
)
from .bid_forms import NOT_A_COUNTRY
from .cells import Book, is_empty, number_problem
from .layout import MAX_BID, typed_kinds

if TYPE_CHECKING:  # pragma: no cover
    from ...client import Client
    from ...frames import Account
    from ..journal import Journal
    from ..plan import Plan

MOVES = {"start": "Started", "pause": "Paused", "archive": "Archived"}
_ID_RE = re.compile(r"[0-9]+", re.ASCII)


@dataclass(frozen=True)
class Action:
    """One checked row of the ``actions`` sheet (``row`` is its Excel row)."""

    row: int
    action: str
    target: str
    campaigns: tuple[int, ...]
    item: str | None
    bid: float | None
    list_type: str | None
    #: A bid written as a change (``+10%``, ``x1.2``, ``min``, ``rec-5%``), and once settled
    #: against the live account, the new bid of each campaign.
    form: BidForm | None = None
    bids: dict[int, float] | None = None


def is_action_workbook(path: str | os.PathLike[str]) -> bool:
    """True when the workbook has an ``actions`` sheet; a file that is not an .xlsx
    workbook raises :class:`~toolkit.errors.WorkbookError`."""
    with Book(path) as book:
        return _actions_sheet(book.names) is not None


def _actions_sheet(names: list[str], sheet: str = SHEET) -> str | None:
    """The sheet named ``sheet``, whatever its case and surrounding spaces (``Actions``)."""
    return next((n for n in names if n.strip().lower() == sheet.strip().lower()), None)


def _sheet_rows(
    path: str | os.PathLike[str], sheet: str = SHEET
) -> tuple[list[dict[str, Any]], list[int], list[WorkbookProblem]]:
    """The ``actions`` sheet (or ``sheet``) as records (lower-cased headers), their Excel
    rows, and the bids Excel made percentages of (reported with the rows' problems); a
    missing sheet or column, a formula or merged cells raise one WorkbookError."""
    with Book(path) as book:
        name = _actions_sheet(book.names, sheet)
        if name is None:
            problem = WorkbookProblem(sheet, None, None, None, f"missing: no '{sheet}' sheet")
            raise WorkbookError([problem], str(path))
        rows = book.rows(name)
        scan = book.scan(name)
        letter = bid_letter(rows)
        shown = book.percent_rows(name, letter) if letter else []  # +10% that Excel made 0.1
    rows = [[unescape_formula(v) for v in row] for row in rows]  # as written: '=x is =x
    header = [str(c).strip().lower() if not is_empty(c) else "" for c in (rows[0] if rows else [])]
    problems = [
        WorkbookProblem(sheet, 1, c, None, "missing column") for c in COLUMNS if c not in header
    ]
    letters = {get_column_letter(i + 1): h for i, h in enumerate(header)}
    problems += [
        WorkbookProblem(
            sheet,
            r,
            letters.get(col, col),
            text,
            f"cell {col}{r} holds a formula; enter a value instead",
        )
        for col, r, text in scan.formulas
    ]
    problems += [
        WorkbookProblem(
            sheet,
            int(re.sub(r"[A-Z]", "", ref.split(":")[0])),
            None,
            None,
            f"cells {ref} are merged; unmerge them and fill in each cell",
        )
        for ref in scan.merged
    ]
    percent = percent_bids(sheet, header, rows, shown)
    if problems:
        raise WorkbookError(problems + percent, str(path))
    records, numbers = [], []
    for index, row in enumerate(rows[1:], start=2):
        record = {h: (None if is_empty(v) else v) for h, v in zip(header, row, strict=False) if h}
        if any(record.get(c) is not None for c in COLUMNS):
            records.append(record)
            numbers.append(index)
    return records, numbers, percent


def read_actions(
    path: str | os.PathLike[str], account: Account, *, sheet: str = SHEET
) -> list[Action]:
    """The rows of the ``actions`` sheet (or of ``sheet``, such as a bid report's proposal
    sheet), checked against the account; one :class:`~toolkit.errors.WorkbookError` lists
    every problem of every row."""
    return check_actions(path, account, sheet=sheet)[0]


def check_actions(
    path: str | os.PathLike[str], account: Account, *, sheet: str = SHEET
) -> tuple[list[Action], list[str]]:
    """The checked actions and warnings (campaigns a row leaves out, and why)."""
    records, numbers, found = _sheet_rows(path, sheet)
    return _check(records, numbers, account, str(path), sheet, found)


@dataclass
class _Campaigns:
    """What the rows are checked against: the account's campaigns, their formats, and the
    campaigns each item of the bid kind's table (``countries``) is targeted by."""

    ids: list[int]
    formats: dict[int, str]
    by_format: dict[str, list[int]]
    targeted: set[tuple[int, str]]

    @classmethod
    def of(cls, account: Account) -> _Campaigns:
        campaigns = account.table("campaigns")
        ids = [int(i) for i in campaigns["id"]]
        formats = dict(zip(ids, campaigns["ad_format"].astype(str), strict=True))
        by_format: dict[str, list[int]] = {}
        for cid, fmt in formats.items():
            by_format.setdefault(fmt, []).append(cid)
        countries = account.table("countries")
        targeted = set(
            zip(countries["campaign_id"].astype(int), countries["country"].astype(str), strict=True)
        )
        return cls(ids, formats, by_format, targeted)


def _check(
    records: list[dict[str, Any]],
    numbers: list[int],
    account: Account,
    path: str,
    sheet: str = SHEET,
    found: Sequence[WorkbookProblem] = (),
) -> tuple[list[Action], list[str]]:
    """The rows checked against ``account``; one WorkbookError names every problem: each
    row's, ``found`` before, and those of the bids written as changes that the live account
    tells (:func:`~toolkit.bulk.workbook.actions_relative.form_problems`)."""
    known = _Campaigns.of(account)
    problems: list[WorkbookProblem] = list(found)
    warnings: list[str] = []
    out: list[Action] = []
    for row, values in zip(numbers, records, strict=True):
        checked = _Row(row, values, known, warnings)
        if checked.found:
            problems += [p._replace(sheet=sheet) for p in checked.found]
        else:
            out.append(checked.action())
    problems += form_problems(out, account, sheet)
    if problems:
        raise WorkbookError(sorted(problems, key=lambda p: p.row or 0), path)
    return out, warnings


class _Row:
    """One row of the ``actions`` sheet, checked: its problems in ``found``; campaigns it
    leaves out are warned of in ``warnings``."""

    def __init__(
        self, row: int, values: dict[str, Any], known: _Campaigns, warnings: list[str]
    ) -> None:
        self.row, self.values, self.known, self.warnings = row, values, known, warnings
        self.found: list[WorkbookProblem] = []
        self.verb = str(values.get("action") or "").strip().lower()
        self.target = _target(values.get("target"))
        self.kind = _kind_of(self.target)
        allowed = _actions_for(self.target)
        if allowed is None:
            self.bad(
                "target", f"unknown target: a list, a target kind, {_bids()}, bid_rule or campaign"
            )
        elif self.verb not in allowed:
            self.bad(
                "action",
                f"for {self.target or 'a target'} the action is one of {', '.join(allowed)}",
            )
        self.chosen, why = campaigns_of(values.get("campaign"), known.ids, known.by_format)
        if self.chosen is None:
            self.bad("campaign", why)
        self.item = (
            None if values.get("item") is None else item_code(_text(values["item"]), self.kind)
        )
        list_type = values.get("list_type")
        self.list_type = None if list_type is None else str(list_type).strip().lower()
        self.bid = None
        if self.verb in ("set", "add") and _takes_bid(self.target):
            self.bid = _bid(values.get("bid"), self.bad, self.kind is not None)
        if allowed is not None and self.target != "campaign":
            self._check_item()
        if self.chosen and self.kind is not None:
            self._allowed_formats(self.kind)
            if self.kind.bids and self.verb == "set" and self.item is not None and not self.found:
                self._targeting(self.item.upper())

    def bad(self, column: str, message: str) -> None:
        value = self.values.get(column)
        if column == "campaign":  # an id as an integer however the cell was read
            value = campaign_cell(value)
        self.found.append(WorkbookProblem(SHEET, self.row, column, value, message))

    def _check_item(self) -> None:
        if self.item is None:
            self.bad("item", "the item is required")
            return
        message = _item_problem(self.target, self.item, self.list_type)
        if message:
            self.bad("item", message)

    def _allowed_formats(self, kind: spec.TargetKind) -> None:
        """Campaigns whose format refuses the kind are left out (a problem for one)."""
        assert self.chosen is not None
        formats = self.known.formats
        refused = [c for c in self.chosen if not kind.allowed_for(formats[c])]
        if refused and len(self.chosen) == 1:
            self.bad(
                "target", f"{self.target} is not available for {formats[refused[0]]} campaigns"
            )
        self.chosen = tuple(c for c in self.chosen if kind.allowed_for(formats[c]))

    def _targeting(self, code: str) -> None:
        """``set`` keeps the campaigns that target the item, and warns of the others."""
        assert self.chosen is not None
        lacking = [c for c in self.chosen if (c, code) not in self.known.targeted]
        self.chosen = tuple(c for c in self.chosen if (c, code) in self.known.targeted)
        if lacking and not self.chosen:
            who = (
                f"campaign {lacking[0]} does not target"
                if len(lacking) == 1
                else "none of these campaigns targets"
            )
            self.bad(
                "item",
                f"{who} {code}: set only changes the bid of a targeted {_bids()}; "
                "use action add to target it",
            )
        elif lacking:
            self.warnings.append(
                f"{SHEET} row {self.row}: set {code} leaves out {len(lacking)} campaign(s) that "
                f"do not target {code} (use action add to target it): "
                + ", ".join(map(str, lacking[:10]))
                + (" ..." if len(lacking) > 10 else "")
            )

    def action(self) -> Action:
        assert self.chosen is not None
        list_type = self.list_type
        if self.kind is not None and self.kind.typed:
            list_type = list_type or "black"
        form = self.bid if isinstance(self.bid, BidForm) else None
        bid = None if form is not None else self.bid
        chosen = tuple(self.chosen)
        return Action(self.row, self.verb, self.target, chosen, self.item, bid, list_type, form)


def _bids() -> str:
    """The name of the kind whose items carry bids (``country``)."""
    return spec.bid_kind().name


def _target(value: Any) -> str:
    """A target as rows spell it, in one spelling: lists with ``_`` (``subid_black``),
    kinds and ``bid-rule`` with ``-`` (``isp-mobile``)."""
    target = str(value or "").strip().lower().replace("_", "-")
    return target.replace("-", "_") if target.replace("-", "_") in spec.LISTS else target


def _kind_of(target: str) -> spec.TargetKind | None:
    """The target kind a target names, if it names one."""
    if not target or target in spec.LISTS:
        return None
    try:
        return spec.target_kind(target)
    except KeyError:
        return None


def _takes_bid(target: str) -> bool:
    kind = _kind_of(target)
    return target == "bid-rule" or (kind is not None and kind.bids)


def _bid(value: Any, bad: Any, priced: bool = True) -> float | BidForm | None:
    """The bid of a row: a number, or a change of the bid (``+10%``, ``min``; ``min`` and
    ``rec`` only where the item has a price: ``priced``)."""
    if value is None:
        bad("bid", "the bid is required (USD, more than 0)")
        return None
    try:
        form = parse_bid(value)
    except BidFormError as exc:
        bad("bid", str(exc))
        return None
    if isinstance(form, BidForm):
        if form.needs_price and not priced:
            bad("bid", NOT_A_COUNTRY.format(kind=_bids()))
            return None
        return form
    number, message = number_problem(value)
    if number is None:
        bad("bid", f"{message}: the bid is a number of USD, more than 0")
    elif not number > 0:
        bad("bid", "the bid must be more than 0")
    elif number > MAX_BID:
        bad("bid", f"more than {MAX_BID:,.0f} USD, the highest bid a workbook takes (a typo?)")
    else:
        return number
    return None


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _actions_for(target: str) -> tuple[str, ...] | None:
    kind = _kind_of(target)
    if target == "campaign":
        return tuple(MOVES)
    if kind is not None and kind.bids:
        return ("set", "add", "drop")
    if target == "bid-rule":
        return ("set", "drop")
    if target in spec.LISTS or kind is not None:
        return ("add", "drop")
    return None


def _item_problem(target: str, item: str, list_type: str | None) -> str | None:
    if target in spec.LISTS:
        lk = spec.LISTS[target]
        if lk.entity == "source":
            ok = bool(_ID_RE.fullmatch(item)) and int(item) > 0
        else:
            ok = item.isascii() and spec.is_hex(item)
        return None if ok else f"not a {'source id' if lk.entity == 'source' else 'hex subId'}"
    if target == "bid-rule":
        return None if item.isascii() and spec.is_hex(item) else "not a source id or hex subId"
    kind = _kind_of(target)
    if kind is None:
        return None
    if list_type is not None and (not kind.typed or list_type not in spec.LIST_TYPES):
        return f"list_type is black or white, and only for {typed_kinds()}"
    if code_kind(kind) is not None:  # what it probably meant: UK -> GB, english -> en
        return code_advice(item, kind.name) or None
    from ...client import checks
    from ...errors import ValidationError

    value: Any = item
    if kind.item_type is int:
        if not _ID_RE.fullmatch(item):
            return f"{target} takes a numeric id (digits 0-9)"
        value = int(item)
    try:
        problems = checks.item_problems(kind, value)
    except ValidationError as exc:  # pragma: no cover - item_problems returns, not raises
        problems = exc.problems
    return "; ".join(problems) or None


def desired_tables(actions: list[Action], account: Account) -> dict[str, pd.DataFrame]:
    """The account's tables with the actions applied: what the plan turns live into."""
    tables = {
        name: account.table(name).copy()
        for name in ("campaigns", "countries", "targets", "lists", "bid_rules")
    }
    ids = _CodeIds(account)
    unsettled = [a.row for a in actions if a.form is not None and a.bids is None]
    if unsettled:
        raise ValueError(f"rows {unsettled}: relative bids are settled by plan_actions first")
    touched = {_apply(tables, a, ids) for a in actions}
    return {name: tables[name] for name in touched}


def _apply(tables: dict[str, pd.DataFrame], a: Action, ids: _CodeIds) -> str:
    """Apply one action to ``tables``; the name of the table it changes."""
    kind = _kind_of(a.target)
    if a.target == "campaign":
        df = tables["campaigns"]
        df.loc[df["id"].isin(a.campaigns), "work_status"] = MOVES[a.action]
        return "campaigns"
    if a.target in spec.LISTS:
        key = ["campaign_id", "list", "item"]
        tables["lists"] = _edit(tables["lists"], a, {"list": a.target, "item": a.item}, key)
        return "lists"
    if kind is not None and kind.bids:
        assert a.item is not None
        values = {"country": a.item.upper(), "bid": a.bid}
        tables["countries"] = _edit(tables["countries"], a, values, ["campaign_id", "country"])
        return "countries"
    if a.target == "bid-rule":
        values = {"item": a.item, "bid": a.bid}
        tables["bid_rules"] = _edit(tables["bid_rules"], a, values, ["campaign_id", "item"])
        return "bid_rules"
    assert kind is not None
    values = {"kind": kind.column, "value": ids.value(kind, a.item), "list_type": a.list_type}
    key = ["campaign_id", "kind", "value", "list_type"]
    tables["targets"] = _edit(tables["targets"], a, values, key)
    return "targets"


class _CodeIds:
    """Items of a kind sent as codes (``language``) are written as codes and kept in the
    tables as the ids that name them in the kind's dictionary (``labels``)."""

    def __init__(self, account: Account) -> None:
        self.refs = account.refs
        self.maps: dict[str, dict[str, str]] = {}

    def value(self, kind: spec.TargetKind, item: str | None) -> str | None:
        if not kind.sent_as_code or kind.labels is None or item is None:
            return item
        if kind.labels not in self.maps:
            df = self.refs.get(kind.labels)
            ok = df is not None and len(df) and {"code", "id"} <= set(df.columns)
            self.maps[kind.labels] = (
                dict(zip(df["code"].astype(str), df["id"].astype(str), strict=True)) if ok else {}
            )
        return self.maps[kind.labels].get(item, item)


def _edit(df: pd.DataFrame, a: Action, values: dict[str, Any], key: list[str]) -> pd.DataFrame:
    """Remove the action's keys for its campaigns, then add rows back unless it drops."""
    mask = df["campaign_id"].isin(a.campaigns)
    for column in key[1:]:
        want = values[column]
        col = df[column].astype(object).where(df[column].notna(), None)
        mask &= col.map(lambda v, w=want: (v is None and w is None) or (str(v) == str(w)))
    df = df[~mask]
    if a.action == "drop":
        return df
    rows = [{"campaign_id": cid, **values} for cid in a.campaigns]
    if a.bids is not None:  # a relative bid, settled per campaign
        rows = [{**r, "bid": a.bids[r["campaign_id"]]} for r in rows]
    extra = pd.DataFrame(rows, columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, extra], ignore_index=True)


def plan_actions(
    client: Client,
    path: str | os.PathLike[str],
    *,
    sheet: str = SHEET,
    again: bool = False,
    journal: Journal | str | None = "default",
    **options: Any,
) -> Plan:
    """The plan of an action workbook: the live account with its actions applied.

    The sheet (``actions``, or ``sheet``: a bid report workbook's ``to minimum`` sheet, say)
    is read (and a broken file refused) before anything is asked of the service; the rows are
    then checked against the live account. Campaigns a row leaves out (``set`` of a country a
    campaign does not target) are listed in ``plan.warnings``. A bid written as a change
    (``+10%``, ``x1.2``, ``min``, ``rec-5%``) is settled against the live bid and the
    service's prices (:mod:`toolkit.bulk.workbook.actions_relative`); a change of the bid that an
    earlier run in ``journal`` applied already is refused unless ``again``.
    """
    from ..plan import account_of, make_plan, read_live
    from ..relative_bids import written
    from .actions_relative import provenance_of, refuse_again, settle_actions

    records, numbers, found = _sheet_rows(path, sheet)
    account = read_live(client)  # IncompleteReadError when a part could not be read
    actions, warnings = _check(records, numbers, account, str(path), sheet, found)
    actions, cells = settle_actions(client, actions, account, str(path), sheet)
    if not again:
        refuse_again(journal, client, account_of(account), cells)
    plan = make_plan(client, desired_tables(actions, account), live=account, **options)
    plan.written, plan.provenance = written(cells), [*plan.provenance, *provenance_of(cells)]
    if not records:
        warnings.append(
            f"the '{SHEET}' sheet has no rows: nothing to do (a template's examples are on "
            f"its '{EXAMPLES_SHEET}' sheet; copy the rows you want into '{SHEET}')"
        )
    plan.warnings[:0] = warnings
    return plan


__all__ = [
    "COLUMNS",
    "EXAMPLES_SHEET",
    "SHEET",
    "TEMPLATES",
    "Action",
    "check_actions",
    "desired_tables",
    "is_action_workbook",
    "plan_actions",
    "read_actions",
    "write_template",
    "write_templates",
]
