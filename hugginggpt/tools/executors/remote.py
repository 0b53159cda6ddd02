"""Run tasks on remote Hugging Face inference: Inference Providers, Inference Endpoints, or TGI/TEI servers.

Every request goes through ``huggingface_hub.InferenceClient`` so payloads, routing and tokens follow
the Hub's own client. This module adds what an agent needs around it: one handler per task turning
the call's arguments into a client call and its answer into a result envelope, generated media saved
atomically in the run's workspace, bounded retries for overloaded servers, and one-line typed errors.
"""

from __future__ import annotations

import base64
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from huggingface_hub import InferenceClient
from huggingface_hub.errors import HfHubHTTPError, InferenceTimeoutError, OfflineModeIsEnabled

from hugginggpt.errors import RemoteInferenceError, ResourceError, TaskError, error_line
from hugginggpt.tools.executors.base import Executor, TaskCall
from hugginggpt.tools.executors.hub_snapshots import hub_json, hub_offline
from hugginggpt.tools.resources import atomic_write, save_image
from hugginggpt.tools.resources.sniff import MEDIA_SUFFIXES, sniff_suffix
from hugginggpt.tools.resources.tables import read_table
from hugginggpt.tools.results import envelope

Handler = Callable[[InferenceClient, "str | None", TaskCall], dict[str, Any]]

#: Task name -> handler; filled by ``@_handles`` below. Tasks missing here are not offered remotely.
HANDLERS: dict[str, Handler] = {}

#: Tasks with a handler that ``InferenceClient`` serves on no provider (hf-inference included), so a
#: call could only fail; ``can_run`` says no and ``run`` says why before any request is made.
UNSERVED = {
    "tabular-regression": "no Inference Provider serves tabular-regression (huggingface_hub's InferenceClient "
                          "has it for none, hf-inference included): run it on a local model",
}

RETRY_STATUS = frozenset({429, 503})
MAX_BACKOFF_S = 10.0


def _handles(*tasks: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for task in tasks:
            HANDLERS[task] = handler
        return handler

    return register


class RemoteExecutor(Executor):
    """Runs task calls on remote inference through ``InferenceClient``.

    ``endpoint``: a URL of a dedicated Inference Endpoint or a self-hosted TGI/TEI server; it may hold a
    ``{model}`` placeholder (``http://host/models/{model}``) to serve many models from one server.
    Without it, ``provider`` picks Hugging Face Inference Providers (``"auto"``, ``"hf-inference"``...)
    and the call's model is a Hub id. ``token`` defaults to huggingface_hub's own lookup (``HF_TOKEN``,
    cached login). 429/503 answers and dropped connections are retried ``max_retries`` times with
    exponential backoff and jitter (``backoff`` seconds first, at most 10 s, ``Retry-After`` honoured).
    """

    name = "remote"

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        provider: str | None = None,
        token: str | None = None,
        timeout: float = 60,
        max_retries: int = 3,
        backoff: float = 0.5,
    ):
        if endpoint is not None and not endpoint.startswith(("http://", "https://")):
            raise ValueError(f"endpoint must be an http(s) URL, got {endpoint!r}")
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        self.provider = provider or (None if endpoint else "auto")
        self.token = token
        self.timeout = timeout
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff

    def __repr__(self) -> str:
        where = self.endpoint or f"provider={self.provider}"
        return f"RemoteExecutor({where})"

    def can_run(self, task: str, model: str | None) -> bool:
        """A task with a remote handler, on a Hub id or URL (a local folder cannot be served remotely)."""
        if task not in HANDLERS or task in UNSERVED:
            return False
        if model is None:  # a per-model endpoint template cannot serve "no model"
            if task in NEEDS_MODEL and not self.endpoint:  # providers would pick some non-ControlNet model
                return False
            return not (self.endpoint and "{model}" in self.endpoint)
        return model.startswith(("http://", "https://")) or not Path(model).is_dir()

    def why_not(self, task: str, model: str | None) -> str:
        """Why ``can_run`` is False ("" when it can run)."""
        if task not in HANDLERS:
            return f"the Inference API has no {task} task (it runs only on this machine)"
        if task in UNSERVED:
            return UNSERVED[task]
        if self.can_run(task, model):
            return ""
        if model is None and self.endpoint:
            return f"the endpoint {self.endpoint} needs a model id, and none was given"
        if model is None:
            return "Inference Providers need the model named (the catalog has none for it)"
        return f"{model} is a folder on this machine, which a remote server cannot read"

    def target(self, task: str, model: str | None) -> str | None:
        """What the client is given as model: a URL (endpoint, template, or the model itself) or a Hub id."""
        if model and model.startswith(("http://", "https://")):
            return model
        if self.endpoint and "{model}" in self.endpoint:
            if not model:
                raise RemoteInferenceError(task, f"the endpoint {self.endpoint} needs a model id, and none was given")
            return self.endpoint.replace("{model}", model)
        return self.endpoint or model

    def run(self, call: TaskCall) -> dict[str, Any]:
        task = call.task.name
        handler = HANDLERS.get(task)
        if handler is None:
            raise RemoteInferenceError(task, "remote inference has no handler for this task; run it locally")
        if task in UNSERVED:
            raise RemoteInferenceError(task, UNSERVED[task])
        target = self.target(task, call.model)
        for attempt in range(self.max_retries + 1):
            try:
                with self._client(target) as client:
                    return handler(client, target, call)
            except TaskError:
                raise
            except Exception as exc:  # noqa: BLE001 - every failure becomes one typed error below
                error, retry_after = self._describe(task, call.model, target, exc)
                if retry_after is None or attempt == self.max_retries:
                    raise error from None
            time.sleep(self._delay(attempt, retry_after))
        raise AssertionError("unreachable")  # pragma: no cover

    def _client(self, target: str | None) -> InferenceClient:
        """The client of one call. A server the user named by URL is asked even in huggingface_hub's
        offline mode (``HF_HUB_OFFLINE=1`` means "not the Hub", and that session refuses every URL)."""
        if target and target.startswith(("http://", "https://")) and hub_offline():
            return OwnServerClient(provider=self.provider, token=self.token, timeout=self.timeout)
        return InferenceClient(provider=self.provider, token=self.token, timeout=self.timeout)

    def _delay(self, attempt: int, retry_after: float) -> float:
        """Exponential backoff with jitter, or the server's Retry-After, never above MAX_BACKOFF_S."""
        if retry_after > 0:
            return min(retry_after, MAX_BACKOFF_S)
        return min(self.backoff * (2**attempt), MAX_BACKOFF_S) * (0.5 + random.random() / 2)

    def _describe(
        self, task: str, model: str | None, target: str | None, exc: Exception
    ) -> tuple[RemoteInferenceError, float | None]:
        """The typed error for ``exc`` and, when worth retrying, the Retry-After seconds (0: use backoff)."""
        where = target if target and target.startswith("http") else f"provider {self.provider!r}"
        for_model = f" for model {model}" if model else ""
        if isinstance(exc, HfHubHTTPError) and exc.response is not None:
            status = exc.response.status_code
            url = str(exc.response.request.url) if exc.response.request else where
            cause = f"HTTP {status} from {url}{for_model}: {_server_message(exc)}"
            if status == 401:
                cause += " (set HF_TOKEN or pass token=... with a valid Hugging Face token)"
            elif status == 404:
                cause += " (is the model id right, and is it served there?)"
            retry = _retry_after(exc.response) if status in RETRY_STATUS else None
            return RemoteInferenceError(task, cause, status), retry
        if isinstance(exc, OfflineModeIsEnabled):
            return RemoteInferenceError(task, f"{where} was not asked{for_model}: HF_HUB_OFFLINE=1 keeps huggingface_hub "
                                              "off Hugging Face's servers (unset it, or name your own server with "
                                              "--endpoint URL)"), None
        if isinstance(exc, (InferenceTimeoutError, httpx.TimeoutException, TimeoutError)):
            return RemoteInferenceError(task, f"no answer from {where}{for_model} within {self.timeout:g} s"), None
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, ConnectionResetError)):
            return RemoteInferenceError(task, f"connection to {where} closed before an answer{for_model}: {exc}"), 0.0
        if isinstance(exc, httpx.TransportError):
            return RemoteInferenceError(task, f"cannot reach {where}{for_model}: {exc}"), None
        return RemoteInferenceError(task, f"unusable answer or request for {where}{for_model}: {error_line(exc)}"), None


class OwnServerClient(InferenceClient):
    """An ``InferenceClient`` that posts through an httpx client of its own, for a server the user named
    (a TGI/TEI server, an Inference Endpoint) while huggingface_hub is offline: its shared session
    refuses every request then, a local server's too. Payloads and answers stay the client's own."""

    def __init__(self, **options: Any):
        super().__init__(**options)
        self._http = self.exit_stack.enter_context(httpx.Client(follow_redirects=True, timeout=None))

    def _inner_post(self, request_parameters: Any, *, stream: bool = False) -> Any:
        from huggingface_hub.utils import hf_raise_for_status

        headers = request_parameters.headers
        if request_parameters.task in ("text-to-image", "image-to-image") and "Accept" not in headers:
            headers["Accept"] = "image/png"  # as the client asks for images
        response = self.exit_stack.enter_context(self._http.stream(
            "POST", request_parameters.url, json=request_parameters.json, content=request_parameters.data,
            headers=headers, cookies=self.cookies, timeout=self.timeout))
        hf_raise_for_status(response)
        return response.iter_lines() if stream else response.read()


def _server_message(exc: HfHubHTTPError) -> str:
    message = getattr(exc, "server_message", None) or str(exc).splitlines()[0]
    return error_line(message, limit=300)


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(0.0, float(response.headers.get("retry-after", 0)))
    except ValueError:  # an HTTP date: fall back to our own backoff
        return 0.0


# ------------------------------------------------------------------------------------ helpers


def _arg(call: TaskCall, name: str, default: Any = None) -> Any:
    value = call.args.get(name)
    return default if value is None else value


def _required(call: TaskCall, name: str) -> Any:
    value = call.args.get(name)
    if value is None or value == "":
        raise ResourceError(call.task.name, f"missing argument {name!r}")
    return value


def _media(call: TaskCall, name: str) -> Path:
    """A media argument as a local file (the caller has resolved URLs and references already)."""
    path = Path(_required(call, name))
    if not path.is_file():
        raise ResourceError(call.task.name, f"{name} file not found: {path}")
    return path


def _int(call: TaskCall, name: str) -> int | None:
    value = call.args.get(name)
    return None if value is None else int(value)


def _plain(value: Any) -> Any:
    """Client output objects (dict-like dataclasses) as JSON data, floats rounded, NaN dropped."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if not _is_blob(v)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, float):
        return round(value, 6) if math.isfinite(value) else None
    return value


def _is_blob(value: Any) -> bool:
    return isinstance(value, bytes) or hasattr(value, "getpixel")


def _best_first(call: TaskCall, items: list[dict], key: str) -> dict:
    """The envelope of a best-first answer list: the top item's ``key`` as text, the whole list as data."""
    return envelope(text=items[0][key] if items else "", data=items, task=call.task.name)


def _labels_text(items: list[Any]) -> str:
    return ", ".join(f"{item['label']} ({float(item['score']):.2f})" for item in items if "label" in item)


def _save_bytes(call: TaskCall, content: bytes, kind: str) -> Path:
    """Write generated media bytes into the workspace; the extension comes from their magic bytes."""
    suffix = sniff_suffix(content[:64])
    if suffix not in MEDIA_SUFFIXES[kind]:
        raise RemoteInferenceError(call.task.name, f"the server answered with something that is not {kind} data")
    path = call.workspace.new_path(suffix)
    return atomic_write(path, lambda fh: fh.write(content))


def _save_image(call: TaskCall, image: Any) -> str:
    return save_image(image, call.workspace)


def _read_table(call: TaskCall) -> dict[str, list[str]]:
    """The ``table`` argument as columns of strings (a CSV file only from where the workspace allows)."""
    table = read_table(_required(call, "table"), call.workspace, call.task.name)
    return {column: ["" if cell is None else str(cell) for cell in cells] for column, cells in table.items()}


def _data_url(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".") or "png"
    mime = "jpeg" if suffix == "jpg" else suffix
    return f"data:image/{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


# ------------------------------------------------------------------------------- nlp handlers


@_handles("text-classification")
def _text_classification(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.text_classification(_required(call, "text"), model=model, top_k=_int(call, "top_k")))
    return _best_first(call, items, "label")


@_handles("token-classification")
def _token_classification(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.token_classification(_required(call, "text"), model=model))
    text = ", ".join(f"{e.get('word')}: {e.get('entity_group') or e.get('entity')}" for e in items)
    return envelope(text=text or "no entities", data=items, task=call.task.name)


@_handles("table-question-answering")
def _table_question_answering(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    answer = _plain(client.table_question_answering(_read_table(call), _required(call, "question"), model=model))
    return envelope(text=answer.get("answer", ""), data=answer, task=call.task.name)


@_handles("question-answering")
def _question_answering(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    answer = _plain(client.question_answering(
        question=_required(call, "question"), context=_required(call, "context"), model=model))
    first = answer[0] if isinstance(answer, list) else answer
    return envelope(text=first.get("answer", ""), data=answer, task=call.task.name)


@_handles("zero-shot-classification")
def _zero_shot_classification(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.zero_shot_classification(
        _required(call, "text"), list(_required(call, "candidate_labels")), model=model))
    return _best_first(call, items, "label")


@_handles("translation")
def _translation(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    src, tgt = _arg(call, "src_lang"), _arg(call, "tgt_lang")
    if (src is None) != (tgt is None):
        raise ResourceError(call.task.name, "give both src_lang and tgt_lang, or neither")
    out = client.translation(_required(call, "text"), model=model, src_lang=src, tgt_lang=tgt)
    return envelope(text=out.translation_text, task=call.task.name)


@_handles("summarization")
def _summarization(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    out = client.summarization(_required(call, "text"), model=model)
    return envelope(text=out.summary_text, task=call.task.name)


@_handles("feature-extraction")
def _feature_extraction(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    vectors = client.feature_extraction(_required(call, "text"), model=model)
    if getattr(vectors, "ndim", 0) >= 2 and vectors.shape[0] == 1:  # one text: the server's batch of one
        vectors = vectors[0]  # (1, width) -> one vector, as a pooling server (TEI) answers; (1, tokens, width) -> tokens
    return envelope(data=_plain(vectors), task=call.task.name)


@_handles("text-generation", "text2text-generation")
def _text_generation(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    text = client.text_generation(_required(call, "text"), model=model, max_new_tokens=_int(call, "max_new_tokens"))
    return envelope(text=text, task=call.task.name)


@_handles("fill-mask")
def _fill_mask(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    text = _required(call, "text")
    token = _mask_token(call.model) if call.model else None
    if token:  # the LLM writes [MASK] or <mask> whatever the model reads; the server refuses the other one
        text = call.task.find_arg("text").marked_with(text, token)
    items = _plain(client.fill_mask(text, model=model, top_k=_int(call, "top_k")))
    return _best_first(call, items, "sequence")


#: Hub model id -> its tokenizer's mask token, None when it could not be read (asked once a process: an
#: unreachable Hub costs huggingface_hub's retries, which every fill-mask call would pay again).
_MASK_TOKENS: dict[str, str | None] = {}


def _mask_token(model: str) -> str | None:
    """The mask token of the Hub model ``model``, from its ``tokenizer_config.json``; None for a URL (no
    Hub id), or when the file cannot be read (the text is then sent as written)."""
    if model not in _MASK_TOKENS:
        token = (hub_json(model, "tokenizer_config.json") or {}).get("mask_token")
        if isinstance(token, dict):  # {"content": "<mask>", "lstrip": true, ...}
            token = token.get("content")
        _MASK_TOKENS[model] = token if isinstance(token, str) and token else None
    return _MASK_TOKENS[model]


@_handles("sentence-similarity")
def _sentence_similarity(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    sentences = list(_required(call, "sentences"))
    scores = _plain(client.sentence_similarity(_required(call, "source_sentence"), sentences, model=model))
    data = [{"sentence": s, "score": score} for s, score in zip(sentences, scores)]
    text = ", ".join(f"{d['score']:.3f}" for d in data)
    return envelope(text=text, data=data, task=call.task.name)


@_handles("conversational")
def _conversational(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    messages = [{"role": "user", "content": _required(call, "text")}]
    out = client.chat_completion(messages, model=model, max_tokens=_int(call, "max_new_tokens"))
    return envelope(text=out.choices[0].message.content or "", task=call.task.name)


@_handles("image-text-to-text")
def _image_text_to_text(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    content = [{"type": "image_url", "image_url": {"url": _data_url(_media(call, "image"))}},
               {"type": "text", "text": _required(call, "text")}]
    out = client.chat_completion([{"role": "user", "content": content}], model=model,
                                 max_tokens=_int(call, "max_new_tokens"))
    return envelope(text=out.choices[0].message.content or "", task=call.task.name)


# ----------------------------------------------------------------------------- audio handlers


@_handles("text-to-speech", "text-to-audio")
def _text_to_speech(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    audio = client.text_to_speech(_required(call, "text"), model=model)
    return envelope(audio=_save_bytes(call, audio, "audio"), task=call.task.name)


@_handles("automatic-speech-recognition")
def _automatic_speech_recognition(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    out = client.automatic_speech_recognition(_media(call, "audio"), model=model)
    return envelope(text=out.text, task=call.task.name)


@_handles("audio-classification")
def _audio_classification(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.audio_classification(_media(call, "audio"), model=model, top_k=_int(call, "top_k")))
    return envelope(text=_labels_text(items[:3]), data=items, task=call.task.name)


@_handles("audio-to-audio")
def _audio_to_audio(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    outputs = client.audio_to_audio(_media(call, "audio"), model=model)
    if not outputs:
        raise RemoteInferenceError(call.task.name, "the server returned no audio")
    data = [{"label": item.label, "audio": str(_save_bytes(call, item.blob, "audio"))} for item in outputs]
    return envelope(audio=data[0]["audio"], data=data, task=call.task.name)


# ------------------------------------------------------------------------------ vision handlers


@_handles("image-classification")
def _image_classification(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.image_classification(_media(call, "image"), model=model, top_k=_int(call, "top_k")))
    return envelope(text=_labels_text(items[:3]), data=items, task=call.task.name)


@_handles("zero-shot-image-classification")
def _zero_shot_image_classification(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.zero_shot_image_classification(
        _media(call, "image"), list(_required(call, "candidate_labels")), model=model))
    items.sort(key=lambda item: -item["score"])
    return _best_first(call, items, "label")


@_handles("object-detection")
def _object_detection(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    image_path = _media(call, "image")
    items = _plain(client.object_detection(image_path, model=model, threshold=_arg(call, "threshold")))
    drawn = _save_image(call, _draw_boxes(image_path, items))
    text = f"{len(items)} objects: {_labels_text(items)}" if items else "no objects found"
    return envelope(text=text, image=drawn, data=items, task=call.task.name)


def _draw_boxes(image_path: Path, items: list[dict]) -> Any:
    from PIL import Image, ImageDraw

    with Image.open(image_path) as original:
        image = original.convert("RGB")
    draw = ImageDraw.Draw(image)
    for item in items:
        box = item.get("box") or {}
        corners = [box.get(k) for k in ("xmin", "ymin", "xmax", "ymax")]
        if None in corners:
            continue
        draw.rectangle(corners, outline=(255, 0, 0), width=max(1, image.width // 200))
        draw.text((corners[0] + 2, corners[1] + 2), str(item.get("label", "")), fill=(255, 0, 0))
    return image


@_handles("image-segmentation")
def _image_segmentation(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    image_path = _media(call, "image")
    segments = client.image_segmentation(image_path, model=model, subtask=_arg(call, "subtask"))
    overlay = _overlay_masks(image_path, [segment.mask for segment in segments])
    data = [{"label": s.label, "score": _plain(s.score)} for s in segments]
    text = f"{len(data)} segments: " + ", ".join(d["label"] for d in data) if data else "no segments"
    return envelope(text=text, image=_save_image(call, overlay), data=data, task=call.task.name)


def _overlay_masks(image_path: Path, masks: list[Any]) -> Any:
    """The input image with each mask tinted in its own colour (what HuggingGPT shows the user)."""
    from PIL import Image

    with Image.open(image_path) as original:
        image = original.convert("RGB")
    palette = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48), (145, 30, 180)]
    for index, mask in enumerate(masks):
        if mask is None:
            continue
        color = Image.new("RGB", image.size, palette[index % len(palette)])
        alpha = mask.convert("L").resize(image.size).point(lambda v: v // 2)
        image = Image.composite(color, image, alpha)
    return image


@_handles("text-to-image")
def _text_to_image(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    image = client.text_to_image(_required(call, "text"), negative_prompt=_arg(call, "negative_prompt"), model=model)
    return envelope(image=_save_image(call, image), task=call.task.name)


@_handles("image-to-text")
def _image_to_text(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    out = client.image_to_text(_media(call, "image"), model=model)
    return envelope(text=out.generated_text, task=call.task.name)


@_handles("image-to-image", "image-text-to-image")
def _image_to_image(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    image = client.image_to_image(_media(call, "image"), prompt=_arg(call, "prompt"), model=model)
    return envelope(image=_save_image(call, image), task=call.task.name)


#: Tasks that are not Hub pipeline tags (JARVIS's ControlNet names): a provider can only serve a named model.
NEEDS_MODEL = frozenset({"canny-text-to-image", "depth-text-to-image", "hed-text-to-image", "mlsd-text-to-image",
                         "normal-text-to-image", "openpose-text-to-image", "seg-text-to-image"})


@_handles(*NEEDS_MODEL)
def _controlnet_text_to_image(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    """A ControlNet served as image-to-image: the condition map as the image, the text as the prompt."""
    image = client.image_to_image(_media(call, "image"), prompt=_required(call, "text"), model=model)
    return envelope(image=_save_image(call, image), task=call.task.name)


@_handles("text-to-video")
def _text_to_video(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    video = client.text_to_video(_required(call, "text"), model=model)
    return envelope(video=_save_bytes(call, video, "video"), task=call.task.name)


@_handles("image-to-video")
def _image_to_video(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    video = client.image_to_video(_media(call, "image"), prompt=_arg(call, "prompt"), model=model)
    return envelope(video=_save_bytes(call, video, "video"), task=call.task.name)


# ------------------------------------------------------------------------- multimodal / tabular


@_handles("visual-question-answering")
def _visual_question_answering(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.visual_question_answering(_media(call, "image"), _required(call, "question"), model=model))
    return envelope(text=items[0].get("answer", "") if items else "", data=items, task=call.task.name)


@_handles("document-question-answering")
def _document_question_answering(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    items = _plain(client.document_question_answering(
        _media(call, "image"), _required(call, "question"), model=model))
    return envelope(text=items[0].get("answer", "") if items else "", data=items, task=call.task.name)


@_handles("tabular-classification")
def _tabular_classification(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    labels = _plain(client.tabular_classification(_read_table(call), model=model))
    return envelope(text=", ".join(map(str, labels)), data=labels, task=call.task.name)


@_handles("tabular-regression")
def _tabular_regression(client: InferenceClient, model: str | None, call: TaskCall) -> dict:
    values = _plain(client.tabular_regression(_read_table(call), model=model))
    return envelope(text=", ".join(f"{v:g}" for v in values), data=values, task=call.task.name)
