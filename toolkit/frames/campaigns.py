"""Campaigns: the list (with its filters) and the detailed view in each mode.

>>> import toolkit
>>> from toolkit.frames import load_campaigns, load_campaign_details
>>> client = toolkit.connect()                                        # doctest: +SKIP
>>> load_campaigns(client, ad_format="push", work_status="started")   # doctest: +SKIP
>>> load_campaign_details(client, [1000001, 1000002], mode="count")   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .. import spec
from ..client import Client
from .fetch import fetch_each, pool_workers
from .schemas import SCHEMAS, count_columns, frame

DETAIL_MODES: tuple[str, ...] = ("short", "count", "full")


def ad_format_code(label: Any) -> Any:
    """The request code of a format label (``In-page Push`` -> ``inpage``); codes pass."""
    if label is None:
        return None
    return spec.FORMAT_BY_LABEL.get(label, label)


def campaign_list_frame(items: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Frame ``campaign_list`` from the items of the campaign list operation."""
    return _campaign_frame("campaign_list", items, mode=None)


def campaigns_frame(details: Sequence[Mapping[str, Any]], mode: str = "short") -> pd.DataFrame:
    """Frame ``campaigns`` from detailed views (``/api/campaign/item``) of one ``mode``.

    Limits and their progress come with every mode. The ``n_*`` counters are the counts of
    ``mode=count``; with ``mode=full`` they are counted from the full contents, with
    ``mode=short`` they are ``<NA>``.

    >>> campaigns_frame([{"id": 7, "ad_format": "Push", "limit_sum": 50.0}])[
    ...     ["id", "ad_format", "limit_sum", "n_os"]]
       id ad_format  limit_sum  n_os
    0   7      push       50.0  <NA>
    """
    if mode not in DETAIL_MODES:
        raise ValueError(f"mode must be one of {', '.join(DETAIL_MODES)}, got {mode!r}")
    return _campaign_frame("campaigns", details, mode)


def _campaign_frame(
    name: str, items: Sequence[Mapping[str, Any]], mode: str | None
) -> pd.DataFrame:
    columns: dict[str, list[Any]] = {}
    counters = count_columns()
    for col in SCHEMAS[name]:
        if col in counters:
            field = counters[col]
            columns[col] = [_count(item.get(field)) if mode != "short" else None for item in items]
        elif col == "ad_format":
            columns[col] = [ad_format_code(item.get("ad_format")) for item in items]
        else:
            columns[col] = [item.get(col) for item in items]
    return frame(name, columns, length=len(items))


def _count(value: Any) -> int | None:
    """A counter of mode=count (a number), or the size of a mode=full list or map."""
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        return len(value)
    return int(value)


def load_campaigns(
    client: Client,
    *,
    status: str | None = None,
    work_status: str | None = None,
    ad_format: str | None = None,
    mode: str | None = None,
    name: str | None = None,
    url: str | None = None,
) -> pd.DataFrame:
    """The campaign list, filtered as the list operation filters (one request).

    ``status`` (``approved``, ``new``, ``stopped``, ``declined``), ``work_status``
    (``paused``, ``started``, ``archived``), ``ad_format`` (``push``, ``pops``, ``video``,
    ``inpage``), ``mode`` (``cpm``, ``cpc``); ``name`` and ``url`` match substrings.
    Frame ``campaign_list``: the list has no limits, and ``url`` only for popunders.

    >>> load_campaigns(client, ad_format="pops", name="Nutra")            # doctest: +SKIP
    """
    items = client.campaigns.list(
        status=status, work_status=work_status, ad_format=ad_format, mode=mode, name=name, url=url
    )
    return campaign_list_frame(items)


def resolve_ids(client: Client, campaign_ids: Sequence[int] | None) -> list[int]:
    """The given ids (deduplicated, in order), or every campaign of the account."""
    if campaign_ids is None:
        return [int(item["id"]) for item in client.campaigns.list()]
    return [int(c) for c in dict.fromkeys(int(c) for c in campaign_ids)]


def fetch_details(
    client: Client,
    campaign_ids: Sequence[int] | None,
    mode: str,
    *,
    workers: int = 8,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """The detailed views of campaigns (all of the account when ``campaign_ids`` is None)."""
    if mode not in DETAIL_MODES:
        raise ValueError(f"mode must be one of {', '.join(DETAIL_MODES)}, got {mode!r}")
    ids = resolve_ids(client, campaign_ids)
    return fetch_each(
        lambda cid: client.campaigns.get(cid, mode),
        ids,
        workers=pool_workers(client, workers),
        progress=progress,
        desc=f"Campaign details ({mode})",
        unit="campaign",
    )


def load_campaign_details(
    client: Client,
    campaign_ids: Sequence[int] | None = None,
    *,
    mode: str = "short",
    workers: int = 8,
    progress: bool = False,
) -> pd.DataFrame:
    """Frame ``campaigns``: one detailed view per campaign, fetched ``workers`` at a time.

    ``mode`` is ``short`` (settings, limits and their progress), ``count`` (also the list and
    target counters ``n_*``) or ``full`` (the counters counted from the full contents; use
    :func:`toolkit.load_account` to get the countries, targets and lists too). An error of any
    call is raised (:func:`toolkit.load_account` keeps going instead).

    >>> load_campaign_details(client, [1000001], mode="count")[["id", "n_subid_black"]]
    ... # doctest: +SKIP
    """
    details = fetch_details(client, campaign_ids, mode, workers=workers, progress=progress)
    return campaigns_frame(details, mode)


__all__ = [
    "DETAIL_MODES",
    "ad_format_code",
    "campaign_list_frame",
    "campaigns_frame",
    "load_campaign_details",
    "load_campaigns",
]
