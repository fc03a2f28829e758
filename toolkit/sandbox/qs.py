"""Decoding of bracketed query strings into nested values.

The sandbox decodes requests with this code of its own, so that an encoding bug in a client
shows up as a wrong answer instead of being mirrored by the same library on both sides.

>>> decode("items[]=1&items[]=2&id=7")
{'items': ['1', '2'], 'id': '7'}
>>> decode("target[country][US]=0.5&target[category][]=3")
{'target': {'country': {'US': '0.5'}, 'category': ['3']}}
>>> decode("items[0][type]=sum&items[0][amount]=5")
{'items': {'0': {'type': 'sum', 'amount': '5'}}}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl

from .errors import BadRequest

_KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
_PART = re.compile(r"\[([^\[\]]*)\]")


def split_key(key: str) -> list[str]:
    """``a[b][]`` -> ``['a', 'b', '']``; a key that is not well formed stays whole."""
    m = _KEY.match(key)
    if not m:
        return [key]
    return [m.group(1), *_PART.findall(m.group(2))]


def decode_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Build nested dicts and lists from ``(key, value)`` pairs with bracketed keys."""
    root: dict[str, Any] = {}
    for key, value in pairs:
        path = split_key(key)
        node: Any = root
        for i, part in enumerate(path):
            last = i == len(path) - 1
            name = path[0] + "".join(f"[{p}]" for p in path[1 : i + 1])
            if isinstance(node, list):
                if part != "":
                    raise BadRequest(f"Parameter '{name}' mixes list and keyed forms")
                if last:
                    node.append(value)
                    break
                nxt_is_list = path[i + 1] == ""
                child: Any = [] if nxt_is_list else {}
                node.append(child)
                node = child
                continue
            if part == "":
                raise BadRequest(f"Parameter '{name}' mixes list and keyed forms")
            if last:
                if isinstance(node.get(part), (dict, list)):
                    raise BadRequest(f"Parameter '{name}' is given both as a value and nested")
                node[part] = value
                break
            want_list = path[i + 1] == ""
            child = node.get(part)
            if child is None:
                child = [] if want_list else {}
                node[part] = child
            elif not isinstance(child, (dict, list)):
                raise BadRequest(f"Parameter '{name}' is given both as a value and nested")
            elif want_list and isinstance(child, dict):
                raise BadRequest(f"Parameter '{name}' mixes list and keyed forms")
            node = child
    return root


def decode(query: str | bytes) -> dict[str, Any]:
    """Decode a raw query string (or form body); invalid UTF-8 is a :class:`BadRequest`."""
    if isinstance(query, bytes):
        try:
            query = query.decode("ascii")
        except UnicodeDecodeError:
            raise BadRequest("The query string is not valid ASCII/percent-encoded text") from None
    try:
        pairs = parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise BadRequest("The query string is not valid UTF-8") from None
    return decode_pairs(pairs)
