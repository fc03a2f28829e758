"""What every resource shares: calling one operation, and chunked batch calls."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .. import spec
from ..errors import ToolkitError
from .answers import check_answer, check_batch_ids
from .results import NOT_FOUND_PREFIXES, BatchResult, single_error
from .transport import Request, TransportLike, encode_query

__all__ = ["NOT_FOUND_PREFIXES", "Owner", "Resource", "chunk_items", "single_error"]


class Owner(Protocol):
    """What a resource needs of the client that holds it (:class:`toolkit.client.Client`):
    its transport, its options (``max_batch_campaigns``, ...) and the campaigns' formats it
    has seen. A protocol, so that the resources need not import the client that imports
    them."""

    transport: TransportLike
    options: Any

    def remember_format(self, item: dict[str, Any]) -> None: ...

    def known_format(self, campaign_id: int) -> str | None: ...


class Resource:
    """A group of operations; holds the client and builds requests for its transport."""

    def __init__(self, client: Owner) -> None:
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
        batch: bool = False,
    ) -> Any:
        """Call operation ``name`` of :func:`toolkit.spec.operations`; errors are raised.

        The answer is checked against the operation's shape (a batch answer's when
        ``batch``; see :mod:`toolkit.client.answers`) before anything reads it."""
        op = spec.operations_by_name()[name]
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
        answer = check_answer(name, self._client.transport.call(req), batch=batch or op.batch)
        if answer.get("status") == "error" and not op.batch and not batch:
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
        op = spec.operations_by_name()[name]
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
                    answer = self._call(name, params, path=path, batch=True)
                    if answer.get("status") == "error":
                        raise single_error(name, answer)
                    check_batch_ids(name, answer, chunk)
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
