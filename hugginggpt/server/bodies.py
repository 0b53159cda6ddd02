"""The request bodies the server takes, as pydantic models: what /openapi.json (and so /docs and
generated clients) shows, and the shape every accepted body has.

A body is never parsed by FastAPI (which would read it whole, unbounded): a route reads it within
its byte limit first (``sse.read_json``, ``files.read_form``), checks it with the messages and the
limits of ``routes_runs``/``messages``, then validates it against its model here (``validated``), so
a body the server accepts is one its schema describes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hugginggpt.server.errors import ApiError

Role = Literal["system", "developer", "user", "assistant", "tool"]


class TextPart(BaseModel):
    type: Literal["text", "input_text"]
    text: str


class ImageUrl(BaseModel):
    model_config = ConfigDict(extra="allow")
    url: str = Field(description="a base64 data: URL (sent to the agent as an uploaded file), or an http(s) "
                                 "URL (put in the request's text: the agent downloads it)")


class ImagePart(BaseModel):
    type: Literal["image_url"]
    image_url: ImageUrl | str


class InputAudio(BaseModel):
    model_config = ConfigDict(extra="allow")
    data: str = Field(description="the audio file, base64")
    format: str | None = Field(None, description="its format (wav, mp3, flac, ...); default wav")


class AudioPart(BaseModel):
    type: Literal["input_audio"]
    input_audio: InputAudio


ContentPart = Annotated[TextPart | ImagePart | AudioPart, Field(discriminator="type")]


class ChatMessage(BaseModel):
    """One chat message; files (``image_url`` data URLs, ``input_audio``) only in the last one."""

    model_config = ConfigDict(extra="allow")
    role: Role
    content: str | list[ContentPart] | None = None


class JarvisRequest(BaseModel):
    """JARVIS's body: the last message is the request (from the user), the earlier ones its history."""

    model_config = ConfigDict(extra="allow")
    messages: list[ChatMessage] = Field(min_length=1)
    agent: str | None = Field(None, description="the agent (GET /v1/models); default: the server's")


class ChatCompletionRequest(BaseModel):
    """OpenAI's chat completion body (fields this server does not use, such as ``temperature``, are
    taken and ignored)."""

    model_config = ConfigDict(extra="allow")
    messages: list[ChatMessage] = Field(min_length=1)
    model: str | None = Field(None, description="the agent (GET /v1/models); 'hugginggpt': the server's default")
    stream: bool = Field(False, description="answer as server-sent events (chat.completion.chunk)")


class HistoryMessage(BaseModel):
    role: Literal["user", "assistant"]
    content: str


class RunRequest(BaseModel):
    """A run of an agent on a request (JSON; files come in a multipart form, ``RunForm``)."""

    model_config = ConfigDict(extra="forbid")
    input: str = Field(min_length=1, description="what to do, in plain words")
    chat_history: list[HistoryMessage] | None = None
    agent: str | None = Field(None, description="the agent (GET /v1/models); default: the server's")
    plan_only: bool | None = Field(False, description="stop after planning and model selection (JARVIS's /tasks)")


class RunForm(BaseModel):
    """A run as a multipart form: the fields of ``RunRequest`` (``chat_history`` as JSON text) and the files."""

    model_config = ConfigDict(extra="forbid")
    input: str = Field(min_length=1)
    chat_history: str | None = Field(None, description="a JSON list of {role, content}")
    agent: str | None = None
    plan_only: Literal["true", "false", "1", "0"] | None = None
    files: list[bytes] = Field(default_factory=list, description="image, audio, video or UTF-8 text files",
                               json_schema_extra={"items": {"type": "string", "format": "binary"}})


#: Every body model, for the schema's components.
MODELS: tuple[type[BaseModel], ...] = (JarvisRequest, ChatCompletionRequest, RunRequest, RunForm)


def validated(model: type[BaseModel], body: Any) -> BaseModel:
    """``body`` (already read within its limit, and checked) as ``model``; 400 naming what does not fit."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in error['loc']) or 'body'}: {error['msg']}"
                             for error in exc.errors()[:5])
        raise ApiError(400, f"the body does not fit its schema: {problems}") from None


def request_body(json_model: type[BaseModel], form_model: type[BaseModel] | None = None) -> dict[str, Any]:
    """A route's ``openapi_extra``: its request body as ``json_model`` (and, for forms, ``form_model``)."""
    content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{json_model.__name__}"}}}
    if form_model is not None:
        content["multipart/form-data"] = {"schema": {"$ref": f"#/components/schemas/{form_model.__name__}"}}
    return {"requestBody": {"required": True, "content": content}}


def add_components(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document ``schema`` with the body models (and the models they use) in its components."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in MODELS:
        model_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(model_schema.pop("$defs", {}))
        components[model.__name__] = model_schema
    return schema
