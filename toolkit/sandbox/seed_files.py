"""The small image and video files of the demo creatives, and the seed's timestamps."""

from __future__ import annotations

import functools
import hashlib
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from .seed_data import RENDITIONS


def timestamp(seconds: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS+00:00`` of a Unix time."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(seconds))


# --------------------------------------------------------------------------- files


def png(width: int, height: int, row: Callable[[int], bytes]) -> bytes:
    """An 8-bit RGB PNG whose line ``y`` holds the pixels ``row(y)`` (3 bytes each)."""
    raw = b"".join(b"\x00" + row(y) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _icon(back: tuple[int, int, int], front: tuple[int, int, int]) -> bytes:
    """A 64x64 disc on a plain background."""
    size, radius = 64, 20
    back_px, front_px = bytes(back), bytes(front)

    def row(y: int) -> bytes:
        dy = y - (size - 1) / 2
        half = int((radius**2 - dy**2) ** 0.5 + 0.5) if abs(dy) < radius else 0
        lo, hi = size // 2 - half, size // 2 + half
        return back_px * lo + front_px * (hi - lo) + back_px * (size - hi)

    return png(size, size, row)


def _image(left: tuple[int, int, int], right: tuple[int, int, int]) -> bytes:
    """A 192x96 horizontal gradient."""
    width, height = 192, 96
    line = b"".join(
        bytes(int(a + (b - a) * x / (width - 1)) for a, b in zip(left, right, strict=True))
        for x in range(width)
    )
    return png(width, height, lambda _y: line)


def _mp4(label: bytes) -> bytes:
    """A tiny ISO media file: an ``ftyp`` box and a ``free`` box naming the rendition."""
    ftyp = struct.pack(">I4s4sI4s4s4s", 28, b"ftyp", b"isom", 512, b"isom", b"avc1", b"mp41")
    return ftyp + struct.pack(">I4s", 8 + len(label), b"free") + label


def file_id(data: bytes, ext: str) -> str:
    """Content-addressed id of a stored file."""
    return hashlib.sha256(data).hexdigest()[:24] + ext


@dataclass(frozen=True)
class DemoFiles:
    """Files the seeded creatives point at, as (id, mime, data) rows and per-use urls."""

    rows: tuple[tuple[str, str, bytes], ...]
    icons: tuple[str, ...]
    images: tuple[str, ...]
    video: str
    renditions: tuple[str, ...]


@functools.lru_cache(maxsize=4)
def demo_files(base_url_files: str) -> DemoFiles:
    """The fixed set of small files used by seeded creatives."""
    colours = (
        ((33, 150, 243), (255, 255, 255)),
        ((233, 30, 99), (255, 235, 59)),
        ((76, 175, 80), (255, 255, 255)),
        ((255, 152, 0), (63, 81, 181)),
        ((103, 58, 183), (0, 188, 212)),
        ((38, 50, 56), (255, 87, 34)),
    )
    rows: list[tuple[str, str, bytes]] = []

    def add(data: bytes, mime: str, ext: str) -> str:
        fid = file_id(data, ext)
        rows.append((fid, mime, data))
        return f"{base_url_files}/{fid}"

    icons = tuple(add(_icon(b, f), "image/png", ".png") for b, f in colours)
    images = tuple(add(_image(b, f), "image/png", ".png") for b, f in colours[:4])
    video = add(_mp4(b"source 1920x1080"), "video/mp4", ".mp4")
    renditions = tuple(
        add(_mp4(f"{w}x{h}".encode()), "video/mp4", ".mp4") for w, h, _r, _c in RENDITIONS
    )
    rows.sort()
    return DemoFiles(tuple(rows), icons, images, video, renditions)
