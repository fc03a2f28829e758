"""Campaign ids of tracker exports: the tracker's own ids and the network's.

A tracker's report names its own campaigns: Voluum and BeMob by UUIDs, RedTrack by 24 hex
digits (an ObjectId), Keitaro and Binom by small numbers that look like the network's ids but
are not. The statistics frame needs the network's campaign id, which arrives either in a
column of its own (a token the campaign URL passes: name it with ``columns={"Sub ID 3":
"campaign_id"}``) or through a campaign map, ``{tracker id: network id}`` (a dict, or a CSV
or JSON file of two columns), given as ``campaign_map=``. Without either, a file whose
campaign ids are the tracker's is refused in one line saying so.

>>> load_map({"7f3c2a10-0c1e-4b7e-9a53-0d5f2b1c9e11": 1000001})
{'7f3c2a10-0c1e-4b7e-9a53-0d5f2b1c9e11': '1000001'}
>>> looks_like(["7f3c2a10-0c1e-4b7e-9a53-0d5f2b1c9e11"])
'Voluum/BeMob ids (UUIDs)'
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import StatsError, StatsProblem
from .files import csv_form, read_text, refuse
from .totals import trimmed_sql

UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
OBJECT_ID = r"[0-9a-fA-F]{24}"
#: Tracker ids by their form -> what they are, in the refusal's words.
FORMS = ((UUID, "Voluum/BeMob ids (UUIDs)"), (OBJECT_ID, "RedTrack ids (24 hex digits)"))
#: Layouts whose ``tracker_campaign`` is the tracker's own id, as the message names them.
TRACKERS = {
    "voluum": "Voluum",
    "binom": "Binom",
    "binom_grouped": "Binom",
    "redtrack": "RedTrack",
    "keitaro": "Keitaro",
    "bemob": "BeMob",
}
HOW = (
    "pass campaign_map= (--campaign-map) or name the column holding the network's id with columns="
    " (--column NAME=campaign_id)"
)
CampaignMap = Mapping[Any, Any] | str | os.PathLike[str]


def looks_like(values: Iterable[object]) -> str | None:
    """What the ids ``values`` look like when they are a tracker's (UUIDs, 24 hex digits),
    else None."""
    texts = [str(v).strip() for v in values]
    for pattern, what in FORMS:
        if any(re.fullmatch(pattern, t) for t in texts):
            return what
    return None


def foreign(what: str) -> str:
    """The one line refusing ids that look like a tracker's."""
    return f"the campaign ids look like {what}, not the network's: {HOW}"


def own(layout: str, header: str) -> str:
    """The one line refusing a tracker layout's own campaign id column."""
    name = TRACKERS.get(layout, layout)
    return f"the campaign ids in {header!r} are {name}'s own ids, not the network's: {HOW}"


def missing(value: object) -> str:
    """The problem of a tracker id the map lacks."""
    return f"tracker campaign {str(value).strip()!r} is not in the campaign map"


def load_map(campaign_map: CampaignMap | None) -> dict[str, str] | None:
    """``{tracker id: network id}`` as text from a dict or a CSV/JSON file of two columns
    (a header row is allowed); raises :class:`StatsError` naming each bad entry."""
    if campaign_map is None:
        return None
    where = None
    if isinstance(campaign_map, (str, os.PathLike)):
        where = str(campaign_map)
        pairs = _read_pairs(Path(campaign_map))
    else:
        pairs = [(1 + i, k, v) for i, (k, v) in enumerate(dict(campaign_map).items())]
    out: dict[str, str] = {}
    problems = []
    for line, tracker, network in pairs:
        text = str(network).strip()
        number = text[:-2] if text.endswith(".0") else text
        if not number.isdigit() or int(number) <= 0:
            problems.append(
                StatsProblem(
                    line, "campaign map", network, f"not a network campaign id for {tracker!r}"
                )
            )
            continue
        out[str(tracker).strip()] = str(int(number))
    if problems:
        raise StatsError(problems, where or "the campaign map")
    return out


def _read_pairs(path: Path) -> list[tuple[int, Any, Any]]:
    if not path.is_file():
        raise refuse(path, "no such campaign map file (a CSV or JSON file of two columns)")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise refuse(path, f"not a JSON campaign map ({exc})") from None
        items = data.items() if isinstance(data, dict) else data
        try:
            return [(i + 1, k, v) for i, (k, v) in enumerate(items)]
        except (TypeError, ValueError):
            raise refuse(
                path, "a JSON campaign map is an object {tracker id: network id}"
            ) from None
    encoding, sep = csv_form(path)
    rows = list(csv.reader(io.StringIO(read_text(path, encoding)), delimiter=sep))
    out = []
    for i, row in enumerate(rows):
        cells = [c.strip() for c in row if c.strip()]
        if not cells:
            continue
        if len(cells) != 2:
            raise refuse(path, f"line {i + 1}: a campaign map has two columns, not {len(cells)}")
        if i == 0 and not cells[1].isdigit():
            continue  # a header row
        out.append((i + 1, cells[0], cells[1]))
    return out


#: Rows whose campaign ids DuckDB looks at for a tracker's forms (a tracker writes its ids
#: in every row; a stray one further down is still refused, as not a campaign id).
SAMPLED = 100_000


def looks_like_sql(con: Any, source: str, header: str) -> str | None:
    """:func:`looks_like` over the first :data:`SAMPLED` ids of a column of a DuckDB
    relation."""
    cell = trimmed_sql(header)
    hits = ", ".join(
        f"bool_or(regexp_full_match(COALESCE({cell}, ''), '{pattern}'))" for pattern, _ in FORMS
    )
    found = con.execute(f"SELECT {hits} FROM (SELECT * FROM {source} LIMIT {SAMPLED})").fetchone()
    return next((what for hit, (_, what) in zip(found, FORMS, strict=True) if hit), None)


def mapped_sql(
    con: Any,
    source: str,
    header: str,
    cmap: dict[str, str],
    where: str | None = None,
    check: bool = True,
) -> str:
    """Register the map as the table ``__cmap`` and return the SQL of the column's network
    id; raises :class:`StatsError` naming the lines whose tracker id the map lacks (unless
    ``check`` is false: a file whose ids were found in the map already)."""
    import pandas as pd

    frame = pd.DataFrame({"tracker": list(cmap), "network": list(cmap.values())}, dtype=str)
    con.register("__cmap_frame", frame)
    con.execute("CREATE OR REPLACE TEMP TABLE __cmap AS SELECT * FROM __cmap_frame")
    con.unregister("__cmap_frame")
    cell = trimmed_sql(header)
    if not check:
        return f"(SELECT network FROM __cmap WHERE tracker = {cell})"
    rows = con.execute(
        f"SELECT __line + 1, {cell} FROM {source} WHERE COALESCE({cell}, '') <> '' "
        f"AND {cell} NOT IN (SELECT tracker FROM __cmap) ORDER BY __line LIMIT 10000"
    ).fetchall()
    if rows:
        raise StatsError([StatsProblem(int(n), header, v, missing(v)) for n, v in rows], where)
    return f"(SELECT network FROM __cmap WHERE tracker = {cell})"


__all__ = [
    "HOW",
    "TRACKERS",
    "foreign",
    "load_map",
    "looks_like",
    "looks_like_sql",
    "mapped_sql",
    "missing",
    "own",
]
