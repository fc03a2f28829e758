"""Payouts: the revenue a conversion brings, per campaign and per country, for the break-even
rate of statistical rules.

A campaign that has not converted in a rule's window has no revenue per conversion to read,
so its break-even rate is unknown. A payouts table says it: a CSV or XLSX file (or a frame)
with the columns ``campaign_id``, ``country`` (blank: every country of the campaign) and
``payout`` (USD per conversion); a per-GEO offer gives a row per country. A source or subId
whose statistics say where its clicks went (a ``country`` column) takes the click-weighted mix
of its countries' payouts instead (:mod:`toolkit.rules.geo_mix`).

.. code-block:: text

    campaign_id,country,payout
    1000001,,2.50
    1000002,US,63
    1000002,DE,41
    1000002,,30

>>> table = read_payouts(pd.DataFrame({"campaign_id": [7, 7], "country": ["", "us"],
...                                    "payout": [2.5, 4.0]}))
>>> items = pd.DataFrame({"campaign_id": [7, 7, 8], "level": ["country", "subid", "subid"],
...                       "key": ["US", "ab12", "cd34"], "revenue": [0.0] * 3,
...                       "conversions": [0] * 3})
>>> payout_for(items, table, None).tolist()
[4.0, 2.5, nan]
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ValidationError
from ..stats.countries import country_codes
from ..stats.schema import COUNTRY
from .model import NUMBERS

#: The columns of a payouts table.
PAYOUT_COLUMNS: tuple[str, ...] = ("campaign_id", COUNTRY, "payout")
#: The status of an item a rule would decide on if its payout were known.
NO_PAYOUT = "no payout known"
#: How a decision without a payout says how to give one.
HOW_TO_GIVE = (
    "give payout: in the rule, or a payouts table (payouts= in Python, --payouts FILE on the"
    " command line; columns campaign_id, country, payout)"
)


def read_payouts(source: Any) -> pd.DataFrame:
    """A payouts table from a CSV or XLSX file's path or a frame: one row per campaign and
    country (``country`` "" for the campaign's every country), ``payout`` in USD per
    conversion. A missing column, a campaign id that is not a whole number, a country that
    is not a country, a payout that is not a number above 0 (up to 1,000,000), or one
    campaign and country given twice is a :class:`~toolkit.errors.ValidationError` naming
    the file and line.

    >>> read_payouts(pd.DataFrame({"campaign_id": ["7"], "payout": ["63"]})).to_dict("records")
    [{'campaign_id': 7, 'country': '', 'payout': 63.0}]
    """
    where, frame, first = _frame(source)
    missing = [c for c in ("campaign_id", "payout") if c not in frame]
    if missing:
        raise ValidationError(
            f"{where}: no {', '.join(missing)} column; a payouts table has the columns"
            f" {', '.join(PAYOUT_COLUMNS)} (country blank for every country)"
        )
    if COUNTRY not in frame:
        frame = frame.assign(**{COUNTRY: ""})
    rows = [_row(r, where, first + i) for i, r in enumerate(frame.to_dict("records"))]
    out = pd.DataFrame(rows, columns=list(PAYOUT_COLUMNS))
    out = out.astype({"campaign_id": "int64", COUNTRY: "string", "payout": "float64"})
    twice = out.duplicated(["campaign_id", COUNTRY], keep=False)
    if twice.any():
        i = int(np.flatnonzero(twice.to_numpy())[0])
        cid, country = out.loc[i, "campaign_id"], out.loc[i, COUNTRY] or "every country"
        raise ValidationError(
            f"{where}: campaign {cid}, {country} has more than one payout (line {first + i});"
            " keep one row per campaign and country"
        )
    return out


def _frame(source: Any) -> tuple[str, pd.DataFrame, int]:
    """Where the table comes from (for messages), its rows as text, and the line of its
    first row."""
    if isinstance(source, pd.DataFrame):
        return "payouts", source.copy(), 1
    if not isinstance(source, (str, os.PathLike)):
        raise ValidationError(
            f"payouts: {type(source).__name__} is not a payouts table; give a CSV or XLSX"
            " file's path or a frame with the columns campaign_id, country, payout"
        )
    path = Path(source)
    if not path.is_file():
        raise ValidationError(f"{path}: no such file (the payouts table: CSV or XLSX)")
    if path.suffix.lower() in (".xlsx", ".xlsm"):
        frame = pd.read_excel(path, dtype=str, keep_default_na=False)
    else:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    return str(path), frame, 2


def _row(row: dict[str, Any], where: str, line: int) -> tuple[int, str, float]:
    at = f"{where}, line {line}"
    text = str(row["campaign_id"]).strip()
    if text.endswith(".0"):
        text = text[:-2]
    if not text.isdigit():
        raise ValidationError(f"{at}: campaign_id {row['campaign_id']!r} is not a campaign id")
    country = row.get(COUNTRY)
    country = "" if country is None or pd.isna(country) else str(country).strip()
    if country:
        code = str(country_codes([country])[0])
        if len(code) != 2 or not code.isalpha() or not code.isupper():
            raise ValidationError(f"{at}: country {country!r} is not a country (ISO code: US)")
        country = code
    low, high, _ = NUMBERS["payout"]
    try:
        payout = float(str(row["payout"]).strip().replace(",", "."))
    except ValueError:
        payout = math.nan
    if not (math.isfinite(payout) and low < payout <= high):
        raise ValidationError(
            f"{at}: payout {row['payout']!r} is not a number above 0 and at most {high:,g}"
            " (USD per conversion)"
        )
    return int(text), country, payout


def payout_for(items: pd.DataFrame, table: pd.DataFrame | None, rule_payout: Any) -> np.ndarray:
    """Per item (``campaign_id``, ``level``, ``key``; ``revenue`` and ``conversions`` for the
    last resort), its payout: a country item's own country in ``table``, else the
    campaign's row for every country, else ``rule_payout`` (the rule's ``payout``), else the
    campaign's revenue over its conversions in the items, else NaN (no payout known)."""
    n = len(items)
    out = np.full(n, np.nan)
    if table is not None and len(table) and n:
        ids = items["campaign_id"].astype("int64").to_numpy()
        every = table[table[COUNTRY] == ""].set_index("campaign_id")["payout"]
        out = pd.Series(ids).map(every).to_numpy(dtype=float)
        per = table[table[COUNTRY] != ""]
        if len(per):
            geo = per.set_index(["campaign_id", COUNTRY])["payout"]
            keys = items["key"].astype(str).str.upper().to_numpy()
            pairs = pd.MultiIndex.from_arrays([ids, keys])
            own = pd.Series(geo.reindex(pairs).to_numpy(dtype=float))
            own[(items["level"].astype(str) != COUNTRY).to_numpy()] = np.nan
            out = np.where(own.notna().to_numpy(), own.to_numpy(), out)
    if rule_payout is not None:
        out = np.where(np.isnan(out), float(rule_payout), out)
    if np.isnan(out).any() and n:
        sums = items.groupby("campaign_id", observed=True)[["revenue", "conversions"]]
        sums = sums.transform("sum")
        with np.errstate(divide="ignore", invalid="ignore"):
            own = np.where(sums["conversions"] > 0, sums["revenue"] / sums["conversions"], np.nan)
        out = np.where(np.isnan(out), own, out)
    return out


__all__ = ["HOW_TO_GIVE", "NO_PAYOUT", "PAYOUT_COLUMNS", "payout_for", "read_payouts"]
