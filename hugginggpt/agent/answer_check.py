"""THE answer check of every agent: what an answer may claim, held against what the run really has.

HuggingGPT's answers sometimes named files that were never produced (JARVIS issue #75), and a small
model writes numbers no task computed. Both agent families check their final answer here
(``check_answer``): every path it mentions that is neither an input nor a produced file, and every
decimal number that nothing the answer was written from rounds to, gets a note that corrects it. An
empty answer is replaced by ``fallback_answer``, a plain account of the results. The result is one
``Answer``, which the response stage records once (``AgentRun.stage``: ``Stage.answered``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np

from hugginggpt.paths import expand_home
from hugginggpt.tools.resources.mentions import URL, file_urls, mentioned_paths
from hugginggpt.tools.results import summarize
from hugginggpt.tools.table import MEDIA_KINDS


@dataclass
class Answer:
    """A run's final answer as checked (notes, and the global agent's failure report, included) and
    what the check found: the one record of it, written to the trace once (``trace_fields``)."""

    text: str
    invented: list[str] = field(default_factory=list)
    """Paths the answer named that are neither an input nor a produced file."""
    numbers: list[str] = field(default_factory=list)
    """Decimal numbers the answer wrote that nothing it was written from rounds to."""
    fallback: str | None = None
    """The plain account written because the model answered nothing (``fallback_answer``)."""
    skipped: str | None = None
    """Why the model was not asked to answer (the global agent when no task produced a result)."""

    def trace_fields(self) -> dict[str, Any]:
        """The trace's fields of the answer: ``output``, ``invented_paths``, and ``invented_numbers``,
        ``response_fallback``, ``response_llm`` when there is something to say."""
        fields: dict[str, Any] = {"output": self.text, "invented_paths": self.invented}
        if self.numbers:
            fields["invented_numbers"] = self.numbers
        if self.fallback is not None:
            fields["response_fallback"] = self.fallback
        if self.skipped is not None:
            fields["response_llm"] = self.skipped
        return fields


def checked_answer(text: str, files: set[str], evidence: str | None, outcomes: dict[int, dict[str, Any]]) -> Answer:
    """The model's answer ``text`` checked (``check_answer``), or, when it is empty, the
    ``fallback_answer`` of ``outcomes`` checked: the user still learns what ran and what it produced."""
    fallback = None if text.strip() else fallback_answer(outcomes)
    checked, invented, numbers = check_answer(fallback or text, files, evidence)
    return Answer(checked, invented, numbers, fallback)


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


def unknown_paths(answer: str, files: set[str]) -> list[str]:
    """Paths the answer mentions that are neither an input nor a generated file (nor inside an input
    folder): the paths and ``file:`` URLs it mentions (``mentions.mentioned_paths``, ``file_urls``)."""
    allowed = {str(Path(f)) for f in files} | {Path(f).name for f in files}
    folders = [Path(f) for f in files if Path(f).is_absolute()]

    def known(path: Path) -> bool:
        return str(path) in allowed or any(path.is_relative_to(folder) for folder in folders)

    found: list[str] = []
    for url in file_urls(answer):
        try:
            named = Path(unquote(urlsplit(url).path))
        except ValueError:
            named = None
        if (named is None or not known(named)) and url not in found:
            found.append(url)
    for mention in mentioned_paths(answer):
        if mention in found or mention in allowed or str(Path(mention)) in allowed:
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
    for text in dict.fromkeys(_numbers(URL.sub(" ", answer), _LEADING_DECIMAL)):
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
