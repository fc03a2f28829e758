"""``load_account``: every table of an account in one concurrent pass.

Requests made, for N campaigns: the campaign list (only when ``campaign_ids`` is None), the
dictionaries, the balance and the creative list once each, and per campaign the detailed view
(``mode=full`` gives countries, targets and the four lists), the bid rules and the CPA rules:
``3 N + 4`` in all. They run on a bounded thread pool of ``workers`` threads, each call
through the client's transport, whose adaptive gate paces all of them together when the
service answers 429 (see :mod:`toolkit.client.adaptive`).

>>> import toolkit
>>> client = toolkit.connect()                                         # doctest: +SKIP
>>> account = toolkit.load_account(client)                             # doctest: +SKIP
>>> account.failures                                                   # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..client import Client, redact
from ..errors import ApiError, AuthError, TransportError
from .account import Account
from .campaigns import DETAIL_MODES, campaigns_frame
from .creatives import creatives_frame
from .dictionaries import empty_refs, refs_frames
from .fetch import pool_workers, progress_bar
from .prices import balance_frame
from .rules import bid_rules_frame, cpa_rules_frame
from .schemas import empty, frame
from .targeting import countries_frame, lists_frame, targets_frame

log = logging.getLogger("toolkit.frames")

#: Errors that fail one campaign (or one account-wide call) without stopping the load.
RECOVERABLE = (ApiError, TransportError)


@dataclass
class Failure:
    """One call that failed: the campaign (None for account-wide calls) and why."""

    campaign_id: int | None
    operation: str
    error: str
    message: str

    @classmethod
    def of(cls, campaign_id: int | None, operation: str, exc: BaseException) -> Failure:
        return cls(
            campaign_id,
            getattr(exc, "operation", None) or operation,
            type(exc).__name__,
            redact(str(exc)),
        )


@dataclass
class CampaignData:
    """What one campaign's calls answered."""

    detail: dict[str, Any]
    bid_rules: list[dict[str, Any]]
    cpa_rules: list[dict[str, Any]]


def guarded(call: Callable[[], Any], operation: str, campaign_id: int | None = None) -> Any:
    """``call()``, or a :class:`Failure` for a recoverable error (AuthError is raised)."""
    try:
        return call()
    except AuthError:
        raise
    except RECOVERABLE as exc:
        log.debug("load: %s failed for campaign %s: %s", operation, campaign_id, exc)
        return Failure.of(campaign_id, operation, exc)


def campaign_data(client: Client, campaign_id: int, mode: str) -> CampaignData | Failure:
    """The three calls of one campaign, one after another; the first failure stops them."""
    detail = guarded(lambda: client.campaigns.get(campaign_id, mode), "campaign.item", campaign_id)
    if isinstance(detail, Failure):
        return detail
    bids = guarded(lambda: client.bid_rules.list(campaign_id), "bid_rule.list", campaign_id)
    if isinstance(bids, Failure):
        return bids
    cpa = guarded(lambda: client.cpa_rules.list(campaign_id), "cpa_rule.list", campaign_id)
    if isinstance(cpa, Failure):
        return cpa
    return CampaignData(detail, bids, cpa)


def submit_wide(
    pool: ThreadPoolExecutor, client: Client, ids: Sequence[int] | None
) -> dict[str, Future[Any]]:
    """The account-wide calls of a load submitted to ``pool``, by operation: dictionaries,
    balance, and the creative list unless ``ids`` names no campaign."""
    wide: dict[str, Future[Any]] = {
        "account.dictionaries": pool.submit(
            guarded, client.account.dictionaries, "account.dictionaries"
        ),
        "account.balance": pool.submit(guarded, client.account.balance, "account.balance"),
    }
    if ids is None or ids:
        wide["creative.list"] = pool.submit(guarded, client.creatives.list, "creative.list")
    return wide


def load_account(
    client: Client,
    campaign_ids: Sequence[int] | None = None,
    *,
    mode: str = "full",
    workers: int = 8,
    progress: bool = True,
) -> Account:
    """Load every table of the account (or of the campaigns ``campaign_ids``) into an
    :class:`Account`, ``workers`` requests at a time, with a progress bar.

    ``mode`` is the detail mode: ``full`` (default) fills every table; ``count`` and
    ``short`` skip the contents of targeting (``countries``, ``targets`` and ``lists`` stay
    empty) and ``count`` keeps the ``n_*`` counters. ``workers`` is capped at the client's
    ``pool_size`` (16 by default). ``progress=False`` silences the bar.

    A campaign whose calls fail (deleted meanwhile: ``NotFoundError``; failing after the
    client's retries: ``ApiError``, ``TransportError``) is left out of every table and listed
    in ``account.failures`` with the operation and the error; the others are kept. A failing
    account-wide call (dictionaries, balance, creative list) is listed with ``campaign_id``
    ``<NA>`` and leaves its table empty. ``AuthError`` and a failing campaign list are raised.

    >>> account = load_account(client, workers=8)                        # doctest: +SKIP
    >>> account.join("countries")[["campaign_id", "name", "country", "bid"]]  # doctest: +SKIP
    >>> load_account(client, [1000001, 1000002], progress=False)          # doctest: +SKIP
    """
    if mode not in DETAIL_MODES:
        raise ValueError(f"mode must be one of {', '.join(DETAIL_MODES)}, got {mode!r}")
    workers = pool_workers(client, workers)
    loaded_at = pd.Timestamp.now(tz="UTC")
    ids = None if campaign_ids is None else [int(c) for c in dict.fromkeys(campaign_ids)]
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="toolkit-load")
    results: dict[int, CampaignData | Failure] = {}
    bar = None
    try:
        wide = submit_wide(pool, client, ids)
        if ids is None:  # while the account-wide calls run
            ids = [int(item["id"]) for item in client.campaigns.list()]
        bar = progress_bar(len(ids), "Loading account", "campaign", progress)
        futures = {pool.submit(campaign_data, client, cid, mode): cid for cid in ids}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            bar.update()
        answers = {name: f.result() for name, f in wide.items()}
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    pool.shutdown(wait=True)
    return assemble(client, ids, results, answers, mode=mode, loaded_at=loaded_at)


def assemble(
    client: Client | None,
    ids: Sequence[int],
    results: dict[int, CampaignData | Failure],
    answers: dict[str, Any],
    *,
    mode: str,
    loaded_at: pd.Timestamp,
    refs: dict[str, pd.DataFrame] | None = None,
) -> Account:
    """The :class:`Account` from the answers of a load, in the order of ``ids``; ``refs``
    are the frames of its dictionaries when made already (another account of the service)."""
    failures: list[Failure] = []
    for name, answer in answers.items():
        if isinstance(answer, Failure):
            failures.append(answer)
            answers[name] = None
    loaded: list[CampaignData] = []
    for cid in ids:
        result = results[cid]
        if isinstance(result, Failure):
            failures.append(result)
        else:
            loaded.append(result)
    details = [r.detail for r in loaded]
    dictionaries = answers.get("account.dictionaries")
    if refs is None or not dictionaries:
        refs = {**empty_refs(), **refs_frames(dictionaries)} if dictionaries else empty_refs()
    kept = {int(d["id"]) for d in details}
    creatives = [
        c
        for c in answers.get("creative.list") or []
        if c.get("campaign_id") is not None and int(c["campaign_id"]) in kept
    ]
    account = Account(
        campaigns=campaigns_frame(details, mode),
        bid_rules=bid_rules_frame({int(r.detail["id"]): r.bid_rules for r in loaded}),
        cpa_rules=cpa_rules_frame(
            {**rule, "campaign_id": rule.get("campaign_id", r.detail["id"])}
            for r in loaded
            for rule in r.cpa_rules
        ),
        creatives=creatives_frame(creatives),
        refs=refs,
        balance=balance_frame(answers["account.balance"])
        if answers.get("account.balance")
        else empty("balance"),
        failures=failures_frame(failures),
        loaded_at=loaded_at,
        mode=mode,
        source=redact(client.base_url) if client is not None else None,
    )
    if mode == "full":
        account.countries = countries_frame(details, refs)
        account.targets = targets_frame(details, refs)
        account.lists = lists_frame(details)
    return account


def failures_frame(failures: Sequence[Failure]) -> pd.DataFrame:
    """Frame ``failures``: ``campaign_id``, ``operation``, ``error`` (the exception's class
    name) and ``message``."""
    return frame(
        "failures",
        {
            "campaign_id": [f.campaign_id for f in failures],
            "operation": [f.operation for f in failures],
            "error": [f.error for f in failures],
            "message": [f.message for f in failures],
        },
    )


__all__ = [
    "CampaignData",
    "Failure",
    "assemble",
    "campaign_data",
    "failures_frame",
    "guarded",
    "load_account",
    "submit_wide",
]
