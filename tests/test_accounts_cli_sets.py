"""The command line of bid reports and rules over a set of accounts (``--account all`` or
``--account a,b``), against a sandbox of three accounts over real HTTP with a config file of
profiles: one report file of the set with every row's account, rules applied to each account
with its own key (read back with each account's own client), statistics that name an
account outside the set and key options refused in one line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.sandbox import Sandbox

from .conftest import cli_runner, profiles_config

NAMES = ["a", "b", "c"]
#: Each account's subIds that never convert (blacklisted by the rule), and its click count.
TAGS = {"a": "a1", "b": "b2", "c": "c3"}
RULES = """\
- name: subIds that never convert
  level: subid
  when: clicks >= 300 and conversions = 0
  action: blacklist
"""
HEADER = "account,date,campaign_id,level,key,impressions,clicks,cost,conversions,revenue\n"


@pytest.fixture(scope="module")
def three() -> Iterator[Sandbox]:
    with Sandbox(campaigns=4, accounts=3, seed=5) as sb:
        yield sb


@pytest.fixture()
def config(three: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Profiles a, b, c of the sandbox's three accounts; the sandbox as seeded."""
    return profiles_config(three, tmp_path / "config.toml", monkeypatch, NAMES, "retries = 2\n")


@pytest.fixture()
def run(three: Sandbox, config: Path, capsys: Any) -> Callable[..., tuple[int, str, str]]:
    """The command line; no key of any account in what it prints."""
    inner = cli_runner(three, capsys)

    def run_checked(*args: str) -> tuple[int, str, str]:
        code, out, err = inner(*args)
        assert not any(key in out + err for key in three.api_keys)
        return code, out, err

    return run_checked


def first_campaign(name: str) -> int:
    with toolkit.connect(profile=name) as client:
        return int(client.campaigns.list()[0]["id"])


def stats_rows(name: str, campaign_id: int) -> str:
    """Two subIds of the account's campaign that never convert, one that does."""
    tag = TAGS[name]
    rows = [(f"{tag}01", 600, 0, 0.0), (f"{tag}02", 800, 0, 0.0), ("ff01", 900, 40, 120.0)]
    return "".join(
        f"{name},2026-01-31,{campaign_id},subid,{key},0,{clicks},{clicks / 100},{conv},{rev}\n"
        for key, clicks, conv, rev in rows
    )


def blacklisted(name: str, campaign_id: int) -> set[str]:
    """The account's subId blacklist of the campaign, read with its own client."""
    with toolkit.connect(profile=name) as client:
        lists = toolkit.load_account(client, [campaign_id], progress=False).lists
    return set(lists.loc[lists["list"].astype(str) == "subid_black", "item"].astype(str))


@pytest.fixture()
def rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES, encoding="utf-8")
    return path


def test_the_report_of_the_set_writes_every_accounts_rows(
    run: Callable[..., tuple[int, str, str]], three: Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "bids.xlsx"
    base = ["report", "bids", "--account", "all", "--no-history", "--include", "all"]
    code, printed, err = run(*base, "-o", str(out), "--ctr", "0.01")
    assert code == 0, err
    assert "SetReport of 3 accounts" in printed and f"Wrote {out}" in printed
    rows = list(openpyxl.load_workbook(out, read_only=True)["bids"].iter_rows(values_only=True))
    assert rows[0][0] == "account"
    accounts = [r[0] for r in rows[1:]]
    assert set(accounts) == set(NAMES) and accounts == sorted(accounts, key=NAMES.index)
    # each account's rows are its own campaigns, read with its own client
    header = list(rows[0])
    for name in NAMES:
        with toolkit.connect(profile=name) as client:
            own = {int(c["id"]) for c in client.campaigns.list()}
        ids = {int(r[header.index("campaign_id")]) for r in rows[1:] if r[0] == name}
        assert ids and ids <= own
    assert three.foreign_calls() == []
    # statistics with an account column: each account's rows joined with its own numbers
    stats = tmp_path / "stats.csv"
    bids = pd.DataFrame(rows[1:], columns=header)
    clicks = {"a": 1000, "b": 2000, "c": 3000}
    lines = [
        f"{r.account},2026-01-31,{r.campaign_id},country,{r.country},100000,"
        f"{clicks[r.account]},10.0,5,50.0\n"
        for r in bids.drop_duplicates(["account", "campaign_id", "country"]).itertuples()
    ]
    stats.write_text(HEADER + "".join(lines), encoding="utf-8")
    code, printed, err = run(*base, "-o", str(tmp_path / "profit.xlsx"), "--stats", str(stats))
    assert code == 0, err
    assert "Profit:" in printed
    book = openpyxl.load_workbook(tmp_path / "profit.xlsx", read_only=True)
    joined = list(book["bids"].iter_rows(values_only=True))
    at = list(joined[0]).index("clicks")
    for name in NAMES:
        assert {r[at] for r in joined[1:] if r[0] == name} == {clicks[name]}


def test_rules_over_the_set_apply_to_each_account_with_its_own_key(
    run: Callable[..., tuple[int, str, str]],
    three: Sandbox,
    tmp_path: Path,
    rules_file: Path,
) -> None:
    ids = {name: first_campaign(name) for name in NAMES}
    stats = tmp_path / "stats.csv"
    stats.write_text(HEADER + "".join(stats_rows(n, ids[n]) for n in NAMES), encoding="utf-8")
    decisions = tmp_path / "decisions.csv"
    code, out, err = run(
        "rules", str(rules_file), str(stats), "--account", "all", "--apply", "--yes",
        "--decisions", str(decisions),
    )  # fmt: skip
    assert code == 0, err
    assert "Plan of 3 account(s)" in out and "Run of the set" in out
    for name in NAMES:
        listed = blacklisted(name, ids[name])
        assert {f"{TAGS[name]}01", f"{TAGS[name]}02"} <= listed and "ff01" not in listed
        others = {f"{TAGS[n]}0{i}" for n in NAMES if n != name for i in (1, 2)}
        assert not listed & others
    assert three.foreign_calls() == []
    written = pd.read_csv(decisions)
    assert written.columns[0] == "account" and set(written["account"]) == set(NAMES)
    assert set(written.loc[written["status"] == "planned", "outcome"]) == {"applied"}


def test_one_statistics_file_per_account_plans_those_accounts_only(
    run: Callable[..., tuple[int, str, str]], tmp_path: Path, rules_file: Path
) -> None:
    files = {}
    for name in ("a", "c"):
        files[name] = tmp_path / f"{name}.csv"
        body = stats_rows(name, first_campaign(name))
        files[name].write_text(
            HEADER.split(",", 1)[1] + "".join(r.split(",", 1)[1] for r in body.splitlines(True)),
            encoding="utf-8",
        )
    code, out, err = run(
        "rules", str(rules_file), "--account", "a,b,c",
        "--stats", f"a={files['a']}", "--stats", f"c={files['c']}",
    )  # fmt: skip
    assert code == 0, err
    assert "Plan of 2 account(s)" in out and "account a" in out and "account c" in out
    assert "no statistics for account(s) b: not evaluated" in out
    assert "Nothing sent" in out


def test_a_statistics_row_of_an_account_not_in_the_set_is_refused_in_one_line(
    run: Callable[..., tuple[int, str, str]], three: Sandbox, tmp_path: Path, rules_file: Path
) -> None:
    stats = tmp_path / "stats.csv"
    body = stats_rows("a", first_campaign("a")) + stats_rows("b", first_campaign("b"))
    stats.write_text(HEADER + body.replace("b,", "west,", 2), encoding="utf-8")
    before = three.calls_by_account()
    code, out, err = run("rules", str(rules_file), str(stats), "--account", "all", "--apply")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "'west' (2 rows), not an account of the set; the accounts are a, b, c" in err
    assert three.calls_by_account() == before
    # the report refuses it alike, before writing anything
    code, _, err = run(
        "report", "bids", "-o", str(tmp_path / "r.html"), "--account", "all", "--stats",
        str(stats),
    )  # fmt: skip
    assert code == 2 and "'west' (2 rows)" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


def test_key_options_and_ambiguous_statistics_are_refused_over_a_set(
    run: Callable[..., tuple[int, str, str]], tmp_path: Path, rules_file: Path
) -> None:
    stats = tmp_path / "stats.csv"
    stats.write_text(HEADER + stats_rows("a", 1000001), encoding="utf-8")
    key = tmp_path / "key.txt"
    key.write_text("0123456789abcdef\n", encoding="utf-8")
    refused = {
        ("rules", str(rules_file), str(stats), "--account", "all", "--api-key-file", str(key)):
            "leave out --api-key-file",
        ("report", "bids", "-o", str(tmp_path / "r.html"), "--account", "a,b", "--base-url",
         "http://127.0.0.1:1"): "leave out --base-url",
        ("rules", str(rules_file), str(stats), "--account", "all", "--stats", f"a={stats}"):
            "statistics given twice",
        ("rules", str(rules_file), "--account", "a", "--stats", f"a={stats}"):
            "one account takes one statistics export",
        ("rules", str(rules_file), "--account", "all", "--stats", f"west={stats}"):
            "'west' is not an account of the set",
        ("rules", str(rules_file), "--account", "all", "--stats", f"a={stats}", "--stats",
         f"a={stats}"): "account 'a' given twice",
        ("report", "bids", "-o", str(tmp_path / "r.html"), "--account", "all",
         "--campaigns", "1000001"): "--campaigns names one account's campaigns",
    }  # fmt: skip
    for argv, said in refused.items():
        code, _, err = run(*argv)
        assert code == 2, (argv, err)
        assert said in err and len(err.strip().splitlines()) == 1, (argv, err)
    no_column = tmp_path / "plain.csv"
    no_column.write_text(HEADER.split(",", 1)[1], encoding="utf-8")
    code, _, err = run("rules", str(rules_file), str(no_column), "--account", "all")
    assert code == 2 and "no 'account' column" in err


def test_one_accounts_command_refuses_statistics_that_name_several_accounts(
    run: Callable[..., tuple[int, str, str]], rules_file: Path, tmp_path: Path
) -> None:
    stats = tmp_path / "both.csv"
    stats.write_text(
        HEADER + stats_rows("a", first_campaign("a")) + stats_rows("b", first_campaign("b")),
        encoding="utf-8",
    )
    code, out, err = run("rules", str(rules_file), str(stats), "--account", "a")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "'account' column names 2 accounts (a, b)" in err and "--account all" in err
    with pytest.raises(toolkit.StatsError, match="names 2 accounts"):
        toolkit.read_stats(stats)
    # one account's rows alone are read as before
    alone = tmp_path / "a.csv"
    alone.write_text(HEADER + stats_rows("a", first_campaign("a")), encoding="utf-8")
    assert len(toolkit.read_stats(alone)) > 0
