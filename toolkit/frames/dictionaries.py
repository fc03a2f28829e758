"""Reference dictionaries (``list-refs-data``) and dictionary search, as frames.

Country and language labels (``United States (US)``, ``English (en)``) are split into a
``name`` and an ISO ``code``; categories carry the format group they belong to.

>>> refs_frames({"country": {"840": "United States (US)"}})["country"]
    id code           name
0  840   US  United States
>>> search_frame("city", {"2643743": "London (GB)"})[["id", "name", "country", "region"]]
        id    name country region
0  2643743  London      GB   <NA>
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .. import spec
from ..client import Client
from .schemas import REF_SCHEMAS, frame

_CODED = re.compile(r"^(?P<name>.*?)\s*\((?P<code>[^()]+)\)$")
_SEARCH = re.compile(r"^(?P<name>.*?)\s*\((?P<country>[A-Z]{2})(?:\s+-\s+(?P<region>.*))?\)$")


def coded_types() -> frozenset[str]:
    """Dictionaries whose labels carry a code, ``<name> (<code>)``: those naming the ids of
    kinds whose items are codes (sent as codes, or kept as codes)."""
    return frozenset(
        k.labels
        for k in spec.TARGET_KINDS.values()
        if k.labels and (k.sent_as_code or k.item_type is str)
    )


def code_types() -> frozenset[str]:
    """Dictionaries of codes (``code -> name``) that kinds are sent as (``kind.codes``)."""
    return frozenset(k.codes for k in spec.TARGET_KINDS.values() if k.codes)


def grouped_types() -> frozenset[str]:
    """Dictionaries grouped by the formats' category groups (``kind.by_format``)."""
    return frozenset(k.labels for k in spec.TARGET_KINDS.values() if k.labels and k.by_format)


def split_label(label: str | None) -> tuple[str | None, str | None]:
    """``("United States", "US")`` from ``"United States (US)"``; no code: ``(label, None)``.

    >>> split_label("Calabarzon (Region IV-A) (PH)")
    ('Calabarzon (Region IV-A)', 'PH')
    """
    if label is None:
        return None, None
    m = _CODED.match(label)
    if m is None:
        return label, None
    return m.group("name"), m.group("code")


def ref_frame(kind: str, entries: Mapping[str, Any]) -> pd.DataFrame:
    """The frame of one dictionary (``kind`` among ``spec.DICTIONARY_TYPES``)."""
    if kind not in REF_SCHEMAS:
        raise ValueError(f"unknown dictionary {kind!r}; types: {', '.join(REF_SCHEMAS)}")
    name = REF_SCHEMAS[kind]
    entries = entries or {}
    if kind in grouped_types():
        return _grouped_frame(name, entries)
    if kind in code_types():
        return frame(name, {"code": list(entries), "name": list(entries.values())})
    ids = [int(k) for k in entries]
    if kind in coded_types():
        parts = [split_label(v) for v in entries.values()]
        return frame(
            name, {"id": ids, "code": [p[1] for p in parts], "name": [p[0] for p in parts]}
        )
    return frame(name, {"id": ids, "name": list(entries.values())})


def _grouped_frame(name: str, entries: Mapping[str, Any]) -> pd.DataFrame:
    """A dictionary of ``{group: {id: name}}``: one row per group and id."""
    rows = [
        (group, key, label)
        for group, mapping in entries.items()
        for key, label in (mapping or {}).items()
    ]
    return frame(
        name,
        {
            "ad_format": [r[0] for r in rows],
            "id": [int(r[1]) for r in rows],
            "name": [r[2] for r in rows],
        },
    )


def refs_frames(answer: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """One frame per dictionary present in a ``list-refs-data`` answer."""
    return {k: ref_frame(k, v) for k, v in answer.items() if k in REF_SCHEMAS}


def empty_refs() -> dict[str, pd.DataFrame]:
    """Every dictionary as an empty frame."""
    return {k: ref_frame(k, {}) for k in REF_SCHEMAS}


def load_refs(client: Client) -> dict[str, pd.DataFrame]:
    """Every dictionary in one request: ``{"country": frame, "os": frame, ...}``.

    >>> refs = load_refs(client)                                          # doctest: +SKIP
    >>> refs["category"].query("ad_format == 'pops'").head()              # doctest: +SKIP
    """
    return refs_frames(client.account.dictionaries())


def load_dictionary(client: Client, type: str) -> pd.DataFrame:  # noqa: A002
    """One dictionary (``country``, ``os``, ``browser``, ``category``, ``vertical``,
    ``language``, ``language_code``, ``subs_age``) as its frame.

    >>> load_dictionary(client, "language").head(2)                      # doctest: +SKIP
       id code       name
    0   1   aa       Afar
    1   2   ab  Abkhazian
    """
    return ref_frame(type, client.account.dictionary(type))


def label_maps(refs: Mapping[str, pd.DataFrame] | None) -> dict[str, dict[Any, str]]:
    """``{kind column: {value: name}}`` for target labels from the dictionaries.

    Each kind of the ``targets`` table with a dictionary (``kind.labels``) is labelled from
    it; kinds grouped by format (category) are keyed by ``(category group, id)``; kinds sent
    as codes by their ids (the detail view shows language targets as ids).
    """
    out: dict[str, dict[Any, str]] = {}
    for kind in spec.item_kinds():
        df = (refs or {}).get(kind.labels or "")
        if df is None or not len(df):
            continue
        if kind.by_format:
            out[kind.column] = {
                (str(g), str(i)): n
                for g, i, n in zip(df["ad_format"], df["id"], df["name"], strict=True)
            }
        else:
            out[kind.column] = dict(zip(df["id"].astype(str), df["name"], strict=True))
    return out


def country_names(refs: Mapping[str, pd.DataFrame] | None) -> dict[str, str]:
    """``{ISO code: country name}`` from the dictionary of the kind with bids (country)."""
    df = (refs or {}).get(spec.bid_kind().labels or "")
    if df is None or not len(df):
        return {}
    return {c: n for c, n in zip(df["code"], df["name"], strict=True) if c is not pd.NA}


def search_frame(type: str, answer: Mapping[str, str]) -> pd.DataFrame:  # noqa: A002
    """Frame ``search`` from a search answer (``{id: label}``).

    City labels read ``<city> (<CC> - <region>)`` or ``<city> (<CC>)``; region and carrier
    labels ``<name> (<CC>)``; the parts go to ``name``, ``country`` and ``region``.
    """
    names, countries, regions = [], [], []
    for label in answer.values():
        m = _SEARCH.match(label)
        if m is None:
            names.append(label)
            countries.append(None)
            regions.append(None)
        else:
            names.append(m.group("name"))
            countries.append(m.group("country"))
            regions.append(m.group("region"))
    return frame(
        "search",
        {
            "type": [type] * len(answer),
            "id": [int(k) for k in answer],
            "label": list(answer.values()),
            "name": names,
            "country": countries,
            "region": regions,
        },
    )


def load_search(
    client: Client,
    type: str,  # noqa: A002
    text: str,
    *,
    country: Sequence[str] | None = None,
    limit: int | None = None,
) -> pd.DataFrame:
    """Cities, regions or mobile carriers whose name contains ``text`` (one request).

    >>> load_search(client, "city", "Barcelona", limit=5)                 # doctest: +SKIP
            id       label       name country region
    """
    if type not in spec.search_types():
        raise ValueError(f"type must be one of {', '.join(spec.search_types())}, got {type!r}")
    return search_frame(type, client.account.search(type, text, country=country, limit=limit))


__all__ = [
    "code_types",
    "coded_types",
    "empty_refs",
    "grouped_types",
    "label_maps",
    "load_dictionary",
    "load_refs",
    "load_search",
    "ref_frame",
    "refs_frames",
    "search_frame",
    "split_label",
]
