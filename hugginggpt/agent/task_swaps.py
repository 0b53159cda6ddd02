"""Tasks whose arguments show that the planner meant a sibling task, swapped for it.

A small planner asked a question about a picture often writes question-answering (answer from a
text) and then has no text to give it: it makes one up, or names the image as the "context". A
context that is neither the request's text nor an earlier task's output, while the request shows an
image, means visual-question-answering on that image. A context the request does give, or an
earlier output, is left alone. Each swap is recorded with its reason.

(Tried and not kept: image-to-image with a text prompt -> image-text-to-image. On the dev answers it
raised node F1 but lowered edge F1: a restyling prompt, "in Van Gogh's style", is image-to-image.)
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hugginggpt.agent.plan import CANONICAL_REF, PlanTask, TaskInfo


def swap_misread_tasks(items: list[PlanTask], known: dict[str, TaskInfo], said: str,
                       images: list[str], note: Callable[[int, str], None]) -> None:
    """Turn question-answering on an invented context into visual-question-answering, in place.

    ``said``: the request, lower-cased with its white space folded (as ``plan_repair`` reads it once
    for every repair); ``images``: the image files the request names, in order. The image is the
    nearest earlier task's image output, else the request's only image; with neither (or several to
    choose from) nothing changes.
    """
    if "visual-question-answering" not in known:
        return
    for position, task in enumerate(items):
        context = task.args.get("context")
        if task.task != "question-answering" or not isinstance(context, str) or CANONICAL_REF.search(context):
            continue
        text = " ".join(context.lower().split()).strip(" '\".")
        names_image = text in {name.lower() for name in images}
        if not names_image and (not text or text in said or _mostly_from(text, said)):
            continue
        image = _image_for(items[:position], known, images)
        if image is None:
            continue
        note(task.id, f"question-answering had no context from the request or an earlier task "
                      f"({context[:60]!r}); a question about the image {image!r}: visual-question-answering")
        task.task = "visual-question-answering"
        task.args = {"image": image, "question": task.args.get("question", "")}


def _mostly_from(text: str, said: str) -> bool:
    """Whether most of ``text``'s longer words occur in the request (a passage copied loosely)."""
    words = [w for w in re.findall(r"[a-z0-9']+", text) if len(w) > 3]
    request_words = set(re.findall(r"[a-z0-9']+", said))
    return bool(words) and sum(w in request_words for w in words) >= 0.6 * len(words)


def _image_for(earlier: list[PlanTask], known: dict[str, TaskInfo], images: list[str]) -> str | None:
    for task in reversed(earlier):
        if "image" in known[task.task].outputs:
            return f"<resource>-{task.id}"
    return images[0] if len(images) == 1 else None
