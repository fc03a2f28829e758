"""A workbook remembers the account it was exported from (its user id, never the key), and a
plan of it made with another account's key is refused in one line before any campaign is
read: on the command line (exit 2) and in Python, with nothing changed in either account."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.errors import AccountMismatchError, IncompleteReadError, WorkbookError
from toolkit.sandbox import Sandbox

from .conftest import Api, cli_runner


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=4, seed=7, accounts=2) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def users(sb: Sandbox) -> tuple[int, int]:
    """The user ids of the two accounts, as the service's balance answers them."""
    a, b = (Api(sb.url, key).get("/api/campaign/balance").json()["user_id"] for key in sb.api_keys)
    assert a != b
    return a, b


def connect(sb: Sandbox, n: int) -> Any:
    return toolkit.connect(api_key=sb.api_keys[n], base_url=sb.url, retries=0)


def state(sb: Sandbox) -> list[Any]:
    """Both accounts read back over plain HTTP: every campaign's full view and bid rules."""
    out = []
    for key in sb.api_keys:
        api = Api(sb.url, key)
        for c in sorted(api.get("/api/campaign/list").json()["items"], key=lambda c: c["id"]):
            out.append(api.item(c["id"]))
            out.append(api.ok("/api/campaign/bid-rules", id=c["id"])["rules"])
    return out


@pytest.fixture()
def book(sb: Sandbox, tmp_path: Path) -> Path:
    """The first account exported, with one bid raised by a tenth on the countries sheet."""
    path = export_workbook(connect(sb, 0), tmp_path / "book.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["countries"]
    bid = [c.value for c in ws[1]].index("bid") + 1
    ws.cell(row=2, column=bid).value = round(float(ws.cell(row=2, column=bid).value) * 1.1, 4)
    wb.save(path)
    return path


def requests_since(sb: Sandbox, before: dict[str, int]) -> dict[str, int]:
    now = sb.stats()
    return {k: n - before.get(k, 0) for k, n in now.items() if n != before.get(k, 0)}


def test_the_export_records_the_user_id_and_never_the_key(sb, users, book):
    assert read_workbook(book).meta["account"] == str(users[0])
    readme = [r for r in openpyxl.load_workbook(book)["README"].iter_rows(values_only=True)]
    assert ("  account", str(users[0])) in [tuple(r[:2]) for r in readme]
    with zipfile.ZipFile(book) as z:
        text = b"".join(z.read(n) for n in z.namelist())
    assert sb.api_keys[0].encode() not in text and sb.api_keys[1].encode() not in text


def test_python_plan_with_another_accounts_key_is_refused_before_any_read(sb, users, book):
    tables = read_workbook(book)
    before, seen = state(sb), sb.stats()
    with pytest.raises(AccountMismatchError) as info:
        make_plan(connect(sb, 1), tables)
    a, b = users
    assert str(info.value) == (
        f"book.xlsx was exported from account {a}, connected to account {b}: export from {b},"
        f" or connect to {a}; nothing sent"
    )
    assert (info.value.exported, info.value.connected) == (a, b)
    assert requests_since(sb, seen) == {"GET /api/campaign/balance 200": 1}
    with pytest.raises(AccountMismatchError):
        toolkit.plan(connect(sb, 1), tables, prefer="desired")
    assert state(sb) == before


def test_the_exporting_account_plans_the_edit(sb, book):
    plan = make_plan(connect(sb, 0), read_workbook(book))
    assert len(plan) == 2 and plan.conflicts.empty  # the bid change: a drop and an add


def test_command_line_plan_and_apply_with_another_key_exit_2(
    sb, users, book, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[1])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    run = cli_runner(sb, capsys)
    before = state(sb)
    a, b = users
    line = (
        f"campaign-toolkit: book.xlsx was exported from account {a}, connected to account {b}:"
        f" export from {b}, or connect to {a}; nothing sent"
    )
    for args in (["plan", str(book)], ["apply", str(book), "--yes"]):
        code, out, err = run(*args)
        assert code == 2, out + err
        assert err.strip() == line and out == ""
        assert sb.api_keys[1] not in out + err
    assert state(sb) == before
    assert not book.with_suffix(".result.xlsx").exists()


def test_a_workbook_that_records_no_account_plans_as_before(sb, book):
    wb = openpyxl.load_workbook(book)
    meta = wb["_meta"]
    row = next(r for r in range(1, meta.max_row + 1) if meta.cell(r, 1).value == "account")
    meta.delete_rows(row)
    wb.save(book)
    tables = read_workbook(book)
    assert "account" not in tables.meta
    plan = make_plan(connect(sb, 1), tables)  # as before: the edited campaign is not in
    assert len(plan) == 0 and len(plan.conflicts) == 1  # the second account: a conflict
    assert len(make_plan(connect(sb, 0), tables)) == 2


def test_an_edited_account_cell_is_a_workbook_problem(sb, book):
    wb = openpyxl.load_workbook(book)
    meta = wb["_meta"]
    row = next(r for r in range(1, meta.max_row + 1) if meta.cell(r, 1).value == "account")
    meta.cell(row, 2).value = "someone"
    wb.save(book)
    with pytest.raises(WorkbookError) as info:
        make_plan(connect(sb, 0), read_workbook(book))
    assert "_meta [account]: 'someone': not a user id" in str(info.value)


def test_an_unread_user_id_is_no_plan(sb, book):
    sb.faults.configure({"rules": [{"status": 503, "path": "/api/campaign/balance"}]})
    try:
        with pytest.raises(IncompleteReadError, match="user id"):
            make_plan(connect(sb, 0), read_workbook(book))
    finally:
        sb.faults.clear()
