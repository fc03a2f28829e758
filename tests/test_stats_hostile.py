"""Statistics workbooks built to fight back: a cell reference past the last column
(``CYWOQVJ2``, which made calamine allocate terabytes and abort the process), a row stored
twice, a shared-string index that is not one of the table's. Each is the sandbox's statistics
export saved as .xlsx with its sheet's XML edited by hand, and each is refused before calamine
reads the sheet: one StatsError naming the sheet and the cell from ``read_stats``, and exit
code 2 with one line from ``campaign-toolkit rules RULES FILE.xlsx``, nothing sent. An .ods
has no references but repeats rows and cells: one whose values claim more than a sheet may
span is refused too, while the empty ones LibreOffice writes past a table count for nothing.
The cases that aborted run in a child process under a memory limit."""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from toolkit.errors import StatsError
from toolkit.sandbox import Sandbox
from toolkit.stats import read_stats
from toolkit.xlsx.parts import sheet_parts

from .conftest import child_env, cli_runner
from .xlsx_parts import declare_strings

ROOT = Path(__file__).resolve().parents[1]
#: A child process may map this much (the interpreter with pandas, pyarrow and calamine maps
#: about 1.5 GB before it reads anything).
MEMORY_LIMIT = 3 << 30
SHEET = "Sheet1"
RULES = (
    "rules:\n  - name: losing subIds\n    level: subid\n    when: clicks >= 1\n"
    "    action: blacklist\n"
)
#: Paths of the calls that change an account.
WRITES = ("/add-", "/drop-", "/update", "/start", "/pause", "/archive", "/create", "/batch")


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=4, seed=5) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def files(sb: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sandbox's statistics as CSV and as .xlsx (text as shared strings), and a rules
    file."""
    folder = tmp_path_factory.mktemp("stats-hostile")
    sb.stats_export(folder / "stats.csv", days=3, seed=2)
    raw = pd.read_csv(folder / "stats.csv", dtype=str, keep_default_na=False)
    raw.to_excel(folder / "valid.xlsx", index=False, sheet_name=SHEET)
    (folder / "rules.yaml").write_text(RULES, encoding="utf-8")
    return {
        "csv": folder / "stats.csv",
        "xlsx": folder / "valid.xlsx",
        "rules": folder / "rules.yaml",
    }


def edited(src: Path, dst: Path, change: Callable[[str], str]) -> Path:
    """``src`` with its sheet's XML changed by ``change``; a shared-string table of one string
    (the first date, ``<v>0</v>``) added when the change refers to one."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        part = sheet_parts(zin)[SHEET]
        xml = change(zin.read(part).decode())
        strings = 't="s"' in xml
        for info in zin.infolist():
            data = xml if info.filename == part else zin.read(info.filename).decode()
            if strings:
                data = declare_strings(info.filename, data)
            zout.writestr(info.filename, data)
        if strings:
            first = re.search(
                r'<c r="A2" t="inlineStr"><is><t>([^<]*)</t>', zin.read(part).decode()
            )
            assert first is not None
            zout.writestr("xl/sharedStrings.xml", _SST.format(first.group(1)))
    return dst


_SST = (
    '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/'
    'spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>{}</t></si></sst>'
)


def _first_date(index: str) -> Callable[[str], str]:
    """Row 2's date as the shared string at ``index``."""
    return _sub(
        r'<c r="A2" t="inlineStr"><is><t>[^<]*</t></is></c>', f'<c r="A2" t="s"><v>{index}</v></c>'
    )


def _sub(pattern: str, repl: str) -> Callable[[str], str]:
    def change(xml: str) -> str:
        out, n = re.subn(pattern, repl, xml, count=1)
        assert n == 1, pattern
        return out

    return change


def _row_twice(xml: str) -> str:
    match = re.search(r'<row r="2".*?</row>', xml)
    assert match is not None
    return xml.replace(match.group(), match.group() * 2, 1)


_ODS_MIME = "application/vnd.oasis.opendocument.spreadsheet"
_ODS_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:'
    'names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:'
    'xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'office:version="1.2"><office:body><office:spreadsheet><table:table table:name="S">'
)
_ODS_TAIL = "</table:table></office:spreadsheet></office:body></office:document-content>"
_MANIFEST = (
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:'
    'tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" '
    f'manifest:media-type="{_ODS_MIME}"/><manifest:file-entry manifest:full-path="content.xml" '
    'manifest:media-type="text/xml"/></manifest:manifest>'
)


def ods(path: Path, rows: list[list[str]], tail: str = "") -> Path:
    """An OpenDocument sheet ``S`` of ``rows`` (text cells), then the rows ``tail`` (XML)."""

    def cell(text: str) -> str:
        text = f"<text:p>{text}</text:p>"
        return f'<table:table-cell office:value-type="string">{text}</table:table-cell>'

    body = "".join("<table:table-row>" + "".join(map(cell, r)) + "</table:table-row>" for r in rows)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", _ODS_MIME, compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", _ODS_HEAD + body + tail + _ODS_TAIL)
        archive.writestr("META-INF/manifest.xml", _MANIFEST)
    return path


def _repeated(rows: int, columns: int, value: str = "") -> str:
    """A row repeated ``rows`` times of a cell repeated ``columns`` times (empty, as
    LibreOffice writes past a table, or holding ``value``)."""
    inner = (
        f'office:value-type="string"><text:p>{value}</text:p></table:table-cell>' if value else "/>"
    )
    return (
        f'<table:table-row table:number-rows-repeated="{rows}"><table:table-cell '
        f'table:number-columns-repeated="{columns}" {inner}</table:table-row>'
    )


#: ``name -> (the change, the cell named, words of the message)``.
CASES: dict[str, tuple[Callable[[str], str], str, str]] = {
    "column CYWOQVJ": (_sub(r'r="B2"', 'r="CYWOQVJ2"'), "CYWOQVJ2", "past XFD"),
    "row twice": (_row_twice, "row 2", "row 2 appears twice"),
    "index past the table": (
        _first_date("1"),
        "A2",
        "'1', not a whole number of the table (0 to 0)",
    ),
}
SILENT = ["row twice", "index past the table"]


def hostile(files: dict[str, Path], name: str, folder: Path) -> Path:
    return edited(files["xlsx"], folder / f"{name.replace(' ', '-')}.xlsx", CASES[name][0])


def _names_the_place(line: str, name: str) -> None:
    _, cell, words = CASES[name]
    assert "\n" not in line.strip(), line
    assert f"sheet {SHEET!r}" in line and cell in line and words in line, line


def writes(sb: Sandbox) -> list[str]:
    return [k for k in sb.stats() if not k.startswith("GET ") or any(w in k for w in WRITES)]


def test_the_valid_workbook_reads_as_its_csv(files: dict[str, Path], tmp_path: Path) -> None:
    """The hostile files are this one edited: it reads, to what the CSV reads to, and so
    does it with its first date as the shared string 0."""
    expected = read_stats(files["csv"])
    assert len(expected) > 10
    pd.testing.assert_frame_equal(read_stats(files["xlsx"]), expected)
    shared = edited(files["xlsx"], tmp_path / "shared.xlsx", _first_date("0"))
    pd.testing.assert_frame_equal(read_stats(shared), expected)


def test_an_ods_past_its_table_reads_and_one_claiming_too_much_is_refused(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """Empty rows and cells repeated past the table (as LibreOffice writes them) count for
    nothing; a row of values repeated to row 700,006 and column Z is refused before calamine
    reads it (the case that aborts runs under a memory limit below)."""
    raw = pd.read_csv(files["csv"], dtype=str, keep_default_na=False).head(5)
    raw.to_csv(tmp_path / "head.csv", index=False)
    rows = [list(raw.columns), *raw.to_numpy().tolist()]
    tail = _repeated(1_048_000, 1024) + "<table:table-row/>"
    path = ods(tmp_path / "valid.ods", rows, tail)
    pd.testing.assert_frame_equal(read_stats(path), read_stats(tmp_path / "head.csv"))
    far = ods(tmp_path / "far.ods", rows, _repeated(700_000, 26, "x"))
    with pytest.raises(StatsError) as caught:
        read_stats(far)
    (problem,) = caught.value.problems
    assert problem.line == 700_006 and "sheet 'S'" in problem.message, problem
    assert "(at cell Z700006) are more than the 16,777,216 cells" in str(caught.value)


def test_cells_past_the_header_are_columns_without_a_name(tmp_path: Path) -> None:
    """Two cells right of the header's last are two columns named as pandas names a CSV's
    (``Unnamed: 9``), not two of one empty name that broke the reader."""
    rows = [["date", "campaign_id", "level", "key", "impressions", "clicks", "cost"]]
    rows[0] += ["conversions", "revenue"]
    rows.append(["2026-01-01", "7", "subid", "ab12", "900", "40", "1.20", "1", "5.00"])
    plain = ods(tmp_path / "plain.ods", rows)
    wide = ods(tmp_path / "wide.ods", [rows[0], [*rows[1], "", "x", "y"]])
    pd.testing.assert_frame_equal(read_stats(wide), read_stats(plain))


@pytest.mark.parametrize("name", SILENT)
def test_read_stats_refuses_with_one_problem_naming_the_sheet_and_cell(
    name: str, files: dict[str, Path], tmp_path: Path
) -> None:
    path = hostile(files, name, tmp_path)
    with pytest.raises(StatsError) as caught:
        read_stats(path)
    (problem,) = caught.value.problems
    assert problem.line == 2, problem
    _names_the_place(str(caught.value), name)


@pytest.mark.parametrize("name", SILENT)
def test_campaign_toolkit_rules_is_one_line_exit_2_and_sends_nothing(
    name: str,
    sb: Sandbox,
    files: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    path = hostile(files, name, tmp_path)
    before = writes(sb)
    code, out, err = cli_runner(sb, capsys)("rules", str(files["rules"]), str(path), "--apply")
    assert code == 2, out + err
    assert out == "" and len(err.strip().splitlines()) == 1, out + err
    _names_the_place(err, name)
    assert writes(sb) == before


def _child(code: str, args: list[str], sb: Sandbox, tmp_path: Path) -> Any:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = child_env(sb, tmp_path)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit,
    )


def test_what_made_calamine_abort_is_refused_under_a_memory_limit(
    sb: Sandbox, files: dict[str, Path], tmp_path: Path
) -> None:
    """In a child process that may map at most :data:`MEMORY_LIMIT` bytes: ``read_stats``
    refuses the .xlsx with a cell past XFD and the .ods whose row of values repeats to row
    1,048,576 and column BL, each in one line, and ``campaign-toolkit rules`` the .xlsx."""
    path = hostile(files, "column CYWOQVJ", tmp_path)
    far = ods(tmp_path / "far.ods", [["date", "cost"]], _repeated(1_048_575, 64, "1"))
    code = (
        "import sys\n"
        "from toolkit.errors import StatsError\n"
        "from toolkit.stats import read_stats\n"
        "from toolkit.cli import main\n"
        "for path in sys.argv[2:]:\n"
        "    try:\n"
        "        read_stats(path)\n"
        "    except StatsError as exc:\n"
        "        print('refused', len(exc.problems), str(exc), flush=True)\n"
        "print('exit', main(['rules', sys.argv[1], sys.argv[2], '--apply']), flush=True)\n"
    )
    before = writes(sb)
    proc = _child(code, [str(files["rules"]), str(path), str(far)], sb, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    refused, ods_refused, exited = proc.stdout.splitlines()
    assert refused.startswith(f"refused 1 {path}: "), proc.stdout
    _names_the_place(refused, "column CYWOQVJ")
    assert ods_refused.startswith(f"refused 1 {far}: line 1048576: sheet 'S': "), proc.stdout
    assert "(at cell BL1048576) are more than the 16,777,216 cells" in ods_refused
    assert exited == "exit 2", proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    _names_the_place(proc.stderr, "column CYWOQVJ")
    assert writes(sb) == before
