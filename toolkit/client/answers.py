"""What an answer means: a well-formed success, a well-formed refusal, or neither
(:class:`Reading`, for the transport), and the shape of each operation's answer, checked once
for every call before anything reads it (:func:`check_answer`, for the resources).

An answer of another shape (``[]`` to a batch call, ``{}`` to a read or to a write, a batch
result that names neither success nor failure for a campaign it was sent) is never taken
as success and never crashes its reader: it raises
:class:`~toolkit.errors.MalformedAnswerError`, saying what was expected and what came.

>>> check_answer("campaign.item", {"status": "ok", "item": {"id": 7}})["item"]
{'id': 7}
>>> from toolkit.errors import MalformedAnswerError
>>> try:
...     check_answer("target.add.os", {})
... except MalformedAnswerError as exc:
...     print(exc.expected, "|", exc.got)
an object with "status": "ok" | an empty object (no "status")
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import spec
from ..errors import MalformedAnswerError

if TYPE_CHECKING:
    from .wire import Answer


@dataclass(frozen=True)
class Reading:
    """One HTTP answer as read: its status and parsed JSON (``readable``), else why not;
    whether it is a well-formed success, a well-formed refusal, or neither (an answer after
    which the request may have been carried out)."""

    status: int
    body: Any
    readable: bool
    why: str = ""

    @classmethod
    def of(cls, answer: Answer) -> Reading:
        """What ``answer`` (read by the transport, without the key) means."""
        try:
            return cls(answer.status_code, answer.json(), True)
        except ValueError as exc:  # the body is cut, empty or not JSON
            ctype = answer.headers.get("Content-Type", "?").split(";")[0]
            why = f"HTTP {answer.status_code}, {ctype}, {answer.size} bytes ({type(exc).__name__})"
            return cls(answer.status_code, None, False, why)

    @property
    def success(self) -> bool:
        """A well-formed success: a 2xx with a JSON body (its shape is the client's to check)."""
        return 200 <= self.status < 300 and self.readable

    @property
    def refusal(self) -> bool:
        """A well-formed refusal by the service: a 4xx with a JSON ``status: error`` body and
        its ``errorList``; nothing was done."""
        body = self.body
        return (
            400 <= self.status < 500
            and isinstance(body, dict)
            and body.get("status") == "error"
            and isinstance(body.get("errorList"), (list, dict))
            and bool(body["errorList"])
        )


#: What a field of an answer holds: an object, a list of objects, a list, a number.
KINDS = ("object", "objects", "list", "number")


@dataclass(frozen=True)
class Shape:
    """An operation's answer: an object with ``"status": "ok"`` (unless ``status`` is False,
    as for the lists and the balance) and ``fields``, each of one of :data:`KINDS`."""

    status: bool = True
    fields: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        parts = ['"status": "ok"'] if self.status else []
        parts += [f"{name!r} ({_KIND_WORDS[kind]})" for name, kind in self.fields]
        return "an object" + (f" with {', '.join(parts)}" if parts else "")


_KIND_WORDS = {
    "object": "an object",
    "objects": "a list of objects",
    "list": "a list",
    "number": "a number",
}
WRITE = Shape()
ITEM = Shape(fields=(("item", "object"),))
ITEMS = Shape(status=False, fields=(("items", "objects"),))
RULES = Shape(fields=(("rules", "objects"),))

#: The answer of each family of operations (an operation's name up to its second dot:
#: ``target.add.country`` is a ``target.add``); a batch call's answer is :data:`BATCH`.
SHAPES: dict[str, Shape] = {
    "campaign.list": ITEMS,
    "campaign.item": ITEM,
    "campaign.create": ITEM,
    "campaign.update": ITEM,
    "target.add": WRITE,
    "target.drop": WRITE,
    "list.read": Shape(fields=(("items", "list"),)),
    "list.add": WRITE,
    "list.drop": WRITE,
    "bid_rule.list": RULES,
    "bid_rule.add": WRITE,
    "bid_rule.drop": WRITE,
    "cpa_rule.list": RULES,
    "cpa_rule.add": WRITE,
    "cpa_rule.drop": WRITE,
    "creative.list": ITEMS,
    "creative.item": ITEM,
    "creative.create": ITEM,
    "creative.update": ITEM,
    "account.balance": Shape(status=False, fields=(("balance", "number"),)),
    "account.dictionaries": WRITE,
    "account.search": Shape(status=False),
    "account.price": Shape(fields=(("price", "object"),)),
    **{
        f"{entity}.{action}": WRITE
        for entity in ("campaign", "creative")
        for action in spec.WORK_ACTIONS
    },
}
BATCH_EXPECTED = (
    'an object with "result": {"success": [campaign ids], "failed": [{"id": campaign id,'
    ' "errorList": [...]}]}'
)


def shape_of(operation: str) -> Shape | None:
    """The shape of ``operation``'s answer, None for an operation the table does not know
    (its answer is only checked to be an object)."""
    return SHAPES.get(".".join(operation.split(".")[:2]))


def check_answer(operation: str, answer: Any, *, batch: bool = False) -> Any:
    """``answer`` when it has the shape of ``operation``'s answer (a batch answer when
    ``batch``); a refusal (``"status": "error"``) must carry its ``errorList``. Raises
    :class:`~toolkit.errors.MalformedAnswerError` otherwise."""
    if not isinstance(answer, Mapping):
        expected = BATCH_EXPECTED if batch else _expected(operation)
        raise MalformedAnswerError(operation, expected, describe(answer))
    if answer.get("status") == "error":
        raw = answer.get("errorList")
        if not isinstance(raw, (list, Mapping)) or not raw:
            raise MalformedAnswerError(
                operation, 'a refusal with its "errorList" of messages', describe(answer)
            )
        return answer
    if batch:
        _check_batch(operation, answer)
        return answer
    shape = shape_of(operation)
    if shape is None:
        return answer
    problem = _problem(shape, answer)
    if problem:
        raise MalformedAnswerError(operation, shape.describe(), f"{describe(answer)} ({problem})")
    return answer


def check_batch_ids(operation: str, answer: Mapping[str, Any], sent: Collection[int]) -> None:
    """A batch answer must name each campaign it was sent, as a success or a failure."""
    result = answer.get("result") or {}
    named = {_id(c) for c in result.get("success") or []}
    named |= {_id(e.get("id")) for e in result.get("failed") or []}
    missing = [c for c in sent if c not in named]
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise MalformedAnswerError(
            operation,
            f"each of the {len(sent)} campaign(s) sent in result.success or result.failed",
            f"{len(missing)} in neither ({shown})",
        )


def _expected(operation: str) -> str:
    shape = shape_of(operation)
    return shape.describe() if shape is not None else "an object"


def _problem(shape: Shape, answer: Mapping[str, Any]) -> str | None:
    """What of ``shape`` the answer lacks, or None."""
    if shape.status and answer.get("status") != "ok":
        return f'"status" is {answer.get("status")!r}' if "status" in answer else 'no "status"'
    for name, kind in shape.fields:
        if name not in answer:
            return f"no {name!r}"
        if not _is(answer[name], kind):
            return f"{name!r} is {describe(answer[name])}"
    return None


def _is(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if not isinstance(value, list):
        return False
    return kind == "list" or all(isinstance(v, Mapping) for v in value)


def _check_batch(operation: str, answer: Mapping[str, Any]) -> None:
    result = answer.get("result")
    problem = None
    if not isinstance(result, Mapping):
        problem = 'no "result" object' if result is None else f'"result" is {describe(result)}'
    else:
        success, failed = result.get("success", []), result.get("failed", [])
        if not isinstance(success, list) or any(_id(c) is None for c in success):
            problem = f'"result.success" is {describe(success)}, not a list of campaign ids'
        elif not isinstance(failed, list) or not all(
            isinstance(e, Mapping)
            and _id(e.get("id")) is not None
            and isinstance(e.get("errorList", []), (list, Mapping))
            for e in failed
        ):
            problem = f'"result.failed" is {describe(failed)}, not a list of {{id, errorList}}'
    if problem:
        raise MalformedAnswerError(operation, BATCH_EXPECTED, f"{describe(answer)} ({problem})")


def _id(value: Any) -> int | None:
    """A campaign id as an answer writes it (a number, or digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def describe(value: Any) -> str:
    """A short description of what came, never the whole of it.

    >>> describe([]), describe({}), describe({"status": "ok"}), describe("x" * 80)
    ('an empty list', 'an empty object', 'an object with keys status', 'a string of 80 characters')
    """
    if isinstance(value, Mapping):
        if not value:
            return "an empty object"
        keys = [str(k) for k in value][:6]
        more = f" and {len(value) - 6} more" if len(value) > 6 else ""
        return f"an object with keys {', '.join(keys)}{more}"
    if isinstance(value, list):
        return "an empty list" if not value else f"a list of {len(value)} item(s)"
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if value is None:
        return "null"
    return f"{type(value).__name__} {value!r}"[:60]


__all__ = ["SHAPES", "Reading", "Shape", "check_answer", "check_batch_ids", "describe", "shape_of"]
