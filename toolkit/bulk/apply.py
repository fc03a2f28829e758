"""Applying a plan: the calls in order, one outcome per campaign and item, compensation of
failed bid changes, a read-back check, and a journal entry for undo.

>>> result = plan.apply(client)                                       # doctest: +SKIP
>>> result.to_frame().outcome.value_counts()                          # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import spec
from ..client.results import BatchResult, parse_message
from ..errors import ApiError, ToolkitError
from .outcomes import ApplyResult, Outcome
from .plan import Call, Plan

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .journal import Journal

ALREADY = {"add": "already_exists", "drop": "not_exists"}


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
            return {cid: {"*": ("failed", str(exc))} for cid in ids}
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
                    if call.action == "drop" and previous is not None and outcome == "applied":
                        dropped[(call.target, cid, item)] = previous
            result.outcomes.extend(answered)
            if book is not None:  # the outcomes as they arrive
                book.call_answered(run_id, seq, answered)
            bar.update(1)
        known = len(result.outcomes)
        sender = _JournaledSender(runner, book, run_id, len(plan.calls))
        _retry_readds(sender, result, dropped, client.options.backoff)
        _compensate(sender, result, dropped)  # type: ignore[arg-type]
        if book is not None:
            book.add_outcomes(run_id, result.outcomes[known:])
    finally:
        bar.close()
    if verify:
        check = read_back(client, result.outcomes)
        result.differences, result.unverified = check.differences, check.unverified
        result.read_back_error = check.error
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


def _failed_readds(
    result: ApplyResult, dropped: dict[tuple[str, int, Any], float]
) -> list[Outcome]:
    return [
        o
        for o in result.outcomes
        if o.action == "add"
        and o.outcome == "failed"
        and o.target in ("country", "bid_rule")
        and (o.target, o.campaign_id, o.item) in dropped
    ]


def _failure(problems: dict[int, dict[Any, tuple[str, str | None]]], cid: int, item: Any):  # noqa: ANN202
    per = problems.get(cid, {})
    failed = per.get("*") or per.get(str(item))
    return failed if failed and failed[0] == "failed" else None


def _retry_readds(
    sender: _JournaledSender,
    result: ApplyResult,
    dropped: dict[tuple[str, int, Any], float],
    backoff: float,
    rounds: int = READD_ROUNDS,
) -> None:
    """A re-add whose drop went through is idempotent: send it again, a few rounds apart,
    so that a bid change does not end with neither the old bid nor the new one. An
    "already been taken" answer means an earlier try landed; the read-back checks the value."""
    for k in range(1, rounds + 1):
        pending = _failed_readds(result, dropped)
        if not pending:
            return
        time.sleep(backoff * 2**k)
        for o in pending:
            if o.bid is None:
                continue
            failed = _failure(
                sender.send(_readd(o.target, o.campaign_id, o.item, o.bid)), o.campaign_id, o.item
            )
            if failed is None:
                o.message = f"applied on retry {k} after: {o.message}"
                o.outcome = "applied"


def _compensate(
    runner: _Runner, result: ApplyResult, dropped: dict[tuple[str, int, Any], float]
) -> None:
    """Restore the old value of items whose drop succeeded but whose re-add failed."""
    for o in list(result.outcomes):
        if o.action != "add" or o.outcome != "failed" or o.target not in ("country", "bid_rule"):
            continue
        old = dropped.get((o.target, o.campaign_id, o.item))
        if old is None:
            continue
        call = _readd(o.target, o.campaign_id, o.item, old)
        failed = _failure(runner.send(call), o.campaign_id, o.item)
        state = "lost" if failed else "restored"
        result.outcomes.append(
            Outcome(
                o.seq,
                "add",
                "add",
                o.target,
                None,
                o.campaign_id,
                o.item,
                old,
                state,
                f"old value {old} "
                + (
                    "could not be restored: " + str(failed[1])
                    if state == "lost"
                    else "restored after: " + str(o.message)
                ),
                old,
            )
        )


@dataclass
class ReadBack:
    """What reading the affected campaigns back found: the ``differences`` from the applied
    outcomes, the outcomes it could not check (``unverified``) and why (``error``)."""

    differences: list[str] = field(default_factory=list)
    unverified: list[Outcome] = field(default_factory=list)
    error: str | None = None


def verify_outcomes(client: Client, outcomes: Iterable[Outcome]) -> list[str]:
    """Read back the affected campaigns; what does not match the applied outcomes (see
    :func:`read_back`, which also says what could not be checked)."""
    return read_back(client, outcomes).differences


def read_back(client: Client, outcomes: Iterable[Outcome]) -> ReadBack:
    """Read back the affected campaigns and compare them with the applied outcomes.

    A failed read never raises: the outcomes of a campaign whose detail or rules could not be
    read (after the client's retries), and language targets when the dictionaries could not
    be, are returned as ``unverified`` with the first error, not as differences.
    """
    from ..frames import load_account

    wanted = [
        o
        for o in outcomes
        if o.outcome in ("applied", "already", "restored")
        and o.target in ("country", "bid_rule", *spec.LISTS, *spec.TARGET_KINDS)
    ]
    final: dict[tuple[Any, ...], Outcome] = {}
    for o in wanted:
        final[(o.target, o.list_type, o.campaign_id, str(o.item))] = o
    ids = sorted({o.campaign_id for o in wanted})
    if not ids:
        return ReadBack()
    try:
        live = load_account(client, ids, progress=False)
    except ToolkitError as exc:  # AuthError: the key was refused meanwhile
        return ReadBack([], list(final.values()), " ".join(str(exc).split()))
    unread: dict[int, str] = {}  # campaign id (-1: the dictionaries) -> why
    errors: list[str] = []
    for f in live.failures.itertuples(index=False):
        message = " ".join(str(f.message).split())
        if pd.isna(f.campaign_id):
            if f.operation != "account.dictionaries":
                continue  # the balance and the creative list are not compared
            unread[-1] = message
        else:
            unread.setdefault(int(f.campaign_id), message)
        errors.append(message)
    check = ReadBack()
    if errors:
        others = len(set(errors)) - 1
        check.error = errors[0] + (f"; and {others} other error(s)" if others else "")
    countries = {
        (int(r.campaign_id), r.country): float(r.bid)
        for r in live.table("countries").itertuples(index=False)
    }
    rules = {
        (int(r.campaign_id), r.item): float(r.bid)
        for r in live.table("bid_rules").itertuples(index=False)
    }
    lists = {
        (int(r.campaign_id), str(r.list), r.item)
        for r in live.table("lists").itertuples(index=False)
    }
    lang = live.refs.get("language")
    code_of = (
        dict(zip(lang["id"].astype(str), lang["code"].astype(str), strict=True))
        if (lang is not None and len(lang))
        else {}
    )
    targets = set()
    for r in live.table("targets").itertuples(index=False):
        kind = str(r.kind).replace("_", "-")
        value = code_of.get(str(r.value), str(r.value)) if kind == "language" else str(r.value)
        lt = None if pd.isna(r.list_type) else str(r.list_type)
        targets.add(
            (int(r.campaign_id), kind, lt if spec.TARGET_KINDS[kind].typed else None, value)
        )
    diffs = check.differences
    for o in final.values():
        if o.campaign_id in unread or (o.target == "language" and -1 in unread):
            check.unverified.append(o)
            continue
        present = o.action == "add" or o.outcome == "restored"
        cid, item = o.campaign_id, str(o.item)
        if o.target == "country":
            have = countries.get((cid, item))
            ok = (have is not None and abs(have - (o.bid or 0)) < 1e-9) if present else have is None
        elif o.target == "bid_rule":
            have = rules.get((cid, item))
            ok = (have is not None and abs(have - (o.bid or 0)) < 1e-9) if present else have is None
        elif o.target in spec.LISTS:
            ok = ((cid, o.target, item) in lists) == present
        else:
            kind = spec.TARGET_KINDS[o.target]
            lt = (o.list_type or "black") if kind.typed else None
            ok = ((cid, o.target, lt, item) in targets) == present
        if not ok:
            state = "present" if present else "absent"
            diffs.append(
                f"campaign {cid} {o.target} {item}: expected {state}"
                + (f" with bid {o.bid}" if present and o.bid is not None else "")
            )
    return check


# --------------------------------------------------------------------------- result workbook


def write_result_workbook(
    result: ApplyResult, desired: dict[str, pd.DataFrame], path: str | Any
) -> Any:
    """The edited sheets with each row's outcome; see
    :func:`toolkit.bulk.result_book.write_result_workbook`."""
    from .result_book import write_result_workbook as write

    return write(result, desired, path)
