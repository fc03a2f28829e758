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
The shipped templates (:func:`write_templates`) have an empty ``actions`` sheet and their
example rows on an ``examples`` sheet, which is never read: an untouched template plans
nothing.

>>> plan = plan_actions(client, "my_blacklist.xlsx")                  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from openpyxl.utils import get_column_letter

from .. import spec
from ..errors import WorkbookError, WorkbookProblem
from .workbook_layout import MAX_BID
from .workbook_read import Book, is_empty, number_problem

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..frames import Account
    from .plan import Plan

SHEET = "actions"
#: Sheet of the example rows of a template: shown, never read.
EXAMPLES_SHEET = "examples"
COLUMNS: tuple[str, ...] = ("action", "target", "campaign", "item", "bid", "list_type")
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


def is_action_workbook(path: str | os.PathLike[str]) -> bool:
    """True when the workbook has an ``actions`` sheet; a file that is not an .xlsx
    workbook raises :class:`~toolkit.errors.WorkbookError`."""
    with Book(path) as book:
        return _actions_sheet(book.names) is not None


def _actions_sheet(names: list[str]) -> str | None:
    """The ``actions`` sheet, whatever its case and surrounding spaces (``Actions``)."""
    return next((n for n in names if n.strip().lower() == SHEET), None)


def _sheet_rows(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[int]]:
    """The ``actions`` sheet as records (lower-cased headers) and their Excel rows; a
    missing sheet or column, a formula or merged cells raise one WorkbookError."""
    with Book(path) as book:
        name = _actions_sheet(book.names)
        if name is None:
            problem = WorkbookProblem(SHEET, None, None, None, "missing: no 'actions' sheet")
            raise WorkbookError([problem], str(path))
        rows = book.rows(name)
        scan = book.scan(name)
    header = [str(c).strip().lower() if not is_empty(c) else "" for c in (rows[0] if rows else [])]
    problems = [
        WorkbookProblem(SHEET, 1, c, None, "missing column") for c in COLUMNS if c not in header
    ]
    letters = {get_column_letter(i + 1): h for i, h in enumerate(header)}
    problems += [
        WorkbookProblem(
            SHEET,
            r,
            letters.get(col, col),
            text,
            f"cell {col}{r} holds a formula; enter a value instead",
        )
        for col, r, text in scan.formulas
    ]
    problems += [
        WorkbookProblem(
            SHEET,
            int(re.sub(r"[A-Z]", "", ref.split(":")[0])),
            None,
            None,
            f"cells {ref} are merged; unmerge them and fill in each cell",
        )
        for ref in scan.merged
    ]
    if problems:
        raise WorkbookError(problems, str(path))
    records, numbers = [], []
    for index, row in enumerate(rows[1:], start=2):
        record = {h: (None if is_empty(v) else v) for h, v in zip(header, row, strict=False) if h}
        if any(record.get(c) is not None for c in COLUMNS):
            records.append(record)
            numbers.append(index)
    return records, numbers


def read_actions(path: str | os.PathLike[str], account: Account) -> list[Action]:
    """The rows of the ``actions`` sheet, checked against the account; one
    :class:`~toolkit.errors.WorkbookError` lists every problem of every row."""
    return check_actions(path, account)[0]


def check_actions(path: str | os.PathLike[str], account: Account) -> tuple[list[Action], list[str]]:
    """The checked actions and warnings (campaigns a row leaves out, and why)."""
    records, numbers = _sheet_rows(path)
    return _check(records, numbers, account, str(path))


def _check(
    records: list[dict[str, Any]], numbers: list[int], account: Account, path: str
) -> tuple[list[Action], list[str]]:
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
    problems: list[WorkbookProblem] = []
    warnings: list[str] = []
    out: list[Action] = []
    for row, values in zip(numbers, records, strict=True):
        found: list[WorkbookProblem] = []

        def bad(
            column: str, message: str, _row: int = row, _v: dict = values, _f: list = found
        ) -> None:
            _f.append(WorkbookProblem(SHEET, _row, column, _v.get(column), message))

        action = str(values.get("action") or "").strip().lower()
        target = str(values.get("target") or "").strip().lower().replace("_", "-")
        if target.replace("-", "_") in spec.LISTS:
            target = target.replace("-", "_")
        allowed = _actions_for(target)
        if allowed is None:
            bad("target", "unknown target: a list, a target kind, country, bid_rule or campaign")
        elif action not in allowed:
            bad("action", f"for {target or 'a target'} the action is one of {', '.join(allowed)}")
        chosen = _campaigns(values.get("campaign"), ids, by_format)
        if chosen is None:
            bad("campaign", "a campaign id of the account, 'all', or a format code")
        item = None if values.get("item") is None else _text(values["item"])
        list_type = values.get("list_type")
        list_type = None if list_type is None else str(list_type).strip().lower()
        bid = None
        if action in ("set", "add") and target in ("country", "bid-rule"):
            bid = _bid(values.get("bid"), bad)
        if allowed is not None and target != "campaign":
            if item is None:
                bad("item", "the item is required")
            else:
                message = _item_problem(target, item, list_type)
                if message:
                    bad("item", message)
        kind = spec.TARGET_KINDS.get(target)
        if chosen and kind is not None and target != "country":
            refused = [c for c in chosen if not kind.allowed_for(formats[c])]
            if refused and len(chosen) == 1:
                bad("target", f"{target} is not available for {formats[refused[0]]} campaigns")
            chosen = tuple(c for c in chosen if kind.allowed_for(formats[c]))
        if chosen and target == "country" and action == "set" and item is not None and not found:
            code = item.upper()
            lacking = [c for c in chosen if (c, code) not in targeted]
            chosen = tuple(c for c in chosen if (c, code) in targeted)
            if lacking and not chosen:
                who = (
                    f"campaign {lacking[0]} does not target"
                    if len(lacking) == 1
                    else "none of these campaigns targets"
                )
                bad(
                    "item",
                    f"{who} {code}: set only changes the bid of a targeted country; "
                    "use action add to target it",
                )
            elif lacking:
                warnings.append(
                    f"{SHEET} row {row}: set {code} leaves out {len(lacking)} campaign(s) that "
                    f"do not target {code} (use action add to target it): "
                    + ", ".join(map(str, lacking[:10]))
                    + (" ..." if len(lacking) > 10 else "")
                )
        if found:
            problems += found
            continue
        if kind is not None and kind.typed:
            list_type = list_type or "black"
        assert chosen is not None
        out.append(Action(row, action, target, tuple(chosen), item, bid, list_type))
    if problems:
        raise WorkbookError(problems, path)
    return out, warnings


def _bid(value: Any, bad: Any) -> float | None:
    if value is None:
        bad("bid", "the bid is required (USD, more than 0)")
        return None
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
    if target == "campaign":
        return tuple(MOVES)
    if target == "country":
        return ("set", "add", "drop")
    if target == "bid-rule":
        return ("set", "drop")
    if target in spec.LISTS or target in spec.TARGET_KINDS:
        return ("add", "drop")
    return None


def _campaigns(
    value: Any, ids: list[int], by_format: dict[str, list[int]]
) -> tuple[int, ...] | None:
    if value is None:
        return None
    text = _text(value).lower()
    if text == "all":
        return tuple(ids)
    if text in spec.FORMATS:
        return tuple(by_format.get(text, []))
    if not _ID_RE.fullmatch(text):
        return None
    cid = int(text)
    return (cid,) if cid in ids else None


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
    kind = spec.TARGET_KINDS.get(target)
    if kind is None:
        return None
    if list_type is not None and (not kind.typed or list_type not in spec.LIST_TYPES):
        return "list_type is black or white, and only for cidr and domain"
    from ..client import checks
    from ..errors import ValidationError

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
    code_of_language = {}
    lang = account.refs.get("language")
    if lang is not None and len(lang):
        code_of_language = dict(zip(lang["code"].astype(str), lang["id"].astype(str), strict=True))
    touched: set[str] = set()
    for a in actions:
        if a.target == "campaign":
            df = tables["campaigns"]
            df.loc[df["id"].isin(a.campaigns), "work_status"] = MOVES[a.action]
            touched.add("campaigns")
        elif a.target in spec.LISTS:
            tables["lists"] = _edit(
                tables["lists"],
                a,
                {"list": a.target, "item": a.item},
                ["campaign_id", "list", "item"],
            )
            touched.add("lists")
        elif a.target == "country":
            tables["countries"] = _edit(
                tables["countries"],
                a,
                {"country": a.item.upper(), "bid": a.bid},
                ["campaign_id", "country"],
            )
            touched.add("countries")
        elif a.target == "bid-rule":
            tables["bid_rules"] = _edit(
                tables["bid_rules"], a, {"item": a.item, "bid": a.bid}, ["campaign_id", "item"]
            )
            touched.add("bid_rules")
        else:
            value = code_of_language.get(a.item, a.item) if a.target == "language" else a.item
            tables["targets"] = _edit(
                tables["targets"],
                a,
                {"kind": a.target.replace("-", "_"), "value": value, "list_type": a.list_type},
                ["campaign_id", "kind", "value", "list_type"],
            )
            touched.add("targets")
    return {name: tables[name] for name in touched}


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
    extra = pd.DataFrame(rows, columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, extra], ignore_index=True)


def plan_actions(client: Client, path: str | os.PathLike[str], **options: Any) -> Plan:
    """The plan of an action workbook: the live account with its actions applied.

    The sheet is read (and a broken file refused) before anything is asked of the service;
    the rows are then checked against the live account. Campaigns a row leaves out (``set``
    of a country a campaign does not target) are listed in ``plan.warnings``.
    """
    from .plan import make_plan, read_live

    records, numbers = _sheet_rows(path)
    account = read_live(client)  # IncompleteReadError when a part could not be read
    actions, warnings = _check(records, numbers, account, str(path))
    plan = make_plan(client, desired_tables(actions, account), live=account, **options)
    if not records:
        warnings.append(
            f"the '{SHEET}' sheet has no rows: nothing to do (a template's examples are on "
            f"its '{EXAMPLES_SHEET}' sheet; copy the rows you want into '{SHEET}')"
        )
    plan.warnings[:0] = warnings
    return plan


def write_template(
    path: str | os.PathLike[str],
    title: str,
    instructions: list[str],
    rows: list[dict[str, Any]] | tuple[()] = (),
    *,
    examples: list[dict[str, Any]] | tuple[()] = (),
) -> Path:
    """An action workbook: instructions on the first sheet, ``rows`` in ``actions`` (what a
    plan reads) and ``examples`` on the ``examples`` sheet (never read)."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    book = Workbook()
    readme = book.active
    readme.title = "README"
    readme["A1"] = title
    readme["A1"].font = Font(bold=True, size=14)
    lines = [
        *instructions,
        "",
        "Columns of the 'actions' sheet: action, target, campaign, item, bid, list_type.",
        "campaign: a campaign id, 'all', or a format (push, pops, inpage, video).",
        "Only the 'actions' sheet is read. The 'examples' sheet shows rows to copy from; "
        "it is never read, so this file as shipped changes nothing.",
        "Write your rows in 'actions', save, then:",
        "  campaign-toolkit plan THIS_FILE     (shows the calls)",
        "  campaign-toolkit apply THIS_FILE    (asks, then applies; undo with"
        " campaign-toolkit undo RUN)",
    ]
    for i, line in enumerate(lines, start=3):
        readme.cell(row=i, column=1, value=line)
    readme.column_dimensions["A"].width = 110
    _rows_sheet(book.create_sheet(SHEET), rows)
    if examples:
        _rows_sheet(book.create_sheet(EXAMPLES_SHEET), examples)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path


def _rows_sheet(sheet: Any, rows: Any) -> None:
    from openpyxl.styles import Font

    sheet.append(list(COLUMNS))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in rows:
        sheet.append([row.get(c) for c in COLUMNS])
    for letter, width in zip("ABCDEF", (10, 16, 12, 24, 10, 10), strict=True):
        sheet.column_dimensions[letter].width = width
    sheet.freeze_panes = "A2"


TEMPLATES: dict[str, tuple[str, list[str], list[dict[str, Any]]]] = {
    "blacklist.xlsx": (
        "Blacklist sources or subIds across campaigns",
        [
            "One row per item and campaign (or 'all', or a format): action add, target "
            "source_black or subid_black. Use action drop to take an item off the blacklist."
        ],
        [
            {"action": "add", "target": "subid_black", "campaign": "all", "item": "ab12cd34"},
            {"action": "add", "target": "source_black", "campaign": "push", "item": 1234567},
        ],
    ),
    "whitelist.xlsx": (
        "Whitelist sources or subIds",
        [
            "action add, target source_white or subid_white. A whitelist limits a campaign to "
            "its items: adding the first one narrows traffic; dropping the last one widens it "
            "(the plan refuses that unless allowed)."
        ],
        [{"action": "add", "target": "source_white", "campaign": "all", "item": 7654321}],
    ),
    "country_bids.xlsx": (
        "Set country bids",
        [
            "action set, target country, item the ISO country code, bid in USD (per 1000 "
            "impressions or per click, as the campaign's model). set only changes the bid of "
            "campaigns that already target the country: the others are left out, with a "
            "warning (a single campaign that does not target it is an error). action add "
            "targets the country at the bid (added where missing, bid set where targeted). "
            "A new bid is a drop and an add; the old bid is restored if the add fails. "
            "action drop removes the country."
        ],
        [
            {"action": "set", "target": "country", "campaign": "all", "item": "US", "bid": 0.05},
            {"action": "add", "target": "country", "campaign": 1000001, "item": "CA", "bid": 0.03},
            {"action": "drop", "target": "country", "campaign": "pops", "item": "FR"},
        ],
    ),
    "targeting.xlsx": (
        "Add or drop targeting of any kind",
        [
            "action add or drop; target one of: " + ", ".join(spec.TARGET_KINDS) + " (country: "
            "see country_bids.xlsx). item: ids for os, browser, category, city, region, "
            "isp-mobile and subs-age; codes for quality, connection-type, language; values for "
            "cidr and domain, with list_type black or white."
        ],
        [
            {"action": "add", "target": "quality", "campaign": "all", "item": "high"},
            {
                "action": "add",
                "target": "cidr",
                "campaign": "all",
                "item": "10.0.0.0/8",
                "list_type": "black",
            },
            {"action": "drop", "target": "os", "campaign": "push", "item": 1},
        ],
    ),
    "bid_rules.xlsx": (
        "Set bid rules (micro-bidding)",
        [
            "action set, target bid_rule, item a source id or subId, bid in USD; action drop "
            "removes the item's rule."
        ],
        [
            {
                "action": "set",
                "target": "bid_rule",
                "campaign": "all",
                "item": "ab12cd34",
                "bid": 0.07,
            }
        ],
    ),
    "work_status.xlsx": (
        "Start, pause or archive campaigns",
        [
            "action start, pause or archive; target campaign. Pauses run first and starts last; "
            "archiving more than one campaign needs --allow bulk_archive."
        ],
        [{"action": "pause", "target": "campaign", "campaign": 1000001}],
    ),
}


def write_templates(folder: str | os.PathLike[str]) -> list[Path]:
    """Write every action template into ``folder``: an empty ``actions`` sheet, and the
    example rows on the ``examples`` sheet (so an untouched template plans nothing)."""
    return [
        write_template(Path(folder) / name, title, text, examples=examples)
        for name, (title, text, examples) in TEMPLATES.items()
    ]
