"""One request to an agent, as every agent reads it: the agent contract's input, normalised, and the
run folder it gets (docs/ARCHITECTURE.md, "Agent contract")."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage, convert_to_messages, trim_messages

from hugginggpt.errors import AgentInputError
from hugginggpt.tools.resources import Workspace, new_run_id
from hugginggpt.tools.schemas import MAX_TEXT_CHARS


def _bounded(text: str) -> str:
    """The request, refused when longer than ``MAX_TEXT_CHARS``: every stage's cost grows with it."""
    if len(text) > MAX_TEXT_CHARS:
        raise AgentInputError(f"the request is {len(text):,} characters long; at most {MAX_TEXT_CHARS:,} are accepted")
    return text


@dataclass
class AgentRequest:
    """The contract's input, normalised: the request, earlier messages, user files."""

    input: str
    chat_history: list[BaseMessage] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, value: Any) -> "AgentRequest":
        if isinstance(value, str):
            return cls(input=_bounded(value))
        if not isinstance(value, dict) or not isinstance(value.get("input"), str):
            raise AgentInputError('agent input must be a string or {"input": str, "chat_history": [...], "files": [...]}')
        history = convert_to_messages(value.get("chat_history") or [])
        files = [str(f) for f in value.get("files") or []]
        return cls(input=_bounded(value["input"]), chat_history=list(history), files=files)

    def user_text(self) -> str:
        """The request as the LLM reads it: the files it may pass to tools are listed after it."""
        if not self.files:
            return self.input
        listed = "\n".join(f"- {f}" for f in self.files)
        return f"{self.input}\n\nFiles provided by the user:\n{listed}"

    def new_workspace(self, parent: str | Path | None = None) -> Workspace:
        """A fresh run folder under ``parent`` (default: ``$HUGGINGGPT_HOME``) where the request's
        files are the allowed inputs."""
        root = Path(parent) / new_run_id() if parent is not None else None
        return Workspace(root, inputs=self.files)


def trim_history(chat_history: list[Any] | None, max_tokens: int) -> list[BaseMessage]:
    """The most recent turns of the conversation that fit ``max_tokens`` (approximately counted)."""
    if not chat_history or max_tokens <= 0:
        return []
    messages = [m for m in convert_to_messages(chat_history) if not isinstance(m, SystemMessage)]
    return trim_messages(
        messages, max_tokens=max_tokens, token_counter="approximate", strategy="last", start_on="human"
    )
