"""`halo bench learner`: the local LoRA learner's forward_backward throughput on GRPO-shaped data.

One rendered observation (a 1280x720 screenshot through the `qwen3_vl_instruct` renderer, as the
rollouts make it) and `group` random completions of `completion` tokens each, turned into the
cookbook's datums; `forward_backward` over the group, timed `repeats` times after one warm-up.
Reports trained (completion) tokens per second and whole-sequence tokens per second. Learner options
(micro-batch size, gradient checkpointing, float32 logits) are passed only to a learner that has them.
Numbers depend on the machine's load: a shared machine's numbers compare only within one run.
"""

from __future__ import annotations

import inspect
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def sample_prompt(model_dir: str):
    """A Qwen3-VL prompt as a training datum has it: a 1280x720 screenshot and a one-line AXTree."""
    from PIL import Image, ImageDraw

    from halo.trainers.tinker_env import DEFAULT_RENDERER, DEFAULT_TINKER_MODEL, load_renderer

    renderer = load_renderer(DEFAULT_RENDERER, model_dir, model_dir, DEFAULT_TINKER_MODEL)
    image = Image.new("RGB", (1280, 720), (245, 245, 245))
    ImageDraw.Draw(image).rectangle((560, 330, 720, 390), fill=(30, 90, 200))
    messages = [
        {"role": "system", "content": "You are a web agent. Answer with one computer_use tool call."},
        {"role": "user", "content": [{"type": "image", "image": image},
                                     {"type": "text", "text": 'Goal: Click the "Sign up" button.\n[3] button "Sign up"'}]},
    ]
    return renderer.build_generation_prompt(messages)


def run_learner_bench(model: str = "", group: int = 8, completion: int = 64, repeats: int = 3, loss_fn: str = "ppo",
                      device: str = "cpu", bf16: bool = False, options: dict[str, Any] | None = None, threads: int = 0,
                      out=print) -> dict[str, Any]:
    import torch

    from halo.trainers.lora_learner import LoraLearner, datum_from_completion

    if threads:
        torch.set_num_threads(threads)
    if not model:
        from halo.cli.benches.tiny_qwen3vl import build

        model = str(build(Path(tempfile.mkdtemp(prefix="halo-bench-learner-")) / "tiny-qwen3vl"))
    accepted = set(inspect.signature(LoraLearner.__init__).parameters)
    given = {k: v for k, v in (options or {}).items() if k in accepted}
    learner = LoraLearner(model, rank=32, temperature=0.7, seed=0, device=device,
                          dtype=torch.bfloat16 if bf16 else None, **given)
    prompt = sample_prompt(model)
    generator = torch.Generator().manual_seed(0)
    vocab = len(learner.tokenizer)
    banned = set(learner.banned)
    data = []
    for i in range(group):
        tokens = [t for t in torch.randint(0, vocab, (completion * 2,), generator=generator).tolist() if t not in banned][:completion]
        logprobs = learner.completion_logprobs(prompt, tokens).tolist()
        data.append(datum_from_completion(prompt, tokens, logprobs, 1.0 if i % 2 == 0 else -1.0))
    times = []
    for r in range(repeats + 1):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        started = time.perf_counter()
        result = learner.forward_backward(data, loss_fn)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        if r:
            times.append(time.perf_counter() - started)
        learner.optimizer.zero_grad(set_to_none=True)
    median = statistics.median(times)
    trained = group * completion
    sequence = group * (prompt.length + completion)
    report = {
        "model": model, "device": device, "bf16": bf16, "options": given, "group": group, "completion_tokens": completion,
        "prompt_tokens": prompt.length, "repeats": repeats, "forward_backward_s": times,
        "trained_tokens_per_s": trained / median, "sequence_tokens_per_s": sequence / median,
        "torch_threads": torch.get_num_threads(), "metrics": result.metrics,
    }
    if device.startswith("cuda"):
        report["gpu_peak_gib"] = torch.cuda.max_memory_allocated() / 2**30
    out(f"forward_backward over {group} x ({prompt.length} prompt + {completion} completion) tokens, {loss_fn}, "
        f"{device}{' bf16' if bf16 else ''}, options {given or 'none'}: median {median:.3f} s, "
        f"{report['trained_tokens_per_s']:.0f} trained tokens/s, {report['sequence_tokens_per_s']:.0f} sequence tokens/s")
    return report


def main(args: Any) -> int:
    options = json.loads(args.learner_options) if args.learner_options else {}
    report = run_learner_bench(args.base_model, args.group, args.completion, args.repeats, args.loss_fn, args.device, args.bf16,
                               options, args.threads)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0
