"""Creatives: list, detail, create and update (multipart with files), start/pause/archive."""

from __future__ import annotations

import hashlib
import mimetypes
import sqlite3
from dataclasses import dataclass
from typing import Any

from ... import spec
from .. import views
from ..errors import Business
from .common import Ctx, Handler, now, ok

MSG_CREATIVE_NOT_FOUND = "Creative not found #{creative_id}"


@dataclass(frozen=True)
class Upload:
    """A file sent with a creative."""

    filename: str
    mimetype: str
    data: bytes


def _creative(ctx: Ctx, creative_id: int) -> tuple[sqlite3.Row, str]:
    """The caller's creative and its campaign's format; another account's is missing."""
    row = ctx.db.execute(
        "SELECT cr.*, c.ad_format AS campaign_format FROM creatives cr"
        " JOIN campaigns c ON c.id = cr.campaign_id WHERE cr.id=? AND c.user_id=?",
        (creative_id, ctx.user_id),
    ).fetchone()
    if row is None:
        raise Business(MSG_CREATIVE_NOT_FOUND.format(creative_id=creative_id))
    return row, row["campaign_format"]


def list_creatives(ctx: Ctx) -> dict[str, Any]:
    p = ctx.params
    where, args = ["c.user_id=?"], [ctx.user_id]
    cid = p.get_int("campaignId")
    if cid is not None:
        where.append("cr.campaign_id=?")
        args.append(cid)
    for param, choices in (("status", spec.CREATIVE_STATUSES), ("work_status", spec.WORK_STATUSES)):
        value = p.get_choice(param, choices)
        if value is not None:
            where.append(f"cr.{param}=?")
            args.append(value)
    for param in ("title", "text"):
        text = p.get_str(param)
        if text:
            where.append(f"instr(fold(cr.{param}), ?) > 0")
            args.append(text.casefold())
    url = p.get_str("url")
    if url:
        where.append("(instr(fold(cr.url), ?) > 0 OR instr(fold(cr.youtube_url), ?) > 0)")
        args += [url.casefold(), url.casefold()]
    rows = ctx.db.execute(
        "SELECT cr.* FROM creatives cr JOIN campaigns c ON c.id = cr.campaign_id"
        f" WHERE {' AND '.join(where)} ORDER BY cr.id",
        args,
    ).fetchall()
    return {
        "items": [views.creative_item(r, ctx.base_url, spec.CREATIVE_LIST_FIELDS) for r in rows]
    }


def creative_item(ctx: Ctx) -> dict[str, Any]:
    row, ad_format = _creative(ctx, ctx.params.get_int("id", required=True))
    return ok(item=views.creative_detail(ctx.db, row, ctx.base_url, ad_format))


def _save_file(ctx: Ctx, upload: Upload) -> str:
    ext = mimetypes.guess_extension(upload.mimetype) or ""
    if not ext and "." in upload.filename:
        ext = "." + upload.filename.rsplit(".", 1)[1][:8]
    file_id = hashlib.sha256(upload.data).hexdigest()[:24] + ext
    ctx.db.execute(
        "INSERT OR IGNORE INTO files(id, mime, data) VALUES (?,?,?)",
        (file_id, upload.mimetype, upload.data),
    )
    return f"/files/{file_id}"


def _texts(ctx: Ctx, errors: list[str]) -> dict[str, Any]:
    """``name``, ``title``, ``text`` and ``work_status``."""
    p = ctx.params
    out: dict[str, Any] = {"name": p.get_str("name", required=True).strip()}
    title = p.get_str("title", required=True)
    if len(title) > spec.CREATIVE_TITLE_MAX:
        errors.append(
            f"Title is too long: {len(title)} characters (maximum {spec.CREATIVE_TITLE_MAX})"
        )
    out["title"] = title
    if "text" in p:
        text = p.get_str("text")
        if text is not None and len(text) > spec.CREATIVE_TEXT_MAX:
            errors.append(
                f"Text is too long: {len(text)} characters (maximum {spec.CREATIVE_TEXT_MAX})"
            )
        out["text"] = text
    if "work_status" in p:
        try:
            status = p.get_choice("work_status", ("paused", "started", "archived"))
            out["work_status"] = status.capitalize()
        except Business as exc:
            errors.extend(exc.messages)
    return out


def _links(
    ctx: Ctx, ad_format: str, existing: sqlite3.Row | None, errors: list[str]
) -> dict[str, Any]:
    """``youtubeUrl`` (a video creative's video) and the landing ``url``."""
    p = ctx.params
    out: dict[str, Any] = {}
    youtube = p.get_str("youtubeUrl")
    if youtube is not None:
        if ad_format != "video":
            errors.append("youtubeUrl is only for creatives of the video format")
        out.update(youtube_url=youtube, video_url=youtube, type="youtube", convert="success")
    url = p.get_str("url")
    if url is not None:
        out["url"] = url
    had_youtube = existing is not None and existing["type"] == "youtube"
    if not (url or (existing is not None and existing["url"])) and not (youtube or had_youtube):
        errors.append("Parameter 'url' is required")
    return out


def _file_problems(
    uploads: dict[str, Upload], ad_format: str, existing: sqlite3.Row | None, youtube: Any
) -> list[str]:
    """Unknown, empty, missing and misplaced files of a creative."""
    errors = []
    for name in uploads:
        if name not in spec.CREATIVE_FILE_FIELDS:
            errors.append(f"Unknown file field '{name}'; allowed: iconFile, imageFile, videoFile")
        elif not uploads[name].data:
            errors.append(f"File '{name}' is empty")
    has_icon = "iconFile" in uploads or (existing is not None and existing["icon_url"])
    if ad_format in spec.ICON_REQUIRED_FORMATS and not has_icon:
        errors.append("File 'iconFile' is required for this format")
    if "imageFile" in uploads and ad_format not in spec.IMAGE_FORMATS:
        errors.append("File 'imageFile' is only for push and in-page push creatives")
    if "videoFile" in uploads and ad_format != "video":
        errors.append("File 'videoFile' is only for creatives of the video format")
    if ad_format == "video":
        has_video = "videoFile" in uploads or youtube or (existing is not None and existing["type"])
        if not has_video:
            errors.append("File 'videoFile' is required when youtubeUrl is absent")
    return errors


def _save_uploads(ctx: Ctx, uploads: dict[str, Upload]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "iconFile" in uploads:
        out["icon_url"] = _save_file(ctx, uploads["iconFile"])
    if "imageFile" in uploads:
        out["image_url"] = _save_file(ctx, uploads["imageFile"])
    if "videoFile" in uploads:
        out["video_url"] = _save_file(ctx, uploads["videoFile"])
        out.update(type="video", convert="success", youtube_url=None)
        out["duration"] = 5 + len(uploads["videoFile"].data) % 56
    return out


def _fields(ctx: Ctx, ad_format: str, existing: sqlite3.Row | None) -> dict[str, Any]:
    """Validated column values of a create (``existing`` None) or an update."""
    errors: list[str] = []
    out = _texts(ctx, errors)
    out.update(_links(ctx, ad_format, existing, errors))
    uploads: dict[str, Upload] = ctx.files
    errors += _file_problems(uploads, ad_format, existing, out.get("youtube_url"))
    if errors:
        raise Business(*errors)
    out.update(_save_uploads(ctx, uploads))
    return out


def _video_files(db: sqlite3.Connection, creative_id: int, fields: dict[str, Any]) -> None:
    """Converted renditions of an uploaded video (the conversion is immediate here)."""
    if fields.get("type") is None:
        return
    db.execute("DELETE FROM creative_files WHERE creative_id=?", (creative_id,))
    if fields["type"] != "video":
        return
    renditions = ((1280, 720, 2_500_000), (854, 480, 1_200_000), (640, 360, 700_000))
    db.executemany(
        "INSERT INTO creative_files VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                creative_id,
                seq,
                now(),
                "video",
                "video/mp4",
                "avc1.64001f",
                "h264",
                rate,
                fields["duration"],
                w,
                h,
                fields["video_url"],
            )
            for seq, (w, h, rate) in enumerate(renditions)
        ],
    )


def create_creative(ctx: Ctx) -> dict[str, Any]:
    cid = ctx.params.get_int("campaignId", required=True)
    campaign = ctx.campaign_or_fail(cid)
    fields = _fields(ctx, campaign["ad_format"], None)
    fields.setdefault("work_status", "Paused")
    fields.update(campaign_id=cid, t_created=now(), status="New")
    cur = ctx.db.execute(
        f"INSERT INTO creatives({', '.join(fields)}) VALUES ({','.join('?' * len(fields))})",
        list(fields.values()),
    )
    creative_id = cur.lastrowid
    _video_files(ctx.db, creative_id, fields)
    row, _ = _creative(ctx, creative_id)
    answer = ok(item=views.creative_item(row, ctx.base_url, spec.CREATIVE_WRITE_FIELDS))
    if ctx.config.auto_approve:
        ctx.db.execute("UPDATE creatives SET status='Approved' WHERE id=?", (creative_id,))
    return answer


def update_creative(ctx: Ctx) -> dict[str, Any]:
    creative_id = ctx.params.get_int("id", required=True)
    row, ad_format = _creative(ctx, creative_id)
    fields = _fields(ctx, ad_format, row)
    sets = ", ".join(f"{k}=?" for k in fields)
    ctx.db.execute(f"UPDATE creatives SET {sets} WHERE id=?", (*fields.values(), creative_id))
    _video_files(ctx.db, creative_id, fields)
    row, _ = _creative(ctx, creative_id)
    return ok(item=views.creative_item(row, ctx.base_url, spec.CREATIVE_WRITE_FIELDS))


def work_handler(action: str) -> Handler:
    def handle(ctx: Ctx) -> dict[str, Any]:
        creative_id = ctx.params.get_int("id", required=True)
        row, _ = _creative(ctx, creative_id)
        if action == "start" and row["status"] == "Declined":
            raise Business(f"Creative #{creative_id} can not be started: its status is Declined")
        ctx.db.execute(
            "UPDATE creatives SET work_status=? WHERE id=?",
            (spec.WORK_ACTIONS[action], creative_id),
        )
        return ok()

    handle.__name__ = f"{action}_creative"
    return handle


def routes() -> dict[str, Handler]:
    table: dict[str, Handler] = {
        "/api/creative/list": list_creatives,
        "/api/creative/item": creative_item,
        "/api/creative/create": create_creative,
        "/api/creative/update": update_creative,
    }
    for action in spec.WORK_ACTIONS:
        table[f"/api/creative/{action}"] = work_handler(action)
    return table
