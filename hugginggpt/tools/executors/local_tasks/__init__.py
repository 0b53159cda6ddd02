"""Per-family handlers of the local executor: which tasks run locally, and how.

``HANDLERS`` maps a task name (the Hub's pipeline tag, or JARVIS's ControlNet name) to its ``TaskHandler``; a task missing here
has no local implementation, so the local executor reports it cannot run it.
"""

from __future__ import annotations

from hugginggpt.tools.executors.local_tasks import (
    audio,
    controlnet,
    diffusion,
    embeddings,
    extractive_qa,
    forecasting,
    gguf_text,
    keypoints,
    multimodal,
    nlp,
    ranking,
    seq2seq,
    video,
    vision,
    voice_activity,
)
from hugginggpt.tools.executors.local_tasks.common import LoadOptions, TaskHandler

HANDLERS: dict[str, TaskHandler] = {
    **nlp.HANDLERS,
    **embeddings.HANDLERS,
    **extractive_qa.HANDLERS,
    **seq2seq.HANDLERS,
    **vision.HANDLERS,
    **audio.HANDLERS,
    **multimodal.HANDLERS,
    **diffusion.HANDLERS,
    **controlnet.HANDLERS,
    **ranking.HANDLERS,
    **keypoints.HANDLERS,
    **voice_activity.HANDLERS,
    **video.HANDLERS,
    **forecasting.HANDLERS,
}
HANDLERS = gguf_text.with_gguf(HANDLERS)  # text tasks also run on GGUF files (llama.cpp)


def handler_for(task: str) -> TaskHandler | None:
    """The local handler of ``task``, or None when the task has no local implementation."""
    return HANDLERS.get(task)


__all__ = ["HANDLERS", "LoadOptions", "TaskHandler", "handler_for"]
