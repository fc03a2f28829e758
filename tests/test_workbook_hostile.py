"""Workbooks built to fight back: cell references past the last column or row, rows and
cells stored twice or out of order, shared-string indexes that are not one, a part stored
twice, a zip bomb. Each is built here from an action workbook the toolkit writes (its zip
rewritten, the sheet's XML edited by hand) and read through ``plan_actions`` and
``campaign-toolkit apply FILE`` with both readers: one WorkbookError naming the sheet and the
cell, exit code 2, and not one request sent. The cases that made a reader allocate terabytes
run in a child process under a memory limit, so a regression cannot take the machine down."""

from __future__ import annotations

import re
import resource
import struct
import subprocess
import sys
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit.bulk.workbook import cells as workbook_read
from toolkit.bulk.workbook.actions import plan_actions, write_template
from toolkit.errors import WorkbookError
from toolkit.sandbox import Sandbox
from toolkit.xlsx.guard import problem_of
from toolkit.xlsx.parts import sheet_parts

from .conftest import child_env, cli_runner
from .xlsx_parts import declare_strings

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("calamine", "openpyxl")
#: A child process may map this much (the interpreter with pandas, pyarrow and both readers
#: maps about 1.5 GB before it reads anything).
MEMORY_LIMIT = 3 << 30
ROWS = [
    {"action": "add", "target": "subid_black", "campaign": "all", "item": "aa01"},
    {"action": "add", "target": "subid_black", "campaign": "all", "item": "bb02"},
]
STRINGS = ("aa01", "bb02", "cc03")
_SS_PARTS = {
    "xl/sharedStrings.xml": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="3" '
        'uniqueCount="3">' + "".join(f"<si><t>{s}</t></si>" for s in STRINGS) + "</sst>"
    )
}


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, seed=3) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def client(sb: Sandbox) -> Any:
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An action workbook the toolkit writes: blacklist subIds aa01 and bb02 everywhere."""
    return write_template(tmp_path_factory.mktemp("hostile") / "valid.xlsx", "t", ["x"], ROWS)


def api_requests(sb: Sandbox) -> int:
    return sum(n for key, n in sb.stats().items() if " /api/" in key)


# --------------------------------------------------------------------------- building


def rewrite(
    src: Path,
    dst: Path,
    sheet: Callable[[str], str] = lambda xml: xml,
    extra: dict[str, str] | None = None,
    twice: bool = False,
) -> Path:
    """``src`` with the actions sheet's XML changed by ``sheet``, ``extra`` parts added (and
    the shared strings declared when one is ``xl/sharedStrings.xml``); ``twice``: the sheet
    stored a second time, with its row 2 item changed."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        part = sheet_parts(zin)["actions"]
        for info in zin.infolist():
            data = zin.read(info.filename).decode()
            if info.filename == part:
                data = sheet(data)
            elif extra and "xl/sharedStrings.xml" in extra:
                data = declare_strings(info.filename, data)
            zout.writestr(info.filename, data)
        for name, data in (extra or {}).items():
            zout.writestr(name, data)
        if twice:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # zipfile warns of the name stored twice
                zout.writestr(part, sheet(zin.read(part).decode()).replace("aa01", "cc03"))
    return dst


def _sub(pattern: str, repl: str) -> Callable[[str], str]:
    def change(xml: str) -> str:
        out, n = re.subn(pattern, repl, xml)
        assert n >= 1, pattern
        return out

    return change


def _item(index: str) -> Callable[[str], str]:
    """Row 2's item as the shared string at ``index``."""
    return _sub(
        r'<c r="D2" t="inlineStr"><is><t>aa01</t></is></c>', f'<c r="D2" t="s"><v>{index}</v></c>'
    )


def _row(n: int, xml: str) -> str:
    match = re.search(rf'<row r="{n}">.*?</row>', xml)
    assert match is not None
    return match.group()


def _swap_rows(xml: str) -> str:
    two, three = _row(2, xml), _row(3, xml)
    return xml.replace(two + three, three + two)


def _row_twice(xml: str) -> str:
    two = _row(2, xml)
    return xml.replace(two, two + two.replace("aa01", "cc03"))


def _far_cell(xml: str) -> str:
    far = '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row>'
    return xml.replace("</sheetData>", far + "</sheetData>")


def _declared(size: int, part: str = "actions") -> Callable[[Path, Path], Path]:
    """The zip directory of ``src`` saying the part ``part`` unpacks to ``size`` bytes."""

    def make(src: Path, dst: Path) -> Path:
        data = bytearray(src.read_bytes())
        with zipfile.ZipFile(src) as archive:
            name = sheet_parts(archive)["actions"] if part == "actions" else part
            info = archive.getinfo(name)
        encoded = name.encode()
        at = data.find(b"PK\x01\x02")
        while at >= 0:
            (name_len,) = struct.unpack("<H", data[at + 28 : at + 30])
            if data[at + 46 : at + 46 + name_len] == encoded:
                data[at + 24 : at + 28] = struct.pack("<I", size)
                break
            at = data.find(b"PK\x01\x02", at + 4)
        assert at >= 0 and info.file_size != size
        dst.write_bytes(bytes(data))
        return dst

    return make


_BOMBS: dict[Path, bytes] = {}


def _bomb(src: Path, dst: Path) -> Path:
    """A real zip bomb: a part of 100 MB of zeros, deflated to about 100 KB (made once)."""
    if src not in _BOMBS:
        rewrite(src, dst)
        block = bytes(1 << 20)
        with (
            zipfile.ZipFile(dst, "a", zipfile.ZIP_DEFLATED) as archive,
            archive.open("xl/media/zeros.bin", "w") as stream,
        ):
            for _ in range(100):
                stream.write(block)
        _BOMBS[src] = dst.read_bytes()
    dst.write_bytes(_BOMBS[src])
    return dst


@dataclass(frozen=True)
class Hostile:
    """A hostile workbook: how it is made from the valid one, the sheet and cell the error
    names (``""``: the file) and words of the message."""

    name: str
    make: Callable[[Path, Path], Path]
    sheet: str
    cell: str
    words: str


def _sheet(change: Callable[[str], str], **kw: Any) -> Callable[[Path, Path], Path]:
    return lambda src, dst: rewrite(src, dst, change, **kw)


#: What a reader could not survive (a terabyte allocation; ~900 MB for ZZZZ).
ABORTS = [
    Hostile(
        "column CYWOQVJ", _sheet(_sub(r'r="D2"', 'r="CYWOQVJ2"')), "actions", "CYWOQVJ2", "past XFD"
    ),
    Hostile("column ZZZZ", _sheet(_sub(r'r="D2"', 'r="ZZZZ2"')), "actions", "ZZZZ2", "past XFD"),
    Hostile("whole sheet", _sheet(_far_cell), "actions", "XFD1048576", "more than the 16,777,216"),
]
#: What a reader resolved silently (and the plan changed).
SILENT = [
    Hostile(
        "row past the last",
        _sheet(_sub(r'<row r="3">(.*?)</row>', r'<row r="1048577">\1</row>')),
        "actions",
        "1048577",
        "past 1,048,576",
    ),
    Hostile("row twice", _sheet(_row_twice), "actions", "2", "row 2 appears twice"),
    Hostile("rows out of order", _sheet(_swap_rows), "actions", "2", "comes after row 3"),
    Hostile(
        "cell twice",
        _sheet(_sub(r'(<c r="D2".*?</c>)', r'\1<c r="D2" t="inlineStr"><is><t>cc03</t></is></c>')),
        "actions",
        "D2",
        "appears twice in row 2",
    ),
    Hostile(
        "cells out of order",
        _sheet(_sub(r'(<c r="C2".*?</c>)(<c r="D2".*?</c>)', r"\2\1")),
        "actions",
        "C2",
        "out of order",
    ),
    Hostile(
        "cell in another row", _sheet(_sub(r'r="D2"', 'r="D3"')), "actions", "D3", "inside row 2"
    ),
    Hostile(
        "cell between rows",  # calamine reads it into row 2, openpyxl drops it
        _sheet(_sub(r'</row><row r="3">', r'</row><c r="E2"><v>7</v></c><row r="3">')),
        "actions",
        "E2",
        "outside any row",
    ),
    Hostile("index -1", _sheet(_item("-1"), extra=_SS_PARTS), "actions", "D2", "'-1'"),
    Hostile("index abc", _sheet(_item("abc"), extra=_SS_PARTS), "actions", "D2", "'abc'"),
    Hostile("index 1.5", _sheet(_item("1.5"), extra=_SS_PARTS), "actions", "D2", "'1.5'"),
    Hostile(
        "index past the table", _sheet(_item("3"), extra=_SS_PARTS), "actions", "D2", "(0 to 2)"
    ),
    Hostile("part twice", _sheet(lambda x: x, twice=True), "", "", "twice"),
    Hostile("declared 4 GB", _declared(0xF000_0000), "", "", "zip bomb"),
    Hostile("declared small", _declared(100), "", "", "xl/worksheets/sheet2.xml"),
    Hostile("zip bomb", _bomb, "", "", "zip bomb"),
]


def _names_the_place(problem: Any, case: Hostile, path: Path) -> None:
    line = str(problem)
    assert "\n" not in line
    assert problem.sheet == case.sheet, line
    assert case.cell in line and case.words in line, line


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", SILENT, ids=lambda c: c.name)
def test_plan_actions_refuses_before_anything_is_sent(
    case: Hostile,
    engine: str,
    sb: Sandbox,
    client: Any,
    valid: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(workbook_read, "default_engine", lambda: engine)
    path = case.make(valid, tmp_path / "hostile.xlsx")
    before = api_requests(sb)
    with pytest.raises(WorkbookError) as caught:
        plan_actions(client, path)
    (problem,) = caught.value.problems
    _names_the_place(problem, case, path)
    assert api_requests(sb) == before


@pytest.mark.parametrize("case", SILENT[:7] + SILENT[-4:], ids=lambda c: c.name)
def test_campaign_toolkit_apply_is_one_line_exit_2_and_sends_nothing(
    case: Hostile,
    sb: Sandbox,
    valid: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    path = case.make(valid, tmp_path / "hostile.xlsx")
    before = api_requests(sb)
    code, out, err = cli_runner(sb, capsys)("apply", str(path), "--yes")
    assert code == 2, out + err
    lines = [line for line in err.splitlines() if case.words in line]
    assert len(lines) == 1, err
    assert case.cell in lines[0] and (case.sheet in lines[0] or str(path) in lines[0]), err
    assert api_requests(sb) == before


def test_the_valid_workbook_plans(client: Any, valid: Path, tmp_path: Path) -> None:
    """The hostile files are the valid one edited: it plans; with its row 2 item as a
    shared string of the table, it plans the same."""
    plan = plan_actions(client, valid)
    again = plan_actions(client, _sheet(_item("0"), extra=_SS_PARTS)(valid, tmp_path / "ss.xlsx"))
    assert plan.summary() == again.summary() and "aa01, bb02" in plan.summary()


def _children(paths: list[Path], engine: str, sb: Sandbox, tmp_path: Path) -> Any:
    """``campaign-toolkit apply PATH --yes`` for each of ``paths`` in a child process that
    may map at most :data:`MEMORY_LIMIT` bytes, reading with ``engine``; it prints each exit
    code on a line ``exit N``."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    code = (
        "import sys, toolkit.bulk.workbook.cells as r; r.default_engine = lambda: sys.argv[1]\n"
        "from toolkit.cli import main\n"
        "for path in sys.argv[2:]:\n"
        "    print('exit', main(['apply', path, '--yes']), flush=True)\n"
        "    print('end of', path, file=sys.stderr, flush=True)\n"
    )
    env = child_env(sb, tmp_path)
    return subprocess.run(
        [sys.executable, "-c", code, engine, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit,
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_what_made_a_reader_abort_is_refused_under_a_memory_limit(
    engine: str, sb: Sandbox, valid: Path, tmp_path: Path
) -> None:
    paths = [c.make(valid, tmp_path / f"abort{i}.xlsx") for i, c in enumerate(ABORTS)]
    before = api_requests(sb)
    proc = _children(paths, engine, sb, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.split() == ["exit", "2"] * len(ABORTS), proc.stdout + proc.stderr
    errors = proc.stderr.split("end of ")
    for case, err in zip(ABORTS, errors, strict=False):
        lines = [line for line in err.splitlines() if case.words in line]
        assert len(lines) == 1 and case.cell in lines[0] and "actions" in lines[0], err
        assert "Traceback" not in err
    assert api_requests(sb) == before


# --------------------------------------------------------------------------- the scan itself


XML_CASES = {
    "fine": (
        b'<row r="1"><c r="A1" t="s"><v>1</v></c><c r="B1"/></row><row r="4"><c r="XFD4"/></row>',
        None,
    ),
    "column past XFD": (b'<row r="2"><c r="XFE2"/></row>', "past XFD"),
    "row 0": (b'<row r="0"><c r="A0"/></row>', "is not a row"),
    "no reference": (b'<row r="2"><c t="n"><v>1</v></c></row>', "without a reference"),
    "outside a row": (b'<c r="A3"/>', "outside any row"),
    "between rows": (b'<row r="2"><c r="A2"/></row><c r="B2"/><row r="3"/>', "outside any row"),
    "a row never closed": (b'<row r="2"><c r="A2"/><row r="3"><c r="A3"/></row>', "not well"),
    "index missing": (b'<row r="2"><c r="A2" t="s"/></row>', "no shared-string index"),
    "index with spaces": (b'<row r="2"><c r="A2" t="s"><v> 1 </v></c></row>', "' 1 '"),
    "t after r and s": (b'<row r="2"><c r="A2" s="1" t="s"><v>7</v></c></row>', "'7'"),
    "t first": (b'<row r="2"><c t="s" r="A2"><v>7</v></c></row>', "'7'"),
    "t as an entity": (b'<row r="2"><c r="A2" t="&#115;"><v>7</v></c></row>', "'7'"),
    "a quoted >": (b'<row r="2"><c r="A2" x=">" t="s"><v>7</v></c></row>', "'7'"),
    "t twice": (b'<row r="2"><c r="A2" t="n" t="s"><v>7</v></c></row>', "duplicate attribute"),
    "a DTD": (b'<!DOCTYPE x [<!ENTITY a "b">]><row r="2"/>', "DTD"),
}


@pytest.mark.parametrize("form", ["as written", "behind a comment"])
@pytest.mark.parametrize("name", list(XML_CASES))
def test_both_readers_of_the_scan_say_the_same(name: str, form: str) -> None:
    """The numpy reader takes the usual form; a comment sends the XML to expat: both find
    the same problem (or none)."""
    xml, words = XML_CASES[name]
    if form == "behind a comment" and not xml.startswith(b"<!DOCTYPE"):
        xml = b"<worksheet><!-- x -->" + xml + b"</worksheet>"
    problem = problem_of([xml], "s", lambda: 3)
    assert (problem is None) == (words is None), problem
    if words is not None:
        assert words in problem.message, problem


def test_a_big_sheet_is_checked_in_blocks_with_rows_across_them() -> None:
    """A sheet of 30,000 rows read 16 KB at a time (rows cut across blocks): a clean one
    passes, a cell stored twice near the end is found."""
    rows = b"".join(
        b'<row r="%d"><c r="A%d"><v>%d</v></c><c r="B%d" t="s"><v>2</v></c></row>' % (i, i, i, i)
        for i in range(1, 30_001)
    )
    blocks = lambda data: (data[i : i + 16384] for i in range(0, len(data), 16384))  # noqa: E731
    started = time.perf_counter()
    assert problem_of(blocks(rows), "s", lambda: 3) is None
    assert time.perf_counter() - started < 10
    bad = rows.replace(b'<c r="B29999"', b'<c r="A29999"')
    problem = problem_of(blocks(bad), "s", lambda: 3)
    assert problem is not None and problem.row == 29_999 and "appears twice" in problem.message
