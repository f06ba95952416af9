"""Device check of the LoRA learner on a Qwen3-VL-MoE, run where a GPU machine is lent (docs/benchmarks.md, "The learner on a Qwen3-VL-MoE on a GPU").

HALO's local-LoRA learner (`LoraLearner`: PEFT LoRA, Tinker's losses on the cookbook's datums) and
its in-process sampler (`PeftSampler`, generate()) on a small random Qwen3-VL-MoE shaped like
Qwen3-VL-30B-A3B where it matters for the code path: 128 experts with 8 active per token, 32
query / 4 KV heads of 128, interleaved M-RoPE sections [24, 20, 20]; fewer layers and a narrower
hidden size, so it is built in seconds with random weights (no model hub there either). The
prompt is the real `qwen3_vl_instruct` rendering of a 1280x720 screenshot and a goal.

What it prints (one JSON object, also written to $OUT/gpu_moe_check.json when OUT is set): where
the LoRA went (attention and/or expert modules), the sampler's tokens/s, the learner's
forward_backward / optim_step / save_adapter times per GRPO step on a group of completions, the
last adapter reloaded from its folder (its load time and logprob difference to the learner), the
max |sampler logprob - learner logprob| at equal weights and the step's sampler ratio (min, max),
the loss over the steps, and the peak memory (GPU, or the process's RSS on the CPU).

`--constrain menu` (the default) samples every completion within a menu of click actions and
`--constrain grammar` within HALO's whole action grammar, as `halo train --constrain-actions`
does; the learner replays the same mask (halo.trainers.lora_grammar), so the ratio at equal
weights stays 1 under the grammar. `--constrain none` samples freely. The mask needs xgrammar
(`pip install --no-deps xgrammar==0.2.8 apache-tvm-ffi==0.1.15.post2`, binary wheels: on a machine
without a package index, bring them with HALO's other wheels).
Not covered there: vLLM (PyPI's CUDA wheel is 321 MiB, over the device tool's 64 MiB transfer
limit, and the machine reaches no index) and the env service (no Chromium there).

    python scripts/gpu_moe_check.py [--layers 4] [--hidden 1024] [--steps 5] [--device cuda] [--constrain menu]
    python scripts/gpu_moe_check.py --device cpu --dtype float32 --layers 2 --hidden 256 --experts 16 --group 4
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "clients"), str(ROOT / "services")]


def build_moe(out: Path, layers: int, hidden: int, experts: int, active: int) -> Path:
    """HALO's tiny Qwen3-VL checkpoint (tokenizer, image processor, chat template), its model
    replaced by a random Qwen3-VL-MoE of the given shape."""
    import torch
    from transformers import GenerationConfig, Qwen3VLMoeConfig, Qwen3VLMoeForConditionalGeneration

    from halo.cli.benches import tiny_qwen3vl

    tiny_qwen3vl.build(out)
    dense = json.loads((out / "config.json").read_text())
    ids = {k: dense[k] for k in ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id")}
    text = dense["text_config"]
    config = Qwen3VLMoeConfig(
        text_config=dict(
            vocab_size=text["vocab_size"], hidden_size=hidden, intermediate_size=4 * hidden,
            moe_intermediate_size=max(64, hidden // 4), num_experts=experts, num_experts_per_tok=active,
            decoder_sparse_step=1, mlp_only_layers=[], num_hidden_layers=layers,
            num_attention_heads=32, num_key_value_heads=4, head_dim=128, max_position_embeddings=8192,
            rope_parameters={"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [24, 20, 20],
                             "mrope_interleaved": True},
            eos_token_id=text["eos_token_id"], pad_token_id=text["pad_token_id"],
        ),
        vision_config={**dense["vision_config"], "out_hidden_size": hidden},
        eos_token_id=text["eos_token_id"], pad_token_id=text["pad_token_id"], **ids,
    )
    torch.manual_seed(0)
    model = Qwen3VLMoeForConditionalGeneration(config).eval()
    model.generation_config = GenerationConfig(eos_token_id=text["eos_token_id"], pad_token_id=text["pad_token_id"],
                                               do_sample=True, max_new_tokens=32)
    for stale in out.glob("model*.safetensors*"):
        stale.unlink()
    model.save_pretrained(out)
    return out


def observation(model_dir: Path):
    from halo.cli.benches.learner import sample_prompt

    return sample_prompt(str(model_dir))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--experts", type=int, default=128)
    parser.add_argument("--active", type=int, default=8)
    parser.add_argument("--group", type=int, default=8, help="completions per GRPO step")
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    parser.add_argument("--constrain", default="menu", choices=["menu", "grammar", "none"],
                        help="sample within a menu of clicks, HALO's whole action grammar, or freely")
    args = parser.parse_args()

    import torch

    from halo.trainers.advantages import group_advantages
    from halo.trainers.lora_learner import LoraLearner, PeftSampler, datum_from_completion

    dtype = getattr(torch, args.dtype)
    report: dict = {"device": torch.cuda.get_device_name(0) if args.device == "cuda" else args.device,
                    "torch_threads": torch.get_num_threads(),
                    "torch": torch.__version__, "dtype": args.dtype, "shape": vars(args)}
    import transformers
    report["transformers"] = transformers.__version__
    t0 = time.perf_counter()
    model_dir = build_moe(Path(tempfile.mkdtemp(prefix="halo-moe-")), args.layers, args.hidden, args.experts, args.active)
    report["build_s"] = round(time.perf_counter() - t0, 2)
    prompt = observation(model_dir)
    report["prompt_tokens"] = prompt.length

    from halo.agent import actions as A
    from halo.agent.formats import ActionFormat
    from halo.agent.grammar import action_regex, choice_regex

    regex = {"menu": choice_regex(ActionFormat.QWEN_COMPUTER_USE, [A.ClickElement(str(b)) for b in (1, 3, 12, 27, 40)]),
             "grammar": action_regex(), "none": ""}[args.constrain]
    t0 = time.perf_counter()
    learner = LoraLearner(model_dir, rank=16, temperature=1.0, learning_rate=1e-4, dtype=dtype, device=args.device,
                          action_regex=regex)
    report["learner_load_s"] = round(time.perf_counter() - t0, 2)
    trainable = [n for n, p in learner.model.named_parameters() if p.requires_grad]
    report["lora_parameters"] = sum(p.numel() for p in learner.trainable_parameters())
    report["base_parameters"] = sum(p.numel() for p in learner.model.parameters())
    report["lora_targets"] = sorted({re.sub(r".*\.layers\.\d+\.", "", n).split(".lora_")[0] for n in trainable})
    sampler = PeftSampler.of(learner)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    steps = []
    for step in range(args.steps):
        sync()
        t = time.perf_counter()
        samples = [sampler.sample(prompt, max_tokens=args.max_tokens, temperature=1.0, seed=1000 * step + i)
                   for i in range(args.group)]
        sync()
        sample_s = time.perf_counter() - t
        tokens = sum(len(s.tokens) for s in samples)
        if step == 0:   # equal weights: the learner must score the sampler's tokens as the sampler did
            diffs = [float((learner.completion_logprobs(prompt, s.tokens) - torch.tensor(s.logprobs)).abs().max())
                     for s in samples if s.tokens]
            report["max_abs_logprob_diff_at_equal_weights"] = max(diffs)
            report["completions_stopped"] = sum(s.stop_reason == "stop" for s in samples)
        rewards = [float(i % 2) for i in range(len(samples))]   # fixed and varied: the timing is the point, not what is learned
        data = [datum_from_completion(prompt, s.tokens, s.logprobs, a) for s, a in zip(samples, group_advantages(rewards))]
        t = time.perf_counter()
        result = learner.forward_backward(data, "importance_sampling")
        sync()
        fb_s = time.perf_counter() - t
        t = time.perf_counter()
        optim = learner.optim_step()
        sync()
        optim_s = time.perf_counter() - t
        t = time.perf_counter()
        learner.save_adapter(model_dir / "adapters" / f"step-{step + 1}")
        save_s = time.perf_counter() - t
        if step == 0:   # the first step's data are on-policy: its ratio learner/sampler is 1 up to numerics
            report["sampler_ratio_at_equal_weights"] = [result.metrics["sampler_ratio/min"], result.metrics["sampler_ratio/max"]]
        steps.append({"step": step + 1, "sample_s": round(sample_s, 3), "sampled_tokens": tokens,
                      "sample_tokens_per_s": round(tokens / sample_s, 1), "forward_backward_s": round(fb_s, 3),
                      "optim_step_s": round(optim_s, 3), "save_adapter_s": round(save_s, 3),
                      "loss": round(result.loss, 4), "grad_norm": round(optim["grad_norm"], 4)})
        print(json.dumps(steps[-1]), flush=True)
    report["steps"] = steps
    # the last step's adapter, reloaded as a serving side would (PEFT from the saved folder), scores a
    # completion as the learner that wrote it does
    t = time.perf_counter()
    served = PeftSampler(model_dir, adapter=model_dir / "adapters" / f"step-{args.steps}", dtype=dtype, device=args.device,
                         action_regex=regex)
    report["adapter_reload_s"] = round(time.perf_counter() - t, 3)
    probe = next((s for s in samples if s.tokens), None)
    if probe is not None:
        report["adapter_reload_max_abs_logprob_diff"] = float(
            (served.completion_logprobs(prompt, probe.tokens) - learner.completion_logprobs(prompt, probe.tokens)).abs().max())
    if args.device == "cuda":
        report["max_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    else:
        import resource

        report["max_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
    text = json.dumps(report, indent=2)
    print(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_moe_check.json").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
