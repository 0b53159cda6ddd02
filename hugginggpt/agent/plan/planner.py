"""Stage 1, task planning: turn a request into a validated plan with one LLM call (two at most, unless a vote is asked for).

A ``Planner`` is made once per agent (its tasks, structured mode, demonstrations, the cache of constrained
LLMs) and called per request: ``await planner.plan(request, config=..., trace=...)``.

The prompt (``prompt.py``) is answered under the plan's JSON schema when the model supports structured
output (``parse.py``, ``llm/structured.py``); otherwise the text is read leniently. With a model that decodes
under a grammar of the whole schema (the embedded llama.cpp model), the schema is made for the request: a
media argument holds one of the request's files or an earlier task's ``<resource>-N`` of a kind an earlier
task makes, and the first task reads only what the request gives (``tools/schemas.plan_json_schema``,
``kind_states``). A task name that such a model chose narrowly between it and one or two others is asked
about alone before the passes (``choices.py``), and so is a task with a twin (text-to-speech and text-to-audio)
against its twin. The answer names what the user wants
back (``outputs.py``) before its tasks. The plan goes through the passes (``passes.py``); a plan with a
rejected task, an empty plan for a request that gives files, a plan that leaves a given file unread, or one
with two steps doing the same work (the same task on the same arguments, after the passes: a task written
twice where the request asks for two different things; no correct plan has such a pair) is re-asked once:
a controller that samples (a temperature to set) is asked the same prompt again, drawn afresh at a higher
temperature with the next seed (``llm/sampling.py``); any other model is shown its answer and the
reason. (Shown the reason, Qwen2.5-Coder-1.5B mostly gives up with an empty plan, whatever its temperature;
drawn afresh it writes another plan: docs/results/dev-ab "Session 23".) The second answer replaces the
first unless it loses more tasks to rejections, keeps fewer tasks while losing some to rejections too, has
no task where the first kept some, or leaves what it was asked to mend (a file still unread, a step still
written twice) while the first lost no task; a re-ask the LLM fails to answer (an ``LLMError``, such as a
prompt longer than its context) leaves the first answer, with a note. A plan that makes none of a kind the
answer says the user wants is kept, with a note in its repairs (the model's statement of what is wanted is
less reliable than its plan: re-asking on it lost plans; docs/results/dev-ab "Session 15"), except where a
controller that scores replies and draws afresh, asked alone whether the user wants that picture, sound or
video back (``outputs.confirmed_want``, both orders), says yes: then, when nothing was re-asked yet, the plan
is drawn afresh once, and the new plan replaces the first when it can run as it is and makes that kind.
A plan whose only fault is a step making a picture, sound or video that the passes took out because its text
reads a result an earlier task made from a written text (text-to-speech reading a text-to-video's video: "dub
it") gets that step back, reading that text (``PlanContext.made_from``), when the model, asked alone in the
same way, confirms the user wants that kind back and no other task makes it; this is tried before the re-ask
and on the re-ask's answer.
With ``HUGGINGGPT_PLAN_DRAWS`` at 3 or more, the plan kept so far goes to a vote (``vote.py``), for every request
(``HUGGINGGPT_PLAN_VOTE=always``, the default) or only where the model chose a task name narrowly (``unsure``): the same prompt
drawn again with the next seeds at the controller's own temperature, the plan most usable draws agree on kept
(ties: the plan kept so far; a plan that cannot run as it is casts no vote).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from hugginggpt import config as settings
from hugginggpt.agent.llm_call import acall_llm
from hugginggpt.agent.plan.chains import check_chains
from hugginggpt.agent.plan.choices import check_choices, check_twins, partners
from hugginggpt.agent.plan.check import problems, repeated_steps, unread_files
from hugginggpt.agent.plan.context import PlanContext, given_files, input_kinds, request_inputs
from hugginggpt.agent.plan.drawing_choice import check_drawings
from hugginggpt.agent.plan.repeats import check_repeats
from hugginggpt.agent.plan.demonstrations import DEFAULT_K
from hugginggpt.agent.plan.model import MAX_TASKS, Plan, Repair
from hugginggpt.agent.plan.outputs import (confirmed_want, echoes_message, only_chat, stated_wants, undelivered,
                                          wants_note)
from hugginggpt.agent.plan.parse import parse_plan_text, plan_schema, plan_schema_key, without_unfinished_task
from hugginggpt.agent.plan.passes import is_rejection, validated
from hugginggpt.agent.plan.prompt import planning_messages, request_context
from hugginggpt.agent.plan.vote import plan_shape, settled, winner
from hugginggpt.agent.request import AgentRequest, trim_history
from hugginggpt.agent.trace import Trace, UsageCounter
from hugginggpt.errors import LLMError, PlanError
from hugginggpt.llm.content import content_text, cut_off, finish_reason
from hugginggpt.llm.sampling import redrawn, reseeded
from hugginggpt.llm.structured import ConstrainedCache, Structured, exact_schemas
from hugginggpt.llm.token_limits import bounded, token_limit
from hugginggpt.prompts import render_prompt
from hugginggpt.tools.table import MEDIA_KINDS, TaskSpec


@dataclass
class PlanResult:
    """What planning produced: the plan, the repairs made, the LLM's raw answers, and the kinds of result the
    planner said the user wants back (None when its answer named none)."""

    plan: Plan
    repairs: list[Repair] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    prompt: list[dict[str, str]] = field(default_factory=list)
    structured: bool = False
    wants: list[str] | None = None


#: A plan's answer tokens: the JSON of ``MAX_TASKS`` steps (words, task name, id, argument names), plus the
#: texts its arguments copy from the request, which are at most as many tokens as the request has characters.
PLAN_BASE_TOKENS = 64
PLAN_TOKENS_PER_TASK = 48
PLAN_TOKENS_ROUNDING = 256


def plan_max_tokens(request: str) -> int:
    """The most tokens a plan for ``request`` can need (rounded up to a multiple of 256, so few bounds recur)."""
    need = PLAN_BASE_TOKENS + PLAN_TOKENS_PER_TASK * MAX_TASKS + len(request)
    return -(-need // PLAN_TOKENS_ROUNDING) * PLAN_TOKENS_ROUNDING


def _rejections(repairs: list[Repair]) -> list[str]:
    return [r["reason"] for r in repairs if is_rejection(r)]


@dataclass
class _Answer:
    """One answer of the planner, validated: the plan, the repairs, and the wanted kinds it named."""

    plan: Plan
    repairs: list[Repair]
    wants: list[str] | None
    data: Any = None
    """The answer as read, before the passes (what ``_restored`` validates again)."""
    read: list[Repair] = field(default_factory=list)
    """What reading the answer changed, before the passes (a task the token limit cut off, a choice asked about)."""


class Planner:
    """Stage 1 of the global-plan agent, made once per agent and called once per request."""

    def __init__(self, llm: BaseChatModel, tasks: dict[str, TaskSpec], *, structured: Structured = "auto",
                 demonstrations: int = DEFAULT_K, history_tokens: int = 2000,
                 constrained: ConstrainedCache | None = None):
        self.llm = llm
        self.tasks = tasks
        self.structured = structured
        self.demonstrations = demonstrations
        self.history_tokens = history_tokens
        self._constrained = constrained
        # other draws of the controller, constrained to each plan schema, by what they are (rebuilt with the LLM)
        self._copies: tuple[BaseChatModel, dict[Any, ConstrainedCache | None]] | None = None

    @property
    def constrained(self) -> ConstrainedCache:
        """The controller constrained to each plan schema (the agent's cache when it serves this LLM and mode)."""
        if self._constrained is None or not self._constrained.serves(self.llm, self.structured):
            self._constrained = ConstrainedCache(self.llm, self.structured)
        return self._constrained

    def _copy(self, key: Any, make: Callable[[Any], Any | None]) -> ConstrainedCache | None:
        """The copy of the controller that ``make`` returns (None: it has nothing to set), constrained to each
        plan schema; made once per ``key`` while the planner serves the same LLM."""
        if self._copies is None or self._copies[0] is not self.llm:
            self._copies = (self.llm, {})
        copies = self._copies[1]
        if key not in copies:
            model = make(self.llm)
            copies[key] = ConstrainedCache(model, self.structured) if model is not None else None
        return copies[key]

    @property
    def again(self) -> ConstrainedCache | None:
        """The controller drawing afresh (``llm/sampling.redrawn``: a higher temperature, the next seed),
        constrained to each plan schema, for the second ask; None when the model has no temperature to set."""
        return self._copy("again", redrawn)

    def voter(self, offset: int) -> ConstrainedCache | None:
        """The controller with its seed moved on by ``offset`` at its own temperature (``llm/sampling.reseeded``:
        a vote's draw), constrained to each plan schema; None when it has no seed to move."""
        return self._copy(("vote", offset), lambda llm: reseeded(llm, offset))

    @property
    def wants(self) -> bool:
        """Whether the answer names the wanted kinds first (``outputs.py``): table tasks only."""
        return bool(self.tasks) and all(spec.in_table for spec in self.tasks.values())

    def messages(self, request: AgentRequest) -> list[BaseMessage]:
        """The planning prompt for ``request``: the static prefix, the demonstrations, the history, the request."""
        return planning_messages(request.input, self.tasks, chat_history=request.chat_history, files=request.files,
                                 history_tokens=self.history_tokens, demonstrations=self.demonstrations,
                                 wants=self.wants)

    def static_messages(self) -> list[BaseMessage]:
        """The prompt's part that is the same for every request (for a model that keeps what it read)."""
        return planning_messages("", self.tasks, demonstrations=0, wants=self.wants)

    async def plan(self, request: AgentRequest, *, config: RunnableConfig | None = None,
                   trace: Trace | None = None) -> PlanResult:
        """Plan ``request``: the validated plan, its repairs, the raw answers and token usage."""
        usage = UsageCounter()
        config = ensure_config(config)
        callbacks = config.get("callbacks")
        if callbacks is None:
            callbacks = [usage]
        elif isinstance(callbacks, list):
            callbacks = [*callbacks, usage]
        else:
            callbacks = callbacks.copy()
            callbacks.add_handler(usage, inherit=True)
        config = {**config, "callbacks": callbacks}
        messages = self.messages(request)
        attempt = _Attempt(self, request, trace)
        answer = await attempt.run(messages, config)
        counted = usage.as_dict()
        if attempt.choices_asked:
            counted["choice_checks"] = attempt.choices_asked
        if attempt.twins_asked:
            counted["twin_checks"] = attempt.twins_asked
        if attempt.wants_asked:
            counted["wants_checks"] = attempt.wants_asked
        if attempt.inputs_asked:
            counted["input_checks"] = attempt.inputs_asked
        if attempt.drawings_asked:
            counted["drawing_checks"] = attempt.drawings_asked
        if attempt.repeats_asked:
            counted["repeat_checks"] = attempt.repeats_asked
        if attempt.votes:
            counted["plan_votes"] = attempt.votes
        return PlanResult(plan=answer.plan, repairs=answer.repairs, raw_outputs=attempt.raw_outputs,
                          usage=counted, prompt=[{"role": m.type, "content": content_text(m)} for m in messages],
                          structured=attempt.constrained is not None, wants=answer.wants)


class _Attempt:
    """Planning one request: the first ask and, when its plan cannot be used, the re-ask."""

    def __init__(self, planner: Planner, request: AgentRequest, trace: Trace | None):
        self.planner = planner
        self.tasks = planner.tasks
        self.trace = trace
        llm = planner.llm
        text = request.user_text()
        # what the plan may read: the request with its files, and the conversation so far
        history = trim_history(request.chat_history, planner.history_tokens)
        self.context = request_context(request.input, request.files, history)
        # the files this request gives (not the conversation's): each is for a task to read
        self.given = given_files(text, tuple(request.files))
        self.words = request.input  # the user's own text, without the attached files listed after it
        # what the passes and the re-ask's checks read: the request, its files, and the conversation's earlier
        # asks with their answers and its last answer (what a text reading a result the plan lacks reads)
        turns, answer_before = conversation(history)
        self.plan_context = PlanContext.of(self.tasks, self.context, given=self.given, words=self.words,
                                           answer_before=answer_before, turns=turns)
        self.max_tokens = plan_max_tokens(text)
        self.inputs = (request_inputs(self.context, tuple(request.files))
                       if self.tasks and exact_schemas(llm) else None)
        wants = planner.wants
        self.schema = (lambda: plan_schema(self.tasks, self.inputs, wants=wants),
                       plan_schema_key(self.tasks, self.inputs, wants=wants))
        self.constrained = (planner.constrained.get(*self.schema, max_tokens=self.max_tokens)
                            if self.tasks else None)
        self.raw_outputs: list[str] = []
        self.choices_asked = 0  # narrow task choices asked about alone (two scoring passes each)
        self.twins_asked = 0  # steps of a task with a twin asked about alone (two scoring passes each)
        self.wants_asked = 0  # wanted kinds no task makes, asked about alone (two scoring passes each)
        self.inputs_asked = 0  # steps reading a file beside an unread new version of it, asked alone (``chains.py``)
        self.drawings_asked = 0  # edits of a given photo asked whether they draw along a map (``drawing_choice.py``)
        self.repeats_asked = 0  # generations written again asked what they give (``repeats.py``)
        self.confirmed: dict[str, bool] = {}  # the answers to those questions, by kind
        self.votes = 0  # usable plans a vote among draws counted (0: no vote)

    def _drawn_again(self) -> Any | None:
        """The model for the second ask: the controller drawing afresh, held to the same schema as the first
        ask when that one was; None when the controller cannot draw afresh."""
        return self._held(self.planner.again)

    def _held(self, copy: ConstrainedCache | None) -> Any | None:
        """A copy of the controller (``Planner.again``, ``Planner.voter``) asked as the first ask was: held to its
        schema when that one was, else bounded to its tokens; None for no copy."""
        if copy is None:
            return None
        if self.constrained is not None:
            return copy.get(*self.schema, max_tokens=self.max_tokens)
        return bounded(copy.llm, self.max_tokens)

    async def _ask(self, messages: list[BaseMessage], config: RunnableConfig, stage: str,
                   model: Any | None = None) -> tuple[Any, list[Repair]]:
        """One LLM call (of ``model``, else the controller as planned for this request): the parsed plan data
        and what reading it changed (a task that the token limit cut off is dropped); raises PlanError with
        the reason when there is no plan in the answer."""
        llm = self.planner.llm
        if model is None:
            model = self.constrained if self.constrained is not None else bounded(llm, self.max_tokens)
        reply = await acall_llm(stage, model.ainvoke(messages, config), [m.model_dump() for m in messages],
                                trace=self.trace, max_tokens=token_limit(bounded(llm, self.max_tokens)))
        message, parsed = reply.message, reply.parsed
        raw_text = reply.text
        if not raw_text and parsed is not None:
            raw_text = json.dumps(parsed, ensure_ascii=False, default=str)
        self.raw_outputs.append(raw_text)
        data = parsed if parsed is not None else parse_plan_text(raw_text)
        if not cut_off(message):
            return await self._checked(raw_text, data, message)
        # Both readers (LangChain's partial-JSON parser and ours) close a cut-off answer with ends of their own.
        data, dropped = without_unfinished_task(raw_text, data)
        limit = token_limit(bounded(llm, self.max_tokens))
        reason = ("the planner's answer stopped repeating itself" if finish_reason(message) == "repetition" else
                  "the planner's answer stopped at its token limit" + (f" (max_tokens={limit})" if limit else ""))
        if dropped and not (data.get("tasks") if isinstance(data, dict) else data):
            raise PlanError(f"{reason} before it finished one task")
        return data, [{"task_id": None, "reason": f"{reason}: its unfinished last task is dropped" if dropped else reason, "pass": "read"}]

    async def _checked(self, raw_text: str, data: Any, message: Any) -> tuple[Any, list[Repair]]:
        """``data`` with the task names the model chose narrowly (when the answer lists such choices), the
        tasks that have a twin or a sibling (``choices.py``), a generation written again (``repeats.py``), the steps
        reading a file beside an unread new version of it (``chains.py``) and the edits of a given photo
        (``drawing_choice.py``), asked about alone, when the controller scores replies; the repairs that made. A step
        whose narrow choice was already asked about between it and its twin or sibling is not asked twice."""
        close = (getattr(message, "response_metadata", None) or {}).get("close_calls")
        scorer = getattr(self.planner.llm, "answer_scores", None)
        if scorer is None or not settings.switch("choice_check"):
            return data, []
        repairs: list[Repair] = []
        skip: set[int] = set()
        if close:
            data, repairs, asked = await check_choices(scorer, self.words, raw_text, data, close, self.tasks,
                                                       self.plan_context.lists)
            self.choices_asked += len(asked)
            pairs = partners(self.tasks)
            skip = {index for index, (chosen, *others) in asked.items() if set(pairs.get(chosen, ())) & set(others)}
        data, more, asked = await check_twins(scorer, self.words, data, self.tasks, skip)
        self.twins_asked += asked
        data, repeated, asked = await check_repeats(scorer, self.words, data, self.tasks)
        self.repeats_asked += asked
        data, chained, asked = await check_chains(scorer, self.words, data, self.tasks)
        self.inputs_asked += asked
        data, drawn, asked = await check_drawings(scorer, self.words, data, self.tasks, self.given)
        self.drawings_asked += asked
        return data, [*repairs, *more, *repeated, *chained, *drawn]

    def _validate(self, asked: tuple[Any, list[Repair]]) -> _Answer:
        data, read_repairs = asked
        plan, repairs = validated(data, self.plan_context)
        return _Answer(plan, [*read_repairs, *repairs], stated_wants(data), data, read_repairs)

    def _error(self, answer: _Answer) -> str | None:
        """Why ``answer``'s plan cannot be used as it is (a re-ask says so), None when it can."""
        rejections = _rejections(answer.repairs)
        if rejections:
            return "; ".join(rejections)
        left = problems(answer.plan, self.plan_context)
        if left:  # what the passes could not make runnable (none is expected)
            return "; ".join(left)
        if not answer.plan.tasks and self.given:
            return (f"the plan is empty, but the request gives {', '.join(repr(f) for f in self.given[:5])}: a "
                    "question or request about a file is answered by a task that runs on it ([] is only for "
                    "requests no task serves)")
        unread = unread_files(answer.plan, self.given)
        if unread and answer.plan.tasks:
            return (f"the request gives {', '.join(repr(f) for f in unread[:5])}, which no task reads: each file "
                    "the user gives is read by the task that works on it (one task per file when each needs it)")
        repeated = repeated_steps(answer.plan)
        if repeated:
            earlier, step = repeated[0]
            return (f"task {step.id} ({step.task}) does what task {earlier.id} does, on the same arguments: each step "
                    "does its own part of the request, and a step that works on an earlier result reads it as "
                    "<resource>-N")
        return None

    async def run(self, messages: list[BaseMessage], config: RunnableConfig) -> _Answer:
        """The answer planning keeps (``_choose``, then ``_delivered``, then ``_voted``, then ``_small_talk``),
        with a note when it makes none of a wanted kind."""
        answer = await self._delivered(await self._choose(messages, config), messages, config)
        return self._noted(await self._small_talk(await self._voted(answer, messages, config)))

    async def _small_talk(self, answer: _Answer) -> _Answer:
        """``answer``, or an empty plan when its plan is one task handed the whole message as it is
        (``outputs.echoes_message``), the request gives no file, and the model, asked alone, says the message is
        small talk (``outputs.only_chat``): the response answers a greeting, no model has to. Only for a
        controller that scores replies, with the wants check on."""
        scorer = getattr(self.planner.llm, "answer_scores", None)
        if (scorer is None or self.given or not settings.switch("wants_check")
                or not echoes_message(answer.plan, self.words, self.tasks)):
            return answer
        self.wants_asked += 1
        try:
            chat = await asyncio.to_thread(only_chat, scorer, self.words)
        except LLMError:
            return answer
        if not chat:
            return answer
        task = answer.plan.tasks[0]
        why = (f"the plan handed the whole message to {task.task}; asked alone, the model says it is small talk (a "
               "greeting, thanks, a question about the assistant): no task, the response answers it")
        return replace(answer, plan=Plan(), repairs=[*answer.repairs, {"task_id": task.id, "pass": "planner",
                                                                         "reason": why}])

    async def _voted(self, answer: _Answer, messages: list[BaseMessage], config: RunnableConfig) -> _Answer:
        """``answer``, or the plan most draws agree on (``vote.py``) when ``HUGGINGGPT_PLAN_DRAWS`` asks for 3 or
        more and ``HUGGINGGPT_PLAN_VOTE`` takes this request (``always``; ``unsure``: a narrow task-name choice was
        asked about while planning it): ``answer`` (the plan kept so far, re-asked or not) is the first vote, and the same prompt is drawn
        again with the next seeds at the controller's own temperature (``llm/sampling.reseeded``) until the
        draws left cannot change the vote. A plan that cannot be used as it is (or a draw that fails) casts no
        vote: when ``answer`` is such a plan, the usable draws decide among themselves (ties: the earliest)."""
        draws = settings.count("plan_draws")
        if draws < 3 or (settings.choice("plan_vote") == "unsure" and not self.choices_asked):
            return answer
        first_usable = self._error(answer) is None
        answers = [answer] if first_usable else []
        for offset in range(1, draws):
            if settled([a.plan for a in answers], draws - offset):
                break
            model = self._held(self.planner.voter(offset))
            if model is None:
                return answer
            try:
                drawn = self._validate(await self._ask(messages, config, "planning-vote", model))
            except (PlanError, LLMError):
                continue
            if self._error(drawn) is None:
                answers.append(drawn)
        self.votes = len(answers)
        if not answers:
            return answer
        kept = winner([a.plan for a in answers])
        if first_usable and kept == 0:
            return answer
        chosen = answers[kept]
        agree = sum(plan_shape(a.plan) == plan_shape(chosen.plan) for a in answers)
        why = "the first draw's differs" if first_usable else "the plan kept before cannot run as it is"
        chosen.repairs = [{"task_id": None, "pass": "planner", "reason": (
            f"{agree} of {len(answers)} usable draws agree on this plan; {why}")}, *chosen.repairs]
        return chosen

    async def _delivered(self, answer: _Answer, messages: list[BaseMessage], config: RunnableConfig) -> _Answer:
        """``answer``, or a plan drawn afresh when ``answer`` makes none of a media kind it says the user wants,
        no file of the request or the conversation has that kind, and the model, asked alone, confirms the user
        wants it back (``_confirmed``). Only for a controller that scores replies and draws afresh,
        and only when nothing was asked again yet; the new plan is used when it can run as it is and makes
        that kind, else ``answer`` stays with a note."""
        scorer = getattr(self.planner.llm, "answer_scores", None)
        if scorer is None or len(self.raw_outputs) != 1 or not settings.switch("wants_check"):
            return answer
        given = input_kinds(self.context)
        missing = [kind for kind in undelivered(answer.plan, answer.wants or [], self.tasks)
                   if kind in MEDIA_KINDS and kind not in given]
        again = self._drawn_again() if missing else None
        if again is None:
            return answer
        kind = missing[0]
        if not await self._confirmed(kind):
            return answer
        why = f"the answer says the user wants {kind} back and no task makes it; asked alone, the model confirms it"
        try:
            second = self._validate(await self._ask(messages, config, "planning-redraw", again))
        except (PlanError, LLMError) as exc:
            answer.repairs = [*answer.repairs, {"task_id": None, "pass": "planner", "reason": (
                f"asked again after: {why}; the second ask failed ({exc})")}]
            return answer
        if second.plan.tasks and self._error(second) is None and not undelivered(second.plan, [kind], self.tasks):
            second.repairs = [{"task_id": None, "pass": "planner", "reason": f"asked again after: {why} (drawn afresh)"},
                              *second.repairs]
            return second
        answer.repairs = [*answer.repairs, {"task_id": None, "pass": "planner", "reason": (
            f"asked again after: {why}; the second answer was not used (it "
            + ("makes no " + kind if second.plan.tasks and self._error(second) is None else "cannot run as it is")
            + ")")}]
        return answer

    async def _confirmed(self, kind: str) -> bool:
        """Whether the model, asked alone, says the user wants a result of media ``kind`` back
        (``outputs.confirmed_want``; asked once per kind and request). False when the question does not fit
        the context."""
        if kind not in self.confirmed:
            self.wants_asked += 1
            scorer = self.planner.llm.answer_scores  # type: ignore[attr-defined]
            try:
                self.confirmed[kind] = await asyncio.to_thread(confirmed_want, scorer, self.words, kind)
            except LLMError:
                self.confirmed[kind] = False
        return self.confirmed[kind]

    async def _restored(self, answer: _Answer) -> _Answer | None:
        """``answer`` validated again with ``PlanContext.made_from`` (a step making only media whose text reads a
        picture, sound or video made from a written text reads that text instead of being taken out), when that
        gives back steps making kinds no other task of ``answer`` makes, the new plan can run as it is, and the
        model, asked alone, confirms the user wants each such kind back (``_confirmed``); else None. Only for a
        controller that scores replies, with the wants check on."""
        if (not _rejections(answer.repairs) or answer.data is None or not settings.switch("wants_check")
                or getattr(self.planner.llm, "answer_scores", None) is None):
            return None
        plan, repairs = validated(answer.data, replace(self.plan_context, made_from=True))
        notes = [r for r in answer.repairs if r.get("pass") == "planner"]
        restored = _Answer(plan, [*notes, *answer.read, *repairs], answer.wants, answer.data, answer.read)
        kept = {t.id for t in answer.plan.tasks}
        made = {kind for t in answer.plan.tasks for kind in self.tasks[t.task].outputs}
        back = [t for t in plan.tasks if t.id not in kept]
        kinds = sorted({kind for t in back for kind in self.tasks[t.task].outputs} - made)
        if not back or not kinds or self._error(restored) is not None:
            return None
        for kind in kinds:
            if not await self._confirmed(kind):
                return None
        steps = ", ".join(f"task {t.id} ({t.task})" for t in back)
        restored.repairs = [*restored.repairs, {"task_id": None, "pass": "planner", "reason": (
            f"{steps}, taken out for reading a made result as its text, reads the text that result was made from: "
            f"asked alone, the model confirms the user wants {' and '.join(kinds)} back")}]
        return restored

    async def _choose(self, messages: list[BaseMessage], config: RunnableConfig) -> _Answer:
        """The first answer when it can be used; else the re-ask's, unless ``_why_first_stays`` keeps the first."""
        if not self.tasks:
            return _Answer(Plan(), [{"task_id": None, "reason": "no tools available: answering directly",
                                     "pass": "planner"}], None)
        error: str | None = None
        best: _Answer | None = None
        try:
            best = self._validate(await self._ask(messages, config, "planning"))
            error = self._error(best)
        except PlanError as exc:
            error = str(exc)
        if error is None and best is not None:
            return best
        restored = await self._restored(best) if best is not None else None
        if restored is not None:
            return restored
        again = self._drawn_again()
        if again is not None:  # the same prompt drawn afresh: shown its error, a small model gives up ([])
            asked, stage, how = messages, "planning-redraw", " (asked again, drawn afresh)"
        else:
            asked = [*messages, AIMessage(self.raw_outputs[-1]), HumanMessage(render_prompt("planning_reask", error=error))]
            stage, how = "planning-reask", ""
        try:
            second = self._validate(await self._ask(asked, config, stage, again))
        except PlanError as exc:
            if best is None:
                raise PlanError(f"planning failed twice: {error}; then: {exc}") from None
            return best
        except LLMError as exc:  # e.g. the re-ask does not fit the model's context: the first answer stands
            if best is None:
                raise
            best.repairs = [*best.repairs, {"task_id": None, "pass": "planner", "reason": (
                f"re-asked after: {error}{how}; the re-ask failed, so the first answer is used ({exc})")}]
            return best
        why_not = None if best is None else _why_first_stays(second, best, mended=self._error(second) is None)
        if why_not is None:
            second.repairs = [{"task_id": None, "reason": f"re-asked after: {error}{how}", "pass": "planner"}, *second.repairs]
            return await self._restored(second) or second
        best.repairs = [*best.repairs, {"task_id": None, "pass": "planner", "reason": (
            f"re-asked after: {error}{how}; the second answer was not used ({why_not})")}]
        return best

    def _noted(self, answer: _Answer) -> _Answer:
        """``answer`` with a note in its repairs when its plan makes none of a kind it says the user wants."""
        wants = answer.wants or []
        missing = undelivered(answer.plan, wants, self.tasks)
        if missing and answer.plan.tasks:
            answer.repairs = [*answer.repairs, {"task_id": None, "pass": "planner",
                                                "reason": wants_note(missing, wants, self.tasks)}]
        return answer


def conversation(history: list[BaseMessage]) -> tuple[list[tuple[str, str]], str | None]:
    """The conversation's asks, each with the answer that followed it (oldest first; an ask not yet answered
    is left out), and its last answer (None when there is none), which may follow no ask."""
    turns: list[tuple[str, str]] = []
    ask: str | None = None
    last: str | None = None
    for message in history:
        if isinstance(message, HumanMessage):
            ask = content_text(message)
        elif isinstance(message, AIMessage):
            last = content_text(message)
            if ask is not None:
                turns.append((ask, last))
                ask = None
    return turns, last


def _why_first_stays(second: _Answer, first: _Answer, *, mended: bool) -> str | None:
    """Why the first answer is kept rather than the re-ask's, None when the re-ask's is used: it has no task
    and the first kept some; more of its tasks were rejected; or the first lost no task (it was re-asked for
    a file it left unread, or a step written twice) and the second is not ``mended`` (it has a problem the
    re-ask would name); or it keeps fewer tasks than the first and loses some to rejections too (two answers
    that each lost a step: the one that kept more of the plan)."""
    if not second.plan.tasks and first.plan.tasks:
        return "it has no task"
    if len(_rejections(second.repairs)) > len(_rejections(first.repairs)):
        return "it loses more tasks to rejections"
    if len(second.plan.tasks) < len(first.plan.tasks) and _rejections(second.repairs):
        return "it keeps fewer tasks and loses some to rejections too"
    if not mended and not _rejections(first.repairs):
        return "it does not mend what the re-ask named"
    return None
