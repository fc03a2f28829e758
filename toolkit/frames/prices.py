"""Account balance and bid price estimates.

>>> balance_frame({"user_id": 1001, "currency": "USD", "balance": 4633.1})
   user_id currency  balance
0     1001      USD   4633.1
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .. import spec
from ..client import Client
from .fetch import fetch_each, pool_workers
from .schemas import frame, records_frame


def balance_frame(answer: Mapping[str, Any]) -> pd.DataFrame:
    """Frame ``balance``: one row (``user_id``, ``currency``, ``balance``)."""
    return records_frame("balance", [answer])


def load_balance(client: Client) -> pd.DataFrame:
    """Frame ``balance`` of the account (one request).

    >>> load_balance(client)                                              # doctest: +SKIP
       user_id currency  balance
    0     1001      USD   4633.1
    """
    return balance_frame(client.account.balance())


def prices_frame(
    ad_format: str, answers: Sequence[Mapping[str, Any]], countries: Sequence[str | None]
) -> pd.DataFrame:
    """Frame ``prices`` from price answers (``{minimum: {...}, recommend: {...}}``)."""

    def part(answer: Mapping[str, Any], level: str, field: str) -> Any:
        return (answer.get(level) or {}).get(field)

    return frame(
        "prices",
        {
            "ad_format": [ad_format] * len(answers),
            "country": list(countries),
            "minimum_price": [part(a, "minimum", "price") for a in answers],
            "minimum_traffic": [part(a, "minimum", "estimated_traffic") for a in answers],
            "recommend_price": [part(a, "recommend", "price") for a in answers],
            "recommend_traffic": [part(a, "recommend", "estimated_traffic") for a in answers],
        },
    )


def load_prices(
    client: Client,
    ad_format: str,
    countries: Sequence[str] | None = None,
    *,
    workers: int = 8,
    progress: bool = False,
    **targeting: Sequence[Any],
) -> pd.DataFrame:
    """Frame ``prices``: minimum and recommended bid with estimated traffic.

    Without ``countries``: one row for the targeting given (``country=[...]`` may be part of
    it; ``country`` is set when it names exactly one). With ``countries``: one estimate per
    country (one request each, ``workers`` at a time), the rest of ``targeting`` shared.
    ``targeting`` takes the price parameters (``quality``, ``category``, ``os``, ``subsAge``,
    ...), as :meth:`client.account.price` does.

    >>> load_prices(client, "push", ["US", "DE"], quality=["high"])       # doctest: +SKIP
      ad_format country  minimum_price  minimum_traffic  recommend_price  recommend_traffic
    """
    if ad_format not in spec.FORMATS:
        raise ValueError(f"ad_format must be one of {', '.join(spec.FORMATS)}, got {ad_format!r}")
    param = spec.bid_kind().price_param or spec.bid_kind().name
    if countries is None:
        answer = client.account.price(ad_format, **targeting)
        given = list(targeting.get(param) or [])
        return prices_frame(ad_format, [answer], [given[0] if len(given) == 1 else None])
    if param in targeting:
        raise ValueError(f"give countries either as the countries argument or as {param}=")
    codes = list(dict.fromkeys(countries))
    answers = fetch_each(
        lambda code: client.account.price(ad_format, **{param: [code]}, **targeting),
        codes,
        workers=pool_workers(client, workers),
        progress=progress,
        desc="Prices",
        unit="country",
    )
    return prices_frame(ad_format, answers, codes)


__all__ = ["balance_frame", "load_balance", "load_prices", "prices_frame"]
