"""A local stand-in for Hugging Face inference and the Hub's model listing, on 127.0.0.1.

It speaks the wire format of the Inference API (what ``huggingface_hub.InferenceClient`` sends and
parses) for a set of tasks, computing small but real answers from the inputs (the dominant colour of
an image, the pitch of a tone, a bag-of-letters embedding...). Routes:

- ``POST /<task>``: a dedicated endpoint serving that task (``endpoint=server.url + "/summarization"``);
- ``POST /models/<id>`` and ``/<provider>/models/<id>[/pipeline/<task>]``: a model by Hub id, its task
  taken from ``server.hub_models``;
- ``.../v1/chat/completions``: OpenAI-style chat (TGI);
- ``GET /api/models`` (filter ``pipeline_tag``, ``sort=downloads``, ``limit``), ``GET /api/models/<id>``.

A fill-mask model answers as the Inference API does: a 400 when the text lacks its own mask token
(``mask_token`` in ``hub_models``, ``[MASK]`` by default).

Faults are scripted per request with ``server.script(...)``: an HTTP status (answered with a JSON
error), ``"close"`` (drop the connection), ``"garbage"`` (200 with a non-JSON body), ``"slow"``
(answer after ``server.slow_seconds``). ``server.token`` set: requests without that bearer get 401.
"""

from __future__ import annotations

import base64
import io
import json
import math
import struct
import threading
import time
import wave
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np
from PIL import Image

from tests.http_servers import LocalServer

#: Hub listing served on /api/models: id -> (pipeline_tag, downloads, likes, tags).
DEFAULT_HUB_MODELS: dict[str, dict[str, Any]] = {
    "acme/sentiment-small": {"pipeline_tag": "text-classification", "downloads": 1200, "likes": 90},
    "acme/sentiment-large": {"pipeline_tag": "text-classification", "downloads": 98000, "likes": 3},
    "acme/summarizer": {"pipeline_tag": "summarization", "downloads": 5000, "likes": 10},
    "acme/vit-colors": {"pipeline_tag": "image-classification", "downloads": 7000, "likes": 70},
    "acme/detector": {"pipeline_tag": "object-detection", "downloads": 4000, "likes": 40},
    "acme/whisper-tones": {"pipeline_tag": "automatic-speech-recognition", "downloads": 800, "likes": 8},
    "acme/painter": {"pipeline_tag": "text-to-image", "downloads": 3000, "likes": 300},
    "acme/speaker": {"pipeline_tag": "text-to-speech", "downloads": 600, "likes": 6},
    "acme/letters-embedder": {"pipeline_tag": "feature-extraction", "downloads": 900, "likes": 9},
    "acme/roberta-masked": {"pipeline_tag": "fill-mask", "downloads": 500, "likes": 5, "mask_token": "<mask>"},
    "acme/bert-masked": {"pipeline_tag": "fill-mask", "downloads": 400, "likes": 4},
}

COLORS = {"red": (220, 20, 20), "green": (20, 200, 20), "blue": (20, 20, 220)}


class InferenceServer(LocalServer):
    """Run with ``with InferenceServer() as server:``; ``server.url`` is its base URL."""

    def __init__(self, hub_models: dict[str, dict[str, Any]] | None = None):
        self.hub_models = dict(DEFAULT_HUB_MODELS if hub_models is None else hub_models)
        self.token: str | None = None
        self.slow_seconds = 2.0
        self.requests: list[dict[str, Any]] = []
        self._faults: list[Any] = []
        self._lock = threading.Lock()
        super().__init__(_make_handler)

    def script(self, *faults: Any) -> None:
        """Answer the next requests with these faults, in order (then normally)."""
        with self._lock:
            self._faults.extend(faults)

    def next_fault(self) -> Any:
        with self._lock:
            return self._faults.pop(0) if self._faults else None


def _make_handler(server: InferenceServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            parsed = urlparse(self.path)
            server.requests.append({"method": "GET", "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
            if parsed.path == "/api/models":
                query = parse_qs(parsed.query)
                self._json(200, _list_models(server.hub_models, query))
            elif parsed.path.startswith("/api/models/"):
                model_id = parsed.path.removeprefix("/api/models/")
                info = server.hub_models.get(model_id)
                if info is None:
                    self._json(404, {"error": f"Repository {model_id} not found"})
                else:
                    self._json(200, {"id": model_id, "modelId": model_id, "tags": [], **info})
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            server.requests.append({"method": "POST", "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            fault = server.next_fault()
            if fault == "close":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if fault == "slow":
                time.sleep(server.slow_seconds)
            if isinstance(fault, int):
                headers = {"Retry-After": "0"} if fault in (429, 503) else {}
                return self._json(fault, {"error": f"scripted failure {fault}"}, headers)
            if fault == "garbage":
                return self._send(200, b"<html>oops</html>", "text/html")
            if server.token and self.headers.get("Authorization") != f"Bearer {server.token}":
                return self._json(401, {"error": "Invalid credentials in Authorization header"})
            task = _route_task(server, urlparse(self.path).path)
            if task is None:
                return self._json(404, {"error": f"Model not found for {self.path}"})
            if task == "fill-mask":  # the answer depends on the model's own mask token
                model_id = urlparse(self.path).path.split("/models/", 1)[-1]
                token = (server.hub_models.get(model_id) or {}).get("mask_token", "[MASK]")
                status, value = _fill_mask(json.loads(body)["inputs"], token)
                return self._json(status, value)
            try:
                status, payload, content_type = _answer(task, body, self.headers.get("Content-Type", ""))
            except Exception as exc:  # a bad request from the client under test
                return self._json(400, {"error": f"{type(exc).__name__}: {exc}"})
            self._send(status, payload, content_type)

        def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(value).encode(), "application/json", headers)

        def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. its timeout)
                self.close_connection = True

    return Handler


def _list_models(hub_models: dict[str, dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
    tag = (query.get("pipeline_tag") or [None])[0]
    rows = [{"id": mid, "modelId": mid, "tags": [info["pipeline_tag"]], **info}
            for mid, info in hub_models.items() if tag in (None, info["pipeline_tag"])]
    if (query.get("sort") or [""])[0] == "downloads":
        rows.sort(key=lambda row: -row.get("downloads", 0))
    limit = int((query.get("limit") or [len(rows)])[0])
    return rows[:limit]


def _route_task(server: InferenceServer, path: str) -> str | None:
    if path.endswith("/chat/completions"):
        return "conversational"
    if "/pipeline/" in path:
        return path.rsplit("/pipeline/", 1)[1]
    if "/models/" in path:
        model_id = path.split("/models/", 1)[1]
        return (server.hub_models.get(model_id) or {}).get("pipeline_tag")
    task = path.strip("/")
    return task if task in ANSWERS else None


# ------------------------------------------------------------------------------------ answers


def _inputs(body: bytes, content_type: str) -> tuple[Any, dict[str, Any]]:
    """(inputs, parameters) of a request: JSON ``{"inputs", "parameters"}`` or raw media bytes."""
    if content_type.startswith("application/json"):
        payload = json.loads(body)
        return payload.get("inputs"), payload.get("parameters") or {}
    return body, {}


def _media_bytes(inputs: Any) -> bytes:
    return inputs if isinstance(inputs, bytes) else base64.b64decode(inputs)


def _dominant_color(image: Image.Image) -> str:
    r, g, b = (float(np.asarray(image.convert("RGB"))[..., c].mean()) for c in range(3))
    return max((("red", r), ("green", g), ("blue", b)), key=lambda kv: kv[1])[0]


def _text_classification(inputs: Any, params: dict) -> list:
    positive = sum(word in inputs.lower() for word in ("good", "love", "great"))
    score = 0.9 if positive else 0.2
    labels = [{"label": "POSITIVE", "score": score}, {"label": "NEGATIVE", "score": 1 - score}]
    labels.sort(key=lambda item: -item["score"])
    return [labels[: params.get("top_k") or 1]]  # one list per input, as the Inference API answers


def _summarization(inputs: Any, params: dict) -> list:
    return [{"summary_text": inputs.split(". ")[0].rstrip(".") + "."}]


def _image_classification(inputs: Any, params: dict) -> list:
    image = Image.open(io.BytesIO(_media_bytes(inputs)))
    top = _dominant_color(image)
    rest = [c for c in COLORS if c != top]
    return [{"label": top, "score": 0.8}] + [{"label": c, "score": 0.1} for c in rest]


def _object_detection(inputs: Any, params: dict) -> list:
    """One box around the non-white pixels."""
    pixels = np.asarray(Image.open(io.BytesIO(_media_bytes(inputs))).convert("L"))
    ys, xs = np.nonzero(pixels < 250)
    if len(xs) == 0:
        return []
    box = {"xmin": int(xs.min()), "ymin": int(ys.min()), "xmax": int(xs.max()), "ymax": int(ys.max())}
    return [{"label": "blob", "score": 0.97, "box": box}]


def _speech_recognition(inputs: Any, params: dict) -> dict:
    """'a tone of N hertz': the strongest frequency of the WAV."""
    with wave.open(io.BytesIO(_media_bytes(inputs))) as wav:
        rate = wav.getframerate()
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(float)
    peak = int(np.argmax(np.abs(np.fft.rfft(samples))) * rate / len(samples))
    return {"text": f"a tone of {round(peak, -1)} hertz"}


def _text_to_image(inputs: Any, params: dict) -> bytes:
    color = next((rgb for name, rgb in COLORS.items() if name in inputs.lower()), (128, 128, 128))
    image = Image.new("RGB", (int(params.get("width") or 32), int(params.get("height") or 24)), color)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _image_to_text(inputs: Any, params: dict) -> list:
    """'a WxH red picture': the image's size and dominant colour (grey when no channel stands out)."""
    image = Image.open(io.BytesIO(_media_bytes(inputs))).convert("RGB")
    spread = np.ptp(np.asarray(image).reshape(-1, 3).mean(axis=0))
    color = "grey" if spread < 16 else _dominant_color(image)
    return [{"generated_text": f"a {image.width}x{image.height} {color} picture"}]


def _image_to_image(inputs: Any, params: dict) -> bytes:
    """The input image's size, filled with the colour the prompt names (grey when it names none)."""
    size = Image.open(io.BytesIO(_media_bytes(inputs))).size
    prompt = str(params.get("prompt") or "").lower()
    color = next((rgb for name, rgb in COLORS.items() if name in prompt), (128, 128, 128))
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def _text_to_speech(inputs: Any, params: dict) -> bytes:
    """A 440 Hz tone lasting 0.05 s per word (16 kHz mono WAV)."""
    rate, seconds = 16000, 0.05 * len(inputs.split())
    frames = b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / rate)))
                      for i in range(int(rate * seconds)))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(frames)
    return buffer.getvalue()


def _feature_extraction(inputs: Any, params: dict) -> list:
    """A normalised bag-of-letters vector (26 dimensions)."""
    counts = [inputs.lower().count(chr(ord("a") + i)) for i in range(26)]
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    return [c / norm for c in counts]


def _tei_embed(inputs: Any, params: dict) -> list:
    """As a TEI server answers a text at its root: a batch of one pooled vector."""
    return [_feature_extraction(inputs, params)]


def _chat(body: bytes) -> dict:
    payload = json.loads(body)
    last = payload["messages"][-1]["content"]
    return {
        "id": "chat-1", "object": "chat.completion", "created": 0, "model": payload.get("model", "dummy"),
        "system_fingerprint": "", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": f"You said: {last}"}}],
    }


ANSWERS = {
    "text-classification": _text_classification,
    "summarization": _summarization,
    "image-classification": _image_classification,
    "object-detection": _object_detection,
    "automatic-speech-recognition": _speech_recognition,
    "text-to-image": _text_to_image,
    "image-to-image": _image_to_image,
    "image-to-text": _image_to_text,
    "text-to-speech": _text_to_speech,
    "feature-extraction": _feature_extraction,
    "tei-embed": _tei_embed,  # at /tei-embed: a text embeddings server (TEI) at its root
}
MEDIA_ANSWERS = {"text-to-image": "image/png", "image-to-image": "image/png", "text-to-speech": "audio/wav"}


def _fill_mask(text: str, token: str) -> tuple[int, Any]:
    """What the Inference API answers a fill-mask model whose mask token is ``token``: a 400 without it in
    the text, else the candidates ("cat" first)."""
    if token not in text:
        return 400, {"error": f"No mask_token ({token}) found on the input"}
    return 200, [{"score": score, "token": i, "token_str": word, "sequence": text.replace(token, word, 1)}
                 for i, (word, score) in enumerate([("cat", 0.7), ("dog", 0.2)])]


def _answer(task: str, body: bytes, content_type: str) -> tuple[int, bytes, str]:
    if task == "conversational":
        return 200, json.dumps(_chat(body)).encode(), "application/json"
    if task not in ANSWERS:
        return 400, json.dumps({"error": f"task {task} is not served here"}).encode(), "application/json"
    if task in ("feature-extraction", "tei-embed"):  # parameters sit at the root for this task
        inputs, params = json.loads(body)["inputs"], {}
    else:
        inputs, params = _inputs(body, content_type)
    result = ANSWERS[task](inputs, params)
    if task in MEDIA_ANSWERS:
        return 200, result, MEDIA_ANSWERS[task]
    return 200, json.dumps(result).encode(), "application/json"
