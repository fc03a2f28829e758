"""What a run did: one :class:`Outcome` per campaign and item of each call, gathered in an
:class:`ApplyResult` (frame, summary, HTML view).

What a person reads counts the plan's changes, as its preview does: a bid change is one
change (``Plan: 2 calls, 1 change``) though the service needs a drop and an add (two
outcomes), so its run says ``Applied: 1 of 1 change``; :meth:`ApplyResult.to_frame` keeps one
row per call's item.

>>> result.to_frame().outcome.value_counts()                          # doctest: +SKIP
>>> result.counted()                                                  # doctest: +SKIP
'42 of 42 changes'
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..frames.schemas import run_outcomes_schema
from .call_kinds import call_kind
from .calls import Call
from .edits import Edit
from .outcome_states import CHANGE_ORDER, NOT_FINISHED, OUTCOMES, UNFINISHED, OutcomeState
from .result_book import result_html


@dataclass(kw_only=True)
class Outcome:
    """What happened to one item of one campaign in one call (its fields given by name)."""

    seq: int
    step: str
    action: str
    target: str
    list_type: str | None
    campaign_id: int
    item: Any
    bid: float | None
    outcome: OutcomeState | str
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
            seq=seq,
            step=call.step,
            action=call.action,
            target=call.target,
            list_type=call.list_type,
            campaign_id=cid,
            item=item,
            bid=bid,
            outcome=outcome,
            message=message,
            previous=call_kind(call.target).previous(call, cid, item),
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
    #: The plan's changes (:meth:`~toolkit.bulk.plan.Plan.edits`), what the counts count;
    #: empty for a result made without a plan (its items are counted then).
    changes: list[Edit] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        well = (OutcomeState.APPLIED, OutcomeState.ALREADY, OutcomeState.RESTORED)
        return all(o.outcome in well for o in self.outcomes) and not self.differences

    def to_frame(self) -> pd.DataFrame:
        """One row per outcome: seq, step, action, target, list_type, campaign_id, item (the
        country, listed item, target value, creative or CPA rule id; missing for a campaign's
        settings and work status), bid, outcome, message, previous."""
        rows = [o.__dict__ for o in self.outcomes]
        columns = run_outcomes_schema(OUTCOMES)
        frame = pd.DataFrame(rows, columns=list(columns), dtype=object)
        frame["item"] = frame["item"].map(_text_or_none)
        frame["previous"] = frame["previous"].map(_text_or_none)
        return frame.astype(columns)

    def change_outcomes(self) -> list[str]:
        """The outcome of each change of the plan (:attr:`changes`, in their order), from
        those of its items (see :data:`CHANGE_ORDER`); of each item when no change is known."""
        if not self.changes:
            return [o.outcome for o in self.outcomes]
        return change_states(self.changes, self.outcomes)

    def counts(self) -> dict[str, int]:
        """How many changes (items, when no change is known) ended in each outcome."""
        counts: dict[str, int] = defaultdict(int)
        for state in self.change_outcomes():
            counts[state] += 1
        return {k: counts[k] for k in OUTCOMES if counts[k]}

    def counted(self) -> str:
        """``42 of 42 changes``, ``40 of 42 changes (1 failed, 1 restored)``: those carried
        out (applied, or already so) of the plan's changes, then the others by outcome."""
        counts = self.counts()
        total = sum(counts.values())
        if not total:
            return "nothing to do"
        unit = "change" if self.changes else "item"
        done = counts.get(OutcomeState.APPLIED, 0) + counts.get(OutcomeState.ALREADY, 0)
        text = f"{done} of {total} {unit}{'s' if total != 1 else ''}"
        rest = [f"{n} {k}" for k, n in counts.items() if k != OutcomeState.APPLIED]
        return text + (f" ({', '.join(rest)})" if rest else "")

    def summary(self, most: int | None = 10, more: str | None = None) -> str:
        """The changes counted (:meth:`counted`), the run id, the first ``most`` items that
        failed or were lost (with the service's message) and read-back differences (None:
        all; else the rest counted, and ``more`` says where to see them: by default
        ``result.to_frame()`` and ``result.differences``)."""
        text = f"Applied: {self.counted()}"
        if self.run_id:
            text += f" (run {self.run_id})"
        bad = [o for o in self.outcomes if o.outcome in UNFINISHED]
        for o in bad[:most]:
            item = "" if o.item is None else f" {o.item}"
            text += f"\n  {o.outcome}: {o.action} {o.target} on campaign {o.campaign_id}{item}" + (
                f": {o.message}" if o.message else ""
            )
        if most is not None and len(bad) > most:
            text += f"\n  ... and {len(bad) - most} more; {more or 'see result.to_frame()'}"
        if self.unverified:
            text += "\n" + self.unverified_note()
        if self.differences:
            shown = self.differences[: None if most is None else max(most, 20)]
            text += f"\n{len(self.differences)} difference(s) after read-back:\n  " + "\n  ".join(
                shown
            )
            if len(self.differences) > len(shown):
                rest = len(self.differences) - len(shown)
                text += f"\n  ... and {rest} more; {more or 'see result.differences'}"
        if self.run_id and (bad or self.differences):
            text += "\n" + self.repair_note()
        return text

    def repair_note(self) -> str:
        """One line: how many changes (items, when no change is known) are not finished, and
        the command that finishes them."""
        counts = self.counts()
        kinds = NOT_FINISHED if self.changes else UNFINISHED
        parts = ", ".join(f"{counts[k]} {k}" for k in kinds if counts.get(k))
        total = sum(counts.get(k, 0) for k in kinds)
        unit = "change(s)" if self.changes else "item(s)"
        if not total and self.differences:
            total, parts = len(self.differences), "differences after read-back"
        return (
            f"{total} {unit} not finished ({parts}):"
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


def change_states(
    changes: Sequence[Edit], outcomes: Sequence[Outcome], missing: str = OutcomeState.UNKNOWN
) -> list[str]:
    """The outcome of each change: the outcomes of its calls' items on its campaign (those of
    its item when the call sends items, else the call's, as a campaign's settings), combined
    by :func:`change_state`; ``missing`` for a change without any (its calls not sent)."""
    by_call: dict[tuple[int, int], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_call[(o.seq + 1, o.campaign_id)].append(o)  # seq counts from 0, Edit.calls from 1
    states = []
    for e in changes:
        mine = [o for n in e.calls for o in by_call.get((n, e.campaign_id), ())]
        key = None if e.key is None else str(e.key)
        own = [o for o in mine if o.item is not None and str(o.item) == key]
        found = {o.outcome for o in own or mine}
        states.append(change_state(found) if found else missing)
    return states


def change_state(outcomes: Collection[str]) -> str:
    """One change's outcome from its items' (:data:`CHANGE_ORDER`); ``unknown`` for none.

    >>> change_state({"applied", "failed", "restored"}), change_state({"applied", "already"})
    ('restored', 'applied')
    """
    return next((k for k in CHANGE_ORDER if k in outcomes), OutcomeState.UNKNOWN)
