"""Frames sampled uniformly from a video: animated GIF/WebP/PNG through Pillow, MP4/WebM/MKV/AVI through ``av``.

Pillow ships with us and reads what ``save_video`` writes (GIF); container formats need PyAV, which is
optional: without it those videos fail with a one-line hint instead of a decoder traceback.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageSequence

from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources.media import (
    MAX_IMAGE_PIXELS_ENV,
    check_frame_size,
    max_image_pixels,
    max_video_pixels,
)


def sample_indices(total: int, count: int) -> list[int]:
    """``count`` frame indices spread evenly over ``total`` frames (repeats when the video is shorter)."""
    if total <= 0 or count <= 0:
        return []
    return np.linspace(0, total - 1, count).round().astype(int).tolist()


#: The most frames one read may return: each is a decoded image held in memory (``num_frames: 100000``
#: on a long GIF once grew to 11 GB). The task table's ``num_frames`` maximum is lower still.
MAX_FRAMES = 256


def read_frames(path: str | Path, count: int) -> list[Image.Image]:
    """``count`` RGB frames sampled uniformly from the video at ``path``; ``ResourceError`` if unreadable,
    if ``count`` is above ``MAX_FRAMES`` or if a frame is larger than an input image may be.

    The frames together hold at most ``max_video_pixels()`` pixels: a larger frame is scaled down
    (aspect kept) to its share as soon as it is decoded, so only one full-size frame is in memory at once.
    """
    if count > MAX_FRAMES:
        raise ResourceError(None, f"cannot sample {count:,} frames from a video: at most {MAX_FRAMES}")
    path = Path(path)
    if not path.is_file():
        raise ResourceError(None, f"file not found: {path}")
    share = max(1, max_video_pixels() // max(count, 1))
    frames = _pillow_frames(path, count, share)
    if frames is None:
        frames = _av_frames(path, count, share)
    if not frames:
        raise ResourceError(None, f"the video {path.name} has no frames")
    return frames


#: What one frame of an animated image costs to go through at least, in canvas pixels (the work of a
#: frame besides its pixels: about 5 us, or 1,000-4,000 pixels).
FRAME_COST_PIXELS = 4096


def decode_budget() -> int:
    """The canvas pixels that reading frames from one animated image may go through: every frame it
    must decode to reach the sampled ones, and each sampled one again as it is converted. One largest
    input image's worth (``max_image_pixels()``): under 1 s of CPU at Pillow's 4-16 ns per pixel."""
    return max_image_pixels()


def _frame_count(video: Image.Image, path: Path, cost: int, count: int) -> int:
    """The frames of an animated image, when decoding them and converting ``count`` of them stays within
    ``decode_budget()`` at ``cost`` canvas pixels each (``ResourceError`` otherwise). A GIF says its
    length nowhere but in its frames: they are counted by reading their headers, not their pixels, and
    only as far as the budget goes."""
    budget = decode_budget()
    most = max(1, budget // cost)
    if getattr(video, "format", None) == "GIF" and hasattr(video, "_seek"):
        total = 1
        try:
            while total <= most:
                video._seek(total, False)  # noqa: SLF001 - Pillow's own n_frames, without its unbounded loop
                total += 1
        except EOFError:
            pass
        video.seek(0)
    else:
        total = getattr(video, "n_frames", 1)
    if cost * (total + min(count, total)) > budget:
        frames = f"more than {most:,}" if total > most else f"{total:,}"
        raise ResourceError(None, f"video {path.name} is too large to decode: {frames} frames of "
                                  f"{video.width}x{video.height}; decoding may go through at most {budget:,} pixels "
                                  f"of frames ({MAX_IMAGE_PIXELS_ENV})")
    return total


def fit_pixels(image: Image.Image, pixels: int) -> Image.Image:
    """``image`` scaled down (aspect kept) to at most ``pixels`` pixels; as it is when it fits."""
    if image.width * image.height <= pixels:
        return image
    scale = math.sqrt(pixels / (image.width * image.height))
    size = (max(1, int(image.width * scale)), max(1, int(image.height * scale)))
    return image.resize(size, Image.Resampling.BILINEAR)


def _pillow_frames(path: Path, count: int, share: int) -> list[Image.Image] | None:
    """Frames of an animated image, or None when Pillow cannot open the file (a container format)."""
    try:
        video = Image.open(path)
    except Exception:  # noqa: BLE001  not an image format: leave it to PyAV
        return None
    with video:
        check_frame_size(video.width, video.height, path)
        total = _frame_count(video, path, max(video.width * video.height, FRAME_COST_PIXELS), count)
        wanted = sample_indices(total, count)
        keep, last = set(wanted), max(wanted, default=-1)
        decoded = {}
        try:  # every frame up to the last sampled one is composed onto the canvas: within the budget
            for i, frame in enumerate(ImageSequence.Iterator(video)):
                if i > last:
                    break
                if i in keep:
                    decoded[i] = fit_pixels(frame.convert("RGB"), share)
        except Exception as exc:  # noqa: BLE001  a truncated or corrupt animation
            raise ResourceError(None, f"cannot decode video {path.name}: {exc}") from None
    return [decoded[i] for i in wanted if i in decoded]


def _av_frames(path: Path, count: int, share: int) -> list[Image.Image]:
    if importlib.util.find_spec("av") is None:
        raise ResourceError(None, f"reading {path.suffix or 'this'} video needs the 'av' package: pip install av")
    import av

    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            check_frame_size(stream.codec_context.width, stream.codec_context.height, path)
            total = stream.frames
            if total <= 0:  # the container does not say: count the packets (no decoding), then decode
                total = sum(1 for packet in container.demux(stream) if packet.size)
                container.seek(0)
            wanted = sample_indices(total, count)
            keep = set(wanted)
            decoded = {}
            for i, frame in enumerate(container.decode(stream)):
                if i in keep:
                    check_frame_size(frame.width, frame.height, path)
                    decoded[i] = fit_pixels(frame.to_image(), share)
            return [decoded[i] for i in wanted if i in decoded] or list(decoded.values())
    except ResourceError:
        raise
    except Exception as exc:  # noqa: BLE001  PyAV raises many error types for broken files
        raise ResourceError(None, f"cannot decode video {path.name}: {exc}") from None
