"""Creatives: the list (with its filters), the detailed view, and converted video files.

>>> creatives_frame([{"id": 5, "campaign_id": 7, "title": "Hi", "status": "New",
...                   "work_status": "Paused", "ctr": 0.5,
...                   "t_created": "2026-01-05T12:33:40+02:00"}])[["id", "status", "t_created"]]
   id status                 t_created
0   5    New 2026-01-05 10:33:40+00:00
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ..client import Client
from .fetch import fetch_each, pool_workers
from .schemas import records_frame


def creatives_frame(items: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Frame ``creatives`` from creative list items."""
    return records_frame("creatives", list(items))


def creative_details_frame(items: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Frame ``creative_details`` from detailed creative views (``/api/creative/item``)."""
    return records_frame("creative_details", list(items))


def creative_files_frame(items: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Frame ``creative_files``: one row per converted video file of each detailed view."""
    rows = [{**f, "creative_id": item["id"]} for item in items for f in item.get("files") or []]
    return records_frame("creative_files", rows)


def load_creatives(
    client: Client,
    campaign_id: int | None = None,
    *,
    status: str | None = None,
    work_status: str | None = None,
    title: str | None = None,
    text: str | None = None,
    url: str | None = None,
) -> pd.DataFrame:
    """Frame ``creatives``: the creative list of one campaign, or of the whole account when
    ``campaign_id`` is None (one request). ``title``, ``text`` and ``url`` match substrings.

    >>> load_creatives(client, work_status="started")                     # doctest: +SKIP
    """
    items = client.creatives.list(
        campaign_id, status=status, work_status=work_status, title=title, text=text, url=url
    )
    return creatives_frame(items)


def fetch_creatives(
    client: Client, creative_ids: Sequence[int], *, workers: int = 8, progress: bool = False
) -> list[dict[str, Any]]:
    """The detailed views of creatives, ``workers`` at a time (errors are raised)."""
    return fetch_each(
        client.creatives.get,
        [int(i) for i in dict.fromkeys(creative_ids)],
        workers=pool_workers(client, workers),
        progress=progress,
        desc="Creatives",
        unit="creative",
    )


def load_creative_details(
    client: Client, creative_ids: Sequence[int], *, workers: int = 8, progress: bool = False
) -> pd.DataFrame:
    """Frame ``creative_details``: one detailed view per creative (video type, conversion
    state, duration and video url for video creatives).

    >>> ids = load_creatives(client, 1000005)["id"]                       # doctest: +SKIP
    >>> load_creative_details(client, ids)[["id", "convert", "duration"]]  # doctest: +SKIP
    """
    return creative_details_frame(
        fetch_creatives(client, creative_ids, workers=workers, progress=progress)
    )


def load_creative_files(
    client: Client, creative_ids: Sequence[int], *, workers: int = 8, progress: bool = False
) -> pd.DataFrame:
    """Frame ``creative_files``: the converted files of video creatives (one detail each).

    To get details and files from the same requests, fetch once with
    :func:`fetch_creatives` and pass the answers to :func:`creative_details_frame` and
    :func:`creative_files_frame`.

    >>> load_creative_files(client, [5000013])                            # doctest: +SKIP
    """
    return creative_files_frame(
        fetch_creatives(client, creative_ids, workers=workers, progress=progress)
    )


__all__ = [
    "creative_details_frame",
    "creative_files_frame",
    "creatives_frame",
    "fetch_creatives",
    "load_creative_details",
    "load_creative_files",
    "load_creatives",
]
