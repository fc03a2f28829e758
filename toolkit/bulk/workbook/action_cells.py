"""The cells of an action workbook's rows that name things by code or by id: the
``campaign`` cell (an id, ``all`` or a format code), and items of the kinds sent as ISO codes
(a country, a language), in the spelling the service takes.

An id is an integer however the reader gave it (``9999999``, ``9999999.0``, ``"9999999"``,
``"9999999.0"``), and shown so in every message; ``12.5`` is refused. A code that differs
from one the service takes only in case (``us``, ``EN``) is that code; any other spelling
(``UK``, ``usa``, ``english``) is refused with what it probably meant
(:func:`toolkit.stats.countries.code_advice`), never read as a guess.

>>> campaigns_of("9999999.0", [9999999], {})
((9999999,), '')
>>> campaigns_of(12.5, [12], {})
(None, "not a whole number: a campaign id of the account, 'all', or a format code")
"""

from __future__ import annotations

import re
from typing import Any

from ... import spec
from ...stats.countries import canonical_code

_INTEGRAL_RE = re.compile(r"[0-9]+(\.0*)?", re.ASCII)
_DECIMAL_RE = re.compile(r"[+-]?[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?", re.ASCII)


#: What a ``campaign`` cell holds, for the messages of a cell that does not.
CAMPAIGN_CELL = "a campaign id of the account, 'all', or a format code"


def campaign_cell(value: Any) -> Any:
    """A ``campaign`` cell as messages show it: an id as an integer, however the reader gave
    it (``9999999``, ``9999999.0``, ``"9999999"``, ``"9999999.0"``); anything else as read.

    >>> campaign_cell(9999999.0), campaign_cell(" 9999999.0"), campaign_cell(12.5)
    (9999999, 9999999, 12.5)
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGRAL_RE.fullmatch(value.strip()):
        return int(value.strip().split(".")[0])
    return value


def campaigns_of(
    value: Any, ids: list[int], by_format: dict[str, list[int]]
) -> tuple[tuple[int, ...] | None, str]:
    """The campaigns a ``campaign`` cell names, or None and why not."""
    if value is None:
        return None, f"the campaign is required: {CAMPAIGN_CELL}"
    cell = campaign_cell(value)
    if isinstance(cell, int) and not isinstance(cell, bool):
        if cell in ids:
            return (cell,), ""
        return None, f"campaign {cell} is not in the account ({CAMPAIGN_CELL})"
    text = str(value).strip().lower()
    if text == "all":
        return tuple(ids), ""
    if text in spec.FORMATS:
        return tuple(by_format.get(text, [])), ""
    if isinstance(value, float) or _DECIMAL_RE.fullmatch(text):
        return None, f"not a whole number: {CAMPAIGN_CELL}"
    return None, CAMPAIGN_CELL


def item_code(item: str, kind: spec.TargetKind | None) -> str:
    """An item of a kind sent as ISO codes (country, language) in the case the service takes
    (``us`` -> ``US``, ``EN`` -> ``en``): a code differing only in case is that code; any
    other text is kept as written, and refused with what it probably meant."""
    vocabulary = code_kind(kind)
    if vocabulary is None:
        return item
    return canonical_code(item, vocabulary) or item


def code_kind(kind: spec.TargetKind | None) -> str | None:
    """The name of ``kind`` when its items are ISO codes (the country kind, whose items carry
    bids, and the kind sent as language codes), else None."""
    if kind is not None and (kind.bids or kind.sent_as_code):
        return kind.name
    return None


__all__ = ["CAMPAIGN_CELL", "campaign_cell", "campaigns_of", "code_kind", "item_code"]
