"""The changes of planned decisions, named as the plan's edits and outcomes name them: the
reasons the plan's preview shows beside each change, and what became of each decision when
its plan was applied (:func:`with_outcomes`).

>>> list_name("subid", "black")
'subid_black'
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import spec
from ..bulk.calls import CAMPAIGN
from ..bulk.result_book import worst_of

if TYPE_CHECKING:  # pragma: no cover
    from ..bulk.outcomes import ApplyResult

#: The status of a decision in the plan.
PLANNED = "planned"


def list_name(level: str, colour: str) -> str:
    """The list of ``level`` items (``source``/``subid``) of a colour (``black``/``white``)."""
    return next(
        lk.name for lk in spec.LISTS.values() if lk.entity == level and lk.list_type == colour
    )


def _changes(decisions: pd.DataFrame) -> list[tuple[Any, list[tuple[int, str, str]]]]:
    """Per planned decision (its row), the ``(campaign_id, target, key)`` of the changes it
    may make, as the plan's edits and outcomes name them: a list change may also drop the
    item from the other list of its level; a campaign's move has the key ``""``."""
    out = []
    for row in decisions[decisions["status"] == PLANNED].itertuples():
        cid, target = int(row.campaign_id), str(row.target)
        key = "" if target == CAMPAIGN else str(row.key)
        names = [target]
        if target in spec.LISTS:
            names += [list_name(str(row.level), c) for c in ("black", "white")]
        out.append((row, [(cid, n, key) for n in dict.fromkeys(names)]))
    return out


def reasons(decisions: pd.DataFrame) -> dict[tuple[int, str, str], str]:
    """``(campaign_id, target, key) -> "rule: why"`` of the planned decisions, as the plan
    preview looks them up (a campaign's move has the key ``""``)."""
    out: dict[tuple[int, str, str], str] = {}
    for row, keys in _changes(decisions):
        for key in keys:
            out.setdefault(key, f"{row.rule}: {row.why}")
    return out


def with_outcomes(decisions: pd.DataFrame, result: ApplyResult) -> pd.DataFrame:
    """The decisions with what became of each planned one when its plan was applied:
    ``outcome`` (the worst outcome of its changes: ``applied``, ``already``, ``failed``,
    ``unknown``, ``restored``, ``lost``; missing for a decision not planned or not sent)
    and ``message`` (the service's words, when it refused).

    >>> result = plan.apply(client)                                     # doctest: +SKIP
    >>> with_outcomes(decisions, result).outcome.value_counts()         # doctest: +SKIP
    """
    found: dict[tuple[int, str, str], list[tuple[str, str | None]]] = defaultdict(list)
    for r in result.to_frame().itertuples(index=False):
        key = "" if r.target == CAMPAIGN or r.item is None else str(r.item)
        message = None if pd.isna(r.message) else str(r.message)
        found[(int(r.campaign_id), str(r.target), key)].append((str(r.outcome), message))
    out = decisions.copy()
    out["outcome"] = pd.Series(pd.NA, index=out.index, dtype="string")
    out["message"] = pd.Series(pd.NA, index=out.index, dtype="string")
    for row, keys in _changes(decisions):
        pairs = [p for k in keys for p in found.get(k, [])]
        if pairs:
            out.loc[row.Index, ["outcome", "message"]] = worst_of(pairs)
    return out


__all__ = ["PLANNED", "list_name", "reasons", "with_outcomes"]
