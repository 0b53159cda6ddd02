"""Summarization, translation and text2text through model classes (transformers 5 dropped their pipelines)."""

from __future__ import annotations

from typing import Any

from hugginggpt.tools.executors.local_tasks.auto_models import LoadedModel, auto_loader
from hugginggpt.tools.executors.local_tasks.common import (
    TaskHandler,
    arg,
    required,
    task_name,
)

LANGUAGE_NAMES = {"en": "English", "fr": "French", "de": "German", "ro": "Romanian", "es": "Spanish"}


def _prefix(bundle: LoadedModel, task: str, src: str | None, tgt: str | None) -> str:
    """The task prefix T5-style checkpoints expect (from their config), or the T5 translation phrase."""
    params = getattr(bundle.model.config, "task_specific_params", None) or {}
    if task == "translation" and src and tgt:
        key = f"translation_{src}_to_{tgt}"
        if key in params:
            return params[key].get("prefix", "")
        if bundle.model.config.model_type in ("t5", "mt5"):
            return f"translate {LANGUAGE_NAMES.get(src, src)} to {LANGUAGE_NAMES.get(tgt, tgt)}: "
        return ""
    for key, value in params.items():
        if key == task or (task == "translation" and key.startswith("translation")):
            return value.get("prefix", "")
    return ""


def _forced_target(bundle: LoadedModel, src: str | None, tgt: str | None) -> dict[str, Any]:
    """Multilingual tokenizers (mBART, NLLB, M2M100) take language codes as special tokens."""
    tokenizer = bundle.processor
    if src and hasattr(tokenizer, "src_lang"):
        tokenizer.src_lang = src
    if tgt and hasattr(tokenizer, "tgt_lang"):
        tokenizer.tgt_lang = tgt
        token_id = tokenizer.convert_tokens_to_ids(tgt)
        if token_id is not None and token_id != tokenizer.unk_token_id:
            return {"forced_bos_token_id": token_id}
    return {}


def generate_text(bundle: LoadedModel, call) -> dict[str, Any]:
    import torch

    task = task_name(call)
    src, tgt = arg(call, "src_lang"), arg(call, "tgt_lang")
    extra = _forced_target(bundle, src, tgt) if task == "translation" else {}
    text = _prefix(bundle, task, src, tgt) + required(call, "text")
    inputs = bundle.processor(text, return_tensors="pt", truncation=True).to(bundle.device)
    with torch.inference_mode():
        ids = bundle.model.generate(**inputs, max_new_tokens=int(arg(call, "max_new_tokens", 128)), **extra)
    return {"text": bundle.processor.decode(ids[0], skip_special_tokens=True).strip()}


HANDLERS = {
    task: TaskHandler("seq2seq", auto_loader("AutoModelForSeq2SeqLM", "AutoTokenizer"), generate_text)
    for task in ("summarization", "translation", "text2text-generation")
}
