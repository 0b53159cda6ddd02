"""What a file is, from its first bytes and its name: the media kinds and the extensions we trust.

Content wins over headers and names: a download's extension comes from its magic bytes first, then
its Content-Type, then its URL path.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import PurePosixPath

from hugginggpt.tools.table import MEDIA_KINDS

#: Extension of a freshly generated file of each kind.
KIND_SUFFIX = {"image": ".png", "audio": ".wav", "video": ".mp4", "text": ".txt", "table": ".csv"}

#: The file suffixes of each media kind: the one list (an animated ``.gif`` is an image and a video).
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff"})
AUDIO_SUFFIXES = frozenset({".wav", ".flac", ".ogg", ".mp3", ".m4a", ".aac", ".opus"})
VIDEO_SUFFIXES = frozenset({".mp4", ".m4v", ".mov", ".webm", ".mkv", ".avi", ".gif"})
MEDIA_SUFFIXES: dict[str, frozenset[str]] = dict(zip(MEDIA_KINDS, (IMAGE_SUFFIXES, AUDIO_SUFFIXES, VIDEO_SUFFIXES)))
#: The suffixes of the data files (tables, text, JSON, arrays, documents) a run may read or write.
DATA_SUFFIXES = frozenset({".csv", ".json", ".txt", ".pdf", ".npy"})
# Suffix -> kind; where two kinds share a suffix the first wins (a .gif is an image).
_KIND_BY_SUFFIX = {suffix: kind for kind, suffixes in reversed([*MEDIA_SUFFIXES.items(), ("data", DATA_SUFFIXES)])
                   for suffix in suffixes}

_SAFE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")

# Content types whose mimetypes guess is missing or odd on some systems.
_TYPE_SUFFIX = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/bmp": ".bmp",
    "image/tiff": ".tiff",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/wave": ".wav",
    "audio/vnd.wave": ".wav",
    "audio/flac": ".flac",
    "audio/x-flac": ".flac",
    "audio/ogg": ".ogg",
    "audio/mpeg": ".mp3",
    "audio/mp3": ".mp3",
    "audio/mp4": ".m4a",
    "audio/x-m4a": ".m4a",
    "audio/aac": ".aac",
    "audio/opus": ".opus",
    "video/mp4": ".mp4",
    "video/webm": ".webm",
    "video/quicktime": ".mov",
    "video/x-matroska": ".mkv",
    "video/x-msvideo": ".avi",
    "text/plain": ".txt",
    "text/csv": ".csv",
    "application/json": ".json",
}

# ISO-BMFF (mp4/mov/m4a) top-level boxes that may open a file.
_BMFF_BOXES = (b"ftyp", b"moov", b"mdat", b"wide", b"free", b"skip")


def file_kind(name: str) -> str | None:
    """The kind of file ``name`` names, by its extension: a media kind (``image``, ``audio``,
    ``video``; an animated ``.gif`` is an image), ``data`` for the data files (``DATA_SUFFIXES``),
    None for anything else (no extension, or one we do not know)."""
    return _KIND_BY_SUFFIX.get(PurePosixPath(name.replace("\\", "/")).suffix.lower())


def sniff_suffix(head: bytes) -> str | None:
    """The extension the first bytes of a file announce (PNG, JPEG, WAV, MP4...), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return ".png"
    if head.startswith(b"\xff\xd8\xff"):
        return ".jpg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return ".gif"
    if head.startswith(b"BM"):
        return ".bmp"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return ".tiff"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return ".webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return ".wav"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return ".avi"
    if head.startswith(b"fLaC"):
        return ".flac"
    if head.startswith(b"OggS"):
        return ".ogg"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0 and head[1] & 0x06):
        return ".mp3"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return ".webm" if b"webm" in head[:64] else ".mkv"
    if head[4:8] in _BMFF_BOXES:
        brand = head[8:12]
        if brand.startswith(b"M4A"):
            return ".m4a"
        if brand == b"qt  ":
            return ".mov"
        return ".mp4"
    return None


def is_video_head(head: bytes) -> bool:
    """Whether the first bytes are those of a video container (MP4/MOV, WebM/MKV, AVI, GIF)."""
    return sniff_suffix(head) in VIDEO_SUFFIXES - {".m4a"}


def suffix_for_content_type(content_type: str | None) -> str | None:
    """The extension for a Content-Type header value (parameters ignored), or None."""
    if not content_type:
        return None
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime in _TYPE_SUFFIX:
        return _TYPE_SUFFIX[mime]
    if mime == "application/octet-stream":
        return None
    guess = mimetypes.guess_extension(mime)
    return guess if guess and safe_suffix(guess) else None


def safe_suffix(suffix: str) -> str | None:
    """``suffix`` lower-cased when it is a plain extension (dot + up to 10 letters/digits), else None."""
    return suffix.lower() if _SAFE_SUFFIX.fullmatch(suffix or "") else None
