"""Targeting of every target kind and the 4 source/subId lists, single-campaign and batch.

One generic handler per (kind or list, add/drop, single/batch), built from the tables in
:mod:`toolkit.spec`. Validation of every campaign and item runs first; a request with any bad
value changes nothing. Then items are processed one by one: new ones are saved, an existing
one on add and a missing one on drop give the service's messages.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ... import spec
from .. import validate
from ..errors import Business
from .common import Ctx, Handler, error_body, ok, run_batch

# --------------------------------------------------------------------------- targets


def _with_bids(kind: spec.TargetKind, action: str) -> bool:
    """Adding items of a kind with bids: the items map each value to its bid."""
    return kind.bids and action == "add"


def _target_items(ctx: Ctx, kind: spec.TargetKind, action: str) -> list[Any] | dict[str, float]:
    if _with_bids(kind, action):
        items: Any = ctx.params.get_map("items", float, required=True)
    else:
        items = ctx.params.get_list("items", kind.item_type, required=True)
    ctx.check_items_limit(len(items))
    return items


def _validate_target(
    ctx: Ctx, kind: spec.TargetKind, action: str, row: sqlite3.Row, items: Any
) -> tuple[list[tuple[str, Any]], list[str]]:
    """``(pairs, errors)`` for one campaign; pairs are (item as sent, stored value or bid)."""
    if _with_bids(kind, action):
        if not kind.allowed_for(row["ad_format"]):  # pragma: no cover - every format has geo
            return [], [validate.format_error(kind.name, row["ad_format"], row["id"])]
        errors = validate.item_bids(ctx.refs, kind, items, row["id"])
        return list(items.items()), errors
    return validate.target_items(ctx.refs, kind, row["ad_format"], row["id"], items)


def _write_bid_item(
    db: sqlite3.Connection, action: str, cid: int, code: str, bid: Any
) -> sqlite3.Cursor:
    """Add or drop one item of the kind with bids, kept in its own table."""
    if action == "add":
        return db.execute(
            "INSERT OR IGNORE INTO countries(campaign_id, code, bid) VALUES (?,?,?)",
            (cid, code, bid),
        )
    return db.execute("DELETE FROM countries WHERE campaign_id=? AND code=?", (cid, code))


def _write_item(
    db: sqlite3.Connection, kind: str, action: str, cid: int, list_type: str, value: Any
) -> sqlite3.Cursor:
    if action == "add":
        return db.execute(
            "INSERT OR IGNORE INTO targets(campaign_id, kind, list_type, value) VALUES (?,?,?,?)",
            (cid, kind, list_type, value),
        )
    return db.execute(
        "DELETE FROM targets WHERE campaign_id=? AND kind=? AND list_type=? AND value=?",
        (cid, kind, list_type, value),
    )


def _save_error(ctx: Ctx, kind: spec.TargetKind, row: sqlite3.Row, sent: str, value: Any) -> str:
    """The service's message for an item already taken (some name the item)."""
    name = ""
    if "{name}" in kind.save_error:
        name = ctx.refs.label(kind.name, value, kind.label_group(row["ad_format"])) or ""
    return kind.save_error.format(item=sent, campaign_id=row["id"], name=name)


def _apply_target(
    ctx: Ctx,
    kind: spec.TargetKind,
    action: str,
    row: sqlite3.Row,
    pairs: list[tuple[str, Any]],
    list_type: str,
    check: str,
) -> list[str]:
    db, cid, errors = ctx.db, row["id"], []
    for sent, value in pairs:
        if kind.bids:
            cur = _write_bid_item(db, action, cid, sent, value)
        else:
            cur = _write_item(db, kind.name, action, cid, list_type, value)
        if cur.rowcount:
            continue
        if action == "add":
            errors.append(_save_error(ctx, kind, row, sent, value))
        elif check == "required":
            errors.append(kind.missing_error.format(item=sent, campaign_id=cid))
    return errors


def target_handler(kind: spec.TargetKind, action: str, batch: bool) -> Handler:
    """Handler of ``/api/campaign/{action}-{kind}`` (``batch``: the ``-batch`` form)."""

    def handle(ctx: Ctx) -> dict[str, Any]:
        list_type = (
            ctx.params.get_choice("type", spec.LIST_TYPES, default="black") if kind.typed else ""
        )
        check = ctx.params.get_choice("checkExist", spec.CHECK_EXIST, default="required")
        if batch:
            ids = ctx.batch_ids()
            items = _target_items(ctx, kind, action)
            rows = ctx.campaigns(ids)
        else:
            cid = ctx.params.get_int("id", required=True)
            items = _target_items(ctx, kind, action)
            row = ctx.campaign_or_fail(cid)
            rows = {cid: row}
            ids = [cid]
        plans: dict[int, list[tuple[str, Any]]] = {}
        problems: list[str] = []
        for cid, row in rows.items():
            pairs, errors = _validate_target(ctx, kind, action, row, items)
            plans[cid] = pairs
            problems.extend(errors)
        if problems:
            raise Business(*problems)

        def apply(row: sqlite3.Row) -> list[str]:
            return _apply_target(ctx, kind, action, row, plans[row["id"]], list_type, check)

        if batch:
            return run_batch(ctx, ids, spec.MSG_CAMPAIGN_NOT_FOUND, apply, rows)
        errors = apply(rows[ids[0]])
        return error_body(errors) if errors else ok()

    handle.__name__ = f"{action}_{kind.column}{'_batch' if batch else ''}"
    return handle


# --------------------------------------------------------------------------- lists


def _list_items(ctx: Ctx, lk: spec.ListKind, campaign_id: int | None) -> list[Any]:
    items = ctx.params.get_list("items", lk.item_type, required=True)
    ctx.check_items_limit(len(items))
    errors = validate.list_items(lk, items, campaign_id)
    if errors:
        raise Business(*errors)
    return items


def _apply_list(
    ctx: Ctx, lk: spec.ListKind, action: str, cid: int, items: list[Any], check: str
) -> dict[str, str]:
    """Messages keyed by the index of the failing item in the request."""
    errors: dict[str, str] = {}
    db = ctx.db
    for index, item in enumerate(items):
        text = str(item)
        if action == "add":
            cur = db.execute(
                "INSERT OR IGNORE INTO lists(campaign_id, list, item) VALUES (?,?,?)",
                (cid, lk.name, text),
            )
            if not cur.rowcount:
                errors[str(index)] = spec.MSG_SAVE_TAKEN.format(item=text, campaign_id=cid)
        else:
            cur = db.execute(
                "DELETE FROM lists WHERE campaign_id=? AND list=? AND item=?",
                (cid, lk.name, text),
            )
            if not cur.rowcount and check == "required":
                errors[str(index)] = spec.MSG_DROP_MISSING.format(item=text, campaign_id=cid)
    return errors


def list_handler(lk: spec.ListKind, action: str, batch: bool | None) -> Handler:
    """Handler of a list add/drop; ``batch=None`` decides by ``campaignId`` versus ``id``.

    Source lists share one path for both forms; a batch answers each campaign's messages as an
    object keyed by the index of the failing item, as the service does for these lists.
    """

    def handle(ctx: Ctx) -> dict[str, Any]:
        check = ctx.params.get_choice("checkExist", spec.CHECK_EXIST, default="required")
        is_batch = batch if batch is not None else "campaignId" in ctx.params
        if is_batch:
            ids = ctx.batch_ids()
            items = _list_items(ctx, lk, None)
            return run_batch(
                ctx,
                ids,
                spec.MSG_CAMPAIGN_NOT_FOUND,
                lambda row: _apply_list(ctx, lk, action, row["id"], items, check),
            )
        cid = ctx.params.get_int("id", required=True)
        items = _list_items(ctx, lk, cid)
        ctx.campaign_or_fail(cid)
        errors = _apply_list(ctx, lk, action, cid, items, check)
        return error_body(list(errors.values())) if errors else ok()

    handle.__name__ = f"{action}_{lk.name}{'_batch' if batch else ''}"
    return handle


def list_read_handler(lk: spec.ListKind) -> Handler:
    def handle(ctx: Ctx) -> dict[str, Any]:
        cid = ctx.params.get_int("id", required=True)
        ctx.campaign_or_fail(cid)
        rows = ctx.db.execute(
            "SELECT item FROM lists WHERE campaign_id=? AND list=?", (cid, lk.name)
        ).fetchall()
        return ok(items=[r[0] for r in rows])

    handle.__name__ = f"read_{lk.name}"
    return handle


def routes() -> dict[str, Handler]:
    """Paths of every targeting and list operation, aliases included."""
    table: dict[str, Handler] = {}
    for kind in spec.TARGET_KINDS.values():
        for action in ("add", "drop"):
            single = target_handler(kind, action, False)
            table[getattr(kind, f"{action}_path")] = single
            if action == "add":
                for alias in kind.alias_add_paths:
                    table[alias] = single
            table[getattr(kind, f"batch_{action}_path")] = target_handler(kind, action, True)
    for lk in spec.LISTS.values():
        table[lk.read_path] = list_read_handler(lk)
        for action in ("add", "drop"):
            if lk.entity == "source":
                table[getattr(lk, f"{action}_path")] = list_handler(lk, action, None)
            else:
                table[getattr(lk, f"{action}_path")] = list_handler(lk, action, False)
                table[getattr(lk, f"batch_{action}_path")] = list_handler(lk, action, True)
    return table
