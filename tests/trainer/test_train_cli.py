"""`halo train`'s flags become the run spec (the run itself is faked here: tests/trainer/test_grpo.py runs one)."""

from __future__ import annotations

import pytest

from halo.runs.spec import RunSpec


@pytest.fixture
def submitted(monkeypatch) -> list[RunSpec]:
    import halo.cli.train

    seen: list[RunSpec] = []

    async def fake_train_local(spec, runs_dir, resume="", env_target="", gateway_target=""):
        seen.append(spec)
        return 0

    monkeypatch.setattr(halo.cli.train, "train_local", fake_train_local)
    return seen


def test_extra_reaches_the_trainer_and_has_the_last_word(submitted):
    from halo.cli.main import main

    assert main(["train", "--steps", "3", "--eval-every", "2",
                 "--extra", '{"env_retries": 5, "env_wait_s": 600, "eval_every": 1}']) == 0
    (spec,) = submitted
    assert spec.extra["env_retries"] == 5 and spec.extra["env_wait_s"] == 600
    assert spec.extra["eval_every"] == 1                      # over --eval-every
    assert spec.extra["update_epochs"] == 4                   # the embedded defaults stay


def test_local_lora_settings_through_extra(submitted):
    from halo.cli.main import main

    assert main(["train", "--backend", "local_lora", "--extra", '{"model_dir": "/models/qwen3vl", "serve_route": "qwen3vl"}']) == 0
    (spec,) = submitted
    assert spec.backend == "local_lora" and spec.extra["serve_route"] == "qwen3vl" and spec.learning_rate == 1e-6


@pytest.mark.parametrize("flag, value, message", [
    ("--extra", "[1, 2]", "--extra: a JSON object is expected"),
    ("--extra", "{nope", "--extra: Expecting property name"),
    ("--reward-overrides", '{"loop_penalty": "much"}', "--reward-overrides: could not convert string to float"),
])
def test_bad_json_flags_stop_with_the_reason(submitted, flag, value, message):
    from halo.cli.main import main

    with pytest.raises(SystemExit, match=message):
        main(["train", flag, value])
    assert submitted == []


def test_max_staleness_reaches_the_spec_and_backends_without_it_refuse(submitted):
    from halo.cli.main import main
    from halo.cli.registry import resolve_trainer

    assert main(["train", "--max-staleness", "2", "--stale-rule", "correct"]) == 0
    (spec,) = submitted
    assert spec.extra["max_staleness"] == 2 and spec.extra["stale_rule"] == "correct"
    assert resolve_trainer(spec).__name__ == "train_embedded"
    for kind, backend in (("mcts", "embedded"), ("mcts", "tinker")):
        with pytest.raises(ValueError, match="--max-staleness"):
            resolve_trainer(RunSpec(kind=kind, backend=backend, task_ids=["t"], extra={"max_staleness": 1}))
    # tinker maps K onto the cookbook's async mode (tests/tinker/test_tinker_train.py runs it)
    assert resolve_trainer(RunSpec(backend="tinker", task_ids=["t"], extra={"max_staleness": 1})).__name__ == "train_tinker"


def test_observation_text_reaches_every_backend_as_extra_screenshots(submitted):
    from halo.cli.main import main

    assert main(["train", "--observation", "text"]) == 0
    assert main(["train", "--backend", "tinker", "--observation", "text", "--max-tokens", "24", "--lora-rank", "8"]) == 0
    assert main(["train", "--backend", "tinker"]) == 0
    embedded, tinker_text, tinker_full = submitted
    assert embedded.extra["screenshots"] is False and tinker_text.extra["screenshots"] is False
    assert (tinker_text.max_tokens, tinker_text.lora_rank) == (24, 8)
    assert "screenshots" not in tinker_full.extra and (tinker_full.max_tokens, tinker_full.lora_rank) == (300, 32)


def test_tinker_sampling_reaches_the_spec_and_the_local_gateway_routes_the_runs_model(submitted, capsys):
    from halo.cli.main import main
    from halo.cli.train import gateway_routes, local_gateway_config

    assert main(["train", "--backend", "tinker", "--model", "/models/tiny", "--tinker-sampling", "gateway",
                 "--extra", '{"tinker_base_url": "http://127.0.0.1:8123", "tokenizer": "/models/tiny"}']) == 0
    (spec,) = submitted
    assert spec.extra["tinker_sampling"] == "gateway"
    assert gateway_routes(spec) == ["embedded", "qwen3vl-tinker"]
    (route,) = [r for r in local_gateway_config(spec).routes if r.name == "qwen3vl-tinker"]
    assert (route.backend, route.base_model, route.tinker.service_url, route.tinker.tokenizer) == (
        "tinker", "/models/tiny", "http://127.0.0.1:8123", "/models/tiny")
    assert route.tinker.renderer == "qwen3_vl_instruct" and route.timeout_s == 180   # the YAML's other settings stay
    assert gateway_routes(RunSpec(backend="tinker")) == ["embedded", "qwen3vl-tinker"]   # gateway: the default
    direct = RunSpec(backend="tinker", model="/models/tiny", extra={"tinker_sampling": "direct"})
    assert gateway_routes(direct) == ["embedded"] and local_gateway_config(direct) is None

    assert main(["train", "--backend", "tinker", "--tinker-sampling", "gateway", "--max-staleness", "1"]) == 2
    assert "synchronous only" in capsys.readouterr().err
    assert len(submitted) == 1


def test_success_flag_picks_the_verdict_the_bonus_follows(submitted):
    from halo.cli.main import main

    assert main(["train", "--steps", "1"]) == 0 and main(["train", "--steps", "1", "--success", "strict"]) == 0
    agisdk, strict = submitted
    assert "strict_success" not in agisdk.reward_overrides and agisdk.extra["success"] == "agisdk"
    assert strict.reward_overrides == {**agisdk.reward_overrides, "strict_success": 1.0} and strict.extra["success"] == "strict"
