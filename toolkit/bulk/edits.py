"""Every change of a plan's calls as the user thinks of it (:class:`Edit`), and its words.

The service needs a bid change as a drop and an add; :func:`edits_of` pairs them back into
one change (``bid US 0.30 -> 0.33``), and :meth:`Edit.text` says it.

>>> money(0.3), money(12.5)
('0.30', '12.50')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import spec
from .call_kinds import call_kind, is_valued
from .calls import BID_RULE, CAMPAIGN, CPA_RULE, CREATIVE, Call

MOVED = dict(spec.WORK_ACTIONS)  # pause -> Paused


@dataclass(frozen=True)
class Edit:
    """One change of one campaign as the user thinks of it.

    ``what`` is ``add``, ``drop``, ``bid`` (a new bid for a key already there), ``rename``,
    ``set`` (a setting; ``key`` names it), ``edit`` (a CPA rule's field), or a move
    (``pause``, ``start``, ``archive``). ``call`` is the number (from 1) of the call that
    makes the change, ``calls`` every call it takes (a bid change: the drop and the add).
    """

    call: int
    calls: tuple[int, ...]
    step: str
    campaign_id: int
    what: str
    target: str
    list_type: str | None
    key: Any
    old: Any
    new: Any

    def text(self) -> str:
        """``bid US 0.30 -> 0.33``, ``drop country FR (was 0.20)``, ``rename "a" -> "b"``."""
        return _text(self)


# --------------------------------------------------------------------------- edits


def edits_of(calls: Sequence[Call]) -> list[Edit]:
    """Every change of the calls, a bid change's drop and add paired into one ``bid``."""
    raw: list[Edit] = []
    for n, call in enumerate(calls, start=1):
        raw += _call_edits(n, call)
    adds = {
        (e.campaign_id, e.target, e.key): i
        for i, e in enumerate(raw)
        if e.what == "add" and is_valued(e.target)
    }
    paired: dict[int, Edit] = {}
    gone: set[int] = set()
    for i, e in enumerate(raw):
        if e.what != "drop" or not is_valued(e.target):
            continue
        j = adds.get((e.campaign_id, e.target, e.key))
        if j is None:
            continue
        add = paired.get(j, raw[j])
        paired[j] = Edit(
            add.call,
            tuple(sorted({*e.calls, *add.calls})),
            add.step,
            e.campaign_id,
            "bid",
            e.target,
            None,
            e.key,
            e.old,
            add.new,
        )
        gone.add(i)
    return [paired.get(i, e) for i, e in enumerate(raw) if i not in gone]


EditMaker = Callable[..., Edit]


def _call_edits(n: int, call: Call) -> list[Edit]:
    def edit(cid: int, what: str, key: Any = None, old: Any = None, new: Any = None) -> Edit:
        return Edit(n, (n,), call.step, cid, what, call.target, call.list_type, key, old, new)

    return _EDITS.get(call.target, _item_edits)(edit, call)


def _campaign_edits(edit: EditMaker, call: Call) -> list[Edit]:
    prev: Mapping[Any, Any] = call.previous or {}
    out: list[Edit] = []
    for cid in call.campaign_ids:
        if call.action == "update":
            out += _settings(edit, cid, call.params or {}, call.previous)
        else:
            out.append(edit(cid, call.action, None, prev.get(cid), MOVED.get(call.action)))
    return out


def _creative_edits(edit: EditMaker, call: Call) -> list[Edit]:
    prev: Mapping[Any, Any] = call.previous or {}
    cid = call.campaign_ids[0]
    return [edit(cid, call.action, i, prev.get(i), MOVED.get(call.action)) for i in call.items]


def _rule_edits(edit: EditMaker, call: Call) -> list[Edit]:
    prev: Mapping[Any, Any] = call.previous or {}
    cid = call.campaign_ids[0]
    if call.action == "add":
        return [edit(cid, "add", None, None, _rule(r)) for r in (call.params or {})["rules"]]
    if call.action == "drop":
        old = {r.get("id"): r for r in prev.get("rules") or []}
        return [edit(cid, "drop", i, _rule(old[i]) if i in old else None) for i in call.items]
    rules = (call.params or {}).get("rules") or [{}]
    before = (prev.get("rules") or [{}])[0]
    rid = rules[0].get("id")
    return [
        edit(cid, "edit", f"{rid} {f}", before.get(f), v) for f, v in rules[0].items() if f != "id"
    ]


def _item_edits(edit: EditMaker, call: Call) -> list[Edit]:
    """Adds and drops of items; a valued item's drop shows its old bid, its add the new."""
    kind = call_kind(call.target)
    out: list[Edit] = []
    for cid in call.campaign_ids:
        for key, bid in kind.items_of(call):
            if not kind.valued:
                out.append(edit(cid, call.action, key))
            elif call.action == "drop":
                out.append(edit(cid, "drop", key, kind.previous(call, cid, key)))
            else:
                out.append(edit(cid, "add", key, None, bid))
    return out


_EDITS = {CAMPAIGN: _campaign_edits, CREATIVE: _creative_edits, CPA_RULE: _rule_edits}


def _settings(
    edit: Any, cid: int, params: Mapping[str, Any], previous: Mapping[str, Any] | None
) -> list[Edit]:
    out = []
    for field, new in params.items():
        if field == "vertical":
            continue
        old = None if previous is None else previous.get(field)
        if field == "name":
            if previous is not None and old == new:
                continue
            out.append(edit(cid, "rename", "name", old, new))
        else:
            out.append(edit(cid, "set", field, old, new))
    return out


def _rule(rule: Mapping[str, Any]) -> str:
    parts = [str(rule.get(f)) for f in spec.CPA_FIELDS if is_present(rule.get(f))]
    return " ".join(parts)


# --------------------------------------------------------------------------- wording


def is_present(value: Any) -> bool:
    if value is None:
        return False
    try:
        return not bool(pd.isna(value))
    except (TypeError, ValueError):
        return True


def money(value: Any) -> str:
    """A bid as people write it: at least two decimals, at most six (``0.30``, ``0.3061``)."""
    if not is_present(value):
        return "?"
    v = float(value)
    if not math.isfinite(v):
        return str(v)
    text = f"{v:.6f}".rstrip("0")
    whole, _, frac = text.partition(".")
    if v and not frac.strip("0") and whole in ("0", "-0"):
        return f"{v:g}"
    return f"{whole}.{frac.ljust(2, '0')}"


def shown(value: Any, limit: int = 40) -> str:
    """A setting's value: quoted text (cut at ``limit``), whole numbers without ``.0``."""
    if not is_present(value):
        return "(none)"
    if isinstance(value, str):
        text = value if len(value) <= limit else value[: limit - 3] + "..."
        return '"' + text.replace("\n", " ") + '"'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _noun(target: str, list_type: str | None) -> tuple[str | None, str]:
    """(``blacklist``/``whitelist`` or None, the thing listed)."""
    if target in spec.LISTS:
        lk = spec.LISTS[target]
        return f"{lk.list_type}list", "subId" if lk.entity == "subid" else "source"
    if list_type in ("black", "white"):
        return f"{list_type}list", target
    return None, "bid rule" if target == BID_RULE else target


def verb(e: Edit) -> str:
    """The words before the key: ``blacklist source``, ``add os``, ``drop country``."""
    colour, noun = _noun(e.target, e.list_type)
    if colour:
        return f"{colour} {noun}" if e.what == "add" else f"un-{colour} {noun}"
    return f"{e.what} {noun}"


def _text(e: Edit) -> str:
    return _TEXTS.get(e.target, _item_text)(e)


def _campaign_text(e: Edit) -> str:
    if e.what == "rename":
        return f"rename {shown(e.old)} -> {shown(e.new)}"
    if e.what == "set":
        return f"{e.key} {shown(e.old)} -> {shown(e.new)}"
    return e.what + (f" (was {e.old})" if is_present(e.old) else "")


def _creative_text(e: Edit) -> str:
    return f"{e.what} creative {e.key}" + (f" (was {e.old})" if is_present(e.old) else "")


def _rule_text(e: Edit) -> str:
    if e.what == "add":
        return f"add CPA rule {e.new}"
    if e.what == "drop":
        return f"drop CPA rule {e.key}" + (f" ({e.old})" if is_present(e.old) else "")
    return f"CPA rule {e.key} {shown(e.old)} -> {shown(e.new)}"


def _item_text(e: Edit) -> str:
    priced = is_valued(e.target)
    if e.what == "bid":
        noun = "bid rule" if e.target == BID_RULE else "bid"
        return f"{noun} {e.key} {money(e.old)} -> {money(e.new)}"
    if priced and e.what == "add":
        return f"{verb(e)} {e.key} {money(e.new)}"
    if priced and e.what == "drop":
        return f"{verb(e)} {e.key}" + (f" (was {money(e.old)})" if is_present(e.old) else "")
    return f"{verb(e)} {e.key}"


_TEXTS = {CAMPAIGN: _campaign_text, CREATIVE: _creative_text, CPA_RULE: _rule_text}


__all__ = ["MOVED", "Edit", "edits_of", "is_present", "money", "shown", "verb"]
