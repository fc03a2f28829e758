"""The bid report's price queries, built with the account's codes: one query per campaign x
country, asked once each (a failing query kept as its error message, so the rest of the report
stands).

The queries themselves live in :mod:`toolkit.frames.price_queries` (the bulk layer asks them
too, for ``min`` and ``rec`` bids); this module adds the account's codes.

>>> q = Query("push", (("quality", ("high",)), ("country", ("US",))))
>>> q.key
'push {"country": ["US"], "quality": ["high"]}'
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..bulk.call_kinds import codes_of
from ..frames.price_queries import (
    Answer,
    Query,
    ask,
    ask_all,
    build_query,
    campaign_targeting,
    price_kinds,
)


def query_codes(refs: Mapping[str, pd.DataFrame]) -> dict[str, dict[str, str]]:
    """Ids -> codes of the kinds sent as codes, from the account's dictionaries."""
    return codes_of(refs)


__all__ = [
    "Answer",
    "Query",
    "ask",
    "ask_all",
    "build_query",
    "campaign_targeting",
    "price_kinds",
    "query_codes",
]
