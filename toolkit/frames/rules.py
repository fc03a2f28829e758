"""Bid rules (one row per campaign and item) and CPA rules (one row per rule).

>>> bid_rules_frame({7: [{"items": ["123", "ab12"], "bid": 0.07}]})
   campaign_id  item   bid
0            7   123  0.07
1            7  ab12  0.07
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ..client import Client
from .campaigns import resolve_ids
from .fetch import fetch_each, pool_workers
from .schemas import frame, records_frame


def bid_rules_frame(rules: Mapping[int, Sequence[Mapping[str, Any]]]) -> pd.DataFrame:
    """Frame ``bid_rules`` from ``{campaign_id: answer of bid-rules}``, in that order."""
    ids: list[int] = []
    items: list[Any] = []
    bids: list[Any] = []
    for cid, answer in rules.items():
        for rule in answer or []:
            values = rule.get("items") or []
            ids.extend([int(cid)] * len(values))
            items.extend(values)
            bids.extend([rule.get("bid")] * len(values))
    return frame("bid_rules", {"campaign_id": ids, "item": items, "bid": bids})


def cpa_rules_frame(rules: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Frame ``cpa_rules`` from CPA rule records (each with its ``id`` and ``campaign_id``)."""
    return records_frame("cpa_rules", list(rules))


def load_bid_rules(
    client: Client,
    campaign_ids: Sequence[int] | None = None,
    *,
    workers: int = 8,
    progress: bool = False,
) -> pd.DataFrame:
    """Frame ``bid_rules`` of campaigns (all when ``campaign_ids`` is None), one request each.

    >>> load_bid_rules(client, [1000001]).groupby("bid").size()           # doctest: +SKIP
    """
    ids = resolve_ids(client, campaign_ids)
    answers = fetch_each(
        client.bid_rules.list,
        ids,
        workers=pool_workers(client, workers),
        progress=progress,
        desc="Bid rules",
        unit="campaign",
    )
    return bid_rules_frame(dict(zip(ids, answers, strict=True)))


def load_cpa_rules(
    client: Client,
    campaign_ids: Sequence[int] | None = None,
    *,
    workers: int = 8,
    progress: bool = False,
) -> pd.DataFrame:
    """Frame ``cpa_rules`` of campaigns (all when ``campaign_ids`` is None), one request each.

    >>> load_cpa_rules(client, [1000002])                                 # doctest: +SKIP
    """
    ids = resolve_ids(client, campaign_ids)
    answers = fetch_each(
        client.cpa_rules.list,
        ids,
        workers=pool_workers(client, workers),
        progress=progress,
        desc="CPA rules",
        unit="campaign",
    )
    return cpa_rules_frame(
        {**rule, "campaign_id": rule.get("campaign_id", cid)}
        for cid, answer in zip(ids, answers, strict=True)
        for rule in answer
    )


__all__ = ["bid_rules_frame", "cpa_rules_frame", "load_bid_rules", "load_cpa_rules"]
