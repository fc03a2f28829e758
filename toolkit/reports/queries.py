"""Price queries from a campaign's targeting: built per campaign x country, asked once each.

A query is the format and, for every target kind that has a price parameter
(``kind.price_param`` in :mod:`toolkit.spec`) and that the format allows (``kind.formats``:
subscription age only for push), the campaign's values of that kind as the price operation
takes them (ids as integers, kinds sent as codes as their codes, ``kind.codes``), plus the
row's country. Two rows with the same format and the same parameters (compared sorted) share
one query, so an account whose campaigns repeat their targeting asks few prices.

Queries run on a bounded pool (:func:`toolkit.frames.fetch.fetch_each`, capped at the
client's connection pool) with a progress bar. A failing query (after the client's retries)
is kept as its error message, so the rest of the report stands; an unusable api-key
(:class:`~toolkit.errors.AuthError`) is raised.

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
