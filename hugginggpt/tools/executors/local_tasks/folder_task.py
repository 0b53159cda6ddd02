"""Which task a model folder is for (its Hub pipeline tag): the one answer, for the catalog's local
folders (``register_local``, the HF cache scan), ``--local-model`` checks and the local executor.

In order: the model card's ``pipeline_tag``; a ControlNet's condition from its name; config.json's
architecture in transformers' auto mappings (without transformers, by the architecture's name
ending); a diffusers pipeline's classes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# (transformers auto-mapping, task), most specific first: an architecture may sit in several mappings.
_MAPPINGS = [
    ("MODEL_FOR_CTC_MAPPING_NAMES", "automatic-speech-recognition"),
    ("MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES", "automatic-speech-recognition"),
    ("MODEL_FOR_TEXT_TO_WAVEFORM_MAPPING_NAMES", "text-to-speech"),
    ("MODEL_FOR_TEXT_TO_SPECTROGRAM_MAPPING_NAMES", "text-to-speech"),
    ("MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES", "audio-classification"),
    ("MODEL_FOR_AUDIO_FRAME_CLASSIFICATION_MAPPING_NAMES", "voice-activity-detection"),
    ("MODEL_FOR_KEYPOINT_DETECTION_MAPPING_NAMES", "keypoint-detection"),
    ("MODEL_FOR_ZERO_SHOT_IMAGE_CLASSIFICATION_MAPPING_NAMES", "zero-shot-image-classification"),
    ("MODEL_FOR_ZERO_SHOT_OBJECT_DETECTION_MAPPING_NAMES", "zero-shot-object-detection"),
    ("MODEL_FOR_OBJECT_DETECTION_MAPPING_NAMES", "object-detection"),
    ("MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES", "image-segmentation"),
    ("MODEL_FOR_UNIVERSAL_SEGMENTATION_MAPPING_NAMES", "image-segmentation"),
    ("MODEL_FOR_INSTANCE_SEGMENTATION_MAPPING_NAMES", "image-segmentation"),
    ("MODEL_FOR_IMAGE_SEGMENTATION_MAPPING_NAMES", "image-segmentation"),
    ("MODEL_FOR_DEPTH_ESTIMATION_MAPPING_NAMES", "depth-estimation"),
    ("MODEL_FOR_MASK_GENERATION_MAPPING_NAMES", "mask-generation"),
    ("MODEL_FOR_VIDEO_CLASSIFICATION_MAPPING_NAMES", "video-classification"),
    ("MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES", "image-classification"),
    ("MODEL_FOR_DOCUMENT_QUESTION_ANSWERING_MAPPING_NAMES", "document-question-answering"),
    ("MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "image-text-to-text"),
    ("MODEL_FOR_TABLE_QUESTION_ANSWERING_MAPPING_NAMES", "table-question-answering"),
    ("MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES", "question-answering"),
    ("MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES", "token-classification"),
    ("MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES", "text-classification"),
    ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "text2text-generation"),
    ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "text-generation"),
    ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", "fill-mask"),
]
# Captioning models the image-to-text handler runs (others in the image-text-to-text mapping are chat VLMs).
_CAPTIONERS = {"vision-encoder-decoder", "blip", "git", "pix2struct"}
_TRANSLATORS = {"marian", "m2m_100", "nllb-moe", "fsmt"}
# Forecasters are in no auto mapping transformers exports for them: known by their model type.
_FORECASTERS = {"patchtst", "patchtsmixer"}
# Architecture name endings -> task: how config.json is read when transformers is not installed.
_ARCHITECTURE_SUFFIXES = [
    ("ForSequenceClassification", "text-classification"),
    ("ForTokenClassification", "token-classification"),
    ("ForQuestionAnswering", "question-answering"),
    ("ForTableQuestionAnswering", "table-question-answering"),
    ("ForMaskedLM", "fill-mask"),
    ("ForCausalLM", "text-generation"),
    ("ForConditionalGeneration", "text2text-generation"),
    ("ForImageClassification", "image-classification"),
    ("ForObjectDetection", "object-detection"),
    ("ForSemanticSegmentation", "image-segmentation"),
    ("ForUniversalSegmentation", "image-segmentation"),
    ("ForDepthEstimation", "depth-estimation"),
    ("ForCTC", "automatic-speech-recognition"),
    ("ForAudioClassification", "audio-classification"),
    ("ForTextToSpeech", "text-to-speech"),
    ("ForTextToWaveform", "text-to-speech"),
]
_PIPELINE_TAG = re.compile(r"^pipeline_tag:\s*['\"]?([\w-]+)['\"]?\s*$", re.MULTILINE)


def folder_task(path: str | Path) -> str | None:
    """The pipeline tag of a model folder (see the module's docstring for where it is read).

    None when nothing in the folder names a task, its architecture maps to no known task, or its
    files cannot be read as a model's.
    """
    try:
        return _read_task(Path(path))
    except Exception:  # noqa: BLE001 - a malformed folder names no task
        return None


def _read_task(folder: Path) -> str | None:
    tag = _readme_tag(folder / "README.md")
    if tag:
        return tag
    from hugginggpt.tools.executors.local_tasks.controlnet import controlnet_folder_task

    if (controlnet := controlnet_folder_task(folder)) is not None:
        return controlnet or None  # "": a ControlNet whose name says no condition we know
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _diffusers_task(folder)
    return _config_task(config, folder)


def _readme_tag(readme: Path) -> str | None:
    try:
        text = readme.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    if not text.startswith("---"):
        return None
    front_matter = text.split("---", 2)[1] if text.count("---") >= 2 else ""
    match = _PIPELINE_TAG.search(front_matter)
    return match.group(1) if match else None


# Marks in a diffusers pipeline's class name (or, for video, its components' classes), most specific first.
_IMAGE_TO_VIDEO = ("ImageToVideo", "Img2Vid", "I2V", "StableVideoDiffusion")
_IMAGE_EDITING = ("InstructPix2Pix", "Kontext", "Edit")
_IMAGE_TO_IMAGE = ("Img2Img", "Image2Image", "ImageToImage", "Inpaint", "Upscale", "SuperResolution")
_VIDEO = ("Video", "3D", "Motion", "Temporal", "Wan", "LTX", "Mochi", "Allegro", "Latte")


def _diffusers_task(folder: Path) -> str | None:
    """The task of a diffusers pipeline folder, from the classes its ``model_index.json`` names."""
    try:
        index = json.loads((folder / "model_index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(index, dict) or "_class_name" not in index:
        return None
    name = str(index["_class_name"])
    components = [str(value[1]) for key, value in index.items()
                  if not key.startswith("_") and isinstance(value, list) and len(value) == 2 and value[1]]
    if any(mark in name for mark in _IMAGE_TO_VIDEO):
        return "image-to-video"
    if any(mark in name for mark in _IMAGE_EDITING):
        return "image-text-to-image"
    if any(mark in name for mark in _IMAGE_TO_IMAGE):
        return "image-to-image"
    if any(mark in cls for cls in [name, *components] for mark in _VIDEO):
        return "text-to-video"
    if any(key.startswith("text_encoder") or key == "tokenizer" for key in index):
        return "text-to-image"
    return "unconditional-image-generation"


def _config_task(config: dict, folder: Path) -> str | None:
    model_type = str(config.get("model_type", ""))
    architectures = config.get("architectures") or []
    if model_type in _CAPTIONERS:
        return "image-to-text"
    if model_type in _FORECASTERS:
        return "time-series-forecasting"
    try:
        from transformers.models.auto import modeling_auto
    except ImportError:
        return _task_by_name(architectures)
    for arch in architectures:
        for mapping_name, task in _MAPPINGS:
            names = getattr(modeling_auto, mapping_name, {})
            if not any(arch == v or (isinstance(v, tuple) and arch in v) for v in names.values()):
                continue
            if task == "text-classification" and "entailment" in {
                str(label).lower() for label in (config.get("label2id") or {})
            }:
                return "zero-shot-classification"
            if task == "text-classification" and len(config.get("id2label") or {}) == 1:
                return "text-ranking"  # one relevance logit: a cross-encoder reranker
            if task == "text2text-generation" and model_type in _TRANSLATORS:
                return "translation"
            return task
    if architectures or model_type:
        # A bare encoder: embeddings of images when it has an image processor and no tokenizer.
        has_images = (folder / "preprocessor_config.json").exists()
        has_text = any((folder / name).exists() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt"))
        if has_images and not has_text:
            return "image-feature-extraction"
        if has_text:
            return "feature-extraction"
    return None


def _task_by_name(architectures: list) -> str | None:
    """The task an architecture's name ends with (``...ForCausalLM``), for when transformers is missing."""
    for architecture in architectures:
        for suffix, task in _ARCHITECTURE_SUFFIXES:
            if str(architecture).endswith(suffix):
                return task
    return None
