"""Applying a plan: the calls in order, one outcome per campaign and item, compensation of
failed bid changes, a read-back check, and a journal entry for undo.

>>> result = plan.apply(client)                                       # doctest: +SKIP
>>> result.to_frame().outcome.value_counts()                          # doctest: +SKIP
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ApiError, ToolkitError, TransportError
from . import result_book
from .call_kinds import SendContext, call_kind, is_valued, item_kind
from .calls import Call
from .faces import PlanLike as Plan
from .journal import PENDING, Journal, open_journal
from .outcome_states import OutcomeState
from .outcomes import ApplyResult, Outcome
from .plan_account import check_plan_bound
from .read_back import ReadBack, read_back, verify_outcomes

__all__ = ["ReadBack", "apply_plan", "read_back", "verify_outcomes", "write_result_workbook"]

if TYPE_CHECKING:  # pragma: no cover
    from ..client import BatchResult, Client

#: Per action, the parsed answer of an item already as the call wants it (its outcome is then
#: :attr:`OutcomeState.ALREADY`).
ALREADY_ANSWER = {"add": "already_exists", "drop": "not_exists"}
#: HTTP statuses of an answer to a write that may have been carried out all the same (the
#: service failed on the way, or a gateway answered for it): the outcome is ``unknown`` until
#: the read-back settles it. The client says so of any other answer that is not a
#: well-formed refusal (``maybe_sent``: a gateway's 408 or 524, an HTML page, a body cut or
#: of the wrong shape, a 429 after an earlier try may have landed).
MAYBE_DONE = (500, 502, 503, 504)
#: Outcomes of a drop after which its item may be gone: carried out, maybe carried out, or
#: found gone ("not exists": an earlier try of the same call, behind a 504 or a dropped
#: connection, may have dropped it). A bid change's failed add is restored over these.
LANDED = (OutcomeState.APPLIED, OutcomeState.UNKNOWN, OutcomeState.ALREADY)


Problems = dict[int, dict[Any, tuple[str, str | None]]]


class _Runner:
    """Sends calls through their call kinds; per campaign, the items not ``applied``."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.context = SendContext(client)

    def send(self, call: Call) -> Problems:
        """Send one call; per campaign, the items whose outcome is not "applied"."""
        ids = list(call.campaign_ids)
        try:
            answer = call_kind(call.target).send(self.context, call)
        except ApiError as exc:
            maybe = exc.maybe_sent or exc.http_status in MAYBE_DONE
            if exc.outcomes:  # a single-campaign call that saved some items
                return {ids[0]: {str(o["item"]): _kind_of(o, call, maybe) for o in exc.outcomes}}
            state = OutcomeState.UNKNOWN if maybe else OutcomeState.FAILED
            return {cid: {"*": (state, str(exc))} for cid in ids}
        except TransportError as exc:
            state = OutcomeState.UNKNOWN if exc.maybe_sent else OutcomeState.FAILED
            return {cid: {"*": (state, str(exc))} for cid in ids}
        except ToolkitError as exc:
            return {cid: {"*": (OutcomeState.FAILED, str(exc))} for cid in ids}
        return {} if answer is None else _batch(answer, call)


def _batch(result: BatchResult, call: Call) -> Problems:
    """The items of a batch answer that were not applied, from its parsed outcomes."""
    out: Problems = {}
    for row in result.outcomes():
        if row["outcome"] == "ok":
            continue
        per = out.setdefault(row["campaign_id"], {})
        if row["outcome"] == "campaign_not_found" or row["item"] is None:
            per["*"] = (OutcomeState.FAILED, row["message"])
        else:
            per[str(row["item"]).lstrip("#")] = _kind_of(row, call)
    return out


def _kind_of(parsed: dict[str, Any], call: Call, maybe: bool = False) -> tuple[str, str | None]:
    """An item's outcome from its parsed message: ``already``, else ``failed`` (``unknown``
    when an earlier try of the call may have carried it out: ``maybe``)."""
    if parsed["outcome"] == ALREADY_ANSWER.get(call.action):
        return OutcomeState.ALREADY, parsed.get("message")
    return OutcomeState.UNKNOWN if maybe else OutcomeState.FAILED, parsed.get("message")


def _items_of(call: Call) -> list[tuple[Any, float | None]]:
    return call_kind(call.target).items_of(call)


def apply_plan(
    plan: Plan,
    client: Client,
    *,
    progress: bool = True,
    journal: Journal | str | None = "default",
    verify: bool = True,
    undoes: str | None = None,
    run_id: str | None = None,
) -> ApplyResult:
    """Send every call of ``plan`` in order and report each campaign and item.

    Failed adds of a bid change are compensated (the old bid is added back, ``restored``; if
    that fails too, the item is reported ``lost`` with its old value). With ``verify``, the
    affected campaigns are read back and any difference from the plan's intent is listed.
    The journal (``None`` to skip it) is written ahead: each call is committed before it is
    sent and its outcomes as they arrive, so that :func:`toolkit.undo` and
    :func:`toolkit.history` work after the client was killed mid-apply. ``undoes`` names the
    run this one undoes (``history()`` shows it). A plan made on another service or account
    than ``client``'s is refused first (:mod:`toolkit.bulk.plan_account`). ``run_id`` is a
    run journaled already by :func:`start_run` (a run of a set of accounts), applied now.
    """
    from tqdm.auto import tqdm

    book = open_journal(journal) if journal is not None else None
    if run_id is None:
        run_id = start_run(plan, client, book, undoes)
    sender = _JournaledSender(_Runner(client), book, run_id, len(plan.calls))
    result = ApplyResult(run_id=run_id, changes=list(plan.edits()))  # what its counts count
    dropped: dict[tuple[str, int, Any], float] = {}
    bar = tqdm(total=len(plan.calls), desc="applying", unit="call", disable=not progress)
    try:
        for seq, call in enumerate(plan.calls):
            result.outcomes.extend(_apply_call(sender, seq, call, dropped))
            bar.update(1)
        known = len(result.outcomes)
        _finish_bid_changes(sender, result, dropped, client.options.backoff)
        if book is not None:
            book.add_outcomes(run_id, result.outcomes[known:])
    finally:
        bar.close()
    if verify:
        _verify(sender, result, dropped)
    if book is not None:
        book.finish_run(run_id, result, result.outcomes)
    return result


def start_run(
    plan: Plan, client: Client, book: Journal | None, undoes: str | None = None
) -> str | None:
    """Refuse a plan of another account than ``client``'s, then journal the run whole (its
    calls, and why each change is made) before any call is sent; its id (None without a
    journal). A run of a set of accounts starts every account's run this way first."""
    check_plan_bound(plan, client)  # another account's plan: refused before the journal
    if book is None:
        return None
    run_id = book.start_run(client, plan, undoes)
    book.add_provenance(run_id, getattr(plan, "provenance", ()))
    return run_id


def _apply_call(
    sender: _JournaledSender, seq: int, call: Call, dropped: dict[tuple[str, int, Any], float]
) -> list[Outcome]:
    """Send one call of the plan, journaled before it is sent and its outcomes as they
    arrive; the drops that landed (or may have) are kept in ``dropped`` with their old bid."""
    book, run_id = sender.book, sender.run_id
    if book is not None:  # write-ahead: journaled before it is sent
        book.call_sent(run_id, seq, call, _pending(seq, call))
    problems = sender.runner.send(call)
    answered: list[Outcome] = []
    for cid in call.campaign_ids:
        for item, bid in _items_of(call):
            outcome, message = _answer(problems, cid, item)
            answered.append(Outcome.of(seq, call, cid, item, bid, outcome, message))
            previous = answered[-1].previous
            if call.action == "drop" and previous is not None and outcome in LANDED:
                dropped[(call.target, cid, item)] = previous
    if book is not None:  # the outcomes as they arrive
        book.call_answered(run_id, seq, answered)
    return answered


def _finish_bid_changes(
    sender: _JournaledSender,
    result: ApplyResult,
    dropped: dict[tuple[str, int, Any], float],
    backoff: float,
) -> None:
    """Retry the failed adds of bid changes whose drop landed, settle those whose answer was
    lost, and restore the old bid of those that still failed."""
    _retry_readds(sender, result, dropped, backoff)
    unsettled = [o for o in _open_readds(result, dropped) if o.outcome == OutcomeState.UNKNOWN]
    if unsettled:  # read their campaigns back before restoring anything over them
        read_back(sender.runner.client, unsettled, settle_outcomes=True)
    _compensate(sender, result, dropped)


def _verify(
    sender: _JournaledSender, result: ApplyResult, dropped: dict[tuple[str, int, Any], float]
) -> None:
    """Read the affected campaigns back, settle the outcomes and list the differences;
    restore the old bid of a re-add settled failed after its drop landed."""
    check = read_back(sender.runner.client, result.outcomes, settle_outcomes=True)
    result.differences, result.unverified = check.differences, check.unverified
    result.read_back_error = check.error
    live = check.live
    if live is None:
        return
    gone = {
        (t, cid, item): v
        for (t, cid, item), v in dropped.items()
        if cid not in live.unread and live.lookup(t, None, cid, item) is None
    }
    _compensate(sender, result, gone)


def _pending(seq: int, call: Call) -> list[Outcome]:
    """The outcomes of a call about to be sent: ``unknown``, with the previous values."""
    return [
        Outcome.of(seq, call, cid, item, bid, OutcomeState.UNKNOWN, PENDING)
        for cid in call.campaign_ids
        for item, bid in _items_of(call)
    ]


class _JournaledSender:
    """Sends calls outside the plan (compensations) through a runner, journaling each one
    before it is sent and its answer after (numbered after the plan's calls)."""

    def __init__(self, runner: _Runner, book: Journal | None, run_id: str | None, first: int):
        self.runner, self.book, self.run_id, self.seq = runner, book, run_id, first

    def send(self, call: Call) -> Problems:
        seq, self.seq = self.seq, self.seq + 1
        if self.book is not None:
            self.book.call_sent(self.run_id, seq, call, kind="compensation")
        problems = self.runner.send(call)
        if self.book is not None:
            self.book.call_answered(self.run_id, seq, [])
        return problems


#: Rounds of retries of a failed re-add (the add half of a bid change) before the old value
#: is restored; the pause before round k is the client's backoff times 2**k.
READD_ROUNDS = 3


def _readd(target: str, cid: int, item: Any, bid: float) -> Call:
    kind = item_kind(target)
    assert kind is not None
    return kind.readd(cid, item, bid)


def _open_readds(result: ApplyResult, dropped: dict[tuple[str, int, Any], float]) -> list[Outcome]:
    """Re-adds of bid changes whose drop landed (or may have) and that did not: failed, or
    unknown."""
    return [
        o
        for o in result.outcomes
        if o.action == "add"
        and o.outcome in (OutcomeState.FAILED, OutcomeState.UNKNOWN)
        and is_valued(o.target)
        and (o.target, o.campaign_id, o.item) in dropped
    ]


def _answer(problems: Problems, cid: int, item: Any) -> tuple[str, str | None]:
    """The outcome and message of ``item`` of campaign ``cid`` in a call's answer."""
    per = problems.get(cid, {})
    own = None if item is None else per.get(str(item))
    return per.get("*") or own or (OutcomeState.APPLIED, None)


def _retry_readds(
    sender: _JournaledSender,
    result: ApplyResult,
    dropped: dict[tuple[str, int, Any], float],
    backoff: float,
    rounds: int = READD_ROUNDS,
) -> None:
    """A re-add whose drop went through is idempotent: send it again, a few rounds apart,
    so that a bid change does not end with neither the old bid nor the new one. An
    "already been taken" answer means an earlier try landed (or the drop did not): the
    read-back checks the value. A refusal after a send that may have landed (``unknown``)
    says nothing of that send: the re-add stays ``unknown`` for the read-back to settle."""
    for k in range(1, rounds + 1):
        pending = [o for o in _open_readds(result, dropped) if o.bid is not None]
        if not pending:
            return
        time.sleep(backoff * 2**k)
        for o in pending:
            call = _readd(o.target, o.campaign_id, o.item, float(o.bid))  # type: ignore[arg-type]
            state, message = _answer(sender.send(call), o.campaign_id, o.item)
            if state == OutcomeState.APPLIED:
                o.message = f"applied on retry {k} after: {o.message}"
            elif state == OutcomeState.ALREADY:
                o.message = f"already there on retry {k} ({message}) after: {o.message}"
            else:
                o.message = f"{message} (retry {k}) after: {o.message}"
            # a refusal after a send that may have landed says nothing of that send
            if state == OutcomeState.FAILED and o.outcome == OutcomeState.UNKNOWN:
                state = OutcomeState.UNKNOWN
            o.outcome = state


def _compensate(
    sender: _JournaledSender, result: ApplyResult, dropped: dict[tuple[str, int, Any], float]
) -> None:
    """Restore the old value of items whose drop landed but whose re-add failed (once per
    item: an item already restored or lost is left). A restore whose answer was lost, or
    answered "already been taken" (which proves the item there, not its bid), is read back
    (:func:`_settle_restores`)."""
    done = {
        (o.target, o.campaign_id, str(o.item))
        for o in result.outcomes
        if o.outcome in (OutcomeState.RESTORED, OutcomeState.LOST)
    }
    lost_answers: list[Outcome] = []
    for o in list(result.outcomes):
        if o.action != "add" or o.outcome != OutcomeState.FAILED or not is_valued(o.target):
            continue
        old = dropped.get((o.target, o.campaign_id, o.item))
        if old is None or (o.target, o.campaign_id, str(o.item)) in done:
            continue
        done.add((o.target, o.campaign_id, str(o.item)))
        state, message = _answer(
            sender.send(_readd(o.target, o.campaign_id, o.item, old)), o.campaign_id, o.item
        )
        if state == OutcomeState.APPLIED:
            state, text = OutcomeState.RESTORED, f"old value {old} restored after: {o.message}"
        elif state == OutcomeState.ALREADY:
            text = f"old value {old} sent again, already there ({message}) after: {o.message}"
        elif state == OutcomeState.UNKNOWN:
            text = f"old value {old} sent again, its answer lost ({message}) after: {o.message}"
        else:
            state, text = OutcomeState.LOST, f"old value {old} could not be restored: {message}"
        result.outcomes.append(
            Outcome(
                seq=o.seq,
                step="add",
                action="add",
                target=o.target,
                list_type=None,
                campaign_id=o.campaign_id,
                item=o.item,
                bid=old,
                outcome=state,
                message=text,
                previous=old,
            )
        )
        if state in (OutcomeState.UNKNOWN, OutcomeState.ALREADY):
            lost_answers.append(result.outcomes[-1])
    if lost_answers:  # read back the restores whose answer was lost or said "already"
        _settle_restores(sender.runner.client, lost_answers)


def _settle_restores(client: Client, restores: list[Outcome]) -> None:
    """Read back restores whose answer was lost or said "already": ``restored`` when live
    has the old value, ``lost`` when the item is absent, ``failed`` when it holds another
    value; ``unknown`` when their campaign could not be read."""
    live = read_back(client, restores, settle_outcomes=True).live
    settled = {
        OutcomeState.APPLIED: OutcomeState.RESTORED,
        OutcomeState.ALREADY: OutcomeState.RESTORED,
        OutcomeState.FAILED: OutcomeState.LOST,
    }
    for r in restores:
        r.outcome = settled.get(r.outcome, r.outcome)
        gone = live is not None and live.readable(r) and live.value(r) is None
        if r.outcome == OutcomeState.LOST and not gone:  # there, with another value than the old
            r.outcome = OutcomeState.FAILED


# --------------------------------------------------------------------------- result workbook


def write_result_workbook(
    result: ApplyResult,
    desired: dict[str, pd.DataFrame],
    path: str | Any,
    refs: dict[str, pd.DataFrame] | None = None,
) -> Any:
    """The edited sheets with each row's outcome; see
    :func:`toolkit.bulk.result_book.write_result_workbook`."""
    return result_book.write_result_workbook(result, desired, path, refs)
