"""Bid rules (micro-bidding) and CPA auto-rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import checks
from .base import Resource


class BidRules(Resource):
    """``client.bid_rules``.

    >>> client.bid_rules.add(cid, ["123456", "ab12cd"], bid=0.07)        # doctest: +SKIP
    >>> client.bid_rules.list(cid)                                       # doctest: +SKIP
    [{'items': ['123456', 'ab12cd'], 'bid': 0.07}]
    """

    def list(self, campaign_id: int) -> list[dict[str, Any]]:
        return self._call("bid_rule.list", {"id": int(campaign_id)})["rules"]

    def add(self, campaign_id: int, items: Sequence[Any], bid: float) -> dict[str, Any]:
        """One rule: ``bid`` for these source ids and subIds (each in at most one rule)."""
        values = checks.rule_items(items)
        checks.raise_if(checks.number("bid", bid))
        return self._call("bid_rule.add", {"id": int(campaign_id), "items": values, "bid": bid})

    def drop(
        self, campaign_id: int, items: Sequence[Any], *, check_exist: bool = True
    ) -> dict[str, Any]:
        values = checks.rule_items(items)
        params = {
            "id": int(campaign_id),
            "items": values,
            "checkExist": None if check_exist else "skip",
        }
        return self._call("bid_rule.drop", params)


class CpaRules(Resource):
    """``client.cpa_rules``.

    >>> rule = {"type": "sum", "cond": "greater", "amount": 5,
    ...         "lead_type": "lead", "lead_cond": "less", "lead_amount": 1}
    >>> client.cpa_rules.add(cid, [rule])                                # doctest: +SKIP
    >>> client.cpa_rules.edit(cid, [{"id": 90001, "amount": 7}])         # doctest: +SKIP
    """

    def list(self, campaign_id: int) -> list[dict[str, Any]]:
        return self._call("cpa_rule.list", {"id": int(campaign_id)})["rules"]

    def add(self, campaign_id: int, rules: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Add rules (all six fields each). Not retried once sent: a repeat would duplicate."""
        problems: list[str] = [] if rules else ["rules must not be empty"]
        for i, rule in enumerate(rules):
            problems += checks.cpa_rule(rule, f"rules[{i}]", full=True)
            if "id" in rule:
                problems.append(f"rules[{i}]: a new rule has no id (use edit)")
        checks.raise_if(problems)
        params = {"id": int(campaign_id), "mode": "add", "items": [dict(r) for r in rules]}
        return self._call("cpa_rule.add", params, safe=False)

    def edit(self, campaign_id: int, rules: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Change rules: each has its ``id`` and only the fields to change."""
        problems: list[str] = [] if rules else ["rules must not be empty"]
        for i, rule in enumerate(rules):
            if "id" not in rule:
                problems.append(f"rules[{i}]: 'id' is required to edit a rule")
            problems += checks.cpa_rule(rule, f"rules[{i}]", full=False)
        checks.raise_if(problems)
        params = {"id": int(campaign_id), "mode": "edit", "items": [dict(r) for r in rules]}
        return self._call("cpa_rule.add", params)

    def drop(
        self, campaign_id: int, rule_ids: Sequence[int], *, check_exist: bool = True
    ) -> dict[str, Any]:
        ids = [int(i) for i in rule_ids]
        checks.raise_if([] if ids else ["rule_ids must not be empty"])
        params = {
            "id": int(campaign_id),
            "items": ids,
            "checkExist": None if check_exist else "skip",
        }
        return self._call("cpa_rule.drop", params)
