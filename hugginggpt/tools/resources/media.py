"""Reading and writing media files: checking a file is the kind a task expects, loading it, and
saving what models generate.

Everything written goes through ``atomic_write`` under a name from ``Workspace.new_path``, so
parallel tasks never collide and no partial file is left behind. ``soundfile`` (audio) is an
optional dependency (extra ``local``) and is imported only when audio is touched.

Video: no video encoder ships with our dependencies, so ``save_video`` writes an animated GIF
(Pillow): a real, playable file that any browser shows. Video inputs are recognised by the magic
bytes of MP4/MOV, WebM/MKV, AVI or GIF.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from PIL import Image, ImageOps

from hugginggpt import config
from hugginggpt.errors import ResourceError
from hugginggpt.tools.resources.atomic import atomic_write
from hugginggpt.tools.resources.sniff import AUDIO_SUFFIXES, is_video_head, sniff_suffix


class OutputFolder(Protocol):
    """Where generated files go: a ``Workspace`` (``hugginggpt.tools.resources``), a fresh path per file."""

    def new_path(self, suffix_or_kind: str) -> Path: ...

# Extension -> libsndfile format name, for the audio formats soundfile may decode.
_SOUNDFILE_FORMATS = {".wav": "WAV", ".flac": "FLAC", ".ogg": "OGG", ".opus": "OGG", ".mp3": "MP3"}

#: Limits on what a decoded input may cost, checked from the file's header before decoding.
#: Each is a variable of ``config.TABLE``, where its default is written (read when checked, so a changed
#: environment counts).
MAX_IMAGE_PIXELS_ENV = config.var("max_image_pixels")
DEFAULT_MAX_IMAGE_PIXELS = int(config.default("max_image_pixels"))  # Pillow's warning threshold (~0.25 GiB as RGB)
MAX_AUDIO_SECONDS_ENV = config.var("max_audio_seconds")
DEFAULT_MAX_AUDIO_SECONDS = float(config.default("max_audio_seconds"))
#: Sample rates outside this range are no real recording (a 1 Hz WAV asked for gigabytes when resampled).
MIN_SAMPLE_RATE, MAX_SAMPLE_RATE = 1_000, 768_000
MAX_AUDIO_SAMPLES_ENV = config.var("max_audio_samples")
#: Frames x channels of one input: about an hour of 16 kHz mono, 11 minutes of 48 kHz stereo. Decoding
#: costs CPU in proportion to the samples: about 1 s at this limit (SECURITY.md, "Known limits").
DEFAULT_MAX_AUDIO_SAMPLES = int(config.default("max_audio_samples"))
#: Audio is decoded this many samples (frames x channels) at a time and downmixed block by block.
AUDIO_BLOCK_SAMPLES = 1 << 20
MAX_VIDEO_PIXELS_ENV = config.var("max_video_pixels")
#: Pixels of all the frames sampled from one video together (about 192 MiB as RGB): larger frames are
#: scaled down to their share as they are decoded.
DEFAULT_MAX_VIDEO_PIXELS = int(config.default("max_video_pixels"))


def _limit(key: str, default: float) -> float:
    """A positive limit from variable ``key`` of ``config.TABLE``, else ``default`` (an unusable value
    names the variable)."""
    env = config.var(key)
    text = (config.env(key) or "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ResourceError(None, f"{env} must be a positive number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ResourceError(None, f"{env} must be a positive number, got {text!r}")
    return value


def max_image_pixels() -> int:
    """The most pixels an input image may have (``HUGGINGGPT_MAX_IMAGE_PIXELS``, default 89,478,485)."""
    return int(_limit("max_image_pixels", DEFAULT_MAX_IMAGE_PIXELS))


def max_audio_seconds() -> float:
    """The longest input audio, in seconds (``HUGGINGGPT_MAX_AUDIO_SECONDS``, default 3600)."""
    return _limit("max_audio_seconds", DEFAULT_MAX_AUDIO_SECONDS)


def max_audio_samples() -> int:
    """The most samples (frames x channels) an input audio may hold (``HUGGINGGPT_MAX_AUDIO_SAMPLES``,
    default 64,000,000)."""
    return int(_limit("max_audio_samples", DEFAULT_MAX_AUDIO_SAMPLES))


def max_video_pixels() -> int:
    """The most pixels the frames sampled from one video may hold together (``HUGGINGGPT_MAX_VIDEO_PIXELS``)."""
    return int(_limit("max_video_pixels", DEFAULT_MAX_VIDEO_PIXELS))


def check_frame_size(width: int, height: int, path: str | Path) -> None:
    """Refuse a video whose frames are larger than an input image may be (``max_image_pixels``)."""
    limit = max_image_pixels()
    if width * height > limit:
        raise ResourceError(None, f"video frames too large to decode safely: {path} has {width}x{height} "
                                  f"frames ({width * height:,} pixels); at most {limit:,} ({MAX_IMAGE_PIXELS_ENV})")


def _check_pixels(img: Image.Image, path: str | Path) -> None:
    limit = max_image_pixels()
    pixels = img.width * img.height
    if pixels > limit:
        raise ResourceError(None, f"image too large to open safely: {path} has {pixels:,} pixels "
                                  f"({img.width}x{img.height}); at most {limit:,} ({MAX_IMAGE_PIXELS_ENV})")


def _check_sample_rate(rate: float, path: str | Path) -> None:
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise ResourceError(None, f"audio {path} has a sample rate of {rate:g} Hz; "
                                  f"only {MIN_SAMPLE_RATE:,} to {MAX_SAMPLE_RATE:,} Hz is accepted")


def _check_audio_header(info: Any, path: str | Path) -> None:
    """Refuse, from the header alone, audio whose sample rate, length or size is no real input."""
    _check_sample_rate(info.samplerate, path)
    _check_audio_length(info.frames, info.samplerate, info.channels, path)


def _check_audio_length(frames: int, rate: float, channels: int, path: str | Path) -> None:
    limit = max_audio_seconds()
    seconds = frames / rate
    if seconds > limit:
        raise ResourceError(None, f"audio {path} is {seconds:,.0f} s long; at most {limit:g} s "
                                  f"({MAX_AUDIO_SECONDS_ENV})")
    samples = max_audio_samples()
    if frames * max(channels, 1) > samples:
        raise ResourceError(None, f"audio {path} holds {frames * channels:,} samples ({channels} channel(s) of "
                                  f"{frames:,} frames, {seconds:,.0f} s); at most {samples:,} "
                                  f"(set {MAX_AUDIO_SAMPLES_ENV} higher to accept it)")


def _soundfile():
    try:
        import soundfile
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ResourceError(None, "audio needs the 'soundfile' package: pip install 'hugginggpt[local]'") from None
    return soundfile


def _head(path: Path, n: int = 64) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


# ---------------------------------------------------------------------------------------- checks


def check_kind(path: str | Path, kind: str | None) -> Path:
    """Raise ``ResourceError`` unless the file's content is of ``kind`` (image, audio, video, table).

    Other kinds (text, None) are not checked. Returns the path for chaining.
    """
    path = Path(path)
    if kind == "image":
        _check_image(path)
    elif kind == "audio":
        _check_audio(path)
    elif kind == "video" and not is_video_head(_head(path)):
        raise ResourceError(None, f"not a video (MP4, MOV, WebM, MKV, AVI or GIF): {path}")
    elif kind == "table":
        _check_table(path)
    return path


#: Suffixes of files a browser runs as a page or a script: never a table, whatever their content.
_ACTIVE_SUFFIXES = frozenset({".html", ".htm", ".xhtml", ".svg", ".xml", ".js", ".mjs"})


def _check_table(path: Path) -> None:
    """A table file must be text a CSV reader can take: not media, not markup (HTML, SVG, XML),
    no NUL bytes, UTF-8 in its first bytes. Checked before anything reads or keeps it."""
    head = _head(path, 4096)
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if path.suffix.lower() in _ACTIVE_SUFFIXES or sniff_suffix(head) or b"\x00" in head or text[:1] == b"<":
        raise ResourceError(None, f"not a table (CSV text): {path.name}")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not only a character cut at the end of the first bytes
            raise ResourceError(None, f"not a table (CSV text): {path.name} is not UTF-8 text") from None


def _check_image(path: Path) -> None:
    try:
        with Image.open(path) as img:
            _check_pixels(img, path)
            img.verify()
    except ResourceError:
        raise
    except Image.DecompressionBombError:
        raise ResourceError(None, f"image too large to open safely: {path}") from None
    except Exception:
        raise ResourceError(None, f"not an image: {path}") from None


def _check_audio(path: Path) -> None:
    """soundfile must read the header; formats it cannot decode (m4a, aac...) need audio magic bytes."""
    sf = _soundfile()
    try:
        info = sf.info(str(path))
    except Exception:
        info = None
    if info is not None:
        _check_audio_header(info, path)
        return
    suffix = path.suffix.lower()
    decodable = _SOUNDFILE_FORMATS.get(suffix) in sf.available_formats()
    sniffed = sniff_suffix(_head(path))
    if suffix in AUDIO_SUFFIXES and not decodable and sniffed in {".m4a", ".mp4", ".mp3", ".ogg"}:
        return
    raise ResourceError(None, f"not an audio file: {path}")


# --------------------------------------------------------------------------------------- loading


def load_image(path: str | Path) -> Image.Image:
    """Open an image as RGB, upright (EXIF orientation applied), fully read so the file is closed."""
    try:
        with Image.open(path) as img:
            _check_pixels(img, path)
            img.load()
            return ImageOps.exif_transpose(img).convert("RGB")
    except ResourceError:
        raise
    except FileNotFoundError:
        raise ResourceError(None, f"file not found: {path}") from None
    except Image.DecompressionBombError:
        raise ResourceError(None, f"image too large to open safely: {path}") from None
    except Exception:
        raise ResourceError(None, f"not an image: {path}") from None


def load_audio(path: str | Path, sampling_rate: int | None = None) -> tuple[np.ndarray, int]:
    """Read audio as mono float32 in [-1, 1]; resample to ``sampling_rate`` when given.

    The header is checked first: a sample rate outside 1-768 kHz, or audio longer than
    ``max_audio_seconds()`` or holding more than ``max_audio_samples()``, is refused before anything
    is decoded. Then it is decoded, downmixed and resampled a block at a time: the memory it takes is
    the mono result's (4 bytes a sample at the output rate), whatever the input's rate and channels.
    """
    sf = _soundfile()
    try:
        _check_audio_header(sf.info(str(path)), path)
        if sampling_rate:
            _check_sample_rate(sampling_rate, f"resampling of {path}")
        return _decode_mono(sf, path, sampling_rate)
    except ResourceError:
        raise
    except FileNotFoundError:
        raise ResourceError(None, f"file not found: {path}") from None
    except Exception as exc:
        raise ResourceError(None, f"cannot decode audio {path}: {exc}") from None


class _Samples:
    """Float32 samples gathered block by block into one array, sized once from the expected length
    (a header that understates it only costs a copy)."""

    def __init__(self, expected: int):
        self._array = np.empty(max(0, expected), np.float32)
        self._size = 0

    def add(self, block: np.ndarray) -> None:
        end = self._size + len(block)
        if end > len(self._array):
            grown = np.empty(max(end, 2 * len(self._array)), np.float32)
            grown[:self._size] = self._array[:self._size]
            self._array = grown
        self._array[self._size:end] = block
        self._size = end

    def array(self) -> np.ndarray:
        return self._array[:self._size] if self._size == len(self._array) else self._array[:self._size].copy()


def _decode_mono(sf: Any, path: str | Path, target_rate: int | None = None) -> tuple[np.ndarray, int]:
    """The audio downmixed to mono (and resampled to ``target_rate``), decoded a block at a time into
    one reused buffer; the limits are checked again as the frames arrive (a header may understate its
    length)."""
    with sf.SoundFile(str(path)) as audio:
        rate, channels = int(audio.samplerate), max(audio.channels, 1)
        stream = None if not target_rate or target_rate == rate else ResampleStream(rate, target_rate)
        out_rate = rate if stream is None else int(target_rate)
        out = _Samples(audio.frames if stream is None else stream.output_length(audio.frames))
        buffer = np.empty((max(1, AUDIO_BLOCK_SAMPLES // channels), channels), np.float32)
        downmix = None if channels == 1 else np.empty(len(buffer), np.float32)
        frames = 0
        while len(block := audio.read(out=buffer)):
            frames += len(block)
            _check_audio_length(frames, rate, channels, path)
            mono = block[:, 0] if downmix is None else _downmix(block, downmix[:len(block)])
            out.add(mono if stream is None else stream.push(mono))  # both copy: the buffers are reused
        if stream is not None:
            out.add(stream.finish())
    return out.array(), out_rate


def _downmix(block: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The mean of ``block``'s channels (its columns), written to ``out``. Up to 16 channels they are
    added one at a time: numpy's ``mean(axis=1)`` over a short row costs 21 ns a stereo frame (3.7 s
    of CPU for an hour of 48 kHz stereo), the adds about 1 ns; over more channels the mean is quicker."""
    channels = block.shape[1]
    if channels > 16:
        return np.mean(block, axis=1, out=out)
    np.copyto(out, block[:, 0])
    for channel in range(1, channels):
        np.add(out, block[:, channel], out=out)
    return np.divide(out, channels, out=out)


class ResampleStream:
    """Resampling of a signal that comes in blocks (``push`` each, then ``finish``): soxr's streaming
    resampler (high quality), the memory it takes a block's; without soxr, linear interpolation
    (numpy) of the whole signal at ``finish``."""

    def __init__(self, orig_rate: int, target_rate: int):
        for rate in (orig_rate, target_rate):  # the output's length is size * target / orig: both bounded
            _check_sample_rate(rate, "resampling")
        self.orig_rate, self.target_rate = int(orig_rate), int(target_rate)
        try:
            import soxr
        except ImportError:
            self._soxr = None
            self._whole: list[np.ndarray] = []
        else:
            # "HQ": flat to 91% of the output's Nyquist frequency (7.3 kHz at 16 kHz), aliasing 120 dB down.
            # From 96 kHz "MQ" and "LQ" (flat to 68%) save under 10%; "QQ" (cubic) is 3x quicker but aliases.
            self._soxr = soxr.ResampleStream(self.orig_rate, self.target_rate, 1, dtype="float32", quality="HQ")

    def output_length(self, frames: int) -> int:
        return -(-max(frames, 0) * self.target_rate // self.orig_rate)

    def push(self, samples: np.ndarray) -> np.ndarray:
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        if self._soxr is None:
            self._whole.append(samples)
            return np.zeros(0, np.float32)
        return self._soxr.resample_chunk(samples)

    def finish(self) -> np.ndarray:
        if self._soxr is not None:
            return self._soxr.resample_chunk(np.zeros(0, np.float32), last=True)
        signal = np.concatenate(self._whole) if self._whole else np.zeros(0, np.float32)
        if signal.size == 0:
            return signal
        n_out = max(1, round(signal.size * self.target_rate / self.orig_rate))
        positions = np.arange(n_out) * (self.orig_rate / self.target_rate)
        return np.interp(positions, np.arange(signal.size), signal).astype(np.float32)


def resample(signal: np.ndarray, orig_rate: int, target_rate: int) -> np.ndarray:
    """``signal`` at ``target_rate``, resampled a block at a time (``ResampleStream``)."""
    if orig_rate == target_rate or signal.size == 0:
        return signal.astype(np.float32, copy=False)
    stream = ResampleStream(orig_rate, target_rate)
    out = _Samples(stream.output_length(signal.size))
    for start in range(0, signal.size, AUDIO_BLOCK_SAMPLES):
        out.add(stream.push(signal[start:start + AUDIO_BLOCK_SAMPLES].astype(np.float32, copy=False)))
    out.add(stream.finish())
    return out.array()


# ---------------------------------------------------------------------------------------- saving


def _to_image(frame: Any) -> Image.Image:
    """A PIL image from a PIL image or an HxW / HxWxC array (uint8, or floats in [0, 1])."""
    if isinstance(frame, Image.Image):
        return frame
    array = np.asarray(frame)
    if array.dtype != np.uint8:
        array = (np.clip(array.astype(np.float32), 0.0, 1.0) * 255).round().astype(np.uint8)
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    return Image.fromarray(array)


def save_image(image: Any, ws: OutputFolder) -> str:
    """Write an image (PIL or array) as PNG in the workspace; return its absolute path."""
    img = _to_image(image)
    path = atomic_write(ws.new_path("image"), lambda fh: img.save(fh, format="PNG"))
    return str(path)


def save_audio(array: Any, sampling_rate: int, ws: OutputFolder) -> str:
    """Write audio samples as a 32-bit float WAV in the workspace; return its absolute path.

    Accepts (samples,), (samples, channels) or the (channels, samples) layout models produce.
    """
    sf = _soundfile()
    if int(sampling_rate) <= 0:
        raise ResourceError(None, f"invalid sampling rate: {sampling_rate}")
    data = np.asarray(array, dtype=np.float32).squeeze()
    if data.ndim == 2 and data.shape[0] < data.shape[1]:
        data = data.T
    if data.ndim not in (1, 2) or data.size == 0:
        raise ResourceError(None, f"audio must be a non-empty 1-D or 2-D array, got shape {np.shape(array)}")
    path = atomic_write(ws.new_path("audio"),
                        lambda fh: sf.write(fh, data, int(sampling_rate), format="WAV", subtype="FLOAT"))
    return str(path)


def save_video(frames: Iterable[Any], fps: float, ws: OutputFolder) -> str:
    """Write frames (PIL images or arrays) as an animated GIF at ``fps``; return its absolute path."""
    images = [_to_image(frame).convert("RGB") for frame in frames]
    if not images:
        raise ResourceError(None, "a video needs at least one frame")
    if fps <= 0:
        raise ResourceError(None, f"invalid frame rate: {fps}")
    duration_ms = max(20, round(1000 / fps))  # GIF delays are in 10 ms steps, browsers clamp below 20
    path = atomic_write(ws.new_path(".gif"), lambda fh: images[0].save(
        fh, format="GIF", save_all=True, append_images=images[1:], duration=duration_ms, loop=0))
    return str(path)
