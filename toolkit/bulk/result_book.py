"""What a run did, for people: the result workbook (each edited row with its outcome) and the
HTML view of an :class:`~toolkit.bulk.apply.ApplyResult` in a notebook.

>>> write_result_workbook(result, tables.desired, "account.result.xlsx")  # doctest: +SKIP
"""

from __future__ import annotations

import html
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..frames.account import TABLES
from ..frames.export import excel_cells, excel_ready
from .call_kinds import ITEM_TABLES, TargetCalls, call_key, codes_of
from .calls import CAMPAIGN, CPA_RULE, CREATIVE
from .faces import OutcomeLike as Outcome
from .faces import ResultLike as ApplyResult
from .outcome_states import NOT_FINISHED, OutcomeState
from .workbook.layout import SHEET_ROWS

#: The sheets of the result workbook that mirror an edited table: the account's tables.
RESULT_SHEETS: tuple[str, ...] = TABLES
#: Per kind sent as codes: its ids -> codes (see :func:`~toolkit.bulk.call_kinds.codes_of`).
Codes = Mapping[str, Mapping[str, str]]
#: Outcomes from the worst to the best: when one row has several (a rename and a pause, a bid
#: change's drop and add), the worst one is shown.
SEVERITY: tuple[str, ...] = (
    OutcomeState.LOST,
    OutcomeState.FAILED,
    OutcomeState.UNKNOWN,
    OutcomeState.RESTORED,
    OutcomeState.ALREADY,
    OutcomeState.APPLIED,
)


def worst_of(pairs: Iterable[tuple[str, str | None]]) -> tuple[str, str | None]:
    """The worst of ``(outcome, message)`` pairs, with every message (once each, joined).

    >>> worst_of([("applied", None), ("failed", "Campaign not found #7")])
    ('failed', 'Campaign not found #7')
    """
    found = list(pairs)
    rank = {o: i for i, o in enumerate(SEVERITY)}
    outcome = min((o for o, _ in found), key=lambda o: rank.get(o, len(SEVERITY)))
    messages = [m for _, m in found if m]
    return outcome, "; ".join(dict.fromkeys(messages)) or None


def _worst(outcomes: Iterable[Outcome]) -> tuple[str, str | None]:
    return worst_of((o.outcome, o.message) for o in outcomes)


def _item_key(name: str, row: Mapping[str, Any], codes: Codes) -> tuple[Any, ...]:
    """The outcome key of a row of an item table (its call kind's target and list type, and
    the item as it was sent: the code of a language id)."""
    key, _ = ITEM_TABLES[name]
    values = tuple(row.get(c) for c in key)
    try:
        kind, list_type, item = call_key(name, values)
    except KeyError:  # a kind the spec does not know: no call was made for it
        return (values[1], None, int(row["campaign_id"]), str(values[-1]))
    if isinstance(kind, TargetCalls) and kind.sent_as_code:
        item = kind.sent_item(item, codes) or item
    list_type = (list_type or "black") if kind.typed else None
    return (kind.name, list_type, int(row["campaign_id"]), str(item))


def _row_keys(name: str, row: Mapping[str, Any], codes: Codes) -> list[tuple[Any, ...]]:
    """The outcome keys ``(target, list_type, campaign_id, item)`` that speak for a row."""
    if name == "campaigns":
        return [(CAMPAIGN, None, int(row["id"]), None)]
    if name == "creatives":
        if row.get("id") is None or row.get("campaign_id") is None:
            return []
        return [(CREATIVE, None, int(row["campaign_id"]), str(int(row["id"])))]
    if name == "cpa_rules":
        if row.get("campaign_id") is None:
            return []
        if row.get("id") is None:  # a new rule: the add call of its campaign
            return [(CPA_RULE, "add", int(row["campaign_id"]), None)]
        return [(CPA_RULE, "edit", int(row["campaign_id"]), str(int(row["id"])))]
    return [_item_key(name, row, codes)]


def _index(outcomes: Iterable[Outcome]) -> dict[tuple[Any, ...], list[Outcome]]:
    """Outcomes by row key; for item tables only the last outcome of an item counts (a bid
    change's add after its drop, a restore after a failed add)."""
    items: dict[tuple[Any, ...], Outcome] = {}
    rows: dict[tuple[Any, ...], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        item = None if o.item is None else str(o.item)
        if o.target == CAMPAIGN:
            rows[(CAMPAIGN, None, o.campaign_id, None)].append(o)
        elif o.target == CREATIVE:
            rows[(CREATIVE, None, o.campaign_id, item)].append(o)
        elif o.target == CPA_RULE:
            if o.action in ("add", "edit"):
                rows[(CPA_RULE, o.action, o.campaign_id, item)].append(o)
        else:
            items[(o.target, o.list_type, o.campaign_id, item)] = o
    out: dict[tuple[Any, ...], list[Outcome]] = {k: [o] for k, o in items.items()}
    out.update(rows)
    return out


def write_result_workbook(
    result: ApplyResult,
    desired: Mapping[str, pd.DataFrame],
    path: str | os.PathLike[str],
    refs: Mapping[str, pd.DataFrame] | None = None,
) -> Path:
    """The edited sheets (campaigns, countries, targets, lists, bid_rules, cpa_rules,
    creatives) with an ``outcome`` and a ``message`` column per row, a ``dropped`` sheet for
    the rows the run removed, and an ``outcomes`` sheet with every outcome.

    Rows the run did not touch read ``unchanged``; a row with several outcomes (a campaign
    renamed and paused) shows the worst, with every message. ``refs`` (the dictionaries the
    plan was made with, e.g. ``tables.refs`` or ``account.refs``) match the rows of a kind
    sent as codes (languages) to their outcomes. Text that starts like a formula is written
    with a ``'`` in front; :func:`toolkit.frames.cells.read_table` reads a sheet back as it was.
    """
    found = _index(result.outcomes)
    codes = codes_of(refs)
    path = Path(path)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name in RESULT_SHEETS:
            df = desired.get(name)
            if df is None:
                continue
            outcomes, messages, bids = [], [], []
            for row in df.astype(object).where(df.notna(), None).to_dict("records"):
                hits = [o for key in _row_keys(name, row, codes) for o in found.get(key, [])]
                outcome, message = _worst(hits) if hits else ("unchanged", None)
                outcomes.append(outcome)
                messages.append(message)
                bids.append(_bid_sent(row, hits))
            out = excel_ready(df)  # Excel holds no time zones: UTC without one
            if "bid" in out.columns:  # a bid written min or rec: the bid the plan sent
                out["bid"] = [b if s is None else s for b, s in zip(out["bid"], bids, strict=True)]
            out["outcome"] = outcomes
            out["message"] = messages
            _write(writer, name, out)
        frame = result.to_frame()
        dropped = frame[(frame["action"] == "drop")]
        adds = frame["action"] == "add"
        re_added = set(zip(frame.loc[adds, "campaign_id"], frame.loc[adds, "item"], strict=True))
        keep = [
            (c, i) not in re_added
            for c, i in zip(dropped["campaign_id"], dropped["item"], strict=True)
        ]
        _write(writer, "dropped", dropped[keep])
        _write(writer, "outcomes", frame)
    return path


def _bid_sent(row: Mapping[str, Any], hits: list[Outcome]) -> float | None:
    """The bid an add sent for a row whose bid the workbook wrote as ``min`` or ``rec`` (the
    desired table holds no number for it); None for every other row."""
    if "bid" not in row or row["bid"] is not None:
        return None
    sent = [o.bid for o in hits if o.action == "add" and o.bid is not None]
    return sent[-1] if sent else None


def _write(writer: pd.ExcelWriter, name: str, df: pd.DataFrame) -> None:
    """A sheet, continued on ``name (2)``, ... past the rows a spreadsheet shows; text that
    starts like a formula is written with a ``'`` in front (:mod:`toolkit.frames.cells`)."""
    df = excel_cells(df)
    for part, start in enumerate(range(0, max(len(df), 1), SHEET_ROWS), start=1):
        sheet = name if part == 1 else f"{name} ({part})"
        df.iloc[start : start + SHEET_ROWS].to_excel(writer, sheet_name=sheet, index=False)


def result_html(result: ApplyResult, max_rows: int = 50) -> str:
    """The notebook view: the summary, outcomes counted by action and target, then the
    items that did not go as planned (failed, lost, restored) and the read-back
    differences; every text escaped."""
    esc = html.escape
    head = result.summary().splitlines()[0]
    parts = [f"<div><b>{esc(head)}</b></div>"]
    frame = result.to_frame()
    if len(frame):
        counts = (
            frame.assign(target=frame["target"].fillna(""))
            .groupby(["action", "target", "outcome"], observed=True)
            .size()
            .rename("items")
            .reset_index()
        )
        parts.append(counts.to_html(index=False, escape=True))
        bad = frame[frame["outcome"].isin(NOT_FINISHED)]
        if len(bad):
            shown = bad[["action", "target", "campaign_id", "item", "bid", "outcome", "message"]]
            parts.append(f"<p>{len(bad)} item(s) not as planned:</p>")
            parts.append(shown.head(max_rows).to_html(index=False, escape=True, na_rep=""))
            if len(bad) > max_rows:
                parts.append(f"<p>... and {len(bad) - max_rows} more; see result.to_frame()</p>")
    if result.differences:
        parts.append(f"<p>{len(result.differences)} difference(s) after read-back:</p><ul>")
        parts += [f"<li>{esc(d)}</li>" for d in result.differences[:max_rows]]
        if len(result.differences) > max_rows:
            parts.append(f"<li>... and {len(result.differences) - max_rows} more</li>")
        parts.append("</ul>")
    return "".join(parts)


__all__ = ["RESULT_SHEETS", "SEVERITY", "result_html", "worst_of", "write_result_workbook"]
