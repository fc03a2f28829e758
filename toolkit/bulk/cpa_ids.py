"""The ids of the CPA rules an add created (the service's answer to an add carries none).

>>> live = [{"id": 1, "type": "sum", "cond": "more", "amount": 5},
...         {"id": 9, "type": "sum", "cond": "more", "amount": 5}]
>>> added_ids(live, {"before": [1], "rules": [{"type": "sum", "cond": "more", "amount": 5.0}]})
[9]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import spec


def added_ids(live: list[dict[str, Any]], added: Mapping[str, Any]) -> list[int]:
    """The ids of the live rules that an add of ``added["rules"]`` created: not among
    ``added["before"]``, and alike field by field, one live rule per rule added."""
    before = {int(i) for i in added.get("before") or ()}
    fresh = [r for r in live if int(r["id"]) not in before]
    ids = []
    for rule in added.get("rules") or ():
        want = {f: _comparable(rule.get(f)) for f in spec.CPA_FIELDS}
        match = next((r for r in fresh if {f: _comparable(r.get(f)) for f in want} == want), None)
        if match is not None:
            fresh.remove(match)
            ids.append(int(match["id"]))
    return ids


def _comparable(value: Any) -> Any:
    """A field's value as compared: numbers as floats, the rest as text, missing as None."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


__all__ = ["added_ids"]
