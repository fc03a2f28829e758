"""Calling one client operation for many keys at once: a bounded thread pool and a progress bar.

>>> from toolkit.frames.fetch import fetch_each
>>> fetch_each(str, [1, 2, 3], workers=2, progress=False)
['1', '2', '3']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

from tqdm.auto import tqdm

K = TypeVar("K")
R = TypeVar("R")


def pool_workers(client: Any, workers: int) -> int:
    """``workers`` checked, and capped at the client's connection pool size.

    More threads than pooled connections would open (and drop) extra connections on every
    call; raise ``pool_size`` in :func:`toolkit.connect` to use more workers.
    """
    if int(workers) < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    options = getattr(client, "options", None)
    pool = getattr(options, "pool_size", None)
    return max(1, min(int(workers), int(pool))) if pool else int(workers)


#: In a notebook the bar is a widget: one closed when done leaves its output pointing at a
#: model that is gone (Voila shows "model not found"), so there the finished bar stays.
NOTEBOOK_BARS: bool = any(c.__module__ == "tqdm.notebook" for c in tqdm.__mro__)


def progress_bar(total: int, desc: str, unit: str, enabled: bool) -> Any:
    """A ``tqdm.auto`` bar (a widget in notebooks, text in terminals); silent when disabled."""
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=NOTEBOOK_BARS)


def fetch_each(
    func: Callable[[K], R],
    keys: Sequence[K],
    *,
    workers: int = 8,
    progress: bool = False,
    desc: str = "Loading",
    unit: str = "call",
) -> list[R]:
    """``[func(k) for k in keys]``, computed by ``workers`` threads; results in key order.

    The threads share the client's transport, so under a rate limit its adaptive gate paces
    them together (:mod:`toolkit.client.adaptive`).

    The first exception cancels the calls not yet started and is raised.
    """
    keys = list(keys)
    results: list[Any] = [None] * len(keys)
    if not keys:
        return results
    pool = ThreadPoolExecutor(max_workers=max(1, int(workers)), thread_name_prefix="toolkit")
    bar = progress_bar(len(keys), desc, unit, progress)
    try:
        futures: dict[Future[R], int] = {pool.submit(func, k): i for i, k in enumerate(keys)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            bar.update()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
    pool.shutdown(wait=True)
    return results
