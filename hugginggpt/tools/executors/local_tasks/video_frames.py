"""Frames sampled uniformly from a video: animated GIF/WebP/PNG through Pillow, MP4/WebM/MKV/AVI through ``av``.

Pillow ships with us and reads what ``save_video`` writes (GIF); container formats need PyAV, which is
optional: without it those videos fail with a one-line hint instead of a decoder traceback.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from PIL import Image, ImageSequence

from hugginggpt.errors import ResourceError


def sample_indices(total: int, count: int) -> list[int]:
    """``count`` frame indices spread evenly over ``total`` frames (repeats when the video is shorter)."""
    if total <= 0 or count <= 0:
        return []
    return np.linspace(0, total - 1, count).round().astype(int).tolist()


#: The most frames one read may return: each is a decoded image held in memory (``num_frames: 100000``
#: on a long GIF once grew to 11 GB). The task table's ``num_frames`` maximum is lower still.
MAX_FRAMES = 256


def read_frames(path: str | Path, count: int) -> list[Image.Image]:
    """``count`` RGB frames sampled uniformly from the video at ``path``; ``ResourceError`` if unreadable
    or if ``count`` is above ``MAX_FRAMES``."""
    if count > MAX_FRAMES:
        raise ResourceError(None, f"cannot sample {count:,} frames from a video: at most {MAX_FRAMES}")
    path = Path(path)
    if not path.is_file():
        raise ResourceError(None, f"file not found: {path}")
    frames = _pillow_frames(path, count)
    if frames is None:
        frames = _av_frames(path, count)
    if not frames:
        raise ResourceError(None, f"the video {path.name} has no frames")
    return frames


def _pillow_frames(path: Path, count: int) -> list[Image.Image] | None:
    """Frames of an animated image, or None when Pillow cannot open the file (a container format)."""
    try:
        video = Image.open(path)
    except Exception:  # noqa: BLE001  not an image format: leave it to PyAV
        return None
    with video:
        total = getattr(video, "n_frames", 1)
        wanted = sample_indices(total, count)
        keep = set(wanted)
        try:
            decoded = {i: frame.convert("RGB") for i, frame in enumerate(ImageSequence.Iterator(video))
                       if i in keep}
        except Exception as exc:  # noqa: BLE001  a truncated or corrupt animation
            raise ResourceError(None, f"cannot decode video {path.name}: {exc}") from None
    return [decoded[i] for i in wanted if i in decoded]


def _av_frames(path: Path, count: int) -> list[Image.Image]:
    if importlib.util.find_spec("av") is None:
        raise ResourceError(None, f"reading {path.suffix or 'this'} video needs the 'av' package: pip install av")
    import av

    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            total = stream.frames
            if total > 0:  # the container knows its length: keep only the sampled frames
                wanted = sample_indices(total, count)
                keep = set(wanted)
                decoded = {i: f.to_image() for i, f in enumerate(container.decode(stream)) if i in keep}
                return [decoded[i] for i in wanted if i in decoded] or list(decoded.values())
            everything = [f.to_image() for f in container.decode(stream)]
    except Exception as exc:  # noqa: BLE001  PyAV raises many error types for broken files
        raise ResourceError(None, f"cannot decode video {path.name}: {exc}") from None
    return [everything[i] for i in sample_indices(len(everything), count)]
