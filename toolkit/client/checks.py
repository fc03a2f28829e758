"""Checks the client runs before sending: values the interface's vocabulary says are wrong.

Each check collects every problem and raises one :class:`~toolkit.errors.ValidationError`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from functools import lru_cache
from typing import Any

from .. import spec
from ..errors import ValidationError


@lru_cache(maxsize=1)
def country_codes() -> frozenset[str]:
    import pycountry

    return frozenset(c.alpha_2 for c in pycountry.countries)


@lru_cache(maxsize=1)
def language_codes() -> frozenset[str]:
    import pycountry

    return frozenset(lang.alpha_2 for lang in pycountry.languages if hasattr(lang, "alpha_2"))


#: The codes of the dictionaries whose codes are items of a kind, and what they are: the
#: dictionary a kind is sent as (``kind.codes``), or that names a kind of code items.
CODE_SETS: dict[str, tuple[Callable[[], frozenset[str]], str]] = {
    "country": (country_codes, "ISO 3166-1 alpha-2, upper case"),
    "language_code": (language_codes, "ISO 639-1, lower case"),
}


def code_dictionary(k: spec.TargetKind) -> str | None:
    """The dictionary whose codes are the items of ``k`` as sent, if any."""
    if k.codes is not None:
        return k.codes
    return k.labels if k.item_type is str else None


def raise_if(problems: list[str]) -> None:
    if problems:
        raise ValidationError(problems)


def choice(name: str, value: str | None, allowed: Iterable[str]) -> str | None:
    """``value`` lower-cased if among ``allowed`` (case-insensitive); None passes."""
    if value is None:
        return None
    allowed = tuple(allowed)
    low = str(value).lower()
    for option in allowed:
        if option.lower() == low:
            return option
    raise ValidationError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


def kind(name: str) -> spec.TargetKind:
    """The kind named ``name`` (``isp-mobile`` or ``isp_mobile``)."""
    try:
        return spec.target_kind(str(name))
    except KeyError:
        raise ValidationError(
            f"unknown target kind {name!r}; kinds: {', '.join(spec.TARGET_KINDS)}"
        ) from None


def list_kind(name: str) -> spec.ListKind:
    found = spec.LISTS.get(name)
    if found is None:
        raise ValidationError(f"unknown list {name!r}; lists: {', '.join(spec.LISTS)}")
    return found


def number(name: str, value: Any, positive: bool = True) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
        return [f"{name} must be a number, got {value!r}"]
    if value != value or value in (float("inf"), float("-inf")):
        return [f"{name} must be a finite number, got {value!r}"]
    if positive and value <= 0:
        return [f"{name} must be greater than 0, got {value!r}"]
    return []


def target_items(
    k: spec.TargetKind, items: Any, list_type: str | None, ad_formats: Iterable[str | None]
) -> tuple[Any, str | None]:
    """Checked items (a dict of bids for country add) and the list type for typed kinds."""
    problems: list[str] = []
    if k.typed:
        list_type = choice("list_type", list_type or "black", spec.LIST_TYPES)
    elif list_type is not None:
        problems.append(
            f"list_type is only for {', '.join(n for n, x in spec.TARGET_KINDS.items() if x.typed)}"
        )
    for fmt in {f for f in ad_formats if f}:
        if not k.allowed_for(fmt):
            label = spec.FORMATS[fmt].label
            problems.append(f"targeting '{k.name}' is not available for {label} campaigns")
    values = list(items.keys()) if isinstance(items, Mapping) else _as_list(items)
    if not values:
        problems.append("items must not be empty")
    for value in values:
        problems += item_problems(k, value)
    if isinstance(items, Mapping):
        for code, bid in items.items():
            problems += number(f"bid for {code}", bid)
    raise_if(problems)
    return items, list_type


def item_problems(k: spec.TargetKind, value: Any) -> list[str]:
    """Problems of one item of kind ``k`` that need no dictionary lookup but ISO codes."""
    rule = refused_item(k, value)
    return [] if rule is None else [f"{rule}; got {value!r}"]


def refused_item(k: spec.TargetKind, value: Any) -> str | None:
    """The rule of the interface ``value`` breaks as an item of kind ``k``, in words that do
    not repeat the value (a rule's decision shows them as its status), or None when the
    service takes it (as far as a check without dictionary lookups but ISO codes can tell).

    >>> refused_item(spec.target_kind("country"), "Atlantis")
    'a country code is ISO 3166-1 alpha-2, upper case'
    """
    if k.item_type is int:
        ok = _integer(value) and value > 0
        if not ok and not (isinstance(value, str) and value.isdigit()):
            return f"a {k.name} item is a positive integer id"
        return None
    if not isinstance(value, str):
        return f"a {k.name} item is a string"
    if k.values is not None and value not in k.values:
        return f"a {k.name} item is one of {', '.join(k.values)}"
    codes = CODE_SETS.get(code_dictionary(k) or "")
    if codes is not None and value not in codes[0]():
        return f"a {k.name} code is {codes[1]}"
    if k.syntax is not None and not k.syntax(value):
        return f"a {k.name} item is written as {k.help or 'the interface says'}"
    return None


#: What the service takes as list and bid-rule items, in words (the checks' messages and
#: the status of a rule's decision on an item it does not take say them).
SOURCE_ID_RULE = f"a source id is a positive integer (at most {spec.MAX_SOURCE_ID})"
SUBID_RULE = "a subId is 1 to 64 hexadecimal digits"
RULE_ITEM_RULE = "a bid rule item is a source id or a subId: 1 to 64 hexadecimal digits"


def refused_list_item(lk: spec.ListKind, value: Any) -> str | None:
    """The rule ``value`` breaks as an item of the list ``lk`` (:data:`SOURCE_ID_RULE`,
    :data:`SUBID_RULE`), or None when the service takes it.

    >>> refused_list_item(spec.LISTS["subid_black"], "not-hex"), refused_list_item(
    ...     spec.LISTS["source_black"], "123")
    ('a subId is 1 to 64 hexadecimal digits', None)
    """
    if lk.entity == "source":
        if _integer(value):
            return None if spec.is_source_id(int(value)) else SOURCE_ID_RULE
        digits = isinstance(value, str) and value.isascii() and value.isdigit()
        return None if digits and spec.is_source_id(int(value)) else SOURCE_ID_RULE
    return None if isinstance(value, str) and spec.is_hex(value) else SUBID_RULE


def refused_rule_item(value: Any) -> str | None:
    """The rule ``value`` breaks as a bid rule's item (:data:`RULE_ITEM_RULE`), or None."""
    return None if spec.is_hex(str(value)) else RULE_ITEM_RULE


def list_items(lk: spec.ListKind, items: Any) -> list[Any]:
    values = _as_list(items)
    problems = [] if values else ["items must not be empty"]
    for value in values:
        rule = refused_list_item(lk, value)
        if rule is not None:
            problems.append(f"{rule}; got {value!r}")
    raise_if(problems)
    return values


def rule_items(items: Any) -> list[str]:
    values = [str(v) for v in _as_list(items)]
    problems = [] if values else ["items must not be empty"]
    problems += [f"{RULE_ITEM_RULE}; got {v!r}" for v in values if refused_rule_item(v)]
    raise_if(problems)
    return values


def _as_list(items: Any) -> list[Any]:
    if isinstance(items, (str, bytes, numbers.Integral)):
        return [items]
    return list(items)


def _integer(value: Any) -> bool:
    """An int, or an integer of another type (numpy's, from a DataFrame), but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def cpa_rule(rule: Mapping[str, Any], where: str, full: bool) -> list[str]:
    problems = []
    allowed = {
        "type": spec.CPA_TYPES,
        "cond": spec.CPA_CONDS,
        "lead_type": spec.CPA_LEAD_TYPES,
        "lead_cond": spec.CPA_CONDS,
    }
    for name in spec.CPA_FIELDS:
        if name not in rule:
            if full:
                problems.append(f"{where}: field {name!r} is required")
            continue
        value = rule[name]
        if name in allowed:
            if value not in allowed[name]:
                problems.append(
                    f"{where}: {name} must be one of {', '.join(allowed[name])}, got {value!r}"
                )
        else:
            problems += [f"{where}: {p}" for p in number(name, value, positive=False)]
    unknown = set(rule) - set(spec.CPA_FIELDS) - {"id"}
    if unknown:
        problems.append(f"{where}: unknown fields {sorted(unknown)}")
    return problems


def creative_texts(title: str | None, text: str | None) -> list[str]:
    problems = []
    if title is not None and len(title) > spec.CREATIVE_TITLE_MAX:
        problems.append(f"title is {len(title)} characters; at most {spec.CREATIVE_TITLE_MAX}")
    if text is not None and len(text) > spec.CREATIVE_TEXT_MAX:
        problems.append(f"text is {len(text)} characters; at most {spec.CREATIVE_TEXT_MAX}")
    return problems
