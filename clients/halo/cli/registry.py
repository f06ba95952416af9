"""Which trainer runs a spec: (kind, backend) -> `async def train(ctx)`."""

from __future__ import annotations

from halo.runs.context import Trainer
from halo.runs.spec import RunSpec


def resolve_trainer(spec: RunSpec) -> Trainer:
    if spec.kind == "eval":   # any backend: the mode says what is evaluated (halo.evaluation.modes)
        from halo.evaluation.hosted import check_spec, run_eval_job

        check_spec(spec)
        return run_eval_job
    # where extra.max_staleness > 0 runs (tinker: the cookbook's AsyncConfig, tinker_train.async_config_for)
    asynchronous = {("grpo", "embedded"), ("grpo", "local_lora"), ("grpo", "tinker")}
    if int(spec.extra.get("max_staleness", 0) or 0) > 0 and (spec.kind, spec.backend) not in asynchronous:
        raise ValueError(f"--max-staleness (asynchronous GRPO) runs on grpo with the embedded, local_lora or tinker backend, "
                         f"not on kind={spec.kind!r} backend={spec.backend!r}: use --max-staleness 0 there")
    if spec.kind == "grpo" and spec.backend == "embedded":
        from halo.trainers.grpo import train_embedded

        return train_embedded
    if spec.kind == "mcts" and spec.backend == "embedded":
        from halo.trainers.mcts.recipe import train_embedded as train_mcts_embedded

        return train_mcts_embedded
    if spec.kind == "grpo" and spec.backend == "tinker":
        from halo.trainers.tinker_train import train_tinker

        return train_tinker
    if spec.kind == "mcts" and spec.backend == "tinker":
        from halo.trainers.mcts.tinker import train_mcts_tinker

        return train_mcts_tinker
    if spec.kind == "grpo" and spec.backend == "local_lora":
        from halo.trainers.lora_learner import train_local_lora

        return train_local_lora
    raise ValueError(f"no trainer for kind={spec.kind!r} backend={spec.backend!r} yet (available: grpo/embedded, grpo/tinker, grpo/local_lora, mcts/embedded, mcts/tinker)")
