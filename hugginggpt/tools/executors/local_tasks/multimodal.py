"""Image + text tasks: captioning, visual chat, visual and document question answering."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggpt.tools.executors.local_tasks.common import (
    LoadOptions,
    TaskHandler,
    arg,
    jsonable,
    open_image,
    required,
)
from hugginggpt.tools.executors.local_tasks.pipelines import pipeline_handler

@dataclass
class Captioner:
    """An image-to-text model (ViT-GPT2, BLIP, GIT...): image processor in, generated caption out."""

    model: Any
    image_processor: Any
    tokenizer: Any
    device: str


def load_captioner(folder: Path, options: LoadOptions) -> Captioner:
    from transformers import (
        AutoImageProcessor,
        AutoModelForImageTextToText,
        AutoTokenizer,
    )

    model = AutoModelForImageTextToText.from_pretrained(folder, dtype=options.dtype).to(options.device).eval()
    return Captioner(model, AutoImageProcessor.from_pretrained(folder), AutoTokenizer.from_pretrained(folder),
                     options.device)


def image_to_text(captioner: Captioner, call) -> dict[str, Any]:
    import torch

    pixels = captioner.image_processor(images=open_image(call), return_tensors="pt")["pixel_values"]
    pixels = pixels.to(captioner.device, dtype=captioner.model.dtype)
    with torch.inference_mode():
        ids = captioner.model.generate(pixel_values=pixels, max_new_tokens=int(arg(call, "max_new_tokens", 30)))
    return {"text": captioner.tokenizer.decode(ids[0], skip_special_tokens=True).strip()}


def _chat_about_image(pipe, call, question: str) -> str:
    messages = [{"role": "user", "content": [
        {"type": "image", "image": open_image(call)},
        {"type": "text", "text": question},
    ]}]
    out = pipe(text=messages, max_new_tokens=int(arg(call, "max_new_tokens", 128)), return_full_text=False)
    return str(out[0]["generated_text"]).strip()


def image_text_to_text(pipe, call) -> dict[str, Any]:
    return {"text": _chat_about_image(pipe, call, required(call, "text"))}


def visual_question_answering(pipe, call) -> dict[str, Any]:
    answer = _chat_about_image(pipe, call, required(call, "question"))
    return {"text": answer, "data": {"answer": answer}}


def document_question_answering(pipe, call) -> dict[str, Any]:
    out = pipe(image=open_image(call), question=required(call, "question"))
    best = out[0] if isinstance(out, list) and out else out
    return {"text": str(best.get("answer", "")), "data": jsonable(out)}


HANDLERS = {
    "image-to-text": TaskHandler("captioner", load_captioner, image_to_text),
    "image-text-to-text": pipeline_handler("image-text-to-text", image_text_to_text),
    "visual-question-answering": pipeline_handler("image-text-to-text", visual_question_answering),
    "document-question-answering": pipeline_handler("document-question-answering", document_question_answering),
}
