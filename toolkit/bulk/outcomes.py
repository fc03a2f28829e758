"""What a run did: one :class:`Outcome` per campaign and item of each call, gathered in an
:class:`ApplyResult` (frame, summary, HTML view).

>>> result.to_frame().outcome.value_counts()                          # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .call_kinds import call_kind
from .calls import Call
from .result_book import result_html

#: Every outcome of an item: ``applied``; ``already`` (the service had it, value verified by
#: the read-back); ``failed`` (refused, or not carried out); ``unknown`` (a write whose answer
#: the network hid and that the read-back could not settle); ``restored`` (a bid change's old
#: value put back after its new one failed); ``lost`` (neither could be put back).
OUTCOMES: tuple[str, ...] = ("applied", "already", "failed", "unknown", "restored", "lost")
#: Outcomes that leave an item not as planned: what ``campaign-toolkit repair`` finishes.
UNFINISHED: tuple[str, ...] = ("failed", "unknown", "lost")


@dataclass
class Outcome:
    """What happened to one item of one campaign in one call."""

    seq: int
    step: str
    action: str
    target: str
    list_type: str | None
    campaign_id: int
    item: Any
    bid: float | None
    outcome: str
    message: str | None = None
    previous: Any = None

    @classmethod
    def of(
        cls,
        seq: int,
        call: Call,
        cid: int,
        item: Any,
        bid: float | None,
        outcome: str,
        message: str | None,
    ) -> Outcome:
        """The outcome of ``item`` of campaign ``cid`` in ``call``, with its previous value."""
        return cls(
            seq,
            call.step,
            call.action,
            call.target,
            call.list_type,
            cid,
            item,
            bid,
            outcome,
            message,
            call_kind(call.target).previous(call, cid, item),
        )


@dataclass
class ApplyResult:
    """Every outcome of a run, plus the read-back differences and the journal's run id.

    ``unverified`` holds the outcomes the read-back could not check (their campaign could not
    be read back after the client's retries; ``read_back_error`` says why): they stay as the
    service answered the calls, and are neither confirmed nor counted as differences.
    """

    outcomes: list[Outcome] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    run_id: str | None = None
    unverified: list[Outcome] = field(default_factory=list)
    read_back_error: str | None = None

    @property
    def ok(self) -> bool:
        return all(o.outcome in ("applied", "already", "restored") for o in self.outcomes) and not (
            self.differences
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per outcome: seq, step, action, target, list_type, campaign_id, item (the
        country, listed item, target value, creative or CPA rule id; missing for a campaign's
        settings and work status), bid, outcome, message, previous."""
        rows = [o.__dict__ for o in self.outcomes]
        columns = [
            "seq",
            "step",
            "action",
            "target",
            "list_type",
            "campaign_id",
            "item",
            "bid",
            "outcome",
            "message",
            "previous",
        ]
        frame = pd.DataFrame(rows, columns=columns, dtype=object)
        frame["item"] = frame["item"].map(_text_or_none)
        frame["previous"] = frame["previous"].map(_text_or_none)
        return frame.astype(
            {
                "seq": "Int64",
                "step": "string",
                "action": "string",
                "target": "string",
                "list_type": "string",
                "campaign_id": "Int64",
                "item": "string",
                "bid": "float64",
                "outcome": pd.CategoricalDtype(list(OUTCOMES)),
                "message": "string",
                "previous": "string",
            }
        )

    def summary(self, most: int = 10) -> str:
        """The outcomes counted, the run id, the first ``most`` items that failed or were
        lost (with the service's message), and the read-back differences."""
        counts = defaultdict(int)
        for o in self.outcomes:
            counts[o.outcome] += 1
        parts = [f"{counts[k]} {k}" for k in OUTCOMES if counts[k]]
        text = f"Applied: {', '.join(parts) or 'nothing to do'}"
        if self.run_id:
            text += f" (run {self.run_id})"
        bad = [o for o in self.outcomes if o.outcome in UNFINISHED]
        for o in bad[:most]:
            item = "" if o.item is None else f" {o.item}"
            text += f"\n  {o.outcome}: {o.action} {o.target} on campaign {o.campaign_id}{item}" + (
                f": {o.message}" if o.message else ""
            )
        if len(bad) > most:
            text += f"\n  ... and {len(bad) - most} more; see result.to_frame()"
        if self.unverified:
            text += "\n" + self.unverified_note()
        if self.differences:
            text += f"\n{len(self.differences)} difference(s) after read-back:\n  " + "\n  ".join(
                self.differences[:20]
            )
        if self.run_id and (bad or self.differences):
            text += "\n" + self.repair_note()
        return text

    def repair_note(self) -> str:
        """One line: how many items are not finished, and the command that finishes them."""
        counts = defaultdict(int)
        for o in self.outcomes:
            if o.outcome in UNFINISHED:
                counts[o.outcome] += 1
        parts = ", ".join(f"{counts[k]} {k}" for k in UNFINISHED if counts[k])
        total = sum(counts.values())
        if not total and self.differences:
            total, parts = len(self.differences), "differences after read-back"
        return (
            f"{total} item(s) not finished ({parts}):"
            f" `campaign-toolkit repair {self.run_id}` finishes them"
        )

    def unverified_note(self) -> str:
        """One line: how many items the read-back could not check, on which campaigns, why."""
        ids = sorted({o.campaign_id for o in self.unverified})
        shown = ", ".join(map(str, ids[:10])) + (
            f" and {len(ids) - 10} more" if len(ids) > 10 else ""
        )
        return (
            f"Not verified: {len(self.unverified)} item(s) on {len(ids)} campaign(s) ({shown}):"
            f" the read-back failed ({self.read_back_error or 'unknown error'}); their outcomes"
            " are as the service answered the calls"
        )

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return result_html(self)


def _text_or_none(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    return str(value)
