"""What the tool-loop agents show the LLM: observations of tool calls, argument help, and the answer
of a run stopped by a limit (a failed call's error line: ``tool_call.tool_error``)."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from hugginggpt.agent.tool_trace import ToolStep, ToolTrace

#: Longest observation fed back to the LLM; the full result stays in ``results``.
MAX_OBSERVATION_CHARS = 4000


def clip_observation(text: str, limit: int = MAX_OBSERVATION_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a note of the full length, so one huge tool output
    cannot flood the LLM's context."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ... (truncated, {len(text)} characters)"


def repeat_note(earlier: ToolStep) -> str:
    """The observation for a repeated call: what the model was shown of the earlier one (its
    ``observation``), with a note not to ask again."""
    return (f"{earlier.observation}\n(Note: this is the same call as step {earlier.id}, "
            "so its earlier result is returned instead of running it again. "
            "Use it, call something else, or give the final answer.)")


def stopped_message(reason: str, tool_trace: ToolTrace, last_text: str = "") -> str:
    """The final answer of a run stopped by a limit: why, and what was done."""
    parts = [f"stopped: {reason}.", tool_trace.summary()]
    if last_text.strip():
        parts.append(f"Last model message: {last_text.strip()}")
    return "\n".join(parts)


def tool_args_help(tool: BaseTool) -> str:
    """One line per argument of a tool (from its args schema): name, type, required, description."""
    call_schema = tool.tool_call_schema  # the arguments the LLM fills (injected ones left out)
    schema = call_schema if isinstance(call_schema, dict) else call_schema.model_json_schema()
    required = set(schema.get("required", []))
    lines = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "/".join(
            p.get("type", "?") for p in prop.get("anyOf", []) if p.get("type") != "null") or "any"
        flag = "required" if name in required else "optional"
        description = prop.get("description", "").strip()
        if prop.get("enum"):
            description = f"{description} One of: {', '.join(map(str, prop['enum']))}.".strip()
        lines.append(f"    - {name} ({kind}, {flag}){': ' + description if description else ''}")
    return "\n".join(lines)
