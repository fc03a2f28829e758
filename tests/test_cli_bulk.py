"""The bulk commands of the command line, end to end against a sandbox over real HTTP."""

from __future__ import annotations

import os
import subprocess
import sys

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.sandbox import Sandbox


def run(args: list[str], env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture()
def env(tmp_path):
    with Sandbox(campaigns=6, seed=3) as sb:
        values = {
            **os.environ,
            "CAMPAIGN_API_KEY": sb.api_keys[0],
            "CAMPAIGN_API_URL": sb.url,
            "CAMPAIGN_TOOLKIT_JOURNAL": str(tmp_path / "journal.db"),
            "CAMPAIGN_TOOLKIT_CONFIG": str(tmp_path / "missing.toml"),
        }
        yield values, sb


def test_export_plan_apply_history_undo(env, tmp_path):
    values, sb = env
    book = tmp_path / "account.xlsx"
    assert "Exported" in run(["export", str(book)], values).stdout
    assert "nothing to do" in run(["plan", str(book)], values).stdout
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
    cid = client.campaigns.list()[0]["id"]
    wb = openpyxl.load_workbook(book)
    wb["lists"].append([cid, "subid_black", "facade01"])
    wb.save(book)
    out = run(["plan", str(book)], values).stdout
    assert "add subid_black" in out
    refused = run(["apply", str(book)], values, check=False)  # no terminal, no --yes
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert "facade01" not in client.lists.get(cid, "subid_black")
    out = run(["apply", str(book), "--yes"], values).stdout
    assert "Plan: 1 call, 1 change on 1 campaign" in out and "Applied: 1 of 1 change (run" in out
    report = book.with_suffix(".result.xlsx")
    assert str(report) in out
    rows = openpyxl.load_workbook(report)["lists"]
    header = [c.value for c in rows[1]]
    outcomes = {
        (r[header.index("item")], r[header.index("outcome")])
        for r in rows.iter_rows(min_row=2, values_only=True)
    }
    assert ("facade01", "applied") in outcomes
    assert {o for _i, o in outcomes} == {"applied", "unchanged"}
    assert "facade01" in client.lists.get(cid, "subid_black")
    runs = run(["history"], values).stdout
    run_id = runs.splitlines()[1].split()[0]
    run(["undo", run_id, "--yes"], values)
    assert "facade01" not in client.lists.get(cid, "subid_black")


def test_bad_workbook_is_one_clear_error(env, tmp_path):
    values, sb = env
    book = tmp_path / "account.xlsx"
    run(["export", str(book)], values)
    wb = openpyxl.load_workbook(book)
    cid = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url).campaigns.list()[0]["id"]
    wb["countries"].append([cid, "XX", None, "abc"])
    wb.save(book)
    proc = run(["plan", str(book)], values, check=False)
    assert proc.returncode == 2
    assert "countries" in proc.stderr and "XX" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sb.api_keys[0] not in proc.stderr + proc.stdout


def test_demo_runs_on_a_fresh_sandbox_of_its_own(tmp_path):
    values = {k: v for k, v in os.environ.items() if not k.startswith("CAMPAIGN_")}
    values["CAMPAIGN_TOOLKIT_CONFIG"] = str(tmp_path / "missing.toml")
    values["CAMPAIGN_TOOLKIT_DATA"] = str(tmp_path / "data")
    # a configured account is not the demo's either: it never connects to it
    values["CAMPAIGN_API_KEY"], values["CAMPAIGN_API_URL"] = "0" * 32, "http://127.0.0.1:9"
    out = run(["demo", "--out", str(tmp_path / "demo"), "--quiet"], values).stdout
    assert out.splitlines()[0].startswith(f"The demo writes its files into {tmp_path / 'demo'}/")
    assert not (tmp_path / "data").exists(), "the user's built-in sandbox is left alone"
    assert "Plan:" in out and "Applied:" in out and "failed" not in out
    assert "4. Bid report:" in out
    for name in ("account.xlsx", "actions.xlsx", "result.csv", "journal.db", "bids.html"):
        assert (tmp_path / "demo" / name).exists()
    page = (tmp_path / "demo" / "bids.html").read_text(encoding="utf-8")
    assert "<svg" in page and "below minimum" in page
    # the rules step: a backtest against the threshold rule, then a plan with its reasons
    assert "5. Rules over" in out and "p_loss" in out
    # what the statistics are made of, and the payouts written beside them
    assert "each in one source, one subId and one country" in out and "55 %" in out
    payouts = pd.read_csv(tmp_path / "demo" / "payouts.csv")
    assert list(payouts.columns) == ["campaign_id", "country", "payout"] and len(payouts) > 50
    backtest = pd.read_csv(tmp_path / "demo" / "backtest.csv").set_index("rule_set")
    ours, theirs = backtest.loc["statistical"], backtest.drop(index="statistical").iloc[0]
    assert ours["revenue_lost"] < theirs["revenue_lost"]
    decisions = pd.read_csv(tmp_path / "demo" / "decisions.csv")
    planned = decisions[decisions["status"] == "planned"]
    assert len(planned) and (planned.groupby(["rule", "campaign_id"]).size() <= 3).all()
    assert toolkit.load_rules(tmp_path / "demo" / "rules.yaml")[0].limit == 3
