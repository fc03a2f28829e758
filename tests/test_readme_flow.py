"""README.md's "Bulk edits" commands, exactly as written and in their order, on the built-in
sandbox: each command is a process of its own over the same state in the data folder, as a
person types them. After each, the account is read from the SQLite state directly, never from
the command's own report.

The workbook is edited as a person edits it (a bid changed, a subId added to a blacklist) and
the questions of ``apply`` and ``undo`` are answered on a terminal.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from .conftest import child_env

ROOT = Path(__file__).resolve().parents[1]
RUN_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")
NEW_SUBID = "facade01"

pty = pytest.importorskip("pty", reason="answering on a terminal needs a pseudo-terminal")


def readme_commands() -> list[list[str]]:
    """The commands of the first ``bash`` block of README.md's "Bulk edits" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Bulk edits\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line, comments=True) for line in block.splitlines()]
    return [c for c in commands if c]


def as_person(
    args: list[str], env: dict[str, str], cwd: Path, answer: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``campaign-toolkit ARGS`` with a terminal for its input, typing ``answer``."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "toolkit.cli", *args],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
        )
        os.close(follower)
        follower = -1
        if answer is not None:
            os.write(leader, answer.encode())
        out, err = proc.communicate(timeout=300)
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert done.returncode == 0, f"{args}: {out}\n{err}"
    assert "Traceback" not in err
    return done


class State:
    """The built-in account, read straight from its SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def query(self, sql: str, *params: object) -> list[tuple]:
        with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True) as db:
            return db.execute(sql, params).fetchall()

    def bid(self, cid: int, code: str) -> float | None:
        rows = self.query("SELECT bid FROM countries WHERE campaign_id=? AND code=?", cid, code)
        return rows[0][0] if rows else None

    def blacklisted(self, cid: int) -> set[str]:
        rows = self.query("SELECT item FROM lists WHERE campaign_id=? AND list='subid_black'", cid)
        return {r[0] for r in rows}

    def demo_campaigns(self) -> int:
        return self.query(
            "SELECT count(*) FROM campaigns WHERE user_id=(SELECT min(user_id) FROM accounts)"
        )[0][0]


def edit_as_a_person(book: Path) -> tuple[int, str, float, float]:
    """Raise the first country bid of the workbook by a quarter and blacklist a subId in the
    same campaign; returns (campaign, country, old bid, new bid)."""
    wb = openpyxl.load_workbook(book)
    countries = wb["countries"]
    header = [c.value for c in countries[1]]
    row = countries[2]
    cid = int(row[header.index("campaign_id")].value)
    code = str(row[header.index("country")].value)
    cell = row[header.index("bid")]
    old = float(cell.value)
    new = round(old * 1.25, 4)
    cell.value = new
    lists = wb["lists"]
    names = [c.value for c in lists[1]]
    added = [None] * len(names)
    added[names.index("campaign_id")] = cid
    added[names.index("list")] = "subid_black"
    added[names.index("item")] = NEW_SUBID
    lists.append(added)
    wb.save(book)
    return cid, code, old, new


def test_readme_commands_are_the_flow():
    names = [c[1] for c in readme_commands()]
    assert all(c[0] == "campaign-toolkit" for c in readme_commands())
    assert names == ["export", "plan", "apply", "history", "undo"]


def test_readme_bulk_edits_work_as_written(own_data, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    env = child_env(None, tmp_path)
    del env["CAMPAIGN_TOOLKIT_JOURNAL"]  # the journal where a person's is: in the data folder
    state = State(own_data / "sandbox.db")
    export, plan, apply, history, undo = (c[1:] for c in readme_commands())

    done = as_person(export, env, work)
    book = work / export[1]
    assert book.exists()
    first = done.stderr.splitlines()[0]
    assert f"built-in sandbox, demo account, state in {state.path}" in first, done.stderr
    assert state.demo_campaigns() == 50

    cid, code, old, new = edit_as_a_person(book)
    assert state.bid(cid, code) == old and NEW_SUBID not in state.blacklisted(cid)

    done = as_person(plan, env, work)
    assert "add subid_black" in done.stdout, done.stdout
    assert state.bid(cid, code) == old and NEW_SUBID not in state.blacklisted(cid)

    done = as_person(apply, env, work, answer="y\n")
    assert "[y/N]" in done.stdout, "apply asks before it sends"
    assert state.bid(cid, code) == new
    assert NEW_SUBID in state.blacklisted(cid)
    assert book.with_suffix(".result.xlsx").exists()

    done = as_person(history, env, work)
    run_id = done.stdout.splitlines()[1].split()[0]
    assert RUN_ID.match(run_id), done.stdout
    assert (own_data / "journal.db").exists(), "the journal sits beside the sandbox's state"
    assert state.bid(cid, code) == new  # history changes nothing

    done = as_person([run_id if a == "RUN_ID" else a for a in undo], env, work, answer="y\n")
    assert "[y/N]" in done.stdout, "undo asks before it sends"
    assert state.bid(cid, code) == old
    assert NEW_SUBID not in state.blacklisted(cid)
    assert state.demo_campaigns() == 50
