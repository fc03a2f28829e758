"""Campaigns: list, detail, create, update, and start/pause/archive single and batch."""

from __future__ import annotations

import sqlite3
from typing import Any

from ... import spec
from .. import validate, views
from ..errors import Business
from ..params import Params
from .common import Ctx, Handler, now, ok, run_batch

LIST_FILTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "status": ("status", spec.CAMPAIGN_STATUSES),
    "work_status": ("work_status", spec.WORK_STATUSES),
    "mode": ("mode", spec.MODES),
    "ad_format": ("ad_format", spec.FORMAT_CODES),
}


def list_campaigns(ctx: Ctx) -> dict[str, Any]:
    where, args = ["user_id=?"], [ctx.user_id]
    for param, (column, choices) in LIST_FILTERS.items():
        value = ctx.params.get_choice(param, choices)
        if value is not None:
            where.append(f"{column}=?")
            args.append(value)
    for param in ("name", "url"):
        text = ctx.params.get_str(param)
        if text:
            where.append(f"instr(fold({param}), ?) > 0")
            args.append(text.casefold())
    rows = ctx.db.execute(
        f"SELECT * FROM campaigns WHERE {' AND '.join(where)} ORDER BY id", args
    ).fetchall()
    return {"items": [views.campaign_list_item(r, ctx.refs) for r in rows]}


def campaign_item(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    mode = ctx.params.get_choice("mode", ("short", "count", "full"), default="short")
    row = ctx.campaign_or_fail(cid)
    return ok(item=views.campaign_detail(ctx.db, row, ctx.refs, mode))


# --------------------------------------------------------------------------- create / update


def _limits(ctx: Ctx, ad_format: str, errors: list[str]) -> dict[str, Any]:
    """Limit parameters under either spelling; ``null`` or an empty string clears a limit."""
    out: dict[str, Any] = {}
    for lim in spec.LIMITS.values():
        for name in (lim.param, lim.alias):
            if name is None or name not in ctx.params:
                continue
            raw = ctx.params.raw(name)
            if raw is None or raw == "":
                value = None
            elif lim.kind is int:
                value = ctx.params.get_int(name)
            else:
                value = ctx.params.get_float(name)
            if value is not None and value < 0:
                errors.append(f"Invalid value of '{name}': {raw}; must not be negative")
            if ad_format not in lim.formats:
                label = spec.FORMATS[ad_format].label
                errors.append(f"Parameter '{name}' is not available for {label} campaigns")
            out[lim.field] = value
            break
    return out


def _frequency(ctx: Ctx, ad_format: str, creating: bool, errors: list[str]) -> dict[str, Any]:
    """``frequency_capping`` as given, or the format's default on create."""
    p = ctx.params
    if "frequency_capping" in p:
        fc = p.get_int("frequency_capping")
        if fc is not None and fc < 0:
            errors.append(f"Invalid value of 'frequency_capping': {fc}; must not be negative")
        return {"frequency_capping": fc if fc is not None else 0}
    if creating:
        return {"frequency_capping": spec.FORMATS[ad_format].default_frequency_capping}
    return {}


SETTING_CHOICES: dict[str, tuple[str, ...]] = {
    "web_view": ("yes", "no"),
    "vpaid": ("yes", "no"),
    "placement": spec.VIDEO_PLACEMENTS,
}


def _choices(ctx: Ctx, ad_format: str, creating: bool, errors: list[str]) -> dict[str, Any]:
    """Settings with a closed set of values, and the formats that allow each."""
    p = ctx.params
    out: dict[str, Any] = {}
    for key, allowed in SETTING_CHOICES.items():
        if key == "placement" and not creating:
            continue
        if p.raw(key) is None:  # absent or null: left as it is (or the default)
            continue
        try:
            out[key] = p.get_choice(key, allowed)
        except Business as exc:
            errors.extend(exc.messages)
        if ad_format not in spec.SETTING_FORMATS[key]:
            label = spec.FORMATS[ad_format].label
            errors.append(f"Parameter '{key}' is not available for {label} campaigns")
    if p.raw("mode") is not None:
        try:
            out["mode"] = p.get_choice("mode", spec.MODES)
        except Business as exc:
            errors.extend(exc.messages)
    return out


def _settings(ctx: Ctx, ad_format: str, creating: bool, errors: list[str]) -> dict[str, Any]:
    p = ctx.params
    out: dict[str, Any] = {"name": p.get_str("name", required=True).strip()}
    vertical = p.get_int("vertical_id", required=True)
    if vertical not in ctx.refs.verticals:
        errors.append(f"Invalid vertical_id: {vertical}")
    out["vertical_id"] = vertical
    out.update(_frequency(ctx, ad_format, creating, errors))
    for key in ("url", "note"):
        if key in p:
            out[key] = p.get_str(key) or None  # an empty string clears it
    if p.raw("allow_proxy") is not None:
        value = p.get_int("allow_proxy")
        if value not in (0, 1):
            errors.append(f"Invalid value of 'allow_proxy': {value}; allowed: 1, 0")
        out["allow_proxy"] = value
    out.update(_choices(ctx, ad_format, creating, errors))
    out.update(_limits(ctx, ad_format, errors))
    return out


def _target(ctx: Ctx, ad_format: str, cid: int | None, errors: list[str]) -> dict[str, list[Any]]:
    """The ``target`` object of create/update, validated; kind -> stored values or bids."""
    raw = ctx.params.raw("target")
    if raw is None or raw == "" or raw == []:
        return {}
    if not isinstance(raw, dict):
        kinds = ", ".join(spec.create_target_kinds())
        raise Business(f"Parameter 'target' must be an object of {kinds}")
    sub = Params(raw)
    out: dict[str, Any] = {}
    for key in raw:
        if key not in spec.create_target_kinds():
            allowed = ", ".join(spec.create_target_kinds())
            errors.append(f"Invalid target key: '{key}'; allowed: {allowed}")
    for name in spec.create_target_kinds():
        if name not in raw:
            continue
        kind = spec.TARGET_KINDS[name]
        if kind.bids:
            bids = sub.get_map(name, float)
            errors.extend(validate.item_bids(ctx.refs, kind, bids, cid))
            out[name] = list(bids.items())
        else:
            items = sub.get_list(name, kind.item_type)
            pairs, errs = validate.target_items(ctx.refs, kind, ad_format, cid, items)
            errors.extend(errs)
            out[name] = [stored for _sent, stored in pairs]
    return out


def _write_target(db: sqlite3.Connection, cid: int, target: dict[str, list[Any]]) -> None:
    """Replace the targeting of each kind named in ``target``."""
    for name, values in target.items():
        if spec.TARGET_KINDS[name].bids:
            db.execute("DELETE FROM countries WHERE campaign_id=?", (cid,))
            db.executemany(
                "INSERT INTO countries(campaign_id, code, bid) VALUES (?,?,?)",
                [(cid, code, bid) for code, bid in values],
            )
        else:
            db.execute("DELETE FROM targets WHERE campaign_id=? AND kind=?", (cid, name))
            db.executemany(
                "INSERT OR IGNORE INTO targets(campaign_id, kind, list_type, value)"
                " VALUES (?,?,'',?)",
                [(cid, name, v) for v in values],
            )


def start_problems(db: sqlite3.Connection, row: sqlite3.Row) -> list[str]:
    """Why a campaign may not start: missing required targeting or a blocking status."""
    cid = row["id"]
    if row["status"] in ("Declined", "Stopped"):
        return [f"Campaign #{cid} can not be started: its status is {row['status']}"]
    missing = []
    for name in spec.start_requires():
        if spec.TARGET_KINDS[name].bids:
            sql = "SELECT 1 FROM countries WHERE campaign_id=? LIMIT 1"
            args: tuple[Any, ...] = (cid,)
        else:
            sql = "SELECT 1 FROM targets WHERE campaign_id=? AND kind=? LIMIT 1"
            args = (cid, name)
        if db.execute(sql, args).fetchone() is None:
            missing.append(name)
    if missing:
        return [f"Campaign #{cid} can not be started: no {', '.join(missing)} targeting"]
    return []


def _work_status(ctx: Ctx, errors: list[str]) -> str | None:
    try:
        value = ctx.params.get_choice("work_status", ("paused", "started"))
    except Business as exc:
        errors.extend(exc.messages)
        return None
    return None if value is None else value.capitalize()


def create_campaign(ctx: Ctx) -> dict[str, Any]:
    ad_format = ctx.params.get_choice("adFormat", spec.FORMAT_CODES, required=True)
    errors: list[str] = []
    settings = _settings(ctx, ad_format, True, errors)
    work_status = _work_status(ctx, errors) or "Paused"
    target = _target(ctx, ad_format, None, errors)
    if errors:
        raise Business(*errors)
    settings.update(
        user_id=ctx.user_id,
        t_created=now(),
        ad_format=ad_format,
        status="New",
        work_status="Paused",
    )
    columns = ", ".join(settings)
    cur = ctx.db.execute(
        f"INSERT INTO campaigns({columns}) VALUES ({','.join('?' * len(settings))})",
        list(settings.values()),
    )
    cid = cur.lastrowid
    _write_target(ctx.db, cid, target)
    row = ctx.campaign(cid)
    if work_status == "Started":
        problems = start_problems(ctx.db, row)
        if problems:
            raise Business(*problems)
        ctx.db.execute("UPDATE campaigns SET work_status='Started' WHERE id=?", (cid,))
        row = ctx.campaign(cid)
    answer = ok(item=views.campaign_write_item(row, ctx.refs))
    if ctx.config.auto_approve:
        ctx.db.execute("UPDATE campaigns SET status='Approved' WHERE id=?", (cid,))
    return answer


def update_campaign(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    row = ctx.campaign_or_fail(cid)
    ad_format = row["ad_format"]
    errors: list[str] = []
    settings = _settings(ctx, ad_format, False, errors)
    work_status = _work_status(ctx, errors)
    target = _target(ctx, ad_format, cid, errors)
    if errors:
        raise Business(*errors)
    assignments = ", ".join(f"{k}=?" for k in settings)
    ctx.db.execute(f"UPDATE campaigns SET {assignments} WHERE id=?", [*settings.values(), cid])
    _write_target(ctx.db, cid, target)
    if work_status is not None and work_status != row["work_status"]:
        if work_status == "Started":
            problems = start_problems(ctx.db, ctx.campaign(cid))
            if problems:
                raise Business(*problems)
        ctx.db.execute("UPDATE campaigns SET work_status=? WHERE id=?", (work_status, cid))
    return ok(item=views.campaign_write_item(ctx.campaign(cid), ctx.refs))


# --------------------------------------------------------------------------- work status


def _move(ctx: Ctx, row: sqlite3.Row, action: str) -> list[str]:
    target = spec.WORK_ACTIONS[action]
    if action == "start":
        problems = start_problems(ctx.db, row)
        if problems:
            return problems
    if row["work_status"] != target:
        ctx.db.execute("UPDATE campaigns SET work_status=? WHERE id=?", (target, row["id"]))
    return []


def work_handler(action: str, batch: bool) -> Handler:
    def handle(ctx: Ctx) -> dict[str, Any]:
        if batch:
            ids = ctx.batch_ids()
            return run_batch(
                ctx, ids, spec.MSG_CAMPAIGN_NOT_IN_ACCOUNT, lambda row: _move(ctx, row, action)
            )
        cid = ctx.params.get_int("id", required=True)
        row = ctx.campaign_or_fail(cid, spec.MSG_CAMPAIGN_NOT_IN_ACCOUNT)
        problems = _move(ctx, row, action)
        if problems:
            raise Business(*problems)
        return ok()

    handle.__name__ = f"{action}_campaign{'_batch' if batch else ''}"
    return handle


def routes() -> dict[str, Handler]:
    table: dict[str, Handler] = {
        "/api/campaign/list": list_campaigns,
        "/api/campaign/item": campaign_item,
        "/api/campaign/create": create_campaign,
        "/api/campaign/update": update_campaign,
    }
    for action in spec.WORK_ACTIONS:
        table[f"/api/campaign/{action}"] = work_handler(action, False)
        table[f"/api/campaign/{action}-batch"] = work_handler(action, True)
    return table
