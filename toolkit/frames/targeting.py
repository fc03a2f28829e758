"""Countries, targets and source/subId lists, from the full detailed view of campaigns.

One ``mode=full`` detail per campaign gives all three tables; the four list-read operations
are used only when asked for (``load_lists(..., via="read")``).

>>> detail = {"id": 7, "ad_format": "Push",
...           "countrySet": [{"price": 0.05, "l_d_sum": None, "geo": {"840": "US"}}],
...           "os": {"1": "Android"}, "quality": ["high"], "whiteCidr": ["10.0.0.0/8"],
...           "subIdBlack": ["ab12"]}
>>> countries_frame([detail])[["campaign_id", "country", "bid"]]
   campaign_id country   bid
0            7      US  0.05
>>> targets_frame([detail])
   campaign_id     kind       value    label list_type
0            7  quality        high     <NA>       NaN
1            7       os           1  Android       NaN
2            7     cidr  10.0.0.0/8     <NA>     white
>>> lists_frame([detail])
   campaign_id         list  item
0            7  subid_black  ab12
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import spec
from ..client import Client
from .campaigns import ad_format_code, fetch_details, resolve_ids
from .dictionaries import country_names, label_maps
from .fetch import fetch_each, pool_workers
from .schemas import LIST, frame

LIST_VIAS: tuple[str, ...] = ("detail", "read")


def countries_frame(
    details: Iterable[Mapping[str, Any]], refs: Mapping[str, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """Frame ``countries``: one row per campaign and country of each ``countrySet``.

    Each row carries the bid and the daily limits of its country set (``l_d_sum``,
    ``l_d_show``, ``l_d_click``); ``country_name`` comes from the country dictionary in
    ``refs`` (``<NA>`` without it).
    """
    names = country_names(refs)
    kind = spec.bid_kind()
    code, name = kind.column, f"{kind.column}_name"
    limits = ("l_d_sum", "l_d_show", "l_d_click")
    cols: dict[str, list[Any]] = {c: [] for c in ("campaign_id", code, name, "bid", *limits)}
    for detail in details:
        cid = int(detail["id"])
        for entry in detail.get(kind.detail_field or "") or []:
            for value in (entry.get("geo") or {}).values():
                cols["campaign_id"].append(cid)
                cols[code].append(value)
                cols[name].append(names.get(value))
                cols["bid"].append(entry.get("price"))
                for limit in limits:
                    cols[limit].append(entry.get(limit))
    return frame("countries", cols)


_TARGET_COLUMNS = ("campaign_id", "kind", "value", "label", "list_type")


def targets_frame(
    details: Iterable[Mapping[str, Any]], refs: Mapping[str, pd.DataFrame] | None = None
) -> pd.DataFrame:
    """Frame ``targets``: one row per targeted value of every kind but country.

    ``kind`` is the kind's table name (``isp_mobile``, ``subs_age``, ``connection_type``);
    ``value`` is the value as the detail view shows it (ids as decimal text; languages as ids
    of the ``language`` dictionary). ``label`` is the name the detail view maps the id to
    (category, os, browser, isp_mobile), else the name from the dictionaries in ``refs``
    (language, subs_age, and category/os/browser shown as bare ids); ``<NA>`` when no
    dictionary gives one (city, region, quality, connection_type, cidr, domain). ``list_type``
    is ``black``/``white`` for cidr and domain, ``<NA>`` otherwise.
    """
    labels = label_maps(refs)
    kinds = spec.item_kinds()
    rows: list[tuple[Any, ...]] = []
    for detail in details:
        cid = int(detail["id"])
        fmt = ad_format_code(detail.get("ad_format"))
        for kind in kinds:
            rows.extend((cid, *row) for row in _kind_rows(kind, detail, fmt, labels))
    columns = zip(*rows, strict=True) if rows else [()] * len(_TARGET_COLUMNS)
    return frame("targets", dict(zip(_TARGET_COLUMNS, map(list, columns), strict=True)))


def _kind_rows(
    kind: spec.TargetKind,
    detail: Mapping[str, Any],
    fmt: str,
    labels: Mapping[str, Mapping[Any, str]],
) -> Iterator[tuple[str, str, str | None, str | None]]:
    """``(kind, value, label, list type)`` of one kind in one campaign's detail."""
    col = kind.column
    if kind.typed:
        for list_type, field in kind.typed_fields.items():
            for value in detail.get(field) or []:
                yield col, str(value), None, list_type
        return
    raw = detail.get(kind.detail_field or "")
    if not raw:
        return
    known = labels.get(col, {})
    group = kind.label_group(fmt) if fmt in spec.FORMATS else fmt
    pairs = raw.items() if isinstance(raw, Mapping) else ((v, None) for v in raw)
    for value, label in pairs:
        if label is None:
            label = known.get((group, str(value)) if kind.by_format else str(value))
        yield col, str(value), None if label is None else str(label), None


def lists_frame(details: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Frame ``lists``: one row per campaign and listed source id or subId.

    ``list`` is ``source_black``, ``source_white``, ``subid_black`` or ``subid_white``;
    ``item`` is the source id or subId as text. Built column-wise, so a million items take
    well under a second.
    """
    ids: list[int] = []
    counts: list[int] = []
    items: list[Any] = []
    kinds = list(spec.LISTS.values())
    for detail in details:
        cid = int(detail["id"])
        for lk in kinds:
            values = detail.get(lk.detail_field) or []
            if not isinstance(values, list):
                raise ValueError(
                    f"campaign {cid}: {lk.detail_field} is {values!r}; lists need mode=full"
                )
            ids.append(cid)
            counts.append(len(values))
            items.extend(values)
    return _lists(ids, counts, items)


def _lists(ids: list[int], counts: list[int], items: list[Any]) -> pd.DataFrame:
    """The frame from per-(campaign, list) counts in the order of ``spec.LISTS``."""
    n_lists = len(spec.LISTS)
    repeat = np.asarray(counts, dtype=np.int64)
    campaign = np.repeat(np.asarray(ids, dtype=np.int64), repeat)
    codes = np.repeat(np.tile(np.arange(n_lists, dtype=np.int8), len(ids) // n_lists), repeat)
    return frame(
        "lists",
        {
            "campaign_id": campaign,
            "list": pd.Categorical.from_codes(codes, dtype=LIST),
            "item": items,
        },
    )


def load_countries(
    client: Client,
    campaign_ids: Sequence[int] | None = None,
    *,
    refs: Mapping[str, pd.DataFrame] | None = None,
    workers: int = 8,
    progress: bool = False,
) -> pd.DataFrame:
    """Frame ``countries`` of campaigns (all when ``campaign_ids`` is None): one full detail
    per campaign. Pass ``refs`` (from :func:`load_refs`) to fill ``country_name``.

    >>> load_countries(client, [1000001], refs=load_refs(client))         # doctest: +SKIP
    """
    details = fetch_details(client, campaign_ids, "full", workers=workers, progress=progress)
    return countries_frame(details, refs)


def load_targets(
    client: Client,
    campaign_ids: Sequence[int] | None = None,
    *,
    refs: Mapping[str, pd.DataFrame] | None = None,
    workers: int = 8,
    progress: bool = False,
) -> pd.DataFrame:
    """Frame ``targets`` of campaigns: one full detail per campaign. Pass ``refs`` (from
    :func:`load_refs`) to label languages, subscription ages and bare ids.

    >>> load_targets(client, [1000003], refs=load_refs(client))           # doctest: +SKIP
    """
    details = fetch_details(client, campaign_ids, "full", workers=workers, progress=progress)
    return targets_frame(details, refs)


def load_lists(
    client: Client,
    campaign_ids: Sequence[int] | None = None,
    *,
    lists: Sequence[str] | None = None,
    via: str = "detail",
    workers: int = 8,
    progress: bool = False,
) -> pd.DataFrame:
    """Frame ``lists`` of campaigns, all four lists or those named in ``lists``.

    ``via="detail"`` (the default) takes them from one full detail per campaign;
    ``via="read"`` calls the list-read operation of each list instead (one request per
    campaign and list).

    >>> load_lists(client, [1000001], lists=["subid_black"])              # doctest: +SKIP
    """
    if via not in LIST_VIAS:
        raise ValueError(f"via must be one of {', '.join(LIST_VIAS)}, got {via!r}")
    wanted = list(spec.LISTS) if lists is None else list(dict.fromkeys(lists))
    unknown = [name for name in wanted if name not in spec.LISTS]
    if unknown:
        raise ValueError(f"unknown lists {unknown}; lists: {', '.join(spec.LISTS)}")
    if via == "detail":
        details = fetch_details(client, campaign_ids, "full", workers=workers, progress=progress)
        df = lists_frame(details)
        if lists is not None:
            df = df[df["list"].isin(wanted)].reset_index(drop=True)
        return df
    ids = resolve_ids(client, campaign_ids)
    keys = [(cid, name) for cid in ids for name in spec.LISTS if name in wanted]
    answers = fetch_each(
        lambda key: client.lists.get(key[0], key[1]),
        keys,
        workers=pool_workers(client, workers),
        progress=progress,
        desc="Lists",
    )
    by_key = dict(zip(keys, answers, strict=True))
    out_ids, counts, items = [], [], []
    for cid in ids:
        for name in spec.LISTS:
            values = by_key.get((cid, name), [])
            out_ids.append(cid)
            counts.append(len(values))
            items.extend(values)
    return _lists(out_ids, counts, items)


__all__ = [
    "countries_frame",
    "lists_frame",
    "load_countries",
    "load_lists",
    "load_targets",
    "targets_frame",
]
