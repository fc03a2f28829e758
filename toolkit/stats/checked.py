"""Exports whose values this process has checked already, so that reading the same file
again (its windows' sums, then its per-day sums) is one scan that sums, not a check again.

A file is known by what it is now (its size, times, inode and the bytes at both ends) and by
the options it was read with; any change to the file or the options is a new file, checked
again. Only a file that passed every check is remembered; a few at most.

>>> from pathlib import Path
>>> import tempfile
>>> p = Path(tempfile.mkdtemp()) / "s.csv"
>>> _ = p.write_text("date,campaign_id\\n2026-01-01,1\\n")
>>> key = file_key(p, {"layout": None})
>>> remember(key, Checked({"date": "date"}, [], None, None)); known(key) is not None
True
>>> _ = p.write_text("date,campaign_id\\n2026-01-01,2\\n")
>>> known(file_key(p, {"layout": None})) is None
True
>>> forget()
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

#: How many checked files are remembered (the oldest is forgotten first).
LIMIT = 8
#: The bytes read at each end of a file for its key.
ENDS = 1 << 16
_KNOWN: OrderedDict[tuple[Any, ...], Checked] = OrderedDict()


@dataclass(frozen=True)
class Checked:
    """What checking a file found: the columns' mapping, the totals rows left out
    (``(line, reason)``), the value rules (:class:`toolkit.stats.values.Rules`), the last
    day, the columns whose every value is plain as written (header -> the DuckDB type
    that reads them), and a CSV's encoding and separator."""

    mapping: dict[str, str]
    skipped: list[tuple[int, str]]
    rules: Any
    last: dt.date | None
    typable: dict[str, str] = field(default_factory=dict)
    form: tuple[str, str] | None = None


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def file_key(path: str | os.PathLike[str], options: dict[str, Any]) -> tuple[Any, ...]:
    """The key of a file as it is now, read with ``options`` (names to values; dicts
    and lists are taken by their content)."""
    st = os.stat(path)
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        digest.update(f.read(ENDS))
        if st.st_size > ENDS:
            f.seek(max(st.st_size - ENDS, ENDS))
            digest.update(f.read(ENDS))
    stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return (os.path.abspath(path), stamp, digest.hexdigest(), _frozen(options))


def known(key: tuple[Any, ...]) -> Checked | None:
    """What checking the file of ``key`` found, if this process checked it."""
    found = _KNOWN.get(key)
    if found is not None:
        _KNOWN.move_to_end(key)
    return found


def remember(key: tuple[Any, ...], checked: Checked) -> None:
    """Remember a file that passed its checks."""
    _KNOWN[key] = checked
    _KNOWN.move_to_end(key)
    while len(_KNOWN) > LIMIT:
        _KNOWN.popitem(last=False)


def forget() -> None:
    """Forget every file checked so far (the next read of each checks it again)."""
    _KNOWN.clear()


__all__ = ["ENDS", "LIMIT", "Checked", "file_key", "forget", "known", "remember"]
