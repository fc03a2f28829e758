"""Formulas and merged cells found as a sheet's XML passes by in chunks of any size: the same
as one scan of the whole sheet, whatever falls across a chunk's edge; a percentage-styled
cell whose style straddles the edge of a block is found too."""

from __future__ import annotations

import io
import zipfile

import pytest

from toolkit.bulk.workbook.sheet_scan import StructureTap, formulas_and_merges


def sheet_xml(rows: int) -> bytes:
    """A sheet of ``rows`` rows, a formula every seventh row, merged ranges at the end."""
    cells = []
    for r in range(2, rows + 2):
        formula = f"<f>A{r}*2</f>" if r % 7 == 0 else ""
        cells.append(
            f'<row r="{r}"><c r="A{r}"><v>{r}</v></c><c r="B{r}">{formula}<v>1</v></c></row>'
        )
    merges = "".join(f'<mergeCell ref="A{r}:B{r}"/>' for r in range(2, rows + 2, 50))
    return (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        + "".join(cells)
        + f'</sheetData><mergeCells count="1">{merges}</mergeCells></worksheet>'
    ).encode()


@pytest.mark.parametrize("size", [7, 1000, 1025, 4096, 1 << 20])
def test_a_sheet_fed_in_chunks_is_scanned_as_a_whole(size: int) -> None:
    data = sheet_xml(3000)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("sheet.xml", data)
    with zipfile.ZipFile(buffer) as archive:
        whole = formulas_and_merges(archive, "sheet.xml", limit=10_000)
    assert len(whole.formulas) == len(range(7, 3002, 7)) and len(whole.merged) == 60
    tap = StructureTap(limit=10_000)
    for start in range(0, len(data), size):
        tap(data[start : start + size])
    assert not tap.complete
    tap(b"")
    assert tap.complete
    assert tap.scan == whole


def test_a_percent_styled_cell_across_the_edge_of_a_block_is_found() -> None:
    from toolkit.bulk.workbook.sheet_scan import OVERLAP, styled_numbers
    from toolkit.xlsx.archive import SCAN_CHUNK

    head = (
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    )
    rows = b"".join(
        b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (r, r) for r in range(2, 200_000)
    )
    pad_row = b'<row r="299999"><c r="A299999" t="inlineStr"><is><t>%s</t></is></c></row>'
    target = b'<row r="300000"><c r="B300000" s="9"><v>0.1</v></c></row>'
    tail = b"".join(
        b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (r, r) for r in range(300_001, 300_200)
    )
    edge = SCAN_CHUNK - OVERLAP  # where the tags of the first block end
    for shift in range(1, 6):  # the attribute ` s="9"` starts before the edge, ends after it
        at = edge - shift - len(head) - target.index(b' s="9"')
        filler = rows[: rows.rfind(b"<row ", 0, at - 200)]
        filler += pad_row % (b"x" * (at - len(filler) - len(pad_row % b"")))
        xml = head + filler + target + tail + b"</sheetData></worksheet>"
        assert xml.index(b' s="9"') == edge - shift and len(xml) > SCAN_CHUNK
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("sheet.xml", xml)
        with zipfile.ZipFile(buffer) as archive:
            assert styled_numbers(archive, "sheet.xml", frozenset({9}), "B") == [300_000], shift
