"""Tracker-style statistics for the demo account, with the truth behind them.

:func:`generate_stats` writes a CSV export in the generic layout of ``toolkit.stats``
(``date, campaign_id, level, key, impressions, clicks, cost, conversions, revenue``) for the
sources, subIds and countries an account's campaigns get traffic from in the sandbox store
(whitelisted items, or new items on none of their lists; the subIds of their bid rules; their
countries; never a blacklisted item), and returns the truth it
drew them from: one row per item with its true conversion rate and the campaign's payout, so
that a rule's decisions can be scored (precision, recall) against what was really there.

Everything follows from ``seed``: the same store and seed give the same file, byte for byte.
The standard library only (no pandas), as the rest of the sandbox.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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
#: The columns of the truth table returned.
TRUTH_COLUMNS = ("campaign_id", "level", "key", "true_cr", "payout")

#: The last day of the statistics when ``end`` is not given (fixed, so files repeat).
END = dt.date(2026, 1, 31)


#: New sources and subIds a campaign without a whitelist buys from, per level.
FRESH = 40


def account_items(
    store: Store, user_id: int | None = None, *, fresh: int = FRESH, seed: int = 0
) -> list[dict[str, Any]]:
    """``{campaign_id, level, key}`` of every item an account's campaigns (the demo account,
    the lowest user id, when ``user_id`` is None) get traffic from, sorted: per campaign and
    level (source, subId) its whitelist when it has one, else ``fresh`` items on none of its
    lists (drawn from ``seed``); the subIds of its bid rules; its countries. Blacklisted items
    get no traffic and are left out."""
    with store.lock:
        db = store.conn
        if user_id is None:
            user_id = db.execute("SELECT min(user_id) FROM accounts").fetchone()[0]
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
    whitelisting = {(c, lv) for c, lv, colour, _ in listed if colour == "white"}
    taken = {(c, lv, k) for c, lv, _, k in listed}
    for cid in sorted(int(i) for i in ids):
        rng = random.Random(f"{seed}:{cid}")
        for level, make in (("source", _source_id), ("subid", _subid)):
            if (cid, level) in whitelisting:
                continue
            new = {(cid, level, make(rng)) for _ in range(fresh)}
            items |= new - taken
    return [{"campaign_id": c, "level": lv, "key": k} for c, lv, k in sorted(items)]


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
) -> list[dict[str, Any]]:
    """Write ``days`` days of daily statistics (ending on ``end``) to the CSV file ``path``
    and return the truth table (``TRUTH_COLUMNS``, one dict per item).

    ``store_or_items``: the sandbox :class:`Store` (its account ``user_id``, the demo account
    by default; the items :func:`account_items` lists) or rows ``{campaign_id, level, key}``.
    Per campaign a payout and a base conversion rate are drawn; per item a true rate around
    it (a quarter of the items convert at a fraction of it, some at several times it) and a
    traffic volume. Each day's clicks are
    Poisson around the volume, conversions Binomial(clicks, true rate), cost clicks times a
    CPC, revenue conversions times the payout.
    """
    if days < 1:
        raise ValueError(f"days must be >= 1, got {days}")
    items = (
        account_items(store_or_items, user_id, seed=seed)
        if isinstance(store_or_items, Store)
        else [dict(r) for r in store_or_items]
    )
    rng = random.Random(seed)
    campaigns: dict[int, tuple[float, float, float]] = {}
    truth, plans = [], []
    for item in items:
        cid = int(item["campaign_id"])
        if cid not in campaigns:  # payout, base rate, cpc
            campaigns[cid] = (
                round(rng.uniform(1.0, 20.0), 2),
                rng.uniform(0.002, 0.03),
                round(rng.uniform(0.005, 0.08), 4),
            )
        payout, base, cpc = campaigns[cid]
        true_cr = base * _multiplier(rng)
        clicks_a_day = rng.lognormvariate(math.log(60), 1.0)
        truth.append(
            {
                "campaign_id": cid,
                "level": item["level"],
                "key": str(item["key"]),
                "true_cr": true_cr,
                "payout": payout,
            }
        )
        plans.append((cid, item["level"], str(item["key"]), true_cr, clicks_a_day, cpc, payout))
    _write(Path(path), plans, rng, days, end)
    return truth


def _multiplier(rng: random.Random) -> float:
    r = rng.random()
    if r < 0.25:
        return rng.uniform(0.0, 0.4)  # losers
    if r < 0.85:
        return rng.uniform(0.6, 1.6)
    return rng.uniform(2.0, 4.0)  # winners


def _write(
    path: Path, plans: list[tuple[Any, ...]], rng: random.Random, days: int, end: dt.date
) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for d in range(days):
            day = (end - dt.timedelta(days=days - 1 - d)).isoformat()
            for cid, level, key, cr, volume, cpc, payout in plans:
                clicks = _poisson(rng, volume)
                impressions = clicks * rng.randint(20, 80)
                conversions = _binomial(rng, clicks, cr)
                out.writerow(
                    (
                        day,
                        cid,
                        level,
                        key,
                        impressions,
                        clicks,
                        f"{clicks * cpc:.4f}",
                        conversions,
                        f"{conversions * payout:.2f}",
                    )
                )


def _poisson(rng: random.Random, lam: float) -> int:
    if lam > 30:
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _binomial(rng: random.Random, n: int, p: float) -> int:
    if n * p > 30:
        return min(n, max(0, round(rng.gauss(n * p, math.sqrt(n * p * (1 - p))))))
    if n < 200:
        return sum(rng.random() < p for _ in range(n))
    return min(n, _poisson(rng, n * p))


__all__ = ["COLUMNS", "END", "FRESH", "TRUTH_COLUMNS", "account_items", "generate_stats"]
