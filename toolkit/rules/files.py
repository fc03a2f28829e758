"""Reading a rules file (YAML or JSON) within bounds, so that a hostile or broken file is one
:class:`~toolkit.errors.RulesError` in well under a second, never a hang or an internal error:

- at most :data:`MAX_BYTES` (1 MB; a file of a hundred rules is a few kilobytes);
- UTF-8 (with or without a byte order mark); another encoding is named with the first byte
  that is not UTF-8;
- nested at most :data:`MAX_DEPTH` levels deep;
- at most :data:`MAX_NODES` values once every YAML alias (``*name``) is expanded: a file
  whose aliases refer to aliases ("billion laughs") is refused while it is parsed, before
  anything is built from it.

>>> read_rules_text('rules: [{name: a, level: subid}]', "r.yaml")
{'rules': [{'name': 'a', 'level': 'subid'}]}
>>> try:
...     read_rules_text("a: &a [x, x]\\nb: &b [*a, *a]\\nc: [*b, *b, *b]", "r.yaml", max_nodes=10)
... except RulesError as exc:
...     print(exc.problems[0].message)
not readable: more than 10 values once its aliases (*name) are expanded (line 2)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..errors import RuleProblem, RulesError

#: The largest rules file read, in bytes.
MAX_BYTES = 1 << 20
#: The deepest nesting of lists and mappings (a rules file needs 4: rules, a rule, scope,
#: campaigns).
MAX_DEPTH = 20
#: The most values (scalars, lists, mappings) a file may hold with its aliases expanded.
MAX_NODES = 100_000


def read_rules_file(path: Path) -> Any:
    """The document of the YAML or JSON rules file at ``path`` (``{"rules": []}`` for an
    empty one)."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _error(f"cannot read: {exc.strerror}", path) from None
    if len(raw) > MAX_BYTES:
        raise _error(
            f"larger than {MAX_BYTES:,} bytes: not a rules file (split it, or leave out "
            "what is not rules)",
            path,
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _error(
            f"not UTF-8: byte 0x{raw[exc.start]:02x} at line {line} (offset {exc.start}) is "
            "not UTF-8 text; save the file as UTF-8",
            path,
        ) from None
    return read_rules_text(text, str(path), json_file=path.suffix.lower() == ".json")


def read_rules_text(
    text: str, where: str, *, json_file: bool = False, max_nodes: int = MAX_NODES
) -> Any:
    """The document of a rules file's ``text`` (YAML, or JSON when ``json_file``); ``where``
    names it in errors."""
    if json_file:
        try:
            document = json.loads(text) if text.strip() else None
        except RecursionError:
            raise _error(f"not readable: nested more than {MAX_DEPTH} levels deep", where) from None
        except ValueError as exc:
            raise _error(f"not readable: {exc}", where) from None
        _depth(document, where)
    else:
        document = _yaml(text, where, max_nodes)
    return {"rules": []} if document is None else document  # empty: no rules, as a sheet


_QUOTED_RE = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"|#[^\n]*")


def _flow_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest in ``text`` (quoted text and comments left out): the
    YAML scanner looks ahead through every open bracket, in time that grows with the
    square of their number, so a deep one is refused before it is scanned."""
    plain = _QUOTED_RE.sub("", text).encode("utf-8", "replace")
    codes = np.frombuffer(plain, np.uint8)
    steps = np.isin(codes, _OPEN).astype(np.int32) - np.isin(codes, _CLOSE)
    return int(np.cumsum(steps).max(initial=0))


_OPEN = np.array([ord("["), ord("{")], np.uint8)
_CLOSE = np.array([ord("]"), ord("}")], np.uint8)


def _yaml(text: str, where: str, max_nodes: int) -> Any:
    if _flow_depth(text) > MAX_DEPTH:
        raise _error(f"not readable: nested more than {MAX_DEPTH} levels deep", where)
    loader = _BoundedLoader(text, max_nodes)
    try:
        node = loader.get_single_node()
        return None if node is None else loader.construct_document(node)
    except (ValueError, yaml.YAMLError) as exc:  # the line and column are in the message
        raise _error(f"not readable: {exc}", where) from None
    except RecursionError:
        raise _error(f"not readable: nested more than {MAX_DEPTH} levels deep", where) from None
    finally:
        loader.dispose()


class _Bounded(yaml.YAMLError):
    def __init__(self, what: str, mark: Any) -> None:
        super().__init__(f"{what} (line {mark.line + 1})")


class _BoundedLoader(yaml.SafeLoader):
    """A SafeLoader that counts, while it composes, how deep it is and how many values the
    document holds with its aliases expanded, and stops past :data:`MAX_DEPTH` or
    ``max_nodes``: nothing is built before the whole document passed."""

    def __init__(self, stream: str, max_nodes: int) -> None:
        super().__init__(stream)
        self.max_nodes = max_nodes
        self.depth = 0
        self.expanded = 0
        self.sizes: dict[int, tuple[int, int]] = {}  # values and height of each node
        self.heights: list[int] = []  # the height so far of each node being composed

    def compose_node(self, parent: Any, index: Any) -> Any:
        mark = self.peek_event().start_mark
        if self.check_event(yaml.AliasEvent):
            node = super().compose_node(parent, index)
            if id(node) not in self.sizes:
                raise _Bounded("an alias (*name) refers to the value it is in", mark)
            self._count(*self.sizes[id(node)], mark)
            return node
        self.depth += 1
        self.heights.append(0)
        before = self.expanded
        try:
            self._count(1, 1, mark)
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
            height = 1 + self.heights.pop()
        self.sizes[id(node)] = (self.expanded - before, height)
        if self.heights:
            self.heights[-1] = max(self.heights[-1], height)
        return node

    def _count(self, values: int, height: int, mark: Any) -> None:
        self.expanded += values
        if self.expanded > self.max_nodes:
            raise _Bounded(
                f"more than {self.max_nodes:,} values once its aliases (*name) are expanded",
                mark,
            )
        if self.depth + height - 1 > MAX_DEPTH:
            raise _Bounded(f"nested more than {MAX_DEPTH} levels deep", mark)
        if self.heights:
            self.heights[-1] = max(self.heights[-1], height)


def _depth(document: Any, where: str) -> None:
    """Refuse a JSON document nested more than :data:`MAX_DEPTH` levels deep."""
    level, items = 0, [document]
    while items:
        level += 1
        if level > MAX_DEPTH:
            raise _error(f"not readable: nested more than {MAX_DEPTH} levels deep", where)
        nested: list[Any] = []
        for item in items:
            if isinstance(item, dict):
                nested.extend(item.values())
            elif isinstance(item, list):
                nested.extend(item)
        items = nested


def _error(message: str, where: str | Path) -> RulesError:
    return RulesError([RuleProblem(None, None, None, message)], str(where))


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "read_rules_file", "read_rules_text"]
