"""Tasks whose arguments show that the planner meant a sibling task, swapped for it.

A small planner asked a question about a picture often writes question-answering (answer from a
text) and then has no text to give it: it makes one up, or names the image as the "context". A
context that is neither the request's text nor an earlier task's output, while the request shows an
image, means visual-question-answering on that image. A context the request does give, or an
earlier output, is left alone.

Likewise a question-answering whose context is an image-classification's label (and nobody else
reads that label): the planner meant a question about the classified image, visual-question-answering
(document-question-answering when the request speaks of a document), and the classifier goes.

The other way round, a question about a passage the request quotes ("Here is the document text:
'...'") gets document- or visual-question-answering on an image nobody has (``document.jpg``): with
no image in the request and none made by an earlier task, that is question-answering on the passage.

A text-generation step whose output a later task takes as audio, an image or a video (speech to clean
up, a picture to edit) was meant to make that: text-to-speech, text-to-image, text-to-video.

And a request that asks for a picture to be made ("generate an image of it") but never for a text to
be written, planned with text-generation and no text-to-image, meant text-to-image.

Each swap is recorded with its reason.

An image-to-image whose prompt is an edit instruction ("change the background to blue", "add a
hat") and not a restyling or an enhancement ("in Van Gogh's style", "enhance it to match the target")
is image-text-to-image: editing an image by a description.

Speech recognition for a request that never asks for a transcription but asks what kind of thing a
recording holds (classify the command, the speaker, the emotion) is audio-classification: commands,
speakers and emotions are audio-classification's labels (keyword spotting, speaker identification).

Likewise object-detection for a request that asks to classify or categorize and never to detect,
locate or box anything, in a plan where no other classification task accounts for the word, is
image-classification.

(Tried and not kept: every image-to-image with a text prompt -> image-text-to-image. On the dev
answers it raised node F1 but lowered edge F1: a restyling prompt is image-to-image.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hugginggpt.agent.plan import CANONICAL_REF, PlanTask, TaskInfo, media_read, whole_ref
from hugginggpt.agent.request_words import RequestWords, folded, quoted_texts
from hugginggpt.agent.unrequested import WRITING_TASK, asks_for_writing

#: A request asking for a new picture: a making verb, then "a/an/some/new ... image" (not "the image",
#: which is one to edit or read).
_ASKS_FOR_PICTURE = re.compile(
    r"\b(?:generat|creat|produc|draw|make|design|paint|render|illustrat)\w* (?:a|an|some|new|one)(?: \w+){0,2}? "
    r"(?:image|picture|photo|illustration|drawing|painting|artwork|visual)s?\b",
    re.IGNORECASE)
#: A request that asks something: a question mark or a question word.
_ASKS_QUESTION = re.compile(r"\?|\b(?:who|what|when|where|which|why|how)\b", re.IGNORECASE)
#: An edit instruction: a verb that changes what an image shows...
_EDIT_WORDS = re.compile(r"\b(?:change|add|replace|remove|delete|erase|insert|put|turn|make|recolou?r|colou?r|paint|"
                         r"highlight|blur|crop|edit|modify|alter)\w*\b", re.IGNORECASE)
#: ...unless it restyles or enhances the image as a whole (image-to-image's own job).
_RESTYLE_WORDS = re.compile(r"\b(?:enhanc|improv|style|styl|match|target|quality|transform|resolution|sharpen|"
                            r"denois|upscal|restor|sketch|cartoon|anime|convert)\w*", re.IGNORECASE)
#: A request asking what kind of thing a recording holds, and one asking for its words.
_AUDIO_LABEL_WORDS = re.compile(r"\b(?:classif\w*|categor\w*|commands?|emotions?|speakers?|genre)\b", re.IGNORECASE)
_TRANSCRIPT_WORDS = re.compile(r"\b(?:transcri\w*|speech[- ]to[- ]text|write down|written|words?|says?|said|saying)\b",
                               re.IGNORECASE)
#: A request asking for a class, and one asking for objects to be found.
_CLASS_WORDS = re.compile(r"\b(?:classif\w*|categor\w*)\b", re.IGNORECASE)
_DETECT_WORDS = re.compile(r"\b(?:detect\w*|locat\w*|bounding|box\w*|count\w*|position\w*|where|"
                           r"(?:identify|recogni[sz]e|find|label|list)(?: and label)? (?:the |all |any |different )?objects?|"
                           r"what objects)\b", re.IGNORECASE)
#: A request that asks to know something ("I'd like to know the color of the car"), and one that
#: names a class, a kind or a label (what image-classification answers).
_ASKS_TO_KNOW = re.compile(r"\b(?:know|tell me|find out|wondering|curious)\b(?:\W+\w+){0,4}?\W+"
                           r"(?:which|what|how|who|the (?:colou?r|name|number|size|shape))\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_NAMES_A_CLASS = re.compile(r"\b(?:class\w*|categor\w*|label\w*|identif\w*|recogni[sz]\w*|kind|type|species|breed)\b",
                            re.IGNORECASE)
#: A request that speaks of a document (a question about one is document-question-answering).
_DOCUMENT_WORDS = re.compile(r"\b(?:document|scan\w*|invoice|receipt|form|page|pdf|letter|contract)s?\b", re.IGNORECASE)
#: The task that makes each media kind from a text.
_FROM_TEXT = {"audio": "text-to-speech", "image": "text-to-image", "video": "text-to-video"}


def swap_misread_tasks(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                       note: Callable[[int, str], None]) -> None:
    """Swap the tasks whose arguments show that the planner meant a sibling task, in place;
    ``words``: the request as every repair reads it."""
    _answer_from_image(items, known, words, note)
    _answer_about_made_image(items, known, words, note)
    _answer_from_passage(items, known, words, note)
    _edit_by_description(items, known, note)
    _draw_from_label(items, known, note)
    _swap_by_cues(items, known, words, note)
    _answer_not_classify(items, known, words, note)


def swap_misnamed_writing(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                          note: Callable[[int, str], None]) -> None:
    """Turn text-generation meant as a media maker into that maker, in place. Runs before the
    references are repaired, so that an invented file name can then point at the media it makes."""
    _media_from_writing(items, known, note)
    _draw_not_write(items, known, words, note)


def _answer_from_image(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                       note: Callable[[int, str], None]) -> None:
    """Question-answering on an invented context -> visual-question-answering. The image is the
    nearest earlier task's image output, else the request's only image; with neither (or several to
    choose from) nothing changes."""
    if "visual-question-answering" not in known:
        return
    for position, task in enumerate(items):
        context = task.args.get("context")
        if task.task != "question-answering" or not isinstance(context, str) or CANONICAL_REF.search(context):
            continue
        text = folded(context).strip(" '\".")
        names_image = text in {name.lower() for name in words.files["image"]}
        if not names_image and (not text or text in words.folded or _mostly_from(text, words.folded)):
            continue
        image = _image_for(items[:position], known, words.files["image"])
        if image is None:
            continue
        note(task.id, f"question-answering had no context from the request or an earlier task "
                      f"({context[:60]!r}); a question about the image {image!r}: visual-question-answering")
        task.task = "visual-question-answering"
        task.args = {"image": image, "question": task.args.get("question", "")}


def _answer_about_made_image(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                             note: Callable[[int, str], None]) -> None:
    """question-answering whose context is the whole output of a task that makes an image and no text
    (a picture drawn or edited) -> visual (document) question-answering on that image."""
    target = _question_task(words)
    if target not in known:
        return
    by_id = {t.id: t for t in items}
    for task in items:
        source = by_id.get(whole_ref(task.args.get("context")))
        if task.task != "question-answering" or source is None:
            continue
        outputs = known[source.task].outputs
        if "image" not in outputs or "text" in outputs:
            continue
        note(task.id, f"question-answering with the image of task {source.id} ({source.task}) as its context: {target}")
        task.task = target
        task.args = {"image": task.args["context"], "question": task.args.get("question", "")}


def _question_task(words: RequestWords) -> str:
    """The task that answers a question about an image: document QA when the request speaks of a document."""
    return "document-question-answering" if _DOCUMENT_WORDS.search(words.own) else "visual-question-answering"


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


def swap_label_questions(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                         note: Callable[[int, str], None]) -> None:
    """question-answering on an image-classification's label that nothing else reads -> visual (or
    document) question-answering on the classified image; the classifier is taken out. Runs after the
    unrequested text-generation steps are taken out: "classify, write, answer from what was written"
    is the same misreading one step longer."""
    target = _question_task(words)
    if target not in known:
        return
    by_id = {t.id: t for t in items}
    for task in list(items):
        label = by_id.get(whole_ref(task.args.get("context")))
        if task.task != "question-answering" or label is None or label.task != "image-classification":
            continue
        if any(label.id in t.references() for t in items if t is not task) or not isinstance(label.args.get("image"), str):
            continue
        note(task.id, f"question-answering on the label of task {label.id} (image-classification): a question about "
                      f"that image, {target}; task {label.id} taken out")
        task.task = target
        task.args = {"image": label.args["image"], "question": task.args.get("question", "")}
        items.remove(label)


def _answer_from_passage(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                         note: Callable[[int, str], None]) -> None:
    """A question about a passage the request quotes, planned as document/visual question-answering on
    an image that neither the request nor an earlier task has, or as text-generation on the question
    (for a request that asks for no writing, in a plan that answers no question from a text) ->
    question-answering on that passage."""
    passages = words.passages
    if "question-answering" not in known or words.files["image"] or not passages:
        return
    for position, task in enumerate(items):
        if task.task in ("document-question-answering", "visual-question-answering"):
            image = task.args.get("image")
            if (not isinstance(image, str) or CANONICAL_REF.search(image)
                    or any("image" in known[t.task].outputs for t in items[:position])):
                continue
            question = str(task.args.get("question", ""))
            why = f"{task.task} on {image[:60]!r}, an image the request does not have"
        elif (task.task == WRITING_TASK and _ASKS_QUESTION.search(words.text) and not asks_for_writing(words)
              and not any(t.task == "question-answering" for t in items)):
            text = task.args.get("text")
            if not isinstance(text, str) or CANONICAL_REF.search(text):
                continue
            for passage in passages:  # the question without the passage it was copied with
                rest = text.replace(passage, "").strip(" '\":\n")
                text = rest or text
            question = text.strip(" '\":\n")
            why = f"{WRITING_TASK} on a question"
        else:
            continue
        context = next((p for p in passages if p.strip(" ?.").lower() not in question.lower()), None)
        if not question or context is None:
            continue
        note(task.id, f"{why}, while the request quotes a passage: question-answering on that passage")
        task.task = "question-answering"
        task.args = {"question": question, "context": context}


def _draw_not_write(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                    note: Callable[[int, str], None]) -> None:
    """text-generation in a plan without text-to-image, for a request that asks for a new picture and
    for no writing -> text-to-image (the first such step; its text is the picture's description)."""
    if ("text-to-image" not in known or any(t.task == "text-to-image" for t in items)
            or not _ASKS_FOR_PICTURE.search(words.own) or asks_for_writing(words)):
        return
    for task in items:
        if task.task == WRITING_TASK and isinstance(task.args.get("text"), str):
            note(task.id, f"{WRITING_TASK} for a request that asks for a picture to be made and no text to be "
                          "written: text-to-image")
            task.task = "text-to-image"
            task.args = {"text": task.args["text"]}
            return


def _media_from_writing(items: list[PlanTask], known: dict[str, TaskInfo], note: Callable[[int, str], None]) -> None:
    """text-generation whose output a later task reads as media -> the task that makes that media from a text."""
    for task in items:
        if task.task != WRITING_TASK or not isinstance(task.args.get("text"), str):
            continue
        kind = next((k for r in items if (k := media_read(r, task.id, known))), None)
        if kind is None or _FROM_TEXT[kind] not in known:
            continue
        note(task.id, f"{WRITING_TASK} whose output a later task takes as {kind}: {_FROM_TEXT[kind]}")
        task.task = _FROM_TEXT[kind]
        task.args = {"text": task.args["text"]}


def _edit_by_description(items: list[PlanTask], known: dict[str, TaskInfo], note: Callable[[int, str], None]) -> None:
    """image-to-image with an edit instruction as its prompt (not a restyling) -> image-text-to-image."""
    if "image-text-to-image" not in known:
        return
    for task in items:
        prompt = task.args.get("prompt")
        if (task.task != "image-to-image" or not isinstance(prompt, str) or CANONICAL_REF.search(prompt)
                or not _EDIT_WORDS.search(prompt) or _RESTYLE_WORDS.search(prompt)):
            continue
        note(task.id, f"image-to-image with the edit instruction {prompt[:60]!r}: image-text-to-image")
        task.task = "image-text-to-image"


def _draw_from_label(items: list[PlanTask], known: dict[str, TaskInfo], note: Callable[[int, str], None]) -> None:
    """image-classification whose image is the whole output of a task that makes no image (a label, a
    text) -> text-to-image of that text: "generate an image based on the classification"."""
    if "text-to-image" not in known:
        return
    by_id = {t.id: t for t in items}
    for task in items:
        source = by_id.get(whole_ref(task.args.get("image")))
        outputs = known[source.task].outputs if source is not None else ()
        if task.task != "image-classification" or "image" in outputs or "text" not in outputs:
            continue
        note(task.id, f"image-classification of the text output of task {source.id} ({source.task}): text-to-image")
        task.task = "text-to-image"
        task.args = {"text": task.args["image"]}


def _answer_not_classify(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                         note: Callable[[int, str], None]) -> None:
    """A plan of one image-classification, for a request that asks to know something about the image
    ("I'd like to know the color of the car") and never for its class, kind or objects -> visual
    (document) question-answering, asked the request's quoted question or else its asking sentence."""
    target = _question_task(words)
    if (len(items) != 1 or items[0].task != "image-classification" or target not in known
            or not isinstance(items[0].args.get("image"), str)):
        return
    question = next((q for q in quoted_texts(words.text) if q.endswith("?")), None)
    asking = _ASKS_TO_KNOW.search(words.own)
    if (question is None and asking is None) or _NAMES_A_CLASS.search(words.own) or _DETECT_WORDS.search(words.own):
        return
    if question is None:  # the sentence that asks
        question = next((s for s in _SENTENCE_END.split(words.own) if _ASKS_TO_KNOW.search(s)), words.own).strip(" .!")
    task = items[0]
    note(task.id, f"image-classification for a request that asks to know something about the image and not its "
                  f"class: {target}")
    task.task = target
    task.args = {"image": task.args["image"], "question": question}


@dataclass(frozen=True)
class _CueSwap:
    """``source`` meant as ``target``: when the request's own words match ``asks`` and not ``unless``,
    and no task of the plan already does the job (``done_by``), the first ``source`` step is swapped."""

    source: str
    target: str
    asks: re.Pattern[str]
    unless: re.Pattern[str]
    done_by: Callable[[str], bool]
    reason: str


_CUE_SWAPS = (
    _CueSwap("automatic-speech-recognition", "audio-classification", _AUDIO_LABEL_WORDS, _TRANSCRIPT_WORDS,
             lambda task: task == "audio-classification", "asks what class a recording is and never for its words"),
    _CueSwap("object-detection", "image-classification", _CLASS_WORDS, _DETECT_WORDS,
             lambda task: task.endswith("classification"), "asks for a class and for no objects to be found"),
    _CueSwap("image-classification", "object-detection", _DETECT_WORDS, _CLASS_WORDS,
             lambda task: task == "object-detection", "asks for objects to be found and for no class"),
)


def _swap_by_cues(items: list[PlanTask], known: dict[str, TaskInfo], words: RequestWords,
                  note: Callable[[int, str], None]) -> None:
    """The swaps of ``_CUE_SWAPS``, each at most once."""
    for swap in _CUE_SWAPS:
        if (swap.target not in known or any(swap.done_by(t.task) for t in items)
                or not swap.asks.search(words.own) or swap.unless.search(words.own)):
            continue
        task = next((t for t in items if t.task == swap.source), None)
        if task is not None:
            note(task.id, f"{swap.source} for a request that {swap.reason}: {swap.target}")
            task.task = swap.target
