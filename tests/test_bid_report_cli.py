"""``campaign-toolkit report bids``: one bid report written as HTML, XLSX or PDF, against a
sandbox over real HTTP; the user's mistakes are messages with exit code 2, nothing written."""

from __future__ import annotations

import io
from collections.abc import Iterator

import openpyxl
import pytest

import toolkit
from toolkit import spec
from toolkit.reports.units import PRICE_UNITS
from toolkit.sandbox import Sandbox

from .conftest import cli_runner


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=8, accounts=1, seed=5) as sandbox:
        yield sandbox


@pytest.fixture()
def run(sb, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    return cli_runner(sb, capsys)


def test_html_report_and_its_price_history(run, tmp_path):
    out = tmp_path / "bids.html"
    code, stdout, _ = run("report", "bids", "-o", str(out))
    assert code == 0
    assert "<BidReport" in stdout and f"Wrote {out}" in stdout
    text = out.read_text(encoding="utf-8")
    assert text.lstrip().lower().startswith("<!doctype html") and "</html>" in text
    history = toolkit.price_history(tmp_path / "prices.db")  # beside the journal
    assert len(history) > 0


def test_xlsx_report_of_some_campaigns_with_options(run, sb, tmp_path):
    listed = toolkit.Client(sb.url, sb.api_keys[0]).campaigns.list()
    other = [  # campaigns that buy in the other unit than their format's price
        c["id"]
        for c in listed
        if c["mode"] != PRICE_UNITS[spec.FORMAT_BY_LABEL.get(c["ad_format"], c["ad_format"])]
    ]
    ids = [other[0], *[c["id"] for c in listed if c["id"] != other[0]][:2]]
    out = tmp_path / "bids.data"
    code, stdout, _ = run(
        "report",
        "bids",
        "--format",
        "xlsx",
        "-o",
        str(out),
        "--campaigns",
        ",".join(map(str, ids)),
        "--ctr",
        "push=0.01,inpage=0.02,pops=0.002,video=0.003",
        "--overpay",
        "2",
        "--no-history",
    )
    assert code == 0, stdout
    assert "not comparable 0" in stdout  # every unit converted with the ctr given
    book = openpyxl.load_workbook(io.BytesIO(out.read_bytes()), read_only=True)
    assert len(book.sheetnames) >= 1
    assert not (tmp_path / "prices.db").exists()


def test_pdf_report(run, tmp_path):
    out = tmp_path / "bids.pdf"
    code, _, _ = run("report", "bids", "-o", str(out), "--no-history")
    assert code == 0
    assert out.read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "{tmp}/bids.txt"], "name it .html, .xlsx or .pdf"),
        (["-o", "{tmp}/nowhere/bids.html"], "no such folder"),
        (["-o", "{tmp}/bids.html", "--ctr", "2"], "ctr must be a share"),
        (["-o", "{tmp}/bids.html", "--ctr", "push=x"], "is not a share"),
        (["-o", "{tmp}/bids.html", "--overpay", "1"], "overpay is a ratio"),
        (["-o", "{tmp}/bids.html", "--campaigns", "999"], "unknown campaign id(s) 999"),
    ],
)
def test_mistakes_are_messages_and_nothing_is_written(run, tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, _, err = run("report", "bids", "--no-history", *args)
    assert code == 2
    assert message in err
    assert not list(tmp_path.glob("bids.*"))
