"""Decoding of bracketed query strings into nested values.

The sandbox decodes requests with this code of its own, so that an encoding bug in a client
shows up as a wrong answer instead of being mirrored by the same library on both sides.
Decoding is linear in the size of the input; the number of parameters and their nesting are
bounded (see :mod:`toolkit.sandbox.limits`).

>>> decode("items[]=1&items[]=2&id=7")
{'items': ['1', '2'], 'id': '7'}
>>> decode("target[country][US]=0.5&target[category][]=3")
{'target': {'country': {'US': '0.5'}, 'category': ['3']}}
>>> decode("items[0][type]=sum&items[0][amount]=5")
{'items': {'0': {'type': 'sum', 'amount': '5'}}}
>>> decode("search=M%C3%BCnchen") == decode("search=München".encode()) == {"search": "München"}
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl

from .errors import BadRequest
from .limits import MAX_DEPTH, MAX_PARAMS

_KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
_PART = re.compile(r"\[([^\[\]]*)\]")


def show_key(key: str, limit: int = 60) -> str:
    """A parameter name as an error message quotes it: shortened, invalid UTF-8 as ``\\xNN``."""
    text = key.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def split_key(key: str) -> list[str]:
    """``a[b][]`` -> ``['a', 'b', '']``; a key that is not well formed stays whole.

    A key nested deeper than :data:`~toolkit.sandbox.limits.MAX_DEPTH` levels is a
    :class:`BadRequest`.
    """
    m = _KEY.match(key)
    if not m:
        return [key]
    parts = [m.group(1), *_PART.findall(m.group(2))]
    if len(parts) > MAX_DEPTH:
        raise BadRequest(
            f"Parameter '{show_key(key)}' is nested deeper than {MAX_DEPTH} levels ({len(parts)})"
        )
    return parts


def _name(path: list[str], upto: int) -> str:
    return path[0] + "".join(f"[{p}]" for p in path[1 : upto + 1])


def decode_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Build nested dicts and lists from ``(key, value)`` pairs with bracketed keys."""
    root: dict[str, Any] = {}
    for key, value in pairs:
        path = split_key(key)
        node: Any = root
        for i in range(len(path) - 1):
            node = _list_child(node, path, i) if isinstance(node, list) else _child(node, path, i)
        _set(node, path, value)
    return root


def _mixed(path: list[str], i: int) -> BadRequest:
    return BadRequest(f"Parameter '{_name(path, i)}' mixes list and keyed forms")


def _value_and_nested(path: list[str], i: int) -> BadRequest:
    return BadRequest(f"Parameter '{_name(path, i)}' is given both as a value and nested")


def _list_child(node: list[Any], path: list[str], i: int) -> Any:
    """A new container appended to a list, for part ``i`` of ``path`` (``[]``)."""
    if path[i] != "":
        raise _mixed(path, i)
    child: Any = [] if path[i + 1] == "" else {}
    node.append(child)
    return child


def _child(node: dict[str, Any], path: list[str], i: int) -> Any:
    """The container under key ``path[i]`` of a dict, made when missing."""
    part = path[i]
    if part == "":
        raise _mixed(path, i)
    want_list = path[i + 1] == ""
    child = node.get(part)
    if child is None:
        child = [] if want_list else {}
        node[part] = child
    elif not isinstance(child, (dict, list)):
        raise _value_and_nested(path, i)
    elif want_list and isinstance(child, dict):
        raise _mixed(path, i)
    return child


def _set(node: Any, path: list[str], value: str) -> None:
    """Put ``value`` at the last part of ``path`` inside ``node``."""
    i = len(path) - 1
    part = path[i]
    if isinstance(node, list):
        if part != "":
            raise _mixed(path, i)
        node.append(value)
        return
    if part == "":
        raise _mixed(path, i)
    if isinstance(node.get(part), (dict, list)):
        raise _value_and_nested(path, i)
    node[part] = value


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def decode(query: str | bytes, what: str = "query string") -> dict[str, Any]:
    """Decode a raw query string (or form body, ``what`` names it in errors).

    Raw bytes and percent-encoded bytes are read as UTF-8; invalid UTF-8, more than
    :data:`~toolkit.sandbox.limits.MAX_PARAMS` parameters and keys nested deeper than
    :data:`~toolkit.sandbox.limits.MAX_DEPTH` levels are a :class:`BadRequest` naming the
    parameter.
    """
    if isinstance(query, bytes):
        query = query.decode("utf-8", "surrogateescape")
    if query.count("&") >= MAX_PARAMS:
        raise BadRequest(f"Too many parameters in the {what}: more than {MAX_PARAMS}")
    pairs = parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")
    bad = [
        f"The {what} is not valid UTF-8: parameter '{show_key(key)}'"
        for key, value in pairs
        if not (_is_utf8(key) and _is_utf8(value))
    ]
    if bad:
        raise BadRequest(*bad[:10])
    return decode_pairs(pairs)
