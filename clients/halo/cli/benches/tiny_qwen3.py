"""Build a tiny, randomly initialised text Qwen3 (Qwen3ForCausalLM) on disk, with no hub access.

The text-only sibling of `tiny_qwen3vl`: the same tokenizer (so the same token ids and chat
layout), a text model that SkyRL's CPU Tinker server can train and sample (it has no image
path). The image processor config ships too, only so that the qwen3_vl_instruct renderer HALO
uses on the Tinker path loads from this folder; text-only prompts never call it.

    python -m halo.cli.benches.tiny_qwen3 /tmp/tiny-qwen3
"""

from __future__ import annotations

import sys
from pathlib import Path

from halo.cli.benches.tiny_qwen3vl import SPECIAL_TOKENS, build_tokenizer, tiny_image_processor


def build(out_dir: str | Path, seed: int = 0) -> Path:
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    config = Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, max_position_embeddings=8192, tie_word_embeddings=False,
        eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"], bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config).eval()
    model.generation_config = GenerationConfig(eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"])
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    tiny_image_processor().save_pretrained(out)
    return out


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tiny-qwen3"))
