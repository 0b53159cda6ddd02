"""Tiny random-weight models saved with ``save_pretrained``, so tests run real local inference offline.

Every builder writes a complete folder (config, weights, tokenizer and/or processor) that
``transformers`` loads exactly like a Hub checkpoint. Outputs are nonsense; shapes and kinds are real.

Reuse from any test module::

    from tests.tiny_models import tiny_model_path

    folder = tiny_model_path("image-to-text")   # built once per process, removed at exit

or the session fixture ``tiny_model`` (``from tests.tiny_models import tiny_model``), or
``build_tiny_model(task, folder)`` to build into a folder of your own. ``TINY_TASKS`` lists the tasks.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

WORDS = ["a", "an", "the", "cat", "dog", "man", "woman", "child", "bird", "car", "tree", "house", "photo", "picture", "image", "of", "on", "in", "with", "and", "is", "are", "sitting", "standing", "running", "red", "blue", "green", "big", "small", "hello", "world", "paris", "capital", "france", "london", "what", "where", "who", "which", "it", "this", "that", "there", "sky", "grass", "water", "street", "table", "read", "aloud", "describe", "good", "bad"]
PUNCT = list(".,?!'")


# --------------------------------------------------------------------------- tokenizers


def _word_vocab(specials: list[str]) -> dict[str, int]:
    return {token: i for i, token in enumerate(specials + WORDS + PUNCT)}


def _bert_tokenizer():
    """A WordLevel fast tokenizer with BERT's special tokens ([CLS] x [SEP], offsets for QA/NER)."""
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from transformers import PreTrainedTokenizerFast

    vocab = _word_vocab(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=64,
    )


CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _gpt_tokenizer():
    """A WordLevel fast tokenizer with GPT-2's single ``<|endoftext|>`` token and a chat template."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = _word_vocab(["<|endoftext|>", "<unk>", ":", "user", "assistant", "system"])
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        pad_token="<|endoftext|>", model_max_length=64,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _t5_tokenizer():
    """A WordLevel fast tokenizer with T5's ``<pad>`` / ``</s>`` conventions."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = _word_vocab(["<pad>", "</s>", "<unk>", "summarize", "translate", "english", "to", "french", "german"])
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", vocab["</s>"])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="</s>", model_max_length=64
    )


def _char_vocab(specials: list[str]) -> dict[str, int]:
    chars = list("abcdefghijklmnopqrstuvwxyz'")
    return {token: i for i, token in enumerate(specials + chars)}


# --------------------------------------------------------------------------- shared configs

_TEXT = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 37}
_IMAGE_SIZE = 32


def _bert_config(**extra):
    from transformers import BertConfig

    return BertConfig(vocab_size=len(WORDS) + len(PUNCT) + 5, max_position_embeddings=64, **_TEXT, **extra)


def _vit_config(cls_name: str = "ViTConfig", **extra):
    import transformers

    return getattr(transformers, cls_name)(image_size=_IMAGE_SIZE, patch_size=8, **_TEXT, **extra)


def _vit_processor():
    from transformers import ViTImageProcessor

    return ViTImageProcessor(size={"height": _IMAGE_SIZE, "width": _IMAGE_SIZE})


def _labels(names: list[str]) -> dict:
    return {"id2label": dict(enumerate(names)), "label2id": {n: i for i, n in enumerate(names)}}


def _save(folder: Path, *parts) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for part in parts:
        part.save_pretrained(folder)
    return folder


# --------------------------------------------------------------------------- builders, one per family


def _image_to_text(folder: Path) -> Path:
    """ViT encoder + GPT-2 decoder (the shape of nlpconnect/vit-gpt2-image-captioning)."""
    from transformers import (
        GPT2Config,
        VisionEncoderDecoderConfig,
        VisionEncoderDecoderModel,
    )

    tokenizer = _gpt_tokenizer()
    decoder = GPT2Config(
        vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=64,
        add_cross_attention=True, is_decoder=True, bos_token_id=0, eos_token_id=0, pad_token_id=0,
    )
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(_vit_config(), decoder)
    config.decoder_start_token_id = 0
    config.pad_token_id = 0
    config.eos_token_id = 0
    model = VisionEncoderDecoderModel(config=config)
    model.generation_config.decoder_start_token_id = 0
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = 0
    model.generation_config.max_length = 12
    model.generation_config.min_new_tokens = 3  # random weights favour EOS; keep captions non-empty
    return _save(folder, model, tokenizer, _vit_processor())


def _text_to_speech(folder: Path) -> Path:
    """A VITS (MMS-TTS style) model with a character tokenizer that needs no phonemizer."""
    from transformers import VitsConfig, VitsModel, VitsTokenizer

    vocab = _char_vocab(["<pad>", "<unk>", " "])
    folder.mkdir(parents=True, exist_ok=True)
    vocab_file = folder / "vocab.json"
    vocab_file.write_text(json.dumps(vocab))
    tokenizer = VitsTokenizer(str(vocab_file), add_blank=True, normalize=True, phonemize=False)
    config = VitsConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        window_size=4, ffn_dim=32, flow_size=16, spectrogram_bins=16, prior_encoder_num_flows=2,
        prior_encoder_num_wavenet_layers=2, posterior_encoder_num_wavenet_layers=2,
        duration_predictor_num_flows=2, duration_predictor_filter_channels=16,
        upsample_initial_channel=16, upsample_rates=[8, 2], upsample_kernel_sizes=[16, 4],
        resblock_kernel_sizes=[3, 7], resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]],
        sampling_rate=16000, use_stochastic_duration_prediction=False,
    )
    model = VitsModel(config)
    # Random weights can predict zero frames for every character (an empty waveform, and a crash in
    # VITS's length computation): pin the duration predictor to about three frames per token.
    import torch

    with torch.no_grad():
        model.duration_predictor.proj.weight.zero_()
        model.duration_predictor.proj.bias.fill_(1.0)
    return _save(folder, model, tokenizer)


def _bert_head(head: str, labels: list[str] | None = None) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        import transformers

        config = _bert_config(**(_labels(labels) if labels else {}))
        return _save(folder, getattr(transformers, head)(config), _bert_tokenizer())

    build.__doc__ = f"A 2-layer BERT with a {head} head."
    return build


def _text_generation(folder: Path) -> Path:
    """A 2-layer GPT-2 with a chat template (text-generation and conversational)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _gpt_tokenizer()
    config = GPT2Config(
        vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=64,
        bos_token_id=0, eos_token_id=0, pad_token_id=0,
    )
    model = GPT2LMHeadModel(config)
    model.generation_config.pad_token_id = 0
    return _save(folder, model, tokenizer)


def _seq2seq(folder: Path) -> Path:
    """A 2-layer T5 (summarization, translation, text2text-generation)."""
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _t5_tokenizer()
    config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )
    model = T5ForConditionalGeneration(config)
    model.generation_config.max_length = 12
    model.generation_config.min_new_tokens = 3  # random weights favour EOS; keep outputs non-empty
    return _save(folder, model, tokenizer)


def _vit_head(head: str, config_cls: str = "ViTConfig", **extra) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        import transformers

        model = getattr(transformers, head)(_vit_config(config_cls, **extra))
        return _save(folder, model, _vit_processor())

    build.__doc__ = f"A 2-layer ViT-style {head}."
    return build


def _object_detection(folder: Path) -> Path:
    """A 2-layer YOLOS (a ViT detector: no timm backbone needed)."""
    from transformers import YolosConfig, YolosForObjectDetection, YolosImageProcessor

    config = YolosConfig(
        image_size=[_IMAGE_SIZE, _IMAGE_SIZE], patch_size=8, num_detection_tokens=5, **_TEXT,
        **_labels(["cat", "dog", "car"]),
    )
    processor = YolosImageProcessor(size={"shortest_edge": _IMAGE_SIZE, "longest_edge": _IMAGE_SIZE})
    return _save(folder, YolosForObjectDetection(config), processor)


def _image_segmentation(folder: Path) -> Path:
    """A tiny SegFormer for semantic segmentation."""
    from transformers import (
        SegformerConfig,
        SegformerForSemanticSegmentation,
        SegformerImageProcessor,
    )

    config = SegformerConfig(
        num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16],
        patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2],
        decoder_hidden_size=16, **_labels(["sky", "tree", "road"]),
    )
    processor = SegformerImageProcessor(size={"height": _IMAGE_SIZE, "width": _IMAGE_SIZE})
    return _save(folder, SegformerForSemanticSegmentation(config), processor)


def _depth_estimation(folder: Path) -> Path:
    """A tiny GLPN depth model (SegFormer-style encoder, no backbone download)."""
    from transformers import GLPNConfig, GLPNForDepthEstimation, GLPNImageProcessor

    config = GLPNConfig(
        num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16],
        patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2],
        decoder_hidden_size=16, head_in_index=-1,
    )
    return _save(folder, GLPNForDepthEstimation(config), GLPNImageProcessor())


def _wav2vec2_config(**extra):
    from transformers import Wav2Vec2Config

    return Wav2Vec2Config(
        hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=20,
        conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8), num_feat_extract_layers=2,
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, mask_time_prob=0.0, **extra,
    )


def _speech_recognition(folder: Path) -> Path:
    """A tiny Wav2Vec2 CTC model with a character vocabulary."""
    from transformers import (
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    vocab = _char_vocab(["<pad>", "<unk>", "|"])
    folder.mkdir(parents=True, exist_ok=True)
    vocab_file = folder / "vocab.json"
    vocab_file.write_text(json.dumps(vocab))
    tokenizer = Wav2Vec2CTCTokenizer(str(vocab_file), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")
    extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, return_attention_mask=False)
    model = Wav2Vec2ForCTC(_wav2vec2_config(vocab_size=len(vocab), pad_token_id=0))
    return _save(folder, model, Wav2Vec2Processor(feature_extractor=extractor, tokenizer=tokenizer))


def _audio_classification(folder: Path) -> Path:
    """A tiny Wav2Vec2 with a sequence classification head."""
    from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2ForSequenceClassification

    config = _wav2vec2_config(classifier_proj_size=8, **_labels(["speech", "music", "noise"]))
    extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, return_attention_mask=False)
    return _save(folder, Wav2Vec2ForSequenceClassification(config), extractor)


def _zero_shot_image_classification(folder: Path) -> Path:
    """A tiny CLIP (text + vision towers) with its processor."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    tokenizer = _bert_tokenizer()
    text = dict(vocab_size=len(tokenizer), max_position_embeddings=64, eos_token_id=3, **_TEXT)
    vision = dict(image_size=_IMAGE_SIZE, patch_size=8, **_TEXT)
    config = CLIPConfig(text_config=text, vision_config=vision, projection_dim=16)
    processor = CLIPImageProcessor(
        size={"shortest_edge": _IMAGE_SIZE}, crop_size={"height": _IMAGE_SIZE, "width": _IMAGE_SIZE}
    )
    return _save(folder, CLIPModel(config), tokenizer, processor)


VLM_CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image> {% elif c['type'] == 'text' %}"
    "{{ c['text'] }}{% endif %}{% endfor %}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _image_text_to_text(folder: Path) -> Path:
    """A tiny LLaVA (CLIP vision tower + Llama decoder) with a processor and chat template."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    vocab = _word_vocab(["<pad>", "<unk>", "<s>", "</s>", "<image>", ":", "user", "assistant"])
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>",
        model_max_length=128, extra_special_tokens={"image_token": "<image>"},
    )
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    text = LlamaConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
        intermediate_size=37, max_position_embeddings=128, bos_token_id=2, eos_token_id=3, pad_token_id=0,
    )
    vision = CLIPVisionConfig(image_size=_IMAGE_SIZE, patch_size=8, **_TEXT)
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=vocab["<image>"],
                         vision_feature_layer=-1, vision_feature_select_strategy="default")
    model = LlavaForConditionalGeneration(config)
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = 3
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": _IMAGE_SIZE}, crop_size={"height": _IMAGE_SIZE, "width": _IMAGE_SIZE}
    )
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=8,
                               vision_feature_select_strategy="default", chat_template=VLM_CHAT_TEMPLATE,
                               num_additional_image_tokens=1)
    return _save(folder, model, processor)


def _zero_shot_object_detection(folder: Path) -> Path:
    """A tiny OWL-ViT (open-vocabulary detector) with its processor."""
    from transformers import (
        OwlViTConfig,
        OwlViTForObjectDetection,
        OwlViTImageProcessor,
        OwlViTProcessor,
    )

    tokenizer = _bert_tokenizer()
    config = OwlViTConfig(
        text_config=dict(vocab_size=len(tokenizer), max_position_embeddings=16, eos_token_id=3, **_TEXT),
        vision_config=dict(image_size=_IMAGE_SIZE, patch_size=8, **_TEXT),
        projection_dim=32,  # the class head compares image and text embeddings of equal width
    )
    size = {"height": _IMAGE_SIZE, "width": _IMAGE_SIZE}
    processor = OwlViTProcessor(image_processor=OwlViTImageProcessor(size=size, crop_size=size), tokenizer=tokenizer)
    return _save(folder, OwlViTForObjectDetection(config), processor)


def _table_question_answering(folder: Path) -> Path:
    """A tiny TAPAS with a WordPiece vocabulary (the table question answering architecture)."""
    from transformers import TapasConfig, TapasForQuestionAnswering, TapasTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[EMPTY]", *WORDS, *PUNCT, *"0123456789"]
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n")
    config = TapasConfig(vocab_size=len(vocab), max_position_embeddings=128,
                         type_vocab_sizes=[3, 64, 64, 2, 64, 64, 64], **_TEXT)
    return _save(folder, TapasForQuestionAnswering(config), TapasTokenizer(str(vocab_file)))


# --------------------------------------------------------------------------- builders for the rarer tasks


def _text_ranking(folder: Path) -> Path:
    """A 2-layer BERT cross-encoder with one relevance logit (the shape of ms-marco rerankers)."""
    from transformers import BertForSequenceClassification

    return _save(folder, BertForSequenceClassification(_bert_config(num_labels=1)), _bert_tokenizer())


def _keypoint_detection(folder: Path) -> Path:
    """A tiny SuperPoint (interest point detector) with a 32x32 processor."""
    from transformers import (
        SuperPointConfig,
        SuperPointForKeypointDetection,
        SuperPointImageProcessor,
    )

    config = SuperPointConfig(encoder_hidden_sizes=[8, 8, 16, 16], decoder_hidden_size=32,
                              keypoint_decoder_dim=65, descriptor_decoder_dim=32, max_keypoints=50)
    processor = SuperPointImageProcessor(size={"height": _IMAGE_SIZE, "width": _IMAGE_SIZE})
    return _save(folder, SuperPointForKeypointDetection(config), processor)


def _voice_activity_detection(folder: Path) -> Path:
    """A tiny Wav2Vec2 frame classifier (non-speech / speech), biased to "speech" so spans are non-empty."""
    import torch
    from transformers import (
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForAudioFrameClassification,
    )

    model = Wav2Vec2ForAudioFrameClassification(_wav2vec2_config(**_labels(["non-speech", "speech"])))
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([0.0, 3.0]))
    extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, return_attention_mask=False)
    return _save(folder, model, extractor)


def _video_classification(folder: Path) -> Path:
    """A 2-layer VideoMAE over 4-frame 32x32 clips."""
    from transformers import (
        VideoMAEConfig,
        VideoMAEForVideoClassification,
        VideoMAEImageProcessor,
    )

    config = VideoMAEConfig(image_size=_IMAGE_SIZE, patch_size=8, num_frames=4, tubelet_size=2, **_TEXT,
                            **_labels(["dancing", "running", "cooking"]))
    processor = VideoMAEImageProcessor(size={"shortest_edge": _IMAGE_SIZE},
                                       crop_size={"height": _IMAGE_SIZE, "width": _IMAGE_SIZE})
    return _save(folder, VideoMAEForVideoClassification(config), processor)


def _time_series_forecasting(folder: Path) -> Path:
    """A univariate 2-layer PatchTST: 32 steps of context, 8 steps of horizon."""
    from transformers import PatchTSTConfig, PatchTSTForPrediction

    config = PatchTSTConfig(num_input_channels=1, context_length=32, prediction_length=8, patch_length=8,
                            patch_stride=8, d_model=16, num_attention_heads=2, num_hidden_layers=2, ffn_dim=32)
    return _save(folder, PatchTSTForPrediction(config))


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "image-to-text": _image_to_text,
    "text-to-speech": _text_to_speech,
    "text-classification": _bert_head("BertForSequenceClassification", ["NEGATIVE", "POSITIVE"]),
    "token-classification": _bert_head("BertForTokenClassification", ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]),
    "question-answering": _bert_head("BertForQuestionAnswering"),
    "fill-mask": _bert_head("BertForMaskedLM"),
    "feature-extraction": _bert_head("BertModel"),
    "zero-shot-classification": _bert_head(
        "BertForSequenceClassification", ["contradiction", "neutral", "entailment"]
    ),
    "text-generation": _text_generation,
    "summarization": _seq2seq,
    "image-classification": _vit_head("ViTForImageClassification", **_labels(["cat", "dog", "bird"])),
    "image-feature-extraction": _vit_head("ViTModel"),
    "object-detection": _object_detection,
    "image-segmentation": _image_segmentation,
    "depth-estimation": _depth_estimation,
    "automatic-speech-recognition": _speech_recognition,
    "audio-classification": _audio_classification,
    "zero-shot-image-classification": _zero_shot_image_classification,
    "zero-shot-object-detection": _zero_shot_object_detection,
    "image-text-to-text": _image_text_to_text,
    "table-question-answering": _table_question_answering,
    "text-ranking": _text_ranking,
    "keypoint-detection": _keypoint_detection,
    "voice-activity-detection": _voice_activity_detection,
    "video-classification": _video_classification,
    "time-series-forecasting": _time_series_forecasting,
}

# Tasks served by another task's folder (same architecture, other handler).
ALIASES = {
    "sentence-similarity": "feature-extraction",
    "conversational": "text-generation",
    "translation": "summarization",
    "text2text-generation": "summarization",
    "text-to-audio": "text-to-speech",
    "visual-question-answering": "image-text-to-text",
    "video-text-to-text": "image-text-to-text",
}

TINY_TASKS = sorted([*BUILDERS, *ALIASES])


def build_tiny_model(task: str, folder: str | Path) -> Path:
    """Build the tiny model for ``task`` into ``folder`` (created) and return the folder."""
    task = ALIASES.get(task, task)
    if task not in BUILDERS:
        raise KeyError(f"no tiny model for task {task!r}; known: {', '.join(TINY_TASKS)}")
    import torch

    torch.manual_seed(0)  # the same random weights every session: outputs (nonsense) are reproducible
    return BUILDERS[task](Path(folder))


class FolderCache:
    """Folders built at most once per process (thread-safe), under one temporary root removed at exit."""

    def __init__(self, prefix: str, build: Callable[[str, Path], Path]) -> None:
        self._prefix = prefix
        self._build = build
        self._built: dict[str, Path] = {}
        self._lock = threading.Lock()
        self._root: Path | None = None

    def path(self, key: str) -> Path:
        """The folder for ``key``: ``build(key, root / key)`` the first time, the same folder after."""
        with self._lock:
            if key not in self._built:
                if self._root is None:
                    self._root = Path(tempfile.mkdtemp(prefix=self._prefix))
                    atexit.register(shutil.rmtree, self._root, ignore_errors=True)
                self._built[key] = self._build(key, self._root / key)
            return self._built[key]


_models = FolderCache("hugginggpt-tiny-models-", build_tiny_model)


def tiny_model_path(task: str) -> Path:
    """The tiny model folder for ``task``, built once per process in a temporary folder."""
    return _models.path(ALIASES.get(task, task))


@pytest.fixture(scope="session")
def tiny_model() -> Callable[[str], Path]:
    """Session fixture: ``tiny_model(task) -> Path`` builds each tiny model at most once."""
    return tiny_model_path
