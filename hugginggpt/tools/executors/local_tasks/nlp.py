"""Text tasks: classification, tagging, table QA, masks, generation (embeddings: ``embeddings.py``)."""

from __future__ import annotations

from typing import Any

from hugginggpt.errors import TaskError
from hugginggpt.tools.executors.local_tasks.common import (
    TaskHandler,
    arg,
    as_list,
    jsonable,
    required,
    scored_labels,
    task_name,
    top_label_text,
)
from hugginggpt.tools.executors.local_tasks.pipelines import pipeline_handler
from hugginggpt.tools.resources.tables import read_table
from hugginggpt.tools.table import task_table


def _labels_result(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"text": top_label_text(rows), "data": rows}


def text_classification(pipe, call) -> dict[str, Any]:
    top_k = int(arg(call, "top_k", 1))
    out = pipe(required(call, "text"), top_k=top_k)
    return _labels_result(scored_labels(out[0] if out and isinstance(out[0], list) else out))


def token_classification(pipe, call) -> dict[str, Any]:
    entities = pipe(required(call, "text"), aggregation_strategy="simple")
    rows = [
        {
            "entity_group": str(e.get("entity_group", e.get("entity"))),
            "score": float(e["score"]),
            "word": str(e["word"]),
            "start": e.get("start"),
            "end": e.get("end"),
        }
        for e in entities
    ]
    text = ", ".join(f"{r['word']} ({r['entity_group']})" for r in rows) or "no entities"
    return {"text": text, "data": jsonable(rows)}


def table_question_answering(pipe, call) -> dict[str, Any]:
    table = read_table(required(call, "table"), call.workspace, task_name(call))
    columns = {column: ["" if cell is None else str(cell) for cell in cells] for column, cells in table.items()}
    out = jsonable(pipe(table=columns, query=required(call, "question")))
    return {"text": str(out.get("answer", "")), "data": out}


def zero_shot_classification(pipe, call) -> dict[str, Any]:
    labels = as_list(required(call, "candidate_labels"))
    out = pipe(required(call, "text"), candidate_labels=labels, multi_label=bool(arg(call, "multi_label", False)))
    rows = [{"label": lab, "score": float(s)} for lab, s in zip(out["labels"], out["scores"])]
    return _labels_result(rows)


def fill_mask(pipe, call) -> dict[str, Any]:
    text = required(call, "text")
    mask = pipe.tokenizer.mask_token
    text = task_table()["fill-mask"].find_arg("text").marked_with(text, mask)  # unchanged without a mask token
    if mask and mask not in text:
        raise TaskError(task_name(call), f"the text has no mask token {mask!r} to fill")
    out = pipe(text, top_k=int(arg(call, "top_k", 5)))
    if out and isinstance(out[0], list):  # several masks: keep the first
        out = out[0]
    rows = [
        {"token_str": str(o["token_str"]), "score": float(o["score"]), "sequence": str(o["sequence"])}
        for o in out
    ]
    return {"text": rows[0]["sequence"] if rows else text, "data": rows}


def text_generation(pipe, call) -> dict[str, Any]:
    out = pipe(
        required(call, "text"), max_new_tokens=int(arg(call, "max_new_tokens", 64)), return_full_text=False
    )
    return {"text": str(out[0]["generated_text"])}


def conversational(pipe, call) -> dict[str, Any]:
    """A chat turn: chat messages when the tokenizer has a chat template, plain text otherwise."""
    text = required(call, "text")
    max_new_tokens = int(arg(call, "max_new_tokens", 128))
    if getattr(pipe.tokenizer, "chat_template", None):
        out = pipe([{"role": "user", "content": text}], max_new_tokens=max_new_tokens)
        reply = out[0]["generated_text"]
        if isinstance(reply, list):
            reply = reply[-1]["content"]
    else:
        reply = pipe(text, max_new_tokens=max_new_tokens, return_full_text=False)[0]["generated_text"]
    return {"text": str(reply)}


HANDLERS: dict[str, TaskHandler] = {
    "text-classification": pipeline_handler("text-classification", text_classification),
    "token-classification": pipeline_handler("token-classification", token_classification),
    "table-question-answering": pipeline_handler("table-question-answering", table_question_answering),
    "zero-shot-classification": pipeline_handler("zero-shot-classification", zero_shot_classification),
    "fill-mask": pipeline_handler("fill-mask", fill_mask),
    "text-generation": pipeline_handler("text-generation", text_generation),
    "conversational": pipeline_handler("text-generation", conversational),
}
