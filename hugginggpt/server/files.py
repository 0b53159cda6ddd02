"""Files in and out of a run's folder: uploads are size-limited and type-checked by their content;
a run's files are served only from inside its folder (no ``..``, absolute path, or symlink out)."""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from hugginggpt.server.errors import ApiError
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


def upload_suffix(data: bytes, filename: str | None) -> str:
    """The extension the content proves (media by magic bytes, else UTF-8 text by name); 415 otherwise."""
    sniffed = sniff_suffix(data[:64])
    if sniffed:
        return sniffed
    suffix = Path(filename or "").suffix.lower()
    if suffix in TEXT_SUFFIXES:
        try:
            data.decode("utf-8")
            return suffix
        except UnicodeDecodeError:
            pass
    raise ApiError(415, f"upload {filename or '(unnamed)'!r}: unsupported type; send an image, audio or video "
                        f"file, or UTF-8 text ({', '.join(sorted(TEXT_SUFFIXES))})", code="unsupported_media_type")


def store_upload(data: bytes, filename: str | None, folder: Path) -> Path:
    """Write an upload's bytes under a safe unique name in ``folder``; returns the absolute path.

    The name is the upload's own (made safe) when it is free, else that name with a random part:
    one exclusive create each, never a search through taken names. Blocking: call it off the event loop.
    """
    if not data:
        raise ApiError(400, f"upload {filename or '(unnamed)'!r} is empty", code="empty_upload")
    suffix = upload_suffix(data, filename)
    folder.mkdir(parents=True, exist_ok=True)
    stem = safe_stem(filename)
    path = folder / f"{stem}{suffix}"
    while True:
        try:
            with path.open("xb") as handle:
                handle.write(data)
            return path.resolve()
        except FileExistsError:
            path = folder / f"{stem}-{secrets.token_hex(4)}{suffix}"


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


async def read_form(request: Request, *, max_files: int, max_file_bytes: int, max_fields: int,
                    max_part_size: int) -> FormData:
    """The request's multipart form, its bytes counted as they arrive: 413 as soon as one file passes
    ``max_file_bytes`` or the body passes what the limits allow a form, whether or not the client
    declared a Content-Length; 400 for a malformed form."""
    limit = max_file_bytes * max_files + max_part_size * max_fields + 65536
    too_large = f"the form is larger than the limit of {max_file_bytes} bytes per file and {max_files} files"
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and len(declared) < 20 and int(declared) > limit:
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
        parser = _CountingParser(request.headers, stream, max_files=max_files, max_fields=max_fields,
                                 max_part_size=max_part_size, max_file_bytes=max_file_bytes)
        return await parser.parse()
    except _TooLarge as exc:
        raise ApiError(413, exc.message, code="upload_too_large", headers=CLOSE) from None
    except MultiPartException as exc:
        raise ApiError(400, f"bad multipart form: {exc.message}", code="bad_upload") from None
    except (KeyError, ValueError) as exc:  # no boundary, an undecodable header: the client sent a bad form
        raise ApiError(400, f"bad multipart form: {exc}", code="bad_upload") from None
    finally:
        await stream.aclose()


async def read_upload(upload: Any, max_bytes: int) -> bytes:
    """An uploaded file's bytes, read in chunks; 413 as soon as it passes ``max_bytes``."""
    chunks, size = [], 0
    while chunk := await upload.read(_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise ApiError(413, f"upload {upload.filename!r} is larger than the limit of {max_bytes} bytes",
                           code="upload_too_large")
        chunks.append(chunk)
    return b"".join(chunks)


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
