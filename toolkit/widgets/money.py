"""Amounts typed into the forms' text boxes (USD, or a percentage), read one way only.

A decimal point or a decimal comma is taken (``0.5`` and ``0,5`` are both half a dollar);
what could be read two ways is refused in one line that says how to write it: ``1,000`` and
``1.000`` (a thousand, or one?), ``1.234,5`` (thousands separators). Exponents (``1e3``),
words, an empty box and (for USD) a negative amount are refused too. Never a silent guess.

>>> parse_amount("0,5", "Value")
0.5
>>> parse_amount(" 0.125 ", "Bid (USD)")
0.125
>>> parse_amount("1,000", "Value")
Traceback (most recent call last):
...
toolkit.widgets.money.AmountError: Value: "1,000" could be 1000 or 1.0; write 1000 or 1.0 ...
>>> parse_amount("abc", "Value")
Traceback (most recent call last):
...
toolkit.widgets.money.AmountError: Value: "abc" is not an amount in USD; write 0.5 or 0,5
>>> parse_amount("-10", "Value", unit="%")
-10.0
>>> as_text(0.15), as_text(2), as_text(1e-05)
('0.15', '2', '0.00001')
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import ipywidgets as w
from traitlets import Unicode

from ..errors import ValidationError

#: One amount: digits with at most one decimal point or comma (``0.5``, ``0,5``, ``.5``).
_AMOUNT = re.compile(r"(?P<sign>[-+]?)(?P<int>\d*)(?:(?P<sep>[.,])(?P<frac>\d+))?")
#: Digits grouped by separators, as thousands are written (``1,000``, ``1.234,5``).
_GROUPED = re.compile(r"[-+]?\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?")


class AmountError(ValidationError):
    """An amount that cannot be read one way only; the message names the field and the text."""


def _refuse(field: str, text: str, why: str) -> AmountError:
    return AmountError(f'{field}: "{text}" {why}')


def parse_amount(text: Any, field: str, *, unit: str = "USD") -> float:
    """The amount ``text`` says, or an :class:`AmountError` naming ``field`` and the text.

    ``unit`` ``"USD"`` refuses a negative amount; ``"%"`` takes a sign and a trailing ``%``.
    """
    raw = "" if text is None else str(text)
    shown = body = raw.strip()
    if unit == "%" and body.endswith("%"):
        body = body[:-1]
    if not body:
        raise _refuse(field, shown, f"is empty; write an amount in {unit}, e.g. 0.5")
    found = _AMOUNT.fullmatch(body)
    if found is None or not (found["int"] or found["frac"]):
        if _GROUPED.fullmatch(body):
            raise _refuse(
                field, shown, "has thousands separators; write it without them, e.g. 1234.5"
            )
        raise _refuse(field, shown, f"is not an amount in {unit}; write 0.5 or 0,5")
    whole, frac = found["int"], found["frac"] or ""
    if len(frac) == 3 and whole and whole.lstrip("0") and len(whole) <= 3:
        thousands = int(whole + frac)
        one = whole + "." + frac.rstrip("0") if frac.rstrip("0") else whole + ".0"
        raise _refuse(
            field,
            shown,
            f"could be {thousands} or {one}; write {thousands} or {one} (no thousands separators)",
        )
    value = float(f"{found['sign']}{whole or '0'}.{frac or '0'}")
    if unit != "%" and value < 0:
        raise _refuse(field, shown, f"is negative; write an amount in {unit} above 0")
    return value


def as_text(number: float) -> str:
    """A number as a money box shows it: plain decimals, no exponent (``1e-05`` ->
    ``0.00001``)."""
    if isinstance(number, bool) or not math.isfinite(float(number)):
        raise ValueError(f"{number!r} is not an amount")
    text = format(Decimal(repr(float(number))), "f")
    return text[:-2] if text.endswith(".0") else text


class _AmountText(Unicode):  # type: ignore[type-arg]
    """Text, or a number given in code shown as text."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                value = as_text(value)
            except ValueError as exc:
                self.error(obj, value, info=str(exc))
        return super().validate(obj, value)


class MoneyText(w.Text):
    """A text box of an amount (CSS class ``ct-money``), read by :func:`parse_amount` when an
    edit is made. Its ``value`` is the text, sent when the box loses focus or on Enter; a
    number given in code is shown as text (``box.value = 0.15`` shows ``0.15``)."""

    value = _AmountText(help="the amount as typed").tag(sync=True)

    def __init__(self, description: str, unit: str = "USD", **options: Any) -> None:
        options.setdefault("placeholder", "e.g. 0.5" if unit == "USD" else "e.g. 10 or -5")
        # the whole text once, when the box loses focus (a click on a button does that first):
        # keystrokes sent one by one can reach a busy kernel after the click that uses them
        options.setdefault("continuous_update", False)
        super().__init__(description=description, **options)
        self.unit = unit
        self.add_class("ct-money")

    def amount(self) -> float:
        """The amount typed, or an :class:`AmountError` naming the box and the text."""
        return parse_amount(self.value, self.description, unit=self.unit)


__all__ = ["AmountError", "MoneyText", "as_text", "parse_amount"]
