"""Sensitivity of a row's price to its targeting: the price asked again with one targeting
dimension (one price parameter) left out at a time.

Each dimension is one more price call per row (fewer when rows share queries); the calls are
counted before any is made (:func:`plan_queries`), so the caller can say what it will cost.

The frame has one row per report row and dimension, the first with nothing dropped
(``dropped`` is ``<NA>``): ``campaign_id``, ``country``, ``dropped`` (the kind's name),
``query``, ``minimum``, ``recommended`` (in the format's price unit), ``minimum_traffic``,
``recommended_traffic``, ``minimum_change_pct`` and ``traffic_change_pct`` (against the full
targeting; a wider targeting usually costs less and reaches more), ``error``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from .. import spec
from ..frames.schemas import FLOAT, INT, STRING
from .frame import geo
from .queries import Answer, Query


def _kind_of_param(name: str) -> spec.TargetKind | None:
    return next((k for k in spec.TARGET_KINDS.values() if k.price_param == name), None)


def variants(query: Query) -> list[tuple[str | None, Query]]:
    """``(dropped kind, query)``: the full query, then one per dimension left out (the bid
    kind, ``country``, is never dropped)."""
    out: list[tuple[str | None, Query]] = [(None, query)]
    for name, _values in query.params:
        kind = _kind_of_param(name)
        if kind is None or kind.bids:
            continue
        out.append((kind.name, query.without(name)))
    return out


def plan_queries(
    rows: Iterable[tuple[int, str, Query]], asked: Iterable[str]
) -> tuple[list[tuple[int, str, str | None, Query]], list[Query]]:
    """Every (campaign, country, dropped, query) and the distinct queries not yet asked:
    their number is the count of extra price calls."""
    seen = set(asked)
    planned, new = [], []
    for cid, country, query in rows:
        for dropped, variant in variants(query):
            planned.append((cid, country, dropped, variant))
            if variant.key not in seen and not variant.problem:
                seen.add(variant.key)
                new.append(variant)
    return planned, new


def frame(
    planned: Sequence[tuple[int, str, str | None, Query]], answers: Mapping[str, Answer]
) -> pd.DataFrame:
    """The sensitivity frame of the planned variants (see the module's text)."""
    records = []
    base: dict[tuple[int, str], Answer] = {}
    for cid, country, dropped, query in planned:
        a = answers.get(query.key) or Answer(error="not asked")
        if dropped is None:
            base[(cid, country)] = a
        full = base.get((cid, country)) or Answer()
        records.append(
            {
                "campaign_id": cid,
                geo(): country,
                "dropped": dropped,
                "query": query.key,
                "minimum": a.minimum,
                "recommended": a.recommended,
                "minimum_traffic": a.minimum_traffic,
                "recommended_traffic": a.recommended_traffic,
                "minimum_change_pct": _pct(a.minimum, full.minimum),
                "traffic_change_pct": _pct(a.minimum_traffic, full.minimum_traffic),
                "error": a.error,
            }
        )
    df = pd.DataFrame.from_records(records, columns=_columns())
    return df.astype(
        {
            "campaign_id": INT,
            geo(): STRING,
            "dropped": STRING,
            "query": STRING,
            "minimum": FLOAT,
            "recommended": FLOAT,
            "minimum_traffic": INT,
            "recommended_traffic": INT,
            "minimum_change_pct": FLOAT,
            "traffic_change_pct": FLOAT,
            "error": STRING,
        }
    )


def _columns() -> list[str]:
    return [
        "campaign_id",
        geo(),
        "dropped",
        "query",
        "minimum",
        "recommended",
        "minimum_traffic",
        "recommended_traffic",
        "minimum_change_pct",
        "traffic_change_pct",
        "error",
    ]


def _pct(value: float | None, full: float | None) -> float | None:
    if value is None or full is None or not full:
        return None
    return (value / full - 1.0) * 100.0


__all__ = ["frame", "plan_queries", "variants"]
