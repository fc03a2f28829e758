"""A sheet the fast reader of :mod:`toolkit.xlsx.guard` gives up on after its first block (a
comment further down) is read again from the start by expat: every row is checked, none is
skipped, and a valid sheet is not refused as "not well-formed"."""

from __future__ import annotations

import zipfile
from pathlib import Path

import openpyxl

from toolkit.xlsx.archive import SCAN_CHUNK
from toolkit.xlsx.guard import SheetGuard, problem_of
from toolkit.xlsx.parts import sheet_parts

ROWS = [
    b'<row r="%d"><c r="A%d"><v>%d</v></c><c r="B%d" t="inlineStr"><is><t>x</t></is></c></row>'
    % (i, i, i, i)
    for i in range(1, 30_001)
]


def sheet(rows: list[bytes], note_at: int) -> bytes:
    """The sheet of ``rows`` with a comment before row ``note_at``."""
    rows = [*rows[: note_at - 1], b"<!-- a note -->", *rows[note_at - 1 :]]
    return (
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        b"<sheetData>" + b"".join(rows) + b"</sheetData></worksheet>"
    )


def blocks(xml: bytes) -> list[bytes]:
    return [xml[i : i + 16384] for i in range(0, len(xml), 16384)]


def test_a_comment_after_the_first_block_sends_the_whole_sheet_to_expat() -> None:
    assert problem_of(blocks(sheet(ROWS, 15_000)), "s", lambda: 0) is None
    bad = [r.replace(b'<c r="B29000" ', b'<c r="A29000" ') for r in ROWS]
    problem = problem_of(blocks(sheet(bad, 15_000)), "s", lambda: 0)
    assert problem is not None and problem.row == 29_000 and "appears twice" in problem.message


def test_a_long_sheet_with_a_comment_passes_the_checks_of_its_workbook(tmp_path: Path) -> None:
    made = tmp_path / "made.xlsx"
    book = openpyxl.Workbook()
    book.active.title = "s"
    book.save(made)
    rows = [b'<row r="%d"><c r="A%d"><v>%d</v></c></row>' % (i, i, i) for i in range(1, 250_001)]
    xml = sheet(rows, 200_000)  # the note past the first blocks
    assert len(xml) > 2 * SCAN_CHUNK
    path = tmp_path / "long.xlsx"
    with zipfile.ZipFile(made) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        part = sheet_parts(src)["s"]
        for info in src.infolist():
            dst.writestr(info.filename, xml if info.filename == part else src.read(info))
    seen: list[bytes] = []
    SheetGuard(path).check("s", seen.append)  # raises on a problem
    # the tap sees the first reading only (blocks are read a few ahead of their checks, so
    # it may be all of the sheet): never a chunk twice, and "the end" only after all of it
    text = b"".join(seen)
    assert xml.startswith(text)
    assert seen.count(b"") == (1 if text == xml else 0) and (b"" not in seen or seen[-1] == b"")


def test_the_first_problem_of_the_sheet_is_reported_whatever_block_is_found_first() -> None:
    """Blocks are read on several threads: the problem reported is still the first of the
    sheet, not the first found."""
    bad = [
        r.replace(b'<c r="B%d" ' % i, b'<c r="A%d" ' % i) if i in (5_000, 20_000, 29_000) else r
        for i, r in enumerate(ROWS, start=1)
    ]
    xml = sheet(bad, len(bad) + 1).replace(b"<!-- a note -->", b"")  # no note: read fast
    chunks = blocks(xml)
    assert len(chunks) > 50
    for _ in range(20):
        problem = problem_of(chunks, "s", lambda: 0)
        assert problem is not None and problem.row == 5_000, problem


def test_a_forked_child_checks_a_long_sheet_with_its_own_threads() -> None:
    """The parent's scan threads are not in a forked child: it makes its own, and does not
    wait for the parent's forever."""
    import multiprocessing as mp

    chunks = blocks(sheet(ROWS, len(ROWS) + 1).replace(b"<!-- a note -->", b""))
    assert problem_of(chunks, "s", lambda: 0) is None  # the parent's pool exists now
    child = mp.get_context("fork").Process(target=problem_of, args=(chunks, "s", lambda: 0))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0
