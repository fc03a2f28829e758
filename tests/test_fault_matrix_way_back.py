"""The way back under faults: undo and repair of a run, each under one fault, then counted.

The same sandbox in a child process and the same edit as the fault matrix of apply
(``test_fault_matrix.py``). For each fault:

- undo: a run applied cleanly is undone under the fault (on its writes, on the reads it plans
  from, and on the read-back after them). Counted against the live state read back with the
  faults gone: wrong outcomes of the undo, items lost (a bid with neither its value before the
  run nor the run's). Then, faults gone, the undo is finished (run again, or repaired) and the
  account must be exactly as before the run;
- repair: a run applied under 503s on its writes (items failed) is repaired under the fault.
  Counted the same way; then, faults gone, repair again converges: every item as desired, and
  planning the edit again plans nothing.

A refusal to plan (the live state could not be read whole after the client's retries) sends
nothing: it is counted as such, and the way back is run again without faults.

One case runs in the default suite; the rest are marked ``fault_matrix``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit.bulk import Journal, make_plan, undo
from toolkit.errors import IncompleteReadError

from .test_fault_matrix import (
    WRITES,
    check_outcomes,
    connect,
    differences,
    edit,
    lost_items,
    sandbox_process,  # noqa: F401 - a fixture
    service,  # noqa: F401 - the fixture
    state,
    tables_of,
)

READS = ("/api/campaign/item", "/api/campaign/bid-rules", "/api/campaign/cpa-rules")


def rules(*rules: dict[str, Any], seed: int = 3) -> dict[str, Any]:
    return {"seed": seed, "rules": list(rules)}


def on(paths: tuple[str, ...], **rule: Any) -> list[dict[str, Any]]:
    return [{**rule, "path": p} for p in paths]


CASES: dict[str, dict[str, Any]] = {
    # every request, reads and writes alike, before anything is done
    "500-everywhere": rules({"status": 500, "rate": 0.25}),
    # the writes land, their answers are lost
    "504-after": rules(*on(WRITES, status=504, rate=0.5, after=True)),
    "502-after": rules(*on(WRITES, status=502, rate=0.3, after=True)),
    # the reads alone: the reads undo and repair plan from, and the read-back after the writes
    "reads-503": rules(*on(READS, status=503, rate=0.5)),
    "reads-hang": rules(*on(READS, hang_s=0.6, rate=0.2)),
    "429": rules({"status": 429, "rate": 0.1, "retry_after": 0.05}),
}
DEFAULT = ("500-everywhere",)
OPTIONS: dict[str, dict[str, Any]] = {"reads-hang": {"timeout": (2.0, 0.3)}}


def _params() -> list[Any]:
    return [
        pytest.param(name, id=name, marks=[] if name in DEFAULT else [pytest.mark.fault_matrix])
        for name in CASES
    ]


def under(sb: Any, faults: dict[str, Any], way_back: Any) -> Any:
    """``way_back()`` with ``faults`` on; its result, or None when it refused to plan."""
    sb.faults(faults)
    try:
        return way_back()
    except IncompleteReadError:
        return None
    finally:
        sb.clear()


def judged(sb: Any, journal: Path, result: Any, client: Any, old: dict, new: dict) -> dict:
    """The outcomes of ``result`` against live read back (faults gone); asserts 0 wrong and
    0 lost between ``old`` and ``new``; the live state."""
    live = state(tables_of(client))
    if result is not None and result.run_id is not None:
        count = check_outcomes(Journal(journal).outcomes(result.run_id), live)
        print(f"  {count.items} item outcomes {count.outcomes}: {len(count.wrong)} wrong")
        assert count.wrong == [], "\n".join(count.wrong[:20])
    else:
        print("  refused to plan (live could not be read whole): nothing sent")
    assert lost_items(old, new, live) == []
    return live


@pytest.mark.parametrize("name", _params())
def test_undo_and_repair_under_faults_report_truly_and_converge(service, tmp_path, name):  # noqa: F811
    sb, journal = service, tmp_path / "journal.db"
    faults, options = CASES[name], OPTIONS.get(name, {})
    client = connect(sb, **options)
    base = tables_of(client)
    desired = edit(base)
    before, wanted = state(base), state(desired)

    applied = make_plan(client, desired, base=base, allow=["drop_share"]).apply(
        client, progress=False, journal=str(journal)
    )
    assert applied.ok, applied.summary()
    print(f"\n[{name}] undo under the fault:")
    undone = under(
        sb, faults, lambda: undo(client, applied.run_id, journal=str(journal), progress=False)
    )
    live = judged(sb, journal, undone, client, wanted, before)
    if undone is not None and undone.ok:  # an undo that says it is done is done exactly
        assert differences(live, before) == []
    for _ in range(3):  # finish the undo with the faults gone: repair it, or run it again
        if differences(state(tables_of(client)), before) == []:
            break
        if undone is not None and undone.run_id is not None:
            toolkit.repair(client, undone.run_id, journal=str(journal), progress=False)
        else:
            undone = undo(client, applied.run_id, journal=str(journal), progress=False)
    assert differences(state(tables_of(client)), before) == []

    # a run left with failed items, repaired under the fault
    sb.faults(rules(*on(WRITES, status=503, rate=0.5), seed=9))
    try:
        broken = make_plan(client, desired, base=base, allow=["drop_share"]).apply(
            client, progress=False, journal=str(journal)
        )
    finally:
        sb.clear()
    assert not broken.ok
    print(f"[{name}] repair under the fault:")
    repaired = under(
        sb,
        faults,
        lambda: toolkit.repair(client, broken.run_id, journal=str(journal), progress=False),
    )
    live = judged(sb, journal, repaired, client, before, wanted)
    if repaired is not None and repaired.ok:  # a repair that says it is done is done
        assert differences(live, wanted) == []
    for _ in range(3):  # faults gone: repair again until the run is as planned
        if differences(state(tables_of(client)), wanted) == []:
            break
        toolkit.repair(client, broken.run_id, journal=str(journal), progress=False)
    assert differences(state(tables_of(client)), wanted) == []
    assert len(make_plan(client, desired, base=base, allow=["drop_share"])) == 0
