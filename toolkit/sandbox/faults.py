"""Fault injection for tests and benchmarks: added latency, HTTP 5xx, 429 and hangs.

Rules apply to ``/api/`` requests in order; the first rule that matches a request fires.
A rule fires for its next ``count`` matching requests (or for every one when ``count`` is
``None``), for a share ``rate`` of them drawn from a seeded generator (so a run repeats), or
both.

>>> faults = Faults()
>>> faults.configure({"rules": [{"status": 503, "count": 1}]})
>>> faults.pick("/api/campaign/list").status, faults.pick("/api/campaign/list")
(503, None)
"""

from __future__ import annotations

import random
import threading
from dataclasses import asdict, dataclass, fields
from typing import Any

from .errors import BadRequest

FAULT_STATUSES = (429, 500, 502, 503, 504)
MAX_HANG_S = 120.0


@dataclass
class FaultRule:
    """One fault: answer ``status`` (with ``Retry-After`` for 429), or hang ``hang_s`` seconds.

    ``path`` limits the rule to paths starting with it; ``method`` to one HTTP method.
    With ``after``, the request is carried out first and the fault comes after it (a write
    that lands although its answer is lost: a gateway's 502 or 504, or a hang past the
    client's timeout); without it, a status fault answers before anything is done.
    """

    status: int | None = None
    hang_s: float | None = None
    count: int | None = None
    rate: float | None = None
    path: str | None = None
    method: str | None = None
    retry_after: float | None = None
    after: bool = False

    def __post_init__(self) -> None:
        if self.status is None and self.hang_s is None:
            raise BadRequest("A fault rule needs 'status' or 'hang_s'")
        if self.status is not None and self.status not in FAULT_STATUSES:
            raise BadRequest(f"Fault 'status' must be one of {FAULT_STATUSES}, got {self.status}")
        if self.hang_s is not None and not 0 < self.hang_s <= MAX_HANG_S:
            raise BadRequest(f"Fault 'hang_s' must be in (0, {MAX_HANG_S}], got {self.hang_s}")
        if self.rate is not None and not 0 <= self.rate <= 1:
            raise BadRequest(f"Fault 'rate' must be in [0, 1], got {self.rate}")
        if self.count is not None and self.count < 0:
            raise BadRequest(f"Fault 'count' must not be negative, got {self.count}")
        if not isinstance(self.after, bool):
            raise BadRequest(f"Fault 'after' must be true or false, got {self.after!r}")

    def matches(self, path: str, method: str) -> bool:
        if self.path is not None and not path.startswith(self.path):
            return False
        return self.method is None or self.method.upper() == method


class Faults:
    """The faults and the added latency of one sandbox; safe to use from many threads."""

    def __init__(self, latency_ms: float = 0, seed: int = 0) -> None:
        self.latency_ms = float(latency_ms)
        self.rules: list[FaultRule] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.stopping = threading.Event()

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the sandbox stops first; True when it is stopping."""
        return self.stopping.wait(seconds)

    def configure(self, data: dict[str, Any]) -> None:
        """Set ``latency_ms``, ``seed`` and/or replace ``rules`` (a list of rule objects)."""
        if not isinstance(data, dict):
            raise BadRequest("Fault settings must be a JSON object")
        known = {f.name for f in fields(FaultRule)}
        rules = None
        if "rules" in data:
            if not isinstance(data["rules"], list):
                raise BadRequest("'rules' must be a list of fault rules")
            rules = []
            for i, raw in enumerate(data["rules"]):
                if not isinstance(raw, dict) or set(raw) - known:
                    raise BadRequest(
                        f"rules[{i}] must be an object with keys among {sorted(known)}"
                    )
                try:
                    rules.append(FaultRule(**raw))
                except TypeError as exc:
                    raise BadRequest(f"rules[{i}]: {exc}") from None
        with self._lock:
            if "latency_ms" in data:
                value = data["latency_ms"]
                if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                    raise BadRequest("'latency_ms' must be a number >= 0")
                self.latency_ms = float(value)
            if "seed" in data:
                self._rng = random.Random(data["seed"])
            if rules is not None:
                self.rules = rules

    def clear(self) -> None:
        with self._lock:
            self.rules = []
            self.latency_ms = 0.0

    def pick(self, path: str, method: str = "GET") -> FaultRule | None:
        """The rule that fires for this request, if any (its count is used up)."""
        with self._lock:
            for rule in self.rules:
                if not rule.matches(path, method):
                    continue
                if rule.count is not None and rule.count <= 0:
                    continue
                if rule.rate is not None and self._rng.random() >= rule.rate:
                    continue
                if rule.count is not None:
                    rule.count -= 1
                return rule
        return None

    def describe(self) -> dict[str, Any]:
        with self._lock:
            return {"latency_ms": self.latency_ms, "rules": [asdict(r) for r in self.rules]}
