"""Applying a plan: the calls in order, one outcome per campaign and item, compensation of
failed bid changes, a read-back check, and a journal entry for undo.

>>> result = plan.apply(client)                                       # doctest: +SKIP
>>> result.to_frame().outcome.value_counts()                          # doctest: +SKIP
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import spec
from ..client.results import BatchResult, parse_message
from ..errors import ApiError, ToolkitError, TransportError
from .outcomes import ApplyResult, Outcome
from .plan import Call, Plan
from .read_back import VALUED, ReadBack, read_back, verify_outcomes

__all__ = ["ReadBack", "apply_plan", "read_back", "verify_outcomes", "write_result_workbook"]

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .journal import Journal

ALREADY = {"add": "already_exists", "drop": "not_exists"}
#: HTTP statuses of an answer to a write that may have been carried out all the same (the
#: service failed on the way, or a gateway answered for it): the outcome is ``unknown`` until
#: the read-back settles it. A 4xx is a refusal: nothing was done.
MAYBE_DONE = (500, 502, 503, 504)
#: Outcomes of a drop that may have landed.
LANDED = ("applied", "unknown")


class _Runner:
    def __init__(self, client: Client) -> None:
        self.client = client
        self._verticals: dict[str, int] | None = None

    def vertical_id(self, name: Any) -> int:
        if self._verticals is None:
            names = self.client.account.dictionary("vertical")
            self._verticals = {str(v): int(k) for k, v in names.items()}
        if name not in self._verticals:
            raise ToolkitError(f"unknown vertical {name!r}")
        return self._verticals[name]

    def send(self, call: Call) -> dict[int, dict[Any, tuple[str, str | None]]]:
        """Send one call; per campaign, the items whose outcome is not "applied"."""
        c = self.client
        ids = list(call.campaign_ids)
        try:
            if call.target == "campaign":
                if call.action == "update":
                    params = dict(call.params or {})
                    name = params.pop("name")
                    vertical = self.vertical_id(params.pop("vertical"))
                    settings = {k: ("" if v is None else v) for k, v in params.items()}
                    c.campaigns.update(ids[0], name, vertical, **settings)
                    return {}
                return self._batch(getattr(c.campaigns, f"{call.action}_batch")(ids), call)
            if call.target == "bid_rule":
                if call.action == "add":
                    c.bid_rules.add(ids[0], list(call.items), call.bid)
                else:
                    c.bid_rules.drop(ids[0], list(call.items))
                return {}
            if call.target == "creative":
                for creative_id in call.items:
                    getattr(c.creatives, call.action)(int(creative_id))
                return {}
            if call.target == "cpa_rule":
                rules = (call.params or {}).get("rules")
                if call.action == "add":
                    c.cpa_rules.add(ids[0], rules)
                elif call.action == "edit":
                    c.cpa_rules.edit(ids[0], rules)
                else:
                    c.cpa_rules.drop(ids[0], list(call.items))
                return {}
            if call.target in spec.LISTS:
                method = getattr(c.lists, f"{call.action}_batch")
                return self._batch(method(ids, call.target, list(call.items)), call)
            items: Any = dict(call.bids) if call.bids else list(call.items)
            kind = spec.TARGET_KINDS[call.target]
            if not kind.batch_listed:
                getattr(c.targeting, call.action)(
                    ids[0], call.target, items, list_type=call.list_type
                )
                return {}
            method = getattr(c.targeting, f"{call.action}_batch")
            return self._batch(method(ids, call.target, items, list_type=call.list_type), call)
        except ApiError as exc:
            if exc.outcomes:  # a single-campaign call that saved some items
                return {ids[0]: {str(o["item"]): _kind_of(o, call) for o in exc.outcomes}}
            state = "unknown" if exc.http_status in MAYBE_DONE else "failed"
            return {cid: {"*": (state, str(exc))} for cid in ids}
        except TransportError as exc:
            state = "unknown" if exc.maybe_sent else "failed"
            return {cid: {"*": (state, str(exc))} for cid in ids}
        except ToolkitError as exc:
            return {cid: {"*": ("failed", str(exc))} for cid in ids}

    @staticmethod
    def _batch(result: BatchResult, call: Call) -> dict[int, dict[Any, tuple[str, str | None]]]:
        out: dict[int, dict[Any, tuple[str, str | None]]] = {}
        for cid, messages in result.errors.items():
            per: dict[Any, tuple[str, str | None]] = {}
            for message in messages:
                parsed = {**parse_message(message), "message": message}
                if parsed["outcome"] == "campaign_not_found" or parsed["item"] is None:
                    per["*"] = ("failed", message)
                else:
                    per[str(parsed["item"]).lstrip("#")] = _kind_of(parsed, call)
            out[cid] = per
        return out


def _kind_of(parsed: dict[str, Any], call: Call) -> tuple[str, str | None]:
    if parsed["outcome"] == ALREADY.get(call.action):
        return "already", parsed.get("message")
    return "failed", parsed.get("message")


def _items_of(call: Call) -> list[tuple[Any, float | None]]:
    if call.target == "cpa_rule" and call.action == "edit":
        rules = (call.params or {}).get("rules") or [{}]
        return [(rules[0].get("id"), None)]
    if call.target == "campaign" or (call.target == "cpa_rule" and call.action != "drop"):
        return [(None, None)]
    if call.bids:
        return [(k, float(v)) for k, v in call.bids.items()]
    return [(i, call.bid) for i in call.items]


def apply_plan(
    plan: Plan,
    client: Client,
    *,
    progress: bool = True,
    journal: Journal | str | None = "default",
    verify: bool = True,
) -> ApplyResult:
    """Send every call of ``plan`` in order and report each campaign and item.

    Failed adds of a bid change are compensated (the old bid is added back, ``restored``; if
    that fails too, the item is reported ``lost`` with its old value). With ``verify``, the
    affected campaigns are read back and any difference from the plan's intent is listed.
    The journal (``None`` to skip it) is written ahead: each call is committed before it is
    sent and its outcomes as they arrive, so that :func:`toolkit.undo` and
    :func:`toolkit.history` work after the client was killed mid-apply.
    """
    from tqdm.auto import tqdm

    from .journal import open_journal

    book = open_journal(journal) if journal is not None else None
    run_id = book.start_run(client, plan) if book is not None else None
    runner = _Runner(client)
    result = ApplyResult(run_id=run_id)
    dropped: dict[tuple[str, int, Any], float] = {}
    bar = tqdm(total=len(plan.calls), desc="applying", unit="call", disable=not progress)
    try:
        for seq, call in enumerate(plan.calls):
            if book is not None:  # write-ahead: journaled before it is sent
                book.call_sent(run_id, seq, call, _pending(seq, call))
            problems = runner.send(call)
            answered: list[Outcome] = []
            for cid in call.campaign_ids:
                per = problems.get(cid, {})
                for item, bid in _items_of(call):
                    key = "*" if "*" in per else (None if item is None else str(item))
                    outcome, message = (
                        per.get(key, ("applied", None))
                        if key
                        else (per.get("*", ("applied", None)))
                    )
                    answered.append(Outcome.of(seq, call, cid, item, bid, outcome, message))
                    previous = answered[-1].previous
                    if call.action == "drop" and previous is not None and outcome in LANDED:
                        dropped[(call.target, cid, item)] = previous
            result.outcomes.extend(answered)
            if book is not None:  # the outcomes as they arrive
                book.call_answered(run_id, seq, answered)
            bar.update(1)
        known = len(result.outcomes)
        sender = _JournaledSender(runner, book, run_id, len(plan.calls))
        _retry_readds(sender, result, dropped, client.options.backoff)
        unsettled = [o for o in _open_readds(result, dropped) if o.outcome == "unknown"]
        if unsettled:  # read their campaigns back before restoring anything over them
            read_back(client, unsettled, settle_outcomes=True)
        _compensate(sender, result, dropped)
        if book is not None:
            book.add_outcomes(run_id, result.outcomes[known:])
    finally:
        bar.close()
    if verify:
        check = read_back(client, result.outcomes, settle_outcomes=True)
        result.differences, result.unverified = check.differences, check.unverified
        result.read_back_error = check.error
        if check.live is not None:  # a re-add settled failed after its drop landed
            live = check.live
            gone = {
                (t, cid, item): v
                for (t, cid, item), v in dropped.items()
                if cid not in live.unread and live.lookup(t, None, cid, item) is None
            }
            _compensate(sender, result, gone)
    if book is not None:
        book.finish_run(run_id, result, result.outcomes)
    return result


def _pending(seq: int, call: Call) -> list[Outcome]:
    """The outcomes of a call about to be sent: ``unknown``, with the previous values."""
    from .journal import PENDING

    return [
        Outcome.of(seq, call, cid, item, bid, "unknown", PENDING)
        for cid in call.campaign_ids
        for item, bid in _items_of(call)
    ]


class _JournaledSender:
    """Sends calls outside the plan (compensations) through a runner, journaling each one
    before it is sent and its answer after (numbered after the plan's calls)."""

    def __init__(self, runner: _Runner, book: Journal | None, run_id: str | None, first: int):
        self.runner, self.book, self.run_id, self.seq = runner, book, run_id, first

    def send(self, call: Call) -> dict[int, dict[Any, tuple[str, str | None]]]:
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
    if target == "country":
        return Call("add", "add", "country", (cid,), items=(item,), bids={item: bid})
    return Call("add", "add", "bid_rule", (cid,), items=(item,), bid=bid)


def _open_readds(result: ApplyResult, dropped: dict[tuple[str, int, Any], float]) -> list[Outcome]:
    """Re-adds of bid changes whose drop landed (or may have) and that did not: failed, or
    unknown."""
    return [
        o
        for o in result.outcomes
        if o.action == "add"
        and o.outcome in ("failed", "unknown")
        and o.target in VALUED
        and (o.target, o.campaign_id, o.item) in dropped
    ]


def _answer(
    problems: dict[int, dict[Any, tuple[str, str | None]]], cid: int, item: Any
) -> tuple[str, str | None]:
    """The outcome and message of ``item`` of campaign ``cid`` in a call's answer."""
    per = problems.get(cid, {})
    return per.get("*") or per.get(str(item)) or ("applied", None)


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
    read-back checks the value."""
    for k in range(1, rounds + 1):
        pending = [o for o in _open_readds(result, dropped) if o.bid is not None]
        if not pending:
            return
        time.sleep(backoff * 2**k)
        for o in pending:
            call = _readd(o.target, o.campaign_id, o.item, float(o.bid))  # type: ignore[arg-type]
            state, message = _answer(sender.send(call), o.campaign_id, o.item)
            if state == "applied":
                o.message = f"applied on retry {k} after: {o.message}"
            elif state == "already":
                o.message = f"already there on retry {k} ({message}) after: {o.message}"
            else:
                o.message = f"{message} (retry {k}) after: {o.message}"
            o.outcome = state


def _compensate(
    sender: _JournaledSender, result: ApplyResult, dropped: dict[tuple[str, int, Any], float]
) -> None:
    """Restore the old value of items whose drop landed but whose re-add failed (once per
    item: an item already restored or lost is left)."""
    done = {
        (o.target, o.campaign_id, str(o.item))
        for o in result.outcomes
        if o.outcome in ("restored", "lost")
    }
    lost_answers: list[Outcome] = []
    for o in list(result.outcomes):
        if o.action != "add" or o.outcome != "failed" or o.target not in VALUED:
            continue
        old = dropped.get((o.target, o.campaign_id, o.item))
        if old is None or (o.target, o.campaign_id, str(o.item)) in done:
            continue
        done.add((o.target, o.campaign_id, str(o.item)))
        state, message = _answer(
            sender.send(_readd(o.target, o.campaign_id, o.item, old)), o.campaign_id, o.item
        )
        if state in ("applied", "already"):
            state, text = "restored", f"old value {old} restored after: {o.message}"
        elif state == "unknown":
            text = f"old value {old} sent again, its answer lost ({message}) after: {o.message}"
        else:
            state, text = "lost", f"old value {old} could not be restored: {message}"
        result.outcomes.append(
            Outcome(
                o.seq, "add", "add", o.target, None, o.campaign_id, o.item, old, state, text, old
            )
        )
        if state == "unknown":
            lost_answers.append(result.outcomes[-1])
    if lost_answers:  # read back the restores whose answer was lost
        read_back(sender.runner.client, lost_answers, settle_outcomes=True)
        for r in lost_answers:
            r.outcome = {"applied": "restored", "failed": "lost"}.get(r.outcome, r.outcome)


# --------------------------------------------------------------------------- result workbook


def write_result_workbook(
    result: ApplyResult, desired: dict[str, pd.DataFrame], path: str | Any
) -> Any:
    """The edited sheets with each row's outcome; see
    :func:`toolkit.bulk.result_book.write_result_workbook`."""
    from .result_book import write_result_workbook as write

    return write(result, desired, path)
