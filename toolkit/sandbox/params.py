"""Typed access to request parameters, whether they came as query strings or JSON values.

A value of the wrong type is a :class:`BadRequest` (HTTP 400) naming the parameter and the
value; a missing required parameter is a :class:`Business` error.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .errors import BadRequest, Business
from .limits import MAX_INT, MIN_INT

_INT = re.compile(r"^[+-]?[0-9]+$")
_FLOAT = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_INT_DIGITS = len(str(MAX_INT))
_MISSING = object()


def _show(value: Any) -> str:
    if isinstance(value, str):
        text = f"'{value[:100]}'"
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        text = f"an integer of {value.bit_length()} bits"
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _int_range_error(name: str, value: Any) -> BadRequest:
    return BadRequest(
        f"Parameter '{name}' must be an integer from {MIN_INT} to {MAX_INT}, got {_show(value)}"
    )


def to_int(value: Any, name: str) -> int:
    """``value`` as a 64-bit signed integer; anything else is a :class:`BadRequest`."""
    if isinstance(value, bool):
        raise BadRequest(f"Parameter '{name}' must be an integer, got {_show(value)}")
    if isinstance(value, int):
        result = value
    elif isinstance(value, float) and value.is_integer():
        if not MIN_INT <= value <= MAX_INT:
            raise _int_range_error(name, value)
        result = int(value)
    elif isinstance(value, str) and _INT.match(value.strip()):
        text = value.strip()
        if len(text.lstrip("+-").lstrip("0")) > _INT_DIGITS:  # int() refuses > 4300 digits
            raise _int_range_error(name, value)
        result = int(text)
    else:
        raise BadRequest(f"Parameter '{name}' must be an integer, got {_show(value)}")
    if not MIN_INT <= result <= MAX_INT:
        raise _int_range_error(name, value)
    return result


def to_float(value: Any, name: str) -> float:
    """``value`` as a finite number; anything else is a :class:`BadRequest`."""
    if isinstance(value, bool):
        raise BadRequest(f"Parameter '{name}' must be a number, got {_show(value)}")
    if isinstance(value, int):
        result = float(value) if abs(value) <= 1e308 else math.inf
    elif isinstance(value, float):
        result = value
    elif isinstance(value, str) and _FLOAT.match(value.strip()):
        result = float(value.strip())
    else:
        raise BadRequest(f"Parameter '{name}' must be a number, got {_show(value)}")
    if not math.isfinite(result):
        raise BadRequest(f"Parameter '{name}' must be a finite number, got {_show(value)}")
    return result


def to_str(value: Any, name: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise BadRequest(f"Parameter '{name}' must be a string, got {_show(value)}")


CONVERTERS = {int: to_int, float: to_float, str: to_str}


class Params:
    """Request parameters with typed getters.

    >>> p = Params({"id": "7", "items": ["1", "2"], "bid": "0.25"})
    >>> p.get_int("id"), p.get_list("items", int), p.get_float("bid")
    (7, [1, 2], 0.25)
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def __contains__(self, name: str) -> bool:
        return name in self.data

    def raw(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)

    def _get(self, name: str, required: bool) -> Any:
        value = self.data.get(name, _MISSING)
        if value is _MISSING or value is None:
            if required:
                raise Business(f"Parameter '{name}' is required")
            return _MISSING
        return value

    def get_int(self, name: str, required: bool = False, default: int | None = None) -> int | None:
        value = self._get(name, required)
        return default if value is _MISSING else to_int(value, name)

    def get_float(
        self, name: str, required: bool = False, default: float | None = None
    ) -> float | None:
        value = self._get(name, required)
        return default if value is _MISSING else to_float(value, name)

    def get_str(self, name: str, required: bool = False, default: str | None = None) -> str | None:
        value = self._get(name, required)
        if value is _MISSING:
            return default
        if isinstance(value, (dict, list)):
            raise BadRequest(f"Parameter '{name}' must be a string, got {_show(value)}")
        text = to_str(value, name)
        if required and not text.strip():
            raise Business(f"Parameter '{name}' is required")
        return text

    def get_list(self, name: str, item_type: type = str, required: bool = False) -> list[Any]:
        """A list parameter: ``name[]=`` repeated, ``name[K]=`` keyed, a JSON array or one value.

        Every item of the wrong type is reported in one :class:`BadRequest`.
        """
        value = self._get(name, required)
        if value is _MISSING:
            return []
        if isinstance(value, dict):
            value = list(value.values())
        elif not isinstance(value, list):
            value = [value]
        convert = CONVERTERS[item_type]
        out, bad = [], []
        for i, item in enumerate(value):
            if isinstance(item, (dict, list)):
                bad.append(f"Parameter '{name}[{i}]' must be a plain value, got {_show(item)}")
                continue
            try:
                out.append(convert(item, f"{name}[{i}]"))
            except BadRequest as exc:
                bad.extend(exc.messages)
        if bad:
            raise BadRequest(*bad)
        if required and not out:
            raise Business(f"Parameter '{name}' is required")
        return out

    def get_map(
        self, name: str, value_type: type = float, required: bool = False
    ) -> dict[str, Any]:
        """A map parameter ``name[KEY]=v`` or a JSON object; keys stay strings."""
        value = self._get(name, required)
        if value is _MISSING:
            return {}
        if isinstance(value, list) and not value:
            return {}
        if not isinstance(value, dict):
            raise BadRequest(
                f"Parameter '{name}' must be a map of KEY to value, got {_show(value)}"
            )
        convert = CONVERTERS[value_type]
        out, bad = {}, []
        for key, item in value.items():
            try:
                out[str(key)] = convert(item, f"{name}[{key}]")
            except BadRequest as exc:
                bad.extend(exc.messages)
        if bad:
            raise BadRequest(*bad)
        if required and not out:
            raise Business(f"Parameter '{name}' is required")
        return out

    def get_choice(
        self,
        name: str,
        choices: tuple[str, ...],
        default: str | None = None,
        required: bool = False,
    ) -> str | None:
        """A string among ``choices`` (case-insensitive); anything else is a business error."""
        value = self.get_str(name, required=required)
        if value is None:
            return default
        low = value.strip().lower()
        for choice in choices:
            if choice.lower() == low:
                return choice
        raise Business(f"Invalid value of '{name}': '{value}'; allowed: {', '.join(choices)}")
