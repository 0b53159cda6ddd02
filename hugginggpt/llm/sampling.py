"""Other draws from the same controller: the model with another seed, at a higher temperature or its own.

A planner whose first answer cannot be used asks once more. Asked the same way, a model that samples at a
low temperature with a fixed seed (the embedded llama.cpp controller: 0.2, seed 0) mostly answers the same
again, or gives up with an empty answer; drawn afresh it often writes a different plan. The copy shares the
model's weights and prompt cache (``llamacpp._load_llama`` keys on the file and context, not the seed).
"""

from __future__ import annotations

from typing import Any

from hugginggpt.llm.token_limits import declared_fields

REDRAW_TEMPERATURE = 0.8
"""The temperature of a second draw (measured: docs/results/dev-ab, session 23)."""


def redrawn(llm: Any, temperature: float = REDRAW_TEMPERATURE) -> Any | None:
    """``llm`` sampling at ``temperature`` (never lower than its own) with the next seed when it has one;
    None when the model has no temperature to set (a scripted or custom chat model), so that a second
    draw would be the first again."""
    fields = declared_fields(llm)
    if "temperature" not in fields:
        return None
    own = getattr(llm, "temperature", None)
    update: dict[str, Any] = {"temperature": max(temperature, own) if isinstance(own, (int, float)) else temperature}
    if "seed" in fields:
        update["seed"] = _own_seed(llm) + 1
    return llm.model_copy(update=update)


def reseeded(llm: Any, offset: int) -> Any | None:
    """``llm`` sampling at its own temperature with its seed moved on by ``offset`` (another draw of the same
    answer, for a vote among draws); None when the model has no seed to set or samples greedily
    (temperature 0: every seed draws the same answer)."""
    fields = declared_fields(llm)
    own = getattr(llm, "temperature", None)
    if "seed" not in fields or "temperature" not in fields or not own:
        return None
    return llm.model_copy(update={"seed": _own_seed(llm) + offset})


def _own_seed(llm: Any) -> int:
    """The model's seed, 0 when it has none set (a seed field left at None)."""
    seed = getattr(llm, "seed", None)
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else 0
