"""Rendering of stored rows into the interface's response shapes."""

from __future__ import annotations

import sqlite3
from typing import Any

from .. import spec
from .refs import Refs


def php_map(mapping: dict[str, Any]) -> dict[str, Any] | list[Any]:
    """An empty map is answered as ``[]``, a filled one as an object (as the service does)."""
    return mapping if mapping else []


def absolute(url: str | None, base_url: str) -> str | None:
    """Stored file urls are relative (``/files/...``) so that a db file survives a new port."""
    if url and url.startswith("/"):
        return base_url + url
    return url


def vast_tag(row: sqlite3.Row) -> str | None:
    return row["url"] if row["ad_format"] == "video" and row["url"] else None


def campaign_list_item(row: sqlite3.Row, refs: Refs) -> dict[str, Any]:
    """A campaign as the list operation shows it."""
    out: dict[str, Any] = {}
    for name in spec.CAMPAIGN_LIST_FIELDS:
        out[name] = _campaign_field(row, name, refs)
    if row["ad_format"] == "pops":
        out["url"] = row["url"]
    if row["ad_format"] == "video":
        out["vast_tag"] = vast_tag(row)
    return out


def campaign_write_item(row: sqlite3.Row, refs: Refs) -> dict[str, Any]:
    """A campaign as create and update answer it."""
    return {name: _campaign_field(row, name, refs) for name in spec.CAMPAIGN_WRITE_FIELDS}


def _campaign_field(row: sqlite3.Row, name: str, refs: Refs) -> Any:
    if name == "ad_format":
        return spec.FORMATS[row["ad_format"]].label
    if name == "vertical":
        return refs.verticals.get(row["vertical_id"], str(row["vertical_id"]))
    if name == "allow_proxy":
        return spec.ALLOW_PROXY_LABELS[row["allow_proxy"]]
    if name == "web_view":
        return spec.WEB_VIEW_LABELS[row["web_view"]]
    return row[name]


LIMIT_FIELDS: tuple[str, ...] = (
    "limit_day_sum",
    "limit_day_show",
    "limit_day_click",
    "limit_sum",
    "limit_show",
    "limit_click",
)


def campaign_detail(
    db: sqlite3.Connection, row: sqlite3.Row, refs: Refs, mode: str
) -> dict[str, Any]:
    """The detailed campaign view in mode ``short``, ``count`` or ``full``."""
    out = campaign_list_item(row, refs)
    if row["ad_format"] != "pops":
        out["url"] = row["url"]
    for name in LIMIT_FIELDS:
        out[name] = row[name]
        out[name + "_value"] = row[name + "_value"]
    if mode == "short":
        return out
    cid = row["id"]
    lists = {lk.detail_field: _list_values(db, cid, lk.name) for lk in spec.LISTS.values()}
    targets = _targets(db, cid)
    if mode == "count":
        out.update(_counts(lists, targets))
        return out
    out.update(_full_targets(db, row, refs, targets))
    out.update(lists)
    return out


def _counts(
    lists: dict[str, list[str]], targets: dict[tuple[str, str], list[str]]
) -> dict[str, int]:
    """The numbers of ``mode=count``: every list, and the fields each kind's row names."""
    out = {field: len(values) for field, values in lists.items()}
    for kind in spec.TARGET_KINDS.values():
        for list_type, field in kind.count_fields.items():
            out[field] = len(targets.get((kind.name, list_type), []))
    return out


def _full_targets(
    db: sqlite3.Connection,
    row: sqlite3.Row,
    refs: Refs,
    targets: dict[tuple[str, str], list[str]],
) -> dict[str, Any]:
    """The targeting fields of ``mode=full``: items with bids first, then the other kinds."""
    ad_format = row["ad_format"]
    kinds = spec.TARGET_KINDS.values()
    out: dict[str, Any] = {
        kind.detail_field or kind.name: _bid_sets(db, row["id"], ad_format, refs)
        for kind in kinds
        if kind.bids
    }
    for kind in kinds:
        if not kind.bids and kind.allowed_for(ad_format):
            out.update(_kind_fields(kind, ad_format, refs, targets))
    return out


def _kind_fields(
    kind: spec.TargetKind,
    ad_format: str,
    refs: Refs,
    targets: dict[tuple[str, str], list[str]],
) -> dict[str, Any]:
    """The detail field(s) of one kind: one per list type for typed kinds."""
    if kind.typed:
        return {fld: targets.get((kind.name, lt), []) for lt, fld in kind.typed_fields.items()}
    values = targets.get((kind.name, ""), [])
    field = kind.detail_field or kind.name
    if kind.detail == "map":
        group = kind.label_group(ad_format)
        return {field: php_map({v: refs.label(kind.name, v, group) or v for v in values})}
    if kind.detail == "optional" and not values:
        return {}
    return {field: [_typed(kind, v) for v in values]}


def _typed(kind: spec.TargetKind, value: str) -> Any:
    return int(value) if kind.stored_as_int else value


def _targets(db: sqlite3.Connection, cid: int) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    rows = db.execute(
        "SELECT kind, list_type, value FROM targets WHERE campaign_id=?", (cid,)
    ).fetchall()
    for kind, list_type, value in rows:
        out.setdefault((kind, list_type), []).append(value)
    for (kind, _lt), values in out.items():
        if spec.TARGET_KINDS[kind].stored_as_int:
            values.sort(key=int)
    return out


def _list_values(db: sqlite3.Connection, cid: int, name: str) -> list[str]:
    rows = db.execute(
        "SELECT item FROM lists WHERE campaign_id=? AND list=?", (cid, name)
    ).fetchall()
    return [r[0] for r in rows]


def _bid_sets(db: sqlite3.Connection, cid: int, ad_format: str, refs: Refs) -> list[dict[str, Any]]:
    """Items with bids (countries) grouped by bid: one set per price, with the set's daily
    limits."""
    rows = db.execute(
        "SELECT code, bid FROM countries WHERE campaign_id=? ORDER BY bid DESC, code", (cid,)
    ).fetchall()
    sets: dict[float, dict[str, Any]] = {}
    for code, bid in rows:
        entry = sets.get(bid)
        if entry is None:
            entry = {"price": bid, "l_d_sum": None}
            if ad_format in ("push", "inpage", "video"):
                entry["l_d_show"] = None
            if ad_format in ("push", "inpage", "pops"):
                entry["l_d_click"] = None
            entry["geo"] = {}
            sets[bid] = entry
        entry["geo"][str(refs.countries[code][0])] = code
    return list(sets.values())


def creative_item(row: sqlite3.Row, base_url: str, fields: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for name in fields:
        value = row[name]
        if name in ("icon_url", "image_url"):
            value = absolute(value, base_url)
        out[name] = value
    return out


def creative_detail(
    db: sqlite3.Connection, row: sqlite3.Row, base_url: str, ad_format: str
) -> dict[str, Any]:
    out = creative_item(row, base_url, spec.CREATIVE_WRITE_FIELDS)
    if ad_format == "video":
        out["type"] = row["type"]
        out["convert"] = row["convert"]
        out["duration"] = row["duration"]
        out["video_url"] = absolute(row["video_url"], base_url)
        files = db.execute(
            "SELECT t_event, type, mime, codec, codec_name, bit_rate, duration, width, height, url"
            " FROM creative_files WHERE creative_id=? ORDER BY seq",
            (row["id"],),
        ).fetchall()
        out["files"] = [{**dict(f), "url": absolute(f["url"], base_url)} for f in files]
    return out
