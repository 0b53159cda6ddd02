"""Stage 4, response generation: the LLM explains what succeeded; the rest is written from the outcomes.

The LLM is shown the request and the tasks that produced something (model and summarized
prediction), and asks for a direct answer first, then the process in the first person with full
file paths. What failed or was skipped is not left to the LLM (a small model asked about a failed
task answered with a similarity score no task had computed): ``failure_report`` writes it from the
outcomes themselves (what failed, why, and what the user can do), and when nothing succeeded the
LLM is not asked at all. HuggingGPT's answers sometimes named files that were never produced
(JARVIS issue #75), so every file path and every decimal number in the LLM's answer is checked
against the real inputs, outputs and predictions, and a note corrects it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from hugginggpt.agent.llm_call import LLMReply, astream_llm
from hugginggpt.agent.plan import Plan
from hugginggpt.agent.request import trim_history
from hugginggpt.agent.trace import Trace
from hugginggpt.llm.content import content_text
from hugginggpt.llm.token_limits import RESPONSE_MAX_TOKENS, bounded, token_limit
from hugginggpt.paths import expand_home
from hugginggpt.prompts import load_prompt, render_prompt
from hugginggpt.tools.resources.refs import CANONICAL_REF
from hugginggpt.tools.resources.sniff import file_kind
from hugginggpt.tools.results import clip_values, summarize
from hugginggpt.tools.table import MEDIA_KINDS

#: Documents, archives, keys, databases and model files: a name with one of these (or a media or data
#: suffix, ``sniff.file_kind``) is a file the answer claims. Suffixes that are also words of prose
#: (``Node.js``, ``example.com``) are not.
DOCUMENT_SUFFIXES = ("doc", "docx", "odt", "rtf", "xls", "xlsx", "ods", "ppt", "pptx", "odp", "epub", "zip", "tar",
                     "gz", "tgz", "bz2", "xz", "7z", "rar", "xml", "yaml", "yml", "toml", "ini", "cfg", "log", "db",
                     "sqlite", "pem", "key", "crt", "p12", "pfx", "kdbx", "parquet", "pkl", "h5", "pt", "pth",
                     "safetensors", "onnx", "gguf", "exe", "dll", "sh", "bat", "ps1", "html", "htm", "tsv", "srt")
# A maximal run of path characters; each run is then judged in Python (no backtracking: linear time).
_PATH_RUN = re.compile(r"[\w.\-/\\~:%+@]+")
_URL = re.compile(r"(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://\S+", re.IGNORECASE)
_FILE_URL = re.compile(r"(?<![a-z0-9+.\-])file:\S+", re.IGNORECASE)
_ROOTED = re.compile(r"(?:/|\\\\|~[\w.\-]*/|[A-Za-z]:[\\/])[\w.\-~]")  # /x, \\host, ~/x, ~user/x, C:\x
_DOCUMENT_NAME = re.compile(r"[\w\-]\.(?:" + "|".join(DOCUMENT_SUFFIXES) + r")$", re.IGNORECASE)
_SEPARATOR = re.compile(r"[\\/]")
#: Arguments longer than this are cut in the response prompt (with a marker saying how much).
PROMPT_ARG_CHARS = 2000


def predictions_text(plan: Plan, selections: dict[int, dict[str, Any]], outcomes: dict[int, dict[str, Any]]) -> str:
    """One compact block per task: what ran, on which model, and what it produced or why not."""
    lines = []
    for step in plan.tasks:
        outcome = outcomes.get(step.id, {"status": "not run"})
        model = model_label(selections.get(step.id, {}).get("model")) or "default model"
        args = json.dumps(clip_values(step.args, PROMPT_ARG_CHARS), ensure_ascii=False)
        args = CANONICAL_REF.sub(lambda m: f"(output of task {m.group('id')})", args)
        head = f"Task {step.id} {step.task} args={args} model={model}"
        if outcome.get("status") == "ok":
            lines.append(f"{head}\n  prediction: {summarize(outcome['result'])}")
        else:
            lines.append(f"{head}\n  {outcome.get('status')}: {outcome.get('error')}")
    return "\n".join(lines) or "(no tasks were run)"


def model_label(model: str | None) -> str | None:
    """How the response prompt names a model: a Hub id as it is, a file or folder on this machine by
    its name (a full path there reads like a file the run made, and the answer then lists it)."""
    if not model:
        return None
    text = str(model).removeprefix("gguf:")
    if text.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:[\\/]", text):
        return re.split(r"[\\/]", text.rstrip("\\/"))[-1] or text
    return text


def response_messages(user_input: str, plan: Plan, selections: dict[int, dict[str, Any]],
                      outcomes: dict[int, dict[str, Any]], *, chat_history: list[Any] | None = None,
                      history_tokens: int = 2000) -> list[BaseMessage]:
    """The response prompt; with an empty plan it is a plain chat turn (a direct answer).

    Only the tasks that succeeded are shown (``failure_report`` covers the others). The static
    instructions come first, the request and predictions last, so llama.cpp reuses the prefix.
    """
    if not plan.tasks:
        return [*trim_history(chat_history, history_tokens), HumanMessage(user_input)]
    succeeded = Plan(tasks=[step for step in plan.tasks if outcomes.get(step.id, {}).get("status") == "ok"])
    made = sorted(generated_files(outcomes))
    data = render_prompt("response_data", input=user_input,
                         predictions=predictions_text(succeeded, selections, outcomes),
                         files="\n".join(f"- {path}" for path in made) or "none")
    return [SystemMessage(load_prompt("response")), HumanMessage(data)]


#: What the user can do when a task had no model it could run (CLI flags, as the README shows them).
_REMEDY = ("To run {task}, name a model folder on this machine with --local-model {task}=DIR, point "
           "--endpoint URL at an inference server, or set HF_TOKEN for Hugging Face's hosted inference")
_AVAILABILITY_ERRORS = frozenset({"ModelLoadError", "RemoteInferenceError"})  # where a model runs: the remedy applies


def failure_report(outcomes: dict[int, dict[str, Any]]) -> str:
    """What failed and was skipped, why, and what the user can do: written from the outcomes alone.

    Empty when every task succeeded. Deterministic: no LLM writes it, so it cannot state a result
    that no task produced.
    """
    lines = []
    for task_id, outcome in sorted(outcomes.items()):
        status, task = outcome.get("status"), outcome.get("task") or "?"
        if status == "ok":
            continue
        error = " ".join(str(outcome.get("error") or "no reason was recorded").split())
        if status == "skipped":
            cause = error.removeprefix("skipped: ")
            lines.append(f"- Task {task_id} ({task}) was skipped: it needs the output of {cause}.")
            continue
        line = f"- Task {task_id} ({task}) {status or 'did not run'}: {error.rstrip('.')}."
        if outcome.get("error_type") in _AVAILABILITY_ERRORS:
            line += " " + _REMEDY.format(task=task) + "."
        lines.append(line)
    return "\n".join(lines)


def nothing_succeeded_answer(outcomes: dict[int, dict[str, Any]]) -> str:
    """The whole answer when tasks were planned and none produced a result (no LLM is asked)."""
    report = failure_report(outcomes)
    return "I could not complete the request: no task produced a result.\n" + report if report else (
        "I could not complete the request: no task produced a result.")


def generated_files(outcomes: dict[int, dict[str, Any]]) -> set[str]:
    """The files the tasks produced (only a task that succeeded has a result)."""
    files = set()
    for outcome in outcomes.values():
        for kind in MEDIA_KINDS:
            value = (outcome.get("result") or {}).get(kind)
            if value:
                files.add(str(value))
    return files


def known_files(outcomes: dict[int, dict[str, Any]], inputs: list[str | Path]) -> set[str]:
    """Every file the answer may mention: generated outputs and the user's inputs."""
    return {str(p) for p in inputs} | generated_files(outcomes)


def _mentioned_path(run: str) -> str | None:
    """The path a run of path characters names: any absolute or home path (``/etc/passwd``,
    ``~/.ssh/id_rsa``, ``C:\\x``), a relative path through a hidden or parent folder (``.ssh/id_rsa``,
    ``../secret``), or a file name with a media, data (``sniff.file_kind``) or document suffix (``out.png``,
    ``report.docx``); else None."""
    run = run.rstrip(".:,").lstrip(":,")
    if run.startswith("..."):  # an ellipsis before a name
        run = run.lstrip(".")
    if _ROOTED.match(run) or file_kind(run) is not None or _DOCUMENT_NAME.search(run):
        return run
    parts = _SEPARATOR.split(run)
    if len(parts) > 1 and any(part == ".." or (part.startswith(".") and part.strip(".")) for part in parts):
        return run
    return None


def unknown_paths(answer: str, files: set[str]) -> list[str]:
    """Paths the answer mentions that are neither an input nor a generated file (nor inside an input
    folder): every absolute or home path, ``file:`` URL, relative path through a hidden or parent
    folder, and file name with a media, data or document suffix."""
    allowed = {str(Path(f)) for f in files} | {Path(f).name for f in files}
    folders = [Path(f) for f in files if Path(f).is_absolute()]

    def known(path: Path) -> bool:
        return str(path) in allowed or any(path.is_relative_to(folder) for folder in folders)

    found: list[str] = []
    for match in _FILE_URL.finditer(answer):
        url = match.group(0).rstrip(".,;:)]}'\"")
        try:
            named = Path(unquote(urlsplit(url).path))
        except ValueError:
            named = None
        if (named is None or not known(named)) and url not in found:
            found.append(url)
    text = _URL.sub(" ", _FILE_URL.sub(" ", answer))
    for match in _PATH_RUN.finditer(text):
        mention = _mentioned_path(match.group(0))
        if mention is None or mention in found or mention in allowed or str(Path(mention)) in allowed:
            continue
        if known(expand_home(mention)) or any(f.endswith("/" + mention.replace("\\", "/")) for f in allowed):
            continue  # a known file, or the end of one's path ("outputs/a.png")
        found.append(mention)
    return found


def check_answer(answer: str, files: set[str], evidence: str | None = None) -> tuple[str, list[str], list[str]]:
    """The one check of every agent's answer: ``(answer with notes, invented paths, invented numbers)``.

    A note corrects every path the answer names that is neither an input nor a produced file
    (``unknown_paths``; ``files``: the run's inputs and outputs), and, given ``evidence`` (the text
    the answer was written from: the request and what the tools produced), every decimal number that
    no number of the evidence rounds to (``unknown_numbers``). Without evidence (no task ran) numbers
    are not checked.
    """
    invented = unknown_paths(answer, files)
    numbers = unknown_numbers(answer, evidence) if evidence is not None else []
    if invented:
        answer += correction_note(invented, files)
    if numbers:
        answer += (f"\n\nNote: {', '.join(numbers)} {'is' if len(numbers) == 1 else 'are'} not a result of "
                   "any task.")
    return answer, invented, numbers


def correction_note(paths: list[str], files: set[str]) -> str:
    real = ", ".join(sorted(files)) or "none"
    return (f"\n\nNote: {', '.join(paths)} {'was' if len(paths) == 1 else 'were'} not produced by any task "
            f"and {'is' if len(paths) == 1 else 'are'} not an input file; the actual files are: {real}.")


def fallback_answer(outcomes: dict[int, dict[str, Any]]) -> str:
    """A plain account of the results, for when the LLM answers nothing: the user still learns what
    ran and what it produced (files by path); failures are added by ``failure_report``."""
    succeeded = {i: o for i, o in outcomes.items() if o.get("status") == "ok"}
    if not succeeded:
        return "The model gave no answer, and no task produced a result."
    lines = ["The model gave no answer; here is what the tasks produced:"]
    for task_id, outcome in sorted(succeeded.items()):
        lines.append(f"- task {task_id} ({outcome.get('task')}): {summarize(outcome.get('result') or {}) or 'no output'}")
    return "\n".join(lines)


# A maximal run of word characters and dots, with the minus sign before it; each run is then read in
# Python (``_numbers``): no pattern part looks ahead, so a long run of digits costs linear time.
_WORD_RUN = re.compile(r"-?[\w.]+")
_LEADING_DECIMAL = re.compile(r"\d+\.\d+")
_LEADING_INTEGER = re.compile(r"\d+")
_DIGIT = re.compile(r"\d")
#: Integers longer than this are no result a task computed (and Python refuses to convert them).
_MAX_INTEGER_DIGITS = 30


def _numbers(text: str, leading: re.Pattern[str]) -> list[str]:
    """The numbers ``leading`` reads at the start of each word of ``text`` (a word: letters, digits,
    ``_`` and dots) when no digit follows in that word: ``0.87`` in ``0.87s`` and ``-0.5``, nothing
    in ``1.2.3``, ``v0.5`` or ``0.5x2``."""
    found = []
    for run in _WORD_RUN.finditer(text):
        word = run.group(0)
        sign = "-" if word.startswith("-") else ""
        if sign and word[1:2] in ("", "."):
            continue
        body = word[len(sign):]
        if sign and run.start() > 0 and (text[run.start() - 1].isalnum() or text[run.start() - 1] in "_."):
            sign = ""  # "x-1.5": the dash joins two words, it is no minus sign
        number = leading.match(body)
        if number is not None and not _DIGIT.search(body, number.end()):
            found.append(sign + number.group(0))
    return found


def unknown_numbers(answer: str, shown: str) -> list[str]:
    """Decimal numbers in ``answer`` that no number in ``shown`` (the prompt: request and
    predictions) rounds to, as a value or a percentage (0.8734 allows 0.87 and 87.3). An integer of
    the prompt allows only itself with one decimal place (5 allows 5.0, while 0 does not allow
    0.0000: that precision was never computed)."""
    values = np.array(sorted({float(text) for text in _numbers(shown, _LEADING_DECIMAL)}), dtype=np.float64)
    integers = {int(text) for text in _numbers(shown, _LEADING_INTEGER) if len(text) <= _MAX_INTEGER_DIGITS}
    found: list[str] = []
    for text in dict.fromkeys(_numbers(_URL.sub(" ", answer), _LEADING_DECIMAL)):
        if len(found) >= MAX_NUMBERS_NOTED:
            break
        places = len(text.split(".")[1])
        number = float(text)
        if places == 1 and number.is_integer() and int(number) in integers:
            continue
        if not _rounds_to(values, places, number):
            found.append(text)
    return found


#: The most invented numbers one answer's note lists (the first ones; the check stops there).
MAX_NUMBERS_NOTED = 100


def _rounds_to(values: np.ndarray, places: int, number: float) -> bool:
    """Whether a value (or 100 times it: a percentage), rounded to ``places`` decimals, is ``number``.

    numpy picks the few candidates in one pass; Python's exact ``round`` confirms them."""
    step = 2 * 10.0 ** -min(places, 300) + 1e-9 * max(1.0, abs(number))  # numpy may round the other way
    for scale, tolerance in ((1.0, 1e-12), (100.0, 1e-9)):
        scaled = values * scale
        with np.errstate(all="ignore"):
            approx = np.round(scaled, min(places, 300))
            near = ~np.isfinite(approx) | (np.abs(approx - number) <= step)
        if any(abs(round(float(v), places) - number) < tolerance for v in scaled[near]):
            return True
    return False


@dataclass
class Answer:
    """The response stage's whole answer (notes and failure report included) and the paths it invented."""

    text: str
    invented: list[str]


class _Stripped:
    """Pieces of a text as they come, less the text's leading and trailing whitespace: the pieces
    ``feed`` lets through add up to the whole text's ``strip()``."""

    def __init__(self) -> None:
        self.started, self.held = False, ""

    def feed(self, piece: str) -> str:
        if not self.started:
            piece = piece.lstrip()
            self.started = bool(piece)
        text = self.held + piece
        body = text.rstrip()
        self.held = text[len(body):]
        return body


async def astream_response(llm: BaseChatModel, messages: list[BaseMessage], files: set[str], config: RunnableConfig,
                           trace: Trace | None = None, *,
                           outcomes: dict[int, dict[str, Any]] | None = None) -> AsyncIterator[str | Answer]:
    """The answer as the controller writes it: its pieces (``str``), then the whole ``Answer``, which
    starts with the pieces put together (what follows them: notes and the failure report).

    With ``outcomes`` (the run's tasks): when none succeeded, the answer is
    ``nothing_succeeded_answer`` and the LLM is not called (trace: ``response_llm`` = "skipped");
    otherwise the LLM's answer about the successes (at most ``RESPONSE_MAX_TOKENS`` tokens, streamed
    when the model streams), checked against the prompt (``check_answer``: file paths and decimal
    numbers that no task produced; trace: ``invented_numbers``), then ``failure_report``. An empty LLM
    answer is replaced by ``fallback_answer(outcomes)`` (recorded in the trace as ``response_fallback``).
    """
    outcomes = outcomes or {}
    if outcomes and not any(o.get("status") == "ok" for o in outcomes.values()):
        if trace is not None:
            trace.set("response_llm", "skipped: no task produced a result")
        yield Answer(nothing_succeeded_answer(outcomes), [])
        return
    llm = bounded(llm, RESPONSE_MAX_TOKENS)
    stripped, reply = _Stripped(), None
    async for item in astream_llm("response", llm.astream(messages, config), messages, trace=trace,
                                  max_tokens=token_limit(llm)):
        if isinstance(item, LLMReply):
            reply = item
        elif piece := stripped.feed(item):
            yield piece
    answer = reply.text.strip() if reply is not None else ""
    if not answer:
        answer = fallback_answer(outcomes)
        if trace is not None:
            trace.set("response_fallback", answer)
    shown = "\n".join(content_text(m) for m in messages) if outcomes else None
    answer, invented, numbers = check_answer(answer, files, shown)
    if numbers and trace is not None:
        trace.set("invented_numbers", numbers)
    report = failure_report(outcomes)
    if report:
        answer += "\n\nNot done:\n" + report
    yield Answer(answer, invented)


async def arespond(llm: BaseChatModel, messages: list[BaseMessage], files: set[str], config: RunnableConfig,
                   trace: Trace | None = None, *,
                   outcomes: dict[int, dict[str, Any]] | None = None) -> tuple[str, list[str]]:
    """The whole answer of ``astream_response`` and the file names it invented."""
    async for item in astream_response(llm, messages, files, config, trace, outcomes=outcomes):
        if isinstance(item, Answer):
            return item.text, item.invented
    raise AssertionError("astream_response ends with its Answer")  # pragma: no cover
