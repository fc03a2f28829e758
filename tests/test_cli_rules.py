"""``campaign-toolkit rules``, end to end against a sandbox over real HTTP: the dry run sends
nothing, ``--apply --yes`` changes the account as the decisions say and is undone from the
journal, ``--decisions`` writes every decision, and broken inputs are clear messages."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
#: Paths of the calls that change an account (every other call of a rules run reads).
WRITES = ("/add-", "/drop-", "/update", "/start", "/pause", "/archive", "/create", "/batch")

RULES = """\
rules:
  - name: losing subIds
    level: subid
    when: p_loss >= 0.95 and clicks >= 300
    action: blacklist
    limit: 2
    window: 7
  - name: cheaper countries
    level: country
    when: roi < -50
    action: bid
    factor: 0.8
  - name: stop one campaign
    level: campaign
    when: cost > 0
    action: pause
    scope:
      campaigns: [1000001]
"""

BROKEN = """\
rules:
  - name: fine
    level: subid
    when: p_loss >= 0.95
    action: blacklist
  - name: bad one
    level: subid
    when: p_lose >= 0.9
    action: ban
"""


def run(args: list[str], env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture()
def env(tmp_path):
    """The sandbox, the command's environment, the rules file and the statistics export."""
    with Sandbox(campaigns=12, seed=11) as sb:
        sb.stats_export(tmp_path / "stats.csv", days=14, seed=3)
        (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
        values = {
            **os.environ,
            "CAMPAIGN_API_KEY": sb.api_keys[0],
            "CAMPAIGN_API_URL": sb.url,
            "CAMPAIGN_TOOLKIT_JOURNAL": str(tmp_path / "journal.db"),
            "CAMPAIGN_TOOLKIT_CONFIG": str(tmp_path / "missing.toml"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        yield values, sb


def files(tmp_path: Path) -> list[str]:
    return [str(tmp_path / "rules.yaml"), str(tmp_path / "stats.csv")]


def client_of(sb: Sandbox):  # noqa: ANN201
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


def snapshot(sb: Sandbox) -> dict[str, list[tuple]]:
    """What rules change: lists, bid rules, country bids, campaigns' work status."""
    account = toolkit.load_account(client_of(sb), progress=False)
    assert account.failures.empty, account.failures
    columns = {
        "lists": ["campaign_id", "list", "item"],
        "bid_rules": ["campaign_id", "item", "bid"],
        "countries": ["campaign_id", "country", "bid"],
        "campaigns": ["id", "work_status"],
    }
    return {
        name: sorted(map(tuple, account.table(name)[cols].astype(str).to_numpy().tolist()))
        for name, cols in columns.items()
    }


def writes(sb: Sandbox) -> list[str]:
    return [k for k in sb.stats() if not k.startswith("GET ") or any(w in k for w in WRITES)]


def no_secret(proc: subprocess.CompletedProcess, sb: Sandbox) -> None:
    assert sb.api_keys[0] not in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_dry_run_previews_with_reasons_and_sends_nothing(env, tmp_path):
    values, sb = env
    before = snapshot(sb)
    proc = run(["rules", *files(tmp_path)], values)
    out = proc.stdout
    assert out.startswith("Plan: ")
    assert "blacklist subId" in out and "(losing subIds: p_loss " in out
    assert "(cheaper countries: roi " in out and " -> " in out
    assert "pause (was Started) (stop one campaign: cost " in out
    assert re.search(r"^Decisions: \d+ \(", out, re.M)
    for name in ("losing subIds", "cheaper countries", "stop one campaign"):
        assert re.search(rf"^{name}\s+\d+", out, re.M), name
    assert "Nothing sent (add --apply" in out
    no_secret(proc, sb)
    assert writes(sb) == []
    assert snapshot(sb) == before
    assert "No runs in the journal." in run(["history"], values).stdout


def test_apply_yes_changes_the_account_as_decided_and_undo_restores_it(env, tmp_path):
    values, sb = env
    before = snapshot(sb)
    asked = run(["rules", *files(tmp_path), "--apply"], values, check=False)  # no terminal
    assert asked.returncode == 1 and "--yes" in asked.stderr and "Nothing sent." in asked.stdout
    assert writes(sb) == [] and snapshot(sb) == before
    csv = tmp_path / "decisions.csv"
    proc = run(["rules", *files(tmp_path), "--apply", "--yes", "--decisions", str(csv)], values)
    no_secret(proc, sb)
    n = re.search(r"Plan: \d+ calls?, (\d+) changes?", proc.stdout).group(1)  # the plan's count
    assert re.search(rf"Applied: {n} of {n} changes? \(run [0-9a-f-]+\)", proc.stdout), proc.stdout
    assert "failed" not in proc.stdout
    run_id = re.search(r"\(run ([0-9a-f-]+)\)", proc.stdout).group(1)
    decisions = pd.read_csv(csv, dtype={"key": str})
    planned = decisions[decisions["status"] == "planned"]
    assert set(planned["rule"]) == {"losing subIds", "cheaper countries", "stop one campaign"}
    # after --apply the file tells what became of each planned decision
    assert "Decisions with their evidence and outcomes:" in proc.stdout
    assert set(planned["outcome"]) == {"applied"}
    assert decisions.loc[decisions["status"] != "planned", "outcome"].isna().all()
    after = snapshot(sb)
    listed = set(after["lists"])
    bids = {(c, k): float(b) for c, k, b in after["countries"]}
    status = dict(after["campaigns"])
    for row in planned.itertuples():
        cid = str(row.campaign_id)
        if row.action == "blacklist" and row.new == "blacklisted":
            assert (cid, row.target, row.key) in listed, row
        elif row.action == "blacklist":  # a whitelisted subId dropped from the whitelist
            assert (cid, row.target, row.key) not in listed, row
        elif row.action == "bid":
            assert bids[(cid, row.key)] == pytest.approx(float(row.new)), row
        else:
            assert status[cid] == "Paused", row
    assert after != before
    assert run_id in run(["history"], values).stdout
    undone = run(["undo", run_id, "--yes"], values)
    assert "failed" not in undone.stdout
    assert snapshot(sb) == before


def test_a_second_run_on_the_same_statistics_has_nothing_to_apply(env, tmp_path):
    values, sb = env
    first = run(["rules", *files(tmp_path), "--apply", "--yes"], values)
    run_id = re.search(r"Applied: \d+ of \d+ changes? \(run ([0-9a-f-]+)\)", first.stdout).group(1)
    after = snapshot(sb)
    csv = tmp_path / "again.csv"
    second = run(["rules", *files(tmp_path), "--apply", "--yes", "--decisions", str(csv)], values)
    no_secret(second, sb)
    assert second.stdout.startswith("Plan: nothing to do.\n"), second.stdout
    assert "Applied" not in second.stdout and "planned" not in second.stdout
    assert snapshot(sb) == after
    decisions = pd.read_csv(csv, dtype={"key": str})
    steps = decisions[decisions["rule"] == "cheaper countries"]
    assert len(steps) and set(steps["status"]) == {"already"}
    assert set(steps["earlier_run"]) == {run_id}  # the run that made the step
    history = run(["history"], values).stdout
    assert set(re.findall(r"\d{8}-\d{6}-[0-9a-f]{6}", history)) == {run_id}  # no empty run
    # an as-of day outside the statistics: one line naming their days, the account not read
    asked = sb.stats()
    proc = run(["rules", *files(tmp_path), "--as-of", "2025-01-01"], values, check=False)
    assert proc.returncode == 2 and proc.stdout == "" and sb.stats() == asked
    assert re.fullmatch(
        r"campaign-toolkit: as_of 2025-01-01 is outside the statistics "
        r"\(\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d\); give a day in that range\n",
        proc.stderr,
    ), proc.stderr


def test_decisions_file_holds_every_decision(env, tmp_path):
    values, sb = env
    client = client_of(sb)
    last = pd.read_csv(tmp_path / "stats.csv", usecols=[0]).iloc[:, 0]
    as_of = pd.to_datetime(last, utc=True).max().date() - dt.timedelta(days=3)
    expected = toolkit.evaluate_rules(
        str(tmp_path / "rules.yaml"), str(tmp_path / "stats.csv"), client, as_of=as_of
    ).decisions
    assert len(expected) > 10
    out = tmp_path / "decisions.csv"
    proc = run(["rules", *files(tmp_path), "--decisions", str(out), "--as-of", str(as_of)], values)
    assert f"Decisions with their evidence: {out}" in proc.stdout
    assert f"Decisions: {len(expected)} (" in proc.stdout
    written = pd.read_csv(out, dtype={"key": str})
    assert list(written.columns) == list(expected.columns)
    assert len(written) == len(expected)
    key = ["rule", "campaign_id", "key", "status"]
    assert sorted(map(tuple, written[key].astype(str).to_numpy().tolist())) == sorted(
        map(tuple, expected[key].astype(str).to_numpy().tolist())
    )
    windowed = written[written["rule"] == "losing subIds"]
    assert len(windowed) and set(windowed["until"]) == {str(as_of)}
    book = tmp_path / "decisions.xlsx"
    run(["rules", *files(tmp_path), "--decisions", str(book), "--as-of", str(as_of)], values)
    sheet = openpyxl.load_workbook(book, read_only=True)["decisions"]
    assert sheet.max_row == len(expected) + 1
    assert writes(sb) == []


def test_broken_rules_name_the_rule_and_field_and_send_nothing(env, tmp_path):
    values, sb = env
    (tmp_path / "rules.yaml").write_text(BROKEN, encoding="utf-8")
    proc = run(["rules", *files(tmp_path), "--apply", "--yes"], values, check=False)
    assert proc.returncode == 2
    assert "2 problems in" in proc.stderr and "rules.yaml" in proc.stderr
    assert "rule 2 'bad one' [action]: 'ban' is not one of" in proc.stderr
    assert "rule 2 'bad one' [when]: unknown metric 'p_lose'" in proc.stderr
    assert "rule 1" not in proc.stderr
    no_secret(proc, sb)
    assert sb.stats() == {}  # checked before connecting: not even a read
    assert "No runs in the journal." in run(["history"], values).stdout


def test_a_missing_stats_file_is_a_clear_message_and_sends_nothing(env, tmp_path):
    values, sb = env
    missing = tmp_path / "nowhere.csv"
    proc = run(["rules", str(tmp_path / "rules.yaml"), str(missing), "--apply", "--yes"],
               values, check=False)  # fmt: skip
    assert proc.returncode == 2
    assert f"{missing}: no such file" in proc.stderr
    no_secret(proc, sb)
    assert sb.stats() == {}


def test_bad_options_are_refused_before_anything_is_read(env, tmp_path):
    values, sb = env
    wrong = run(["rules", *files(tmp_path), "--decisions", str(tmp_path / "d.json")], values,
                check=False)  # fmt: skip
    assert wrong.returncode == 2 and "d.json: the decisions are written as .csv or .xlsx" in (
        wrong.stderr
    )
    date = run(["rules", *files(tmp_path), "--as-of", "yesterday"], values, check=False)
    assert date.returncode == 2 and "'yesterday' is not a date" in date.stderr
    assert sb.stats() == {}


def test_the_template_loads_and_runs_on_the_demo_statistics(env, tmp_path):
    values, sb = env
    template = ROOT / "templates" / "rules.yaml"
    rules = toolkit.load_rules(template)
    assert {r.action for r in rules} >= {"blacklist", "bid", "pause"}
    assert {r.level for r in rules} == {"subid", "source", "country", "campaign"}
    proc = run(["rules", str(template), str(tmp_path / "stats.csv"), "--allow", "drop_share"],
               values)  # fmt: skip
    for rule in rules:
        assert re.search(rf"^{rule.name}\s+\d+", proc.stdout, re.M), rule.name
    assert writes(sb) == []


def test_the_rules_page_names_every_field_metric_action_and_status():
    from toolkit.rules import evaluate
    from toolkit.rules.decide import OVER_LIMIT
    from toolkit.rules.model import ACTIONS, FIELDS, METRICS

    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    statuses = (evaluate.PLANNED, evaluate.ALREADY, evaluate.CONFLICT, evaluate.UNKNOWN,
                evaluate.NOT_TARGETED, evaluate.NO_BID, evaluate.ARCHIVED, OVER_LIMIT)  # fmt: skip
    for word in (*FIELDS, *METRICS, *ACTIONS, *statuses):
        assert f"| `{word}` |" in page, word
    assert "\n## Backtest\n" in page
    assert "docs/rules.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(rules.md)" in (ROOT / "docs" / "api.md").read_text(encoding="utf-8")


def test_actions_writes_the_changes_to_review_and_apply_from_excel(env, tmp_path):
    values, sb = env
    review = tmp_path / "review.xlsx"
    proc = run(["rules", *files(tmp_path), "--actions", str(review)], values)
    assert f"Changes to review in Excel: {review}" in proc.stdout
    assert writes(sb) == []
    sheet = openpyxl.load_workbook(review)["actions"]
    rows = sheet.max_row - 1
    assert rows > 5 and [c.value for c in sheet[1]][-2:] == ["rule", "why"]
    planned = run(["plan", str(review)], values).stdout
    assert re.search(rf"^Plan: \d+ calls?, {rows} changes?", planned, re.M), planned
    bad = run(["rules", *files(tmp_path), "--actions", str(tmp_path / "r.csv")], values, False)
    assert bad.returncode == 2 and "name it so" in bad.stderr
