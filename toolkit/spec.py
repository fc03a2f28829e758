"""The vocabulary of the Campaign Management interface, as data.

Every other layer (sandbox, client, loaders, sheets, widgets) reads these tables instead of
repeating a branch per target kind or list. Adding a target kind is one row in
:data:`TARGET_KINDS`.

>>> TARGET_KINDS["isp-mobile"].detail_field
'ispMobile'
>>> TARGET_KINDS["subs-age"].formats
frozenset({'push'})
>>> LISTS["subid_black"].batch_add_path
'/api/campaign/add-sub-id-black-batch'
>>> FORMATS["inpage"].label
'In-page Push'
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# --------------------------------------------------------------------------- formats


@dataclass(frozen=True)
class Format:
    """An ad format: its request code, its response label, and the category group it uses."""

    code: str
    label: str
    category_group: str
    default_frequency_capping: int


FORMATS: dict[str, Format] = {
    f.code: f
    for f in (
        Format("push", "Push", "push", 1),
        Format("pops", "Popunder", "pops", 0),
        Format("video", "Video", "video", 5),
        Format("inpage", "In-page Push", "push", 1),
    )
}
FORMAT_CODES: tuple[str, ...] = tuple(FORMATS)
ALL_FORMATS: frozenset[str] = frozenset(FORMATS)
FORMAT_BY_LABEL: dict[str, str] = {f.label: f.code for f in FORMATS.values()}

# --------------------------------------------------------------------------- enumerations

MODES: tuple[str, ...] = ("CPM", "CPC")
#: Decimals of a bid the toolkit computes (a relative edit such as ``+10%``): the interface
#: does not say; its price operation answers prices with 4 decimals, and bids are kept so.
BID_DECIMALS = 4
CAMPAIGN_STATUSES: tuple[str, ...] = ("Approved", "New", "Stopped", "Declined")
CREATIVE_STATUSES: tuple[str, ...] = ("New", "Approved", "Declined")
WORK_STATUSES: tuple[str, ...] = ("Paused", "Started", "Archived")
WORK_ACTIONS: dict[str, str] = {"start": "Started", "pause": "Paused", "archive": "Archived"}
#: A campaign that buys now (is *live*): approved by the service and started by its owner.
LIVE_CAMPAIGN: dict[str, str] = {"status": "Approved", "work_status": "Started"}
QUALITIES: tuple[str, ...] = ("low", "regular", "high", "premium")
CONNECTION_TYPES: tuple[str, ...] = ("wifi", "carrier")
LIST_TYPES: tuple[str, ...] = ("black", "white")
CHECK_EXIST: tuple[str, ...] = ("required", "skip")
ALLOW_PROXY_LABELS: dict[int, str] = {1: "Allow", 0: "Deny"}
WEB_VIEW_LABELS: dict[str, str] = {"yes": "Enable", "no": "Disable"}
VIDEO_PLACEMENTS: tuple[str, ...] = ("instream", "outstream", "all")
SUBS_AGE_GROUPS: dict[int, str] = {
    1: "1 - 3 days",
    2: "4 - 7 days",
    3: "8 - 15 days",
    4: "16+ days",
}

DICTIONARY_TYPES: tuple[str, ...] = (
    "country",
    "os",
    "browser",
    "category",
    "vertical",
    "language",
    "language_code",
    "subs_age",
)
SEARCH_MIN_CHARS = 3
SEARCH_LIMIT_DEFAULT = 10
SEARCH_LIMIT_MAX = 100
CREATIVE_TITLE_MAX = 65
CREATIVE_TEXT_MAX = 160
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%z"  # rendered with a colon in the offset: +hh:mm

# --------------------------------------------------------------------------- messages
# The service's error message patterns, to the letter. ``{item}``, ``{campaign_id}`` and
# ``{name}`` vary.

MSG_SAVE_TAKEN = "Error on save item {item}; CampaignId: {campaign_id}; Item has already been taken"
MSG_DROP_MISSING = "Error on drop item {item}; CampaignId: {campaign_id}; Item not exists"
MSG_FIND_ITEM = "Error on find item: {item}; campaignId: {campaign_id}"
MSG_CAMPAIGN_NOT_IN_ACCOUNT = "Error on find campaign #{campaign_id} in account"
MSG_CAMPAIGN_NOT_FOUND = "Campaign not found #{campaign_id}"
TAKEN_SUFFIX = "; CampaignId: {campaign_id}; Item has already been taken"

# --------------------------------------------------------------------------- value syntax

_HEX = re.compile(r"^[0-9a-fA-F]{1,64}$")
_DOMAIN = re.compile(
    r"^(?=.{1,253}$)(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$",
    re.IGNORECASE,
)
MAX_SOURCE_ID = 2**63 - 1
#: Highest bid (USD) the toolkit writes or takes from a workbook, a form or a rule: a bid
#: above it is taken for a typo (workbooks refuse it; rules cap their bids at it).
MAX_BID = 1_000.0


def is_hex(value: str) -> bool:
    """A subId (or bid-rule item): 1 to 64 hexadecimal digits."""
    return bool(_HEX.match(value))


def is_source_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_SOURCE_ID


def is_cidr(value: str) -> bool:
    """IPv4/IPv6 address, CIDR with host bits clear, or a range ``<ip>-<ip>`` of one family.

    >>> is_cidr("10.0.0.0/8"), is_cidr("10.0.0.1/8"), is_cidr("1.1.1.1-1.1.1.9")
    (True, False, True)
    """
    text = value.strip()
    try:
        if "-" in text:
            lo, hi = (ipaddress.ip_address(p.strip()) for p in text.split("-", 1))
            return lo.version == hi.version and lo <= hi
        if "/" in text:
            ipaddress.ip_network(text, strict=True)
            return True
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def is_domain(value: str) -> bool:
    """A host name, optionally ``*.``-prefixed."""
    return bool(_DOMAIN.match(value.strip()))


# --------------------------------------------------------------------------- target kinds


class _CampaignItemPaths:
    """Paths of the item operations on a campaign: ``/api/campaign/<verb>-<slug>[-batch]``."""

    @property
    def path_slug(self) -> str:  # pragma: no cover - every row class names its slug
        raise NotImplementedError

    @property
    def add_path(self) -> str:
        return f"/api/campaign/add-{self.path_slug}"

    @property
    def drop_path(self) -> str:
        return f"/api/campaign/drop-{self.path_slug}"

    @property
    def batch_add_path(self) -> str:
        return f"/api/campaign/add-{self.path_slug}-batch"

    @property
    def batch_drop_path(self) -> str:
        return f"/api/campaign/drop-{self.path_slug}-batch"


@dataclass(frozen=True)
class TargetKind(_CampaignItemPaths):
    """One targeting kind of a campaign: everything that varies by kind, in one row.

    ``name`` is the kind's one name, as the paths spell it (``isp-mobile``); tables spell it
    :attr:`column` (``isp_mobile``) and :func:`target_kind` accepts either.

    - ``item_type``: the type of one item in requests (``country`` items are codes mapped to
      a bid on add, see ``bids``).
    - ``detail_field``: the key of the detailed campaign view (``mode=full``); typed kinds
      (``cidr``, ``domain``) take ``type=black|white`` and have one detail field per list type
      in ``typed_fields``.
    - ``detail``: the shape of the detail field: ``map`` (id -> name), ``list``, or
      ``optional`` (a list present only when the campaign has targets of the kind).
    - ``price_param``: the name of the matching parameter of the price operation.
    - ``formats``: the ad formats that allow the kind.
    - ``values``: the closed set of values of a kind without a dictionary (``quality``).
    - ``labels``: the dictionary (``list-refs-data`` type) that names the kind's ids;
      ``by_format``: that dictionary is grouped by the format's category group (``category``).
    - ``codes``: the dictionary of codes the kind is *sent* as, while the detail view and the
      tables show ids (``language``: ids of ``language``, sent as ``language_code`` codes).
    - ``search``: the kind's values are found with the search operation (``city``);
      ``search_by_country``: that search takes a country filter.
    - ``bids``: each item carries a bid; the kind has a table of its own (``countries``).
    - ``count_fields``: list type (``""`` when untyped) -> the field that ``mode=count``
      reports as a number.
    - ``syntax``: a check of one value's syntax (``cidr``, ``domain``); ``fold_case``: values
      compare case-insensitively and are kept lower case (``domain``).
    - ``on_create``: accepted inside ``target`` on campaign create/update;
      ``start_requires``: needed before a campaign may start.
    - ``batch_listed``: the interface lists the kind among its batch operations.
    - ``save_error``/``missing_error``: the service's messages for an item already taken and
      for dropping a missing item. ``alias_add_paths``: other paths of the add operation.
    - ``help``: what one value is, for workbook notes and help text; ``label``: the kind in
      words, as forms show it (``ISP (mobile)``; :attr:`title` falls back on the name).
    """

    name: str
    item_type: type
    detail_field: str | None
    formats: frozenset[str] = ALL_FORMATS
    price_param: str | None = None
    typed: bool = False
    typed_fields: dict[str, str] = field(default_factory=dict)
    values: tuple[str, ...] | None = None
    labels: str | None = None
    by_format: bool = False
    codes: str | None = None
    search: bool = False
    search_by_country: bool = False
    bids: bool = False
    count_fields: dict[str, str] = field(default_factory=dict)
    syntax: Callable[[str], bool] | None = None
    fold_case: bool = False
    on_create: bool = False
    start_requires: bool = False
    batch_listed: bool = True
    save_error: str = MSG_SAVE_TAKEN
    missing_error: str = MSG_DROP_MISSING
    alias_add_paths: tuple[str, ...] = ()
    detail: str = "list"
    help: str = ""
    label: str = ""

    @property
    def stored_as_int(self) -> bool:
        """Items kept and shown as ids: every int kind, and kinds sent as codes."""
        return self.item_type is int or self.codes is not None

    @property
    def sent_as_code(self) -> bool:
        """The kind is shown as ids but sent as the codes of :attr:`codes` (``language``)."""
        return self.codes is not None

    @property
    def list_types(self) -> tuple[str, ...]:
        """``("black", "white")`` for typed kinds, ``("",)`` for the others."""
        return tuple(self.typed_fields) if self.typed else ("",)

    @property
    def path_slug(self) -> str:
        return self.name

    @property
    def column(self) -> str:
        """Name used for the kind in tables (``isp-mobile`` -> ``isp_mobile``)."""
        return self.name.replace("-", "_")

    @property
    def title(self) -> str:
        """The kind in words (:attr:`label`), or its name when it has no label."""
        return self.label or self.name

    def allowed_for(self, ad_format: str) -> bool:
        return ad_format in self.formats

    def label_group(self, ad_format: str) -> str:
        """The group of the label dictionary for a format (``""`` unless ``by_format``)."""
        return FORMATS[ad_format].category_group if self.by_format else ""


#: The interface's target kinds, one row each (see :data:`TARGET_KINDS`).
BASE_KINDS: tuple[TargetKind, ...] = (
    TargetKind(
        "category",
        int,
        "category",
        price_param="category",
        labels="category",
        by_format=True,
        detail="map",
        on_create=True,
        start_requires=True,
        save_error="Error on save category item #{item} {name}" + TAKEN_SUFFIX,
        missing_error="Error on find category item: {item}; CampaignId: {campaign_id}",
        help="category id (of the campaign's format)",
        label="Category",
    ),
    TargetKind(
        "quality",
        str,
        "quality",
        price_param="quality",
        values=QUALITIES,
        on_create=True,
        start_requires=True,
        save_error="Error on save quality item {item}" + TAKEN_SUFFIX,
        missing_error="Error on find quality item: {item}; CampaignId: {campaign_id}",
        help="traffic quality",
        label="Traffic quality",
    ),
    TargetKind(
        "country",
        str,
        "countrySet",
        price_param="country",
        labels="country",
        bids=True,
        on_create=True,
        start_requires=True,
        save_error="Error on save country item #{item}" + TAKEN_SUFFIX,
        missing_error="Error on find country item: {item}; CampaignId: {campaign_id}",
        help="ISO 3166-1 alpha-2 code",
        label="Country",
    ),
    TargetKind(
        "connection-type",
        str,
        "connectionType",
        values=CONNECTION_TYPES,
        detail="optional",
        help="connection type",
        label="Connection type",
    ),
    TargetKind(
        "language",
        str,
        "language",
        price_param="language",
        labels="language",
        codes="language_code",
        batch_listed=False,
        detail="optional",
        help="language id (sent as its ISO 639-1 code)",
        label="Language",
    ),
    TargetKind(
        "os",
        int,
        "os",
        price_param="os",
        labels="os",
        detail="map",
        count_fields={"": "os"},
        on_create=True,
        help="operating system id",
        label="Operating system",
    ),
    TargetKind(
        "browser",
        int,
        "browser",
        price_param="browser",
        labels="browser",
        detail="map",
        count_fields={"": "browser"},
        on_create=True,
        help="browser id",
        label="Browser",
    ),
    TargetKind(
        "subs-age",
        int,
        "subsAge",
        formats=frozenset({"push"}),
        price_param="subsAge",
        labels="subs_age",
        help="subscription age group id",
        label="Subscription age",
    ),
    TargetKind(
        "city",
        int,
        "city",
        formats=frozenset({"push", "pops", "inpage"}),
        price_param="city",
        search=True,
        search_by_country=True,
        batch_listed=False,
        detail="optional",
        help="city id (search operation)",
        label="City",
    ),
    TargetKind(
        "region",
        int,
        "region",
        price_param="region",
        search=True,
        search_by_country=True,
        detail="optional",
        alias_add_paths=("/api/region/add-region",),
        help="region id (search operation)",
        label="Region",
    ),
    TargetKind(
        "isp-mobile",
        int,
        "ispMobile",
        price_param="ispMobile",
        search=True,
        detail="map",
        help="mobile ISP id (search operation)",
        label="ISP (mobile)",
    ),
    TargetKind(
        "cidr",
        str,
        None,
        typed=True,
        typed_fields={"black": "blackCidr", "white": "whiteCidr"},
        count_fields={"white": "whiteCidr"},
        syntax=is_cidr,
        alias_add_paths=("/api/region/add-cidr",),
        help="IP address, CIDR or IP range",
        label="IP ranges (CIDR)",
    ),
    TargetKind(
        "domain",
        str,
        None,
        formats=frozenset({"video", "pops"}),
        typed=True,
        typed_fields={"black": "blackDomain", "white": "whiteDomain"},
        syntax=is_domain,
        fold_case=True,
        save_error="Error on save domain item {item}" + TAKEN_SUFFIX,
        help="domain name",
        label="Domain",
    ),
)


TARGET_KINDS: dict[str, TargetKind] = {}


def target_kind(name: str) -> TargetKind:
    """The kind named ``name``, spelled as the paths (``isp-mobile``) or as the tables
    (``isp_mobile``) spell it.

    >>> target_kind("isp_mobile").detail_field
    'ispMobile'
    """
    kind = TARGET_KINDS.get(name) or TARGET_KINDS.get(name.replace("_", "-"))
    if kind is None:
        raise KeyError(f"unknown target kind {name!r}; kinds: {', '.join(TARGET_KINDS)}")
    return kind


def kind_of_column(column: str) -> TargetKind | None:
    """The kind whose table spelling is ``column``, or None."""
    return _derived().kinds_by_column.get(column)


def item_kinds() -> tuple[TargetKind, ...]:
    """The kinds kept in the ``targets`` table: every kind but those with bids."""
    return tuple(k for k in TARGET_KINDS.values() if not k.bids)


def bid_kind() -> TargetKind:
    """The kind whose items carry bids (``country``): the ``countries`` table."""
    return next(k for k in TARGET_KINDS.values() if k.bids)


# --------------------------------------------------------------------------- lists


@dataclass(frozen=True)
class ListKind(_CampaignItemPaths):
    """One of the four source/subId lists of a campaign."""

    name: str  # table value: source_black, source_white, subid_black, subid_white
    entity: str  # "source" or "subid"
    list_type: str  # "black" or "white"
    slug: str  # path part: black-list, white-list, sub-id-black, sub-id-white
    detail_field: str
    item_type: type

    @property
    def path_slug(self) -> str:
        return self.slug

    @property
    def read_path(self) -> str:
        return f"/api/campaign/{self.slug}"

    @property
    def batch_add_path(self) -> str:
        """Source lists share the single-campaign path; subId lists have a ``-batch`` path."""
        return self.add_path if self.entity == "source" else self.add_path + "-batch"

    @property
    def batch_drop_path(self) -> str:
        return self.drop_path if self.entity == "source" else self.drop_path + "-batch"


LISTS: dict[str, ListKind] = {
    lk.name: lk
    for lk in (
        ListKind("source_black", "source", "black", "black-list", "blacklist", int),
        ListKind("source_white", "source", "white", "white-list", "whitelist", int),
        ListKind("subid_black", "subid", "black", "sub-id-black", "subIdBlack", str),
        ListKind("subid_white", "subid", "white", "sub-id-white", "subIdWhite", str),
    )
}

# --------------------------------------------------------------------------- campaign settings


@dataclass(frozen=True)
class Limit:
    """A campaign limit parameter, its alternative spelling and the formats allowing it."""

    param: str
    alias: str | None
    field: str  # the detail-view / response field
    kind: type
    formats: frozenset[str]


_SHOW = frozenset({"push", "inpage", "video"})
_CLICK = frozenset({"push", "inpage", "pops"})
LIMITS: dict[str, Limit] = {
    lim.param: lim
    for lim in (
        Limit("limit_sum", None, "limit_sum", float, ALL_FORMATS),
        Limit("limit_show", None, "limit_show", int, _SHOW),
        Limit("limit_click", None, "limit_click", int, _CLICK),
        Limit("limit_sum_day", "limit_day_sum", "limit_day_sum", float, ALL_FORMATS),
        Limit("limit_show_day", "limit_day_show", "limit_day_show", int, _SHOW),
        Limit("limit_click_day", "limit_day_click", "limit_day_click", int, _CLICK),
    )
}
# Settings that only some formats accept.
SETTING_FORMATS: dict[str, frozenset[str]] = {
    "web_view": frozenset({"pops", "video"}),
    "vpaid": frozenset({"video"}),
    "placement": frozenset({"video"}),
}
# Fields of the create/update response, in the interface's order.
CAMPAIGN_WRITE_FIELDS: tuple[str, ...] = (
    "id",
    "t_created",
    "status",
    "status_note",
    "work_status",
    "name",
    "mode",
    "ad_format",
    "user_id",
    "url",
    "frequency_capping",
    "limit_day_sum",
    "limit_day_click",
    "limit_sum",
    "limit_click",
    "note",
    "allow_proxy",
    "web_view",
    "vertical",
)
CAMPAIGN_LIST_FIELDS: tuple[str, ...] = (
    "id",
    "t_created",
    "name",
    "status",
    "work_status",
    "status_note",
    "mode",
    "ad_format",
    "user_id",
    "frequency_capping",
    "note",
    "vertical",
)
# --------------------------------------------------------------------------- CPA rules

CPA_TYPES: tuple[str, ...] = ("sum", "show", "click")
CPA_CONDS: tuple[str, ...] = ("greater", "less")
CPA_LEAD_TYPES: tuple[str, ...] = (
    "click",
    "lead",
    "sum",
    "cpa",
    "roi",
    "cpa_main",
    "lead_main",
    "starts",
)
CPA_FIELDS: tuple[str, ...] = ("type", "cond", "amount", "lead_type", "lead_cond", "lead_amount")
# Values some formats refuse: ``show`` is not for pops, ``starts`` is video only.
CPA_TYPE_FORMATS: dict[str, frozenset[str]] = {"show": frozenset({"push", "inpage", "video"})}
CPA_LEAD_TYPE_FORMATS: dict[str, frozenset[str]] = {"starts": frozenset({"video"})}

# --------------------------------------------------------------------------- creatives

CREATIVE_LIST_FIELDS: tuple[str, ...] = (
    "id",
    "t_created",
    "campaign_id",
    "title",
    "status",
    "work_status",
    "url",
    "icon_url",
    "image_url",
    "text",
    "ctr",
)
CREATIVE_WRITE_FIELDS: tuple[str, ...] = (
    "id",
    "t_created",
    "status",
    "status_note",
    "work_status",
    "campaign_id",
    "title",
    "text",
    "url",
    "icon_url",
    "image_url",
    "ctr",
)
CREATIVE_FILE_FIELDS: tuple[str, ...] = ("iconFile", "imageFile", "videoFile")
ICON_REQUIRED_FORMATS: frozenset[str] = frozenset({"push", "inpage"})
IMAGE_FORMATS: frozenset[str] = frozenset({"push", "inpage"})
VIDEO_CONVERT_STATES: tuple[str, ...] = ("wait", "processing", "success", "fail")

# --------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class Operation:
    """One operation of the interface: a path and the HTTP methods it accepts."""

    name: str
    path: str
    methods: tuple[str, ...]
    batch: bool = False
    aliases: tuple[str, ...] = ()


GET = ("GET",)
GET_POST = ("GET", "POST")
POST = ("POST",)


def _kind_operations(kind: TargetKind) -> list[Operation]:
    """The four operations of a target kind: add, drop and their batch forms."""
    n = kind.name
    return [
        Operation(f"target.add.{n}", kind.add_path, GET_POST, False, kind.alias_add_paths),
        Operation(f"target.drop.{n}", kind.drop_path, GET_POST),
        Operation(f"target.add_batch.{n}", kind.batch_add_path, GET_POST, True),
        Operation(f"target.drop_batch.{n}", kind.batch_drop_path, GET_POST, True),
    ]


def _list_operations(lk: ListKind) -> list[Operation]:
    """Read, add and drop of a list; subId lists have batch paths of their own."""
    ops = [
        Operation(f"list.read.{lk.name}", lk.read_path, GET),
        Operation(f"list.add.{lk.name}", lk.add_path, GET_POST),
        Operation(f"list.drop.{lk.name}", lk.drop_path, GET_POST),
    ]
    if lk.entity == "subid":
        ops.append(Operation(f"list.add_batch.{lk.name}", lk.batch_add_path, GET_POST, True))
        ops.append(Operation(f"list.drop_batch.{lk.name}", lk.batch_drop_path, GET_POST, True))
    return ops


_RULE_OPERATIONS: tuple[Operation, ...] = (
    Operation("bid_rule.list", "/api/campaign/bid-rules", GET),
    Operation("bid_rule.add", "/api/campaign/add-bid-rule", GET_POST),
    Operation(
        "bid_rule.drop",
        "/api/campaign/drop-bid-rule",
        GET_POST,
        aliases=("/api/campaign/drop-bid-rlue",),
    ),
    Operation("cpa_rule.list", "/api/campaign/cpa-rules", GET),
    Operation("cpa_rule.add", "/api/campaign/add-cpa-rule", GET_POST),
    Operation(
        "cpa_rule.drop",
        "/api/campaign/drop-cpa-rule",
        GET_POST,
        aliases=("/api/campaign/drop-cpa-rlue",),
    ),
    Operation("creative.list", "/api/creative/list", GET),
    Operation("creative.item", "/api/creative/item", GET),
    Operation("creative.create", "/api/creative/create", POST),
    Operation("creative.update", "/api/creative/update", POST),
)
_ACCOUNT_OPERATIONS: tuple[Operation, ...] = (
    Operation("account.balance", "/api/campaign/balance", GET),
    Operation("account.dictionaries", "/api/campaign/list-refs-data", GET),
    Operation("account.search", "/api/campaign/search", GET),
    Operation("account.price", "/api/campaign/price", GET_POST),
)


def _operations() -> tuple[Operation, ...]:
    ops = [
        Operation("campaign.list", "/api/campaign/list", GET),
        Operation("campaign.item", "/api/campaign/item", GET),
        Operation("campaign.create", "/api/campaign/create", GET_POST),
        Operation("campaign.update", "/api/campaign/update", GET_POST),
    ]
    for action in WORK_ACTIONS:
        ops.append(Operation(f"campaign.{action}", f"/api/campaign/{action}", GET))
        ops.append(
            Operation(f"campaign.{action}_batch", f"/api/campaign/{action}-batch", GET, True)
        )
    for kind in TARGET_KINDS.values():
        ops += _kind_operations(kind)
    for lk in LISTS.values():
        ops += _list_operations(lk)
    ops += _RULE_OPERATIONS
    ops += [Operation(f"creative.{a}", f"/api/creative/{a}", GET) for a in WORK_ACTIONS]
    ops += _ACCOUNT_OPERATIONS
    return tuple(ops)


# --------------------------------------------------------------------------- derived tables
# Everything below is computed from :data:`TARGET_KINDS` and :data:`LISTS` when first asked and
# again after :func:`add_target_kind` or :func:`remove_target_kind`. The tables are functions,
# not module constants, so that nothing can hold a copy from before a kind was added: call the
# function where the table is needed (``spec.operations_by_path()[path]``), do not keep the
# value it returns.


@dataclass(frozen=True)
class _Derived:
    """The tables derived from the target kinds and the lists, as of one set of kinds."""

    start_requires: tuple[str, ...]
    search_types: tuple[str, ...]
    search_country_filter: frozenset[str]
    create_target_kinds: tuple[str, ...]
    count_fields: tuple[str, ...]
    price_params: tuple[str, ...]
    syntax: Mapping[str, Callable[[str], bool]]
    kinds_by_column: Mapping[str, TargetKind]
    operations: tuple[Operation, ...]
    operations_by_name: Mapping[str, Operation]
    operations_by_path: Mapping[str, Operation]
    shared_batch_paths: frozenset[str]


@functools.cache
def _derived() -> _Derived:
    """The derived tables of the kinds of now (cleared when a kind is added or removed)."""
    kinds = tuple(TARGET_KINDS.values())
    operations = _operations()
    return _Derived(
        start_requires=tuple(k.name for k in kinds if k.start_requires),
        search_types=tuple(k.name for k in kinds if k.search),
        search_country_filter=frozenset(k.name for k in kinds if k.search_by_country),
        create_target_kinds=tuple(k.name for k in kinds if k.on_create),
        count_fields=tuple(lk.detail_field for lk in LISTS.values())
        + tuple(f for k in kinds for f in k.count_fields.values()),
        price_params=tuple(k.price_param for k in kinds if k.price_param is not None),
        syntax=MappingProxyType({k.name: k.syntax for k in kinds if k.syntax is not None}),
        kinds_by_column=MappingProxyType({k.column: k for k in kinds}),
        operations=operations,
        operations_by_name=MappingProxyType({op.name: op for op in operations}),
        operations_by_path=MappingProxyType(
            {path: op for op in operations for path in (op.path, *op.aliases)}
        ),
        shared_batch_paths=frozenset(
            p for lk in LISTS.values() if lk.entity == "source" for p in (lk.add_path, lk.drop_path)
        ),
    )


def start_requires() -> tuple[str, ...]:
    """The kinds a campaign needs before it may start.

    >>> start_requires()
    ('category', 'quality', 'country')
    """
    return _derived().start_requires


def search_types() -> tuple[str, ...]:
    """The kinds whose values are found with the search operation (its ``type``)."""
    return _derived().search_types


def search_country_filter() -> frozenset[str]:
    """The search types that take a country filter."""
    return _derived().search_country_filter


def create_target_kinds() -> tuple[str, ...]:
    """The kinds accepted inside ``target`` on campaign create and update."""
    return _derived().create_target_kinds


def count_fields() -> tuple[str, ...]:
    """The fields that ``mode=count`` of the campaign view reports as numbers."""
    return _derived().count_fields


def price_params() -> tuple[str, ...]:
    """The parameters of the price operation, one per kind that has one."""
    return _derived().price_params


def syntax_checks() -> Mapping[str, Callable[[str], bool]]:
    """Kind name -> the check of one value's syntax, for the kinds that have one."""
    return _derived().syntax


def operations() -> tuple[Operation, ...]:
    """Every operation of the interface, the target kinds' and the lists' included."""
    return _derived().operations


def operations_by_name() -> Mapping[str, Operation]:
    """Operation name (``target.add.country``) -> operation.

    >>> operations_by_name()["campaign.pause_batch"].path
    '/api/campaign/pause-batch'
    """
    return _derived().operations_by_name


def operations_by_path() -> Mapping[str, Operation]:
    """Path -> operation, alias paths included."""
    return _derived().operations_by_path


def shared_batch_paths() -> frozenset[str]:
    """Paths a source-list batch shares with the single-campaign operation: the request says
    which by carrying ``campaignId`` (batch) or ``id`` (single)."""
    return _derived().shared_batch_paths


def add_target_kind(kind: TargetKind) -> None:
    """Add a row to :data:`TARGET_KINDS` (or replace one); the derived tables follow.

    Every layer reads the table when it needs it, so a kind added here is routed by a
    sandbox started afterwards, called by the client, loaded, exported and planned.
    """
    TARGET_KINDS[kind.name] = kind
    _derived.cache_clear()


def remove_target_kind(name: str) -> None:
    """Remove a row added by :func:`add_target_kind`; the derived tables follow."""
    TARGET_KINDS.pop(name, None)
    _derived.cache_clear()


TARGET_KINDS.update((k.name, k) for k in BASE_KINDS)
