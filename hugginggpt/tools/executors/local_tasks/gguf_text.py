"""Text tasks on a local GGUF chat model through llama.cpp.

Many Hub text-generation repos are GGUF, users often have such files already, and transformers 5
dropped the summarization, translation and text2text pipelines: on a CPU an instruction-tuned GGUF
is the fast path for text-generation, conversational, summarization, translation,
text2text-generation and question-answering. Each task is one chat prompt whose instructions
come first (the prompt state cache then keeps them evaluated) and the call's text last.
zero-shot-classification asks which label fits and scores every label by the probability that the
model's reply is that label (``LlamaCppChatModel.answer_scores``), normalised over the labels.

A GGUF model is named as ``gguf:PATH``, as a path ending in ``.gguf``, as a catalog id whose
registered path is a GGUF file (``--local-model summarization=gguf:PATH``, the controller's own
file), or as a catalog card of a Hub GGUF repo with its ``file`` (found in the Hugging Face cache,
or downloaded when the executor may download). The file is run by ``LlamaCppChatModel``: a model
already loaded (the controller) is used as it is, with its lock; no second copy is loaded.

``with_gguf(handlers)`` wraps the transformers handlers of these tasks so that a GGUF file goes
here and a model folder to its usual handler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hugginggpt.errors import ModelLoadError, TaskError
from hugginggpt.paths import expand_home
from hugginggpt.tools.executors.local_tasks.common import (
    LoadOptions,
    TaskHandler,
    arg,
    as_list,
    required,
    task_name,
    top_label_text,
)

TASKS = ("text-generation", "conversational", "summarization", "translation", "text2text-generation",
         "question-answering", "zero-shot-classification")
PREFIX = "gguf:"
#: Context size of a GGUF loaded for tasks alone (one already loaded keeps its own).
TASK_N_CTX = 4096
GGUF_MAGIC = b"GGUF"

LANGUAGES = {"en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
             "nl": "Dutch", "ro": "Romanian", "ru": "Russian", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
             "ar": "Arabic", "hi": "Hindi", "tr": "Turkish", "pl": "Polish", "sv": "Swedish", "uk": "Ukrainian"}
# NLLB/FLORES codes (eng_Latn) and mBART codes (fr_XX) start with a three- or two-letter code.
_THREE_LETTER = {"eng": "en", "fra": "fr", "deu": "de", "spa": "es", "ita": "it", "por": "pt", "nld": "nl",
                 "ron": "ro", "rus": "ru", "zho": "zh", "jpn": "ja", "kor": "ko", "arb": "ar", "hin": "hi"}

SYSTEM = {
    "summarization": "You summarize texts. Reply with a short summary of the user's text (one to three "
                     "sentences, in the text's language) and nothing else.",
    "translation": "You translate texts. Reply with the translation of the text the user gives, into the "
                   "language they name, and nothing else: no notes, no quotes, no original text.",
    "question-answering": "You answer questions from a context. Reply with the shortest answer that the "
                          "context supports, in its own words where possible, and nothing else. If the "
                          "context does not answer the question, reply exactly: unanswerable",
    "zero-shot-classification": "You classify texts. Reply with the one label from the user's list that fits "
                                "their text best, written exactly as in the list, and nothing else.",
}
DEFAULT_MAX_TOKENS = {"summarization": 160, "translation": 512, "question-answering": 64}


# ------------------------------------------------------------------------------ naming GGUF models

def gguf_path(ref: str | Path | None) -> Path | None:
    """The file a ``gguf:PATH`` or ``*.gguf`` reference names (whether or not it exists), else None."""
    if ref is None:
        return None
    text = str(ref).strip()
    if text.startswith(PREFIX):
        return expand_home(text[len(PREFIX):])
    return expand_home(text) if text.lower().endswith(".gguf") else None


def is_gguf_file(path: str | Path) -> bool:
    """Whether ``path`` is a file that starts with the GGUF magic bytes."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == GGUF_MAGIC
    except OSError:
        return False


def hub_card(catalog: Any, task: str, model_id: str) -> Any:
    """The catalog card of ``model_id`` for ``task`` when it is a Hub GGUF repo with a ``file``."""
    if catalog is None:
        return None
    try:
        cards = catalog.candidates(task, k=1000)
    except Exception:  # noqa: BLE001 - an unknown task has no GGUF card
        return None
    return next((card for card in cards if card.id == model_id and getattr(card, "file", None)), None)


def model_file(task: str, model: str | None, catalog: Any = None) -> Path | None:
    """The local GGUF file that runs ``task`` for ``model``, or None (not a GGUF model, or not on disk)."""
    if task not in TASKS or not model:
        return None
    path = gguf_path(model)
    if path is not None:
        return path.resolve() if is_gguf_file(path) else None
    mapped = catalog.local_path(model) if catalog is not None else None
    if mapped is not None and Path(mapped).is_file() and is_gguf_file(mapped):
        return Path(mapped)
    card = hub_card(catalog, task, model)
    if card is None:
        return None
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(card.id, card.file)
    return Path(cached) if isinstance(cached, str) else None


def download_file(task: str, model: str, catalog: Any = None) -> Path | None:
    """Fetch the GGUF file of a Hub GGUF card into the HF cache (None: ``model`` is no such card)."""
    card = hub_card(catalog, task, model) if task in TASKS else None
    if card is None:
        return None
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(card.id, card.file))


def register_controller(catalog: Any, model_path: str | Path) -> list[Any]:
    """Offer the controller's GGUF file for the GGUF text tasks, as a local model of last resort.

    It gets no downloads, so local models the catalog ranks higher run first; with nothing else on
    disk, the tasks run on the controller (the same loaded ``Llama``).
    """
    cards = []
    for task in TASKS:
        try:
            cards.append(catalog.register_local(f"{PREFIX}{model_path}", task=task))
        except Exception:  # noqa: BLE001 - a task the table does not know (an old catalog): skip it
            continue
    return cards


# ------------------------------------------------------------------------------ running a task

@dataclass
class GGUFTextModel:
    """A loaded GGUF file (``chat``: a ``LlamaCppChatModel`` sharing any controller's ``Llama``)."""

    path: Path
    chat: Any


def load(path: Path, options: LoadOptions | None = None) -> GGUFTextModel:
    from hugginggpt.errors import LLMError
    from hugginggpt.llm.llamacpp import LlamaCppChatModel, llama_cpp_available, shared_llama

    if not llama_cpp_available():
        raise ModelLoadError(None, "llama-cpp-python is not installed; GGUF models need the 'gguf' extra: "
                                     "pip install 'hugginggpt[gguf]'")
    if not is_gguf_file(path):
        raise ModelLoadError(None, f"{path} is not a GGUF file")
    loaded = shared_llama(path)
    n_ctx = loaded[2] if loaded is not None else TASK_N_CTX
    try:
        # no limit of its own: each call says its task's max_new_tokens
        chat = LlamaCppChatModel(model_path=str(path), n_ctx=n_ctx, temperature=0.0, max_tokens=None).load()
    except LLMError as exc:
        raise ModelLoadError(None, str(exc)) from None
    return GGUFTextModel(Path(path), chat)


def language_name(code: str | None) -> str | None:
    """``fr``, ``fr_XX``, ``fra_Latn`` or ``French`` -> ``French`` (an unknown code is kept)."""
    if not code:
        return None
    head = str(code).replace("-", "_").split("_")[0].lower()
    head = _THREE_LETTER.get(head, head)
    return LANGUAGES.get(head, str(code))


def messages(call: Any) -> list[tuple[str, str]]:
    """The chat prompt of a call: the task's fixed instructions first, then the call's text."""
    task = task_name(call)
    if task == "summarization":
        return [("system", SYSTEM[task]), ("human", required(call, "text"))]
    if task == "translation":
        source, target = language_name(arg(call, "src_lang")), language_name(arg(call, "tgt_lang")) or "English"
        where = f"from {source} into {target}" if source else f"into {target}"
        return [("system", SYSTEM[task]), ("human", f"Translate {where}:\n\n{required(call, 'text')}")]
    if task == "question-answering":
        question, context = required(call, "question"), required(call, "context")
        return [("system", SYSTEM[task]), ("human", f"Context:\n{context}\n\nQuestion: {question}")]
    if task == "zero-shot-classification":
        labels = "\n".join(f"- {label}" for label in candidate_labels(call))
        return [("system", SYSTEM[task]), ("human", f"Labels:\n{labels}\n\nText: {required(call, 'text')}")]
    return [("human", required(call, "text"))]  # text-generation, conversational, text2text-generation


def candidate_labels(call: Any) -> list[str]:
    labels = list(dict.fromkeys(str(label).strip() for label in as_list(required(call, "candidate_labels"))))
    labels = [label for label in labels if label]
    if not labels:
        raise TaskError(task_name(call), "candidate_labels is empty")
    return labels


def classify(model: GGUFTextModel, call: Any) -> dict[str, Any]:
    """Every label scored by the probability that the reply is that label, among the labels."""
    from hugginggpt.errors import LLMError

    labels = candidate_labels(call)
    try:
        log_probs = model.chat.answer_scores(messages(call), labels)
    except LLMError as exc:
        raise TaskError(task_name(call), str(exc)) from None
    top = max(log_probs)
    weights = [math.exp(value - top) for value in log_probs]
    rows = sorted(({"label": label, "score": weight / sum(weights)} for label, weight in zip(labels, weights)),
                  key=lambda row: -row["score"])
    return {"text": top_label_text(rows), "data": rows}


def infer(model: GGUFTextModel, call: Any) -> dict[str, Any]:
    task = task_name(call)
    if task == "zero-shot-classification":
        return classify(model, call)
    max_tokens = int(arg(call, "max_new_tokens", DEFAULT_MAX_TOKENS.get(task, 256)))
    answer = model.chat.invoke(messages(call), max_tokens=max_tokens)
    text = str(answer.content).strip()
    if not text:
        raise TaskError(task, f"the GGUF model {model.path.name} returned no text")
    if task != "question-answering":
        return {"text": text}
    context = required(call, "context")
    data: dict[str, Any] = {"answer": text}
    start = context.lower().find(text.lower())
    if start >= 0:  # the answer is a span of the context: where, as extractive models report it
        data.update(start=start, end=start + len(text))
    return {"text": text, "data": data}


# ------------------------------------------------------------------------------ handler wiring

def _dispatching(task: str, base: TaskHandler | None) -> TaskHandler:
    """The task's handler, running GGUF files here and anything else on ``base`` (when there is one)."""

    def load_any(folder: Path, options: LoadOptions):
        if folder is not None and Path(folder).is_file() and is_gguf_file(folder):
            return load(Path(folder), options)
        if base is None:
            raise ModelLoadError(task, f"{folder} is not a GGUF file; this task runs locally only on GGUF models")
        return base.load(folder, options)

    def infer_any(model, call):
        return infer(model, call) if isinstance(model, GGUFTextModel) else base.infer(model, call)

    if base is None:
        return TaskHandler("gguf-text", load_any, infer_any, requires=("llama_cpp",), extra="llm")
    return replace(base, load=load_any, infer=infer_any)


def with_gguf(handlers: dict[str, TaskHandler]) -> dict[str, TaskHandler]:
    """``handlers`` with the GGUF text tasks also running GGUF files."""
    return {**handlers, **{task: _dispatching(task, handlers.get(task)) for task in TASKS}}
