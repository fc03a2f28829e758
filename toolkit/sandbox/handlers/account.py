"""Account-wide operations: balance, dictionaries, search and price estimates."""

from __future__ import annotations

from typing import Any

from ... import spec
from .. import price, validate
from ..errors import Business
from .common import Ctx, Handler, ok


def balance(ctx: Ctx) -> dict[str, Any]:
    row = ctx.db.execute(
        "SELECT user_id, currency, balance FROM accounts WHERE user_id=?", (ctx.user_id,)
    ).fetchone()
    return {"user_id": row["user_id"], "currency": row["currency"], "balance": row["balance"]}


def dictionaries(ctx: Ctx) -> dict[str, Any]:
    kind = ctx.params.get_choice("type", spec.DICTIONARY_TYPES)
    kinds = spec.DICTIONARY_TYPES if kind is None else (kind,)
    return ok(**{k: ctx.refs.dictionary(k) for k in kinds})


def search(ctx: Ctx) -> dict[str, Any]:
    p = ctx.params
    kind = p.get_choice("type", spec.search_types(), required=True)
    text = p.get_str("search", required=True)
    countries = p.get_list("country", str)
    limit = p.get_int("limit", default=spec.SEARCH_LIMIT_DEFAULT)
    errors = []
    if len(text.strip()) < spec.SEARCH_MIN_CHARS:
        errors.append(
            f"Search string is too short: '{text}' (minimum {spec.SEARCH_MIN_CHARS} characters)"
        )
    if not 1 <= limit <= spec.SEARCH_LIMIT_MAX:
        errors.append(f"Invalid limit: {limit} (from 1 to {spec.SEARCH_LIMIT_MAX})")
    if countries and kind not in spec.search_country_filter():
        errors.append(f"Parameter 'country' is not available for search type '{kind}'")
    errors += [f"Invalid country item: {c}" for c in countries if c not in ctx.refs.countries]
    if errors:
        raise Business(*errors)
    return ctx.refs.search(kind, text.strip(), countries or None, limit)


def estimate_price(ctx: Ctx) -> dict[str, Any]:
    ad_format = ctx.params.get_choice("adFormat", spec.FORMAT_CODES, required=True)
    values: dict[str, list[Any]] = {}
    errors: list[str] = []
    for kind in spec.TARGET_KINDS.values():
        name = kind.price_param
        if name is None or name not in ctx.params:
            continue
        items = ctx.params.get_list(name, kind.item_type)
        if not items:
            continue
        pairs, errs = validate.target_items(ctx.refs, kind, ad_format, None, items)
        errors += errs
        values[name] = [sent if kind.item_type is str else int(sent) for sent, _ in pairs]
    if errors:
        raise Business(*errors)
    return ok(price=price.estimate(ctx.refs, ad_format, values))


def routes() -> dict[str, Handler]:
    return {
        "/api/campaign/balance": balance,
        "/api/campaign/list-refs-data": dictionaries,
        "/api/campaign/search": search,
        "/api/campaign/price": estimate_price,
    }
