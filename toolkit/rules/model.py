"""Rules as data: what a rule looks at, when it fires, what it does, and how often.

A rule is a dict (or a YAML/JSON file of them) with these fields:

- ``name``: how the rule is called in the decisions and the preview (default ``rule N``);
- ``level``: ``source``, ``subid``, ``country`` (the rows of the statistics it reads) or
  ``campaign`` (a campaign's totals, summed from its ``source`` rows; ``of: subid`` to sum
  another level);
- ``when``: the condition, clauses ``metric op number`` joined by ``and`` (a string or a list
  of strings): threshold clauses as in the common tools (``cost > 5 and conversions = 0``) and
  statistical ones (``p_loss >= 0.95``: the conversion rate is below break-even with
  probability 0.95 or more); see :data:`METRICS`;
- ``action``: ``blacklist`` or ``whitelist`` (a source or subId), ``bid`` (a bid rule for a
  source or subId, a country's bid; ``bid: 0.05`` or ``factor: 0.8`` of the current bid),
  ``pause`` (a campaign);
- ``scope``: ``campaigns`` (ids) and/or ``formats`` (``push``...), or ``all`` (the default);
- ``window``: the last N days of the statistics (all of them when left out);
- ``cooldown``: for a ``factor`` (a step of the current bid), the days of new data after
  which the rule may step the same item again (without it, a rule steps an item once; see
  :mod:`toolkit.rules.memory`);
- ``limit``: at most K decisions per campaign per run (the strongest first, by ``rank``,
  ``cost`` by default, descending);
- ``payout``: revenue per conversion for the break-even rate (default: the campaign's own
  revenue over its conversions in the window; a payouts table comes first, see
  :mod:`toolkit.rules.payouts`);
- ``delay``: conversion delay (``auto``: estimated from the export, or a profile
  ``{0: 0.55, 1: 0.8, 3: 1.0}`` of the share of a click day's conversions known by each
  age; see :mod:`toolkit.rules.delay`): the freshest days' clicks weigh that share;
- ``confirm``: on how many consecutive days' evidence (the window ending on the last day,
  and on each day before) the probability clauses (:data:`CONFIRMED_METRICS`) must hold
  (default :data:`CONFIRM`, 1: the last day's only; see :mod:`toolkit.rules.confirm`).

Top-level keys of a file other than ``rules`` are defaults for every rule.

>>> rules = load_rules({"rules": [{"name": "losers", "level": "subid",
...     "when": "p_loss >= 0.95 and clicks >= 200", "action": "blacklist", "limit": 20}]})
>>> rules[0].when[0].text, rules[0].limit
('p_loss >= 0.95', 20)
"""

from __future__ import annotations

import math
import operator
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import spec
from ..bulk.workbook.layout import MAX_BID
from ..errors import RuleProblem, RulesError, WorkbookError
from ..stats.schema import COUNTRY, LEVELS
from .delay import Delay
from .fields import FIELDS
from .files import read_rules_file

#: The largest number a condition compares with (costs, counts and rates are far below).
MAX_CLAUSE = 1e15
#: A rule's level: a row level of the statistics, or a campaign's totals.
CAMPAIGN = "campaign"
RULE_LEVELS: tuple[str, ...] = (*LEVELS, CAMPAIGN)
#: The levels whose items go on source/subId lists and bid rules.
LISTED = tuple(level for level in LEVELS if level != COUNTRY)

#: What a condition can name: ``metric -> meaning``.
METRICS: dict[str, str] = {
    "impressions": "impressions in the window",
    "clicks": "clicks in the window",
    "cost": "cost in the window (USD)",
    "conversions": "conversions in the window",
    "revenue": "revenue in the window (USD)",
    "profit": "revenue - cost",
    "roi": "profit / cost x 100 (%)",
    "cr": "conversions / clicks",
    "cpa": "cost / conversions (NaN without conversions)",
    "epc": "revenue / clicks",
    "cpc": "cost / clicks",
    "ctr": "clicks / impressions x 100 (%)",
    "break_even": "the conversion rate that pays for the clicks: cpc / payout",
    "posterior_cr": "the conversion rate's posterior mean (Beta prior from the campaign's "
    "other items)",
    "p_loss": "posterior probability that the conversion rate is below break-even",
    "p_win": "posterior probability that the conversion rate is above break-even",
    "p_loss_daily": "p_loss for a rule run every day: 1 - (1 + ln days) x (1 - p_loss), its "
    "error spent over the item's days with clicks in the window (source and subId rules)",
    "p_zero": "chance of zero conversions in these clicks at the campaign's rate (Poisson; "
    "NaN when the item converted)",
    "expected_loss": "USD per click a stop is expected to forgo: payout x the posterior mean "
    "of how far the rate is above break-even (0 below it)",
    "loss_share": "of what a wrong choice is expected to cost, the share keeping risks: "
    "E[(break_even - rate)+] / (that + E[(rate - break_even)+]) under the posterior",
    "roi_expected": "the ROI the posterior expects (%): payout x posterior_cr / cpc x 100 - 100; "
    "an item with little evidence is drawn to its campaign's rate",
}
#: The metrics that need a payout (an item without one is "no payout known" for them).
PAYOUT_METRICS: tuple[str, ...] = (
    "break_even",
    "p_loss",
    "p_win",
    "p_loss_daily",
    "expected_loss",
    "loss_share",
    "roi_expected",
)
#: The probability clauses a rule's ``confirm`` asks to hold on the days before too.
CONFIRMED_METRICS: tuple[str, ...] = ("p_loss", "p_win", "p_loss_daily")
#: On how many consecutive days' evidence a rule's probability clauses must hold by default
#: (1: the last day's; measured in docs/rules.md, "Daily looks").
CONFIRM = 1

OPS: dict[str, Callable[[Any, Any], Any]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "!=": operator.ne,
    "==": operator.eq,
    ">": operator.gt,
    "<": operator.lt,
    "=": operator.eq,
}
_CLAUSE = re.compile(
    r"^\s*([A-Za-z_]+)\s*(>=|<=|!=|==|>|<|=)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)


@dataclass(frozen=True)
class RuleAction:
    """What an action does: the levels it applies to and whether it needs a bid."""

    name: str
    levels: tuple[str, ...]
    priced: bool
    meaning: str


#: The actions a rule may take, one row each.
ACTIONS: dict[str, RuleAction] = {
    a.name: a
    for a in (
        RuleAction(
            "blacklist",
            LISTED,
            False,
            "add to the blacklist (or drop from the whitelist of a campaign that whitelists it)",
        ),
        RuleAction(
            "whitelist", LISTED, False, "add to the whitelist (and drop from the blacklist)"
        ),
        RuleAction(
            "bid",
            (*LISTED, COUNTRY),
            True,
            "a bid rule for a source or subId, or "
            "a country's bid: bid (USD) or factor (of the current bid)",
        ),
        RuleAction("pause", (CAMPAIGN,), False, "pause the campaign"),
    )
}
#: The actions that stop traffic (a backtest counts their cost saved and revenue lost).
STOPS: tuple[str, ...] = ("blacklist", "pause")


@dataclass(frozen=True)
class Clause:
    """``metric op value``; :meth:`holds` is False where the metric is NaN."""

    metric: str
    op: str
    value: float

    @property
    def text(self) -> str:
        return f"{self.metric} {self.op} {_number(self.value)}"

    def holds(self, frame: pd.DataFrame) -> np.ndarray:
        values = frame[self.metric].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            return np.asarray(OPS[self.op](values, self.value) & ~np.isnan(values), dtype=bool)


@dataclass(frozen=True)
class Rule:
    """One checked rule (see the module for the fields)."""

    name: str
    level: str
    action: str
    when: tuple[Clause, ...]
    campaigns: tuple[int, ...] | None = None
    formats: tuple[str, ...] | None = None
    window: int | None = None
    limit: int | None = None
    cooldown: int | None = None
    bid: float | None = None
    factor: float | None = None
    payout: float | None = None
    rank: str = "cost"
    of: str = "source"
    enabled: bool = True
    number: int = field(default=0, compare=False)
    delay: Delay | str | None = None  # "auto": estimated from the export
    confirm: int = CONFIRM

    @property
    def condition(self) -> str:
        return " and ".join(c.text for c in self.when)

    def to_dict(self) -> dict[str, Any]:
        """The rule as data again (what :func:`load_rules` reads)."""
        out: dict[str, Any] = {
            "name": self.name,
            "level": self.level,
            "when": self.condition,
            "action": self.action,
        }
        scope = {
            k: list(v) for k, v in (("campaigns", self.campaigns), ("formats", self.formats)) if v
        }
        if scope:
            out["scope"] = scope
        for key in ("window", "cooldown", "limit", "bid", "factor", "payout"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if isinstance(self.delay, Delay):
            out["delay"] = dict(enumerate(self.delay.shares)) if self.delay.days else "none"
        elif self.delay is not None:
            out["delay"] = self.delay
        if self.confirm != CONFIRM:
            out["confirm"] = self.confirm
        if self.rank != "cost":
            out["rank"] = self.rank
        if self.level == CAMPAIGN and self.of != "source":
            out["of"] = self.of
        if not self.enabled:
            out["enabled"] = False
        return out


#: The range of each number of a rule: ``(low, high, low included)``. A bid up to the
#: workbook's bound for a typo (:data:`toolkit.bulk.workbook.layout.MAX_BID`); a factor from
#: 0.1 to 10 (a tenth of the bid to ten times it: the ``bid_jump`` guard still asks before
#: a step past its own bounds); days up to ten years; at most a million decisions a run; a
#: payout up to a million USD; a confirmation over 1 to 7 days.
NUMBERS: dict[str, tuple[float, float, bool]] = {
    "bid": (0.0, MAX_BID, False),
    "factor": (0.1, 10.0, True),
    "window": (0, 3650, False),
    "cooldown": (0, 3650, False),
    "limit": (0, 1_000_000, False),
    "payout": (0.0, 1_000_000.0, False),
    "confirm": (1, 7, True),
}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# --------------------------------------------------------------------------- reading


def load_rules(source: Any) -> list[Rule]:
    """Rules from a dict (``{"rules": [...], **defaults}``), a list of dicts or
    :class:`Rule` objects, one rule's dict, or a ``.yaml``/``.yml``/``.json`` file or an
    ``.xlsx`` workbook (a ``rules`` sheet, see :mod:`toolkit.rules.sheet`). Every
    problem of every rule is reported at once (:class:`~toolkit.errors.RulesError`)."""
    where = None
    if isinstance(source, (str, os.PathLike)):
        where = str(source)
        source = _read_file(Path(source))
    raw, defaults, problems = _entries(source)
    rules: list[Rule] = []
    for number, entry in enumerate(raw, start=1):
        if isinstance(entry, Rule):
            rules.append(entry)
            continue
        rule = _checked(
            number, {**defaults, **entry} if isinstance(entry, Mapping) else entry, problems
        )
        if rule is not None:
            rules.append(rule)
    first: dict[str, int] = {}
    for rule in rules:
        if rule.name in first:
            message = f"rule {first[rule.name]} has this name too; names must differ"
            problems.append(RuleProblem(rule.number or None, rule.name, "name", message))
        first.setdefault(rule.name, rule.number)
    if problems:
        raise RulesError(problems, where)
    return rules


def _read_file(path: Path) -> Any:
    if path.suffix.lower() in (".xlsx", ".xlsm"):
        from zipfile import BadZipFile

        from openpyxl.utils.exceptions import InvalidFileException

        from .sheet import read_rules_sheet

        try:
            return read_rules_sheet(path)
        except WorkbookError as exc:  # a hostile or broken file: its first problem
            problem = RuleProblem(None, None, None, f"not a readable workbook: {exc.problems[0]}")
            raise RulesError([problem], str(path)) from None
        except (OSError, ValueError, KeyError, BadZipFile, InvalidFileException) as exc:
            problem = RuleProblem(None, None, None, f"not a readable workbook: {exc}")
            raise RulesError([problem], str(path)) from None
    return read_rules_file(path)  # bounded: size, encoding, depth, aliases


def _entries(source: Any) -> tuple[list[Any], dict[str, Any], list[RuleProblem]]:
    if isinstance(source, Rule):
        return [source], {}, []
    if isinstance(source, Mapping) and "rules" in source:
        defaults = {k: v for k, v in source.items() if k != "rules"}
        bad = sorted(set(defaults) - set(FIELDS))
        problems = [RuleProblem(None, None, k, "unknown key") for k in bad]
        entries = source["rules"]
        if entries is None:  # ``rules:`` and nothing under it
            return [], defaults, [*problems, RuleProblem(None, None, "rules", "empty: no rules")]
        if not isinstance(entries, Sequence) or isinstance(entries, str):
            return [], defaults, [*problems, RuleProblem(None, None, "rules", "not a list")]
        return list(entries), {k: v for k, v in defaults.items() if k in FIELDS}, problems
    if isinstance(source, Mapping):
        return [source], {}, []
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        return list(source), {}, []
    if source is None:
        what = "no rules given (None): pass a rules file, a dict or a list of rules"
        return [], {}, [RuleProblem(None, None, None, what)]
    return (
        [],
        {},
        [
            RuleProblem(
                None, None, None, f"rules must be a dict or a list, not {type(source).__name__}"
            )
        ],
    )


class _Check:
    def __init__(self, number: int, entry: Mapping[str, Any], problems: list[RuleProblem]):
        self.number, self.entry, self.problems = number, entry, problems
        self.given = entry.get("name")
        self.name = str(self.given or f"rule {number}")
        self.before = len(problems)

    def bad(self, key: str | None, message: str) -> None:
        name = None if self.given is None else self.name
        self.problems.append(RuleProblem(self.number, name, key, message))

    @property
    def ok(self) -> bool:
        return len(self.problems) == self.before

    def choice(self, key: str, choices: Sequence[str], default: str | None = None) -> str:
        value = self.entry.get(key, default)
        if value is None:
            self.bad(key, f"missing; one of {', '.join(choices)}")
            return ""
        value = str(value).strip().lower()
        if value not in choices:
            self.bad(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def number_of(self, key: str, *, whole: bool = False) -> Any:
        """The number ``key`` within its :data:`NUMBERS` range, or None (missing or bad)."""
        value = self.entry.get(key)
        if value is None:
            return None
        low, high, included = NUMBERS[key]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and (not math.isfinite(value) or (whole and value != int(value))):
            ok = False
        if ok and (value < low or (value == low and not included) or value > high):
            ok = False
        if not ok:
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            kind = "a whole number" if whole else "a number"
            within = (
                f"{kind} from {_number(low)} to {high:,g}"
                if included
                else f"{kind} above {_number(low)} and at most {high:,g}"
            )
            self.bad(key, f"{shown} is not {within}")
            return None
        return int(value) if whole else float(value)


def _checked(number: int, entry: Any, problems: list[RuleProblem]) -> Rule | None:
    if not isinstance(entry, Mapping):
        problems.append(
            RuleProblem(
                number, None, None, f"a rule is a mapping of fields, not {type(entry).__name__}"
            )
        )
        return None
    c = _Check(number, entry, problems)
    for key in sorted(set(map(str, entry)) - set(FIELDS)):
        c.bad(key, f"unknown field; fields: {', '.join(FIELDS)}")
    level = c.choice("level", RULE_LEVELS)
    action = c.choice("action", tuple(ACTIONS))
    if level in RULE_LEVELS and action in ACTIONS and level not in ACTIONS[action].levels:
        c.bad(
            "action",
            f"{action} applies to the levels {', '.join(ACTIONS[action].levels)}, not {level}",
        )
    when = _clauses(c)
    _daily_levels(c, level, when)
    campaigns, formats = _scope(c)
    bid, factor = c.number_of("bid"), c.number_of("factor")
    _prices(c, action, bid, factor)
    rank = c.choice("rank", tuple(METRICS), "cost")
    of = c.choice("of", LEVELS, "source")
    window, limit = c.number_of("window", whole=True), c.number_of("limit", whole=True)
    cooldown = _cooldown(c, action, factor)
    payout = c.number_of("payout")
    delay = _delay(c)
    confirm = c.number_of("confirm", whole=True)
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        c.bad("enabled", f"{enabled!r} is not true or false")
    if not c.ok:
        return None
    return Rule(
        c.name,
        level,
        action,
        when,
        campaigns,
        formats,
        window,
        limit,
        cooldown,
        bid,
        factor,
        payout,
        rank,
        of,
        bool(entry.get("enabled", True)),
        number,
        delay,
        CONFIRM if confirm is None else confirm,
    )


def _delay(c: _Check) -> Delay | str | None:
    """``delay``: ``auto``, or a profile :meth:`Delay.parse` reads (``none``: no delay)."""
    value = c.entry.get("delay")
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if isinstance(value, str) and "," in value:  # a workbook's cell: shares by age
        parts = [v.strip() for v in value.split(",")]
        value = [float(v) if re.fullmatch(r"\d*\.?\d+", v) else v for v in parts]
    try:
        return Delay.parse(value, where="delay")
    except ValueError as exc:
        c.bad("delay", str(exc).removeprefix("delay: ") + "; or 'auto' (estimated from the export)")
        return None


def _clauses(c: _Check) -> tuple[Clause, ...]:
    when = c.entry.get("when")
    if when is None or when == "" or when == []:
        c.bad("when", "missing: a condition such as 'cost > 5 and conversions = 0'")
        return ()
    texts = [when] if isinstance(when, str) else list(when)
    parts = [p for t in texts for p in re.split(r"\s+and\s+", str(t), flags=re.IGNORECASE)]
    out = []
    for part in parts:
        m = _CLAUSE.match(part)
        if not m:
            c.bad("when", f"{part.strip()!r} is not 'metric op number' (op: > >= < <= = !=)")
            continue
        metric, op, value = m.group(1).lower(), m.group(2), float(m.group(3))
        if not math.isfinite(value) or abs(value) > MAX_CLAUSE:
            c.bad("when", f"{part.strip()[:60]!r}: the number is past {MAX_CLAUSE:,g}")
            continue
        if metric not in METRICS:
            c.bad("when", f"unknown metric {metric!r}; metrics: {', '.join(METRICS)}")
            continue
        out.append(Clause(metric, op, value))
    return tuple(out)


def _daily_levels(c: _Check, level: str, when: tuple[Clause, ...]) -> None:
    """``p_loss_daily`` counts an item's days with clicks: source and subId rules only."""
    if level in (CAMPAIGN, COUNTRY) and any(cl.metric == "p_loss_daily" for cl in when):
        c.bad("when", f"p_loss_daily is for source and subId rules, not {level}; use p_loss")


def _scope(c: _Check) -> tuple[tuple[int, ...] | None, tuple[str, ...] | None]:
    scope = c.entry.get("scope", "all")
    if scope is None or (isinstance(scope, str) and scope.strip().lower() == "all"):
        return None, None
    if not isinstance(scope, Mapping):
        c.bad("scope", "'all' or a mapping with campaigns and/or formats")
        return None, None
    for key in sorted(set(map(str, scope)) - {"campaigns", "formats"}):
        c.bad("scope", f"unknown key {key!r}; keys: campaigns, formats")
    campaigns = _listed(scope.get("campaigns"))
    ids = []
    for value in campaigns or ():
        text = str(value).strip()
        if not text.isdigit():
            c.bad("scope", f"campaign {value!r} is not a campaign id")
        else:
            ids.append(int(text))
    formats = [str(f).strip().lower() for f in _listed(scope.get("formats")) or ()]
    for f in formats:
        if f not in spec.FORMATS:
            c.bad("scope", f"format {f!r} is not one of {', '.join(spec.FORMATS)}")
    return (tuple(ids) if campaigns is not None else None, tuple(formats) if formats else None)


def _listed(value: Any) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, (str, int)):
        return [value]
    return list(value)


def _cooldown(c: _Check, action: str, factor: float | None) -> int | None:
    """``cooldown`` (whole days above 0), only for a rule that steps a bid by a factor: a
    fixed bid, a list or a pause is made once and stays so, whatever new data come."""
    cooldown = c.number_of("cooldown", whole=True)
    if cooldown is not None and (action != "bid" or factor is None):
        c.bad(
            "cooldown",
            "only a bid rule with a factor steps again; leave cooldown out here (a bid, a"
            " list or a pause is set once and stays so)",
        )
    return cooldown


def _prices(c: _Check, action: str, bid: float | None, factor: float | None) -> None:
    rule_action = ACTIONS.get(action)
    if rule_action is None:
        return
    given = c.entry.get("bid") is not None, c.entry.get("factor") is not None
    if rule_action.priced and given[0] == given[1]:
        c.bad("bid", "a bid action needs either bid (USD) or factor (of the current bid)")
    if not rule_action.priced and any(given):
        c.bad("bid", f"{action} takes no bid or factor")


__all__ = [
    "ACTIONS",
    "CAMPAIGN",
    "METRICS",
    "RULE_LEVELS",
    "STOPS",
    "Clause",
    "Rule",
    "RuleAction",
    "load_rules",
]
