"""The notebook view of a read workbook (and of a refused one)."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

import toolkit
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.errors import WorkbookError
from toolkit.frames import TABLES, Account
from toolkit.sandbox import Sandbox


@pytest.fixture(scope="module")
def account(sandbox: Sandbox) -> Account:
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as client:
        return toolkit.load_account(client, progress=False)


def test_read_workbook_shows_sheets_rows_and_state_as_html(
    account: Account, tmp_path: Path
) -> None:
    path = export_workbook(account, tmp_path / "acc <&>.xlsx")
    book = openpyxl.load_workbook(path)
    book.remove(book["creatives"])
    book.create_sheet("notes <b>")
    book.save(path)
    tables = read_workbook(path)
    html = tables._repr_html_()
    assert "acc &lt;&amp;&gt;.xlsx" in html and "<b>acc <&>" not in html
    assert "notes &lt;b&gt;" in html  # sheets not read, escaped
    frame = tables.to_frame()
    assert list(frame["table"]) == list(TABLES)
    for table in TABLES:
        row = frame.set_index("table").loc[table]
        assert f"<td>{table}</td>" in html
        assert row["exported_rows"] == len(account.table(table))
        if table == "creatives":
            assert row["rows"] == 0 and row["status"] == "no sheet: no change"
        else:
            assert row["rows"] == len(account.table(table)) and row["status"] == "read"
            assert f"<td>{len(account.table(table))}</td>" in html
    assert "no sheet: no change" in html and "with its exported state" in html


def test_refused_workbook_shows_its_problems_as_html(account: Account, tmp_path: Path) -> None:
    path = export_workbook(account, tmp_path / "bad.xlsx")
    book = openpyxl.load_workbook(path)
    book["countries"]["C2"] = "<script>"
    book.save(path)
    with pytest.raises(WorkbookError) as info:
        read_workbook(path)
    html = info.value._repr_html_()
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "countries" in html and "1 problem" in html
