"""Price queries from a campaign's targeting: built per campaign x country, asked once each.

A query is the format and, for every target kind that has a price parameter
(``kind.price_param`` in :mod:`toolkit.spec`) and that the format allows (``kind.formats``:
subscription age only for push), the campaign's values of that kind as the price operation
takes them (ids as integers, kinds sent as codes as their codes, ``kind.codes``), plus the
row's country. Two rows with the same format and the same parameters (compared sorted) share
one query, so an account whose campaigns repeat their targeting asks few prices.

Queries run on a bounded pool (:func:`toolkit.frames.fetch.fetch_each`, capped at the
client's connection pool) with a progress bar. A failing query (after the client's retries)
is kept as its error message, so the rest stands; an unusable api-key
(:class:`~toolkit.errors.AuthError`) is raised. The bid report and the relative bids of
workbooks (``min``, ``rec``) ask the same queries.

The interface does not say what unit the price operation answers in; the sandbox's model
(and this toolkit) take the price as per click (``CPC``) for push and in-page, per 1,000
impressions (``CPM``) for popunders and video (:data:`PRICE_UNITS`).

>>> q = Query("push", (("quality", ("high",)), ("country", ("US",))))
>>> q.key
'push {"country": ["US"], "quality": ["high"]}'
>>> PRICE_UNITS["pops"]
'CPM'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import spec
from ..errors import AuthError, ToolkitError
from .fetch import fetch_each, pool_workers

Params = tuple[tuple[str, tuple[Any, ...]], ...]

#: The unit of the price operation's prices, per format (``CPC``: per click; ``CPM``: per
#: 1,000 impressions).
CPM, CPC = spec.MODES
PRICE_UNITS: dict[str, str] = {"push": CPC, "inpage": CPC, "pops": CPM, "video": CPM}


@dataclass(frozen=True)
class Query:
    """One price query: a format and its parameters (name -> values)."""

    ad_format: str
    params: Params
    problem: str | None = None  # why the query cannot be asked (nothing is sent)

    @property
    def key(self) -> str:
        """The format and the parameters, sorted: equal queries have equal keys."""
        body = {name: sorted(str(v) for v in values) for name, values in sorted(self.params)}
        return f"{self.ad_format} {json.dumps(body, sort_keys=True)}"

    def without(self, name: str) -> Query:
        """The query with the parameter ``name`` left out."""
        return Query(self.ad_format, tuple(p for p in self.params if p[0] != name), self.problem)

    def targeting(self) -> dict[str, list[Any]]:
        return {name: list(values) for name, values in self.params}


@dataclass(frozen=True)
class Answer:
    """The answer to one query: prices and traffics, or an error; when it was asked."""

    minimum: float | None = None
    recommended: float | None = None
    minimum_traffic: int | None = None
    recommended_traffic: int | None = None
    asked_at: pd.Timestamp | None = None
    error: str | None = None

    @classmethod
    def of(cls, price: Mapping[str, Any], asked_at: pd.Timestamp) -> Answer:
        low, high = price.get("minimum") or {}, price.get("recommend") or {}
        return cls(
            _number(low.get("price")),
            _number(high.get("price")),
            _whole(low.get("estimated_traffic")),
            _whole(high.get("estimated_traffic")),
            asked_at,
        )


def price_kinds(ad_format: str) -> list[spec.TargetKind]:
    """The kinds of a format's price query, the bid kind (``country``) left out."""
    return [
        k
        for k in spec.TARGET_KINDS.values()
        if k.price_param and not k.bids and k.allowed_for(ad_format)
    ]


def campaign_targeting(targets: pd.DataFrame) -> dict[int, dict[str, list[str]]]:
    """Campaign id -> kind column -> values (as the ``targets`` table shows them)."""
    out: dict[int, dict[str, list[str]]] = {}
    if targets is None or targets.empty:
        return out
    cids = targets["campaign_id"].astype("int64").tolist()
    kinds = targets["kind"].astype(str).tolist()
    values = targets["value"].astype(str).tolist()
    for cid, kind, value in zip(cids, kinds, values, strict=True):
        out.setdefault(cid, {}).setdefault(kind, []).append(value)
    return out


def build_query(
    ad_format: str,
    targeting: Mapping[str, Sequence[str]],
    country: str,
    codes: Mapping[str, Mapping[str, str]],
) -> Query:
    """The price query of one campaign (its format and targeting) in one country."""
    params: list[tuple[str, tuple[Any, ...]]] = []
    problems: list[str] = []
    for kind in price_kinds(ad_format):
        shown = targeting.get(kind.column) or []
        sent: list[Any] = []
        for value in shown:
            item = _sent(kind, value, codes)
            if item is None:
                problems.append(f"{kind.name} {value}: no code to send it as")
            else:
                sent.append(item)
        if sent:
            params.append((kind.price_param or kind.name, tuple(sorted(set(sent), key=str))))
    bids = spec.bid_kind()
    params.append((bids.price_param or bids.name, (country,)))
    return Query(ad_format, tuple(params), "; ".join(problems) or None)


def _sent(kind: spec.TargetKind, value: str, codes: Mapping[str, Mapping[str, str]]) -> Any:
    if kind.sent_as_code:
        return codes.get(kind.name, {}).get(str(value))
    if kind.item_type is int:
        try:
            return int(value)
        except ValueError:
            return None
    return value


def ask(client: Any, query: Query) -> Answer:
    """One price call; a failure (other than a refused key) becomes the answer's error."""
    if query.problem:
        return Answer(error=query.problem, asked_at=pd.Timestamp.now(tz="UTC"))
    try:
        price = client.account.price(query.ad_format, **query.targeting())
    except AuthError:
        raise
    except ToolkitError as exc:
        return Answer(error=f"{type(exc).__name__}: {exc}", asked_at=pd.Timestamp.now(tz="UTC"))
    return Answer.of(price, pd.Timestamp.now(tz="UTC"))


def ask_all(
    client: Any,
    queries: Sequence[Query],
    *,
    workers: int = 8,
    progress: bool = True,
    desc: str = "Prices",
) -> dict[str, Answer]:
    """Query key -> answer, each distinct query asked once, ``workers`` at a time."""
    unique = list({q.key: q for q in queries}.values())
    answers = fetch_each(
        lambda q: ask(client, q),
        unique,
        workers=pool_workers(client, workers),
        progress=progress,
        desc=desc,
        unit="query",
    )
    return {q.key: a for q, a in zip(unique, answers, strict=True)}


def _number(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _whole(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


__all__ = [
    "PRICE_UNITS",
    "Answer",
    "Query",
    "ask",
    "ask_all",
    "build_query",
    "campaign_targeting",
    "price_kinds",
]
