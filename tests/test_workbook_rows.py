"""The row limit of spreadsheets (1,048,576 rows): long tables continue on more sheets and
read back as one; a table sheet that reaches the limit is refused as possibly cut off."""

from __future__ import annotations

import re
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import COLUMNS, export_workbook, layout, read_workbook
from toolkit.errors import WorkbookError
from toolkit.frames import Account
from toolkit.sandbox import Sandbox
from toolkit.xlsx.parts import sheet_parts

ENGINES = ("calamine", "openpyxl")


def used_rows(path: Path) -> dict[str, int]:
    """The last row of each sheet, from its ``dimension``."""
    out = {}
    with zipfile.ZipFile(path) as archive:
        for name, part in sheet_parts(archive).items():
            with archive.open(part) as f:
                head = f.read(2000).decode("utf-8", "replace")
            ref = re.search(r'<dimension ref="[A-Z]+[0-9]+:?[A-Z]*([0-9]*)"', head)
            out[name] = int(ref.group(1) or 1) if ref else 0
    return out


# --------------------------------------------------------------------------- real size


@pytest.fixture(scope="module")
def big() -> Iterator[tuple[Sandbox, Any, int]]:
    """A sandbox whose first campaign blacklists 1,098,576 subIds (the row limit + 50,000),
    inserted straight into its store."""
    extra = layout.ROW_LIMIT + 50_000
    with Sandbox(campaigns=3, accounts=1, seed=3) as sb:
        with sb.store.transaction() as db:
            cid = db.execute("SELECT MIN(id) FROM campaigns").fetchone()[0]
            db.executemany(
                "INSERT OR IGNORE INTO lists VALUES (?, 'subid_black', ?)",
                ((cid, f"{i:x}") for i in range(0x10000000, 0x10000000 + extra)),
            )
        with toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url) as client:
            yield sb, client, extra


@pytest.fixture(scope="module")
def big_account(big: tuple[Sandbox, Any, int]) -> Account:
    return toolkit.load_account(big[1], progress=False)


def test_account_over_the_row_limit_round_trips_with_an_empty_plan(
    big: tuple[Sandbox, Any, int], big_account: Account, tmp_path: Path
) -> None:
    _, client, extra = big
    account = big_account
    started = time.perf_counter()
    path = export_workbook(account, tmp_path / "big.xlsx")
    exported = time.perf_counter()
    rows = used_rows(path)
    assert max(rows.values()) <= layout.SHEET_ROWS + 1 < layout.ROW_LIMIT
    lists = len(account.table("lists"))
    assert lists > extra > layout.ROW_LIMIT
    assert rows["lists"] == rows["_base_lists"] == layout.SHEET_ROWS + 1
    assert rows["lists (2)"] == rows["_base_lists (2)"] == lists - layout.SHEET_ROWS + 1
    tables = read_workbook(path)
    read = time.perf_counter()
    assert tables.sheets["lists"] == ["lists", "lists (2)"]
    assert len(tables.desired["lists"]) == len(tables.base["lists"]) == lists
    assert tables.desired["lists"].equals(tables.base["lists"])
    plan = make_plan(client, tables)
    assert len(plan) == 0, plan.summary()
    print(  # shown with -s: the figures of the report
        f"\n{lists:,} list rows: export {exported - started:.1f} s, "
        f"read {read - exported:.1f} s, plan {time.perf_counter() - read:.1f} s"
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_item_sheet_ending_at_the_row_limit_is_refused(
    account: Account, tmp_path: Path, engine: str
) -> None:
    """An exported lists sheet whose last row is 1,048,576 (the real limit), as a
    spreadsheet leaves a longer sheet when it saves it."""
    path = export_workbook(account, tmp_path / "whole.xlsx")

    def change(book: openpyxl.Workbook) -> None:
        ws = book["lists"]
        for column, value in enumerate(
            (account.table("lists")["campaign_id"].iloc[0], "subid_black", "abcdef12"), start=1
        ):
            ws.cell(row=layout.ROW_LIMIT, column=column, value=int(value) if column == 1 else value)

    cut = _edit(path, tmp_path / "cut.xlsx", change)
    assert used_rows(cut)["lists"] == layout.ROW_LIMIT == 1_048_576
    with pytest.raises(WorkbookError) as info:
        read_workbook(cut, engine=engine)
    cut_off = [(p.sheet, p.row) for p in info.value.problems if "cut off" in p.message]
    assert cut_off == [("lists", 1_048_576)]
    assert "--campaigns" in str(info.value) and "action workbook" in str(info.value)


# --------------------------------------------------------------------------- small limits


@pytest.fixture(scope="module")
def account(sandbox: Sandbox) -> Account:
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as client:
        return toolkit.load_account(client, progress=False)


@pytest.fixture()
def small(monkeypatch: pytest.MonkeyPatch) -> int:
    """Sheets of 40 rows (a limit of 50): the seeded tables span several sheets."""
    monkeypatch.setattr(layout, "SHEET_ROWS", 40)
    monkeypatch.setattr(layout, "ROW_LIMIT", 50)
    return 40


@pytest.mark.parametrize("engine", ENGINES)
def test_continuation_sheets_read_back_as_one_table(
    sandbox: Sandbox, account: Account, small: int, tmp_path: Path, engine: str
) -> None:
    path = export_workbook(account, tmp_path / "split.xlsx")
    rows = used_rows(path)
    for table in ("lists", "targets"):
        n = len(account.table(table))
        parts = -(-n // small)
        assert parts > 1, f"the seeded {table} should need several sheets of {small}"
        names = [table] + [f"{table} ({k})" for k in range(2, parts + 1)]
        assert [rows[s] - 1 for s in names] == [small] * (parts - 1) + [n - small * (parts - 1)]
        assert all(rows[f"_base_{s}"] == rows[s] for s in names)
    tables = read_workbook(path, engine=engine)
    for table in ("lists", "targets"):
        expected = account.table(table)[list(COLUMNS[table])].reset_index(drop=True)
        assert tables.desired[table].equals(expected)
        assert tables.base[table].equals(expected)
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as client:
        assert len(make_plan(client, tables)) == 0


def _edit(src: Path, dst: Path, change: Any) -> Path:
    book = openpyxl.load_workbook(src)
    change(book)
    book.save(dst)
    return dst


def test_missing_continuation_sheet_is_refused(
    account: Account, small: int, tmp_path: Path
) -> None:
    path = export_workbook(account, tmp_path / "split.xlsx")

    def change(book: openpyxl.Workbook) -> None:
        book.remove(book["lists (2)"])

    with pytest.raises(WorkbookError) as info:
        read_workbook(_edit(path, tmp_path / "gone.xlsx", change))
    (problem,) = info.value.problems
    assert problem.sheet == "lists (2)" and problem.message.startswith("missing")


def test_deleting_every_sheet_of_a_long_table_means_no_change(
    account: Account, small: int, tmp_path: Path
) -> None:
    path = export_workbook(account, tmp_path / "split.xlsx")

    def change(book: openpyxl.Workbook) -> None:
        for name in [n for n in book.sheetnames if n == "lists" or n.startswith("lists (")]:
            book.remove(book[name])

    tables = read_workbook(_edit(path, tmp_path / "none.xlsx", change))
    assert "lists" in tables.missing and len(tables.base["lists"]) == len(account.table("lists"))


def test_problems_on_a_continuation_sheet_name_it(
    account: Account, small: int, tmp_path: Path
) -> None:
    path = export_workbook(account, tmp_path / "split.xlsx")

    def change(book: openpyxl.Workbook) -> None:
        first, second = book["lists"], book["lists (2)"]
        second["C3"] = "not hex!"
        second.append([c.value for c in first[2]])  # the same row as lists row 2

    with pytest.raises(WorkbookError) as info:
        read_workbook(_edit(path, tmp_path / "bad.xlsx", change))
    where = {(p.sheet, p.row, p.column): p.message for p in info.value.problems}
    assert "lists (2)" in {s for s, _, _ in where}
    assert where[("lists (2)", 3, "item")].startswith("not a")
    dup = [m for (s, _, _), m in where.items() if s == "lists (2)" and "duplicate" in m]
    assert dup and dup[0].endswith("same as lists row 2")


@pytest.mark.parametrize("engine", ENGINES)
def test_sheet_cut_at_the_limit_is_refused_never_planned(
    account: Account, tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = export_workbook(account, tmp_path / "whole.xlsx")
    limit = 30
    assert len(account.table("lists")) > limit

    def change(book: openpyxl.Workbook) -> None:
        ws = book["lists"]
        ws.delete_rows(limit + 1, ws.max_row)

    cut = _edit(path, tmp_path / "cut.xlsx", change)
    monkeypatch.setattr(layout, "ROW_LIMIT", limit)
    with pytest.raises(WorkbookError) as info:
        read_workbook(cut, engine=engine)
    cut_off = {(p.sheet, p.row) for p in info.value.problems if "cut off" in p.message}
    assert ("lists", limit) in cut_off
