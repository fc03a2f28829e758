"""What a statistics file is before it is read: its kind (a CSV, a workbook, Parquet, or a file
that is none of them), and a CSV's encoding and separator.

Trackers and the programs users open their exports in write CSV in several forms: UTF-8 with
or without a BOM, UTF-16 with a BOM (Excel's "Unicode text", tab separated), Windows code
pages (cp1252 in the west, cp1251 for Cyrillic), separated by ``,``, ``;`` or tabs. The form is
sniffed from the bytes; a file that is empty or not text at all is refused in one line.

>>> sniff_text(b"Date;Cost\\n2026-01-01;1,5\\n")
('utf-8', ';')
>>> sniff_text("Day\\tCost\\n2026-01-01\\t1.5\\n".encode("utf-16"))
('utf-16', '\\t')
>>> sniff_text("Campaña,Coste €\\n".encode("cp1252"))
('cp1252', ',')
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import StatsError, StatsProblem
from .layouts import known_headers, norm

#: Bytes read to sniff a file's kind, encoding and separator.
SAMPLE = 256 * 1024
#: Bytes decoded at a time when a file is checked or copied whole.
CHUNK = 16 * 1024 * 1024
#: The separators a CSV may use, in the order ties are broken.
SEPARATORS = ("\t", ";", ",")
SHEET_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods")
PARQUET_SUFFIXES = (".parquet", ".pq")

#: Leading bytes of the binary files users pick by mistake -> what they are.
MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),
    (b"\xd0\xcf\x11\xe0", "xls"),
    (b"PAR1", "parquet"),
    (b"\x1f\x8b", "a gzip archive: unpack it first (gunzip)"),
    (b"BZh", "a bzip2 archive: unpack it first"),
    (b"7z\xbc\xaf", "a 7-Zip archive: unpack it first"),
    (b"Rar!", "a RAR archive: unpack it first"),
    (b"%PDF", "a PDF document: export the report as CSV or XLSX instead"),
    (b"\x89PNG", "a PNG image: export the report as CSV or XLSX instead"),
    (b"\xff\xd8\xff", "a JPEG image: export the report as CSV or XLSX instead"),
    (b"GIF8", "a GIF image: export the report as CSV or XLSX instead"),
    (b"SQLite format 3", "an SQLite database, not a statistics export"),
)
BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: Single-byte code pages tried, in order, when a file is not UTF-8; the one whose header
#: names the most known columns wins (cp1251 for a Russian header, else cp1252).
CODE_PAGES = ("cp1252", "cp1251")


def refuse(path: str | os.PathLike[str], message: str) -> StatsError:
    """A :class:`StatsError` about the whole file (one line)."""
    return StatsError([StatsProblem(None, None, None, message)], str(path))


def file_kind(path: Path) -> str:
    """``"csv"``, ``"sheet"`` or ``"parquet"``: what ``path`` holds, checked against its name.

    Raises :class:`StatsError` in one line for an empty file, a binary file that is no
    statistics export (an archive, a PDF, an image), or a file named for another kind (an
    XLSX workbook named ``.csv``: "this is an Excel workbook; name it .xlsx")."""
    with open(path, "rb") as f:
        head = f.read(SAMPLE)
    if not _strip_bom(head).strip():
        raise refuse(path, "the file is empty")
    actual = _content_kind(path, head)
    suffix = path.suffix.lower()
    named = (
        "sheet" if suffix in SHEET_SUFFIXES else "parquet" if suffix in PARQUET_SUFFIXES else "csv"
    )
    if actual in ("xlsx", "ods", "xls"):
        if named == "sheet" and (actual == "xlsx") == (suffix in (".xlsx", ".xlsm")):
            return "sheet"
        if named == "sheet" and actual == "ods" and suffix == ".ods":
            return "sheet"
        what = {"xlsx": "an Excel workbook", "xls": "an Excel 97-2003 workbook"}
        name = {"xlsx": ".xlsx", "xls": ".xls", "ods": ".ods"}[actual]
        raise refuse(path, f"this is {what.get(actual, 'an OpenDocument sheet')}; name it {name}")
    if actual == "parquet":
        if named == "parquet":
            return "parquet"
        raise refuse(path, "this is a Parquet file; name it .parquet")
    if named != "csv":  # text named as a workbook or Parquet
        raise refuse(path, f"this is a text file, not {suffix} (a CSV export?); name it .csv")
    return "csv"


def _strip_bom(head: bytes) -> bytes:
    for bom, _ in BOMS:
        if head.startswith(bom):
            return head[len(bom) :].replace(b"\x00", b"")
    return head


def _content_kind(path: Path, head: bytes) -> str:
    for magic, what in MAGIC:
        if head.startswith(magic):
            return _zip_kind(path) if what == "zip" else _binary(path, what)
    text = any(head.startswith(bom) for bom, _ in BOMS) or _utf16_without_bom(head)
    if not text and b"\x00" in head:
        raise refuse(path, "this is a binary file, not a CSV export")
    return "text"


def _binary(path: Path, what: str) -> str:
    if what in ("xls", "parquet"):
        return what
    raise refuse(path, f"this is {what}")


def _zip_kind(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            mime = z.read("mimetype").decode("ascii", "replace") if "mimetype" in names else ""
    except (zipfile.BadZipFile, OSError, KeyError):
        raise refuse(path, "this is a damaged zip archive (or workbook)") from None
    if "xl/workbook.xml" in names:
        return "xlsx"
    if "spreadsheet" in mime:
        return "ods"
    if "word/document.xml" in names:
        raise refuse(path, "this is a Word document, not a statistics export")
    inside = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise refuse(path, f"this is a zip archive (of {inside or 'nothing'}): unpack it first")


def _utf16_without_bom(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` for text whose every other byte is NUL (no BOM), else None."""
    pairs = head[: 2 * (min(len(head), 400) // 2)]
    if len(pairs) < 4:
        return None
    if pairs[1::2].count(0) == len(pairs) // 2 and pairs[0::2].count(0) == 0:
        return "utf-16-le"
    if pairs[0::2].count(0) == len(pairs) // 2 and pairs[1::2].count(0) == 0:
        return "utf-16-be"
    return None


def sniff_text(head: bytes, whole: bool = True) -> tuple[str, str]:
    """``(encoding, separator)`` of a CSV from its first bytes (the whole file when
    ``whole``): the encoding as Python names it, the separator of ``,``, ``;`` and tab."""
    encoding = _encoding(head, whole)
    text = _decode_head(head, encoding, whole)
    return encoding, separator(text)


def _encoding(head: bytes, whole: bool) -> str:
    for bom, name in BOMS:
        if head.startswith(bom):
            return name
    bare = _utf16_without_bom(head)
    if bare:
        return bare
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=whole)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    return _code_page(head)


def _code_page(head: bytes) -> str:
    first = head.split(b"\n", 1)[0]
    scores = [(_known(first.decode(cp, "replace")), -i, cp) for i, cp in enumerate(CODE_PAGES)]
    return max(scores)[2]


def _known(header_line: str) -> int:
    known = known_headers()
    cells = [c.strip().strip('"') for sep in SEPARATORS for c in header_line.split(sep)]
    return sum(norm(c) in known for c in cells)


def _decode_head(head: bytes, encoding: str, whole: bool) -> str:
    text = codecs.getincrementaldecoder(encoding)("replace").decode(head, final=whole)
    return text if whole else text.rsplit("\n", 1)[0]


def separator(text: str) -> str:
    """The separator of the CSV ``text`` (its first 50 rows): the one whose header has more
    than one column and whose rows have as many columns as the header most often (quoted
    cells are read as CSV: a quoted header holding a comma, decimal commas in a ``;`` file),
    the header's width breaking ties.

    >>> separator('"Cost, USD";Day\\n"1,5";2026-01-01\\n')
    ';'
    """
    best: tuple[tuple[bool, float, int], str] | None = None
    for sep in SEPARATORS:
        rows = []
        for row in csv.reader(io.StringIO(text), delimiter=sep):
            rows.append(row)
            if len(rows) >= 50:
                break
        if not rows:
            continue
        width = len(rows[0])
        body = [r for r in rows[1:] if any(c.strip() for c in r)]
        fit = sum(len(r) == width for r in body) / len(body) if body else 1.0
        score = (width > 1, fit, width)
        if best is None or score > best[0]:
            best = (score, sep)
    return "," if best is None else best[1]


def csv_form(path: Path) -> tuple[str, str]:
    """``(encoding, separator)`` of the CSV at ``path``; a file that is not UTF-8 past its
    first bytes is read as a code page. Raises :class:`StatsError` for a file that is not
    a CSV (see :func:`file_kind`)."""
    with open(path, "rb") as f:
        head = f.read(SAMPLE)
        whole = len(head) < SAMPLE
    encoding, sep = sniff_text(head, whole)
    if encoding == "utf-8" and not whole and not _all_utf8(path):
        encoding = _code_page(head)
    return encoding, sep


def _all_utf8(path: Path) -> bool:
    """Whether the whole file is UTF-8; a chunk of ASCII with no sequence left open before
    it is (``bytes.isascii`` is many times faster than decoding it)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                if not (chunk.isascii() and not decoder.getstate()[0]):
                    decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def read_text(path: Path, encoding: str) -> str:
    """The whole CSV as text (a BOM dropped); bytes a code page leaves undefined are read
    as latin-1. Raises :class:`StatsError` for UTF-16 text that does not decode."""
    data = path.read_bytes()
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        if encoding.startswith("cp"):
            return data.decode("latin-1")
        raise refuse(path, f"not valid {encoding} text (byte {exc.start})") from None


def header(path: Path, encoding: str, sep: str) -> list[str]:
    """The header row of a CSV."""
    with open(path, encoding=encoding, errors="replace", newline="") as f:
        return next(csv.reader(f, delimiter=sep), [])


def unique(headers: list[str]) -> list[str]:
    """Header names made unique as pandas makes them (``Cost``, ``Cost.1``; an empty one
    ``Unnamed: 3``), so that both readers name a file's columns alike.

    >>> unique(["Day", "Cost", "", "Cost"])
    ['Day', 'Cost', 'Unnamed: 2', 'Cost.1']
    """
    out: list[str] = []
    seen: dict[str, int] = {}
    for i, h in enumerate(headers):
        name = h if h != "" else f"Unnamed: {i}"
        base = name
        while name in seen:
            seen[base] += 1
            name = f"{base}.{seen[base]}"
        seen.setdefault(name, 0)
        out.append(name)
    return out


@contextmanager
def as_utf8(path: Path, encoding: str) -> Iterator[Path]:
    """``path`` itself when it is UTF-8 (with or without a BOM), else a temporary UTF-8
    copy (removed on exit), for readers that take UTF-8 only (DuckDB)."""
    if encoding in ("utf-8", "utf-8-sig"):
        yield path
        return
    folder = tempfile.mkdtemp(prefix="stats-utf8-")
    copy = Path(folder) / (path.stem + ".csv")
    errors = "strict" if encoding.startswith("utf") else "replace"
    try:
        with (
            open(path, encoding=encoding, errors=errors, newline="") as src,
            open(copy, "w", encoding="utf-8", newline="") as dst,
        ):
            while chunk := src.read(CHUNK):
                dst.write(chunk)
        yield copy
    except UnicodeDecodeError as exc:
        raise refuse(path, f"not valid {encoding} text (byte {exc.start})") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


__all__ = [
    "SEPARATORS",
    "as_utf8",
    "csv_form",
    "file_kind",
    "header",
    "read_text",
    "refuse",
    "separator",
    "sniff_text",
    "unique",
]
