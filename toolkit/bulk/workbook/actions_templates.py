"""The action templates: workbooks with an empty ``actions`` sheet, instructions on their
first sheet and example rows on an ``examples`` sheet (never read), so an untouched template
plans nothing. :func:`write_templates` writes them all (the files in ``templates/``).

>>> sorted(TEMPLATES)[:2]
['bid_rules.xlsx', 'blacklist.xlsx']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ... import spec
from ...frames.cells import excel_text, put_cell
from .layout import typed_kinds

SHEET = "actions"
#: Sheet of the example rows of a template: shown, never read.
EXAMPLES_SHEET = "examples"
COLUMNS: tuple[str, ...] = ("action", "target", "campaign", "item", "bid", "list_type")
#: A template: its title, its instructions, its example rows.
Template = tuple[str, list[str], list[dict[str, Any]]]


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
    put_cell(readme, 1, 1, title).font = Font(bold=True, size=14)
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
        put_cell(readme, i, 1, line)
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
    from openpyxl.utils import get_column_letter

    extra = list(dict.fromkeys(k for row in rows for k in row if k not in COLUMNS))
    # extra columns (a reason, say) are shown, never read
    sheet.append([excel_text(c) for c in (*COLUMNS, *extra)])
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in rows:  # text as text, never a formula (read back by bulk.workbook.actions)
        sheet.append([excel_text(row.get(c)) for c in (*COLUMNS, *extra)])
    for letter, width in zip("ABCDEF", (10, 16, 12, 24, 10, 10), strict=True):
        sheet.column_dimensions[letter].width = width
    bid = sheet.column_dimensions[get_column_letter(COLUMNS.index("bid") + 1)]
    bid.number_format = "@"  # text: +10% stays +10% (Excel would make it the number 0.1)
    sheet.freeze_panes = "A2"


def _item_is(kind: spec.TargetKind) -> str:
    """What a row's item is for ``kind``: ids, codes, or values."""
    if kind.values is not None or kind.sent_as_code:
        return "codes"
    return "ids" if kind.item_type is int else "values"


def _targeting_text() -> str:
    """How to fill a targeting row, from the kinds of the moment."""
    kinds = spec.item_kinds()
    groups = {what: [k.name for k in kinds if _item_is(k) == what] for what in _ITEMS}
    items = "; ".join(f"{what} for {', '.join(names)}" for what, names in groups.items() if names)
    return (
        f"action add or drop; target one of: {', '.join(spec.TARGET_KINDS)} "
        f"({spec.bid_kind().name}: see country_bids.xlsx). item: {items}; "
        f"list_type black or white for {typed_kinds()}."
    )


_ITEMS = ("ids", "codes", "values")


_TEMPLATES: dict[str, tuple[str, list[str | Callable[[], str]], list[dict[str, Any]]]] = {
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
            "action drop removes the country.",
            "Bids differ by format and model: a video campaign buying per 1000 impressions "
            "bids some USD, a push or in-page campaign buying per click some cents. So set a "
            "format (or one campaign) at a time, not 'all'. A bid raised more than 3x its "
            "old value or cut by more than two thirds is refused (the guard bid_jump) unless "
            "--allow bid_jump: a format whose campaigns buy in both models is set one "
            "campaign at a time. The note column of the examples is not read.",
            "A bid may be a change of each campaign's live bid: +10%, -5%, x1.2; or the "
            "service's price for the campaign's targeting in the country: min, rec, min+10%, "
            "rec-5% (the price's unit must be the campaign's: per click for push and in-page, "
            "per 1000 impressions for pops and video). A +10% row applied once is refused the "
            "second time (it would raise the new bid again) unless --again.",
        ],
        [
            {
                "action": "set",
                "target": "country",
                "campaign": "video",
                "item": "US",
                "bid": 12.0,
                "note": "video campaigns buying per 1000 impressions (CPM)",
            },
            {
                "action": "set",
                "target": "country",
                "campaign": "inpage",
                "item": "US",
                "bid": 0.25,
                "note": "in-page campaigns buying per click (CPC)",
            },
            {
                "action": "add",
                "target": "country",
                "campaign": 1000001,
                "item": "CA",
                "bid": 9.0,
                "note": "one video campaign buying per 1000 impressions (CPM)",
            },
            {
                "action": "set",
                "target": "country",
                "campaign": "inpage",
                "item": "US",
                "bid": "+10%",
                "note": "in-page campaigns targeting US: each one's bid raised by 10%",
            },
            {
                "action": "add",
                "target": "country",
                "campaign": "pops",
                "item": "DE",
                "bid": "rec-5%",
                "note": "pops campaigns: DE at 5% under the recommended price of their targeting",
            },
            {"action": "drop", "target": "country", "campaign": "pops", "item": "FR"},
        ],
    ),
    "targeting.xlsx": (
        "Add or drop targeting of any kind",
        [_targeting_text],
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
            "action set, target bid_rule, item a source id or subId, bid in USD (or a change "
            "of the rule's live bid: +10%, -5%, x0.9); action drop removes the item's rule."
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


class _Templates(Mapping[str, "Template"]):
    """File name -> (title, instructions, example rows), written when asked (the targeting
    template lists the kinds of that moment)."""

    def __getitem__(self, name: str) -> Template:
        title, text, examples = _TEMPLATES[name]
        return title, [t() if callable(t) else t for t in text], examples

    def __iter__(self) -> Iterator[str]:
        return iter(_TEMPLATES)

    def __len__(self) -> int:
        return len(_TEMPLATES)


#: The action templates: file name -> (title, instructions, example rows).
TEMPLATES: Mapping[str, Template] = _Templates()


def write_templates(folder: str | os.PathLike[str]) -> list[Path]:
    """Write every action template into ``folder``: an empty ``actions`` sheet, and the
    example rows on the ``examples`` sheet (so an untouched template plans nothing)."""
    return [
        write_template(Path(folder) / name, title, text, examples=examples)
        for name, (title, text, examples) in TEMPLATES.items()
    ]


__all__ = [
    "COLUMNS",
    "EXAMPLES_SHEET",
    "SHEET",
    "TEMPLATES",
    "Template",
    "write_template",
    "write_templates",
]
