"""One request to an agent, as every agent reads it: the agent contract's input, normalised, and the
run folder it gets (docs/ARCHITECTURE.md, "Agent contract")."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, convert_to_messages, trim_messages

from hugginggpt.errors import AgentInputError
from hugginggpt.llm.content import content_text
from hugginggpt.tools.resources import Workspace, new_run_id
from hugginggpt.tools.resources.workspace import caller_directory
from hugginggpt.tools.schemas import MAX_TEXT_CHARS


def _bounded(text: str) -> str:
    """The request, refused when longer than ``MAX_TEXT_CHARS``: every stage's cost grows with it."""
    if len(text) > MAX_TEXT_CHARS:
        raise AgentInputError(f"the request is {len(text):,} characters long; at most {MAX_TEXT_CHARS:,} are accepted")
    return text


@dataclass
class AgentRequest:
    """The contract's input, normalised: the request, earlier messages, user files.

    ``files`` stay as the caller spelled them (the prompt lists them so, and a plan repeats them);
    relative ones are the caller's current directory's when the request was made (``base``), as in
    a shell, and the run's workspace allows them from there.
    """

    input: str
    chat_history: list[BaseMessage] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    as_messages: bool = False
    """Whether the request came as ``{"messages": [...]}`` (a LangGraph state): the answer then goes
    back as ``{"messages": [AIMessage]}`` too."""
    base: Path | None = field(default_factory=caller_directory, compare=False, repr=False)

    @classmethod
    def parse(cls, value: Any) -> "AgentRequest":
        """The request from a string, ``{"input", "chat_history", "files"}``, or a LangGraph messages
        state ``{"messages": [...], "files": [...]}``: the last human message is the request and the
        messages before it its history (what follows it, such as another node's note, is not read)."""
        if isinstance(value, str):
            return cls(input=_bounded(value))
        if isinstance(value, dict) and "input" not in value and "messages" in value:
            return cls._from_messages(value)
        if not isinstance(value, dict) or not isinstance(value.get("input"), str):
            raise AgentInputError('agent input must be a string, {"input": str, "chat_history": [...], '
                                  '"files": [...]} or {"messages": [...]}')
        history = convert_to_messages(value.get("chat_history") or [])
        return cls(input=_bounded(value["input"]), chat_history=list(history), files=_files(value))

    @classmethod
    def _from_messages(cls, value: dict[str, Any]) -> "AgentRequest":
        try:
            messages = convert_to_messages(value["messages"] or [])
        except (TypeError, ValueError, NotImplementedError) as error:
            raise AgentInputError(f"messages: {error}") from error
        last = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), None)
        if last is None:
            raise AgentInputError("messages: there is no human message to answer")
        text = content_text(messages[last]).strip()
        if not text:
            raise AgentInputError("messages: the last human message has no text")
        return cls(input=_bounded(text), chat_history=list(messages[:last]), files=_files(value), as_messages=True)

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
        return Workspace(root, inputs=self.files, base=self.base)


def _files(value: dict[str, Any]) -> list[str]:
    files = value.get("files") or []
    if isinstance(files, (str, Path)) or not isinstance(files, (list, tuple)):
        raise AgentInputError('"files" must be a list of paths')
    return [str(f) for f in files]


def trim_history(chat_history: list[Any] | None, max_tokens: int) -> list[BaseMessage]:
    """The most recent turns of the conversation that fit ``max_tokens`` (approximately counted)."""
    if not chat_history or max_tokens <= 0:
        return []
    messages = [m for m in convert_to_messages(chat_history) if not isinstance(m, SystemMessage)]
    return trim_messages(
        messages, max_tokens=max_tokens, token_counter="approximate", strategy="last", start_on="human"
    )
