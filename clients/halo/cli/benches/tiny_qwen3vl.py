"""Build a tiny, randomly initialised Qwen3-VL checkpoint on disk, with no hub access.

Real architecture (Qwen3VLForConditionalGeneration), real processor (Qwen3VLProcessor with the
PIL image processor: no torchvision), real byte-level BPE tokenizer trained here on a few
sentences with Qwen's special tokens and a ChatML chat template. Its weights are random, so
its output is gibberish: tests and `halo bench gateway` check plumbing and overhead (images in, tokens and text out, parsing,
errors), never quality. Small enough that one completion takes well under a second on a CPU.

    python -m halo.cli.benches.tiny_qwen3vl /tmp/tiny-qwen3vl
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

SPECIAL_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
    "<|video_pad|>", "<tool_call>", "</tool_call>", "<think>", "</think>",
]

# ChatML with Qwen-VL's image placeholders (what Qwen3-VL's own template renders for images and text).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' or 'image' in part or 'image_url' in part %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# The sampling defaults of Qwen/Qwen3-VL-8B-Instruct's generation_config.json (top_k, top_p,
# repetition_penalty, temperature) plus the presence_penalty its model card recommends: a server
# that applied a checkpoint's defaults (vLLM's `--generation-config auto`) would sample the tiny
# model from a truncated, penalised distribution exactly as it would the real one.
QWEN3_VL_INSTRUCT_SAMPLING = {"top_k": 20, "top_p": 0.8, "repetition_penalty": 1.0, "presence_penalty": 1.5, "temperature": 0.7}

#: The LM head's init std. After the final RMSNorm a hidden state has norm ~sqrt(hidden) = 8, so a
#: logit is bounded by |w_token| · 8: with the usual 0.02 every logit stays within ~±1.3 whatever
#: the LoRA does to the layers below, and no token can ever get much more mass than another, so a
#: policy could not visibly learn. At 0.15 the untrained logits spread with std ~1.2 (a broad, still
#: exploring distribution) and a logit can reach ~10.
HEAD_STD = 0.15

_CORPUS = [
    'I will click the button. <tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 300]}}\n</tool_call>',
    '{"action": "click", "bid": "12"} {"action": "fill", "bid": "3", "text": "hello"} {"action": "send_msg_to_user", "text": "done"}',
    'click("12") fill("3", "text") scroll(0, 400) goto("http://127.0.0.1/") go_back() send_msg_to_user("yes")',
    "Goal: sign up for the newsletter with the e-mail address. Current URL: http://127.0.0.1:8100/playground/",
    "Accessibility tree: [1] button Sign up [2] textbox Email [3] link Home. What is the next action?",
    "You are a web agent that completes tasks in a browser. Reply with exactly one JSON object.",
    '{"passed": true, "score": 1.0, "rationale": "The answer matches."} {"scores": [0.2, 0.9]} yes no',
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?'\"()[]{}<>-_=+*/\\@#$%&",
]


# Qwen3VLProcessor insists on a video processor, and transformers' video processors need
# torchvision, which does not import beside this torch. Screenshots need no video processor, so
# the checkpoint ships this two-part processor (loaded by `transformers serve --trust-remote-code`).
PROCESSOR_MODULE = '''
from transformers.models.qwen3_vl.processing_qwen3_vl import Qwen3VLProcessor


class ImageOnlyQwen3VLProcessor(Qwen3VLProcessor):
    """Qwen3VLProcessor without the video processor (images and text only)."""

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        super().__init__(image_processor, tokenizer, None, chat_template=chat_template, **kwargs)
'''


def build_tokenizer(vocab_size: int = 600):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", chat_template=CHAT_TEMPLATE,
        model_max_length=8192,
    )


def tiny_image_processor():
    """The image processor of the tiny models: a 1280x720 screenshot becomes ~64 image tokens,
    cheap on a CPU."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    return Qwen2VLImageProcessorPil(
        patch_size=16, temporal_patch_size=2, merge_size=2, size={"shortest_edge": 32 * 32, "longest_edge": 256 * 256},
        image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5],
    )


def build(out_dir: str | Path, seed: int = 0, sampling: dict | None = None) -> Path:
    """The checkpoint in `out_dir`; its generation_config.json carries `sampling`
    (Qwen3-VL-Instruct's defaults, QWEN3_VL_INSTRUCT_SAMPLING, unless given)."""
    import torch
    from transformers import GenerationConfig, Qwen3VLConfig, Qwen3VLForConditionalGeneration

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    image_processor = tiny_image_processor()
    # save_pretrained copies the processor's module next to the weights (auto_map); it must live elsewhere
    code_dir = Path(tempfile.mkdtemp(prefix="halo-tiny-qwen3vl-code-"))
    (code_dir / "processing_image_only_qwen3vl.py").write_text(PROCESSOR_MODULE)
    sys.path.insert(0, str(code_dir))
    try:
        from processing_image_only_qwen3vl import ImageOnlyQwen3VLProcessor
    finally:
        sys.path.remove(str(code_dir))
    ImageOnlyQwen3VLProcessor.register_for_auto_class("AutoProcessor")
    processor = ImageOnlyQwen3VLProcessor(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    config = Qwen3VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            # head_dim 32: the smallest vLLM's CPU attention supports (with 16 its engine dies on the
            # first request); mrope_section sums to head_dim / 2
            num_key_value_heads=2, head_dim=32, max_position_embeddings=8192,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [4, 6, 6], "mrope_interleaved": True},
            eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        ),
        vision_config=dict(
            depth=2, hidden_size=64, intermediate_size=128, num_heads=4, out_hidden_size=64, patch_size=16,
            spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=256, deepstack_visual_indexes=[0],
        ),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config).eval()
    with torch.no_grad():   # a head that can be learned through (HEAD_STD)
        model.lm_head.weight.normal_(0.0, HEAD_STD)
    model.generation_config = GenerationConfig(
        eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"], do_sample=True, max_new_tokens=32,
    )
    model.save_pretrained(out)
    generation = json.loads((out / "generation_config.json").read_text())
    generation.update(QWEN3_VL_INSTRUCT_SAMPLING if sampling is None else sampling)
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2))
    processor.save_pretrained(out)
    tokenizer.save_pretrained(out)
    # vLLM loads Qwen3VLProcessor itself (not the image-only one above) and refuses to start without
    # a video processor config; plain JSON, so writing it needs no torchvision here
    (out / "video_preprocessor_config.json").write_text(json.dumps({
        "video_processor_type": "Qwen3VLVideoProcessor", "processor_class": "Qwen3VLProcessor",
        "patch_size": 16, "temporal_patch_size": 2, "merge_size": 2,
        "size": {"shortest_edge": 32 * 32, "longest_edge": 256 * 256},
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "do_sample_frames": True, "fps": 2,
    }, indent=2))
    return out


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tiny-qwen3vl"))
