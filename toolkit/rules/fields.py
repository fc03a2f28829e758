"""The fields a rule may have, in the order a rule is written (see :mod:`toolkit.rules.model`);
read by the rules' checks and by the rules sheet's columns.

>>> FIELDS[:4]
('name', 'level', 'of', 'when')
"""

from __future__ import annotations

FIELDS: tuple[str, ...] = (
    "name",
    "level",
    "of",
    "when",
    "action",
    "scope",
    "window",
    "cooldown",
    "limit",
    "bid",
    "factor",
    "payout",
    "delay",
    "confirm",
    "rank",
    "enabled",
)


__all__ = ["FIELDS"]
