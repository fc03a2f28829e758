"""Loaders: answers of the service as typed pandas DataFrames, and the ``Account`` snapshot.

Every frame has declared columns and dtypes (:data:`toolkit.frames.schemas.SCHEMAS`,
listed in docs/frames.md); nothing is left to inference.

>>> import toolkit
>>> from toolkit import frames
>>> client = toolkit.connect()                                          # doctest: +SKIP
>>> frames.load_campaigns(client, ad_format="push")                     # doctest: +SKIP
>>> account = toolkit.load_account(client)                              # doctest: +SKIP
>>> account.join("targets").query("kind == 'os'")                       # doctest: +SKIP
>>> account.to_excel("account.xlsx", joined=["countries"])              # doctest: +SKIP
>>> frames.excel_ready(df).to_excel("frame.xlsx")                        # doctest: +SKIP
"""

from .account import TABLES, Account, SnapshotError
from .account_set import AccountSet
from .campaigns import (
    campaign_list_frame,
    campaigns_frame,
    load_campaign_details,
    load_campaigns,
)
from .creatives import (
    creative_details_frame,
    creative_files_frame,
    creatives_frame,
    fetch_creatives,
    load_creative_details,
    load_creative_files,
    load_creatives,
)
from .dictionaries import (
    load_dictionary,
    load_refs,
    load_search,
    ref_frame,
    refs_frames,
    search_frame,
)
from .export import excel_ready, write_excel
from .load_set import load_accounts
from .loader import failures_frame, load_account
from .prices import balance_frame, load_balance, load_prices, prices_frame
from .rules import bid_rules_frame, cpa_rules_frame, load_bid_rules, load_cpa_rules
from .schemas import SCHEMA_VERSION, SCHEMAS, conform, empty, frame
from .targeting import (
    countries_frame,
    lists_frame,
    load_countries,
    load_lists,
    load_targets,
    targets_frame,
)

__all__ = [
    "SCHEMAS",
    "SCHEMA_VERSION",
    "TABLES",
    "Account",
    "AccountSet",
    "SnapshotError",
    "balance_frame",
    "bid_rules_frame",
    "campaign_list_frame",
    "campaigns_frame",
    "conform",
    "countries_frame",
    "cpa_rules_frame",
    "creative_details_frame",
    "creative_files_frame",
    "creatives_frame",
    "empty",
    "excel_ready",
    "failures_frame",
    "fetch_creatives",
    "frame",
    "lists_frame",
    "load_account",
    "load_accounts",
    "load_balance",
    "load_bid_rules",
    "load_campaign_details",
    "load_campaigns",
    "load_countries",
    "load_cpa_rules",
    "load_creative_details",
    "load_creative_files",
    "load_creatives",
    "load_dictionary",
    "load_lists",
    "load_prices",
    "load_refs",
    "load_search",
    "load_targets",
    "prices_frame",
    "ref_frame",
    "refs_frames",
    "search_frame",
    "targets_frame",
    "write_excel",
]
