"""Grouped reports (Binom's): one row per level of the report's grouping, each naming its
level (``Level``: 1, 2, ...) and its value (``Name``: the day, the campaign, the token...),
the rows of a level following the row of their parent, each row holding the sums of its
children. Only the deepest rows are an item's statistics; they are flattened into columns
``Level 1``, ``Level 2``... (the names of their ancestors and their own), which ``columns=``
then names (``{"Level 1": "date", "Level 2": "tracker_campaign", "Level 3": "source"}``).
The other rows are left empty (in place, so that lines stay the file's).

>>> import pandas as pd
>>> raw = pd.DataFrame({"Level": ["1", "2", "2"], "Name": ["2026-01-01", "z1", "z2"],
...                     "Clicks": ["30", "10", "20"]})
>>> flatten(raw, "Level", "Name")[0].values.tolist()
[['', '', ''], ['2026-01-01', 'z1', '10'], ['2026-01-01', 'z2', '20']]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import StatsProblem

#: The message of a grouped report whose levels ``columns=`` does not name.
UNNAMED = (
    "a grouped report (Level, Name): say what each level of its grouping is with columns=,"
    ' e.g. {"Level 1": "date", "Level 2": "tracker_campaign", "Level 3": "source"}'
    " (on the command line --column 'Level 1=date' --column 'Level 2=tracker_campaign' ...)"
)
BAD_LEVEL = "not a level of the grouping (1, 2, ...)"


def level_header(k: int) -> str:
    """The column of the names of level ``k``."""
    return f"Level {k}"


def names_levels(columns: object) -> bool:
    """Whether ``columns=`` names a level (``"Level 1"``...)."""
    return any(str(h).strip().lower().startswith("level ") for h in (columns or {}))


def _text(raw: pd.Series) -> pd.Series:
    return raw.astype(object).where(raw.notna(), "").astype(str).str.strip()


def flatten(raw: pd.DataFrame, level: str, name: str) -> tuple[pd.DataFrame, list[StatsProblem]]:
    """The report with columns ``Level 1..N`` (the names of each deepest row's ancestors
    and its own) instead of ``level`` and ``name``, the rows of other levels emptied; and
    the problems of level cells that are not whole numbers >= 1."""
    text = _text(raw[level])
    levels = pd.to_numeric(text, errors="coerce")
    filled = np.any([(_text(raw[c]) != "").to_numpy() for c in raw.columns], axis=0)
    bad = filled & (levels.isna() | (levels < 1) | (levels % 1 != 0)).to_numpy()
    problems = [
        StatsProblem(int(i) + 2, level, raw[level].iloc[i], BAD_LEVEL) for i in np.flatnonzero(bad)
    ]
    depth = int(levels[~bad & filled].max()) if (~bad & filled).any() else 1
    leaf = (levels == depth).to_numpy() & ~bad
    names = _text(raw[name])
    out = raw.drop(columns=[level, name]).astype(object).where(pd.Series(leaf, index=raw.index), "")
    cols = {
        level_header(k): names.where(levels == k).ffill().where(leaf, "").fillna("")
        for k in range(1, depth + 1)
    }
    return pd.concat([pd.DataFrame(cols, index=raw.index), out], axis=1), problems


def depth_sql(level: str) -> str:
    """SQL of a row's level (NULL when the cell is not a number)."""
    return 'TRY_CAST(TRIM(CAST("' + level.replace('"', '""') + '" AS VARCHAR)) AS DOUBLE)'


def flatten_sql(
    source: str, level: str, name: str, others: list[str], depth: int
) -> tuple[str, list[str]]:
    """SQL selecting from ``source`` (which has ``__line``) the flattened report, and its
    headers: ``Level 1..depth`` and ``others``, the rows of other levels NULL."""
    lv = depth_sql(level)
    nm = 'TRIM(CAST("' + name.replace('"', '""') + '" AS VARCHAR))'
    leaf = f"{lv} = {depth}"
    window = "OVER (ORDER BY __line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    cols = ["__line"]
    headers = []
    for k in range(1, depth + 1):
        h = level_header(k)
        cols.append(
            f"CASE WHEN {leaf} THEN last_value(CASE WHEN {lv} = {k} THEN {nm} END IGNORE NULLS)"
            f' {window} END AS "{h}"'
        )
        headers.append(h)
    for h in others:
        q = '"' + h.replace('"', '""') + '"'
        cols.append(f"CASE WHEN {leaf} THEN {q} END AS {q}")
        headers.append(h)
    return f"SELECT {', '.join(cols)} FROM {source}", headers


__all__ = [
    "BAD_LEVEL",
    "UNNAMED",
    "depth_sql",
    "flatten",
    "flatten_sql",
    "level_header",
    "names_levels",
]
