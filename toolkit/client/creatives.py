"""Creatives: list, detail, create and update with files, start/pause/archive."""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import IO, Any, TypedDict, Unpack

from .. import spec
from . import checks
from .base import Resource

FileLike = str | Path | bytes | IO[bytes]


class CreativeFields(TypedDict, total=False):
    """The optional fields of a creative on create and update (``name`` and ``title`` are
    required): the click ``url``, the ``text``, its ``work_status`` (paused, started,
    archived), a ``youtube_url``, and the ``icon``, ``image`` and ``video`` files (paths,
    bytes or binary file objects)."""

    url: str | None
    text: str | None
    work_status: str | None
    youtube_url: str | None
    icon: FileLike | None
    image: FileLike | None
    video: FileLike | None


def read_file(name: str, value: FileLike) -> tuple[str, bytes, str]:
    """``(filename, data, mimetype)`` from a path, bytes, or an open binary file."""
    if isinstance(value, (str, Path)):
        path = Path(value)
        if not path.is_file():
            raise checks.ValidationError(f"{name}: no such file: {path}")
        data, filename = path.read_bytes(), path.name
    elif isinstance(value, (bytes, bytearray)):
        data, filename = bytes(value), name
    elif hasattr(value, "read"):
        data = value.read()
        if isinstance(data, str):
            raise checks.ValidationError(f"{name}: open the file in binary mode ('rb')")
        filename = Path(getattr(value, "name", name) or name).name
    else:
        raise checks.ValidationError(f"{name}: expected a path, bytes or a binary file object")
    if not data:
        raise checks.ValidationError(f"{name}: the file is empty")
    mime = mimetypes.guess_type(filename)[0] or _sniff(data)
    return filename, data, mime


def _sniff(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[4:8] == b"ftyp":
        return "video/mp4"
    return "application/octet-stream"


class Creatives(Resource):
    """``client.creatives``.

    >>> client.creatives.create(cid, name="v1", title="Hello", url="https://example.com",
    ...                         icon="icon.png")                          # doctest: +SKIP
    """

    def list(
        self,
        campaign_id: int | None = None,
        *,
        status: str | None = None,
        work_status: str | None = None,
        title: str | None = None,
        text: str | None = None,
        url: str | None = None,
    ) -> list[dict[str, Any]]:
        params = {
            "campaignId": campaign_id,
            "status": checks.choice("status", status, [s.lower() for s in spec.CREATIVE_STATUSES]),
            "work_status": checks.choice(
                "work_status", work_status, [s.lower() for s in spec.WORK_STATUSES]
            ),
            "title": title,
            "text": text,
            "url": url,
        }
        return self._call("creative.list", params)["items"]

    def get(self, creative_id: int) -> dict[str, Any]:
        return self._call("creative.item", {"id": int(creative_id)})["item"]

    def create(
        self, campaign_id: int, *, name: str, title: str, **fields: Unpack[CreativeFields]
    ) -> dict[str, Any]:
        """Create a creative; files are paths, bytes or binary file objects. Not retried once
        sent (a repeat could create a duplicate). ``fields``: see :class:`CreativeFields`."""
        form, files = self._form(name, title, fields)
        params = {"campaignId": int(campaign_id)}
        return self._call("creative.create", params, safe=False, files=files, form=form)["item"]

    def update(
        self, creative_id: int, *, name: str, title: str, **fields: Unpack[CreativeFields]
    ) -> dict[str, Any]:
        """Update a creative; files not given are kept. ``fields``: see
        :class:`CreativeFields`."""
        form, files = self._form(name, title, fields)
        params = {"id": int(creative_id)}
        return self._call("creative.update", params, files=files, form=form)["item"]

    @staticmethod
    def _form(
        name: str, title: str, given: CreativeFields
    ) -> tuple[dict[str, Any], dict[str, tuple[str, bytes, str]]]:
        unknown = sorted(set(given) - set(CreativeFields.__annotations__))
        if unknown:
            allowed = ", ".join(CreativeFields.__annotations__)
            raise TypeError(f"unknown creative field(s) {', '.join(unknown)}; use {allowed}")
        problems = checks.creative_texts(title, given.get("text"))
        if not str(name).strip():
            problems.append("name must not be empty")
        status = checks.choice(
            "work_status", given.get("work_status"), ("paused", "started", "archived")
        )
        checks.raise_if(problems)
        fields = {
            "name": name,
            "title": title,
            "url": given.get("url"),
            "text": given.get("text"),
            "work_status": status,
            "youtubeUrl": given.get("youtube_url"),
        }
        files = {}
        for field, key in (("iconFile", "icon"), ("imageFile", "image"), ("videoFile", "video")):
            value = given.get(key)
            if value is not None:
                files[field] = read_file(field, value)  # type: ignore[arg-type]
        return {k: v for k, v in fields.items() if v is not None}, files

    def start(self, creative_id: int) -> dict[str, Any]:
        return self._call("creative.start", {"id": int(creative_id)})

    def pause(self, creative_id: int) -> dict[str, Any]:
        return self._call("creative.pause", {"id": int(creative_id)})

    def archive(self, creative_id: int) -> dict[str, Any]:
        return self._call("creative.archive", {"id": int(creative_id)})
