"""Workbooks that are not what they seem: every corruption of an exported workbook is one
WorkbookError naming the file, sheet or cell, with either reader, and nothing is sent."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import COLUMNS, export_workbook, read_workbook
from toolkit.bulk.workbook.actions import is_action_workbook, plan_actions
from toolkit.errors import WorkbookError
from toolkit.sandbox import Sandbox
from toolkit.xlsx.parts import sheet_parts

ENGINES = ("calamine", "openpyxl")
BID = openpyxl.utils.get_column_letter(COLUMNS["countries"].index("bid") + 1)


@dataclass(frozen=True)
class Corruption:
    """A way to break ``exported`` into ``broken``, and where the error must point:
    ``sheet`` ("" for the whole file), ``row`` (None: any; -1: the sheet's last row) and
    ``column`` (None: any), and words of the message."""

    name: str
    make: Callable[[Path, Path], Path]
    sheet: str
    row: int | None
    column: str | None
    words: str
    #: Readers that refuse the whole sheet without naming the cell (openpyxl stops at a
    #: number cell holding "NaN").
    sheet_only: tuple[str, ...] = ()


def _edit(change: Callable[[openpyxl.Workbook], None]) -> Callable[[Path, Path], Path]:
    def make(src: Path, dst: Path) -> Path:
        book = openpyxl.load_workbook(src)
        change(book)
        book.save(dst)
        return dst

    return make


def _bid(value: Any) -> Callable[[Path, Path], Path]:
    def change(book: openpyxl.Workbook) -> None:
        book["countries"][f"{BID}2"] = value

    return _edit(change)


def _raw_bid(xml_value: str) -> Callable[[Path, Path], Path]:
    """The bid of row 2 as a number cell holding ``xml_value`` (what no program writes)."""

    def make(src: Path, dst: Path) -> Path:
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
            part = sheet_parts(zin)["countries"]
            for info in zin.infolist():
                data = zin.read(info.filename)
                if info.filename == part:
                    text, n = re.subn(
                        rf'(<c r="{BID}2"[^>]*>)<v>[^<]*</v>',
                        rf"\1<v>{xml_value}</v>",
                        data.decode(),
                    )
                    assert n == 1
                    data = text.encode()
                zout.writestr(info, data)
        return dst

    return make


def _bytes(content: Callable[[bytes], bytes], suffix: str = ".xlsx") -> Any:
    def make(src: Path, dst: Path) -> Path:
        out = dst.with_suffix(suffix)
        out.write_bytes(content(src.read_bytes()))
        return out

    return make


def _formula(book: openpyxl.Workbook) -> None:
    book["countries"][f"{BID}5"] = f"={BID}4*2"


def _merge(book: openpyxl.Workbook) -> None:
    book["countries"].merge_cells("A5:C5")


def _rename(old: str, new: str) -> Callable[[openpyxl.Workbook], None]:
    def change(book: openpyxl.Workbook) -> None:
        book[old].title = new

    return change


def _region(value: str) -> Callable[[openpyxl.Workbook], None]:
    """A new targets row: region ``value`` for the first exported campaign."""

    def change(book: openpyxl.Workbook) -> None:
        ws = book["targets"]
        header = [c.value for c in ws[1]]
        row = {"campaign_id": book["campaigns"]["A2"].value, "kind": "region", "value": value}
        ws.append([row.get(h) for h in header])

    return change


def _last_row(sheet: str) -> Callable[[Path], int]:
    def row(path: Path) -> int:
        return openpyxl.load_workbook(path, read_only=True)[sheet].max_row

    return row


OLE2 = bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504)
CORRUPTIONS = [
    Corruption("truncated zip", _bytes(lambda b: b[: len(b) // 2]), "", None, None, "truncated"),
    Corruption("empty file", _bytes(lambda b: b""), "", None, None, "empty"),
    Corruption(
        "csv renamed", _bytes(lambda b: b"campaign_id,list,item\n7,x,y\n"), "", None, None, "CSV"
    ),
    Corruption("xls renamed", _bytes(lambda b: OLE2), "", None, None, ".xls"),
    Corruption("csv path", _bytes(lambda b: b"a,b\n1,2\n", ".csv"), "", None, None, "CSV"),
    Corruption("inf", _bid("inf"), "countries", 2, "bid", "finite"),
    Corruption("-inf", _bid("-inf"), "countries", 2, "bid", "finite"),
    Corruption("1e400 text", _bid("1e400"), "countries", 2, "bid", "out of range"),
    Corruption("nan text", _bid("nan"), "countries", 2, "bid", "finite"),
    Corruption("1e400 number", _raw_bid("1e400"), "countries", 2, "bid", ""),
    Corruption("nan number", _raw_bid("NaN"), "countries", 2, "bid", "", ("openpyxl",)),
    Corruption("arabic digit", _bid("\u0663"), "countries", 2, "bid", "digits 0-9"),
    Corruption("underscore", _bid("1_000"), "countries", 2, "bid", "not a number"),
    Corruption(
        "arabic digit id", _edit(_region("\u0663")), "targets", -1, "value", "not a region id"
    ),
    Corruption("absurd bid", _bid(1e308), "countries", 2, "bid", "highest bid"),
    Corruption("formula", _edit(_formula), "countries", 5, "bid", "formula"),
    Corruption("merged", _edit(_merge), "countries", 5, "campaign_id", "merged"),
    Corruption(
        "renamed sheet",
        _edit(_rename("lists", "lists edit")),
        "lists edit",
        None,
        None,
        "named exactly 'lists'",
    ),
    Corruption(
        "renamed hidden", _edit(_rename("_base_lists", "old")), "_base_lists", None, None, "missing"
    ),
]


@pytest.fixture(scope="module")
def client(sandbox: Sandbox) -> Iterator[Any]:
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as c:
        yield c


@pytest.fixture(scope="module")
def exported(client: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workbook of the first campaigns that have 6 country rows (small: quick to edit)."""
    account = toolkit.load_account(client, progress=False)
    counts = account.table("countries").groupby("campaign_id").size().cumsum()
    ids = [int(i) for i in counts.index[: int((counts < 6).sum()) + 1]]
    assert counts.iloc[len(ids) - 1] >= 6
    path = export_workbook(account, tmp_path_factory.mktemp("corrupt") / "account.xlsx", ids)
    assert {"lists", "_base_lists"} <= set(openpyxl.load_workbook(path).sheetnames)
    return path


def api_requests(sandbox: Sandbox) -> int:
    return sum(n for key, n in sandbox.stats().items() if " /api/" in key)


def plan_file(client: Any, path: Path, engine: str | None = None) -> Any:
    """What ``campaign-toolkit plan FILE`` does."""
    if is_action_workbook(path):
        return plan_actions(client, path)
    return make_plan(client, read_workbook(path, engine=engine))


def test_every_corruption_is_a_clear_error_and_sends_nothing(
    sandbox: Sandbox, client: Any, exported: Path, tmp_path: Path
) -> None:
    before = api_requests(sandbox)
    failures = []
    for c in CORRUPTIONS:
        path = c.make(exported, tmp_path / f"{c.name.replace(' ', '_')}.xlsx")
        for engine in ENGINES:
            try:
                plan_file(client, path, engine)
            except WorkbookError as exc:
                row = c.row if c.row != -1 else _last_row(c.sheet)(path)
                exact = engine not in c.sheet_only
                hits = [
                    p
                    for p in exc.problems
                    if p.sheet == c.sheet
                    and (row is None or p.row == row or not exact)
                    and (c.column is None or p.column == c.column or not exact)
                    and c.words in p.message
                ]
                if not hits:
                    failures.append(f"{c.name} [{engine}]: {exc}")
                assert str(path) in str(exc)
            except Exception as exc:  # noqa: BLE001 - any other error is a failure
                failures.append(f"{c.name} [{engine}]: {type(exc).__name__}: {exc}")
            else:
                failures.append(f"{c.name} [{engine}]: read without an error")
    assert not failures, "\n".join(failures)
    assert api_requests(sandbox) == before


def test_formula_and_merge_are_not_reported_as_empty(exported: Path, tmp_path: Path) -> None:
    for change in (_formula, _merge):
        path = _edit(change)(exported, tmp_path / "x.xlsx")
        with pytest.raises(WorkbookError) as info:
            read_workbook(path)
        assert not [p for p in info.value.problems if "empty" in p.message], info.value


def test_table_written_by_pandas_without_a_sheet_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "made.xlsx"
    pd.DataFrame({"campaign_id": [7], "list": ["subid_black"], "item": ["ab12"]}).to_excel(
        path, index=False
    )
    with pytest.raises(WorkbookError) as info:
        read_workbook(path)
    (problem,) = info.value.problems
    assert problem.sheet == "Sheet1" and "columns of the lists table" in problem.message


def test_a_sheet_of_notes_is_ignored_and_shown(exported: Path, tmp_path: Path) -> None:
    def change(book: openpyxl.Workbook) -> None:
        book.create_sheet("my notes")["A1"] = "ask Bob about FR"

    tables = read_workbook(_edit(change)(exported, tmp_path / "notes.xlsx"))
    assert tables.ignored == ["my notes"]
    assert "my notes" in tables._repr_html_()


def test_corrupt_action_workbook_is_refused_before_anything_is_sent(
    sandbox: Sandbox, client: Any, tmp_path: Path
) -> None:
    path = tmp_path / "actions.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "actions"
    sheet.append(["action", "target", "campaign", "item", "bid", "list_type"])
    sheet.append(["add", "subid_black", "all", "=A1", None, None])
    book.save(path)
    before = api_requests(sandbox)
    with pytest.raises(WorkbookError) as info:
        plan_actions(client, path)
    assert [(p.row, p.column) for p in info.value.problems] == [(2, "item")]
    assert "formula" in info.value.problems[0].message
    truncated = tmp_path / "cut.xlsx"
    truncated.write_bytes(path.read_bytes()[:300])
    with pytest.raises(WorkbookError):
        plan_file(client, truncated)
    assert api_requests(sandbox) == before


def test_formulas_and_merges_are_found_in_the_pass_that_checks_the_sheet(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit.bulk.workbook import cells

    scans: list[str] = []
    scan = cells.formulas_and_merges
    monkeypatch.setattr(cells, "formulas_and_merges", lambda *a: scans.append(a[1]) or scan(*a))

    def both(book: openpyxl.Workbook) -> None:
        _formula(book)
        _merge(book)

    with pytest.raises(WorkbookError) as info:
        read_workbook(_edit(both)(exported, tmp_path / "both.xlsx"))
    found = {(p.sheet, p.row, p.column, p.message) for p in info.value.problems}
    assert ("countries", 5, "bid", f"cell {BID}5 holds a formula; enter a value instead") in found
    assert (
        "countries",
        5,
        "campaign_id",
        "cells A5:C5 are merged; unmerge them and fill in each cell",
    ) in found
    assert scans == []  # found while the sheet's cells were checked: no second pass
