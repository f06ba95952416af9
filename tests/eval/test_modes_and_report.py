"""Modes -> gateway routes and adapters, seed lists, and the report's aggregates (no services)."""

from __future__ import annotations

import math

import pytest

from halo.cli.eval import parse_seeds
from halo.evaluation.modes import MODES, resolve_mode
from halo.evaluation.records import action_from_json, action_to_json
from halo.evaluation.summary import site_rows, task_rows


def test_each_mode_maps_to_a_route_of_configs_gateway_yaml_and_its_adapter(tmp_path, monkeypatch):
    import yaml

    from halo.policy.config import DEFAULT_CONFIG_PATH

    routes = {r["name"]: r for r in yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())["routes"]}
    expected = {"gpt5_baseline": ("gpt", ""), "qwen3vl_base": ("qwen3vl", ""),
                "qwen3vl_grpo": ("qwen3vl", "checkpoints/qwen3vl_grpo_lora"),
                "qwen3vl_mcts": ("qwen3vl", "checkpoints/qwen3vl_mcts_lora"), "embedded": ("embedded", "")}
    assert set(MODES) == set(expected)
    for mode, (route, adapter) in expected.items():
        r = resolve_mode(mode)
        assert (r.route, r.adapter_path) == (route, adapter) and route in routes
        assert r.adapter == (mode if adapter else "")
    assert routes["gpt"]["api_key_env"] == "OPENAI_API_KEY" and routes["qwen3vl"]["backend"] == "vllm"

    monkeypatch.chdir(tmp_path)   # an adapter folder on this machine is passed to vLLM as an absolute path
    (tmp_path / "checkpoints" / "qwen3vl_grpo_lora").mkdir(parents=True)
    with pytest.raises(ValueError, match="no PEFT adapter here"):   # vLLM would refuse it after the services started
        resolve_mode("qwen3vl_grpo")
    (tmp_path / "checkpoints" / "qwen3vl_grpo_lora" / "adapter_config.json").write_text("{}")
    assert resolve_mode("qwen3vl_grpo").adapter_path == str(tmp_path / "checkpoints" / "qwen3vl_grpo_lora")
    # a local_lora run folder: its last checkpoint's adapter; a checkpoint folder: its adapter
    run = tmp_path / "runs" / "r1"
    for step in (2, 10):
        (run / "checkpoints" / f"step-{step}" / "adapter").mkdir(parents=True)
        (run / "checkpoints" / f"step-{step}" / "adapter" / "adapter_config.json").write_text("{}")
    last = str(run / "checkpoints" / "step-10" / "adapter")
    assert resolve_mode("qwen3vl_grpo", adapter_path="runs/r1").adapter_path == last
    assert resolve_mode("qwen3vl_grpo", adapter_path="runs/r1/checkpoints/step-10").adapter_path == last
    assert resolve_mode("qwen3vl_grpo", adapter_path="/on/the/vllm/host").adapter_path == "/on/the/vllm/host"
    assert resolve_mode("qwen3vl_grpo", adapter_path="").adapter_path == ""          # --adapter '' : base model
    tinker = resolve_mode("qwen3vl_grpo", route="qwen3vl-tinker", adapter_path="tinker://run/sampler/7")
    assert (tinker.route, tinker.adapter_path, tinker.adapter) == ("qwen3vl-tinker", "tinker://run/sampler/7", "qwen3vl_grpo")

    with pytest.raises(ValueError, match="unknown mode"):
        resolve_mode("gpt4")
    with pytest.raises(ValueError, match="--weights loads embedded head weights"):
        resolve_mode("qwen3vl_base", weights=str(tmp_path))
    with pytest.raises(ValueError, match="not found"):
        resolve_mode("embedded", weights=str(tmp_path / "nothing.safetensors"))


def test_seed_lists():
    assert parse_seeds("0") == [0]
    assert parse_seeds("0-3,7,2") == [0, 1, 2, 3, 7]
    with pytest.raises(ValueError):
        parse_seeds(",")


def test_actions_round_trip_through_the_saved_json():
    from halo.agent import actions as A

    for action in (A.ClickAt(A.Point(500, 250, A.CoordinateSpace.NORMALIZED_1000), A.MouseButton.RIGHT, 2),
                   A.Drag(A.Point(1, 2), A.Point(3, 4)), A.Fill("12", "x"), A.SelectOption("3", ("a", "b")),
                   A.Scroll(0, 300, None), A.GoBack(), A.SendMessage("done")):
        assert action_from_json(action_to_json(action)) == action
    assert action_to_json(None) is None and action_from_json(None) is None


def _ep(task, site, success, length=3, valid=3, ret=0.5, env_failure=False, scorable=True):
    return {"task_id": task, "site": site, "seed": 0, "success": success, "length": length, "valid_actions": valid,
            "return": ret, "env_failure": env_failure, "scorable": scorable}


def test_success_rates_leave_out_infrastructure_failures_and_unscorable_tasks():
    episodes = [
        _ep("a-1", "a", True, length=2, valid=2, ret=1.5), _ep("a-1", "a", False, length=4, valid=2),
        _ep("a-2", "a", False, env_failure=True, length=0, valid=0, ret=0.0),
        _ep("b-1", "b", False, scorable=False), _ep("b-2", "b", True, length=6, valid=6, ret=2.0),
    ]
    sites = {r.name: r for r in site_rows(episodes)}
    a, b, total = sites["a"], sites["b"], sites["all"]
    assert (a.episodes, a.scored, a.successes, a.env_failures) == (3, 2, 1, 1)
    assert a.success_rate == 0.5 and a.mean_steps == 3.0 and a.validity == pytest.approx(4 / 6)
    assert (b.scored, b.unscorable, b.success_rate) == (1, 1, 1.0)
    assert (total.episodes, total.scored, total.successes) == (5, 3, 2) and total.success_rate == pytest.approx(2 / 3)
    tasks = {r.name: r for r in task_rows(episodes)}
    assert math.isnan(tasks["a-2"].success_rate) and tasks["a-2"].site == "a"


def test_tables_show_strict_success_beside_agisdks():
    from halo.evaluation.summary import SITE_HEADER, TASK_HEADER, site_cells, task_cells

    lenient = {**_ep("a-1", "a", True, length=2, valid=2, ret=1.5), "success_strict": False}
    solved = {**_ep("a-1", "a", True, length=2, valid=2, ret=1.5), "success_strict": True}
    older = _ep("a-2", "a", True, length=2, valid=2, ret=1.5)           # stored before strict success: counts 0
    [a, _all] = site_rows([lenient, solved, older])
    assert (a.successes, a.successes_strict, a.success_rate_strict) == (3, 1, pytest.approx(1 / 3))
    cells = dict(zip(SITE_HEADER, site_cells(a)))
    assert cells["success rate"] == "100%" and cells["strict success"] == "33% (1/3)"
    [task_a1, _] = task_rows([lenient, solved, older])
    per_task = dict(zip(TASK_HEADER, task_cells(task_a1)))
    assert per_task["success"] == "2/2 (100%)" and per_task["strict success"] == "1/2 (50%)"


def test_success_flag_sets_the_strict_weight_only_for_strict():
    from halo.cli.train import success_overrides
    from halo.reward.config import load_config

    assert success_overrides("agisdk", {"loop_penalty": -1.0}) == {"loop_penalty": -1.0}
    strict = success_overrides("strict", {"loop_penalty": -1.0})
    assert strict == {"loop_penalty": -1.0, "strict_success": 1.0}
    assert load_config().with_overrides(strict).weights.strict_success == 1.0   # a name the reward service knows
    with pytest.raises(SystemExit):
        success_overrides("lenient", {})


def test_a_tinker_run_folder_evaluates_its_last_sampler_weights_on_the_tinker_route(tmp_path):
    """`halo eval --adapter runs/<tinker run>`: the run's checkpoints (as the Tinker trainer writes
    them) name their weights on Tinker; the last one's sampler path is loaded on qwen3vl-tinker."""
    from tests.tinker.fakes import tinker_run_folder

    run = tmp_path / "run"
    tinker_run_folder(run, recorded=[1, 2], checkpointed=[1, 2])

    resolved = resolve_mode("qwen3vl_grpo", adapter_path=str(run))
    assert (resolved.route, resolved.adapter_path) == ("qwen3vl-tinker", "tinker://m/sampler/2")
    one = resolve_mode("qwen3vl_grpo", adapter_path=str(run / "checkpoints" / "step-000001"))
    assert one.adapter_path == "tinker://m/sampler/1"
    assert resolve_mode("qwen3vl_grpo", route="my-tinker", adapter_path=str(run)).route == "my-tinker"   # --route wins

    tinker_run_folder(run, recorded=[1, 2], checkpointed=[3])
    with pytest.raises(ValueError, match="records no sampler weights"):   # step 3 has no record on Tinker
        resolve_mode("qwen3vl_grpo", adapter_path=str(run))
