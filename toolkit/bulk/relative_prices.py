"""The service's prices of the bids written ``min``, ``rec``, ``min+10%``, ``rec-5%``.

Each such bid is asked for its campaign and country with the campaign's live targeting: the
query of the bid report (:func:`toolkit.frames.price_queries.build_query`), identical queries
asked once, and only for the rows that use ``min`` or ``rec``. A price is per click for push
and in-page, per 1,000 impressions for popunders and video
(:data:`~toolkit.frames.price_queries.PRICE_UNITS`): a campaign that buys in the other unit
cannot take it as a bid, and its row is refused rather than converted with a guessed
click-through rate. A price that cannot be read refuses the plan (nothing is sent), naming
the rows.

>>> fill_prices(client, tables, cells, live)                           # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

from .. import spec
from ..errors import WorkbookError, WorkbookProblem
from ..frames.price_queries import (
    PRICE_UNITS,
    Answer,
    Query,
    ask_all,
    build_query,
    campaign_targeting,
)
from .call_kinds import codes_of
from .relative_bids import BidCell, settle

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..frames import Account


def ask_prices(
    client: Client, cells: Iterable[BidCell], live: Account
) -> tuple[dict[BidCell, Answer], list[WorkbookProblem]]:
    """The price answer of each ``min``/``rec`` cell (asked once per distinct query), and
    the problems of the cells whose campaign cannot take a price as its bid."""
    cells = [c for c in cells if c.form.needs_price]
    if not cells:
        return {}, []
    campaigns = live.table("campaigns")
    formats = _column(campaigns, "ad_format")
    modes = _column(campaigns, "mode")
    targeting = campaign_targeting(live.targets)
    codes = codes_of(live.refs)
    queries: dict[BidCell, Query] = {}
    problems: list[WorkbookProblem] = []
    for cell in cells:
        why = _unpriced(cell, formats.get(cell.campaign_id), modes.get(cell.campaign_id))
        if why:
            problems.append(cell.problem(why))
            continue
        fmt = formats[cell.campaign_id]
        queries[cell] = build_query(fmt, targeting.get(cell.campaign_id, {}), cell.key, codes)
    answers = ask_all(client, list(queries.values()), progress=False) if queries else {}
    return {cell: answers[q.key] for cell, q in queries.items()}, problems


def unpriced(cells: Iterable[BidCell], live: Account) -> list[WorkbookProblem]:
    """The problems of the ``min``/``rec`` cells whose campaign cannot take the service's
    price as its bid (not in the account, a format without prices, another unit): known
    from the live account, before any price is asked."""
    campaigns = live.table("campaigns")
    formats, modes = _column(campaigns, "ad_format"), _column(campaigns, "mode")
    problems = []
    for cell in cells:
        if cell.form.needs_price:
            why = _unpriced(cell, formats.get(cell.campaign_id), modes.get(cell.campaign_id))
            if why:
                problems.append(cell.problem(why))
    return problems


def _unpriced(cell: BidCell, fmt: str | None, mode: str | None) -> str | None:
    """Why the service's price cannot be the bid of the cell's campaign, or None."""
    if fmt is None:
        return f"campaign {cell.campaign_id} is not in the live account"
    unit = PRICE_UNITS.get(fmt)
    if unit is None:
        return f"campaign {cell.campaign_id}: no price for {fmt} campaigns"
    if mode is not None and mode != unit:
        return (
            f"campaign {cell.campaign_id} buys {mode} and the service prices {fmt} {unit}:"
            f" {cell.form.base} would mix units; write the bid as a number"
        )
    return None


def _column(campaigns: pd.DataFrame, name: str) -> dict[int, str]:
    if campaigns is None or campaigns.empty or name not in campaigns:
        return {}
    return {
        int(i): str(v)
        for i, v in zip(campaigns["id"], campaigns[name].astype(object), strict=True)
        if v is not None and not pd.isna(v)
    }


def priced_bids(
    client: Client, cells: Sequence[BidCell], live: Account, path: str | None = None
) -> dict[BidCell, float]:
    """The new bid of each ``min``/``rec`` cell; one :class:`~toolkit.errors.WorkbookError`
    naming every cell that has none (a price not read, a unit that does not match, a bid
    below the minimum or over the highest bid)."""
    answers, problems = ask_prices(client, cells, live)
    bids: dict[BidCell, float] = {}
    for cell, answer in answers.items():
        new = settle(cell, None, answer)
        if isinstance(new, str):
            problems.append(cell.problem(new))
        else:
            bids[cell] = new
    if problems:
        raise WorkbookError(sorted(problems, key=lambda p: (p.sheet, p.row or 0)), path)
    return bids


def fill_prices(
    client: Client,
    tables: Mapping[str, pd.DataFrame],
    cells: Sequence[BidCell],
    live: Account,
    path: str | None = None,
) -> dict[str, pd.DataFrame]:
    """``tables`` with the bids of the ``min``/``rec`` cells set from the service's prices
    (the countries table copied when it changes)."""
    bids = priced_bids(client, cells, live, path)
    out = dict(tables)
    df = out.get("countries")
    if not bids or df is None:
        return out
    df = df.copy()
    code = spec.bid_kind().column
    where = {
        (int(c), str(k)): i
        for i, c, k in zip(df.index, df["campaign_id"], df[code], strict=True)
        if not (pd.isna(c) or pd.isna(k))
    }
    for cell, bid in bids.items():
        at = where.get((cell.campaign_id, cell.key))
        if at is not None:
            df.loc[at, "bid"] = bid
    out["countries"] = df
    return out


__all__ = ["ask_prices", "fill_prices", "priced_bids", "unpriced"]
