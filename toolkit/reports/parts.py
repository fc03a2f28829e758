"""The parts of a bid report that its files are made of, whatever the caller holds: a
report (:class:`ReportLike`), a bare report frame, a mapping, or :class:`Parts`; and the
proposals as rows of a country-bids action workbook.

>>> import pandas as pd
>>> p = parts(pd.DataFrame({"campaign_id": [1]}))
>>> p.proposals, p.history, p.title
({}, None, 'Bid report')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from ..bulk.workbook.actions_templates import write_template
from .proposals import action_rows as _action_rows

#: The proposals a file shows, and the title of each (its sheet's name in a workbook).
PROPOSALS: dict[str, str] = {
    "minimum": "to minimum",
    "recommended": "to recommended",
    "cap": "cap to recommended",
}
#: Campaigns whose range plot a file holds at most (those with most bids to look at first).
MAX_CAMPAIGNS = 30


@runtime_checkable
class ReportLike(Protocol):
    """What the files need of a report: its frame and its proposals (``history``, a price
    history frame, is read when the object has it)."""

    frame: pd.DataFrame

    def proposals(self, to: str = ...) -> pd.DataFrame: ...


@dataclass
class Parts:
    """The parts of a report a file is made of."""

    frame: pd.DataFrame
    proposals: dict[str, pd.DataFrame] = field(default_factory=dict)
    history: pd.DataFrame | None = None
    title: str = "Bid report"
    made_at: pd.Timestamp | None = None
    #: The line saying which campaigns the report left out ("" when none).
    left_out: str = ""
    #: The bid rules with their statistics (``report.bid_rules`` of a report made with
    #: ``stats=``; None: the files have no bid rules' section).
    bid_rules: pd.DataFrame | None = None


def _history(report: Any) -> pd.DataFrame | None:
    history = getattr(report, "history", None)
    history = history() if callable(history) else history
    return history if isinstance(history, pd.DataFrame) else None


def parts(report: Any, *, title: str | None = None, history: pd.DataFrame | None = None) -> Parts:
    """:class:`Parts` of a report, a frame, a mapping of the parts, or Parts themselves;
    ``title`` and ``history`` (a price history frame) replace theirs when given."""
    if isinstance(report, Parts):
        out = report
    elif isinstance(report, pd.DataFrame):
        out = Parts(report)
    elif isinstance(report, Mapping):
        out = Parts(**report)
    elif isinstance(report, ReportLike):
        made = getattr(report, "made_at", None)
        found = {to: report.proposals(to) for to in PROPOSALS}
        left = str(getattr(report, "left_out_note", "") or "")
        out = Parts(report.frame, found, _history(report), made_at=made, left_out=left)
        if getattr(report, "stats", None) is not None:
            out.bid_rules = getattr(report, "bid_rules", None)
    else:
        raise TypeError(f"a report, a report frame or Parts, not {type(report).__name__}")
    if title is not None or history is not None:
        out = replace(
            out, title=title or out.title, history=history if history is not None else out.history
        )
    return out


# ----------------------------------------------------------------------------- proposals


def old_bid_column(proposal: pd.DataFrame) -> str:
    """The current bid's column of a proposal (``old_bid``, or ``bid``)."""
    return "old_bid" if "old_bid" in proposal.columns else "bid"


def action_rows(proposal: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of a country-bids action workbook that set a proposal's new bids
    (:func:`toolkit.reports.proposals.action_rows`); rows without a new bid, or whose bid
    does not change, are left out."""
    if not len(proposal):
        return []
    old = proposal[old_bid_column(proposal)].astype("float64")
    new = proposal["new_bid"].astype("float64")
    moved = new.notna() & (old.isna() | ~np.isclose(new, old, rtol=0, atol=1e-12))
    return _action_rows(proposal[moved.to_numpy()])


def proposal_totals(proposals: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per proposal: bids moved, campaigns, and the estimated spend a day now and
    with the new bids, summed over the bids that have an estimate (a CPC bid needs a ctr),
    where the proposal has ``spend_now``/``spend_new``; ``bids with spend unknown`` counts
    the bids left out of those sums (never taken as 0)."""
    rows = []
    for to, df in proposals.items():
        row: dict[str, Any] = {
            "proposal": PROPOSALS.get(to, to),
            "bids": len(action_rows(df)),
            "campaigns": int(df["campaign_id"].nunique()) if len(df) else 0,
        }
        if "spend_new" in df.columns:
            spend = [df[c] for c in ("spend_now", "spend_new") if c in df.columns]
            unknown = pd.concat(spend, axis=1).isna().any(axis=1) if len(df) else []
            row["bids with spend unknown"] = int(sum(unknown))
        for col in ("spend_now", "spend_new", "spend_change"):
            if col in df.columns:
                row[f"{col} (USD a day)"] = float(df[col].sum(min_count=1 if len(df) else 0))
        rows.append(row)
    return pd.DataFrame(rows)


def proposal_workbook(
    proposal: pd.DataFrame, path: str | os.PathLike[str], *, to: str = ""
) -> Path:
    """A country-bids action workbook (``actions`` sheet) that sets a proposal's new bids:
    ``campaign-toolkit plan PATH`` shows its calls, ``apply`` applies them."""
    title = "Country bids: proposal" + (f" {PROPOSALS.get(to, to)}" if to else "")
    text = [
        "Each row sets the bid of a campaign in a country to the proposal's new bid (USD, in "
        "the campaign's own unit). Delete the rows you do not want, then plan and apply."
    ]
    return write_template(path, title, text, action_rows(proposal))


__all__ = [
    "MAX_CAMPAIGNS",
    "PROPOSALS",
    "Parts",
    "ReportLike",
    "action_rows",
    "old_bid_column",
    "parts",
    "proposal_totals",
    "proposal_workbook",
]
