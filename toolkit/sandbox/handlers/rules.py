"""Bid rules (micro-bidding) and CPA auto-rules of a campaign."""

from __future__ import annotations

from typing import Any

from ... import spec
from .. import validate
from ..errors import BadRequest, Business
from ..params import Params, to_int
from .common import Ctx, error_body, ok

# --------------------------------------------------------------------------- bid rules


def bid_rules(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    ctx.campaign_or_fail(cid)
    rows = ctx.db.execute(
        "SELECT rule, bid, item FROM bid_rules WHERE campaign_id=? ORDER BY rule, item", (cid,)
    ).fetchall()
    rules: dict[int, dict[str, Any]] = {}
    for rule, bid, item in rows:
        rules.setdefault(rule, {"items": [], "bid": bid})["items"].append(item)
    return ok(rules=list(rules.values()))


def add_bid_rule(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    items = [i.strip() for i in ctx.params.get_list("items", str, required=True)]
    bid = ctx.params.get_float("bid", required=True)
    ctx.check_items_limit(len(items))
    ctx.campaign_or_fail(cid)
    problems = validate.rule_items(items)
    if bid <= 0:
        problems.append(f"Invalid bid: {ctx.params.raw('bid')}; must be greater than 0")
    if problems:
        raise Business(*problems)
    row = ctx.db.execute(
        "SELECT coalesce(max(rule), 0) + 1 FROM bid_rules WHERE campaign_id=?", (cid,)
    ).fetchone()
    rule, errors = row[0], []
    for item in items:
        cur = ctx.db.execute(
            "INSERT OR IGNORE INTO bid_rules(campaign_id, item, rule, bid) VALUES (?,?,?,?)",
            (cid, item, rule, bid),
        )
        if not cur.rowcount:
            errors.append(spec.MSG_SAVE_TAKEN.format(item=item, campaign_id=cid))
    return error_body(errors) if errors else ok()


def drop_bid_rule(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    items = [i.strip() for i in ctx.params.get_list("items", str, required=True)]
    check = ctx.params.get_choice("checkExist", spec.CHECK_EXIST, default="required")
    ctx.campaign_or_fail(cid)
    errors = []
    for item in items:
        cur = ctx.db.execute("DELETE FROM bid_rules WHERE campaign_id=? AND item=?", (cid, item))
        if not cur.rowcount and check == "required":
            errors.append(spec.MSG_FIND_ITEM.format(item=item, campaign_id=cid))
    return error_body(errors) if errors else ok()


# --------------------------------------------------------------------------- CPA rules

CPA_CHOICES: dict[str, tuple[str, ...]] = {
    "type": spec.CPA_TYPES,
    "cond": spec.CPA_CONDS,
    "lead_type": spec.CPA_LEAD_TYPES,
    "lead_cond": spec.CPA_CONDS,
}
CPA_NUMBERS = ("amount", "lead_amount")
CPA_COLUMNS = "id, campaign_id, type, cond, amount, lead_type, lead_cond, lead_amount"


def cpa_rules(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    ctx.campaign_or_fail(cid)
    rows = ctx.db.execute(
        f"SELECT {CPA_COLUMNS} FROM cpa_rules WHERE campaign_id=? ORDER BY id", (cid,)
    ).fetchall()
    return ok(rules=[dict(r) for r in rows])


def _cpa_items(ctx: Ctx) -> list[tuple[str | None, dict[str, Any]]]:
    """Rules as ``(key, fields)``: ``key`` is the query form's K (``None`` for a JSON array)."""
    raw = ctx.params.raw("items")
    if raw is None or raw == [] or raw == {}:
        raise Business("Parameter 'items' is required")
    if not isinstance(raw, (dict, list)):
        raise BadRequest("Parameter 'items' must be a list of rules")
    entries = list(raw.items()) if isinstance(raw, dict) else [(None, r) for r in raw]
    bad = [
        f"Parameter 'items[{k if k is not None else i}]' must be an object of rule fields"
        for i, (k, r) in enumerate(entries)
        if not isinstance(r, dict)
    ]
    if bad:
        raise BadRequest(*bad)
    return entries


def _cpa_fields(
    rule: dict[str, Any], where: str, ad_format: str, full: bool, errors: list[str]
) -> dict[str, Any]:
    params, out = Params(rule), {}
    for name in spec.CPA_FIELDS:
        if name not in rule or rule[name] is None:
            if full:
                errors.append(f"Field '{name}' is required in {where}")
            continue
        if name in CPA_NUMBERS:
            try:
                out[name] = params.get_float(name)
            except BadRequest:
                errors.append(f"Field '{name}' in {where} must be a number, got '{rule[name]}'")
            continue
        try:
            value = params.get_choice(name, CPA_CHOICES[name])
        except (Business, BadRequest):
            allowed = ", ".join(CPA_CHOICES[name])
            errors.append(f"Invalid {name} in {where}: '{rule[name]}'; allowed: {allowed}")
            continue
        limits = spec.CPA_TYPE_FORMATS if name == "type" else spec.CPA_LEAD_TYPE_FORMATS
        if name in ("type", "lead_type") and ad_format not in limits.get(value, spec.ALL_FORMATS):
            label = spec.FORMATS[ad_format].label
            errors.append(f"Invalid {name} in {where}: '{value}' is not available for {label}")
            continue
        out[name] = value
    return out


def add_cpa_rule(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    mode = ctx.params.get_choice("mode", ("add", "edit"), default="add")
    row = ctx.campaign_or_fail(cid)
    entries = _cpa_items(ctx)
    errors: list[str] = []
    writes: list[tuple[int | None, dict[str, Any]]] = []
    for index, (key, rule) in enumerate(entries):
        where = f"items[{key if key is not None else index}]"
        fields = _cpa_fields(rule, where, row["ad_format"], mode == "add", errors)
        rule_id = None
        if mode == "edit":
            ident = rule.get("id", key)
            try:
                rule_id = to_int(ident, where)
            except BadRequest:
                errors.append(f"Rule {where} has no valid id: '{ident}'")
                continue
            exists = ctx.db.execute(
                "SELECT 1 FROM cpa_rules WHERE id=? AND campaign_id=?", (rule_id, cid)
            ).fetchone()
            if exists is None:
                errors.append(spec.MSG_FIND_ITEM.format(item=rule_id, campaign_id=cid))
                continue
        writes.append((rule_id, fields))
    if errors:
        raise Business(*errors)
    for rule_id, fields in writes:
        if rule_id is None:
            columns = ", ".join(("campaign_id", *fields))
            marks = ",".join("?" * (len(fields) + 1))
            ctx.db.execute(
                f"INSERT INTO cpa_rules({columns}) VALUES ({marks})", (cid, *fields.values())
            )
        elif fields:
            sets = ", ".join(f"{k}=?" for k in fields)
            ctx.db.execute(f"UPDATE cpa_rules SET {sets} WHERE id=?", (*fields.values(), rule_id))
    return ok()


def drop_cpa_rule(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("id", required=True)
    items = ctx.params.get_list("items", int, required=True)
    check = ctx.params.get_choice("checkExist", spec.CHECK_EXIST, default="required")
    ctx.campaign_or_fail(cid)
    errors = []
    for rule_id in items:
        cur = ctx.db.execute("DELETE FROM cpa_rules WHERE id=? AND campaign_id=?", (rule_id, cid))
        if not cur.rowcount and check == "required":
            errors.append(spec.MSG_FIND_ITEM.format(item=rule_id, campaign_id=cid))
    return error_body(errors) if errors else ok()


def routes() -> dict[str, Any]:
    return {
        "/api/campaign/bid-rules": bid_rules,
        "/api/campaign/add-bid-rule": add_bid_rule,
        "/api/campaign/drop-bid-rule": drop_bid_rule,
        "/api/campaign/drop-bid-rlue": drop_bid_rule,
        "/api/campaign/cpa-rules": cpa_rules,
        "/api/campaign/add-cpa-rule": add_cpa_rule,
        "/api/campaign/drop-cpa-rule": drop_cpa_rule,
        "/api/campaign/drop-cpa-rlue": drop_cpa_rule,
    }
