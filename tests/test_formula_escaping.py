"""Every file the toolkit writes, from data holding text a spreadsheet would take for a formula
(a statistics key ``=HYPERLINK(...)``, a rule named ``@SUM(1+1)``, a campaign named
``+cmd|' /C calc'!A0``, keys starting with a tab, a CR, ``-`` or ``'``), opened raw (openpyxl
with formulas kept, the csv module): no formula cell, no text starting like a formula, numbers
still numbers; then read back through the toolkit's own readers, which give the original text.

The account is a real sandbox account over HTTP, its campaigns renamed by an applied plan.
"""

from __future__ import annotations

import csv
import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest
import yaml

import toolkit
from toolkit.bulk.plan import make_plan
from toolkit.bulk.result_book import write_result_workbook
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.bulk.workbook.actions import check_actions, read_actions, write_templates
from toolkit.cli_rules import write_decisions
from toolkit.errors import WorkbookError
from toolkit.frames.cells import FORMULA_LEADS, read_table
from toolkit.rules.actions import to_actions
from toolkit.rules.backtest import backtest
from toolkit.rules.sheet import read_rules_sheet, write_rules_sheet
from toolkit.sandbox import Sandbox

from .conftest import cli_runner

KEY = '=HYPERLINK("http://evil","x")'
RULE = "@SUM(1+1)"
CAMPAIGN = "+cmd|' /C calc'!A0"
TAB, CR, DASH, QUOTED = "\tkey", "\rkey", "-abc", "'quoted"
SCRIPT = '<script>alert("x")</script>'
#: Campaign names and a note the plan gives the sandbox account.
NAMES = {1000001: CAMPAIGN, 1000003: KEY, 1000004: DASH, 1000005: QUOTED, 1000006: SCRIPT}
NOTES = {1000006: TAB, 1000007: CR}
#: Statistics keys put in place of the first subIds of the export.
KEYS = (KEY, TAB, CR, DASH, QUOTED, CAMPAIGN)


@dataclass
class World:
    """The sandbox account after the renaming plan, and what the writers are given."""

    sb: Sandbox
    client: Any
    account: Any
    result: Any
    desired: dict[str, pd.DataFrame]
    folder: Path
    stats: Path
    rules: Path
    decisions: pd.DataFrame


def _renamed(account: Any) -> pd.DataFrame:
    campaigns = account.campaigns.copy()
    dtype = campaigns["name"].dtype
    for column, values in (("name", NAMES), ("note", NOTES)):
        col = campaigns[column].astype(object)
        for cid, text in values.items():
            col[campaigns["id"] == cid] = text
        campaigns[column] = col.astype(dtype)
    return campaigns


def _hostile_stats(sb: Sandbox, folder: Path) -> Path:
    """The demo statistics, the first subIds' keys replaced by :data:`KEYS` (Parquet, as a
    tracker export may be)."""
    sb.stats_export(folder / "stats.csv", days=14, seed=3)
    df = pd.read_csv(folder / "stats.csv", dtype=str)
    subids = df.loc[df["level"] == "subid", "key"].unique()[: len(KEYS)]
    df["key"] = df["key"].replace(dict(zip(subids, KEYS, strict=True)))
    path = folder / "stats.parquet"
    df.to_parquet(path, index=False)
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("hostile")
    journal = folder / "journal.db"  # the module's own (the autouse journal is per test)
    with Sandbox(campaigns=8, seed=11) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
        before = toolkit.load_account(client, progress=False)
        desired = {"campaigns": _renamed(before)}
        result = make_plan(client, desired, live=before).apply(
            client, progress=False, journal=journal
        )
        assert result.ok, result.summary()
        account = toolkit.load_account(client, progress=False)
        stats = _hostile_stats(sb, folder)
        rules = folder / "rules.yaml"
        rule = {"name": RULE, "level": "subid", "when": "clicks >= 1", "action": "blacklist"}
        rules.write_text(yaml.safe_dump({"rules": [rule]}), encoding="utf-8")
        _, decisions = toolkit.evaluate_rules(rules, stats, client, journal=journal)
        assert set(KEYS) <= set(decisions["key"]) and set(decisions["rule"]) == {RULE}
        yield World(sb, client, account, result, desired, folder, stats, rules, decisions)


# ----------------------------------------------------------------------------- raw readers


def _xlsx_raw(path: Path, numeric: Iterable[tuple[str, str]]) -> None:
    """No formula cell, no text starting like a formula; ``numeric`` (sheet, column header)
    cells are number cells."""
    book = openpyxl.load_workbook(path, data_only=False)
    for ws in book.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                where = f"{path.name} {ws.title}!{cell.coordinate}: {cell.value!r}"
                assert cell.data_type != "f", where
                if isinstance(cell.value, str):
                    assert not cell.value.startswith(FORMULA_LEADS), where
    for sheet, column in numeric:
        ws = book[sheet]
        header = [c.value for c in ws[1]]
        cells = [r[header.index(column)] for r in ws.iter_rows(min_row=2)]
        filled = [c for c in cells if c.value is not None]
        assert filled and all(c.data_type == "n" for c in filled), (path.name, sheet, column)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _csv_raw(path: Path, numeric: Iterable[str]) -> None:
    """No field starts like a formula unless it is a number; ``numeric`` columns are numbers
    (negative ones included)."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    for r, row in enumerate(rows, start=1):
        for value in row:
            if value.startswith(FORMULA_LEADS):
                assert _number(value), f"{path.name} row {r}: {value!r}"
    for column in numeric:
        i = rows[0].index(column)
        filled = [row[i] for row in rows[1:] if row[i]]
        assert filled and all(map(_number, filled)), (path.name, column)


# ----------------------------------------------------------------------------- writers


@dataclass
class Written:
    """What a writer wrote, what the toolkit read back, and what must come back."""

    xlsx: dict[Path, list[tuple[str, str]]] = field(default_factory=dict)
    csv: dict[Path, list[str]] = field(default_factory=dict)
    html: list[Path] = field(default_factory=list)
    back: set[str] = field(default_factory=set)
    want: set[str] = field(default_factory=set)


def _texts(*series: pd.Series) -> set[str]:
    return {v for s in series for v in s.dropna().astype(str)}


def _account_workbook(w: World, out: Path, run: Any) -> Written:
    path = export_workbook(w.account, out / "account.xlsx")
    campaigns = read_workbook(path).desired["campaigns"]
    return Written(
        xlsx={path: [("campaigns", "id"), ("countries", "bid")]},
        back=_texts(campaigns["name"], campaigns["note"]),
        want={*NAMES.values(), *NOTES.values()},
    )


def _account_to_excel(w: World, out: Path, run: Any) -> Written:
    path = w.account.to_excel(out / "tables.xlsx", joined=["countries"])
    campaigns = read_table(path, "campaigns")
    joined = read_table(path, "countries_joined")
    return Written(
        xlsx={path: [("campaigns", "id"), ("countries_joined", "bid")]},
        back=_texts(campaigns["name"], campaigns["note"], joined["name"]),
        want={*NAMES.values(), *NOTES.values()},
    )


def _result_workbook(w: World, out: Path, run: Any) -> Written:
    path = write_result_workbook(w.result, w.desired, out / "account.result.xlsx")
    campaigns = read_table(path, "campaigns")
    assert set(campaigns.loc[campaigns["id"].isin(NAMES), "outcome"]) == {"applied"}
    return Written(
        xlsx={path: [("campaigns", "id"), ("outcomes", "campaign_id")]},
        back=_texts(campaigns["name"], campaigns["note"]),
        want={*NAMES.values(), *NOTES.values()},
    )


def _rules_command(w: World, out: Path, run: Any) -> Written:
    actions, decisions = out / "review.xlsx", out / "decisions.csv"
    options = ["--actions", str(actions), "--decisions", str(decisions)]
    code, stdout, _ = run("rules", str(w.rules), str(w.stats), *options)
    assert code == 0, stdout
    back = read_table(decisions, dtype={"key": str})
    rows = read_actions(actions, w.account)  # the review workbook plans as written
    assert rows and {a.action for a in rows} == {"add"}
    review = read_table(actions, "actions", dtype={"item": str})
    assert set(review["rule"]) == {RULE}
    return Written(
        xlsx={actions: [("actions", "campaign")]},
        csv={decisions: ["campaign_id", "clicks", "profit"]},
        back=_texts(back["key"], back["rule"], back["campaign_name"], review["rule"]),
        want={*KEYS, RULE, CAMPAIGN},
    )


def _decisions_xlsx(w: World, out: Path, run: Any) -> Written:
    path = write_decisions(w.decisions, out / "decisions.xlsx")
    back = read_table(path, "decisions", dtype={"key": str})
    return Written(
        xlsx={path: [("decisions", "clicks"), ("decisions", "profit")]},
        back=_texts(back["key"], back["rule"], back["campaign_name"]),
        want={*KEYS, RULE, CAMPAIGN},
    )


def _actions_of_decisions(w: World, out: Path, run: Any) -> Written:
    """Decisions as the planner leaves them, planned for hostile keys (whatever checked them
    before): the action workbook holds the keys as text, and its reader gives them back."""
    planned = w.decisions[w.decisions["key"].isin(KEYS)].assign(status="planned", new=None)
    path = to_actions(planned, out / "actions.xlsx")
    with pytest.raises(WorkbookError) as refused:
        check_actions(path, w.account)  # not subIds: refused, each named as written
    items = {p.value for p in refused.value.problems if p.column == "item"}
    review = read_table(path, "actions", dtype={"item": str})
    return Written(
        xlsx={path: [("actions", "campaign")]},
        back=items | _texts(review["item"], review["rule"]),
        want={*KEYS, RULE},
    )


def _rules_workbook(w: World, out: Path, run: Any) -> Written:
    rules = [
        {"name": name, "level": "subid", "when": "roi < -15", "action": "bid", "factor": 0.5}
        for name in (RULE, KEY, QUOTED, DASH)
    ]
    path = write_rules_sheet(rules, out / "rules.xlsx")
    names = [r["name"] for r in read_rules_sheet(path)["rules"]]
    assert [r.name for r in toolkit.load_rules(path)] == names
    return Written(
        xlsx={path: [("rules", "factor")]}, back=set(names), want={RULE, KEY, QUOTED, DASH}
    )


def _backtest(w: World, out: Path, run: Any) -> Written:
    result = backtest({DASH: toolkit.load_rules(w.rules)}, w.stats)
    assert (result.summary["net"] < 0).any()  # a negative number, kept a number
    book = result.to_excel(out / "backtest.xlsx")
    table = result.to_csv(out / "backtest.csv")
    back = read_table(table)
    by_rule = read_table(book, "by_rule")
    return Written(
        xlsx={book: [("summary", "net"), ("summary", "cost_saved")]},
        csv={table: ["net", "cost_saved"]},
        back=_texts(back["rule_set"], by_rule["rule_set"], by_rule["rule"]),
        want={DASH, RULE},
    )


def _bid_report(w: World, out: Path, run: Any) -> Written:
    report = toolkit.bid_report(w.client, progress=False, history=None, include="all")
    book = report.to_excel(out / "bids.xlsx")
    page = report.to_html(out / "bids.html")
    bids = read_table(book, "bids")
    reported = {NAMES[c] for c in report.frame["campaign_id"] if c in NAMES}
    assert SCRIPT in reported and CAMPAIGN in reported
    return Written(
        xlsx={book: [("bids", "campaign_id"), ("bids", "bid")]},
        html=[page],
        back=_texts(bids["name"]),
        want=reported,
    )


def _templates(w: World, out: Path, run: Any) -> Written:
    paths = write_templates(out)
    for path in paths:
        read_actions(path, w.account)  # an untouched template reads (as nothing to do)
    return Written(xlsx={p: [] for p in paths})


WRITERS: dict[str, Callable[..., Written]] = {
    "account workbook": _account_workbook,
    "account to_excel": _account_to_excel,
    "result workbook": _result_workbook,
    "rules command --actions --decisions csv": _rules_command,
    "decisions xlsx": _decisions_xlsx,
    "action workbook of decisions": _actions_of_decisions,
    "rules workbook": _rules_workbook,
    "backtest xlsx and csv": _backtest,
    "bid report xlsx and html": _bid_report,
    "action templates": _templates,
}


@pytest.fixture()
def run(world: World, capsys: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv("CAMPAIGN_API_KEY", world.sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", world.sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    return cli_runner(world.sb, capsys)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_file_written_escapes_formulas_and_reads_back(
    writer: str, world: World, run: Any, tmp_path: Path
) -> None:
    written = WRITERS[writer](world, tmp_path, run)
    assert written.xlsx or written.csv
    for path, numeric in written.xlsx.items():
        _xlsx_raw(path, numeric)
    for path, numeric in written.csv.items():
        _csv_raw(path, numeric)
    for path in written.html:
        text = path.read_text(encoding="utf-8")
        assert "<script" not in text.lower()
        assert html.escape(SCRIPT) in text or html.escape(SCRIPT, quote=False) in text
    assert written.want <= written.back, written.want - written.back
    if QUOTED in written.want:  # a text that starts with ' comes back with it, once
        assert "'" + QUOTED not in written.back
    assert not {"'" + t for t in written.want} & written.back
