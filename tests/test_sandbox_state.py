"""The built-in sandbox keeps the user's demo account in one SQLite file of the data folder:
the state outlives each command, two processes on it at once are safe, ``sandbox reset``
starts it over, and the tests never use the user's own folder.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import toolkit
import toolkit.client.client as client_module
from toolkit.bulk.journal import default_path
from toolkit.bulk.workbook.actions import TEMPLATES, plan_actions, write_template
from toolkit.cli import main
from toolkit.datadir import ENV_DATA, data_dir, sandbox_state, user_data_dir
from toolkit.errors import ConfigError, ToolkitError

from .conftest import SESSION_DATA, USER_FILES, child_env, user_files


def cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolkit.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=cwd,
    )


def rows(path: Path, sql: str, *params: object) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(sql, params).fetchall()


def blacklist_book(path: Path, *subids: str) -> Path:
    title, text, _examples = TEMPLATES["blacklist.xlsx"]
    wanted = [
        {"action": "add", "target": "subid_black", "campaign": "push", "item": s} for s in subids
    ]
    return write_template(path, title, text, wanted)


# --------------------------------------------------------------------------- where it lives


def test_the_tests_never_use_the_user_data_folder(tmp_path):
    session = SESSION_DATA["folder"]
    assert data_dir() == session and sandbox_state() == session / "sandbox.db"
    assert not data_dir().is_relative_to(user_data_dir())
    assert session.resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())
    # a child without a key: a command on the built-in sandbox, and where it would journal
    probe = (
        "import toolkit; from toolkit.datadir import data_dir;"
        " from toolkit.bulk.journal import default_path; toolkit.connect().account.balance();"
        " print(data_dir()); print(default_path().parent)"
    )
    env = child_env(None, tmp_path)
    del env["CAMPAIGN_TOOLKIT_JOURNAL"]
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [str(session), str(session)]
    assert (session / "sandbox.db").exists()
    assert user_files() == USER_FILES, "the user's own journal and sandbox state are untouched"


def test_the_journal_sits_beside_the_state(own_data, monkeypatch):
    monkeypatch.delenv("CAMPAIGN_TOOLKIT_JOURNAL")
    assert default_path() == own_data / "journal.db"
    monkeypatch.delenv(ENV_DATA)
    monkeypatch.setenv("XDG_DATA_HOME", str(own_data / "xdg"))
    assert data_dir() == own_data / "xdg" / "campaign-toolkit"
    assert default_path() == own_data / "xdg" / "campaign-toolkit" / "journal.db"


def test_connect_without_a_key_keeps_the_state_in_the_data_folder(own_data, caplog):
    caplog.set_level("WARNING", logger="toolkit")
    with toolkit.connect() as client:
        cid = client.campaigns.list()[0]["id"]
        client.lists.add(cid, "subid_black", ["c0ffee01"])
    state = own_data / "sandbox.db"
    assert f"built-in sandbox, demo account, state in {state}" in caplog.text
    assert rows(state, "SELECT item FROM lists WHERE item='c0ffee01'") == [("c0ffee01",)]
    # another process sees it, with the same key: the file remembers the account
    code = (
        "import toolkit; c = toolkit.connect();"
        f" print('c0ffee01' in c.lists.get({cid}, 'subid_black'), c.key_source)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=child_env(None, own_data),
        capture_output=True,
        text=True,
        check=True,
    )
    shown, source = out.stdout.split(" ", 1)
    assert shown == "True" and source.strip() == client.key_source
    assert f"state in {state}" in out.stderr.splitlines()[0]


# --------------------------------------------------------------------------- two at once


def test_two_commands_at_once_on_a_new_state_both_land(own_data, tmp_path):
    """Two applies start together on a data folder with no state yet: one seeds, both apply
    their own blacklist, and the state holds both (read from the file, not from them)."""
    env = child_env(None, tmp_path)
    del env["CAMPAIGN_TOOLKIT_JOURNAL"]
    books = [blacklist_book(tmp_path / f"{s}.xlsx", s) for s in ("aaaa01", "bbbb02")]
    procs = [cli(["apply", str(b), "--yes"], env, tmp_path) for b in books]
    outs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, out + err
        assert "Applied:" in out and "failed" not in out, out
    state = own_data / "sandbox.db"
    assert rows(state, "SELECT count(*) FROM accounts") == [(2,)], "seeded once"
    push = rows(
        state,
        "SELECT id FROM campaigns WHERE user_id=(SELECT min(user_id) FROM accounts)"
        " AND ad_format='push'",
    )
    assert push
    for (cid,) in push:
        items = rows(
            state, "SELECT item FROM lists WHERE campaign_id=? AND list='subid_black'", cid
        )
        assert {"aaaa01", "bbbb02"} <= {i for (i,) in items}, cid
    runs = rows(own_data / "journal.db", "SELECT base_url FROM runs")
    assert len(runs) == 2 and runs[0] == runs[1], "both bound to the same state"
    assert runs[0][0].startswith(f"sandbox:{state}#")


OPEN_AND_CREATE = """
import json, os, pathlib, sys, time
import requests
from toolkit.sandbox import Sandbox
from toolkit.sandbox.refs import load_refs
load_refs()
go = pathlib.Path(sys.argv[1])
(go.parent / f"ready-{os.getpid()}").touch()
while not go.exists():
    time.sleep(0.002)
sb = Sandbox(db=sys.argv[2]).start()
key = sb.api_keys[0]
ids = []
for n in range(10):
    body = {"adFormat": "push", "name": f"at once {os.getpid()} {n}", "vertical_id": 1}
    r = requests.post(sb.url + "/api/campaign/create", params={"api-key": key}, json=body)
    ids.append(r.json()["item"]["id"])
print(json.dumps({"key": key, "ids": ids, "service": sb.service}))
sb.stop()
"""


def test_processes_opening_a_new_file_at_once_seed_it_once_and_share_ids(tmp_path):
    """Two processes open the same new file at the same moment (each its own server on its
    own port), then create campaigns at once: one seeding, one set of keys, no id twice."""
    go, state = tmp_path / "go", tmp_path / "state.db"
    env = child_env(None, tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AND_CREATE, str(go), str(state)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)  # both children ready (imported, reference data loaded)
    go.touch()
    answers = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        answers.append(json.loads(out))
    assert len({a["key"] for a in answers}) == 1 and len({a["service"] for a in answers}) == 1
    ids = [i for a in answers for i in a["ids"]]
    assert len(ids) == len(set(ids)) == 20
    assert rows(state, "SELECT count(*) FROM accounts") == [(2,)]
    created = rows(state, "SELECT id FROM campaigns WHERE name LIKE 'at once %'")
    assert sorted(i for (i,) in created) == sorted(ids)
    assert rows(state, "SELECT value FROM meta WHERE key='campaigns'") == [("50",)]


# --------------------------------------------------------------------------- reset


def test_sandbox_reset_starts_the_state_over(own_data, capsys, tmp_path):
    state = own_data / "sandbox.db"
    assert main(["sandbox", "reset"]) == 0
    out = capsys.readouterr().out
    assert f"Reset the built-in sandbox's state in {state}:" in out
    assert "no demo account (a new file)" in out
    client = toolkit.connect()
    cid = client.campaigns.list(ad_format="push")[0]["id"]
    plan = plan_actions(client, blacklist_book(tmp_path / "b.xlsx", "dead0001"))
    journal = tmp_path / "journal.db"
    run = plan.apply(client, progress=False, journal=journal)
    assert run.ok and "dead0001" in client.lists.get(cid, "subid_black")
    assert main(["sandbox", "reset"]) == 0
    out = capsys.readouterr().out
    assert "before: a demo account of 50 campaign(s)" in out and "undo and repair" in out
    # the running process goes on, on the new state; the old run is another state's
    assert "dead0001" not in client.lists.get(cid, "subid_black")
    assert rows(state, "SELECT count(*) FROM lists WHERE item='dead0001'") == [(0,)]
    with pytest.raises(ToolkitError, match=f"was made on sandbox:{state}#"):
        toolkit.undo(client, run.run_id, journal=journal, progress=False)


def test_sandbox_reset_of_a_file_and_the_server_on_it(tmp_path, capsys):
    db = tmp_path / "state.db"
    assert main(["sandbox", "reset", "--db", str(db), "--campaigns", "4"]) == 0
    assert f"Reset the sandbox state in {db}:" in capsys.readouterr().out
    assert rows(db, "SELECT value FROM meta WHERE key='campaigns'") == [("4",)]
    assert main(["sandbox", "--db", str(db), "--port", "0", "--once"]) == 0
    assert "Sandbox running at http://127.0.0.1:" in capsys.readouterr().out
    assert rows(db, "SELECT count(*) FROM campaigns") == [(4 + 3,)]


def test_a_stopped_built_in_sandbox_is_started_again(own_data):
    first = toolkit.connect()
    first.sandbox.stop()
    second = toolkit.connect()
    assert second.sandbox is not first.sandbox and second.sandbox.running
    assert second.account.balance()["currency"] == "USD"
    assert client_module._SANDBOX is second.sandbox


def test_a_state_file_that_is_not_one_is_a_clear_error(own_data, capsys):
    state = own_data / "sandbox.db"
    state.write_text("not a database\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"state {state} is not a sandbox database.*move"):
        toolkit.connect()
    assert main(["sandbox", "reset"]) == 2
    err = capsys.readouterr().err
    assert f"{state}: cannot be reset" in err and "nothing changed" in err
    assert state.read_text(encoding="utf-8") == "not a database\n"
