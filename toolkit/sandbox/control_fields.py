"""Checks of the fields of the control endpoints' bodies (faults, reset, moderate).

Each check takes the value as JSON gave it and the field's name, and returns the value as the
sandbox keeps it, or raises :class:`~toolkit.sandbox.errors.BadRequest` naming the field and
what it must be. A control request is checked whole before anything changes.

>>> whole(3.0, "'count'", 0, 10), number(0.5, "'rate'", 0, 1)
(3, 0.5)
>>> whole(1e400, "'campaigns'", 0, 10)
Traceback (most recent call last):
...
toolkit.sandbox.errors.BadRequest: 'campaigns' must be a whole number from 0 to 10, got inf
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from .errors import BadRequest
from .limits import MAX_INT, MIN_INT

MAX_LATENCY_MS = 60_000.0
MAX_COUNT = 1_000_000_000
MAX_RETRY_AFTER = 3600.0
MAX_TEXT = 2048
MAX_NOTE = 10_000
#: Bounds of a reset: campaigns of the demo account, accounts.
MAX_CAMPAIGNS = 100_000
MAX_ACCOUNTS = 1000
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
RESET_FIELDS = ("campaigns", "seed", "accounts")
MODERATE_FIELDS = ("type", "id", "status", "status_note", "convert")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def known(data: Mapping[str, Any], fields: Collection[str], what: str) -> None:
    """Refuse a field ``data`` holds that is not among ``fields``."""
    unknown = sorted(str(k) for k in data if k not in fields)
    if unknown:
        raise BadRequest(f"Unknown {what} fields {unknown}; known: {sorted(fields)}")


def whole(value: Any, name: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (``3.0`` is 3; ``true`` is not a number)."""
    ok = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not ok or not low <= value <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}, got {_shown(value)}")
    return int(value)


def seed(value: Any, name: str = "'seed'") -> int:
    """A seed: a whole number that fits in 64 bits."""
    return whole(value, name, MIN_INT, MAX_INT)


def number(value: Any, name: str, low: float, high: float, *, above: bool = False) -> float:
    """A finite number in ``[low, high]`` (``(low, high]`` when ``above``), as given."""
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (low < value if above else low <= value)
        and value <= high
    )
    if not ok:
        bounds = f"{'(' if above else '['}{low:g}, {high:g}]"
        raise BadRequest(f"{name} must be a number in {bounds}, got {_shown(value)}")
    return value  # as given: 2 stays 2


def text(value: Any, name: str, limit: int = MAX_TEXT, *, lines: bool = False) -> str:
    """A string of at most ``limit`` characters with no control character (but line breaks
    and tabs when ``lines``)."""
    if not isinstance(value, str) or len(value) > limit:
        raise BadRequest(
            f"{name} must be a string of at most {limit} characters, got {_shown(value)}"
        )
    allowed = "\n\r\t" if lines else ""
    if any(not c.isprintable() and c not in allowed for c in value):
        raise BadRequest(f"{name} must not hold a control character or a line break")
    return value


def optional_text(
    value: Any, name: str, limit: int = MAX_TEXT, *, lines: bool = False
) -> str | None:
    """:func:`text`, or None for null."""
    return None if value is None else text(value, name, limit, lines=lines)


def flag(value: Any, name: str) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise BadRequest(f"{name} must be true or false, got {_shown(value)}")
    return value


def path(value: Any, name: str) -> str:
    """A path of the sandbox: a string that starts with ``/``."""
    if not isinstance(value, str) or not value.startswith("/"):
        raise BadRequest(f"{name} must be a path that starts with '/', got {_shown(value)}")
    return text(value, name)


def method(value: Any, name: str) -> str:
    """An HTTP method, in capitals."""
    if not isinstance(value, str) or value.upper() not in HTTP_METHODS:
        raise BadRequest(f"{name} must be one of {', '.join(HTTP_METHODS)}, got {_shown(value)}")
    return value.upper()


def redirect_target(value: Any, name: str) -> str:
    """Where a redirect goes: a path (``/api/...``) or an ``http(s)://`` URL."""
    value = text(value, name)
    if not value.startswith(("/", "http://", "https://")) or " " in value:
        raise BadRequest(
            f"{name} must be a path that starts with '/' or an http:// or https:// URL,"
            f" got {_shown(value)}"
        )
    return value


def reset_args(data: Mapping[str, Any]) -> dict[str, int]:
    """The arguments of :meth:`Sandbox.reset` from a ``/_sandbox/reset`` body."""
    known(data, RESET_FIELDS, "reset")
    args: dict[str, int] = {}
    if data.get("campaigns") is not None:
        args["campaigns"] = whole(data["campaigns"], "'campaigns'", 0, MAX_CAMPAIGNS)
    if data.get("accounts") is not None:
        args["accounts"] = whole(data["accounts"], "'accounts'", 1, MAX_ACCOUNTS)
    if data.get("seed") is not None:
        args["seed"] = seed(data["seed"])
    return args


def moderate_args(data: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of :meth:`Sandbox.moderate` from a ``/_sandbox/moderate`` body."""
    known(data, MODERATE_FIELDS, "moderate")
    for required in ("type", "id", "status"):
        if required not in data:
            raise BadRequest(f"'{required}' is required")
    return {
        "kind": text(data["type"], "'type'", 20),
        "id": whole(data["id"], "'id'", 1, MAX_INT),
        "status": text(data["status"], "'status'", 100),
        "status_note": optional_text(
            data.get("status_note"), "'status_note'", MAX_NOTE, lines=True
        ),
        "convert": optional_text(data.get("convert"), "'convert'", 100),
    }
