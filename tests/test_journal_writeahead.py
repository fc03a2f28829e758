"""The journal is written ahead: a call is journaled before it is sent and its outcomes as they
arrive, so that ``history`` and ``undo`` work after the client was killed mid-apply.

Real HTTP against sandboxes of the tests' own; the sandbox's hang faults on the write paths
hold each call long enough to look at the journal while it is in flight.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd

import toolkit
from toolkit.bulk import Journal, make_plan, undo
from toolkit.bulk.apply import _pending
from toolkit.bulk.calls import Call
from toolkit.bulk.plan import Plan
from toolkit.sandbox import Sandbox

TABLES = {
    "campaigns": ["id", "name", "note", "work_status"],
    "countries": ["campaign_id", "country", "bid"],
    "lists": ["campaign_id", "list", "item"],
    "targets": ["campaign_id", "kind", "value", "list_type"],
    "bid_rules": ["campaign_id", "item", "bid"],
}
WRITES = ("/api/campaign/add-", "/api/campaign/drop-", "/api/campaign/update")
HOLD = 0.25  # seconds each write waits in the sandbox in the kill test


def hold_writes(sb: Sandbox, seconds: float) -> None:
    """Every write call waits ``seconds`` in the sandbox before it is carried out."""
    sb.faults.configure({"rules": [{"hang_s": seconds, "path": p} for p in WRITES]})


def snapshot(client, ids=None) -> dict[str, pd.DataFrame]:
    account = toolkit.load_account(client, ids, progress=False)
    assert account.failures.empty, account.failures
    out = {}
    for name, cols in TABLES.items():
        frame = account.table(name)[cols].astype(str)
        out[name] = frame.sort_values(cols).reset_index(drop=True)
    return out


def journal_counts(path: Path) -> tuple[int, int]:
    """Calls of the plan sent, and answered, read from a connection of the test's own."""
    if not path.exists():
        return 0, 0
    db = sqlite3.connect(path, timeout=5)
    try:
        row = db.execute("SELECT count(*), count(answered) FROM calls WHERE kind='plan'").fetchone()
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0, 0
    finally:
        db.close()
    return int(row[0]), int(row[1])


def writes_answered(sb: Sandbox) -> int:
    return sum(n for key, n in sb.stats().items() if any(p in key for p in WRITES))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "toolkit.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "CAMPAIGN_TOOLKIT_CONFIG": "/nonexistent/config.toml"},
    )


# A client that plans and applies: a note on 3 campaigns, a new subId on every campaign and a
# different bid on each campaign's first country (a drop and an add each).
APPLY = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import pandas as pd

    import toolkit
    from toolkit.bulk import make_plan

    url, key_file, journal = sys.argv[1:4]
    client = toolkit.connect(api_key=Path(key_file).read_text().strip(), base_url=url)
    account = toolkit.load_account(client, progress=False)
    base = {n: account.table(n).copy() for n in ("campaigns", "countries", "lists")}
    campaigns = base["campaigns"].copy()
    campaigns.loc[campaigns.index[:3], "note"] = "cut off mid-apply"
    countries = base["countries"].copy()
    for k, row in enumerate(countries.groupby("campaign_id").head(1).index):
        countries.loc[row, "bid"] = round(float(countries.loc[row, "bid"]) + 0.01 * (k + 1), 4)
    lists = base["lists"].copy()
    new = [
        {"campaign_id": cid, "list": "subid_black", "item": f"{int(cid):08x}"}
        for cid in campaigns["id"]
    ]
    lists = pd.concat([lists, pd.DataFrame(new)], ignore_index=True)
    desired = {"campaigns": campaigns, "countries": countries, "lists": lists}
    plan = make_plan(client, desired, base=base)
    print(len(plan), flush=True)
    plan.apply(client, progress=False, journal=journal)
    """
)


def test_a_client_killed_mid_apply_shows_unfinished_and_undo_restores_exactly(tmp_path):
    journal = tmp_path / "journal.db"
    with Sandbox(campaigns=8, seed=11, accounts=1) as sb:
        key_file = tmp_path / "key"
        key_file.write_text(sb.api_keys[0])
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        before = snapshot(client)
        script = tmp_path / "apply.py"
        script.write_text(APPLY)
        hold_writes(sb, HOLD)
        proc = subprocess.Popen(
            [sys.executable, str(script), sb.url, str(key_file), str(journal)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            planned = int(proc.stdout.readline())  # the plan is built; apply starts
            assert planned >= 12
            for _ in range(1500):  # at most ~30 s
                sent, _answered = journal_counts(journal)
                if sent >= planned // 2 or proc.poll() is not None:
                    break
                time.sleep(0.02)
            assert proc.poll() is None, proc.stderr.read()  # still applying
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        sent, answered = journal_counts(journal)
        assert planned // 2 <= sent < planned and answered <= sent
        for _ in range(250):  # a call held by the sandbox lands after the client died
            if writes_answered(sb) >= sent:
                break
            time.sleep(0.02)
        time.sleep(2 * HOLD)  # past the hold of any call still in the sandbox
        # no call reached the sandbox unjournaled (the last one journaled may not have been
        # sent when the client died)
        assert sent - 1 <= writes_answered(sb) <= sent
        sb.faults.clear()
        changed = snapshot(client)
        assert any(not changed[n].equals(before[n]) for n in TABLES)  # the run changed things

        runs = toolkit.history(journal)
        assert len(runs) == 1
        run = runs.iloc[0]
        assert run["state"] == "unfinished" and pd.isna(run["finished"])
        assert (run["calls"], run["sent"], run["answered"]) == (planned, sent, answered)
        shown = cli("history", "--journal", str(journal))
        assert shown.returncode == 0, shown.stderr
        said = " ".join(shown.stdout.split())  # the sentence as read, wherever it wraps
        line = re.search(
            r"Run (\S+) did not finish: (\d+) of (\d+) call\(s\) sent.*?of (\d+) ", said
        )
        assert line, shown.stdout
        assert line.groups() == (run["run_id"], str(sent), str(planned), str(answered))

        undone = cli(
            "undo",
            run["run_id"],
            "--yes",
            "--journal",
            str(journal),
            "--base-url",
            sb.url,
            "--api-key-file",
            str(key_file),
        )
        assert undone.returncode == 0, undone.stdout + undone.stderr
        assert f"Run {run['run_id']} did not finish: {sent} of {planned}" in undone.stdout
        after = snapshot(client)
        for name in TABLES:
            pd.testing.assert_frame_equal(after[name], before[name], obj=name)
        runs = toolkit.history(journal)
        assert list(runs["state"]) == ["unfinished", "finished"]


def test_the_call_is_in_the_journal_before_the_sandbox_carries_it_out(tmp_path):
    with Sandbox(campaigns=3, seed=5, accounts=1) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        account = toolkit.load_account(client, progress=False)
        base = {"lists": account.table("lists").copy()}
        cid = int(account.table("campaigns")["id"].iloc[0])
        row = pd.DataFrame([{"campaign_id": cid, "list": "subid_black", "item": "c0ffee42"}])
        desired = {"lists": pd.concat([base["lists"], row], ignore_index=True)}
        plan = make_plan(client, desired, base=base, live=account)
        assert len(plan) == 1
        journal = Journal(tmp_path / "journal.db")
        hold_writes(sb, 3)
        results = []
        worker = threading.Thread(
            target=lambda: results.append(plan.apply(client, progress=False, journal=journal))
        )
        worker.start()
        try:
            for _ in range(1000):  # at most ~20 s
                if journal_counts(journal.path)[0]:
                    break
                time.sleep(0.02)
            # the call is journaled and unanswered, the sandbox holds it: not carried out
            db = sqlite3.connect(journal.path)
            calls = db.execute("SELECT call, answered FROM calls").fetchall()
            pending = db.execute("SELECT action, target, item, outcome FROM outcomes").fetchall()
            db.close()
            assert "c0ffee42" not in client.lists.get(cid, "subid_black")
            assert writes_answered(sb) == 0
        finally:
            worker.join(60)
        assert len(calls) == 1 and calls[0][1] is None and "c0ffee42" in calls[0][0]
        assert pending == [("add", "subid_black", "c0ffee42", "unknown")]
        # the answer replaced the pending outcome, and the run finished
        (result,) = results
        assert [o.outcome for o in result.outcomes] == ["applied"]
        assert journal.outcomes(result.run_id)["outcome"].tolist() == ["applied"]
        run = journal.runs().iloc[0]
        assert (run["state"], run["sent"], run["answered"]) == ("finished", 1, 1)
        assert "c0ffee42" in client.lists.get(cid, "subid_black")


def test_undo_of_calls_journaled_but_never_carried_out_changes_nothing(tmp_path):
    """Undo reads live state: calls journaled as sent that never landed left the account as
    before the run, so undo has nothing to put back and sends nothing."""
    with Sandbox(campaigns=4, seed=3, accounts=1) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        before = snapshot(client)
        account = toolkit.load_account(client, progress=False)
        started = account.table("campaigns").query("work_status == 'Started'")["id"]
        ruled = account.table("bid_rules")["campaign_id"]
        cid = int(sorted(set(started) & set(ruled))[0])
        country = account.table("countries").query("campaign_id == @cid").iloc[0]
        code, bid = str(country["country"]), float(country["bid"])
        rule = account.table("bid_rules").query("campaign_id == @cid").iloc[0]
        item, rule_bid = str(rule["item"]), float(rule["bid"])
        calls = [
            Call("pause", "pause", "campaign", (cid,), previous={cid: "Started"}),
            Call("drop", "drop", "country", (cid,), items=(code,), previous={cid: {code: bid}}),
            Call("drop", "drop", "bid_rule", (cid,), items=(item,), previous={item: rule_bid}),
            Call("add", "add", "country", (cid,), items=(code,), bids={code: bid + 0.05}),
            Call("add", "add", "subid_black", (cid,), items=("abcd0123",)),
            Call("add", "add", "bid_rule", (cid,), items=("beef0123",), bid=0.5),
        ]
        journal = Journal(tmp_path / "journal.db")
        run_id = journal.start_run(client, Plan(calls))
        for seq, call in enumerate(calls):  # journaled as sent; none reaches the sandbox
            journal.call_sent(run_id, seq, call, _pending(seq, call))
        run = journal.runs().iloc[0]
        assert (run["state"], run["sent"], run["answered"], run["unknown"]) == (
            "unfinished",
            6,
            0,
            6,
        )
        result = undo(client, run_id, journal=journal, progress=False)
        assert result.ok, result.summary()
        assert result.outcomes == [] and result.run_id is None
        after = snapshot(client)
        for name in TABLES:
            pd.testing.assert_frame_equal(after[name], before[name], obj=name)


def _rules_of(client, cid: int) -> list[tuple]:
    fields = ("type", "cond", "amount", "lead_type", "lead_cond", "lead_amount")
    return sorted(tuple(r[f] for f in fields) for r in client.cpa_rules.list(cid))


def test_undo_restores_dropped_cpa_rules_once_and_never_duplicates_a_cut_off_drop(tmp_path):
    """Undo of a drop of several CPA rules re-adds each rule once; a drop journaled but cut
    off before it landed re-adds nothing (the rules are still live: a re-add would double
    them)."""
    with Sandbox(campaigns=20, seed=3, accounts=1) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        rules = toolkit.load_account(client, progress=False).table("cpa_rules")
        sizes = rules.groupby(rules["campaign_id"].astype(int)).size()
        assert sizes.max() >= 2, "the seeded account should have a campaign with 2+ CPA rules"
        cid = int(sizes.idxmax())
        before = _rules_of(client, cid)
        desired = {"cpa_rules": rules[rules["campaign_id"] != cid]}
        plan = make_plan(client, desired, {"cpa_rules": rules}, allow=("drop_share",))
        journal = Journal(tmp_path / "journal.db")
        applied = plan.apply(client, journal=journal, progress=False)
        assert applied.ok and _rules_of(client, cid) == []
        undone = undo(client, applied.run_id, journal=journal, progress=False)
        assert undone.ok, undone.summary()
        assert _rules_of(client, cid) == before

        # the same drop, journaled as sent but never carried out
        live = toolkit.load_account(client, progress=False).table("cpa_rules")
        again = make_plan(
            client,
            {"cpa_rules": live[live["campaign_id"] != cid]},
            {"cpa_rules": live},
            allow=("drop_share",),
        )
        run_id = journal.start_run(client, again)
        for seq, call in enumerate(again.calls):
            journal.call_sent(run_id, seq, call, _pending(seq, call))
        undo(client, run_id, journal=journal, progress=False)
        assert _rules_of(client, cid) == before


def test_undo_drops_the_cpa_rules_a_run_added_and_only_those(tmp_path):
    """The add answers no rule id: undo finds the rules by the ids live before the add and
    their fields, leaves a twin that was there before alone, and adds nothing back when the
    add never landed."""
    with Sandbox(campaigns=20, seed=3, accounts=1) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        rules = toolkit.load_account(client, progress=False).table("cpa_rules")
        cid = int(rules["campaign_id"].iloc[0])
        twin = rules[rules["campaign_id"] == cid].iloc[[0]].copy()
        twin["id"] = None  # the same fields as a rule already there
        other = twin.copy()
        other["amount"] = float(other["amount"].iloc[0]) + 7
        desired = {"cpa_rules": pd.concat([rules, twin, other], ignore_index=True)}
        before = _rules_of(client, cid)
        plan = make_plan(client, desired, {"cpa_rules": rules})
        journal = Journal(tmp_path / "journal.db")
        applied = plan.apply(client, journal=journal, progress=False)
        assert applied.ok and len(_rules_of(client, cid)) == len(before) + 2
        undone = undo(client, applied.run_id, journal=journal, progress=False)
        assert undone.ok, undone.summary()
        assert _rules_of(client, cid) == before
        live_ids = {int(r["id"]) for r in client.cpa_rules.list(cid)}
        assert live_ids == {int(i) for i in rules.loc[rules["campaign_id"] == cid, "id"]}

        # an add journaled as sent but never carried out: undo drops nothing
        again = make_plan(client, desired, {"cpa_rules": rules})
        run_id = journal.start_run(client, again)
        for seq, call in enumerate(again.calls):
            journal.call_sent(run_id, seq, call, _pending(seq, call))
        undo(client, run_id, journal=journal, progress=False)
        assert _rules_of(client, cid) == before
