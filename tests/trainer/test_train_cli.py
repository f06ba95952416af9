"""`halo train`'s flags become the run spec (the run itself is faked here: tests/trainer/test_grpo.py runs one)."""

from __future__ import annotations

import pytest

from halo.runs.spec import RunSpec


@pytest.fixture
def submitted(monkeypatch) -> list[RunSpec]:
    import halo.cli.train

    seen: list[RunSpec] = []

    async def fake_train_local(spec, runs_dir, resume="", **targets):
        spec.extra["_targets"] = targets      # where the run would have gone (popped by the tests that look)
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

    assert main(["train", "--backend", "tinker", "--base-model", "/models/tiny", "--tinker-sampling", "gateway",
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


def test_max_actions_caps_the_episode_and_the_old_flag_still_works_with_a_warning(submitted, capsys):
    from halo.cli.main import main

    assert main(["train", "--max-actions", "3"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["train", "--max-steps", "2"]) == 0
    assert "--max-steps is deprecated; use --max-actions" in capsys.readouterr().err
    assert main(["train"]) == 0
    assert [spec.max_steps for spec in submitted] == [3, 2, 5]   # the suite's default: 5


@pytest.mark.parametrize("argv, model, extra", [
    (["--route", "my-route"], "my-route", {}),
    (["--backend", "tinker", "--base-model", "Qwen/Qwen3-VL-8B", "--route", "tk"], "Qwen/Qwen3-VL-8B", {"route": "tk"}),
    (["--backend", "local_lora", "--base-model", "/models/qwen3vl", "--route", "qwen3vl"], "/models/qwen3vl",
     {"serve_route": "qwen3vl"}),
])
def test_route_and_base_model_each_mean_one_thing(submitted, capsys, argv, model, extra):
    from halo.cli.main import main

    assert main(["train", *argv]) == 0
    (spec,) = submitted
    assert spec.model == model and {k: spec.extra[k] for k in extra} == extra
    assert capsys.readouterr().err == ""


def test_the_old_checkpoint_flag_is_the_base_model_with_a_warning(submitted, capsys):
    from halo.cli.main import main

    assert main(["train", "--backend", "local_lora", "--checkpoint", "/models/qwen3vl"]) == 0
    assert submitted[0].model == "/models/qwen3vl"
    assert "--checkpoint is deprecated; use --base-model (the old spelling goes in the next release)" in capsys.readouterr().err


@pytest.mark.parametrize("argv, means", [
    (["--model", "embedded"], "--route embedded"),
    (["--backend", "tinker", "--model", "/models/tiny"], "--base-model /models/tiny"),
    (["--backend", "tinker", "--kind", "mcts", "--model", "tk"], "--route tk"),
    (["--backend", "local_lora", "--model", "/models/qwen3vl"], "--base-model /models/qwen3vl"),
])
def test_the_old_model_flag_takes_its_meaning_from_the_backend(submitted, capsys, argv, means):
    from halo.cli.main import main

    assert main(["train", *argv]) == 0
    assert f"--model is deprecated; with --backend" in (err := capsys.readouterr().err) and f"it means {means}" in err
    (spec,) = submitted
    flag, value = means.split()
    assert (spec.extra.get("route") or spec.model) == value if flag == "--route" else spec.model == value


def test_a_base_model_for_the_embedded_policy_is_refused(submitted):
    from halo.cli.main import main

    for argv in (["--base-model", "Qwen/Qwen3-VL-8B"], ["--checkpoint", "/models/x"]):
        with pytest.raises(SystemExit, match="--base-model has no meaning with --backend embedded"):
            main(["train", *argv])
    assert submitted == []


def test_old_spellings_of_suites_backends_and_seconds_flags_still_work(submitted, capsys):
    from halo.cli.main import main

    assert main(["train", "--suite", "real_easy", "--backend", "local-lora", "--sample-timeout", "90"]) == 0
    err = capsys.readouterr().err
    assert "--suite real_easy is deprecated; use --suite real-easy" in err
    assert "--backend local-lora is deprecated; use --backend local_lora" in err
    assert "--sample-timeout is deprecated; use --sample-timeout-s" in err
    (spec,) = submitted
    assert spec.backend == "local_lora" and spec.extra["sample_timeout_s"] == 90.0 and len(spec.task_ids) == 11
    with pytest.raises(SystemExit):
        main(["train", "--backend", "lora"])       # not an old spelling: refused by the choices


def test_running_services_get_the_token_and_the_ca_like_eval(submitted, capsys):
    from halo.cli.main import main

    assert main(["train", "--env", "10.0.0.5:50051", "--token", "t0k"]) == 0
    (spec,) = submitted
    targets = spec.extra.pop("_targets")
    assert targets["env_target"] == "10.0.0.5:50051" and targets["token"] == "t0k" and targets["tls_ca"] == ""
    assert targets["reward_target"] == "" and targets["gateway_target"] == ""   # started here
    # TLS reaches every service the run uses, and the ones started here serve plaintext
    assert main(["train", "--env", "h:1", "--tls-ca", "ca.pem"]) == 2
    assert "give --env, --reward and --gateway too" in capsys.readouterr().err
    assert main(["train", "--env", "h:1", "--reward", "h:2", "--gateway", "h:3", "--tls-ca", "ca.pem", "--token", "t"]) == 0
    targets = submitted[-1].extra.pop("_targets")
    assert (targets["env_target"], targets["reward_target"], targets["gateway_target"], targets["tls_ca"]) == (
        "h:1", "h:2", "h:3", "ca.pem")
    assert main(["train", "--submit", "h:9", "--reward", "h:2"]) == 2


def test_the_greedy_eval_is_labelled_with_what_it_covers(tmp_path):
    from halo.cli.curriculum import suite
    from halo.cli.train import eval_label, sampled_label
    from halo.trainers.plots import plot_curves

    playground = RunSpec(task_ids=suite("playground-easy").select())
    real = RunSpec(task_ids=suite("real-easy").select())
    assert eval_label(playground) == "greedy, 4 training tasks × seeds 1001-1004 (held-out layouts)"
    assert eval_label(real) == "greedy, the 11 training tasks × seeds 1001-1004 (REAL replicas: not held out)"
    real.extra["eval_seeds"] = [1001]   # what halo train --suite real-easy sets
    assert eval_label(real) == "greedy, the 11 training tasks × seed 1001 (REAL replicas: not held out)"
    assert eval_label(RunSpec(kind="mcts", task_ids=["playground-finish"], extra={"eval_seeds": [3, 7]})) == \
        "greedy, 1 training task × seeds 3, 7 (held-out layouts)"
    rows = [{"step": 1, "success_rate": 0.1, "eval_success_rate_untrained": 0.0}, {"step": 2, "eval_success_rate": 0.5}]
    assert sampled_label(RunSpec(groups_per_batch=4, group_size=8)) == "4 groups × 8 episodes a step, on training seeds"
    assert sampled_label(RunSpec(kind="mcts", groups_per_batch=2)) == "the best path of 2 searches a step, on training seeds"
    assert sampled_label(RunSpec(groups_per_batch=1, group_size=2)) == "1 group × 2 episodes a step, on training seeds"
    assert plot_curves(rows, tmp_path / "curves.png", eval_label=eval_label(real), sampled=sampled_label(real)).stat().st_size > 0


def test_train_summary_and_curves_show_both_verdicts(tmp_path):
    """agisdk's success and strict success, sampled and greedy, in the printed summary, the step
    lines and the curves (a curve per verdict)."""
    import matplotlib.pyplot as plt
    from halo.cli import train
    from halo.cli.runs import describe_metrics
    from halo.trainers import plots

    rows = [{"step": 1, "success_rate": 0.5, "success_rate_strict": 0.25, "eval_success_rate_untrained": 0.5,
             "eval_success_rate_strict_untrained": 0.0},
            {"step": 2, "success_rate": 0.75, "success_rate_strict": 0.5, "eval_success_rate": 1.0, "eval_success_rate_strict": 0.75}]
    with train.console.capture() as out:
        train._summary(rows)
    printed = out.get()
    assert "training success rate (sampled): step 1 50% -> step 2 75%" in printed
    assert "training strict success rate (sampled): step 1 25% -> step 2 50%" in printed
    assert "success, greedy eval: untrained 50% -> trained 100%" in printed
    assert "strict success, greedy eval: untrained 0% -> trained 75%" in printed
    assert "eval_success_rate_strict=0.75" in describe_metrics(rows[1])

    labels: list[str] = []
    real_plot = plt.Axes.plot

    def plot(ax, *args, **kwargs):
        labels.append(kwargs.get("label", ""))
        return real_plot(ax, *args, **kwargs)

    plt.Axes.plot = plot
    try:
        plots.plot_curves(rows, tmp_path / "curves.png", eval_label="greedy eval")
    finally:
        plt.Axes.plot = real_plot
    assert {"success rate (agisdk)", "strict success rate", "greedy eval", "greedy eval, strict"} <= set(labels)


def test_success_flag_picks_the_verdict_the_bonus_follows(submitted):
    from halo.cli.main import main

    assert main(["train", "--steps", "1"]) == 0 and main(["train", "--steps", "1", "--success", "strict"]) == 0
    agisdk, strict = submitted
    assert "strict_success" not in agisdk.reward_overrides and agisdk.extra["success"] == "agisdk"
    assert strict.reward_overrides == {**agisdk.reward_overrides, "strict_success": 1.0} and strict.extra["success"] == "strict"


def test_constrain_actions_sets_the_runs_action_regex_for_a_local_lora_run_only(submitted, capsys):
    from halo.agent.grammar import action_regex
    from halo.cli.main import main

    assert main(["train", "--backend", "local_lora", "--constrain-actions"]) == 0
    assert main(["train", "--backend", "local_lora", "--constrain-actions", "(a|b)"]) == 0
    assert [s.extra["action_regex"] for s in submitted] == [action_regex(), "(a|b)"]
    assert main(["train", "--constrain-actions"]) == 2                        # the embedded policy has no text to constrain
    assert "--constrain-actions needs --backend local_lora" in capsys.readouterr().err
    assert len(submitted) == 2 and "action_regex" not in RunSpec(backend="local_lora", task_ids=["x"]).extra


def test_the_default_temperature_follows_the_backend(submitted, monkeypatch):
    """The reference settings' 0.7 for Qwen3-VL (Tinker, local_lora), 1.0 for the embedded head; a
    given --temperature wins."""
    from halo.cli.main import main

    monkeypatch.setenv("TINKER_API_KEY", "offline-test-key")
    for argv in (["--backend", "tinker"], ["--backend", "local_lora"], [], ["--backend", "tinker", "--temperature", "1.0"]):
        assert main(["train", *argv]) == 0
    assert [s.temperature for s in submitted] == [0.7, 0.7, 1.0, 1.0]
