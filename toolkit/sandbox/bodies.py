"""Checks and decoding of request bodies: JSON and multipart, within the sandbox's bounds.

>>> decode_json(b'{"id": 7, "items": ["a"]}')
{'id': 7, 'items': ['a']}
>>> decode_json(b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}")
Traceback (most recent call last):
...
toolkit.sandbox.errors.BadRequest: The JSON body is nested deeper than 32 levels
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import BadRequest
from .limits import MAX_DEPTH, MAX_PARAMS

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def decode_json(raw: bytes, what: str = "The JSON body") -> Any:
    """Parse ``raw`` as JSON: UTF-8, nested at most ``MAX_DEPTH`` levels, no lone surrogates.

    Any other body is a :class:`BadRequest` that says what is wrong.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"{what} is not valid UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise BadRequest(f"{what} is nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"Malformed JSON body: {exc}") from None
    except ValueError:  # an integer of more than 4300 digits
        raise BadRequest("Malformed JSON body: a number has too many digits") from None
    check_json(value, what, strings=_SURROGATE_ESCAPE.search(raw) is not None)
    return value


def _where(chain: tuple[Any, ...] | None) -> str:
    keys: list[Any] = []
    while chain is not None:
        chain, key = chain
        keys.append(key)
    keys.reverse()
    text = "".join(
        str(k) if i == 0 and isinstance(k, str) else f"[{k}]" for i, k in enumerate(keys)
    )
    return text if len(text) <= 80 else text[:77] + "..."


def _valid(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_json(value: Any, what: str = "The JSON body", strings: bool = True) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH``, more than ``MAX_PARAMS`` values in all and
    (when ``strings``) lone surrogates."""
    stack: list[tuple[Any, int, tuple[Any, ...] | None]] = [(value, 1, None)]
    count = 0
    while stack:
        node, depth, chain = stack.pop()
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            if strings and isinstance(node, str) and not _valid(node):
                raise BadRequest(
                    f"{what} holds a lone surrogate at '{_where(chain)}', which is not valid"
                    " Unicode"
                )
            continue
        if depth > MAX_DEPTH:
            raise BadRequest(f"{what} is nested deeper than {MAX_DEPTH} levels")
        count += len(node)
        if count > MAX_PARAMS:
            where = what[0].lower() + what[1:]
            raise BadRequest(f"Too many values in {where}: more than {MAX_PARAMS}")
        for key, child in items:
            if strings and isinstance(key, str) and not _valid(key):
                raise BadRequest(
                    f"{what} holds a lone surrogate in a key at '{_where(chain) or '.'}',"
                    " which is not valid Unicode"
                )
            if isinstance(child, (dict, list)) or (strings and isinstance(child, str)):
                stack.append((child, depth + 1, (chain, key)))


def check_multipart(raw: bytes, boundary: str | None) -> None:
    """A multipart body must open with its boundary and end with the closing one."""
    if not boundary:
        raise BadRequest("Malformed multipart body: the Content-Type names no boundary")
    try:
        mark = b"--" + boundary.encode("latin-1")
    except UnicodeEncodeError:
        raise BadRequest("Malformed multipart body: the boundary is not ASCII") from None
    if not (raw.startswith(mark) or b"\n" + mark in raw):
        raise BadRequest("Malformed multipart body: no part starts with the boundary")
    closing = mark + b"--"
    if closing not in raw:
        raise BadRequest(
            "Malformed multipart body: it does not end with the closing boundary (truncated?)"
        )
    _check_part_names(raw.split(closing, 1)[0].split(mark)[1:])


_DISPOSITION = re.compile(rb"^content-disposition:[^\r\n]*", re.IGNORECASE | re.MULTILINE)
_NAME = re.compile(rb";\s*name\*?\s*=", re.IGNORECASE)


def _check_part_names(parts: list[bytes]) -> None:
    """Every part of a multipart body names its field: ``Content-Disposition: form-data;
    name="..."``."""
    for number, part in enumerate(parts, 1):
        head = part.split(b"\r\n\r\n", 1)[0]
        disposition = _DISPOSITION.search(head.lstrip())
        if disposition is None:
            raise BadRequest(
                f"Malformed multipart body: part {number} has no Content-Disposition header"
            )
        if not _NAME.search(disposition.group(0)):
            raise BadRequest(
                f"Malformed multipart body: part {number} has no name= in its"
                ' Content-Disposition (send Content-Disposition: form-data; name="field")'
            )
