"""A rule's probability clauses confirmed on the days before the last one.

A rule run every day looks at the same items again and again, and an item close to
break-even gets a chance to cross ``p_loss >= 0.99`` on each look. A rule's ``confirm: 2``
(default 1, :data:`toolkit.rules.model.CONFIRM`) asks its probability clauses
(``p_loss``, ``p_win``: :data:`~toolkit.rules.model.CONFIRMED_METRICS`) to hold on the
evidence of each of the ``confirm - 1`` days before as well: the same window, ending a day
(two days...) earlier, as a daily run would have seen it. A crossing that is noise rarely
holds twice in a row; a loser's does. The other clauses (``clicks >= 200``) are the last
day's only, so an item is not held back a day for its traffic. An item whose condition
holds on the last day but not on the days before is ``not confirmed`` (:data:`UNCONFIRMED`,
never planned), its ``why`` saying what the days before showed: statistics of one day
confirm nothing (``confirm: 1`` acts on one day's evidence).

Measured by replaying daily looks on the demo statistics (docs/rules.md, "Daily looks"):
the prior's own uncertainty (:mod:`toolkit.rules.evidence`) did most of what was to be
done; ``confirm: 2`` then stops fewer winners, a day later, for a few points of recall and
4 to 6 % of net, and the share at ``p_loss >= 0.99`` stays as far from its promise, so it
is a choice, not the default.

>>> import pandas as pd
>>> from toolkit.rules.decide import decide
>>> days = pd.to_datetime(["2026-01-30", "2026-01-31"], utc=True)
>>> stats = pd.DataFrame({"date": days.repeat(4), "campaign_id": 7, "level": "subid",
...     "key": ["a", "b", "c", "d"] * 2, "impressions": 0,
...     "clicks": [400, 400, 400, 10, 400, 400, 400, 600],
...     "cost": [4.0, 4.0, 4.0, 0.4, 4.0, 4.0, 4.0, 24.0],
...     "conversions": [8, 9, 8, 0, 8, 9, 8, 0], "revenue": [16.0, 18.0, 16.0, 0.0] * 2})
>>> rule = {"level": "subid", "when": "p_loss >= 0.9", "action": "blacklist", "confirm": 2}
>>> made = decide([rule], stats)                # d: 10 clicks the day before
>>> made[["key", "status"]].to_dict("records")
[{'key': 'd', 'status': 'not confirmed'}]
>>> made["why"].iloc[0]     # doctest: +ELLIPSIS
'p_loss 0.9999, clicks 610, cost 24.40, conversions 0; the day before: p_loss 0.5371: a rule...'
>>> decide([{**rule, "confirm": 1}], stats)[["key", "why"]].to_dict("records")  # the default
[{'key': 'd', 'why': 'p_loss 0.9999, clicks 610, cost 24.40, conversions 0'}]
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import numpy as np
import pandas as pd

from .model import CONFIRMED_METRICS, Clause, Rule

_ITEM = ["campaign_id", "level", "key"]
#: The status of an item whose probability clauses did not hold on the days before.
UNCONFIRMED = "not confirmed"
#: What an unconfirmed decision's ``why`` adds.
HOW_TO_ACT = "a rule acts when its probability holds on consecutive days (confirm: 1 acts on one)"


def confirming(rule: Rule) -> list[Clause]:
    """The clauses of ``rule`` its ``confirm`` asks to hold on the days before (none when
    ``confirm`` is 1)."""
    if rule.confirm <= 1:
        return []
    return [c for c in rule.when if c.metric in CONFIRMED_METRICS]


def confirmed(
    rule: Rule,
    ev: pd.DataFrame,
    since: dt.date | None,
    end: dt.date | None,
    evidence: Callable[..., pd.DataFrame],
) -> tuple[np.ndarray, list[str]]:
    """Which items of ``ev`` (the evidence of the window ``since`` to ``end``) had the
    rule's probability clauses hold on each of the ``rule.confirm - 1`` days before ``end``
    too (an item without evidence on such a day has not), and per item what those days
    showed (``"; the day before: p_loss 0.9871"``). ``evidence(since, until, end)`` is the
    rule's evidence of the days ``since`` to ``until`` known on ``end``
    (:func:`toolkit.rules.decide.window_evidence`). Statistics without dates have one look
    only: every item is confirmed."""
    clauses = confirming(rule)
    held = np.ones(len(ev), dtype=bool)
    shown: list[list[str]] = [[] for _ in range(len(ev))]
    if not clauses or end is None or ev.empty:
        return held, [""] * len(ev)
    keys = pd.MultiIndex.from_frame(ev[_ITEM])
    for back in range(1, rule.confirm):
        day = end - dt.timedelta(days=back)
        start = None if since is None else since - dt.timedelta(days=back)
        before = evidence(start, day, day)
        for clause in clauses:
            values = _values(before, clause.metric, keys)
            with np.errstate(invalid="ignore"):
                held &= ~np.isnan(values) & clause.holds(pd.DataFrame({clause.metric: values}))
            for i, v in enumerate(values):
                shown[i].append(f"{clause.metric} {'n/a' if np.isnan(v) else f'{v:.4f}'}")
    when = "the day before" if rule.confirm == 2 else f"the {rule.confirm - 1} days before"
    return held, [f"; {when}: {', '.join(parts)}" for parts in shown]


def _values(before: pd.DataFrame | None, metric: str, keys: pd.MultiIndex) -> np.ndarray:
    """``metric`` of the earlier evidence per item of ``keys`` (NaN where it has none)."""
    if before is None or before.empty:
        return np.full(len(keys), np.nan)
    frame = before[[*_ITEM, metric]].set_index(_ITEM)[metric]
    return frame.reindex(keys).to_numpy(dtype=float)


__all__ = ["HOW_TO_ACT", "UNCONFIRMED", "confirmed", "confirming"]
