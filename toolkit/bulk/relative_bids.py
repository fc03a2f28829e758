"""Relative bids: a bid cell may say how to change a bid instead of giving the new one.

The forms (any case, spaces allowed around the parts):

- ``+10%``, ``-5%``, ``+2,5%`` (a decimal comma is fine in a percentage, but not before three
  digits: ``+1,000%``), the bid raised or cut by that share, more than -100% and at most +1000%;
- ``x1.2`` (also ``X1.2``, ``×1.2``, ``*1.2``): the bid times a factor, more than 0 and at
  most 10;
- ``min``, ``rec``: the service's minimum or recommended price for the campaign in the
  country, asked with the campaign's targeting (the queries of the bid report,
  :mod:`toolkit.frames.price_queries`); ``min+10%``, ``rec-5%``: that price raised or cut.

A plain number is a bid as before (``0,35`` too, typed in a text cell; not ``1,234``). Text
that starts like a form and is not one (``+10``, ``10%``, ``x``, ``rec-5``, ``--5%``, ``x0``,
``-100%``) is refused with one line naming the accepted forms. The new bid is rounded half up
to :data:`toolkit.spec.BID_DECIMALS` decimals.

What a form changes: in an account workbook, the bid of the row at export (its ``_base_``
sheet), so that applying the same workbook again changes nothing more; in an action
workbook, the live bid when the plan is made (:mod:`toolkit.bulk.workbook.actions_relative`
keeps such a row from being applied twice unnoticed).

>>> form = parse_bid(" rec - 5 % ")
>>> form.text, form.base, form.apply(0.40)
('rec-5%', 'rec', 0.38)
>>> parse_bid("X1.2").apply(0.3061), parse_bid("+2,5%").apply(0.30)
(0.3673, 0.3075)
>>> parse_bid("0.35"), parse_bid(0.35)
('0.35', 0.35)
>>> parse_bid("+10")
Traceback (most recent call last):
...
toolkit.bulk.relative_bids.BidFormError: a percentage ends with % (+10%); a bid is a number \
(0.35) or a change of the bid: +10%, -5%, x1.2, min, rec, min+10%, rec-5%
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from .. import spec
from ..errors import WorkbookProblem
from ..frames.cells import unescape_formula

#: The accepted forms, in the words of every refusal.
ACCEPTED = (
    "a bid is a number (0.35) or a change of the bid: +10%, -5%, x1.2, min, rec, min+10%, rec-5%"
)
#: The bases a form may start from: the service's minimum and recommended price.
PRICE_BASES: tuple[str, ...] = ("min", "rec")
#: Bounds of a percentage (more than the first, at most the second) and of a factor.
PERCENT_BOUNDS: tuple[int, int] = (-100, 1000)
FACTOR_MAX = 10
#: The columns whose cells take the forms, per table of an account workbook.
BID_COLUMNS: dict[str, str] = {"countries": "bid", "bid_rules": "bid"}

_NUMBER = r"(?:[0-9]+(?:[.,][0-9]+)?|[.,][0-9]+)"
_PERCENT = re.compile(rf"(?P<sign>[+-])\s*(?P<pct>{_NUMBER})\s*%")
_FACTOR = re.compile(r"[x×*]\s*(?P<factor>(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))")
_BASED = re.compile(rf"(?P<base>{'|'.join(PRICE_BASES)})(?:\s*(?P<rest>.+))?")
_COMMA = re.compile(r"[0-9]+,[0-9]+", re.ASCII)
_PLAIN = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


class BidFormError(ValueError):
    """A bid cell that starts like a relative form and is not one (the message is one line)."""

    def __init__(self, why: str) -> None:
        super().__init__(f"{why}; {ACCEPTED}")


@dataclass(frozen=True)
class BidForm:
    """A relative bid: ``base`` None (the current bid), ``min`` or ``rec``; ``factor`` what
    the base is multiplied by; ``text`` the form in one spelling (``rec-5%``, ``x1.2``)."""

    base: str | None
    factor: Decimal
    text: str

    @property
    def needs_price(self) -> bool:
        """Whether the form starts from a price of the service (``min``, ``rec``)."""
        return self.base is not None

    def apply(self, reference: float) -> float:
        """The new bid: ``reference`` (the current bid, or the price) times the factor,
        rounded half up to :data:`toolkit.spec.BID_DECIMALS` decimals."""
        step = Decimal(1).scaleb(-spec.BID_DECIMALS)
        return float((Decimal(repr(float(reference))) * self.factor).quantize(step, ROUND_HALF_UP))


def looks_relative(text: str) -> bool:
    """Whether a cell's text starts like a relative form (a sign, ``x``, ``min``, ``rec``)
    or ends with ``%``."""
    t = text.strip().lower()
    if t.lstrip("+-") in ("inf", "infinity", "nan"):
        return False  # the number reader says: not a finite number
    return bool(t) and (t[0] in "+-x×*" or t.endswith("%") or t.startswith(PRICE_BASES))


def parse_bid(value: Any) -> Any:
    """A :class:`BidForm` for a cell holding a relative form; any other cell as it is (a
    number, or text the number reader judges). Raises :class:`BidFormError` for text that
    starts like a form and is not one."""
    value = unescape_formula(value)  # the toolkit writes '+10% for +10% (not a formula)
    if isinstance(value, str) and _COMMA.fullmatch(value.strip()):
        return _decimal_comma(value.strip())
    if not isinstance(value, str) or not looks_relative(value):
        return value
    text = value.strip().lower()
    based = _BASED.fullmatch(text)
    if based:
        rest = based["rest"]
        factor, shown = (Decimal(1), "") if rest is None else _percent(rest)
        return BidForm(based["base"], factor, based["base"] + shown)
    if text[0] in "x×*":
        return _factor(text)
    if text[0] in "+-":
        factor, shown = _percent(text)
        return BidForm(None, factor, shown)
    raise BidFormError("a percentage starts with its sign (+10% or -10%)")


def _decimal_comma(text: str) -> float:
    """``0,35`` typed in a text cell (a bid column is text): 0.35; ``1,234`` is refused
    (a thousands separator, or a decimal comma?)."""
    whole, _, frac = text.partition(",")
    if len(frac) == 3 and whole.strip("0"):
        raise BidFormError(f"{text} may be a thousand or a decimal comma; write it with a point")
    return float(f"{whole}.{frac}")


def _percent(text: str) -> tuple[Decimal, str]:
    """The factor and the spelling of ``+10%``-like text."""
    found = _PERCENT.fullmatch(text)
    if found is None:
        if _PLAIN.fullmatch(text.lstrip("+-").strip()) and text.strip()[:1] in "+-":
            raise BidFormError(f"a percentage ends with % ({text.replace(' ', '')}%)")
        raise BidFormError("not a bid")
    if re.fullmatch(r"[0-9]+,[0-9]{3}", found["pct"]):
        raise BidFormError(
            f"{found['pct']}% may be a thousand or a decimal comma; write it with a point"
        )
    pct = Decimal(found["pct"].replace(",", "."))
    if found["sign"] == "-":
        pct = -pct
    low, high = PERCENT_BOUNDS
    if not low < pct <= high:
        raise BidFormError(f"a percentage is more than {low}% and at most +{high}%")
    return 1 + pct / 100, f"{found['sign']}{_decimal_text(abs(pct))}%"


def _factor(text: str) -> BidForm:
    found = _FACTOR.fullmatch(text)
    if found is None:
        raise BidFormError("a factor is x and a number (x1.2)")
    factor = Decimal(found["factor"])
    if not 0 < factor <= FACTOR_MAX:
        raise BidFormError(f"a factor is more than 0 and at most {FACTOR_MAX}")
    return BidForm(None, factor, f"x{_decimal_text(factor)}")


def _decimal_text(number: Decimal) -> str:
    """``10``, ``2.5``, ``1.2`` (no exponent, no trailing zeros)."""
    return format(number.normalize(), "f")


# --------------------------------------------------------------------------- cells


#: ``(index in the column, cell value, message)``, as the workbook reader reports cells.
CellProblem = tuple[int, Any, str]


def split_cells(values: Sequence[Any]) -> tuple[list[Any], dict[int, BidForm], list[CellProblem]]:
    """A bid column's cells with the relative forms taken out (left empty for the number
    reader), the forms by position, and the cells that start like a form and are not one."""
    out = list(values)
    forms: dict[int, BidForm] = {}
    problems: list[CellProblem] = []
    for i, value in enumerate(values):
        if not isinstance(value, str):
            continue
        try:
            parsed = parse_bid(value)
        except BidFormError as exc:
            problems.append((i, value, str(exc)))
            out[i] = None
            continue
        if isinstance(parsed, BidForm):
            forms[i] = parsed
            out[i] = None
        elif isinstance(parsed, float):  # 0,35
            out[i] = parsed
    return out, forms, problems


@dataclass(frozen=True)
class BidCell:
    """A relative bid written in a cell: where (``sheet``, Excel ``row``), what it sets (a
    bid of ``table`` ``countries`` or ``bid_rules``, campaign and key: the country code or
    the bid rule's item), the cell as written and its form."""

    sheet: str
    row: int
    table: str
    campaign_id: int
    key: str
    value: Any
    form: BidForm

    @property
    def target(self) -> str:
        """The call target of the bid: the bid kind's name, or ``bid_rule``."""
        from .calls import BID_RULE

        return spec.bid_kind().name if self.table == "countries" else BID_RULE

    def problem(self, message: str) -> WorkbookProblem:
        return WorkbookProblem(self.sheet, self.row, "bid", self.value, message)


def written(cells: Iterable[BidCell]) -> dict[tuple[int, str, str], str]:
    """``(campaign id, target, key) -> the form written`` (what the preview shows)."""
    return {(c.campaign_id, c.target, c.key): c.form.text for c in cells}


def settle(cell: BidCell, current: float | None, price: Any = None) -> float | str:
    """The new bid of a cell, or why it cannot be set (one line): ``current`` is the bid the
    form changes (None: the row has none), ``price`` the :class:`~toolkit.frames.
    price_queries.Answer` of its campaign and country (for ``min``/``rec``)."""
    form = cell.form
    minimum = None
    if form.base is None:
        if current is None:
            return (
                f"campaign {cell.campaign_id} has no bid for {cell.key} to change; write a"
                " number" + (", min or rec" if cell.table == "countries" else "")
            )
        reference = current
    else:
        if price is None or price.error:
            why = "no answer" if price is None else price.error
            return f"the service's price could not be read ({why}); nothing sent"
        minimum = price.minimum
        reference = price.minimum if form.base == "min" else price.recommended
        if reference is None:
            return f"the service's answer has no {form.base} price; nothing sent"
    return _checked(form.apply(reference), minimum, cell)


def _checked(new: float, minimum: float | None, cell: BidCell) -> float | str:
    from .edits import money
    from .workbook.layout import MAX_BID

    if not new > 0:
        return f"the new bid {money(new)} is not more than 0"
    if new > MAX_BID:
        return f"the new bid {money(new)} is more than {MAX_BID:,.0f} USD, the highest bid"
    if minimum is not None and new < minimum:
        return (
            f"the new bid {money(new)} is below the service's minimum {money(minimum)} for"
            f" campaign {cell.campaign_id} in {cell.key}"
        )
    return new


def settle_all(
    cells: Iterable[BidCell],
    current: Callable[[BidCell], float | None],
    prices: Mapping[BidCell, Any] | None = None,
) -> tuple[dict[BidCell, float], list[WorkbookProblem]]:
    """Every cell's new bid, and the problems of the cells that have none."""
    bids: dict[BidCell, float] = {}
    problems: list[WorkbookProblem] = []
    for cell in cells:
        new = settle(cell, current(cell), (prices or {}).get(cell))
        if isinstance(new, str):
            problems.append(cell.problem(new))
        else:
            bids[cell] = new
    return bids, problems


__all__ = [
    "ACCEPTED",
    "BID_COLUMNS",
    "BidCell",
    "BidForm",
    "BidFormError",
    "looks_relative",
    "parse_bid",
    "settle",
    "settle_all",
    "split_cells",
    "written",
]
