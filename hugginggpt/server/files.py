"""Files in and out of a run's folder: uploads are size-limited and type-checked by their content;
a run's files are served only from inside its folder (no ``..``, absolute path, or symlink out)."""

from __future__ import annotations

import codecs
import io
import re
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, BinaryIO

from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from hugginggpt.server.errors import ApiError
from hugginggpt.server.settings import ServerSettings
from hugginggpt.tools.resources.sniff import sniff_suffix

#: Uploads that are not media must be UTF-8 text with one of these extensions.
TEXT_SUFFIXES = frozenset({".txt", ".csv", ".json", ".md"})
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_CHUNK = 1 << 16


def safe_stem(filename: str | None) -> str:
    """A file name stem made of letters, digits, ``._-`` only (never a path)."""
    stem = Path((filename or "").replace("\\", "/")).name
    stem = Path(stem).stem if Path(stem).suffix else stem
    stem = _UNSAFE.sub("_", stem).strip("._-")[:60]
    return stem or "upload"


def _unsupported(filename: str | None) -> ApiError:
    return ApiError(415, f"upload {filename or '(unnamed)'!r}: unsupported type; send an image, audio or video "
                         f"file, or UTF-8 text ({', '.join(sorted(TEXT_SUFFIXES))})", code="unsupported_media_type")


def upload_suffix(head: bytes, filename: str | None) -> str:
    """The extension the content's first bytes prove (media by magic bytes), else the name's when it is
    a text extension (the content must then be UTF-8: ``store_upload`` checks it as it copies); 415
    otherwise."""
    sniffed = sniff_suffix(head[:64])
    if sniffed:
        return sniffed
    suffix = Path(filename or "").suffix.lower()
    if suffix in TEXT_SUFFIXES:
        return suffix
    raise _unsupported(filename)


def store_upload(source: bytes | BinaryIO, filename: str | None, folder: Path) -> Path:
    """Copy an upload (its bytes, or a file positioned anywhere) under a safe unique name in ``folder``,
    a chunk at a time; returns the absolute path. The type is checked by content (``upload_suffix``;
    text as it is copied: nothing that is not UTF-8 stays).

    The name is the upload's own (made safe) when it is free, else that name with a random part:
    one exclusive create each, never a search through taken names. Blocking: call it off the event loop.
    """
    handle = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    handle.seek(0)
    head = handle.read(64)
    if not head:
        raise ApiError(400, f"upload {filename or '(unnamed)'!r} is empty", code="empty_upload")
    suffix = upload_suffix(head, filename)
    text = codecs.getincrementaldecoder("utf-8")() if suffix in TEXT_SUFFIXES else None
    folder.mkdir(parents=True, exist_ok=True)
    stem = safe_stem(filename)
    path = folder / f"{stem}{suffix}"
    while True:
        try:
            out = path.open("xb")
            break
        except FileExistsError:
            path = folder / f"{stem}-{secrets.token_hex(4)}{suffix}"
    try:
        with out:
            chunk = head
            while chunk:
                if text is not None:
                    text.decode(chunk)
                out.write(chunk)
                chunk = handle.read(_CHUNK)
            if text is not None:
                text.decode(b"", final=True)
    except UnicodeDecodeError:
        path.unlink(missing_ok=True)
        raise _unsupported(filename) from None
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path.resolve()


def declared_length(request: Request) -> int | None:
    """The body's length as its ``Content-Length`` declares it; None without one (a chunked body) or
    with one that is no number (the body is then counted as it arrives)."""
    text = request.headers.get("content-length", "").strip()
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text) if len(text) <= 18 else 1 << 62


def body_budget(request: Request, limit: int) -> int:
    """The bytes a body whose limit is ``limit`` may still bring: its declared length, at most ``limit``."""
    declared = declared_length(request)
    return limit if declared is None else min(declared, limit)


#: The header of an answer given before the body was read whole: the server closes the connection
#: after it, so the client cannot go on sending the rest.
CLOSE = {"Connection": "close"}


class _TooLarge(MultiPartException):
    """A file part or the whole form passed its limit (the parser closes its files, then we answer 413)."""


class _CountingParser(MultiPartParser):
    """Starlette's multipart parser, stopping at the first file part longer than ``max_file_bytes``."""

    def __init__(self, *args: Any, max_file_bytes: int, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.max_file_bytes = max_file_bytes
        self._file_bytes = 0

    def on_part_begin(self) -> None:
        super().on_part_begin()
        self._file_bytes = 0

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._current_part.file is not None:
            self._file_bytes += end - start
            if self._file_bytes > self.max_file_bytes:
                raise _TooLarge(f"upload {self._current_part.file.filename!r} is larger than the limit of "
                                f"{self.max_file_bytes} bytes")
        super().on_part_data(data, start, end)


async def read_form(request: Request, settings: ServerSettings) -> FormData:
    """The request's multipart form, its bytes counted as they arrive: 413 as soon as one file passes
    ``max_upload_bytes`` or the body passes what the limits allow a form (``max_form_bytes``), whether
    or not the client declared a Content-Length; 400 for a malformed form. Files wait in temporary
    files (at most 1 MiB of each in memory)."""
    limit = settings.max_form_bytes
    max_files, max_file_bytes = settings.max_files, settings.max_upload_bytes
    too_large = f"the form is larger than the limit of {max_file_bytes} bytes per file and {max_files} files"
    declared = declared_length(request)
    if declared is not None and declared > limit:
        raise ApiError(413, too_large, code="upload_too_large", headers=CLOSE)

    async def counted() -> AsyncIterator[bytes]:
        received = 0
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise _TooLarge(too_large)
            yield chunk

    stream = counted()
    try:
        parser = _CountingParser(request.headers, stream, max_files=max_files, max_fields=settings.FORM_FIELDS,
                                 max_part_size=settings.max_field_bytes, max_file_bytes=max_file_bytes)
        return await parser.parse()
    except _TooLarge as exc:
        raise ApiError(413, exc.message, code="upload_too_large", headers=CLOSE) from None
    except MultiPartException as exc:
        raise ApiError(400, f"bad multipart form: {exc.message}", code="bad_upload") from None
    except (KeyError, ValueError) as exc:  # no boundary, an undecodable header: the client sent a bad form
        raise ApiError(400, f"bad multipart form: {exc}", code="bad_upload") from None
    finally:
        await stream.aclose()


def confined_file(folder: Path, name: str) -> Path:
    """The regular file ``name`` (relative) inside ``folder``, after resolving ``..`` and symlinks; 404 otherwise.

    Every refusal says only "no such file", so probing reveals nothing about what exists outside.
    """
    missing = ApiError(404, f"no file {name!r} in this run", code="file_not_found")
    if not name or "\x00" in name or name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise missing
    if any(part in ("..", "") for part in name.replace("\\", "/").split("/")):
        raise missing
    root = folder.resolve()
    current = root  # no symlink anywhere on the way, even one that points back inside
    try:
        for part in Path(name.replace("\\", "/")).parts:
            current = current / part
            if current.is_symlink():
                raise missing
        path = current.resolve(strict=True)
    except (OSError, RuntimeError):  # a name too long for the file system, a loop: no such file
        raise missing from None
    if not path.is_relative_to(root) or not is_regular_file(path):
        raise missing
    return path


def is_regular_file(path: Path) -> bool:
    """``path.is_file()``, but False where the file system refuses the name (too long, ...) instead of
    raising: names come from model text and requests."""
    try:
        return path.is_file()
    except OSError:
        return False
