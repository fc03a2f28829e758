"""Validation of targeting items, list items and settings against the reference data.

Validators return the list of every bad value instead of stopping at the first, so that a
request that fails validation is answered with all of its problems and changes nothing.
"""

from __future__ import annotations

from typing import Any

from .. import spec
from .refs import Refs


def where(campaign_id: int | None) -> str:
    """The ``; CampaignId: <id>`` suffix of a message (none before a campaign exists)."""
    return "" if campaign_id is None else f"; CampaignId: {campaign_id}"


def format_error(kind: str, ad_format: str, campaign_id: int | None) -> str:
    label = spec.FORMATS[ad_format].label
    return f"Targeting '{kind}' is not available for {label} campaigns{where(campaign_id)}"


def known_values(refs: Refs, kind: spec.TargetKind, ad_format: str) -> dict[str, str] | None:
    """Map of item (as sent) -> stored value for kinds with a closed set of values."""
    if kind.values is not None:
        return {v: v for v in kind.values}
    group = spec.FORMATS[ad_format].category_group if kind.name == "category" else ""
    key = (id(refs), kind.name, group)
    if key not in _INDEX:
        _INDEX[key] = _build_index(refs, kind.name, group)
    return _INDEX[key]


_INDEX: dict[tuple[int, str, str], dict[str, str] | None] = {}


def _build_index(refs: Refs, kind: str, group: str) -> dict[str, str] | None:
    """Items as sent -> stored values; languages are sent as codes and stored as ids."""
    if kind == "language":
        return {code: str(lid) for code, (lid, _name) in refs.languages.items()}
    if kind == "country":
        return {code: code for code in refs.countries}
    table = {
        "category": refs.categories.get(group),
        "os": refs.os,
        "browser": refs.browsers,
        "subs-age": refs.subs_age,
        "city": refs.cities,
        "region": refs.regions,
        "isp-mobile": refs.isps,
    }.get(kind)
    return None if table is None else {str(i): str(i) for i in table}


def target_items(
    refs: Refs,
    kind: spec.TargetKind,
    ad_format: str,
    campaign_id: int | None,
    items: list[Any],
) -> tuple[list[tuple[str, str]], list[str]]:
    """Validate items of one kind for one campaign.

    Returns ``(pairs, errors)``: ``pairs`` holds ``(item as sent, stored value)``.
    """
    if not kind.allowed_for(ad_format):
        return [], [format_error(kind.name, ad_format, campaign_id)]
    pairs: list[tuple[str, str]] = []
    errors: list[str] = []
    index = known_values(refs, kind, ad_format)
    syntax = spec.SYNTAX.get(kind.name)
    for item in items:
        text = str(item).strip()
        if index is not None:
            stored = index.get(text)
            if stored is None:
                errors.append(f"Invalid {kind.name} item: {item}{where(campaign_id)}")
                continue
            pairs.append((text, stored))
        elif syntax is not None:
            if not syntax(text):
                errors.append(f"Invalid {kind.name} item: {item}{where(campaign_id)}")
                continue
            pairs.append((text, text.lower() if kind.name == "domain" else text))
        else:  # pragma: no cover - every kind has a closed set or a syntax
            pairs.append((text, text))
    return pairs, errors


def country_bids(refs: Refs, items: dict[str, float], campaign_id: int | None) -> list[str]:
    errors = []
    for code, bid in items.items():
        if code not in refs.countries:
            errors.append(f"Invalid country item: {code}{where(campaign_id)}")
        elif bid <= 0:
            errors.append(f"Invalid bid for country {code}: {bid}{where(campaign_id)}")
    return errors


def list_items(lk: spec.ListKind, items: list[Any], campaign_id: int | None = None) -> list[str]:
    """Source ids must be positive integers, subIds hexadecimal strings."""
    suffix = where(campaign_id)
    errors = []
    for item in items:
        if lk.entity == "source":
            if not (isinstance(item, int) and 0 < item <= spec.MAX_SOURCE_ID):
                errors.append(f"Invalid source id: {item}{suffix}")
        elif not spec.is_hex(str(item)):
            errors.append(f"Invalid subId (not hexadecimal): {item}{suffix}")
    return errors


def rule_items(items: list[str]) -> list[str]:
    """Bid-rule items are source ids or subIds: hexadecimal strings either way."""
    return [
        f"Invalid bid rule item (not a source id or subId): {i}"
        for i in items
        if not spec.is_hex(i)
    ]
