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
from hugginggpt.tools.resources.media import check_frame_size, max_video_pixels


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
        total = getattr(video, "n_frames", 1)
        wanted = sample_indices(total, count)
        keep = set(wanted)
        try:
            decoded = {i: fit_pixels(frame.convert("RGB"), share)
                       for i, frame in enumerate(ImageSequence.Iterator(video)) if i in keep}
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
