"""Issue 23 item 5: decoding an input costs at most the configured memory, whatever its header says.

Audio is bounded in frames x channels and downmixed block by block; video frames are bounded in size
(as images are) and in the pixels of all the sampled frames together. Memory is measured with
``tracemalloc``, which sees numpy's arrays, or read off the decoded frames.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from hugginggpt.errors import ResourceError

MiB = 1 << 20


def _silent_flac(path: Path, seconds: float, rate: int, channels: int, block_s: int = 1) -> Path:
    """A FLAC of silence written ``block_s`` seconds at a time (it compresses to almost nothing)."""
    import soundfile

    block = np.zeros((rate * block_s, channels), dtype=np.int16)
    with soundfile.SoundFile(str(path), "w", samplerate=rate, channels=channels, format="FLAC", subtype="PCM_16") as out:
        for _ in range(int(seconds) // block_s):
            out.write(block)
    return path


def _peak_bytes(fn, *args):
    tracemalloc.start()
    try:
        result = fn(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_many_channels_are_downmixed_as_they_are_decoded(tmp_path):
    """A small 8-channel 192 kHz FLAC decoded whole took 8 x 4 bytes per frame (758 MiB for 60 s);
    downmixed block by block it takes the mono signal's 4 bytes per frame."""
    from hugginggpt.tools.resources import load_audio

    path = _silent_flac(tmp_path / "wide.flac", 20, 192_000, 8)
    assert path.stat().st_size < 512 * 1024
    (samples, rate), peak = _peak_bytes(load_audio, path)
    assert rate == 192_000 and samples.shape == (20 * 192_000,) and samples.dtype == np.float32
    mono = samples.nbytes  # 14.6 MiB; decoded whole: 117 MiB before the mean
    assert peak < 2 * mono + 16 * MiB, f"peak {peak / MiB:.0f} MiB for a {mono / MiB:.0f} MiB signal"


def test_frames_times_channels_are_bounded_from_the_header(tmp_path, monkeypatch):
    from hugginggpt.tools.resources import load_audio
    from hugginggpt.tools.resources.media import DEFAULT_MAX_AUDIO_SAMPLES, MAX_AUDIO_SAMPLES_ENV, max_audio_samples

    assert max_audio_samples() == DEFAULT_MAX_AUDIO_SAMPLES == 64_000_000
    wide = _silent_flac(tmp_path / "wide.flac", 2, 48_000, 8)
    narrow = _silent_flac(tmp_path / "narrow.flac", 2, 48_000, 1)
    monkeypatch.setenv(MAX_AUDIO_SAMPLES_ENV, "500000")
    with pytest.raises(ResourceError, match=r"holds 768,000 samples \(8 channel\(s\) of 96,000 frames, 2 s\); "
                                            r"at most 500,000 \(set HUGGINGGPT_MAX_AUDIO_SAMPLES higher"):
        load_audio(wide)
    assert load_audio(narrow)[0].shape == (96_000,)
    for bad in ("nan", "inf", "-1"):
        monkeypatch.setenv(MAX_AUDIO_SAMPLES_ENV, bad)
        with pytest.raises(ResourceError, match="HUGGINGGPT_MAX_AUDIO_SAMPLES must be a positive number"):
            load_audio(narrow)


def test_the_default_refuses_12_minutes_of_48_khz_stereo_until_the_variable_is_raised(tmp_path, monkeypatch):
    """Issue 31 item 5: the default (64,000,000 samples) holds an hour of 16 kHz mono but not 700 s of
    48 kHz stereo (67,200,000): refused from the header, before decoding, with the variable named;
    raising the variable admits the file."""
    import time

    from hugginggpt.tools.resources import check_kind, load_audio
    from hugginggpt.tools.resources.media import MAX_AUDIO_SAMPLES_ENV

    path = _silent_flac(tmp_path / "talk.flac", 700, 48_000, 2, block_s=70)  # 126 KiB
    monkeypatch.delenv(MAX_AUDIO_SAMPLES_ENV, raising=False)
    refused = r"holds 67,200,000 samples \(2 channel\(s\) of 33,600,000 frames, 700 s\); at most 64,000,000 " \
              r"\(set HUGGINGGPT_MAX_AUDIO_SAMPLES higher to accept it\)"
    started = time.thread_time()
    for check in (lambda: check_kind(path, "audio"), lambda: load_audio(path, 16_000)):
        with pytest.raises(ResourceError, match=refused):
            check()
    assert time.thread_time() - started < 0.1  # the header only: decoding it takes ~0.6 s
    monkeypatch.setenv(MAX_AUDIO_SAMPLES_ENV, "67200000")
    assert check_kind(path, "audio") == path  # the header check load_audio makes first (decoding it: 0.6 s more)


def _animation(path: Path, frames: int, size: tuple[int, int]) -> Path:
    images = [Image.new("P", size, i % 2) for i in range(frames)]
    images[0].save(path, save_all=True, append_images=images[1:], duration=50)
    return path


def test_video_frames_are_scaled_to_a_pixel_budget_as_they_are_decoded(tmp_path, monkeypatch):
    """A 246 KiB GIF of 64 frames of 2000x2000 reached 1.1 GiB in ``read_frames``: every sampled frame
    was kept at full size. The frames together now hold at most ``HUGGINGGPT_MAX_VIDEO_PIXELS``."""
    from hugginggpt.tools.executors.local_tasks.video_frames import read_frames
    from hugginggpt.tools.resources.media import DEFAULT_MAX_VIDEO_PIXELS, MAX_VIDEO_PIXELS_ENV, max_video_pixels

    assert max_video_pixels() == DEFAULT_MAX_VIDEO_PIXELS
    path = _animation(tmp_path / "big.gif", 16, (2000, 1000))
    monkeypatch.setenv(MAX_VIDEO_PIXELS_ENV, str(4_000_000))
    frames = read_frames(path, 16)
    assert len(frames) == 16
    assert sum(f.width * f.height for f in frames) <= 4_000_000  # before: 16 x 2,000,000
    assert all(abs(f.width / f.height - 2) < 0.02 for f in frames)  # scaled, not cropped
    small = _animation(tmp_path / "small.gif", 4, (64, 32))
    assert [f.size for f in read_frames(small, 4)] == [(64, 32)] * 4  # small frames stay as they are


def test_video_frames_larger_than_an_image_may_be_are_refused(tmp_path, monkeypatch):
    from hugginggpt.tools.executors.local_tasks.video_frames import read_frames
    from hugginggpt.tools.resources.media import MAX_IMAGE_PIXELS_ENV

    path = _animation(tmp_path / "wide.gif", 2, (3000, 1000))
    monkeypatch.setenv(MAX_IMAGE_PIXELS_ENV, "1000000")
    with pytest.raises(ResourceError, match=r"3000x1000 frames .*at most 1,000,000"):
        read_frames(path, 2)


# ------------------------------------------------------------------ issue 31: CPU and memory of hostile media


def hostile_gif(width: int, height: int, frames: int) -> bytes:
    """A GIF built by hand: a ``width`` x ``height`` canvas and ``frames`` frames of one pixel, 23 bytes
    each (graphic control extension, image descriptor, 3 bytes of LZW data)."""
    import struct

    head = b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF0, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    loop = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    frame = b"\x21\xf9\x04\x00\x01\x00\x00\x00" + b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    return head + loop + frame * frames + b"\x3b"


@pytest.mark.parametrize(("size", "frames"), [(9000, 20), (1, 900_000)])
def test_a_gif_cannot_make_the_frame_reader_burn_cpu(tmp_path, size, frames):
    """Item 1: every frame was composed onto the whole canvas: 1x1 frames on a 9000x9000 canvas cost
    0.07-0.6 s of CPU each (20 frames: 12 s here), and a 20 MiB GIF holds 900,000 of them (counting
    them alone took 5 s). The work is now bounded by canvas pixels x frames, counted before decoding."""
    import time

    from hugginggpt.tools.executors.local_tasks.video_frames import read_frames

    path = tmp_path / "hostile.gif"
    path.write_bytes(hostile_gif(size, size, frames))
    assert path.stat().st_size < 21 * MiB
    started = time.thread_time()
    with pytest.raises(ResourceError, match=r"too large to decode: .*frames of .*at most 89,478,485 pixels"):
        read_frames(path, 8)
    assert time.thread_time() - started < 1.0


def test_a_gif_within_the_decoding_budget_is_read(tmp_path):
    from hugginggpt.tools.executors.local_tasks.video_frames import read_frames

    path = tmp_path / "fine.gif"
    path.write_bytes(hostile_gif(480, 270, 300))  # 300 frames of 130 kP: 39 MP of decoding
    frames = read_frames(path, 8)
    assert len(frames) == 8 and frames[0].size == (480, 270)


AUDIO_PROBE = """
import resource, sys, time
import numpy as np, soundfile, soxr
from hugginggpt.tools.resources import load_audio
path, seconds = sys.argv[1], int(sys.argv[2])
np.ones(seconds * 16000, np.float32)  # the result's memory, counted in the peak and first touched (slow in a VM) here
started = time.process_time()
with soundfile.SoundFile(path) as audio:  # decoding alone, into one buffer: what this libsndfile costs here
    rate, channels = audio.samplerate, audio.channels
    buffer = np.empty(((1 << 20) // channels, channels), np.float32)
    while len(audio.read(out=buffer)):
        pass
decode = time.process_time() - started
chunk = np.ascontiguousarray(buffer[:, 0])
started = time.process_time()
stream = soxr.ResampleStream(rate, 16000, 1, dtype="float32", quality="HQ")  # resampling alone, as many frames
for _ in range(seconds * rate // len(chunk)):
    stream.resample_chunk(chunk)
resampling = time.process_time() - started
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.process_time()
samples, rate = load_audio(path, 16000)
cpu = time.process_time() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(decode, resampling, cpu, peak * 1024, samples.size, rate)
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("rate", "channels"), [(96_000, 1), (48_000, 2)], ids=["96kHz-mono", "48kHz-stereo"])
def test_audio_at_the_sample_limit_costs_its_decoding_and_resampling(tmp_path, monkeypatch, rate, channels):
    """Item 5: an hour of silence at the former sample limit (345.6 M samples: 1.06 MiB of FLAC at 96 kHz
    mono, 0.64 MiB at 48 kHz stereo) peaked at 2.6 GiB resident and cost 19.7 s of CPU in
    ``load_audio(p, 16000)``: the whole signal was decoded, then resampled as float64. Decoded and
    resampled a block at a time, it takes the 16 kHz result's memory and the CPU of decoding
    (libsndfile) and resampling (soxr), each measured alone here, and little more (numpy's
    ``mean(axis=1)`` downmix made the stereo hour cost 2.2-4 times that). The hour still cost 4.2-5.2 s,
    so the limit is now 64 M samples (666 s of either here: a median 0.5-0.8 s of CPU on a 2-core AMD EPYC,
    docs/results/audio-limit-session16.md)."""
    import os
    import subprocess
    import sys

    from hugginggpt.tools.resources.media import DEFAULT_MAX_AUDIO_SAMPLES, MAX_AUDIO_SAMPLES_ENV

    monkeypatch.delenv(MAX_AUDIO_SAMPLES_ENV, raising=False)
    seconds = DEFAULT_MAX_AUDIO_SAMPLES // (rate * channels)  # 666
    path = _silent_flac(tmp_path / "limit.flac", seconds, rate, channels, block_s=37)  # 18 blocks
    assert path.stat().st_size < MiB
    root = Path(__file__).resolve().parents[2]
    probe = subprocess.run([sys.executable, "-c", AUDIO_PROBE, str(path), str(seconds)], capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, timeout=100)
    assert probe.returncode == 0, probe.stderr[-2000:]
    decode, resampling, cpu, peak, size, out_rate = probe.stdout.split()
    assert (int(size), int(out_rate)) == (seconds * 16_000, 16_000)
    result = seconds * 16_000 * 4  # 41 MiB; decoded whole, the input alone took 244 MiB as float32; blocks: 4 MiB
    assert int(peak) < 48 * MiB, f"{int(peak) / MiB:.0f} MiB on top of the {result / MiB:.0f} MiB result"
    alone = float(decode) + float(resampling)  # the rest: the result's memory, the downmix, the loop
    assert float(cpu) < 2 * alone, (f"{float(cpu):.1f} s of CPU; decoding alone {float(decode):.1f} s, "
                                    f"resampling alone {float(resampling):.1f} s")
