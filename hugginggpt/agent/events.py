"""The stage events of an agent run: what ``astream_stage_events`` yields, the trace records, and
``astream_events`` shows as ``on_custom_event`` (named after the stage, the event dict as data).

Every event is a plain dict ``{"event": name, "t": seconds since the run started, ...}``, so a UI,
a log, or a test reads them without importing anything from here. The same names and fields come
from all three agents (docs/ARCHITECTURE.md, "Stage events").
"""

from __future__ import annotations

PLAN = "plan"                  # plan: [nodes], repairs: [...]
SELECTION = "selection"        # selections: {id: {model, reason}}
LLM_STEP = "llm_step"          # tool-loop agents, one per LLM turn: step, text, tool_calls, seconds
PARSE_ERROR = "parse_error"    # ReAct: a turn that could not be read: error, text
TASK_START = "task_start"      # id, task, args, dep, model
TASK_END = "task_end"          # id, task, result (the envelope), seconds
TASK_FAILED = "task_failed"    # id, task, error, seconds
TASK_SKIPPED = "task_skipped"  # id, task, reason
RESPONSE_DELTA = "response_delta"  # text: the next piece of the answer as the controller writes it (global
                                   # agent; not kept in the trace, whose response event has the whole answer)
RESPONSE = "response"          # output, invented_paths
LLM_CUT_OFF = "llm_cut_off"    # stage, finish_reason ("length" | "repetition" ...), max_tokens, note:
                               # an LLM answer that ended before the model finished it
FINAL = "final"                # output: the whole invoke output (stage-event iterators only)

STAGE_EVENTS = frozenset((PLAN, SELECTION, LLM_STEP, PARSE_ERROR, TASK_START, TASK_END, TASK_FAILED,
                          TASK_SKIPPED, RESPONSE_DELTA, RESPONSE, LLM_CUT_OFF, FINAL))
