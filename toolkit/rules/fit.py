"""What of the statistics does not fit the account or the service: items a rule decided on
that the interface does not take, campaigns the account does not have, and rows the reader
skipped.

An item the service would refuse (a subId that is not hexadecimal, a source id that is not a
positive integer, a country key that is no ISO code) is never planned: one such item in a
batch makes the service refuse the whole batch. Its decision gets the status
``not accepted: <the rule it breaks>`` (the words of :mod:`toolkit.client.checks`, the one
check the client runs before sending) and takes no place in the rule's ``limit``.

>>> from toolkit.rules.model import load_rules
>>> rule = load_rules([{"level": "subid", "when": "clicks > 0", "action": "blacklist"}])[0]
>>> not_accepted(rule, pd.Series(["a1b2", "not-hex"])).tolist()
[None, 'not accepted: a subId is 1 to 64 hexadecimal digits']
>>> Fit(campaigns=3, missing=(123, 456)).missing_line().split(";")[0]
'2 campaign(s) of the statistics are not in the account: 123, 456'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from .. import spec
from ..client.checks import refused_item, refused_list_item, refused_rule_item
from ..stats.schema import COUNTRY
from .changes import list_name
from .model import LISTED, Rule
from .payouts import HOW_TO_GIVE, NO_PAYOUT

#: The start of the status of a decision on an item the service does not take.
NOT_ACCEPTED = "not accepted"
#: The campaigns of the statistics a missing-campaigns line names (the rest counted).
SHOWN_CAMPAIGNS = 10


def refused(rule: Rule, key: str) -> str | None:
    """The rule of the interface the item ``key`` of ``rule``'s level breaks as the rule's
    action would send it, or None when the service takes it."""
    if rule.level == COUNTRY:
        return refused_item(spec.bid_kind(), key.strip().upper())
    if rule.level not in LISTED:
        return None  # a campaign: the account's own ids
    why = refused_list_item(spec.LISTS[list_name(rule.level, "black")], key)
    if why is None and rule.action == "bid":
        why = refused_rule_item(key)
    return why


def not_accepted(rule: Rule, keys: pd.Series) -> pd.Series:
    """Per key, the status ``not accepted: <rule>`` of an item the service does not take as
    ``rule`` would send it, None for the others (each distinct key checked once)."""
    seen: dict[str, str | None] = {}
    out = []
    for key in keys.astype(str):
        if key not in seen:
            why = refused(rule, key)
            seen[key] = None if why is None else f"{NOT_ACCEPTED}: {why}"
        out.append(seen[key])
    return pd.Series(out, index=keys.index, dtype=object)


@dataclass(frozen=True)
class Fit:
    """How the statistics met the account and the service: ``campaigns``, how many campaigns
    the rules' windows of the statistics name; ``missing``, those the account does not have;
    ``refused``, per ``not accepted`` status, the items of the decisions that got it;
    ``skipped``, what the statistics reader said it left out, a line each
    (``stats.csv: skipped 1 totals row (line 42)``); ``unpaid``, per rule, how many items
    are ``no payout known``.
    """

    campaigns: int = 0
    missing: tuple[int, ...] = ()
    refused: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    unpaid: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        stats_campaigns: Iterable[int],
        account_campaigns: Iterable[int],
        decisions: pd.DataFrame,
        skipped: Sequence[str] = (),
    ) -> Fit:
        """The fit of the statistics' campaigns to the account's, and of the decided items to
        the service (from the decisions' ``not accepted`` statuses)."""
        named, known = set(map(int, stats_campaigns)), set(map(int, account_campaigns))
        status = decisions["status"].astype(str)
        bad = decisions[status.str.startswith(NOT_ACCEPTED).to_numpy(dtype=bool)]
        refused = {
            str(s): tuple(dict.fromkeys(rows["key"].astype(str)))
            for s, rows in bad.groupby(bad["status"].astype(str), sort=True)
        }
        unpaid = decisions[status.to_numpy() == NO_PAYOUT]["rule"].astype(str).value_counts()
        return cls(
            len(named), tuple(sorted(named - known)), refused, tuple(skipped), unpaid.to_dict()
        )

    @property
    def none_known(self) -> bool:
        """Whether the statistics name campaigns and the account has none of them."""
        return self.campaigns > 0 and len(self.missing) == self.campaigns

    def missing_line(self) -> str | None:
        """The campaigns of the statistics the account does not have, in one line with what
        to do about it; None when the account has them all."""
        n = len(self.missing)
        if not n:
            return None
        shown = ", ".join(map(str, self.missing[:SHOWN_CAMPAIGNS]))
        more = f" and {n - SHOWN_CAMPAIGNS} more" if n > SHOWN_CAMPAIGNS else ""
        if self.none_known:
            head = f"none of the {n} campaign(s) of the statistics is in the account"
        else:
            head = f"{n} campaign(s) of the statistics are not in the account"
        return (
            f"{head}: {shown}{more}; are they the tracker's ids? Name the column with the"
            " network's campaign id (columns=, --column NAME=campaign_id) or give a campaign map"
            " (campaign_map=, --campaign-map FILE)"
        )

    def refused_lines(self) -> list[str]:
        """Per ``not accepted`` status, the items the service does not take, left out of
        the plan (the first few named)."""
        out = []
        for status, keys in self.refused.items():
            shown = ", ".join(repr(k) for k in keys[:3])
            more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
            out.append(
                f"{len(keys)} item(s) left out of the plan, the service does not take them"
                f" ({status.removeprefix(NOT_ACCEPTED + ': ')}): {shown}{more}"
            )
        return out

    def lines(self) -> list[str]:
        """Every line of the fit: skipped rows, missing campaigns, items not accepted."""
        missing = self.missing_line()
        unpaid = [
            f"rule {rule!r}: {n} item(s) with no payout known (no conversions in the window);"
            f" {HOW_TO_GIVE}"
            for rule, n in self.unpaid.items()
        ]
        return [*self.skipped, *([missing] if missing else []), *self.refused_lines(), *unpaid]


__all__ = ["NOT_ACCEPTED", "Fit", "not_accepted", "refused"]
