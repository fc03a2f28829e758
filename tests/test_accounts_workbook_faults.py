"""A workbook across accounts applied, repaired and undone as a set under faults, and the same
through the command line: every account's journaled outcomes are checked item by item
against its live state read back with its own client, the faults gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openpyxl
import pytest

import toolkit
from toolkit.bulk.journal import Journal
from toolkit.sandbox import Sandbox

from .test_accounts_workbook import NAMES, config, edit_three, export, rows_of, shows, three
from .test_fault_matrix import WRITES, check_outcomes, differences, state, tables_of

__all__ = ["config", "three"]  # the fixtures


def faults(*rules: dict[str, Any], seed: int = 9) -> dict[str, Any]:
    return {"seed": seed, "rules": list(rules)}


def on(paths: tuple[str, ...], **rule: Any) -> list[dict[str, Any]]:
    return [{**rule, "path": p} for p in paths]


def states() -> dict[str, dict]:
    """Each account's live state, read with its own client."""
    out = {}
    for name in NAMES:
        with toolkit.connect(profile=name) as client:
            out[name] = state(tables_of(client))
    return out


def judge(result: Any) -> dict[str, dict]:
    """Every account's journaled outcomes of ``result`` against its live state: 0 wrong."""
    live = states()
    for name, run_id in result.run_ids.items():
        count = check_outcomes(Journal().outcomes(run_id), live[name])
        assert count.wrong == [], f"account {name}: " + "\n".join(count.wrong[:20])
    return live


def more_bids(path: Path) -> None:
    """Three more bids changed in each account (more items for the faults to hit)."""
    wb = openpyxl.load_workbook(path)
    header, rows = rows_of(wb["countries"])
    bid = header.index("bid")
    done = dict.fromkeys(NAMES, 0)
    for r in rows:
        if done[r[0].value] < 3:
            r[bid].value = round(float(r[bid].value) * 1.25, 4)
            done[r[0].value] += 1
    wb.save(path)


def test_a_set_applied_repaired_and_undone_under_faults_reports_truly_and_converges(
    config: Path, three: Sandbox, tmp_path: Path
) -> None:
    before = states()
    path = export(tmp_path)
    more_bids(path)
    edits = edit_three(path)
    plans = toolkit.plan_accounts(path)
    hit = faults(*on(WRITES, status=503, rate=0.5), *on(WRITES, status=504, rate=0.3))
    three.faults.configure(hit)
    try:
        applied = plans.apply(progress=False)
    finally:
        three.faults.clear()
    # the faults hit writes of more than one account
    assert sum(not r.ok for r in applied.results.values()) >= 2, applied.summary()
    judge(applied)
    # repair the set under answers lost after the write, then without faults
    three.faults.configure(faults(*on(WRITES, status=502, rate=0.4, after=True), seed=4))
    try:
        repaired = toolkit.repair_set(applied.set_id, progress=False)
    finally:
        three.faults.clear()
    judge(repaired)
    for _ in range(3):
        if len(toolkit.plan_accounts(path)) == 0:
            break
        toolkit.repair_set(applied.set_id, progress=False)
    # every change of the workbook is live in every account: planned again, nothing to do
    assert len(toolkit.plan_accounts(path)) == 0
    assert shows(edits) == dict.fromkeys(NAMES, True)
    assert three.foreign_calls() == []

    # undo the set under 500s everywhere, then finish it
    three.faults.configure(faults({"status": 500, "rate": 0.25}, seed=3))
    try:
        undone = toolkit.undo_set(applied.set_id, progress=False)
    except toolkit.IncompleteReadError:
        undone = None  # refused to plan: nothing sent
    finally:
        three.faults.clear()
    if undone is not None:
        judge(undone)
    for _ in range(3):
        if all(differences(states()[n], before[n]) == [] for n in NAMES):
            break
        if undone is not None and undone.run_ids:
            toolkit.repair_set(undone.set_id, progress=False)
        else:
            undone = toolkit.undo_set(applied.set_id, progress=False)
    now = states()
    assert {n: differences(now[n], before[n]) for n in NAMES} == dict.fromkeys(NAMES, [])
    assert three.foreign_calls() == []


def test_the_command_line_exports_applies_and_undoes_a_set(
    config: Path, three: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import cli_runner

    run = cli_runner(three, capsys)
    book = tmp_path / "agency.xlsx"
    code, out, err = run("export", "--account", "all", str(book))
    assert code == 0, err
    assert "3 accounts (a 6 campaigns, b 3 campaigns, c 3 campaigns)" in out
    edits = edit_three(book)
    code, out, err = run("plan", str(book), "--changes", str(tmp_path / "changes.csv"))
    assert code == 0, err
    assert "Plan of 3 account(s)" in out and "account b: Plan:" in out
    changes = (tmp_path / "changes.csv").read_text(encoding="utf-8")
    assert changes.splitlines()[0].startswith("account,")
    assert len(changes.splitlines()) == 4  # the header and one change per account
    code, out, err = run("plan", str(book), "--api-key", "x")
    assert code == 2 and "uses each account's own key" in err
    code, out, err = run("apply", str(book), "--yes")
    assert code == 0, err
    assert shows(edits) == dict.fromkeys(NAMES, True)
    set_id = out.split("Run of the set ")[1].split(":")[0]
    code, out, err = run("history")
    assert out.count(f"set {set_id} account") == 3
    code, out, err = run("undo", set_id, "--account", "c", "--yes")
    assert code == 0, err
    assert shows(edits) == {"a": True, "b": True, "c": False}
    code, out, err = run("undo", set_id, "--dry-run")
    assert code == 0 and "Dry run: nothing sent." in out
    assert "account c: its run" in out  # undone already: left as it is
    code, out, err = run("undo", set_id, "--yes")
    assert code == 0, err
    assert shows(edits) == dict.fromkeys(NAMES, False)
    code, out, err = run("undo", "set-20000101-000000-000000", "--yes")
    assert code != 0 and "no run of the set" in err
