"""What every resource shares: calling one operation, and chunked batch calls."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import spec
from ..errors import ApiError, NotFoundError, ToolkitError
from .results import BatchResult, parse_message
from .transport import Request, encode_query

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

NOT_FOUND_PREFIXES = ("Campaign not found #", "Error on find campaign #", "Creative not found #")


class Resource:
    """A group of operations; holds the client and builds requests for its transport."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def _call(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        safe: bool = True,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        form: Mapping[str, Any] | None = None,
        path: str | None = None,
    ) -> Any:
        """Call operation ``name`` of :data:`toolkit.spec.OPERATIONS`; errors are raised."""
        op = spec.OPERATIONS_BY_NAME[name]
        req = Request(
            operation=name,
            method="GET" if "GET" in op.methods else "POST",
            path=path or op.path,
            params={k: v for k, v in (params or {}).items() if v is not None},
            safe=safe,
            post_allowed="POST" in op.methods,
            files=files,
            form=form,
        )
        answer = self._client.transport.call(req)
        if isinstance(answer, dict) and answer.get("status") == "error" and not op.batch:
            raise single_error(name, answer)
        return answer

    def _batch(
        self,
        name: str,
        campaign_ids: Sequence[int],
        items: Sequence[Any] | Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        path: str | None = None,
    ) -> BatchResult:
        """One batch operation over many campaigns, chunked by campaigns, items and URL size."""
        op = spec.OPERATIONS_BY_NAME[name]
        ids = [int(c) for c in dict.fromkeys(campaign_ids)]
        result = BatchResult(name)
        if not ids:
            return result
        opts = self._client.options
        per_call = opts.max_batch_campaigns
        if "POST" not in op.methods:  # GET only: keep the URL under its limit
            width = len(encode_query({"campaignId": [max(ids)]})) + 1
            per_call = max(1, min(per_call, self._client.transport.url_room(op.path) // width))
        item_chunks: list[Any] = [None]
        if items is not None:
            item_chunks = chunk_items(items, opts.max_batch_items)
        for start in range(0, len(ids), per_call):
            chunk = ids[start : start + per_call]
            for part in item_chunks:
                params: dict[str, Any] = {"campaignId": chunk, **(extra or {})}
                if part is not None:
                    params["items"] = part
                try:
                    answer = self._call(name, params, path=path)
                    if answer.get("status") == "error":
                        raise single_error(name, answer)
                except ToolkitError as exc:
                    result.finish()
                    exc.partial_result = result  # type: ignore[attr-defined]
                    raise
                result.add_answer(answer)
        result.finish()
        return result


def chunk_items(items: Sequence[Any] | Mapping[str, Any], size: int) -> list[Any]:
    """Split a list (or a map of country bids) into pieces of at most ``size`` items."""
    if isinstance(items, Mapping):
        keys = list(items)
        return [
            {k: items[k] for k in keys[i : i + size]} for i in range(0, max(len(keys), 1), size)
        ]
    values = list(items)
    count = max(1, math.ceil(len(values) / size))
    return [values[i * size : (i + 1) * size] for i in range(count)]


def single_error(operation: str, answer: Mapping[str, Any]) -> ApiError:
    """The exception for a ``status: error`` answer of a single operation."""
    raw = answer.get("errorList") or []
    messages = [str(m) for m in (raw.values() if isinstance(raw, Mapping) else raw)]
    if messages and all(m.startswith(NOT_FOUND_PREFIXES) for m in messages):
        return NotFoundError(operation, 200, messages)
    outcomes = [{**parse_message(m), "message": m} for m in messages]
    return ApiError(operation, 200, messages, outcomes)
