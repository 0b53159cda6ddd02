"""Validation and repair of an LLM's plan: what small models get wrong, fixed with a reason each.

Validation never trusts the LLM's ``dep`` list: dependencies are rebuilt from the references the
arguments actually use (as HuggingGPT does), and every change is recorded as ``{"task_id", "reason"}``
so a user (and the trace) can see why the plan differs from the answer.
"""

from __future__ import annotations

import difflib
import graphlib
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from hugginggpt.agent.plan import (
    _MEDIA_KINDS,
    CANONICAL_REF,
    MAX_TASKS,
    Plan,
    PlanTask,
    Repair,
    TaskInfo,
    canonical_refs,
    replace_refs,
    whole_ref,
)
from hugginggpt.agent.request_words import RequestWords, media_kind_of
from hugginggpt.agent.task_swaps import swap_label_questions, swap_misnamed_writing, swap_misread_tasks
from hugginggpt.agent.unrequested import (
    drop_repeated_steps,
    drop_unrequested_leaves,
    splice_unasked_classifiers,
    splice_unrequested_writing,
)
from hugginggpt.errors import PlanError


def _as_task_list(raw: Any) -> list[Any]:
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if isinstance(raw, dict):
        if "tasks" in raw:
            raw = raw["tasks"]
        elif "task" in raw:
            raw = [raw]
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PlanError(f"a plan must be a JSON array of tasks, got {type(raw).__name__}")
    return raw


def _as_int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


class _Validator:
    """One validation pass; collects repairs while it goes."""

    def __init__(self, known: dict[str, TaskInfo], max_tasks: int | None = MAX_TASKS):
        self.known = known
        self.max_tasks = max_tasks
        self.repairs: list[Repair] = []
        self.rejected: set[int] = set()
        self.dep_written: set[int] = set()  # tasks whose answer had a "dep" list (a planner need not write one)

    def note(self, task_id: Any, reason: str) -> None:
        self.repairs.append({"task_id": task_id, "reason": reason})

    def run(self, raw: Any, request: str | None = None) -> Plan:
        items = self.normalise(self.capped(_as_task_list(raw)))
        items = [t for t in items if self.check_task_name(t) and self.check_args(t)]
        items = [t for t in items if t.id not in self.rejected]
        words = RequestWords(request) if request is not None else None
        if words is not None:
            swap_misnamed_writing(items, self.known, words, self.note)
        _ReferenceRepair(self, items, words).run()
        items = drop_repeated_steps(items, self.known, self.note)
        if words is not None:
            swap_misread_tasks(items, self.known, words, self.note)
            items = splice_unrequested_writing(items, self.known, words, self.note)
            swap_label_questions(items, self.known, words, self.note)
            relink_skipped_steps(self, items)
            items = splice_unasked_classifiers(items, self.known, words, self.note)
            items = drop_unrequested_leaves(items, self.known, words, self.note)
        reroute_wrong_kind_reads(self, items, words)
        ids = {t.id for t in items} | self.rejected
        for t in items:
            missing = sorted(n for n in t.references() if n not in ids and n != t.id)
            if t.id in t.references():
                self.reject(t.id, f"task {t.id} ({t.task}) refers to its own output")
            elif missing:
                self.reject(t.id, f"task {t.id} ({t.task}) uses the output of task(s) {missing}, which do not exist")
        self.reject_cycles([t for t in items if t.id not in self.rejected])
        items = self.cascade(items)
        for t in items:
            self.rebuild_dep(t)
        return Plan(tasks=items)

    def capped(self, raw_items: list[Any]) -> list[Any]:
        """The first ``max_tasks`` entries: a plan is bounded before any work is spent on it."""
        if self.max_tasks is None or len(raw_items) <= self.max_tasks:
            return raw_items
        self.note(None, f"the plan has {len(raw_items)} tasks; only the first {self.max_tasks} are kept "
                        f"(at most {self.max_tasks} tasks per plan)")
        return raw_items[: self.max_tasks]

    def reject(self, task_id: int, reason: str) -> None:
        if task_id not in self.rejected:
            self.rejected.add(task_id)
            self.note(task_id, f"rejected: {reason}")

    def normalise(self, raw_items: list[Any]) -> list[PlanTask]:
        """Coerce each entry to a PlanTask with a unique int id; references follow renumbering."""
        tasks: list[PlanTask] = []
        latest: dict[int, int] = {}  # id as the LLM wrote it -> id now, for references made after it
        used: set[int] = {i for i in (_as_int(x.get("id")) for x in raw_items if isinstance(x, dict)) if i is not None}
        next_free = max(used, default=-1) + 1
        seen: set[int] = set()
        for position, item in enumerate(raw_items):
            item = _with_standard_keys(item)
            if not isinstance(item, dict) or not item.get("task"):
                self.note(None, f"dropped entry {position}: not a task object with a 'task' name")
                continue
            args = item.get("args") or {}
            if _is_name_value_list(args):
                args = {a["name"]: a.get("value") for a in args}
            written = _as_int(item.get("id"))
            task_id = written
            if task_id is None or task_id in seen:
                task_id, next_free = next_free, next_free + 1
                what = "missing id" if written is None else f"duplicate id {written}"
                self.note(task_id, f"{what}: task {item['task']!r} renumbered to {task_id}")
            if not isinstance(args, dict):
                self.note(task_id, f"args must be an object of argument names, got {type(args).__name__}; ignored")
                args = {}
            args = replace_refs(canonical_refs(args), latest)
            if written is not None:
                latest[written] = task_id
            seen.add(task_id)
            dep = [d for d in (_as_int(x) for x in _as_list(item.get("dep"))) if d is not None]
            if "dep" in item:
                self.dep_written.add(task_id)
            step = item.get("step")
            step = " ".join(step.split()) if isinstance(step, str) else None
            tasks.append(PlanTask(task=str(item["task"]).strip(), id=task_id, dep=dep, args=args, step=step or None))
        return tasks

    def check_task_name(self, t: PlanTask) -> bool:
        if t.task in self.known:
            return True
        normalised = re.sub(r"[\s_]+", "-", t.task.strip().lower())
        match = normalised if normalised in self.known else None
        if match is None:
            close = difflib.get_close_matches(normalised, list(self.known), n=1, cutoff=0.75)
            match = close[0] if close else None
        if match is None:
            self.reject(t.id, f"unknown task {t.task!r}")
            return False
        self.note(t.id, f"unknown task {t.task!r} replaced by the closest known task {match!r}")
        t.task = match
        return True

    def check_args(self, t: PlanTask) -> bool:
        info = self.known[t.task]
        if not info.args:  # a tool without a declared schema takes whatever it is given
            return True
        names = [a.name for a in info.args]
        for name in list(t.args):
            if name in names:
                continue
            free = [n for n in names if n not in t.args]
            close = difflib.get_close_matches(name, free, n=1, cutoff=0.7)
            if close:
                t.args[close[0]] = t.args.pop(name)
                self.note(t.id, f"argument {name!r} renamed to {close[0]!r} for task {t.task!r}")
            else:
                del t.args[name]
                self.note(t.id, f"argument {name!r} dropped: {t.task!r} takes {names}")
        for arg in info.args:
            choices = info.choices.get(arg.name)
            value = t.args.get(arg.name)
            if choices and isinstance(value, str) and value not in choices and not CANONICAL_REF.search(value):
                del t.args[arg.name]
                self.note(t.id, f"argument {arg.name!r}={value!r} dropped: not one of {list(choices)}")
        missing = [a.name for a in info.args if a.required and t.args.get(a.name) in (None, "", [])]
        if missing:
            self.reject(t.id, f"task {t.id} ({t.task}) is missing required argument(s) {missing}")
            return False
        return True

    def reject_cycles(self, items: list[PlanTask]) -> None:
        graph = {t.id: t.references() for t in items}
        while True:
            try:
                graphlib.TopologicalSorter(graph).prepare()
                return
            except graphlib.CycleError as err:
                cycle = sorted(set(err.args[1]))
                for task_id in cycle:
                    self.reject(task_id, f"tasks {cycle} depend on each other in a cycle")
                    graph.pop(task_id, None)

    def cascade(self, items: list[PlanTask]) -> list[PlanTask]:
        """Reject every task that uses, directly or not, the output of a rejected task.

        One walk from the rejected tasks along "is used by" edges: linear in the plan's size.
        """
        references = {t.id: t.references() for t in items}
        users: dict[int, list[PlanTask]] = {}
        for t in items:
            for ref in references[t.id]:
                users.setdefault(ref, []).append(t)
        pending = list(self.rejected)
        while pending:
            for t in users.get(pending.pop(), ()):
                if t.id not in self.rejected:
                    bad = sorted(references[t.id] & self.rejected)
                    self.reject(t.id, f"task {t.id} ({t.task}) depends on rejected task(s) {bad}")
                    pending.append(t.id)
        return [t for t in items if t.id not in self.rejected]

    def rebuild_dep(self, t: PlanTask) -> None:
        used = sorted(t.references())
        stated = sorted({d for d in t.dep if d != -1})
        if stated != used and t.id in self.dep_written:
            self.note(t.id, f"dep {stated} rebuilt as {used} from the <resource>-N references in its arguments")
        t.dep = used


#: Longer values are never a placeholder or a reference phrase; the checks below skip them (bounded work).
_MAX_PHRASE = 500
_PLACEHOLDER = re.compile(r"^\s*(?:\{[^{}]*\}|\$\{?\w+\}?|#\d+|<[^<>]*>|\[[^\[\]]*(?:output|result)[^\[\]]*\])\s*$",
                          re.IGNORECASE)
_EARLIER_RESULT = re.compile(
    r"\b(output|result|caption|description|transcri\w*|summary|generated|detected|previous|above|"
    r"from (?:the )?(?:image|audio|video|task|step))\b", re.IGNORECASE)


def relink_skipped_steps(validator: _Validator, items: list[PlanTask]) -> None:
    """A step that reads an earlier task's output past the step just before it, which nobody reads,
    reads that previous step instead: small planners point every step of a chain at task 0.

    Only when all of this holds, so fan-outs stay as planned: the argument is one whole reference to
    task ``j``; the previous task came from ``j`` (it depends on it, directly or not) and produces the
    argument's kind; no task uses the previous task's output; and another task already uses ``j``'s.
    """
    position_of = {t.id: i for i, t in enumerate(items)}
    for position in range(2, len(items)):
        task, previous = items[position], items[position - 1]
        info = validator.known[task.task]
        for name, value in list(task.args.items()):
            j = whole_ref(value)
            if j is None or j not in position_of or position_of[j] >= position - 1:
                continue
            arg = info.arg(name)
            kind = arg.kind if arg is not None and arg.kind in _MEDIA_KINDS else "text"
            used_by = {t.id for t in items for ref in t.references() if ref == previous.id}
            readers_of_j = [t for t in items if t is not task and j in t.references()]
            if (used_by or not readers_of_j or not validator.known[previous.task].produces(kind)
                    or j not in _ancestors(previous, items)):
                continue
            task.args[name] = f"<resource>-{previous.id}"
            validator.note(task.id, f"argument {name!r} read task {j}'s output past task {previous.id} "
                                    f"({previous.task}), whose output nobody used: now reads task {previous.id}")


def reroute_wrong_kind_reads(validator: _Validator, items: list[PlanTask], words: RequestWords | None) -> None:
    """An argument that reads an earlier task whose output is not of the argument's kind reads the
    nearest earlier task that makes that kind instead, else (a media argument) the one file of that
    kind the request names; with neither it is left for execution to report.

    Small planners chain by position, not by kind: a text-to-speech reads another text-to-speech's
    audio as its text, an object detection reads a classifier's label as its image. Runs after the
    swaps, which change what tasks make; only text and media arguments, and only tasks whose outputs
    are known, are checked.
    """
    _ReferenceRepair(validator, items, words).reroute_wrong_kinds()


def _ancestors(task: PlanTask, items: list[PlanTask]) -> set[int]:
    by_id = {t.id: t for t in items}
    seen: set[int] = set()
    todo = list(task.references())
    while todo:
        n = todo.pop()
        if n in seen or n not in by_id:
            continue
        seen.add(n)
        todo.extend(by_id[n].references())
    return seen


class _ReferenceRepair:
    """Points arguments at the earlier task whose output they clearly mean (small LLMs miss this)."""

    def __init__(self, validator: "_Validator", items: list[PlanTask], words: RequestWords | None):
        self.validator = validator
        self.items = items
        self.words = words
        self.by_id = {t.id: t for t in items}
        self.ids = set(self.by_id)

    def run(self) -> None:
        self.each_value(self.repair)

    def reroute_wrong_kinds(self) -> None:
        """What :func:`reroute_wrong_kind_reads` says."""
        self.each_value(self.reread, kinds=("text", *_MEDIA_KINDS))

    def each_value(self, fix: Callable[[PlanTask, int, str, str, Any], Any], kinds: tuple[str, ...] | None = None) -> None:
        """``fix(task, position, name, kind, value)`` on each argument value (each item of a list)."""
        for position, task in enumerate(self.items):
            info = self.validator.known[task.task]
            for name, value in list(task.args.items()):
                arg = info.arg(name)
                kind = arg.value_kind if arg is not None else "text"
                if kinds is not None and kind not in kinds:
                    continue
                if isinstance(value, list):
                    task.args[name] = [fix(task, position, name, kind, v) for v in value]
                else:
                    task.args[name] = fix(task, position, name, kind, value)

    def producer(self, position: int, kind: str) -> PlanTask | None:
        """The nearest earlier task whose output can fill an argument of ``kind``."""
        for earlier in reversed(self.items[:position]):
            if self.validator.known[earlier.task].produces(kind):
                return earlier
        return None

    def request_file(self, kind: str) -> str | None:
        """The request's file of ``kind`` when it names exactly one."""
        files = self.words.files[kind] if self.words is not None and kind in _MEDIA_KINDS else []
        return files[0] if len(files) == 1 else None

    def repair(self, task: PlanTask, position: int, name: str, kind: str, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        refs = [int(n) for n in CANONICAL_REF.findall(value)]
        if refs:
            return self.repair_reference(task, position, name, kind, value, refs)
        if self.words is None:
            return value
        source = self.producer(position, kind)
        if kind in _MEDIA_KINDS:
            named = media_kind_of(value) is not None or _looks_like_path(value)
            if (named and self.words.names_file(value)) or "://" in value:
                return value
            if source is not None:
                return self.redirect(task, name, value, source, "names a file the request does not mention")
            file = self.request_file(kind)
            if file is not None:
                self.validator.note(task.id, f"argument {name!r}: {value!r} is not in the request; using its {kind} {file!r}")
                return file
            return value
        if source is None or self.words.says(value):
            return value
        if len(value) <= _MAX_PHRASE and (_PLACEHOLDER.match(value) or _EARLIER_RESULT.search(value)):
            return self.redirect(task, name, value, source, "stands for an earlier result")
        return value

    def repair_reference(self, task: PlanTask, position: int, name: str, kind: str, value: str,
                         refs: list[int]) -> str:
        broken = [n for n in refs if n == task.id or n not in self.ids]
        if not broken:
            return value
        source = self.producer(position, kind)
        if source is not None:
            mapping = {n: source.id for n in broken}
            self.validator.note(task.id, f"argument {name!r}: {_describe(broken, task.id)} pointed to task "
                                         f"{source.id} ({source.task}), the nearest earlier {kind} producer")
            return replace_refs(value, mapping)
        file = self.request_file(kind)
        if whole_ref(value) is not None and file is not None:
            self.validator.note(task.id, f"argument {name!r}: {_describe(broken, task.id)} replaced by the "
                                         f"request's {kind} {file!r}")
            return file
        return value  # left for validation to reject, with its reason

    def reread(self, task: PlanTask, position: int, name: str, kind: str, value: Any) -> Any:
        """``value`` reading the nearest earlier producer of ``kind`` (or the request's one file of that kind)
        instead of tasks that make no ``kind``."""
        if not isinstance(value, str):
            return value
        known, by_id = self.validator.known, self.by_id
        wrong = sorted({n for n in map(int, CANONICAL_REF.findall(value))
                        if n in by_id and n != task.id and known[by_id[n].task].outputs
                        and not known[by_id[n].task].produces(kind)})
        if not wrong:
            return value
        made = ", ".join(f"task {n} ({by_id[n].task})" for n in wrong)
        source = self.producer(position, kind)
        if source is not None:
            self.validator.note(task.id, f"argument {name!r} read {made}, which makes no {kind}: now reads task "
                                         f"{source.id} ({source.task}), the nearest earlier {kind} producer")
            return replace_refs(value, {n: source.id for n in wrong})
        file = self.request_file(kind)
        if whole_ref(value) is not None and file is not None:
            self.validator.note(task.id, f"argument {name!r} read {made}, which makes no {kind}: now the request's "
                                         f"{kind} {file!r}")
            return file
        return value

    def redirect(self, task: PlanTask, name: str, value: str, source: PlanTask, why: str) -> str:
        self.validator.note(task.id, f"argument {name!r}={value[:60]!r} {why}: replaced by <resource>-{source.id} "
                                     f"({source.task})")
        return f"<resource>-{source.id}"


def _looks_like_path(value: str) -> bool:
    """A file name or path of any kind (``notes.txt``, ``dir/x``), as opposed to words describing one."""
    text = value.strip()
    return bool(text) and " " not in text and ("/" in text or "\\" in text or re.search(r"\.\w{1,5}$", text) is not None)


def _describe(broken: list[int], own: int) -> str:
    return ", ".join("its own output" if n == own else f"missing task {n}" for n in broken)


_KEY_ALIASES = {"task": ("task", "tool", "name"), "args": ("args", "arguments", "parameters")}


def _with_standard_keys(item: Any) -> Any:
    """Accept the key names LLMs drift into (``tool``, ``arguments``...) for ``task`` and ``args``."""
    if not isinstance(item, dict):
        return item
    item = dict(item)
    for key, aliases in _KEY_ALIASES.items():
        if key not in item:
            found = next((a for a in aliases if a in item), None)
            if found is not None:
                item[key] = item.pop(found)
    return item


def _is_name_value_list(value: Any) -> bool:
    """``[{"name": ..., "value": ...}]``, the argument list format of some tool-use datasets."""
    return isinstance(value, list) and bool(value) and all(isinstance(a, dict) and "name" in a for a in value)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value) if v]
    return [value]


def validate_plan(raw: Any, known: dict[str, TaskInfo], request: str | None = None,
                  max_tasks: int | None = MAX_TASKS) -> tuple[Plan, list[Repair]]:
    """Validate and repair a parsed plan against the available tasks.

    ``request`` (the user's text) lets references be repaired: a media argument naming a file the
    request never mentions, or a text argument that is a placeholder for an earlier result, becomes
    ``<resource>-N`` of the nearest earlier task producing that kind; a reference to the task itself
    or to no task goes to that producer, else to the one file of that kind the request names.
    It also swaps tasks whose arguments or request show that the planner meant a sibling task
    (``task_swaps.py``: question-answering on an invented context or a classifier's label, document QA
    on an image nobody has, text-generation meant as a media maker, image-to-image with an edit
    instruction, ...), takes out text-generation and image-classification steps that the request never
    asks for and drops media-making leaf steps of a kind it never mentions (``unrequested.py``).

    Returns the plan (only tasks that can run) and the repairs made. Raises ``PlanError`` only
    when ``raw`` is not a plan at all (e.g. a number, or a list of strings is fine: entries dropped).
    An empty plan is valid: it means the LLM answers directly. Only the first ``max_tasks`` tasks
    are kept (a recorded repair); ``None`` keeps all.
    """
    validator = _Validator(known, max_tasks)
    plan = validator.run(raw, request)
    return plan, validator.repairs
