"""What rules remember of their earlier runs: a rule's change is made once per evidence.

A ``factor`` scales the current bid, so the same rule run twice on the same statistics would
step the same bid twice (``x1.2`` then ``x1.44``). To prevent that, a plan made by rules
carries the provenance of each change (:class:`~toolkit.bulk.provenance.Provenance`: the
rule, the item, the window, the last day of the data it was decided on, the value set), and
applying it journals them with the run. :class:`Memory` reads them back:

- a step *counts* when its run applied it: every outcome of its item in that run is
  ``applied``, ``already`` or ``unknown`` (it may have landed, so it is not made twice);
  a ``failed``, ``restored`` (its old value put back) or ``lost`` item does not count, nor
  one never sent (a run cut off before its call), unless a repair of the run applied it;
- a step no longer counts once its run is undone: a later run with ``undoes`` = its run put
  its item back (every outcome of the item in the undo ``applied``/``already``, or none in
  an undo that finished: its plan skipped the item), unless that undo was undone itself; an
  item the undo failed to put back still counts;
- only runs on the same service (base URL) and account as the evaluation are read.

A rule's ``limit`` counts per campaign and evidence: the items a rule changed on the same
evidence (the same last day of data) take their places in it, so that running the rules
again on the same statistics changes no more items than one run would.

A decision of a factor rule whose item the same rule (by name) stepped in a counted step is
``already`` (``earlier_run`` names that run) unless the rule has a ``cooldown`` and the
statistics' last day is at least ``cooldown`` days after the evidence of that step; without a
``cooldown`` a rule steps an item's bid once. Fixed bids, lists and pauses need no memory:
they set a value, and the account already holding it is ``already``.

>>> memory = Memory.read("default", rules, client.base_url, account=1001,
...                      evidence=dt.date(2026, 1, 31))                  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..bulk.calls import CAMPAIGN
from ..bulk.journal import Journal, default_path
from ..bulk.outcome_states import OutcomeState
from ..bulk.provenance import Provenance
from .decide import ALREADY
from .model import Rule

#: Outcomes of an item that make its step count (``unknown``: it may have landed).
COUNTED: tuple[str, ...] = (OutcomeState.APPLIED, OutcomeState.ALREADY, OutcomeState.UNKNOWN)
#: Outcomes of an item in an undo run that put it back.
RESTORED: tuple[str, ...] = (OutcomeState.APPLIED, OutcomeState.ALREADY)

Item = tuple[str, int, str, str]  # rule, campaign_id, level, key


class Step(NamedTuple):
    """A counted step: the run that made it, its evidence (the data's last day) and value."""

    run_id: str
    evidence: dt.date | None
    value: str | None


def steps_again(rule: Rule) -> bool:
    """Whether a rule's change is relative (a ``factor`` of the current bid): made again,
    it would compound, so the journal's memory decides whether it is made."""
    return rule.action == "bid" and rule.factor is not None


def open_memory_journal(journal: Journal | str | os.PathLike[str] | None) -> Journal | None:
    """The journal to read (``"default"``: the one the command line uses), or None for
    ``None`` or a journal file that does not exist yet (nothing remembered; no file made)."""
    if journal is None or isinstance(journal, Journal):
        return journal
    path = default_path() if str(journal) == "default" else Path(journal)
    return Journal(path) if path.exists() else None


@dataclass
class Memory:
    """The last counted step per rule and item (see the module), the evidence day of the
    evaluation that asks (the statistics' last day, or ``as_of``), and per rule and campaign
    how many items it changed on that same evidence (``made``: they take their places in
    the rule's ``limit``)."""

    evidence: dt.date | None = None
    steps: dict[Item, Step] = field(default_factory=dict)
    made: dict[tuple[str, int], int] = field(default_factory=dict)

    @classmethod
    def read(
        cls,
        journal: Journal | str | os.PathLike[str] | None,
        rules: Iterable[Rule],
        base_url: str | None,
        account: int | None = None,
        evidence: dt.date | None = None,
    ) -> Memory:
        """The counted steps of the factor ``rules`` and of the rules with a ``limit``,
        journaled in ``journal`` on the service ``base_url`` and ``account`` (either None:
        not checked)."""
        names = [r.name for r in rules if r.enabled and (steps_again(r) or r.limit is not None)]
        book = open_memory_journal(journal)
        if book is None or not names:
            return cls(evidence)
        rows = _same_account(book.provenance(names), base_url, account)
        if rows.empty:
            return cls(evidence)
        counted = _Counter(book)
        steps: dict[Item, Step] = {}
        same: set[Item] = set()
        for r in rows.itertuples(index=False):
            if not counted.counts(str(r.run_id), int(r.campaign_id), str(r.target), str(r.key)):
                continue
            item = (str(r.rule), int(r.campaign_id), str(r.level), str(r.key))
            day = None if pd.isna(r.evidence) else dt.date.fromisoformat(str(r.evidence))
            if day is not None and day == evidence:
                same.add(item)
            earlier = steps.get(item)
            if earlier is None or _later(day, earlier.evidence):
                steps[item] = Step(str(r.run_id), day, None if pd.isna(r.value) else r.value)
        made: dict[tuple[str, int], int] = defaultdict(int)
        for rule, cid, _, _ in same:
            made[(rule, cid)] += 1
        return cls(evidence, steps, dict(made))

    def made_by(self, rule: Rule) -> dict[int, int]:
        """Per campaign, how many items ``rule`` changed on this same evidence already."""
        return {cid: n for (name, cid), n in self.made.items() if name == rule.name}

    def blocking(self, rule: Rule, campaign_id: int, level: str, key: str) -> Step | None:
        """The earlier step that makes this decision ``already``, or None: a step may be
        made (a rule without memory, no counted step, or ``cooldown`` days of new data)."""
        if not steps_again(rule):
            return None
        step = self.steps.get((rule.name, int(campaign_id), level, key))
        if step is None:
            return None
        if rule.cooldown is None or self.evidence is None or step.evidence is None:
            return step
        due = step.evidence + dt.timedelta(days=rule.cooldown)
        return None if self.evidence >= due else step

    def is_done(self, rule: Rule, rows: pd.DataFrame) -> np.ndarray:
        """Which decided rows the rule stepped already (``already``: outside its limit)."""
        if not steps_again(rule) or not self.steps:
            return np.zeros(len(rows), dtype=bool)
        items = zip(rows["campaign_id"], rows["level"], rows["key"], strict=True)
        found = (self.blocking(rule, int(c), str(lv), str(k)) is not None for c, lv, k in items)
        return np.fromiter(found, bool, len(rows))

    def stepped(self, decisions: pd.DataFrame, rules: Iterable[Rule]) -> pd.DataFrame:
        """The decisions with ``earlier_run``: the run whose step makes a decision
        ``already`` (missing for the others)."""
        by_name = {r.name: r for r in rules}
        runs: list[Any] = []
        for d in decisions.itertuples(index=False):
            rule, step = by_name.get(str(d.rule)), None
            if rule is not None and d.status == ALREADY:
                step = self.blocking(rule, int(d.campaign_id), str(d.level), str(d.key))
            runs.append(pd.NA if step is None else step.run_id)
        return decisions.assign(earlier_run=pd.Series(runs, index=decisions.index, dtype="string"))


def _later(day: dt.date | None, than: dt.date | None) -> bool:
    """Whether evidence ``day`` is at least as new as ``than`` (runs come oldest first)."""
    return than is None or (day is not None and day >= than)


def _same_account(rows: pd.DataFrame, base_url: str | None, account: int | None) -> pd.DataFrame:
    """The rows journaled on the service ``base_url`` and ``account`` (unknown ones kept)."""
    keep = np.ones(len(rows), dtype=bool)
    if base_url:
        urls = rows["base_url"].astype(str).str.rstrip("/")
        keep &= (urls == base_url.rstrip("/")).to_numpy(dtype=bool)
    if account is not None:
        known = rows["account"].notna().to_numpy(dtype=bool)
        same = (rows["account"].fillna(account) == account).to_numpy(dtype=bool)
        keep &= ~known | same
    return rows[keep]


#: How deep undos of undos (and repairs of repairs) are followed: far past any real journal.
DEPTH = 20


class _Counter:
    """Whether a journaled step counts: its run (or a repair of it) applied its item, and no
    undo put it back."""

    def __init__(self, book: Journal) -> None:
        self.book = book
        runs = book.runs()
        self.undone_by, self.repaired_by = _by(runs, "undoes"), _by(runs, "repairs")
        self.finished = set(runs.loc[runs["state"] == "finished", "run_id"].astype(str))
        self._outcomes: dict[str, dict[tuple[int, str, str], list[str]]] = {}

    def outcomes(self, run_id: str, campaign_id: int, target: str, key: str) -> list[str]:
        if run_id not in self._outcomes:
            per: dict[tuple[int, str, str], list[str]] = defaultdict(list)
            frame = self.book.outcomes(run_id)
            for c, t, item, outcome in zip(
                frame["campaign_id"], frame["target"], frame["item"], frame["outcome"], strict=True
            ):
                name = "" if item is None or pd.isna(item) or t == CAMPAIGN else str(item)
                per[(int(c), str(t), name)].append(str(outcome))
            self._outcomes[run_id] = per
        return self._outcomes[run_id].get((campaign_id, target, key), [])

    def counts(self, run_id: str, campaign_id: int, target: str, key: str, depth: int = 0) -> bool:
        """Whether the item of run ``run_id`` landed and stands: every outcome of it
        counted and no undo put it back, or so in a repair of the run."""
        if depth > DEPTH:
            return False
        found = self.outcomes(run_id, campaign_id, target, key)
        landed = bool(found) and all(o in COUNTED for o in found)
        if landed and not self.undone(run_id, campaign_id, target, key):
            return True
        return any(
            self.counts(r, campaign_id, target, key, depth + 1)
            for r in self.repaired_by.get(run_id, [])
        )

    def undone(self, run_id: str, campaign_id: int, target: str, key: str, depth: int = 0) -> bool:
        """Whether a run's item was put back by an undo that stands (not undone itself)."""
        if depth > DEPTH:
            return False
        for undo in self.undone_by.get(run_id, []):
            put_back = self.put_back(undo, campaign_id, target, key, depth + 1)
            if put_back and not self.undone(undo, campaign_id, target, key, depth + 1):
                return True
        return False

    def put_back(self, undo: str, campaign_id: int, target: str, key: str, depth: int) -> bool:
        """Whether the undo run ``undo`` (or a repair of it) put the item back: every outcome
        of it ``applied``/``already``, or none in an undo that finished (its plan skipped
        the item: live showed it as before the run, or changed since, a conflict left alone)."""
        if depth > DEPTH:
            return False
        found = self.outcomes(undo, campaign_id, target, key)
        if found and all(o in RESTORED for o in found):
            return True
        if not found and undo in self.finished:
            return True
        return any(
            self.put_back(r, campaign_id, target, key, depth + 1)
            for r in self.repaired_by.get(undo, [])
        )


def _by(runs: pd.DataFrame, column: str) -> dict[str, list[str]]:
    """``{run: [the runs that name it in column]}`` (``undoes``, ``repairs``), oldest first;
    nothing for a journal without that column."""
    out: dict[str, list[str]] = defaultdict(list)
    if column in runs:
        named = runs[runs[column].notna()]
        for run_id, other in zip(named["run_id"], named[column], strict=True):
            out[str(other)].append(str(run_id))
    return out


def provenance(
    planned: pd.DataFrame, rules: Iterable[Rule], evidence: dt.date | None
) -> list[Provenance]:
    """The provenance of each planned decision (its rule, item, window, evidence and the
    value it sets), for the plan to journal with its run."""
    by_name = {r.name: r for r in rules}
    out = []
    for d in planned.itertuples(index=False):
        rule = by_name[str(d.rule)]
        target = str(d.target)
        out.append(
            Provenance(
                rule.name,
                int(d.campaign_id),
                str(d.level),
                target,
                "" if target == CAMPAIGN else str(d.key),
                rule.window,
                evidence,
                None if d.new is None or pd.isna(d.new) else str(d.new),
            )
        )
    return out


__all__ = ["COUNTED", "Memory", "Step", "open_memory_journal", "provenance", "steps_again"]
