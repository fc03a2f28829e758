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
    """Map of item (as sent) -> stored value for kinds with a closed set of values.

    None for a kind checked by its syntax, or without reference data in the sandbox.
    """
    if kind.values is not None:
        return {v: v for v in kind.values}
    return refs.ids_of(kind.name, kind.label_group(ad_format))


def _any_value(kind: spec.TargetKind, text: str) -> str | None:
    """The stored form of an item of a kind without reference data: a positive id for int
    kinds (any text for the others), else None."""
    if kind.item_type is not int:
        return text or None
    return text if text.isdigit() and spec.is_source_id(int(text)) else None


def _stored(kind: spec.TargetKind, index: dict[str, str] | None, text: str) -> str | None:
    """The stored form of one item, or None when the item is invalid."""
    if index is not None:
        return index.get(text)
    if kind.syntax is not None:
        if not kind.syntax(text):
            return None
        return text.lower() if kind.fold_case else text
    return _any_value(kind, text)


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
    for item in items:
        text = str(item).strip()
        stored = _stored(kind, index, text)
        if stored is None:
            errors.append(f"Invalid {kind.name} item: {item}{where(campaign_id)}")
        else:
            pairs.append((text, stored))
    return pairs, errors


def item_bids(
    refs: Refs, kind: spec.TargetKind, items: dict[str, float], campaign_id: int | None
) -> list[str]:
    """Problems of the items of a kind with bids (``kind.bids``): known items, positive bids."""
    known = refs.ids_of(kind.name) or {}
    errors = []
    for code, bid in items.items():
        if code not in known:
            errors.append(f"Invalid {kind.name} item: {code}{where(campaign_id)}")
        elif bid <= 0:
            errors.append(f"Invalid bid for {kind.name} {code}: {bid}{where(campaign_id)}")
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
