"""Action workbooks: one row per change ("add subId ab12 to the blacklist of campaign 7"),
read into the same kind of :class:`~toolkit.bulk.plan.Plan` as an edited account workbook.

The ``actions`` sheet has the columns ``action``, ``target``, ``campaign``, ``item``, ``bid``
and ``list_type``:

- ``add`` / ``drop`` a list item: target ``source_black``, ``subid_black``, ``source_white``
  or ``subid_white``; item a source id or subId;
- ``add`` / ``drop`` targeting: target a kind (``os``, ``quality``, ``cidr``, ``language``,
  ...); item its value (``list_type`` black or white for cidr and domain);
- ``set`` / ``drop`` a country: item the country code; ``set`` takes the ``bid``;
- ``set`` / ``drop`` a bid rule: target ``bid_rule``; item a source id or subId;
- ``start`` / ``pause`` / ``archive``: target ``campaign``.

``campaign`` is a campaign id, ``all`` (every campaign of the account), or a format code
(``push``, ``pops``, ``inpage``, ``video``: every campaign of that format).

>>> plan = plan_actions(client, "templates/blacklist.xlsx")           # doctest: +SKIP
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import spec
from ..errors import WorkbookError, WorkbookProblem

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..frames import Account
    from .plan import Plan

SHEET = "actions"
COLUMNS: tuple[str, ...] = ("action", "target", "campaign", "item", "bid", "list_type")
MOVES = {"start": "Started", "pause": "Paused", "archive": "Archived"}


@dataclass(frozen=True)
class Action:
    row: int
    action: str
    target: str
    campaigns: tuple[int, ...]
    item: str | None
    bid: float | None
    list_type: str | None


def is_action_workbook(path: str | os.PathLike[str]) -> bool:
    """True when the workbook has an ``actions`` sheet."""
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True)
    try:
        return SHEET in book.sheetnames
    finally:
        book.close()


def read_actions(path: str | os.PathLike[str], account: Account) -> list[Action]:
    """The rows of the ``actions`` sheet, checked against the account; one
    :class:`~toolkit.errors.WorkbookError` lists every bad cell."""
    frame = pd.read_excel(path, sheet_name=SHEET, dtype=object, engine="calamine")
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    problems: list[WorkbookProblem] = []
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise WorkbookError(
            [WorkbookProblem(SHEET, None, c, None, "column is missing") for c in missing], path
        )
    campaigns = account.table("campaigns")
    ids = [int(i) for i in campaigns["id"]]
    by_format: dict[str, list[int]] = {}
    for cid, fmt in zip(ids, campaigns["ad_format"].astype(str), strict=True):
        by_format.setdefault(fmt, []).append(cid)
    formats = dict(zip(ids, campaigns["ad_format"].astype(str), strict=True))
    out: list[Action] = []
    for index, raw in enumerate(frame.to_dict("records")):
        row = index + 2
        values = {k: (None if _blank(v) else v) for k, v in raw.items()}
        if all(values.get(c) is None for c in COLUMNS):
            continue

        def bad(column: str, message: str, _row: int = row, _v: dict = values) -> None:
            problems.append(WorkbookProblem(SHEET, _row, column, _v.get(column), message))

        action = str(values.get("action") or "").strip().lower()
        target = str(values.get("target") or "").strip().lower().replace("_", "-")
        if target.replace("-", "_") in spec.LISTS:
            target = target.replace("-", "_")
        allowed = _actions_for(target)
        if allowed is None:
            bad("target", "unknown target: a list, a target kind, country, bid_rule or campaign")
            continue
        if action not in allowed:
            bad("action", f"for {target} the action is one of {', '.join(allowed)}")
            continue
        chosen = _campaigns(values.get("campaign"), ids, by_format)
        if chosen is None:
            bad("campaign", "a campaign id of the account, 'all', or a format code")
            continue
        item = None if values.get("item") is None else _text(values["item"])
        bid = values.get("bid")
        list_type = values.get("list_type")
        list_type = None if list_type is None else str(list_type).strip().lower()
        if target != "campaign" and item is None:
            bad("item", "the item is required")
            continue
        if action == "set":
            try:
                bid = float(bid)
                if not bid > 0:
                    raise ValueError
            except (TypeError, ValueError):
                bad("bid", "set needs a bid greater than 0")
                continue
        else:
            bid = None
        message = _item_problem(target, item, list_type)
        if message:
            bad("item", message)
            continue
        kind = spec.TARGET_KINDS.get(target)
        if kind is not None and target != "country":
            refused = [c for c in chosen if not kind.allowed_for(formats[c])]
            if refused and len(chosen) == 1:
                bad("target", f"{target} is not available for {formats[refused[0]]} campaigns")
                continue
            chosen = tuple(c for c in chosen if kind.allowed_for(formats[c]))
        if kind is not None and kind.typed:
            list_type = list_type or "black"
        out.append(Action(row, action, target, tuple(chosen), item, bid, list_type))
    if problems:
        raise WorkbookError(problems, path)
    return out


def _blank(value: Any) -> bool:
    return (
        value is None
        or (isinstance(value, float) and pd.isna(value))
        or (isinstance(value, str) and not value.strip())
    )


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _actions_for(target: str) -> tuple[str, ...] | None:
    if target == "campaign":
        return tuple(MOVES)
    if target in ("country", "bid-rule"):
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
    try:
        cid = int(text)
    except ValueError:
        return None
    return (cid,) if cid in ids else None


def _item_problem(target: str, item: str | None, list_type: str | None) -> str | None:
    if target in spec.LISTS:
        lk = spec.LISTS[target]
        ok = item.isdigit() and int(item) > 0 if lk.entity == "source" else spec.is_hex(item)
        return None if ok else f"not a {'source id' if lk.entity == 'source' else 'hex subId'}"
    if target == "bid-rule":
        return None if spec.is_hex(item) else "not a source id or hex subId"
    kind = spec.TARGET_KINDS.get(target)
    if kind is None:
        return None
    if list_type is not None and (not kind.typed or list_type not in spec.LIST_TYPES):
        return "list_type is black or white, and only for cidr and domain"
    from ..client import checks
    from ..errors import ValidationError

    value: Any = item
    if kind.item_type is int:
        if not item.isdigit():
            return f"{target} takes a numeric id"
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
    """The plan of an action workbook: the live account with its actions applied."""
    from ..frames import load_account
    from .plan import make_plan

    account = load_account(client, progress=False)
    actions = read_actions(path, account)
    return make_plan(client, desired_tables(actions, account), live=account, **options)


def write_template(
    path: str | os.PathLike[str],
    title: str,
    instructions: list[str],
    examples: list[dict[str, Any]],
) -> Path:
    """An action workbook: instructions on the first sheet, example rows in ``actions``."""
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
        "Replace the example rows with yours, save, then:",
        "  campaign-toolkit plan THIS_FILE     (shows the calls)",
        "  campaign-toolkit apply THIS_FILE    (asks, then applies; undo with"
        " campaign-toolkit undo RUN)",
    ]
    for i, line in enumerate(lines, start=3):
        readme.cell(row=i, column=1, value=line)
    readme.column_dimensions["A"].width = 110
    sheet = book.create_sheet(SHEET)
    sheet.append(list(COLUMNS))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for example in examples:
        sheet.append([example.get(c) for c in COLUMNS])
    for letter, width in zip("ABCDEF", (10, 16, 12, 24, 10, 10), strict=True):
        sheet.column_dimensions[letter].width = width
    sheet.freeze_panes = "A2"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path


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
            "impressions or per click, as the campaign's model). A new bid for a targeted "
            "country is a drop and an add; the old bid is restored if the add fails. "
            "action drop removes the country."
        ],
        [
            {"action": "set", "target": "country", "campaign": "all", "item": "US", "bid": 0.05},
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
    """Write every action template into ``folder``."""
    return [write_template(Path(folder) / name, *spec_) for name, spec_ in TEMPLATES.items()]
