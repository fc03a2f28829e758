"""The workbook as a file: is it an .xlsx at all, and does its zip hold what a workbook
holds, before any reader opens it.

:func:`check_file` looks at the first bytes and the zip directory, so an empty file, a CSV,
an old ``.xls`` or a truncated archive is one clear :class:`~toolkit.errors.WorkbookError`
instead of a reader's traceback, and so is a part stored twice or a zip bomb
(:func:`archive_problem`, which takes any zip, an OpenDocument sheet too).
:func:`part_chunks` unpacks one part as a stream, never more than its directory entry says.

>>> import tempfile, pathlib
>>> empty = pathlib.Path(tempfile.mkdtemp()) / "empty.xlsx"
>>> _ = empty.write_bytes(b"")
>>> try:
...     check_file(empty)
... except WorkbookError as exc:
...     print(exc.problems[0].message)
the file is empty (0 bytes), not an .xlsx workbook
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import WorkbookError, WorkbookProblem

#: The first bytes of a zip archive (an .xlsx is one), of an empty one, and of an OLE2
#: compound file (an Excel 97-2003 .xls, or a password-protected .xlsx).
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Bytes of a part unpacked at once.
SCAN_CHUNK = 1 << 22
#: What an archive may unpack to: in all, and against its size on disk once it unpacks to
#: more than :data:`RATIO_FLOOR` (the toolkit's exports unpack to about 12 times their size,
#: Excel's about as much); a part other than a worksheet or the shared strings (styles, the
#: workbook's part list) at most :data:`MAX_OTHER_PART`.
MAX_UNPACKED = 4 << 30
MAX_RATIO = 100
RATIO_FLOOR = 64 << 20
MAX_OTHER_PART = 256 << 20
_SAVE_AS = "open it in Excel or LibreOffice and save it as an Excel Workbook (.xlsx)"


def file_problem(message: str) -> WorkbookProblem:
    """A problem of the whole file (no sheet, row or column)."""
    return WorkbookProblem("", None, None, None, message)


def check_file(path: str | os.PathLike[str]) -> None:
    """Raise :class:`~toolkit.errors.WorkbookError` unless ``path`` looks like an .xlsx
    workbook: a complete zip archive holding ``xl/workbook.xml``."""
    path = Path(path)
    with path.open("rb") as f:
        head = f.read(8)
    message = _kind_problem(path, head)
    if message is None:
        message = _archive_message(path)
    if message is not None:
        raise WorkbookError([file_problem(message)], str(path))


def _archive_message(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            message = archive_problem(archive.infolist(), path.stat().st_size)
            if message is not None:
                return message
            mimetype = b""
            if "mimetype" in names:
                with archive.open("mimetype") as stream:
                    mimetype = stream.read(100)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        return f"the .xlsx archive is damaged or truncated ({exc}); export it again"
    if b"opendocument" in mimetype:
        return f"an OpenDocument spreadsheet (.ods), not .xlsx: {_SAVE_AS}"
    if "xl/workbook.xml" not in names:
        return "a zip archive without xl/workbook.xml: not an .xlsx workbook"
    return None


def archive_problem(infos: Sequence[zipfile.ZipInfo], size: int) -> str | None:
    """Why the zip directory ``infos`` of an archive of ``size`` bytes is refused, if it is:
    a part stored twice (names compared as OPC does, whatever their case), or more to unpack
    than a workbook holds (a zip bomb: see :data:`MAX_UNPACKED`, :data:`MAX_RATIO`,
    :data:`MAX_OTHER_PART`)."""
    seen: dict[str, str] = {}
    for info in infos:
        key = info.filename.lower().lstrip("/")
        if key in seen:
            return (
                f"the archive holds the part {info.filename} twice (a reader would pick one "
                "of them): export the workbook again"
            )
        seen[key] = info.filename
    total = sum(info.file_size for info in infos)
    if total > MAX_UNPACKED or (total > RATIO_FLOOR and total > MAX_RATIO * max(size, 1)):
        return (
            f"the archive would unpack to {total:,} bytes from {size:,}: a workbook unpacks "
            f"to at most {MAX_RATIO} times its size and {MAX_UNPACKED >> 30} GiB (a zip bomb?)"
        )
    for info in infos:
        big = not _is_sheet_or_strings(info.filename) and info.file_size > MAX_OTHER_PART
        if big:
            return (
                f"the part {info.filename} would unpack to {info.file_size:,} bytes, more "
                f"than the {MAX_OTHER_PART >> 20} MiB such a part holds (a zip bomb?)"
            )
    return None


def _is_sheet_or_strings(name: str) -> bool:
    """A part that holds cells: a worksheet, the shared strings, an OpenDocument sheet's
    ``content.xml``."""
    lowered = name.lower()
    return (
        lowered.startswith("xl/worksheets/")
        or lowered.endswith("sharedstrings.xml")
        or lowered == "content.xml"
    )


def part_chunks(
    path: str | os.PathLike[str], info: zipfile.ZipInfo, size: int = SCAN_CHUNK
) -> Iterator[bytes]:
    """The unpacked bytes of the part ``info`` of the archive at ``path``, ``size`` at a
    time, never more than its directory entry says: a part that unpacks to more (or less),
    or whose checksum differs, raises :class:`~toolkit.errors.WorkbookError` (a reader that
    trusted the directory and one that did not would read different things)."""
    if info.flag_bits & 1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _part_error(info, "is encrypted or packed in a way an .xlsx never is")
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        head = f.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise _part_error(info, "has no local header: the archive is damaged")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        inflate = zlib.decompressobj(-15) if info.compress_type == zipfile.ZIP_DEFLATED else None
        left, total, crc = info.compress_size, 0, 0
        while left > 0 or (inflate is not None and inflate.unconsumed_tail):
            raw = inflate.unconsumed_tail if inflate is not None else b""
            if not raw:
                raw = f.read(min(left, 1 << 20))
                if not raw:
                    raise _part_error(info, "is cut short: the archive is truncated")
                left -= len(raw)
            data = raw if inflate is None else inflate.decompress(raw, size)
            total += len(data)
            if total > info.file_size:
                raise _part_error(
                    info,
                    f"unpacks to more than the {info.file_size:,} bytes its directory entry says",
                )
            crc = zlib.crc32(data, crc)
            if data:
                yield data
    if total != info.file_size or crc != info.CRC:
        raise _part_error(info, "does not unpack to what its directory entry says: damaged")


def _part_error(info: zipfile.ZipInfo, what: str) -> WorkbookError:
    return WorkbookError([file_problem(f"the part {info.filename} {what}; export it again")])


def _kind_problem(path: Path, head: bytes) -> str | None:
    if not head:
        return "the file is empty (0 bytes), not an .xlsx workbook"
    if head.startswith(OLE2_MAGIC):
        return (
            "an Excel 97-2003 workbook (.xls) or an encrypted file, not .xlsx: "
            f"{_SAVE_AS} (without a password)"
        )
    if head.startswith(ZIP_MAGIC):
        return None
    if path.suffix.lower() in (".csv", ".tsv", ".txt") or _looks_like_text(head):
        return f"a CSV or text file, not an .xlsx workbook: {_SAVE_AS}"
    return "not an .xlsx workbook (the file is not a zip archive)"


def _looks_like_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in head


__all__ = [
    "MAX_OTHER_PART",
    "MAX_RATIO",
    "MAX_UNPACKED",
    "SCAN_CHUNK",
    "archive_problem",
    "check_file",
    "file_problem",
    "part_chunks",
]
