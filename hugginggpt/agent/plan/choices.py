"""Task names the planner chose narrowly, asked about on their own.

The embedded controller lists the choices of a constrained answer that it made by a small margin
(``response_metadata["close_calls"]``, ``llm/grammar_sampling.close_calls``: where in the answer's text, the text
drawn there, the allowed text the model ranked next, the gap in logits). A task name of the answer with such a
choice among its letters, where the runner-up text leads to one or two other task names (``others``), is a
narrow choice between those tasks. Each is asked about alone: the request, the step's own words (its ``step``),
and the candidate tasks with their descriptions, lettered; asked twice, the candidates in opposite orders (a
small model favours a position), the name is replaced only when both orders pick the same other task and that
task can run on the step's arguments as written. The candidates are the model's own runner-up and the
descriptions the task table's: nothing of the request's wording or language is read.

A task that has a twin (``twins``: the one other task of the table taking the same kinds of required argument and
making the same kinds of output, as text-to-speech and text-to-audio do: a text in, audio out; both offered) is asked about
against its twin in the same way, narrow or not (``check_twins``): the decoder's margin is no sign there, since the
two names share no letters past their first word (the model wrote "dub it" as text-to-audio by a wide margin).
The pairs come from the table's kinds, not from any list of names. A task with ``siblings`` in the task table
(object detection and keypoint detection: visual question answering) is asked about against each the same way, with
the ``contrast`` of both; a sibling reads more than the task (a question), and the step's own words, in the
request's language, are that question when the model picks the sibling ("tell me what age and mood the person
seems to have", written as object detection). A sibling reading a medium the step lacks (a caption reads a picture;
"write a caption for it" after a generated picture was written as text generation of the picture's prompt) is asked
about only for a step that reads no earlier result and comes after exactly one task whose result is that medium
(a drawing or an edit; not a detection's boxed picture, nor a depth map): that task's output is what the sibling
reads.

A runner-up that leads to more than two names (``"text-"``, where the model chose ``"text-to-speech"``) is the
start of a family rather than a choice between tasks, and is not asked about: asked to choose among eight
descriptions, the model changed correct names (docs/results/dev-ab "Session 33").
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hugginggpt.agent.plan.model import Repair, refs_in
from hugginggpt.prompts import render_prompt
from hugginggpt.tools.resources.mentions import same_file
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec, media_makers, task_table

MAX_GAP = 1.5
"""A choice counts as narrow when the token drawn led the runner-up by at most this many logits."""
MAX_OTHERS = 2
"""The most other task names a runner-up may lead to for the choice to be asked about."""
LETTERS = "ABCDEFGHIJ"
"""The letters of a question's answers, in order (a narrow choice has at most three)."""

_TASK_VALUE = re.compile(r'"task"\s*:\s*"([^"\\]*)"')

#: Scores whole replies to a chat prompt: ``(messages, answers) -> log-probabilities``
#: (``LlamaCppChatModel.answer_scores``).
Scorer = Callable[[Sequence[tuple[str, str]], Sequence[str]], list[float]]


@dataclass(frozen=True)
class NarrowChoice:
    """A task name the answer chose narrowly: the task's position in the answer's list, the name written, and
    the other names its runner-up leads to."""

    index: int
    chosen: str
    others: tuple[str, ...]


def answer_tasks(data: Any) -> list[Any] | None:
    """The list of tasks of a plan answer (``{"tasks": [...]}`` or a bare list); None when there is none."""
    tasks = data.get("tasks") if isinstance(data, Mapping) else data
    return tasks if isinstance(tasks, list) else None


def narrow_choices(text: str, close_calls: Sequence[Mapping[str, Any]], data: Any,
                   known: Mapping[str, TaskSpec]) -> list[NarrowChoice]:
    """The task names of the answer ``text`` (parsed: ``data``) that the model chose narrowly (``close_calls``
    within ``MAX_GAP``), each with the one or two known task names its runner-up leads to. Empty when the task
    names written in ``text`` are not those of ``data`` one for one."""
    tasks = answer_tasks(data)
    spans = list(_TASK_VALUE.finditer(text))
    if tasks is None or len(spans) != len(tasks) or any(
            not isinstance(t, Mapping) or t.get("task") != m.group(1) for t, m in zip(tasks, spans)):
        return []
    found = []
    for index, match in enumerate(spans):
        start, end, chosen = match.start(1), match.end(1), match.group(1)
        others: set[str] = set()
        for call in close_calls:
            at, gap = call.get("at"), call.get("gap")
            if not isinstance(at, int) or not isinstance(gap, (int, float)) or not start <= at <= end or gap > MAX_GAP:
                continue
            led = _led_to(text[start:at] + str(call.get("other", "")), known)
            if 0 < len(led) <= MAX_OTHERS:
                others.update(led)
        others.discard(chosen)
        if chosen in known and others:
            found.append(NarrowChoice(index, chosen, tuple(sorted(others))[:MAX_OTHERS]))
    return found


def _led_to(prefix: str, known: Mapping[str, TaskSpec]) -> list[str]:
    """The known task names a name's text could go on to from ``prefix`` (its letters so far and the runner-up
    text; a closing quote in it ends the name there)."""
    if '"' in prefix:
        name = prefix.split('"', 1)[0]
        return [name] if name in known else []
    return [name for name in known if name.startswith(prefix)]


def swappable(args: Any, chosen: TaskSpec, other: TaskSpec) -> bool:
    """Whether ``other`` can run on the arguments written for ``chosen``: each of its required arguments is
    there, and each argument both tasks take is of the same kind in both."""
    if not isinstance(args, Mapping):
        return False
    if any(arg.name not in args for arg in other.required_args):
        return False
    for name in args:
        mine, theirs = chosen.find_arg(name), other.find_arg(name)
        if mine is not None and theirs is not None and mine.value_kind != theirs.value_kind:
            return False
    return True


def choice_messages(request: str, step: str, options: Sequence[str],
                    known: Mapping[str, TaskSpec]) -> list[tuple[str, str]]:
    """The question for one narrow choice: the request, the step, and the lettered candidate tasks with their
    descriptions; twins or siblings (``partners``, each with a ``contrast`` in the task table) with what sets each
    apart."""
    related = partners(known)
    contrast = all(known[name].contrast for name in options) and all(
        other in related.get(options[0], ()) or options[0] in related.get(other, ()) for other in options[1:])
    return lettered("planning_choice", [f"{name}: {known[name].contrast if contrast else known[name].description}"
                                        for name in options], request=request, step=step)


def lettered(prompt: str, options: Sequence[str], **fields: str) -> list[tuple[str, str]]:
    """The chat messages of the question ``prompt`` (a template of ``hugginggpt/prompts``: system, ``---``, human)
    with ``fields`` filled and ``options`` as its lettered answers (``A) ...``, one a line)."""
    lines = "\n".join(f"{letter}) {option}" for letter, option in zip(LETTERS, options))
    system, _, human = render_prompt(prompt, options=lines, **fields).partition("\n---\n")
    return [("system", system.strip()), ("human", human.strip())]


def chosen_in_each(scorer: Scorer, messages_of: Callable[[Sequence[str]], list[tuple[str, str]]],
                   orders: Sequence[Sequence[str]], wanted: str) -> bool:
    """Whether the model picks ``wanted`` asked with each order of the answers in ``orders`` (``messages_of`` makes
    the question for one order), the highest-scored letter taken; asking stops at the first order that does not."""
    for options in orders:
        scores = scorer(messages_of(options), list(LETTERS[:len(options)]))
        if options[max(range(len(options)), key=scores.__getitem__)] != wanted:
            return False
    return True


def picked(scorer: Scorer, request: str, step: str, options: Sequence[str], known: Mapping[str, TaskSpec]) -> str:
    """The candidate the model picks for a step, asked with ``options`` in their order and in the reverse one:
    the task both orders pick, else the first option (the name the answer wrote)."""
    picks = []
    for order in (list(options), list(reversed(options))):
        letters = list(LETTERS[:len(order)])
        scores = scorer(choice_messages(request, step, order, known), letters)
        picks.append(order[max(range(len(order)), key=scores.__getitem__)])
    return picks[0] if picks[0] == picks[1] else options[0]


async def check_choices(scorer: Scorer, request: str, text: str, data: Any,
                        close_calls: Sequence[Mapping[str, Any]], known: Mapping[str, TaskSpec],
                        lists: Sequence[Sequence[str]] = ()) -> tuple[Any, list[Repair], dict[int, tuple[str, ...]]]:
    """``data`` with each narrow choice of ``text`` that the model, asked alone, settles on another task
    renamed to it, and with it each step that does the same on another file of a list the user writes
    (``lists``: ``PlanContext.lists``; ``alike_steps``); the repairs saying so, and the steps asked about (their
    positions in the answer, each with the tasks it was asked about, the name written first)."""
    choices = narrow_choices(text, close_calls, data, known)
    tasks = answer_tasks(data)
    if not choices or tasks is None:
        return data, [], {}
    tasks = [dict(t) if isinstance(t, Mapping) else t for t in tasks]
    narrow = {choice.index for choice in choices}
    repairs: list[Repair] = []
    asked: dict[int, tuple[str, ...]] = {}
    for choice in choices:
        task = tasks[choice.index]
        others = [o for o in choice.others if swappable(task.get("args") or {}, known[choice.chosen], known[o])]
        if not others:
            continue
        alike = [i for i in alike_steps(tasks, choice.index, lists) if i not in narrow]
        asked[choice.index] = (choice.chosen, *others)
        pick = await _renamed(scorer, request, task, asked[choice.index], known)
        if pick is None:
            continue
        repairs.append({"task_id": task.get("id"), "pass": "choice", "reason": (
            f"the planner chose {choice.chosen} over {pick} by a narrow margin; asked about this step alone, "
            f"in both orders, it picks {pick}")})
        for index in alike:
            rename(tasks[index], pick, known)
            repairs.append({"task_id": tasks[index].get("id"), "pass": "choice", "reason": (
                f"does what task {task.get('id')} does on another file of the same list: {pick}, as that step")})
    return with_tasks(data, tasks, repairs), repairs, asked


def alike_steps(tasks: Sequence[Any], index: int, lists: Sequence[Sequence[str]]) -> list[int]:
    """The positions of the answer's other tasks that do what the task at ``index`` does on another file of one
    list the user writes (``a.jpg, b.png, c.jpg``): the same task name and the same arguments, but for those
    whose values are different files of that list. The model chose the name once for them all, by writing the
    first; asked about that choice, its answer holds for each."""
    task = tasks[index]
    if not isinstance(task, Mapping) or not isinstance(task.get("args"), Mapping):
        return []
    args = task["args"]

    def listed_with(mine: Any, theirs: Any) -> bool:
        return (isinstance(mine, str) and isinstance(theirs, str) and any(
            any(same_file(mine, f) for f in run) and any(same_file(theirs, f) for f in run)
            and not same_file(mine, theirs) for run in lists))

    found = []
    for position, other in enumerate(tasks):
        if (position == index or not isinstance(other, Mapping) or other.get("task") != task.get("task")
                or not isinstance(other.get("args"), Mapping) or set(other["args"]) != set(args)):
            continue
        differing = [name for name in args if other["args"][name] != args[name]]
        if differing and all(listed_with(args[name], other["args"][name]) for name in differing):
            found.append(position)
    return found


async def _renamed(scorer: Scorer, request: str, task: dict[str, Any], options: Sequence[str],
                   known: Mapping[str, TaskSpec], filled: Mapping[str, Any] | None = None) -> str | None:
    """Ask about ``task`` (an answer's task, its name first in ``options``) alone (``picked``); when the model
    picks another option, rename ``task`` to it in place (``rename``, with ``filled``) and return the new name;
    else None."""
    step = str(task.get("step") or "").strip() or options[0]
    pick = await asyncio.to_thread(picked, scorer, request, step, list(options), known)
    if pick == options[0]:
        return None
    rename(task, pick, known, filled)
    return pick


def rename(task: dict[str, Any], name: str, known: Mapping[str, TaskSpec],
            filled: Mapping[str, Any] | None = None) -> None:
    """``task`` (an answer's task) renamed to ``name`` in place: the arguments that task takes are kept, and each
    required one it lacks is its value in ``filled`` (``_fills``), else the step's own words (a sibling's
    question)."""
    task["task"] = name
    args = {k: v for k, v in (task.get("args") or {}).items() if known[name].find_arg(k) is not None}
    step = str(task.get("step") or "").strip()
    task["args"] = {**args, **{arg.name: (filled or {}).get(arg.name, step)
                               for arg in known[name].required_args if arg.name not in args}}


def with_tasks(data: Any, tasks: list[Any], repairs: list[Repair]) -> Any:
    """``data`` (an answer) with ``tasks`` as its tasks when ``repairs`` says some were changed, else ``data`` as it
    was."""
    if not repairs:
        return data
    return {**data, "tasks": tasks} if isinstance(data, Mapping) else tasks


def twins(known: Mapping[str, TaskSpec]) -> dict[str, str]:
    """Each task of the task table (``tools/tasks.yaml``) that shares the kinds of its required arguments and of its
    outputs with exactly one other task of the table, mapped to that task (its twin), where both are offered in
    ``known``. The table decides, not the offer: a domain offering two of three alike tasks has no twins."""
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for name, spec in task_table().items():
        if spec.outputs:
            key = (tuple(sorted(arg.value_kind for arg in spec.required_args)), tuple(sorted(spec.outputs)))
            groups.setdefault(key, []).append(name)
    return {name: pair[1 - pair.index(name)] for pair in groups.values() if len(pair) == 2 for name in pair
            if pair[0] in known and pair[1] in known}


def partners(known: Mapping[str, TaskSpec], twin_of: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Each task of ``known`` mapped to the tasks a step written as it is asked about against: its twin (``twins``,
    or ``twin_of`` when the caller has them) and its offered siblings (``siblings`` in the task table: object
    detection's is visual question answering)."""
    found = {name: [twin] for name, twin in (twins(known) if twin_of is None else twin_of).items()}
    for name, spec in known.items():
        for other in spec.siblings:
            if other in known and other not in found.get(name, []):
                found.setdefault(name, []).append(other)
    return found


def _fills(args: Any, chosen: TaskSpec, other: TaskSpec, step: str,
           made: Mapping[str, Sequence[str]]) -> dict[str, Any] | None:
    """What ``other`` reads and ``args`` (written for ``chosen``) lack, when ``other`` runs on them once it is
    filled (``swappable``), else None: an argument ``chosen.sibling_args`` carries over is the value written for
    ``chosen`` (a list's one value; a list of several cannot be carried); a required text is the step's own words
    (a sibling's question); a required medium, for a step whose arguments read no earlier result, the output of the
    one earlier task making that medium (``made``: each medium's ``<resource>-N`` of the tasks before the step that
    make it)."""
    if not isinstance(args, Mapping):
        return None
    filled: dict[str, Any] = {}
    for theirs, mine in chosen.sibling_args.get(other.name, {}).items():
        value = args.get(mine)
        if isinstance(value, list):
            if len(value) != 1:
                return None
            value = value[0]
        if isinstance(value, str) and value.strip():
            filled[theirs] = value
    for arg in other.required_args:
        if arg.name in args or arg.name in filled:
            continue
        if arg.value_kind == "text" and step:
            filled[arg.name] = step
        elif arg.value_kind in MEDIA_KINDS and len(made.get(arg.value_kind, ())) == 1 and not refs_in(dict(args)):
            filled[arg.name] = made[arg.value_kind][0]
        else:
            return None
    return filled if swappable({**args, **filled}, chosen, other) else None


def _made_before(tasks: Sequence[Any], index: int, known: Mapping[str, TaskSpec],
                 makers: Collection[str]) -> dict[str, list[str]]:
    """Each medium made by the tasks of an answer before position ``index`` whose result is that medium (``makers``:
    ``media_makers``; a detection's boxed picture or a depth map is no picture to caption or edit), with their
    ``<resource>-N``."""
    made: dict[str, list[str]] = {}
    for task in tasks[:index]:
        spec = known.get(task.get("task")) if isinstance(task, Mapping) else None
        if spec is not None and isinstance(task.get("id"), int) and task["task"] in makers:
            for kind in set(spec.outputs) & set(MEDIA_KINDS):
                made.setdefault(kind, []).append(f"<resource>-{task['id']}")
    return made


async def check_twins(scorer: Scorer, request: str, data: Any, known: Mapping[str, TaskSpec],
                      skip: Collection[int] = ()) -> tuple[Any, list[Repair], int]:
    """``data`` with each task that has a twin or a sibling (``partners``) renamed to it when the model, asked about
    the step alone with both tasks lettered in both orders (``picked``, each shown with its ``contrast``), settles
    on the other; a required text the other reads and the step lacks (a sibling's question) is the step's own
    words. Tasks at the positions in ``skip`` (already asked about) are left. The repairs saying so, and how many
    steps were asked about."""
    twin_of = twins(known)
    makers = media_makers(known)
    pairs = partners(known, twin_of)
    tasks = answer_tasks(data)
    if tasks is None or not pairs:
        return data, [], 0
    tasks = [dict(t) if isinstance(t, Mapping) else t for t in tasks]
    repairs: list[Repair] = []
    asked = 0
    for index, task in enumerate(tasks):
        chosen = task.get("task") if isinstance(task, Mapping) else None
        if not isinstance(chosen, str) or index in skip:
            continue
        step = str(task.get("step") or "").strip()
        made = _made_before(tasks, index, known, makers)
        fills = {o: _fills(task.get("args") or {}, known[chosen], known[o], step, made) for o in pairs.get(chosen, ())}
        others = [o for o, filled in fills.items() if filled is not None]
        if not others:
            continue
        asked += 1
        filled = fills[others[0]]
        pick = await _renamed(scorer, request, task, [chosen, others[0]], known, filled)
        if pick is None:
            continue
        kind = ("take the same inputs and make the same kind of output" if pick == twin_of.get(chosen)
                else "are siblings")
        carried = known[chosen].sibling_args.get(pick, {})
        said = [f"{name}: the step's own words" if value == step
                else f"{name}: what it read as {carried[name]}" if name in carried
                else f"{name}: {value}, the one made before it" for name, value in (filled or {}).items()]
        repairs.append({"task_id": task.get("id"), "pass": "choice", "reason": (
            f"{chosen} and {pick} {kind}; asked about this step alone, in both orders, the planner picks {pick}"
            + (f" ({'; '.join(said)})" if said else ""))})
    return with_tasks(data, tasks, repairs), repairs, asked
