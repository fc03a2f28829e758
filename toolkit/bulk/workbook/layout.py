"""The layout of the editable workbook: its sheets, their columns, which are editable, keys.

One :class:`Sheet` per table of the account (``campaigns``, ``countries``, ``targets``,
``lists``, ``bid_rules``, ``cpa_rules``, ``creatives``), in that order. Column names and
dtypes are those of :data:`toolkit.frames.schemas.SCHEMAS`; this module only says which
columns a sheet shows, which of them a person may edit, the key of a row, the cells that
must not be empty, the number formats and the drop-down lists.

>>> SHEETS["countries"].editable
('campaign_id', 'country', 'bid')
>>> SHEETS["countries"].key
('campaign_id', 'country')
>>> SHEETS["lists"].columns
('campaign_id', 'list', 'item')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

import pandas as pd

from ... import spec
from ...frames.account import TABLES
from ...frames.schemas import SCHEMAS

#: Hidden sheet of the drop-down lists (one column per list).
LISTS_SHEET = "_lists"
#: Hidden sheet of the account's dictionaries, long form (type, ad_format, id, code, name).
REFS_SHEET = "_refs"
#: Hidden sheet of facts about the export (key, value).
META_SHEET = "_meta"
#: Prefix of the hidden sheets holding the exported state of each table.
BASE_PREFIX = "_base_"
README_SHEET = "README"
#: What ``_meta`` says a toolkit workbook is, and the version of this layout.
WORKBOOK_FORMAT = "campaign-toolkit workbook"
WORKBOOK_VERSION = 1
REFS_COLUMNS: tuple[str, ...] = ("type", "ad_format", "id", "code", "name")

#: Rows a sheet holds in Excel and LibreOffice (the header included); a reader refuses a
#: table sheet that reaches it, as it may have been cut off when saved.
ROW_LIMIT = 1_048_576
#: Data rows written per sheet; a longer table continues on ``<table> (2)``, ``(3)``, ...
SHEET_ROWS = 1_000_000
#: Highest bid (USD) a workbook may hold: a bid above it is taken for a typo (the interface's
#: bound, :data:`toolkit.spec.MAX_BID`).
MAX_BID = spec.MAX_BID

#: Number formats.
MONEY_FORMAT = "0.0000##"
INT_FORMAT = "0"
RATE_FORMAT = "0.000"
TIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
TEXT_FORMAT = "@"

#: Characters that make a spreadsheet read a typed string as a formula.
FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class Sheet:
    """One table's sheet.

    ``columns`` are shown in this order: the columns of the table's schema but ``omit``
    (read from :data:`SCHEMAS` when asked, so columns that follow the target kinds follow a
    kind added at run time); ``editable`` may be changed (every other column is read-only:
    grey, with a header comment, and checked against the exported state); ``key`` identifies
    a row; ``required`` cells must not be empty; ``money`` columns get
    :data:`MONEY_FORMAT`; ``choices`` maps a column to the drop-down list (a column of the
    hidden ``_lists`` sheet) its cells must come from; ``locked`` says whether sheet
    protection locks the read-only columns (only on sheets whose rows are not deleted: Excel
    refuses to delete or sort rows holding a locked cell); ``row`` says what one row is;
    ``notes`` are the header comments, text or a function giving it (see :meth:`note`).
    """

    table: str
    editable: tuple[str, ...]
    key: tuple[str, ...]
    required: tuple[str, ...]
    row: str
    omit: tuple[str, ...] = ()
    money: tuple[str, ...] = ()
    choices: dict[str, str] = field(default_factory=dict)
    locked: bool = False
    notes: dict[str, str | Callable[[], str]] = field(default_factory=dict)
    #: Read-only text columns shown first, outside the table's schema: ``account`` in a
    #: workbook of several accounts (:func:`set_sheet`).
    extra: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns shown, in sheet order."""
        return (*self.extra, *(c for c in SCHEMAS[self.table] if c not in self.omit))

    @property
    def read_only(self) -> tuple[str, ...]:
        """The columns that are not editable, in sheet order."""
        return tuple(c for c in self.columns if c not in self.editable)

    @property
    def headers_required(self) -> tuple[str, ...]:
        """Columns whose header must be present: the key and every editable column."""
        return tuple(c for c in self.columns if c in self.editable or c in self.key)

    def note(self, column: str) -> str:
        """The header comment of ``column`` (empty when it has none)."""
        note = self.notes.get(column, "")
        return note() if callable(note) else note

    def dtype(self, column: str) -> object:
        """The declared dtype of ``column`` (from :data:`SCHEMAS`; text for an extra one)."""
        if column in self.extra:
            return pd.StringDtype()
        return SCHEMAS[self.table][column]

    def number_format(self, column: str) -> str:
        """The number format of the column's cells."""
        dtype = self.dtype(column)
        if column == "bid":  # text, so that +10% stays +10% (Excel would make it 0.1)
            return TEXT_FORMAT
        if column in self.money:
            return MONEY_FORMAT
        if column == "ctr":
            return RATE_FORMAT
        if isinstance(dtype, pd.DatetimeTZDtype):
            return TIME_FORMAT
        if isinstance(dtype, pd.Int64Dtype):
            return INT_FORMAT
        if isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)):
            return TEXT_FORMAT
        return "General"


#: The header notes of the bid columns: a number, or a change of the bid at export.
_BID_NOTE = "USD, more than 0; or a change of the exported bid: +10%, -5%, x1.2, min, rec, rec-5%"
_BID_RULE_NOTE = "USD, more than 0; or a change of the exported bid: +10%, -5%, x1.2"


def _names(kinds: Iterable[spec.TargetKind], last: str = ", ") -> str:
    """Kinds' table spellings in a list: ``cidr and domain``, ``os, browser, city``."""
    names = [k.column for k in kinds]
    return last.join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


def typed_kinds() -> str:
    """The kinds that take a list type, as text (``cidr and domain``)."""
    return _names((k for k in spec.item_kinds() if k.typed), " and ")


def _value_note() -> str:
    """What the ``value`` of a target is, by the traits of the kinds of the moment."""
    kinds = spec.item_kinds()
    groups = (
        ("ids for", [k for k in kinds if k.stored_as_int]),
        ("codes for", [k for k in kinds if k.values is not None]),
        ("text for", [k for k in kinds if not k.stored_as_int and k.values is None]),
    )
    return "; ".join(f"{what} {_names(group)}" for what, group in groups if group)


def _list_type_note() -> str:
    return f"black or white, for {typed_kinds()} only (empty: black)"


def _kind_note() -> str:
    return f"one of: {_names(spec.item_kinds())} (the README sheet says what each value is)"


_LIMITS = tuple(lim.field for lim in spec.LIMITS.values())
_MONEY_LIMITS = tuple(lim.field for lim in spec.LIMITS.values() if lim.kind is float)

SHEETS: dict[str, Sheet] = {
    s.table: s
    for s in (
        Sheet(
            "campaigns",
            editable=("name", "work_status", "frequency_capping", "url", "note", *_LIMITS),
            key=("id",),
            required=("id", "name", "work_status"),
            row="campaign",
            omit=("user_id",),
            money=(*_MONEY_LIMITS, *(f + "_value" for f in _MONEY_LIMITS)),
            choices={"work_status": "work_status"},
            locked=True,
            notes={
                "work_status": "Paused, Started or Archived",
                "frequency_capping": "0: no capping",
                "t_created": "UTC",
                **{f: "empty: no limit" for f in _LIMITS},
            },
        ),
        Sheet(
            "countries",
            editable=("campaign_id", "country", "bid"),
            key=("campaign_id", "country"),
            required=("campaign_id", "country", "bid"),
            row="country a campaign targets, with its bid",
            money=("bid", "l_d_sum"),
            choices={"country": "country", "campaign_id": "campaign_id"},
            notes={"country": lambda: spec.bid_kind().help, "bid": _BID_NOTE},
        ),
        Sheet(
            "targets",
            editable=("campaign_id", "kind", "value", "list_type"),
            key=("campaign_id", "kind", "list_type", "value"),
            required=("campaign_id", "kind", "value"),
            row="targeted value of one kind (country bids are on the countries sheet)",
            choices={"kind": "kind", "list_type": "list_type", "campaign_id": "campaign_id"},
            notes={"kind": _kind_note, "value": _value_note, "list_type": _list_type_note},
        ),
        Sheet(
            "lists",
            editable=("campaign_id", "list", "item"),
            key=("campaign_id", "list", "item"),
            required=("campaign_id", "list", "item"),
            row="source id or subId a campaign lists",
            choices={"list": "list", "campaign_id": "campaign_id"},
            notes={"item": "source id (a positive integer) or subId (hexadecimal)"},
        ),
        Sheet(
            "bid_rules",
            editable=("campaign_id", "item", "bid"),
            key=("campaign_id", "item"),
            required=("campaign_id", "item", "bid"),
            row="bid for one source or subId of a campaign",
            money=("bid",),
            choices={"campaign_id": "campaign_id"},
            notes={"item": "source id or subId (hexadecimal)", "bid": _BID_RULE_NOTE},
        ),
        Sheet(
            "cpa_rules",
            editable=tuple(c for c in SCHEMAS["cpa_rules"] if c != "id"),
            key=("id",),
            required=("campaign_id", *spec.CPA_FIELDS),
            row="CPA rule (leave id empty for a new rule)",
            choices={
                "campaign_id": "campaign_id",
                "type": "cpa_type",
                "cond": "cpa_cond",
                "lead_type": "cpa_lead_type",
                "lead_cond": "cpa_cond",
            },
            notes={"id": "empty for a new rule"},
        ),
        Sheet(
            "creatives",
            editable=("title", "text", "url", "work_status"),
            key=("id",),
            required=("id", "title", "work_status"),
            row="creative",
            choices={"work_status": "work_status"},
            locked=True,
            notes={
                "title": f"at most {spec.CREATIVE_TITLE_MAX} characters",
                "text": f"at most {spec.CREATIVE_TEXT_MAX} characters",
                "t_created": "UTC",
                "ctr": "percent",
            },
        ),
    )
}
assert tuple(SHEETS) == TABLES


class _ByTable(Mapping[str, tuple[str, ...]]):
    """``table -> one trait of its sheet``, read from :data:`SHEETS` when asked."""

    def __init__(self, trait: Callable[[Sheet], tuple[str, ...]]) -> None:
        self._trait = trait

    def __getitem__(self, table: str) -> tuple[str, ...]:
        return self._trait(SHEETS[table])

    def __iter__(self) -> Iterator[str]:
        return iter(SHEETS)

    def __len__(self) -> int:
        return len(SHEETS)

    def __repr__(self) -> str:
        return repr(dict(self))


#: ``table -> columns`` shown (and returned by the reader), in sheet order.
COLUMNS: Mapping[str, tuple[str, ...]] = _ByTable(lambda s: s.columns)
#: ``table -> editable columns``.
EDITABLE: Mapping[str, tuple[str, ...]] = _ByTable(lambda s: s.editable)
#: ``table -> read-only columns``.
READ_ONLY: Mapping[str, tuple[str, ...]] = _ByTable(lambda s: s.read_only)
#: ``table -> key columns``.
KEYS: Mapping[str, tuple[str, ...]] = _ByTable(lambda s: s.key)


#: The column that names each row's account in a workbook of several accounts.
ACCOUNT_COLUMN = "account"
_ACCOUNT_NOTE = (
    "The account (profile name) the row belongs to. An edit cannot move a row to another"
    " account; a new row may leave it empty (its campaign's account)"
)


def set_sheet(table: str) -> Sheet:
    """The sheet of ``table`` in a workbook of several accounts: ``account`` first."""
    sheet = SHEETS[table]
    notes = {**sheet.notes, ACCOUNT_COLUMN: _ACCOUNT_NOTE}
    return replace(sheet, extra=(ACCOUNT_COLUMN,), notes=notes)


def part_name(sheet: str, part: int) -> str:
    """The name of a table's ``part``-th sheet: ``lists``, ``lists (2)``, ``lists (3)``, ...

    >>> part_name("lists", 1), part_name("_base_lists", 2)
    ('lists', '_base_lists (2)')
    """
    return sheet if part == 1 else f"{sheet} ({part})"


def choice_lists(campaign_ids: list[int] | None = None) -> dict[str, list[object]]:
    """The drop-down lists of the hidden ``_lists`` sheet, by name: the kinds of the
    ``targets`` table and the values of each kind with a closed set of them are those of
    :data:`toolkit.spec.TARGET_KINDS` at the time of the call."""
    import pycountry

    kinds = spec.item_kinds()
    lists: dict[str, list[object]] = {
        "country": sorted(c.alpha_2 for c in pycountry.countries),
        "kind": [k.column for k in kinds],
        **{k.column: list(k.values) for k in kinds if k.values is not None},
        "list": list(spec.LISTS),
        "list_type": list(spec.LIST_TYPES),
        "work_status": list(spec.WORK_STATUSES),
        "ad_format": list(spec.FORMAT_CODES),
        "cpa_type": list(spec.CPA_TYPES),
        "cpa_cond": list(spec.CPA_CONDS),
        "cpa_lead_type": list(spec.CPA_LEAD_TYPES),
    }
    if campaign_ids:
        lists["campaign_id"] = list(campaign_ids)
    return lists


_HOW_TO: tuple[tuple[str, str], ...] = (
    (
        "Editable cells",
        "Columns with a green header may be edited. Grey columns are "
        "read-only (ids, status, labels, counters, t_created ...): their header has a "
        "comment, and a changed read-only value is reported when the workbook is read.",
    ),
    (
        "Item sheets",
        "On countries, targets, lists, bid_rules and cpa_rules a row is one "
        "item: add a row to add an item, delete the row to drop it, change a bid in place.",
    ),
    (
        "Bids",
        "A bid is a number, or a change of the exported bid: +10%, -5%, x1.2; on countries "
        "also the service's price for the campaign: min, rec, min+10%, rec-5%. The same "
        "workbook applied twice changes nothing more.",
    ),
    (
        "Campaigns, creatives",
        "A row is a campaign (a creative): rows cannot be added or "
        "deleted here. Edit the white cells; set work_status to Paused, Started or Archived.",
    ),
    (
        "Missing sheet",
        'A sheet you delete means "no change" for its table, never '
        '"drop everything". Delete the sheets you do not edit if you like.',
    ),
    (
        "Long tables",
        f"A sheet holds at most {SHEET_ROWS:,} rows (spreadsheets stop at "
        f"{ROW_LIMIT:,}): a longer table continues on 'lists (2)', 'lists (3)', ... "
        "Keep all its sheets, or delete all of them for no change. A table sheet that "
        f"reaches row {ROW_LIMIT:,} is refused as possibly cut off.",
    ),
    (
        "Formulas",
        "Enter values: a formula or merged cells in a table sheet are reported "
        "when the workbook is read.",
    ),
    (
        "Hidden sheets",
        "_base_* keep the exported state (to detect what changed on both "
        "sides since the export), _lists and _refs the drop-down lists and dictionaries, "
        "_meta facts about the export. Leave them as they are.",
    ),
    (
        "Protection",
        "Sheets are protected without a password; inserting and deleting "
        "rows, sorting and filtering stay allowed. On campaigns and creatives the "
        "read-only cells are locked (unprotect the sheet to sort it: Review > Unprotect "
        "Sheet).",
    ),
    (
        "Text",
        "Values are text as shown: a value starting with = + - @ is never a "
        "formula. Ids, subIds and codes are text cells; keep them so.",
    ),
    (
        "Checks on reading",
        "Every sheet is checked (country codes, bids > 0, duplicate "
        "rows, kinds a campaign's format allows, target values, subIds, source ids, "
        "lengths, enumerations, campaign ids): all problems are listed at once, with "
        "their sheet, row and column, and nothing is sent until there are none.",
    ),
)


def kind_help(kind: spec.TargetKind) -> str:
    """What a ``value`` of ``kind`` holds, and where the kind may be used.

    >>> kind_help(spec.TargetKind("x", int, None, formats=frozenset({"push"}), help="x id"))
    'x id; push campaigns only'
    """
    text = kind.help or ("id (a positive integer)" if kind.stored_as_int else "value")
    if kind.values is not None:
        text += ": " + ", ".join(kind.values)
    if kind.typed:
        text += "; list_type black or white (empty: black)"
    if kind.formats != spec.ALL_FORMATS:
        text += f"; {', '.join(sorted(kind.formats))} campaigns only"
    return text


def readme_lines(info: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The README sheet as (first column, second column) rows; ``info`` describes the export.

    >>> readme_lines([])[0]
    ('How to edit this workbook', '')
    """
    rows: list[tuple[str, str]] = [("How to edit this workbook", ""), ("", ""), *_HOW_TO]
    rows.append(("", ""))
    for sheet in SHEETS.values():
        rows.append((sheet.table, f"one row per {sheet.row}; key: {', '.join(sheet.key)}"))
        rows.append(("  editable", ", ".join(sheet.editable)))
        rows.append(("  read-only", ", ".join(sheet.read_only) or "-"))
    rows += [("", ""), ("Target kinds", "the kind column of targets, and what its value holds")]
    rows += [(f"  {k.column}", kind_help(k)) for k in spec.item_kinds()]
    if info:
        rows += [("", ""), ("Export", "")]
        rows += [(f"  {k}", v) for k, v in info]
    return rows


__all__ = [
    "ACCOUNT_COLUMN",
    "BASE_PREFIX",
    "COLUMNS",
    "EDITABLE",
    "KEYS",
    "LISTS_SHEET",
    "MAX_BID",
    "META_SHEET",
    "MONEY_FORMAT",
    "README_SHEET",
    "READ_ONLY",
    "REFS_SHEET",
    "ROW_LIMIT",
    "SHEETS",
    "SHEET_ROWS",
    "Sheet",
    "typed_kinds",
    "choice_lists",
    "kind_help",
    "part_name",
    "readme_lines",
    "set_sheet",
]
