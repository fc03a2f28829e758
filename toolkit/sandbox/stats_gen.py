"""Tracker-style statistics for the demo account, with the truth behind them.

:func:`generate_stats` writes a CSV export in the generic layout of ``toolkit.stats``
(``date, campaign_id, level, key, impressions, clicks, cost, conversions, revenue``) for the
sources, subIds and countries an account's campaigns get traffic from in the sandbox store
(whitelisted items, or new items on none of their lists; the subIds of their bid rules; their
countries; never a blacklisted item, nor a country the campaign's targeting excludes: one the
sandbox's price model gives no traffic), as a tracker's export downloaded on the last day (the
freshest days' conversions still arriving), with the payouts of each campaign's countries
beside it, and returns the truth it drew them from: one row per item with the true rate of
its clicks, its payout and revenue per click, so that a rule's decisions can be scored
(precision, recall) against what was really there. A campaign's sources, subIds and
countries share one click stream (:mod:`toolkit.sandbox.stats_model`), and a click costs the
campaign's bid for its country (per click, or per 1,000 impressions for a ``CPM`` campaign).

Everything follows from ``seed``: the same store and seed give the same file, byte for byte.
The standard library only (no pandas), as the rest of the sandbox.
"""

from __future__ import annotations

import csv
import datetime as dt
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .price import reaches, stored_params
from .refs import load_refs
from .stats_model import COUNTRY, DELAY, Campaign, build, delay_shares, draw_day
from .store import Store

#: The columns of the file written.
COLUMNS = (
    "date",
    "campaign_id",
    "level",
    "key",
    "impressions",
    "clicks",
    "cost",
    "conversions",
    "revenue",
)
#: The columns of the truth table returned: per item the true conversion rate of its clicks,
#: what one of its conversions earns on average (a country's own payout) and their product,
#: the true revenue per click.
TRUTH_COLUMNS = ("campaign_id", "level", "key", "true_cr", "payout", "true_epc")
#: The columns of the payouts table written: USD per conversion per campaign and country
#: (country blank: every country of a campaign without a country level).
PAYOUT_COLUMNS = ("campaign_id", COUNTRY, "payout")
#: Where the payouts table goes by default: beside the statistics.
PAYOUTS = "payouts.csv"

#: The last day of the statistics when ``end`` is not given (fixed, so files repeat).
END = dt.date(2026, 1, 31)


#: New sources and subIds a campaign without a whitelist buys from, per level.
FRESH = 40


def _user(db: Any, user_id: int | None) -> int:
    """``user_id``, or the demo account's (the lowest user id) when it is None."""
    if user_id is None:
        return db.execute("SELECT min(user_id) FROM accounts").fetchone()[0]
    return user_id


def account_items(
    store: Store, user_id: int | None = None, *, fresh: int = FRESH, seed: int = 0
) -> list[dict[str, Any]]:
    """``{campaign_id, level, key}`` of every item an account's campaigns (the demo account,
    the lowest user id, when ``user_id`` is None) get traffic from, sorted: per campaign and
    level (source, subId) its whitelist when it has one, else ``fresh`` items on none of its
    lists (drawn from ``seed``); the subIds of its bid rules; its countries. Blacklisted items
    get no traffic and are left out, and so are the countries its targeting excludes
    (:func:`account_bids`), and every item of a campaign whose countries it all excludes."""
    bids = account_bids(store, user_id)
    with store.lock:
        db = store.conn
        user_id = _user(db, user_id)
        lists = db.execute(
            "SELECT l.campaign_id, l.list, l.item FROM lists l "
            "JOIN campaigns c ON c.id = l.campaign_id WHERE c.user_id = ?",
            (user_id,),
        ).fetchall()
        rows = db.execute(
            "SELECT b.campaign_id, 'subid', b.item FROM bid_rules b "
            "JOIN campaigns c ON c.id = b.campaign_id WHERE c.user_id = ? "
            "UNION SELECT k.campaign_id, 'country', k.code FROM countries k "
            "JOIN campaigns c ON c.id = k.campaign_id WHERE c.user_id = ?",
            (user_id, user_id),
        ).fetchall()
        ids = [r[0] for r in db.execute("SELECT id FROM campaigns WHERE user_id = ?", (user_id,))]
    listed = {(int(c), str(n).split("_")[0], str(n).split("_")[1], str(i)) for c, n, i in lists}
    items = {(int(c), lv, str(k)) for c, lv, k in rows}
    items -= {(c, lv, k) for c, lv, colour, k in listed if colour == "black"}
    items |= {(c, lv, k) for c, lv, colour, k in listed if colour == "white"}
    items = {(c, lv, k) for c, lv, k in items if lv != COUNTRY or k in bids[c][1]}
    dark = {c for c, (_mode, reached, excluded) in bids.items() if excluded and not reached}
    whitelisting = {(c, lv) for c, lv, colour, _ in listed if colour == "white"}
    taken = {(c, lv, k) for c, lv, _, k in listed}
    for cid in sorted(int(i) for i in ids):
        if cid in dark:
            continue
        rng = random.Random(f"{seed}:{cid}")
        for level, make in (("source", _source_id), ("subid", _subid)):
            if (cid, level) in whitelisting:
                continue
            new = {(cid, level, make(rng)) for _ in range(fresh)}
            items |= new - taken
    items = {item for item in items if item[0] not in dark}
    return [{"campaign_id": c, "level": lv, "key": k} for c, lv, k in sorted(items)]


def account_bids(
    store: Store, user_id: int | None = None
) -> dict[int, tuple[str, dict[str, float], frozenset[str]]]:
    """Per campaign of an account (the demo account when ``user_id`` is None): its bid unit
    (``mode``: ``CPC`` per click, ``CPM`` per 1,000 impressions), country -> bid of the
    countries its targeting reaches, and the countries it excludes: those the sandbox's price
    model gives no traffic at either price (:func:`toolkit.sandbox.price.reaches`)."""
    refs = load_refs()
    with store.lock:
        db = store.conn
        user_id = _user(db, user_id)
        camps = db.execute(
            "SELECT id, ad_format, mode FROM campaigns WHERE user_id = ? ORDER BY id", (user_id,)
        ).fetchall()
        targets = db.execute(
            "SELECT t.campaign_id, t.kind, t.value FROM targets t JOIN campaigns c "
            "ON c.id = t.campaign_id WHERE c.user_id = ? ORDER BY 1, 2, 3",
            (user_id,),
        ).fetchall()
        countries = db.execute(
            "SELECT k.campaign_id, k.code, k.bid FROM countries k JOIN campaigns c "
            "ON c.id = k.campaign_id WHERE c.user_id = ? ORDER BY 1, 2",
            (user_id,),
        ).fetchall()
    rows: dict[int, list[tuple[str, str]]] = {}
    for cid, kind, value in targets:
        rows.setdefault(int(cid), []).append((str(kind), str(value)))
    out = {}
    for cid, ad_format, mode in camps:
        params = stored_params(refs, str(ad_format), rows.get(int(cid), []))
        bids, excluded = {}, set()
        for code, bid in ((str(k), float(b)) for c, k, b in countries if c == cid):
            if reaches(refs, str(ad_format), params, code):
                bids[code] = bid
            else:
                excluded.add(code)
        out[int(cid)] = (str(mode), bids, frozenset(excluded))
    return out


def _source_id(rng: random.Random) -> str:
    return str(rng.randint(10_000_000, 99_999_999))


def _subid(rng: random.Random) -> str:
    return f"{rng.getrandbits(40):010x}"


def generate_stats(
    store_or_items: Store | Iterable[Mapping[str, Any]],
    path: str | Path,
    *,
    days: int = 14,
    seed: int = 0,
    end: dt.date = END,
    user_id: int | None = None,
    delay: Any = DELAY,
    payouts: str | Path | None = PAYOUTS,
) -> list[dict[str, Any]]:
    """Write ``days`` days of daily statistics (ending on ``end``) to the CSV file ``path``
    as downloaded on ``end``, write the payouts table (:data:`PAYOUT_COLUMNS`) to ``payouts``
    (a path relative to ``path``'s folder: ``payouts.csv`` beside it by default; None: not
    written), and return the truth table (:data:`TRUTH_COLUMNS`, one dict per item).

    ``store_or_items``: the sandbox :class:`Store` (its account ``user_id``, the demo account
    by default; the items :func:`account_items` lists) or rows ``{campaign_id, level, key}``.
    A campaign's sources, subIds and countries share one click stream
    (:mod:`toolkit.sandbox.stats_model`): per campaign and day the clicks, cost, conversions
    and revenue summed over its source rows equal those over its subId rows and its country
    rows. A conversion earns its country's payout and is in the file when its lag (drawn
    from ``delay``: ``{age: cumulative share known}``, a list of shares by age, or None for
    none) has passed by ``end``; the truth is that of the final conversions.

    >>> items = [{"campaign_id": 1, "level": lv, "key": k} for lv, k in
    ...          [("source", "s1"), ("source", "s2"), ("country", "US")]]
    >>> truth = generate_stats(items, "stats.csv", days=3)            # doctest: +SKIP
    """
    if days < 1:
        raise ValueError(f"days must be >= 1, got {days}")
    lags = delay_shares(delay) or (1.0,)
    items = (
        account_items(store_or_items, user_id, seed=seed)
        if isinstance(store_or_items, Store)
        else [dict(r) for r in store_or_items]
    )
    rng = random.Random(seed)
    bids = None
    if isinstance(store_or_items, Store):
        bids = {c: (m, b) for c, (m, b, _ex) in account_bids(store_or_items, user_id).items()}
    campaigns = build(items, rng, bids)
    order = [(int(r["campaign_id"]), str(r["level"]), str(r["key"])) for r in items]
    _write(Path(path), campaigns, order, (rng, random.Random(f"{seed}:lags")), days, end, lags)
    if payouts is not None:
        _write_payouts(Path(path).parent / payouts, campaigns)
    truth = {
        (cid, level, key): (cr, payout)
        for cid, camp in campaigns.items()
        for level, key, cr, payout in camp.truth()
    }
    return [
        dict(zip(TRUTH_COLUMNS, (*item, cr, payout, cr * payout), strict=True))
        for item in order
        for cr, payout in [truth[item]]
    ]


def _write(
    path: Path,
    campaigns: Mapping[int, Campaign],
    order: list[tuple[int, str, str]],
    rngs: tuple[random.Random, random.Random],
    days: int,
    end: dt.date,
    delay: tuple[float, ...],
) -> None:
    """The rows of every day, the items in ``order``."""
    index = {
        (cid, level, key): i
        for cid, camp in campaigns.items()
        for level, lv in camp.levels.items()
        for i, key in enumerate(lv.keys)
    }
    rows = [(cid, level, key, index[cid, level, key]) for cid, level, key in order]
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for d in range(days):
            day = (end - dt.timedelta(days=days - 1 - d)).isoformat()
            drawn = {
                cid: (draw_day(camp, *rngs, days - 1 - d, delay), rngs[0].randint(20, 80))
                for cid, camp in campaigns.items()
            }
            for cid, level, key, i in rows:
                one, shown = drawn[cid]
                clicks = one.clicks[level][i]
                per = 1000 if campaigns[cid].mode == "CPC" else shown  # 1/10^7 USD a bid unit
                out.writerow(
                    (
                        day,
                        cid,
                        level,
                        key,
                        clicks * shown,
                        clicks,
                        _cost(one.cost[level][i] * per),
                        one.conversions[level][i],
                        _decimal(one.revenue[level][i], 2),
                    )
                )


def _decimal(units: int, places: int) -> str:
    """``units`` of 10^-places as a decimal, exactly (the float nearest ``units / 10^places``
    rounds back to ``units``): rows sum to their totals."""
    return f"{units / 10**places:.{places}f}"


def _cost(units: int) -> str:
    """``units`` of 10^-7 USD (a bid per 1,000 impressions has 4 decimals) as a decimal,
    exactly, with at least 4 places."""
    text = _decimal(units, 7)
    return text[: len(text) - min(3, len(text) - len(text.rstrip("0")))]


def _write_payouts(path: Path, campaigns: Mapping[int, Campaign]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(PAYOUT_COLUMNS)
        for cid, camp in campaigns.items():
            # every campaign's own row (blank country): what a conversion earns on average,
            # the payout of its sources and subIds; then each country's, a per-GEO offer's
            out.writerow((cid, "", _decimal(round(camp.payout * 100), 2)))
            if COUNTRY in camp.levels:
                for country, cents in zip(camp.levels[COUNTRY].keys, camp.payouts, strict=True):
                    out.writerow((cid, country, _decimal(cents, 2)))


__all__ = [
    "COLUMNS",
    "DELAY",
    "END",
    "FRESH",
    "PAYOUTS",
    "PAYOUT_COLUMNS",
    "TRUTH_COLUMNS",
    "account_bids",
    "account_items",
    "generate_stats",
]
