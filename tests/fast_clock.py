"""A clock for the adaptive gate that runs ahead instead of waiting: the gate's pacing
(:class:`toolkit.client.adaptive.AdaptiveRate`) is kept step by step, only its sleeps are
skipped. Fault tests that meet many 429s use it so that a run under a rate cut takes the
time of its requests, not of its waits; the gate's own tests check the waits themselves.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from toolkit.client.adaptive import AdaptiveRate


class FastClock:
    """Real time plus every wait skipped so far: ``sleep(s)`` moves the clock ``s`` ahead
    at once (the sleeper wakes at once, as if ``s`` had passed for every thread)."""

    def __init__(self) -> None:
        self._ahead = 0.0
        self._lock = threading.Lock()
        #: The waits skipped, in seconds.
        self.skipped = 0.0

    def __call__(self) -> float:
        with self._lock:
            return time.monotonic() + self._ahead

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self._ahead += max(0.0, seconds)
            self.skipped += max(0.0, seconds)
        time.sleep(0)  # let the other threads run, as a real wait would


def fast_gate(client: Any) -> FastClock:
    """Give ``client``'s transport an adaptive gate on a :class:`FastClock` (a client without
    a gate is left as it is); the clock, to read what was skipped."""
    clock = FastClock()
    if getattr(client.transport, "gate", None) is not None:
        client.transport.gate = AdaptiveRate(clock=clock, sleep=clock.sleep)
    return clock
