"""The command line answers a user's mistake with what is wrong and an exit code, never a
traceback; ``toolkit.cli.main`` is driven in-process against a sandbox over real HTTP."""

from __future__ import annotations

import openpyxl
import pytest

import toolkit
from toolkit.bulk.guards import GUARDS
from toolkit.bulk.preview import money
from toolkit.cli import EXIT_CODES, explain, main
from toolkit.cli import GUARDS as CLI_GUARDS
from toolkit.sandbox import Sandbox

from .conftest import cli_runner


@pytest.fixture(scope="module")
def sb():
    with Sandbox(campaigns=6, seed=3) as sandbox:
        yield sandbox


@pytest.fixture()
def cli(sb, tmp_path, monkeypatch, capsys):
    """``cli(*args) -> (exit code, stdout, stderr)`` with the sandbox's key in the env."""
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))

    return cli_runner(sb, capsys)


def campaign_ids(sb) -> list[int]:
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
    return [int(c["id"]) for c in client.campaigns.list()]


def bad_inputs(tmp_path):
    csv = tmp_path / "account.csv"
    csv.write_text("campaign_id,country,bid\n1000001,US,0.3\n")
    renamed = tmp_path / "renamed.xlsx"
    renamed.write_text("campaign_id,country,bid\n1000001,US,0.3\n")
    empty = tmp_path / "empty.xlsx"
    empty.write_bytes(b"")
    return {
        "csv": (csv, "not an Excel workbook"),
        "missing": (tmp_path / "nowhere.xlsx", "no such file"),
        "folder": (tmp_path, "is a folder"),
        "renamed csv": (renamed, "a CSV or text file, not an .xlsx workbook"),
        "empty": (empty, "the file is empty"),
    }


@pytest.mark.parametrize("command", ["plan", "apply"])
@pytest.mark.parametrize("kind", ["csv", "missing", "folder", "renamed csv", "empty"])
def test_a_file_that_is_not_a_workbook_is_one_line(cli, tmp_path, command, kind):
    path, words = bad_inputs(tmp_path)[kind]
    code, out, err = cli(command, str(path), *(["--yes"] if command == "apply" else []))
    assert code == 2
    assert err.strip().count("\n") == 0, err
    assert err.startswith("campaign-toolkit: ") and words in err and str(path) in err
    assert out == ""


def test_export_names_unknown_campaign_ids(cli, sb, tmp_path):
    known = campaign_ids(sb)[3]
    book = tmp_path / "two.xlsx"
    code, out, err = cli("export", str(book), "--campaigns", f"{known},9999999,9999998")
    assert code == 2
    assert "unknown campaign id(s) 9999999, 9999998" in err and str(known) not in err
    assert not book.exists()
    code, out, _ = cli("export", str(book), "--campaigns", f" {known} ")
    assert code == 0 and book.exists()
    sheet = openpyxl.load_workbook(book, read_only=True)["campaigns"]
    assert [r[0] for r in sheet.iter_rows(min_row=2, values_only=True)] == [known]


@pytest.mark.parametrize(
    "name,words",
    [("account.csv", "name it .xlsx"), ("nowhere/account.xlsx", "no such folder"), (".", "folder")],
)
def test_export_to_a_path_it_cannot_write_is_one_line(cli, tmp_path, name, words):
    code, out, err = cli("export", str(tmp_path / name))
    assert code == 2 and words in err and err.strip().count("\n") == 0, err
    assert not (tmp_path / "account.csv").exists()


@pytest.mark.parametrize("value", ["1000004,abc", "1000004,,1000005", "", "-5", "1e6"])
def test_a_malformed_campaigns_value_is_a_usage_error(cli, tmp_path, capsys, value):
    with pytest.raises(SystemExit) as info:
        main(["export", str(tmp_path / "x.xlsx"), "--campaigns", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--campaigns" in err and "is not a campaign id" in err
    assert "Traceback" not in err and not (tmp_path / "x.xlsx").exists()


def test_guard_refusal_names_the_command_line_flag(cli, tmp_path):
    book = tmp_path / "account.xlsx"
    assert cli("export", str(book))[0] == 0
    wb = openpyxl.load_workbook(book)
    sheet = wb["countries"]
    sheet.delete_rows(2, sheet.max_row)
    wb.save(book)
    code, out, err = cli("plan", str(book))
    assert code == 2
    assert "plan refused by the guard drop_share; nothing sent" in err
    assert "--allow drop_share" in err and "allow={" not in err
    assert "loses" in err
    code, out, err = cli("plan", str(book), "--allow", "drop_share")
    assert code == 0 and "drop country" in out and err == ""


def test_plan_shows_changes_in_words_with_names(cli, sb, tmp_path):
    book = tmp_path / "account.xlsx"
    cli("export", str(book))
    wb = openpyxl.load_workbook(book)
    sheet = wb["countries"]
    header = [c.value for c in sheet[1]]
    row = sheet[2]
    cid, code_ = row[header.index("campaign_id")].value, row[header.index("country")].value
    old = float(row[header.index("bid")].value)
    row[header.index("bid")].value = round(old + 0.05, 4)
    wb.save(book)
    code, out, err = cli("plan", str(book))
    assert code == 0, err
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
    name = client.campaigns.get(int(cid))["name"]
    assert f'{cid} "{name}": bid {code_} {money(old)} -> {money(round(old + 0.05, 4))}' in out
    assert "Plan: 2 calls, 1 change on 1 campaign" in out


def test_wrong_key_is_one_line(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("CAMPAIGN_API_KEY", "not-a-key-0123456789")
    code, out, err = cli("export", str(tmp_path / "x.xlsx"))
    assert code == 2 and err.strip().count("\n") == 0 and "not-a-key" not in err


def test_exit_codes_and_unexpected_errors():
    assert CLI_GUARDS == GUARDS
    code, message = explain(RuntimeError("boom"))
    assert code == 70 and "--traceback" in message and "boom" in message
    assert set(EXIT_CODES) >= {0, 1, 2, 3, 4, 70, 130}
    from toolkit.errors import NotFoundError, TransportError, ValidationError

    assert explain(TransportError("connection refused", "campaign.list"))[0] == 4
    assert explain(NotFoundError("campaign.item", 200, ["Campaign not found"]))[0] == 4
    assert explain(ValidationError("bad"))[0] == 2
    assert explain(PermissionError(13, "Permission denied", "/x.xlsx")) == (
        2,
        "campaign-toolkit: /x.xlsx: permission denied",
    )


def test_a_journal_that_cannot_be_opened_is_one_line(cli, tmp_path):
    not_a_db = tmp_path / "journal.db"
    not_a_db.write_text("not sqlite")
    for journal, words in ((tmp_path, "is a folder"), (not_a_db, "cannot be opened")):
        code, out, err = cli("history", "--journal", str(journal))
        assert code == 2 and words in err and err.strip().count("\n") == 0, err


def test_conflicts_are_listed_with_the_command_line_flag(cli, sb, tmp_path):
    book = tmp_path / "account.xlsx"
    cli("export", str(book))
    wb = openpyxl.load_workbook(book)
    sheet = wb["countries"]
    header = [c.value for c in sheet[1]]
    row = sheet[3]
    cid, code_ = int(row[header.index("campaign_id")].value), row[header.index("country")].value
    old = float(row[header.index("bid")].value)
    row[header.index("bid")].value = round(old + 0.05, 4)
    wb.save(book)
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
    client.targeting.drop(cid, "country", [code_])
    client.targeting.add(cid, "country", {code_: round(old + 0.07, 4)})
    try:
        code, out, err = cli("plan", str(book))
    finally:
        client.targeting.drop(cid, "country", [code_])
        client.targeting.add(cid, "country", {code_: old})
    assert code == 0, err
    assert "1 conflict(s) left out" in out and "--prefer desired" in out
    assert (
        f"countries {cid}, {code_}: exported {money(old)}, live {money(round(old + 0.07, 4))},"
        f" yours {money(round(old + 0.05, 4))}"
    ) in out


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_a_bad_file_is_reported_before_connecting(cli, monkeypatch, caplog, tmp_path, command):
    """Without a key, connecting starts the built-in sandbox: a bad file is caught first."""
    monkeypatch.delenv("CAMPAIGN_API_KEY")
    monkeypatch.delenv("CAMPAIGN_API_URL")
    path, _words = bad_inputs(tmp_path)["csv"]
    with caplog.at_level("INFO"):
        code, out, err = cli(command, str(path))
    assert code == 2 and err.count("\n") == 1, err
    assert "sandbox" not in (out + err + caplog.text).lower()
