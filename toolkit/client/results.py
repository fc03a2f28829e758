"""Results of batch calls, and the service's messages parsed into outcomes.

>>> parse_message("Error on save item ab12; CampaignId: 7; Item has already been taken")
{'outcome': 'already_exists', 'item': 'ab12', 'campaign_id': 7}
>>> parse_message("Error on find quality item: high; CampaignId: 7")["outcome"]
'not_exists'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import spec
from ..errors import ApiError, NotFoundError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

OUTCOMES: tuple[str, ...] = (
    "ok",
    "already_exists",
    "not_exists",
    "campaign_not_found",
    "invalid",
    "other",
)


def _pattern(template: str) -> re.Pattern[str]:
    """A regex from a message template of :mod:`toolkit.spec`."""
    parts = re.split(r"(\{\w+\})", template)
    out = []
    for part in parts:
        if part == "{item}":
            out.append(r"(?P<item>\S+?)")
        elif part == "{campaign_id}":
            out.append(r"(?P<campaign_id>\d+)")
        elif part == "{name}":
            out.append(r"(?P<name>.*?)")
        else:
            out.append(re.escape(part))
    return re.compile("^" + "".join(out) + "$")


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    taken = {spec.MSG_SAVE_TAKEN} | {k.save_error for k in spec.TARGET_KINDS.values()}
    missing = {spec.MSG_DROP_MISSING, spec.MSG_FIND_ITEM} | {
        k.missing_error for k in spec.TARGET_KINDS.values()
    }
    campaign = {spec.MSG_CAMPAIGN_NOT_FOUND, spec.MSG_CAMPAIGN_NOT_IN_ACCOUNT}
    table = [("already_exists", t) for t in sorted(taken)]
    table += [("not_exists", t) for t in sorted(missing)]
    table += [("campaign_not_found", t) for t in sorted(campaign)]
    return [(outcome, _pattern(t)) for outcome, t in table]


_PATTERNS = _patterns()
_INVALID = re.compile(
    r"^(Invalid |Targeting '|Parameter '.*' is not available|Too many )", re.IGNORECASE
)
_INVALID_ITEM = re.compile(r"^Invalid [\w -]+?(?: item)?: (?P<item>\S+?)(?:;| |$)")


def parse_message(message: str) -> dict[str, Any]:
    """The outcome a service message means, and the item and campaign it names."""
    for outcome, pattern in _PATTERNS:
        m = pattern.match(message)
        if m:
            found = m.groupdict()
            out: dict[str, Any] = {"outcome": outcome, "item": found.get("item")}
            if found.get("campaign_id"):
                out["campaign_id"] = int(found["campaign_id"])
            if outcome == "campaign_not_found":
                out["item"] = None
            return out
    if _INVALID.match(message):
        m = _INVALID_ITEM.match(message)
        return {"outcome": "invalid", "item": m.group("item") if m else None}
    return {"outcome": "other", "item": None}


NOT_FOUND_PREFIXES = ("Campaign not found #", "Error on find campaign #", "Creative not found #")


def single_error(
    operation: str, answer: Mapping[str, Any], *, http_status: int = 200, maybe_sent: bool = False
) -> ApiError:
    """The exception for a ``status: error`` answer of a single operation: its messages, each
    parsed (:func:`parse_message`); a :class:`~toolkit.errors.NotFoundError` when every message
    says the campaign or creative is not found. ``maybe_sent``: an earlier try of the same call
    may have been carried out (the transport knows)."""
    raw = answer.get("errorList") or []
    messages = [str(m) for m in (raw.values() if isinstance(raw, Mapping) else raw)]
    if messages and all(m.startswith(NOT_FOUND_PREFIXES) for m in messages):
        return NotFoundError(operation, http_status, messages, maybe_sent=maybe_sent)
    outcomes = [{**parse_message(m), "message": m} for m in messages]
    return ApiError(operation, http_status, messages, outcomes, maybe_sent=maybe_sent)


@dataclass
class BatchResult:
    """The merged answer of one or more batch calls (one per chunk).

    ``succeeded`` and ``failed`` are campaign ids; ``errors`` maps a failed campaign id to its
    messages. :meth:`to_frame` gives one row per campaign and message.

    >>> r = BatchResult.from_answers("list.add_batch.subid_black", [{"status": "ok",
    ...     "mode": "batch", "result": {"success": [1], "failed": [{"id": 2, "errorList":
    ...     {"0": "Error on save item ab; CampaignId: 2; Item has already been taken"}}]}}])
    >>> r.succeeded, r.failed, r.ok
    ([1], [2], False)
    """

    operation: str
    succeeded: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    errors: dict[int, list[str]] = field(default_factory=dict)
    calls: int = 0

    @classmethod
    def from_answers(cls, operation: str, answers: list[dict[str, Any]]) -> BatchResult:
        result = cls(operation)
        for answer in answers:
            result.add_answer(answer)
        return result

    def add_answer(self, answer: dict[str, Any]) -> None:
        """Merge one batch answer ``{status, mode: batch, result: {success, failed}}``."""
        self.calls += 1
        body = answer.get("result") or {}
        for cid in body.get("success") or []:
            self.succeeded.append(int(cid))
        for entry in body.get("failed") or []:
            cid = int(entry["id"])
            raw = entry.get("errorList") or []
            messages = list(raw.values()) if isinstance(raw, dict) else list(raw)
            if cid not in self.errors:
                self.failed.append(cid)
                self.errors[cid] = []
            self.errors[cid].extend(str(m) for m in messages)

    def finish(self) -> None:
        """After the last chunk: a campaign that failed in any chunk is not a success."""
        self.succeeded = [c for c in dict.fromkeys(self.succeeded) if c not in self.errors]

    @property
    def ok(self) -> bool:
        """True when no campaign failed."""
        return not self.failed

    def outcomes(self) -> list[dict[str, Any]]:
        """One record per campaign and message (``outcome`` ``ok`` for a succeeded campaign)."""
        rows: list[dict[str, Any]] = []
        for cid in self.succeeded:
            rows.append({"campaign_id": cid, "outcome": "ok", "item": None, "message": None})
        for cid in self.failed:
            for message in self.errors.get(cid) or [""]:
                parsed = parse_message(message)
                rows.append(
                    {
                        "campaign_id": cid,
                        "outcome": parsed["outcome"],
                        "item": parsed["item"],
                        "message": message,
                    }
                )
        return rows

    def to_frame(self) -> pd.DataFrame:
        """``campaign_id`` (Int64), ``outcome`` (category), ``item``, ``message`` (string)."""
        import pandas as pd

        rows = self.outcomes()
        frame = pd.DataFrame(rows, columns=["campaign_id", "outcome", "item", "message"])
        return frame.astype(
            {
                "campaign_id": "Int64",
                "outcome": pd.CategoricalDtype(list(OUTCOMES)),
                "item": "string",
                "message": "string",
            }
        )

    def __repr__(self) -> str:
        return (
            f"<BatchResult {self.operation}: {len(self.succeeded)} succeeded, "
            f"{len(self.failed)} failed, {self.calls} call{'s' if self.calls != 1 else ''}>"
        )
