"""Checks of the agent options (``--llm``, ``--local-model``) before anything loads or any LLM is called.

Each problem is one ``ConfigError`` line that names the flag, the value and the cause, so a typo
costs a second, not a model load and a planning call that end in an obscure failure.
"""

from __future__ import annotations

from pathlib import Path

from hugginggpt.config import Settings
from hugginggpt.errors import ConfigError, UnknownTaskError
from hugginggpt.paths import expand_home

#: Files whose presence at the top of a folder means it holds a model (transformers, diffusers,
#: sentence-transformers, timm/open_clip and raw weight files).
MODEL_FILES = ("config.json", "model_index.json", "modules.json", "adapter_config.json")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".onnx")


def check_settings(settings: Settings) -> None:
    """Raise ``ConfigError`` for a ``--llm`` GGUF that is not one, and for each ``--local-model`` entry
    whose task is unknown, whose folder is missing or holds no model, or whose task cannot be told."""
    check_llm(settings.llm)
    for task, value in settings.local_model_entries():
        check_local_model(task, value)


def check_llm(spec: str | None) -> None:
    """A local ``gguf:`` controller must be an existing GGUF file (a Hub file is checked when fetched)."""
    if not spec:
        return
    from hugginggpt.errors import LLMError
    from hugginggpt.llm.specs import is_gguf_file, is_hub_file, parse_spec

    try:
        parsed = parse_spec(spec)
    except LLMError as exc:
        raise ConfigError(f"--llm {spec}: {exc}") from None
    if parsed.provider != "gguf" or is_hub_file(parsed.model):
        return
    path = expand_home(parsed.model)
    if path.is_dir():
        raise ConfigError(f"--llm {spec}: {parsed.model} is a folder, not a GGUF file")
    if not path.is_file():
        raise ConfigError(f"--llm {spec}: GGUF file not found: {parsed.model}")
    if not is_gguf_file(path):
        raise ConfigError(f"--llm {spec}: {parsed.model} is not a GGUF file (it does not start with the GGUF magic bytes)")


def check_local_model(task: str | None, value: str) -> None:
    """One ``--local-model [TASK=]DIR`` (or ``TASK=gguf:PATH``) entry."""
    flag = f"--local-model {task + '=' if task else ''}{value}"
    if task is not None:
        from hugginggpt.tools.table import get_task, task_table

        try:
            get_task(task)
        except UnknownTaskError:
            raise ConfigError(f"{flag}: {UnknownTaskError(task, list(task_table()))}; "
                              "`hugginggpt tools` lists the tasks") from None
    if not value:
        raise ConfigError(f"{flag}: no model folder given (write TASK=DIR)")
    if value.startswith("gguf:") or value.lower().endswith(".gguf"):
        from hugginggpt.llm.specs import is_gguf_file

        path = expand_home(value.removeprefix("gguf:"))
        if not path.is_file():
            raise ConfigError(f"{flag}: GGUF file not found: {path}")
        if not is_gguf_file(path):
            raise ConfigError(f"{flag}: {path} is not a GGUF file (it does not start with the GGUF magic bytes)")
        return
    folder = expand_home(value)
    if not folder.exists():
        raise ConfigError(f"{flag}: no such folder: {folder}")
    if not folder.is_dir():
        raise ConfigError(f"{flag}: {folder} is a file; give the model's folder (config.json, weights)")
    if not holds_model(folder):
        raise ConfigError(f"{flag}: {folder} holds no model (no {', '.join(MODEL_FILES[:2])} or weight files)")
    if task is None:
        from hugginggpt.tools.executors.local_tasks.folder_task import folder_task

        if folder_task(folder) is None:
            raise ConfigError(f"{flag}: cannot tell the task of the model in {folder}; write TASK={value}")


def holds_model(folder: Path) -> bool:
    """Whether a folder holds a model: a known config file or weight files at its top."""
    try:
        names = [entry.name for entry in folder.iterdir() if entry.is_file()]
    except OSError:
        return False
    return any(name in MODEL_FILES or name.endswith(WEIGHT_SUFFIXES) for name in names)
