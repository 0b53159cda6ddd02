"""Workspace confinement, reference detection and media files (no network; see test_resources_http)."""

from __future__ import annotations

import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PIL import Image

from hugginggpt.errors import ResourceError, TaskError
from hugginggpt.tools.resources import (
    RESOURCE_REF,
    Workspace,
    atomic_write,
    load_audio,
    load_image,
    resample,
    save_audio,
    save_image,
    save_video,
)


@dataclass
class Scene:
    ws: Workspace
    root: Path  # the run folder
    user: Path  # a folder the user allowed
    secret: Path  # a file outside every allowed folder


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    root, user = tmp_path / "run", tmp_path / "user"
    user.mkdir()
    Image.new("RGB", (8, 8), "blue").save(user / "cat.png")
    secret = tmp_path / "secret.png"
    Image.new("RGB", (8, 8), "red").save(secret)  # a valid image: only confinement may stop it
    ws = Workspace(root, inputs=[user])
    (ws.root / "outputs").mkdir()
    return Scene(ws, ws.root, user, secret)


def _symlink_in_root(s: Scene) -> str:
    (s.root / "link.png").symlink_to(s.secret)
    return "link.png"


def _symlink_in_user_folder(s: Scene) -> str:
    (s.user / "evil.png").symlink_to(s.secret)
    return str(s.user / "evil.png")


def _dev_zero_with_dev_allowed(s: Scene) -> str:
    s.ws.allow("/dev")
    return "/dev/zero"


def _fifo(s: Scene) -> str:
    os.mkfifo(s.root / "pipe.png")
    return "pipe.png"


def _text_file(name: str):
    def make(s: Scene) -> str:
        (s.root / name).write_text("definitely not media")
        return name
    return make


def _sibling_of_allowed_file(s: Scene) -> str:
    lone = s.user.parent / "lone"
    lone.mkdir()
    Image.new("RGB", (4, 4)).save(lone / "allowed.png")
    Image.new("RGB", (4, 4)).save(lone / "sibling.png")
    s.ws.allow(lone / "allowed.png")
    return str(lone / "sibling.png")


# Every attack or malformed value an LLM (or a hostile page) could put in a media argument:
# (id, value or scene -> value, kind, cause the ResourceError must carry)
ATTACKS = [
    ("traversal", "../secret.png", "image", "path escapes the allowed folders"),
    ("traversal-inside-path", "outputs/../../secret.png", "image", "path escapes the allowed folders"),
    ("traversal-from-input-folder", lambda s: f"{s.user}/../secret.png", "image", "path escapes the allowed folders"),
    ("absolute-outside", lambda s: str(s.secret), "image", "path escapes the allowed folders"),
    ("absolute-missing-outside", "/nonexistent/x.png", "image", "path escapes the allowed folders"),
    ("symlink-out-of-root", _symlink_in_root, "image", "path escapes the allowed folders"),
    ("symlink-out-of-input", _symlink_in_user_folder, "image", "path escapes the allowed folders"),
    ("sibling-of-allowed-file", _sibling_of_allowed_file, "image", "path escapes the allowed folders"),
    ("file-url", lambda s: f"file://{s.secret}", "image", "unsupported URL scheme 'file'"),
    ("file-url-upper", lambda s: f"FILE://{s.secret}", "image", "unsupported URL scheme 'FILE'"),
    ("ftp-url", "ftp://127.0.0.1/cat.png", "image", "unsupported URL scheme 'ftp'"),
    ("data-url", "data:image/png;base64,iVBORw0KGgo=", "image", "unsupported URL scheme 'data'"),
    ("dev-zero", "/dev/zero", "image", "path escapes the allowed folders"),
    ("dev-zero-allowed-folder", _dev_zero_with_dev_allowed, "image", "not a regular file"),
    ("fifo", _fifo, "image", "not a regular file"),
    ("directory", "outputs", "image", "not a regular file"),
    ("unresolved-reference", "<resource>-1", "image", "unresolved reference"),
    ("unresolved-reference-variant", "<resource-2>", "audio", "unresolved reference"),
    ("reference-inside-path", "outputs/<resource>-3.png", "image", "unresolved reference"),
    ("missing-file", "nope.png", "image", "file not found"),
    # "~name" with no user "name": Path.expanduser raises RuntimeError; it is a file that is not there
    ("home-of-no-user", "~0", "image", "file not found"),
    ("file-in-home-of-no-user", "~no-such-user-hgpt/cat.png", "image", "file not found"),
    ("empty", "  ", "image", "empty file path or URL"),
    ("text-claimed-image", _text_file("notes.png"), "image", "not an image"),
    ("text-claimed-audio", _text_file("notes.wav"), "audio", "not an audio file"),
    ("text-claimed-m4a", _text_file("notes.m4a"), "audio", "not an audio file"),
    ("image-claimed-video", lambda s: str(s.user / "cat.png"), "video", "not a video"),
]


@pytest.mark.parametrize("value, kind, cause", [a[1:] for a in ATTACKS], ids=[a[0] for a in ATTACKS])
def test_resolve_rejects(scene: Scene, value, kind: str, cause: str):
    if callable(value):
        value = value(scene)
    with pytest.raises(ResourceError) as info:
        scene.ws.resolve(value, kind)
    assert cause in str(info.value)
    assert info.value.task is None and isinstance(info.value, TaskError)


def test_resolve_rejects_non_string(scene: Scene):
    with pytest.raises(ResourceError, match="expected a file path or URL, got int"):
        scene.ws.resolve(42, "image")


def test_resolve_accepts_allowed_input_by_absolute_and_relative_name(scene: Scene):
    cat = (scene.user / "cat.png").resolve()
    assert scene.ws.resolve(str(cat), "image") == cat
    assert scene.ws.resolve("cat.png", "image") == cat  # relative to an allowed folder
    assert scene.ws.resolve(cat, "image") == cat  # a Path works too


def test_resolve_accepts_workspace_files_and_symlinks_that_stay_inside(scene: Scene):
    written = Path(save_image(Image.new("RGB", (3, 3)), scene.ws))
    assert scene.ws.resolve(str(written), "image") == written
    assert scene.ws.resolve(f"outputs/{written.name}", "image") == written
    (scene.root / "alias.png").symlink_to(written)
    assert scene.ws.resolve("alias.png", "image") == written


def test_allowed_single_file_and_relative_name(tmp_path: Path):
    photo = tmp_path / "photo.jpg"
    Image.new("RGB", (5, 5)).save(photo)
    ws = Workspace(tmp_path / "run", inputs=[str(photo)])
    assert ws.inputs == (photo.resolve(),)
    assert ws.resolve("photo.jpg", "image") == photo.resolve()


def test_allow_rejects_missing_input(tmp_path: Path):
    with pytest.raises(ResourceError, match="file not found"):
        Workspace(tmp_path / "run").allow(tmp_path / "missing.png")


def test_kind_none_and_text_skip_content_check(scene: Scene):
    (scene.root / "notes.txt").write_text("hello")
    assert scene.ws.resolve("notes.txt", None).read_text() == "hello"
    assert scene.ws.resolve("notes.txt", "text").name == "notes.txt"


def test_audio_extension_fallback_needs_container_magic(scene: Scene):
    # soundfile cannot decode m4a; a file with an MP4 'ftyp M4A' header is still accepted as audio
    (scene.root / "voice.m4a").write_bytes(b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00" + b"\x00" * 64)
    assert scene.ws.resolve("voice.m4a", "audio").name == "voice.m4a"


def test_default_root_uses_home_and_is_created_lazily(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("HUGGINGGPT_HOME", str(tmp_path / "home"))
    ws = Workspace()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{8}", ws.run_id)
    assert not (tmp_path / "home").exists()
    assert ws.root == (tmp_path / "home" / ws.run_id).resolve() and ws.root.is_dir()
    assert Workspace().run_id != ws.run_id
    assert Workspace(tmp_path / "named").run_id == "named"


def test_new_path_names_are_unique_under_concurrency(tmp_path: Path):
    ws = Workspace(tmp_path / "run")
    with ThreadPoolExecutor(max_workers=8) as pool:
        paths = list(pool.map(lambda i: ws.new_path(["image", "audio", "video", ".jpg"][i % 4]), range(800)))
    assert len(set(paths)) == 800
    assert {p.parent for p in paths} == {ws.root / "outputs"}
    assert {p.suffix for p in paths} == {".png", ".wav", ".mp4", ".jpg"}
    assert all(re.fullmatch(r"[0-9a-f]{32}\.\w+", p.name) for p in paths)


@pytest.mark.parametrize("bad", ["../evil.png", "evil", ".p/ng", "", ".toolongextension"])
def test_new_path_rejects_anything_but_kinds_and_extensions(tmp_path: Path, bad: str):
    with pytest.raises(ValueError):
        Workspace(tmp_path / "run").new_path(bad)


@pytest.mark.parametrize("value, ref_id", [
    ("<resource>-1", 1), (" <resource>-12 ", 12), ("<Resource>-3", 3), ("<resource-4>", 4),
    ("<resource_5>", 5), ("<resource>6", 6),
    ("resource-1", None), ("<resource>", None), ("$1", None), ("<resource>-1 and more", None), (7, None),
])
def test_resource_reference_forms(value, ref_id):
    match = RESOURCE_REF.fullmatch(value.strip()) if isinstance(value, str) else None
    assert (int(match["id"]) if match else None) == ref_id
    if ref_id is not None:
        assert RESOURCE_REF.search(f"see {value.strip()}, then")["id"] == str(ref_id)


def test_image_round_trip_is_rgb(tmp_path: Path):
    ws = Workspace(tmp_path / "run")
    rgba = Image.new("RGBA", (6, 4), (10, 20, 30, 128))
    path = save_image(rgba, ws)
    assert Path(path).is_absolute() and Path(path).parent == ws.root / "outputs"
    loaded = load_image(path)
    assert loaded.mode == "RGB" and loaded.size == (6, 4) and loaded.getpixel((0, 0)) == (10, 20, 30)
    from_array = load_image(save_image(np.full((2, 3), 0.5, dtype=np.float32), ws))
    assert from_array.size == (3, 2) and from_array.getpixel((0, 0)) == (128, 128, 128)


def test_load_image_errors_are_typed(tmp_path: Path):
    (tmp_path / "x.png").write_text("text")
    with pytest.raises(ResourceError, match="not an image"):
        load_image(tmp_path / "x.png")
    with pytest.raises(ResourceError, match="file not found"):
        load_image(tmp_path / "missing.png")


def _sine(rate: int, seconds: float = 0.5, freq: float = 220.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_audio_round_trip_mono_from_channels_first(tmp_path: Path):
    ws = Workspace(tmp_path / "run")
    wave = _sine(16000)
    stereo_channels_first = np.stack([wave, wave])  # (2, samples), as models return it
    path = save_audio(stereo_channels_first, 16000, ws)
    assert sf.info(path).channels == 2 and sf.info(path).samplerate == 16000
    data, rate = load_audio(path)
    assert rate == 16000 and data.dtype == np.float32 and data.ndim == 1
    np.testing.assert_allclose(data, wave, atol=1e-6)


@pytest.mark.parametrize("channels", [3, 20])  # channel adds up to 16 channels, numpy's mean above
def test_channels_are_averaged_across_blocks(tmp_path: Path, monkeypatch, channels: int):
    from hugginggpt.tools.resources import media

    monkeypatch.setattr(media, "AUDIO_BLOCK_SAMPLES", 1000)  # several blocks, the last one short
    signal = np.random.default_rng(0).uniform(-0.5, 0.5, (2_500, channels)).astype(np.float32)
    path = tmp_path / "wide.wav"
    sf.write(path, signal, 8000, subtype="FLOAT")
    data, rate = load_audio(path)
    assert rate == 8000 and data.dtype == np.float32
    np.testing.assert_allclose(data, signal.mean(axis=1), atol=1e-6)


@pytest.mark.parametrize("without_scipy", [False, True], ids=["scipy", "numpy-fallback"])
def test_resampling_keeps_the_signal(monkeypatch, tmp_path: Path, without_scipy: bool):
    if without_scipy:
        monkeypatch.setitem(sys.modules, "scipy.signal", None)  # import now raises ImportError
    ws = Workspace(tmp_path / "run")
    path = save_audio(_sine(16000), 16000, ws)
    data, rate = load_audio(path, sampling_rate=8000)
    assert rate == 8000 and len(data) == 4000
    np.testing.assert_allclose(data[100:-100], _sine(8000)[100:-100], atol=0.02)
    assert resample(_sine(8000), 8000, 8000).shape == (4000,)


def test_video_is_an_animated_gif(tmp_path: Path):
    ws = Workspace(tmp_path / "run")
    frames = [np.full((8, 10, 3), v, dtype=np.uint8) for v in (0, 120, 255)]
    path = save_video(frames, fps=5, ws=ws)
    with Image.open(path) as gif:
        assert gif.format == "GIF" and gif.n_frames == 3 and gif.size == (10, 8)
        assert gif.info["duration"] == 200
    assert ws.resolve(path, "video") == Path(path)


def test_failed_writes_leave_no_file(tmp_path: Path):
    ws = Workspace(tmp_path / "run")
    target = ws.new_path("image")

    def half_then_fail(fh):
        fh.write(b"\x89PNG partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, half_then_fail)
    with pytest.raises(ResourceError, match="invalid sampling rate"):
        save_audio(np.zeros(10), 0, ws)
    with pytest.raises(ResourceError, match="at least one frame"):
        save_video([], 4, ws)
    assert list((ws.root / "outputs").iterdir()) == []


def test_downloads_are_limited_to_public_addresses_unless_allowed(tmp_path, monkeypatch):
    """The policy a workspace hands to downloads: argument first, then the environment, else public only."""
    from hugginggpt.tools.resources import ALLOW_PRIVATE_ENV, allow_any, public_only

    monkeypatch.delenv(ALLOW_PRIVATE_ENV, raising=False)
    assert Workspace(tmp_path / "a").address_policy is public_only
    assert Workspace(tmp_path / "b", allow_private_urls=True).address_policy is allow_any
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, "true")
    assert Workspace(tmp_path / "c").address_policy is allow_any
    assert Workspace(tmp_path / "d", allow_private_urls=False).address_policy is public_only

    def custom(address, port):
        return None if port == 8080 else "not port 8080"

    assert Workspace(tmp_path / "e", allow_private_urls=False, address_policy=custom).address_policy is custom


def test_the_kind_of_file_a_name_names():
    from hugginggpt.server.stages import media_kind
    from hugginggpt.tools.resources.sniff import MEDIA_SUFFIXES, file_kind
    from hugginggpt.tools.table import MEDIA_KINDS

    assert tuple(MEDIA_SUFFIXES) == MEDIA_KINDS
    names = {"cat.PNG": "image", "/runs/a/outputs/3f.wav": "audio", "C:\\clips\\v.mp4": "video",
             "loop.gif": "image", "scores.csv": "data", "notes.txt": "data", "README": None, ".png": None,
             "archive.tar.gz": None, "3.14": None}
    assert {name: file_kind(name) for name in names} == names
    assert [media_kind(n) for n in ("a.gif", "b.webm", "c.flac", "d.csv")] == ["image", "video", "audio", "file"]
