"""The digests of the exported tables (``_meta``): an unchanged table is not read again from
its hidden ``_base_`` sheets, a changed one is, and a hidden sheet that no longer holds the
exported rows is refused; a workbook exported without digests reads and plans as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import COLUMNS, export_workbook, read_workbook
from toolkit.bulk.workbook.cells import Book
from toolkit.bulk.workbook.digest import DIGESTS_KEY, parse_digests
from toolkit.errors import WorkbookError
from toolkit.frames.account import TABLES
from toolkit.sandbox import Sandbox

BID = openpyxl.utils.get_column_letter(COLUMNS["countries"].index("bid") + 1)


@pytest.fixture(scope="module")
def client(sandbox: Sandbox) -> Iterator[Any]:
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as c:
        yield c


@pytest.fixture(scope="module")
def exported(client: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workbook of the first ten campaigns."""
    account = toolkit.load_account(client, progress=False)
    ids = account.campaigns["id"].astype(int).tolist()[:10]
    return export_workbook(account, tmp_path_factory.mktemp("digest") / "account.xlsx", ids)


def edit(src: Path, dst: Path, cells: dict[tuple[str, str], Any], digests: bool = True) -> Path:
    """``src`` with ``cells`` (``(sheet, cell) -> value``) written; without its digests
    (as exported before them) unless ``digests``."""
    book = openpyxl.load_workbook(src)
    for (sheet, cell), value in cells.items():
        book[sheet][cell] = value
    if not digests:
        meta = book["_meta"]
        row = next(r for r in range(1, meta.max_row + 1) if meta.cell(r, 1).value == DIGESTS_KEY)
        meta.delete_rows(row)
    book.save(dst)
    return dst


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sheets whose cells are parsed (appended as they are)."""
    names: list[str] = []
    rows = Book.rows

    def spy(self: Book, name: str) -> Any:
        names.append(name)
        return rows(self, name)

    monkeypatch.setattr(Book, "rows", spy)
    return names


def test_the_export_writes_a_digest_of_each_table(exported: Path) -> None:
    tables = read_workbook(exported)
    assert set(parse_digests(tables.meta[DIGESTS_KEY])) == set(TABLES)


def test_unchanged_tables_are_not_read_again_from_their_base_sheets(
    exported: Path, tmp_path: Path, parsed: list[str]
) -> None:
    path = edit(exported, tmp_path / "edited.xlsx", {("countries", f"{BID}2"): 0.77})
    tables = read_workbook(path)
    assert [n for n in parsed if n.startswith("_base_")] == ["_base_countries"]
    for name in TABLES:
        if name != "countries":
            pd.testing.assert_frame_equal(tables.base[name], tables.desired[name], check_exact=True)
    assert tables.base["countries"]["bid"].iloc[0] != 0.77
    assert tables.desired["countries"]["bid"].iloc[0] == 0.77


def test_a_base_sheet_edited_into_other_rows_is_refused(exported: Path, tmp_path: Path) -> None:
    cells = {("countries", f"{BID}2"): 0.77, ("_base_countries", f"{BID}3"): 0.55}
    with pytest.raises(WorkbookError) as err:
        read_workbook(edit(exported, tmp_path / "base.xlsx", cells))
    [problem] = err.value.problems
    assert problem.sheet == "_base_countries"
    assert "exported state of countries" in problem.message
    assert "export the workbook again" in problem.message


def test_a_bad_cell_in_a_base_sheet_is_refused_as_before(exported: Path, tmp_path: Path) -> None:
    cells = {("countries", f"{BID}2"): 0.77, ("_base_countries", f"{BID}3"): "abc"}
    for digests in (True, False):
        path = edit(exported, tmp_path / f"bad-{digests}.xlsx", cells, digests)
        with pytest.raises(WorkbookError) as err:
            read_workbook(path)
        [problem] = err.value.problems
        assert (problem.sheet, problem.row, problem.column) == ("_base_countries", 3, "bid")
        assert problem.message == "not a number"


def test_a_workbook_without_digests_reads_and_plans_as_with_them(
    client: Any, exported: Path, tmp_path: Path, parsed: list[str]
) -> None:
    cells = {("countries", f"{BID}2"): 0.77, ("countries", f"{BID}3"): 0.66}
    new = read_workbook(edit(exported, tmp_path / "new.xlsx", cells))
    parsed.clear()
    old = read_workbook(edit(exported, tmp_path / "old.xlsx", cells, digests=False))
    assert DIGESTS_KEY not in old.meta
    assert {f"_base_{t}" for t in TABLES} <= set(parsed)  # every base sheet read, as before
    for name in TABLES:
        pd.testing.assert_frame_equal(new.base[name], old.base[name], check_exact=True)
        pd.testing.assert_frame_equal(new.desired[name], old.desired[name], check_exact=True)
    plan_new, plan_old = make_plan(client, new), make_plan(client, old)
    assert len(plan_new) > 0
    pd.testing.assert_frame_equal(plan_new.to_frame(), plan_old.to_frame())


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables whose rows go through the checks of an edited sheet (appended as they do)."""
    from toolkit.bulk.workbook import book

    tables: list[str] = []
    check = book.check_sheet

    def spy(table: str, *args: Any, **kwargs: Any) -> Any:
        tables.append(table)
        return check(table, *args, **kwargs)

    monkeypatch.setattr(book, "check_sheet", spy)
    return tables


def test_only_the_changed_tables_are_checked(
    exported: Path, tmp_path: Path, checked: list[str]
) -> None:
    path = edit(exported, tmp_path / "edited.xlsx", {("countries", f"{BID}2"): 0.77})
    tables = read_workbook(path)
    assert checked == ["countries"]
    for name in set(TABLES) - {"countries"}:  # as exported, each its own frame
        pd.testing.assert_frame_equal(tables.desired[name], tables.base[name], check_exact=True)
        assert tables.desired[name] is not tables.base[name]
    assert tables.desired["countries"]["bid"].iloc[0] == 0.77


def test_a_bad_cell_in_a_table_otherwise_as_exported_is_found(
    exported: Path, tmp_path: Path, checked: list[str]
) -> None:
    lists = read_workbook(exported).desired["lists"]
    row = int(lists.index[lists["list"].astype(str).str.startswith("source")][0]) + 2
    with pytest.raises(WorkbookError) as err:
        read_workbook(edit(exported, tmp_path / "bad.xlsx", {("lists", f"C{row}"): "abc"}))
    assert "lists" in checked
    [problem] = err.value.problems
    assert (problem.sheet, problem.row, problem.column, problem.value) == (
        "lists",
        row,
        "item",
        "abc",
    )
    assert problem.message.startswith("not a source id")
