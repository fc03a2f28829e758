"""The ``why`` of a decision: the numbers its rule's condition names, then :data:`SHOWN`, and
the payout mix where one was used.

>>> import pandas as pd
>>> from toolkit.rules.model import load_rules
>>> rule = load_rules([{"level": "subid", "when": "cost > 5", "action": "blacklist"}])[0]
>>> rows = pd.DataFrame({"cost": [7.5], "p_loss": [0.91234], "clicks": [300.0],
...                      "conversions": [0.0]})
>>> why_words(rows, rule)
['cost 7.50, p_loss 0.9123, clicks 300, conversions 0']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .model import Rule

#: The numbers every decision's ``why`` shows after the ones its condition names.
SHOWN = ("p_loss", "clicks", "cost", "conversions")


def why_words(rows: pd.DataFrame, rule: Rule) -> list[str]:
    """Per row, its ``why``: ``metric value`` for each metric of the condition and of
    :data:`SHOWN`, then the payout mix (``payout_mix``) where a row has one."""
    names = list(dict.fromkeys([*(c.metric for c in rule.when), *SHOWN]))
    columns = [rows[m].to_numpy(dtype=float) for m in names]
    words = [
        ", ".join(f"{m} {shown(m, v)}" for m, v in zip(names, values, strict=True))
        for values in zip(*columns, strict=True)
    ]
    mix = rows["payout_mix"].fillna("") if "payout_mix" in rows else [""] * len(rows)
    return [f"{w}, {x}" if x else w for w, x in zip(words, mix, strict=True)]


def shown(metric: str, value: float) -> str:
    """``value`` as a ``why`` shows a ``metric``: money with 2 decimals, probabilities with 4."""
    if np.isnan(value):
        return "n/a"
    if metric in ("cost", "revenue", "profit", "cpa", "epc", "cpc"):
        return f"{value:.2f}"
    if metric in ("p_loss", "p_win", "p_zero", "p_loss_daily"):
        return f"{value:.4f}"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


__all__ = ["SHOWN", "shown", "why_words"]
