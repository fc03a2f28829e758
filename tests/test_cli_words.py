"""The command line speaks its own words, against a sandbox over real HTTP: a cut preview
names ``--changes FILE`` and ``--all`` (never ``plan.changes()``), which write and print every
change; a run counts the plan's changes (a bid change is one, though the service takes a drop
and an add); ``history`` fits 100 columns without None or NaN; a rules file and a statistics
export given the other way round, or an empty rules file, are one line each."""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal, make_plan
from toolkit.frames.cells import read_table
from toolkit.sandbox import Sandbox

from .conftest import cli_runner
from .test_cli_rules import RULES

ADD_COUNTRY = "/api/campaign/add-country"
PLAN_LINE = re.compile(r"Plan: (\d+) calls?, (\d+) changes? on \d+ campaigns?")
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")


@pytest.fixture(scope="module")
def shared():
    """A sandbox the plans of this module read (and never change)."""
    with Sandbox(campaigns=5, seed=11) as sandbox:
        yield sandbox


@pytest.fixture()
def sb():
    """A sandbox of its own for a test that changes the account."""
    with Sandbox(campaigns=4, seed=11) as sandbox:
        yield sandbox


def runner(sb: Sandbox, tmp_path: Path, monkeypatch, capsys):  # noqa: ANN001, ANN201
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    return cli_runner(sb, capsys)


@pytest.fixture()
def read_cli(shared, tmp_path, monkeypatch, capsys):
    return runner(shared, tmp_path, monkeypatch, capsys)


@pytest.fixture()
def cli(sb, tmp_path, monkeypatch, capsys):
    return runner(sb, tmp_path, monkeypatch, capsys)


def exported(cli, tmp_path: Path) -> Path:
    book = tmp_path / "account.xlsx"
    code, out, err = cli("export", str(book))
    assert code == 0, out + err
    return book


def edit_book(book: Path, subids: int = 3) -> None:
    """Three bid changes, ``subids`` blacklisted subIds on campaigns of their own, and two
    sources taken off a blacklist."""
    wb = openpyxl.load_workbook(book)
    countries = wb["countries"]
    head = [c.value for c in countries[1]]
    for row in countries.iter_rows(min_row=2, max_row=4):
        cell = row[head.index("bid")]
        cell.value = round(float(cell.value) * 1.5, 4)
    ids = [r[0] for r in wb["campaigns"].iter_rows(min_row=2, values_only=True)]
    for i, cid in enumerate(ids[:subids]):
        wb["lists"].append([cid, "subid_black", f"facade{i:02d}"])
    lists = wb["lists"]
    gone = [r[0].row for r in lists.iter_rows(min_row=2) if r[1].value == "source_black"][:2]
    for n in sorted(gone, reverse=True):
        lists.delete_rows(n)
    wb.save(book)


def counts(out: str) -> tuple[int, int]:
    """(calls, changes) of the plan's first line."""
    found = PLAN_LINE.search(out)
    assert found, out
    return int(found.group(1)), int(found.group(2))


# --------------------------------------------------------------------------- previews


def test_a_cut_preview_names_the_command_line_options(read_cli, tmp_path):
    book = exported(read_cli, tmp_path)
    edit_book(book, subids=5)
    code, out, err = read_cli("plan", str(book), "--max-calls", "1")
    assert code == 0, err
    calls, changes = counts(out)
    assert calls > 2
    assert "plan.changes()" not in out and "plan.conflicts" not in out
    last = out.splitlines()[-1]
    assert last.startswith(f"  ... and {calls - 1} more call(s) on"), out
    assert last.endswith("--changes FILE writes every change, --all prints them"), out

    csv = tmp_path / "changes.csv"
    code, out, _ = read_cli("plan", str(book), "--changes", str(csv), "--max-calls", "1")
    assert code == 0 and f"Every change ({changes}): {csv}" in out
    written = read_table(csv, dtype={"key": str})
    assert len(written) == changes
    assert set(written["what"]) == {"bid", "add", "drop"}

    code, every, _ = read_cli("plan", str(book), "--all")
    assert code == 0 and "... and" not in every and "more)" not in every
    for text in written["change"]:  # every change in words, none left out
        key = text.split(" ")[-1] if text.startswith(("blacklist", "un-blacklist")) else text
        assert key in every, text


def test_conflicts_cut_name_the_command_line_and_the_workbook_holds_them(cli, sb, tmp_path):
    book = exported(cli, tmp_path)
    wb = openpyxl.load_workbook(book)
    sheet = wb["countries"]
    head = [c.value for c in sheet[1]]
    rows = list(sheet.iter_rows(min_row=2, max_row=8))
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
    base = toolkit.load_account(client, progress=False)
    live_tables = {"countries": base.table("countries").copy()}
    for row in rows:  # yours: +1%; live moved since the export: a conflict each
        cell = row[head.index("bid")]
        cell.value = round(float(cell.value) * 1.01, 4)
    wb.save(book)
    moved = live_tables["countries"].copy()
    moved.loc[moved.index[:7], "bid"] = (moved.loc[moved.index[:7], "bid"] * 1.2).round(4)
    plan = make_plan(client, {"countries": moved}, base=live_tables, live=base)
    assert plan.apply(client, progress=False, journal=None).ok
    code, out, _ = cli("plan", str(book))
    assert code == 0 and "7 conflict(s) left out" in out, out
    assert "  ... and 2 more; --all prints them, --changes FILE.xlsx writes them" in out
    assert "plan.conflicts" not in out
    code, out, _ = cli("plan", str(book), "--all")
    assert "... and" not in out and out.count("  countries ") == 7, out
    xlsx = tmp_path / "changes.xlsx"
    code, out, _ = cli("plan", str(book), "--changes", str(xlsx))
    assert code == 0
    assert len(read_table(xlsx, sheet="conflicts")) == 7


def test_the_changes_file_escapes_text_that_looks_like_a_formula(read_cli, tmp_path):
    book = exported(read_cli, tmp_path)
    wb = openpyxl.load_workbook(book)
    name = '=HYPERLINK("http://example.com","click")'
    cell = wb["campaigns"].cell(row=2, column=2)
    cell.value, cell.data_type = name, "s"  # text, as Excel keeps '=HYPERLINK(...)
    wb.save(book)
    for suffix in (".csv", ".xlsx"):
        path = tmp_path / f"changes{suffix}"
        code, out, err = read_cli("plan", str(book), "--changes", str(path))
        assert code == 0, err
        back = read_table(path)
        assert back["new"].tolist() == [name] and back["what"].tolist() == ["rename"]
    assert "'=HYPERLINK" in (tmp_path / "changes.csv").read_text(encoding="utf-8")
    cell = openpyxl.load_workbook(tmp_path / "changes.xlsx")["changes"]["K2"]
    assert cell.data_type == "s" and cell.value.startswith("'=")


def test_a_changes_file_of_another_kind_is_refused_before_connecting(read_cli, shared, tmp_path):
    book = exported(read_cli, tmp_path)
    before = shared.stats()
    code, out, err = read_cli("plan", str(book), "--changes", str(tmp_path / "changes.txt"))
    assert code == 2 and out == ""
    assert err.strip() == (
        f"campaign-toolkit: {tmp_path / 'changes.txt'}: the changes are written as .csv or"
        " .xlsx; name it so"
    )
    assert shared.stats() == before


# --------------------------------------------------------------------------- counts


def live_state(sb: Sandbox) -> tuple[dict[tuple[int, str], float], set[tuple[int, str, str]]]:
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
    account = toolkit.load_account(client, progress=False)
    countries = account.table("countries")
    rows = countries[["campaign_id", "country", "bid"]].itertuples(index=False)
    bids = {(int(c), str(k)): float(b) for c, k, b in rows}
    lists = account.table("lists")
    items = lists[["campaign_id", "list", "item"]].itertuples(index=False)
    listed = {(int(c), str(n), str(i)) for c, n, i in items}
    return bids, listed


def test_the_run_counts_the_changes_the_plan_counted(cli, sb, tmp_path):
    book = exported(cli, tmp_path)
    edit_book(book)
    csv = tmp_path / "changes.csv"
    code, out, err = cli("apply", str(book), "--yes", "--changes", str(csv))
    assert code == 0, out + err
    calls, changes = counts(out)
    assert changes == 3 + 3 + 2  # three bid changes (a drop and an add each), 3 adds, 2 drops
    assert f"Applied: {changes} of {changes} changes (run " in out, out
    planned = read_table(csv, dtype={"key": str})
    assert len(planned) == changes
    bids, listed = live_state(sb)
    for row in planned.itertuples():  # item by item against the live state
        cid = int(row.campaign_id)
        if row.what == "bid":
            assert bids[(cid, row.key)] == pytest.approx(float(row.new)), row
        elif row.what == "add":
            assert (cid, row.target, row.key) in listed, row
        else:
            assert row.what == "drop" and (cid, row.target, row.key) not in listed, row
    run_id = RUN_ID.search(out.split("Applied:")[1]).group(0)
    result_book = openpyxl.load_workbook(book.with_suffix(".result.xlsx"), read_only=True)
    assert "outcomes" in result_book.sheetnames
    # the history counts the same changes
    code, history, _ = cli("history")
    row = next(line for line in history.splitlines() if line.startswith(run_id))
    assert row.split()[2:6] == [str(calls), str(changes), str(changes), "0"], history


def test_the_python_result_counts_changes_too(sb, tmp_path):
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
    account = toolkit.load_account(client, progress=False)
    base = {"countries": account.table("countries").copy()}
    desired = {"countries": base["countries"].copy()}
    desired["countries"].loc[desired["countries"].index[:2], "bid"] *= 2
    plan = make_plan(client, desired, base=base, live=account)
    assert len(plan.changes()) == 2
    result = plan.apply(client, progress=False, journal=Journal(tmp_path / "j.db"))
    assert len(result.to_frame()) == 4  # a drop and an add per bid change: one row per call item
    assert repr(result).startswith(f"Applied: 2 of 2 changes (run {result.run_id})")
    assert result.counts() == {"applied": 2}
    runs = toolkit.history(tmp_path / "j.db").set_index("run_id")  # the same unit in Python
    row = runs.loc[result.run_id]
    assert (row["changes"], row["applied"], row["failed"], row["not_sent"]) == (2, 2, 0, 0)
    assert row["items_applied"] == 4


# --------------------------------------------------------------------------- history


def crash_a_run(sb: Sandbox, journal: Path) -> str:
    """A run cut off before its first call was sent: journaled, never finished."""
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
    account = toolkit.load_account(client, progress=False)
    base = {"lists": account.table("lists").copy()}
    cid = int(account.table("campaigns")["id"].iloc[-1])
    rows = pd.DataFrame([{"campaign_id": cid, "list": "subid_black", "item": "cafe0001"}])
    desired = {"lists": pd.concat([base["lists"], rows.astype(base["lists"].dtypes.to_dict())])}
    plan = make_plan(client, desired, base=base, live=account)
    return Journal(journal).start_run(client, plan)


def test_history_fits_100_columns_and_shows_no_none_or_nan(cli, sb, tmp_path, monkeypatch):
    book = exported(cli, tmp_path)
    edit_book(book)
    assert cli("apply", str(book), "--yes")[0] == 0
    code, history, _ = cli("history")
    applied = RUN_ID.findall(history)[0]
    assert cli("undo", applied, "--yes")[0] == 0
    sb.stats_export(tmp_path / "stats.csv", days=14, seed=3)
    (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
    rules = cli(
        "rules", str(tmp_path / "rules.yaml"), str(tmp_path / "stats.csv"), "--apply", "--yes"
    )
    assert rules[0] == 0, rules
    book = exported(cli, tmp_path)  # a run with a failed item: the service refuses the add
    wb = openpyxl.load_workbook(book)
    cell = wb["countries"]["D2"]
    cell.value = round(float(cell.value) + 0.01, 4)
    wb.save(book)
    (tmp_path / "missing.toml").write_text("[default]\nretries = 0\nbackoff = 0.01\n")
    sb.faults.configure({"rules": [{"status": 500, "count": 5, "path": ADD_COUNTRY}]})
    failed = cli("apply", str(book), "--yes")
    sb.faults.clear()
    assert failed[0] == 3 and "1 change(s) not finished (1 lost)" in failed[1], failed
    failed_id = RUN_ID.search(failed[1].split("Applied:")[1]).group(0)
    repair = cli("repair", failed_id, "--yes")
    assert repair[0] == 0 and "Applied: 1 of 1 change (run" in repair[1], repair
    cut = crash_a_run(sb, tmp_path / "journal.db")

    monkeypatch.setenv("COLUMNS", "100")
    code, history, _ = cli("history")
    print(history)
    assert code == 0
    ids = set(RUN_ID.findall(history))
    assert {applied, failed_id, cut} <= ids and len(ids) >= 6, history
    assert "undoes" in history and "repairs" in history and "undone by" in history
    assert max(len(line) for line in history.splitlines()) <= 100, history
    for bad in ("None", "nan", "NaN", "<NA>", "NaT"):
        assert bad not in history, history
    header = history.splitlines()[0].split()
    assert header == [
        "run",
        "state",
        "calls",
        "changes",
        "applied",
        "failed",
        "unknown",
        "not",
        "sent",
    ]
    row = next(line for line in history.splitlines() if line.startswith(cut)).split()
    assert row[1] == "unfinished" and row[3] == row[-1] == "1", history  # 1 change, not sent
    failed_row = next(line for line in history.splitlines() if line.startswith(failed_id))
    assert failed_row.split()[2:8] == ["2", "1", "0", "1", "0", "0"], history


# --------------------------------------------------------------------------- rules files


@pytest.fixture()
def stats_files(tmp_path, shared):
    csv = tmp_path / "stats.csv"
    shared.stats_export(csv, days=3, seed=1)
    frame = pd.read_csv(csv)
    frame.to_parquet(tmp_path / "stats.parquet")
    frame.to_excel(tmp_path / "stats.xlsx", index=False)
    (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
    rules = [r.to_dict() for r in toolkit.load_rules(tmp_path / "rules.yaml")]
    from toolkit.rules.sheet import write_rules_sheet

    write_rules_sheet(rules, tmp_path / "rules.xlsx")
    return tmp_path


@pytest.mark.parametrize(
    "stats, rules",
    [
        ("stats.csv", "rules.yaml"),
        ("stats.parquet", "rules.yaml"),
        ("stats.xlsx", "rules.yaml"),
        ("stats.csv", "rules.xlsx"),
        ("stats.xlsx", "rules.xlsx"),
    ],
)
def test_rules_and_statistics_the_other_way_round_say_which_is_which(
    read_cli, shared, stats_files, stats, rules
):
    before = shared.stats()
    s, r = str(stats_files / stats), str(stats_files / rules)
    code, out, err = read_cli("rules", s, r)
    assert code == 2 and out == ""
    assert err == (
        f"campaign-toolkit: {s} looks like statistics and {r} like rules: the rules file comes"
        f" first (campaign-toolkit rules {r} {s})\n"
    )
    assert shared.stats() == before  # refused before connecting
    code, out, err = read_cli("rules", r, s)  # the right way round: no such message
    assert code == 0 and "looks like" not in err, err


@pytest.mark.parametrize("text", ["", "\n\n", "# my rules, to come\n"])
def test_an_empty_rules_file_says_it_is_empty(read_cli, stats_files, text):
    path = stats_files / "empty.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = read_cli("rules", str(path), str(stats_files / "stats.csv"))
    assert (code, out) == (2, "")
    said = f"{path}: the rules file is empty; write rules in it (see docs/rules.md)"
    assert err == f"campaign-toolkit: {said}\n"


@pytest.mark.parametrize("text", ["", "# my rules, to come\n"])
def test_an_empty_rules_file_is_refused_in_python_too(shared, stats_files, text):
    path = stats_files / "empty.yaml"
    path.write_text(text, encoding="utf-8")
    client = toolkit.connect(api_key=shared.api_keys[0], base_url=shared.url, retries=0)
    before = shared.stats()
    with pytest.raises(toolkit.RulesError, match="the rules file is empty") as caught:
        toolkit.evaluate_rules(path, stats_files / "stats.csv", client, journal=None)
    assert str(path) in str(caught.value)
    assert shared.stats() == before  # refused before the account is read
    with pytest.raises(toolkit.RulesError, match="no rules given"):
        toolkit.evaluate_rules([], stats_files / "stats.csv", client, journal=None)


def test_column_names_a_column_of_the_export_on_the_command_line(read_cli, stats_files):
    rules = str(stats_files / "rules.yaml")
    code, plain, err = read_cli("rules", rules, str(stats_files / "stats.csv"))
    assert code == 0, err
    renamed = stats_files / "renamed.csv"
    frame = pd.read_csv(stats_files / "stats.csv")
    frame.rename(columns={"campaign_id": "Sub ID 3"}).to_csv(renamed, index=False)
    code, out, err = read_cli("rules", rules, str(renamed))
    assert code == 2 and "[campaign_id]: missing column" in err
    code, out, err = read_cli("rules", rules, str(renamed), "--column", "Sub ID 3=campaign_id")
    assert code == 0 and out == plain, err
