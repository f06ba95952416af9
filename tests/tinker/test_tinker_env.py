"""The Tinker backend's environments, offline: tinker-cookbook's real types, renderer and rollout
code over the real env + reward services (playground replica, real Chromium). Only the sampler
is a fake at the SDK boundary (tests/tinker/fakes.py)."""

from __future__ import annotations

import asyncio
import io
import pickle
import random

import pytest
import tinker

from halo.agent import actions as A
from halo.agent.context import PageView, PastStep, PolicyContext
from halo.agent.formats import ActionFormat, format_action
from halo.errors import NotFound
from halo.trainers.tinker_env import (
    BrowserTaskConfig,
    HaloBrowserDatasetBuilder,
    HaloBrowserGroupBuilder,
    batch_for_step,
    env_failure_strategy,
    render_observation,
)
from tests.tinker.fakes import FakeSamplingClient, TinyQwenSamplingClient, alternating_signup_script, tool_call


def _screenshot(color=(40, 120, 200)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (1280, 720), color).save(buffer, format="PNG")
    return buffer.getvalue()


def _encode(renderer, text: str) -> list[int]:
    tokenizer = renderer.tokenizer
    return tokenizer.encode(text, add_special_tokens=False) + [tokenizer.convert_tokens_to_ids("<|im_end|>")]


def test_observation_is_rendered_by_the_qwen3_vl_renderer_with_bounded_history(renderer):
    history = tuple(PastStep(A.ClickElement(str(i)), error="boom" if i == 8 else "") for i in range(1, 9))
    axtree = "\n".join(f'[{i}] link "Item {i:05d}"' for i in range(6000))   # ~130K characters
    page = PageView(screenshot=_screenshot(), image_mime="image/png", axtree=axtree, url="http://127.0.0.1/p/", title="P")
    ctx = PolicyContext(goal="Sign up for the newsletter.", page=page, history=history)
    model_input, prompt = render_observation(renderer, ctx, BrowserTaskConfig("", "").prompt_options())

    kinds = [type(c).__name__ for c in model_input.chunks]
    assert kinds.count("ImageChunk") == 1
    image_at = kinds.index("ImageChunk")
    image = model_input.chunks[image_at]
    assert image.format == "jpeg"
    # the renderer's token count for the screenshot is the image processor's (merged patches)
    from PIL import Image

    grid = renderer.image_processor(images=[Image.open(io.BytesIO(image.data)).convert("RGB")], return_tensors="pt")["image_grid_thw"]
    assert image.expected_tokens == int(grid[0].prod()) // 4 > 0
    decode = renderer.tokenizer.decode
    before = "".join(decode(c.tokens) for c in model_input.chunks[:image_at])
    after = "".join(decode(c.tokens) for c in model_input.chunks[image_at + 1:])
    assert before.startswith("<|im_start|>system\n") and "computer_use" in before and before.endswith("<|vision_start|>")
    assert after.startswith("<|vision_end|>Goal: Sign up for the newsletter.")
    assert after.endswith("<|im_start|>assistant\n")
    # the last 5 actions only, written in the computer_use syntax, with their errors
    assert "Previous actions (last 5 of 8):" in after
    assert '4. {"name": "computer_use", "arguments": {"action": "click_element", "bid": "4"}}' in after
    assert "3. {" not in after and '8. {"name": "computer_use", "arguments": {"action": "click_element", "bid": "8"}}  -> error: boom' in after
    # the AXTree is cut to its budget: the prompt stays bounded whatever the page
    assert "more characters of the tree not shown" in after and "Item 05999" not in after
    assert model_input.length < 9000, model_input.length
    assert renderer.get_stop_sequences() == [renderer.tokenizer.convert_tokens_to_ids("<|im_end|>")]


async def test_env_steps_score_and_end_on_the_playground(stack, env, renderer, task_config):
    before = (await env.pool_stats()).active_sessions
    builder = HaloBrowserGroupBuilder("playground-signup", 0, 2, task_config)
    good, bad = await builder.make_envs()
    ob, stop = await good.initial_observation()
    await bad.initial_observation()
    assert isinstance(ob, tinker.ModelInput) and stop == renderer.get_stop_sequences()
    assert good.session_id and bad.session_id and good.session_id != bad.session_id
    assert (await env.pool_stats()).active_sessions == before + 2

    button = next(e for e in good._obs.elements if e.name == "Sign up")
    x = (button.bbox.x + button.bbox.width / 2) / 1280 * 1000
    y = (button.bbox.y + button.bbox.height / 2) / 720 * 1000
    click = format_action(A.ClickAt(A.Point(round(x), round(y), A.CoordinateSpace.NORMALIZED_1000)), ActionFormat.QWEN_COMPUTER_USE)
    first = await good.step(_encode(renderer, "I click the button.\n" + click))
    assert not first.episode_done
    assert first.metrics["action_valid"] == 1.0 and first.metrics["reward/milestone:signed_up"] > 0
    assert first.reward == pytest.approx(sum(v for k, v in first.metrics.items() if k.startswith("reward/")))
    # the next observation is a fresh prompt whose history holds the click on the 0..1000 grid
    text = "".join(renderer.tokenizer.decode(c.tokens) for c in first.next_observation.chunks if hasattr(c, "tokens"))
    assert '1. {"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [' in text
    last = await good.step(_encode(renderer, tool_call('{"action": "answer", "text": "Signed up."}')))
    assert last.episode_done and last.next_observation.length == 0
    assert last.metrics["success"] == 1.0 and last.metrics["success_bonus"] == 1.0 and last.metrics["stop/completed"] == 1.0
    assert last.reward >= 1.0   # the evaluator's success bonus is part of the final step's reward

    r1 = await bad.step(_encode(renderer, "no idea"))
    r2 = await bad.step(_encode(renderer, "still no idea"))
    assert r1.metrics["action_parsed"] == 0.0 and r1.reward == pytest.approx(-0.2)
    assert r2.episode_done and r2.metrics["stop/max_turns"] == 1.0 and r2.metrics["success"] == 0.0
    assert r2.reward == pytest.approx(-0.2)

    summaries = {s.success: s for s in builder.summaries()}
    assert summaries[True].ret == pytest.approx(first.reward + last.reward) and summaries[True].valid_actions == 2
    assert summaries[False].ret == pytest.approx(-0.4) and summaries[False].valid_actions == 0
    assert builder.logging_tags() == ["playground"]

    sessions = [good.session_id, bad.session_id]
    ended: list = []
    builder.on_group_done = ended.append   # the trainer's sink: each ended rollout of the group, once
    await builder.cleanup()
    await builder.cleanup()   # idempotent
    assert [sorted(s.success for s in group) for group in ended] == [[False, True]]
    for session in sessions:
        with pytest.raises(NotFound):
            await env.get_state(session)
    assert (await env.pool_stats()).active_sessions == before


async def test_a_group_rolls_out_through_the_cookbook_and_becomes_datums(env, task_config, renderer):
    from tinker_cookbook.completers import TinkerTokenCompleter
    from tinker_cookbook.rl.data_processing import assemble_training_data, compute_advantages
    from tinker_cookbook.rl.rollout_strategy import MinViableGroup
    from tinker_cookbook.rl.rollouts import do_group_rollout

    before = (await env.pool_stats()).active_sessions
    sampler = FakeSamplingClient(renderer.tokenizer, alternating_signup_script())
    policy = TinkerTokenCompleter(sampler, max_tokens=64, temperature=0.7)
    builder = HaloBrowserGroupBuilder("playground-signup", 0, 4, task_config)
    group = await do_group_rollout(builder, policy, strategy=MinViableGroup(min_successful=3, max_retries=0))

    assert len(group.trajectories_G) == 4 and not group.rollout_errors
    returns = sorted(group.get_total_rewards())
    assert returns[0] == returns[1] == pytest.approx(-0.4)          # two unparseable episodes
    assert returns[2] == returns[3] and returns[3] > 1.0            # two that signed up and answered
    assert all(p.temperature == 0.7 and p.max_tokens == 64 for _, p in sampler.calls)
    assert {t.stop_reason for t in group.trajectories_G} == {"completed", "max_turns"}

    (advantages,) = compute_advantages([group])
    assert float(advantages.sum()) == pytest.approx(0.0, abs=1e-5)
    data, meta = assemble_training_data([group], [advantages])
    # a fresh prompt each step: one datum per step (not one growing sequence), 2 steps per episode
    assert len(data) == 8 and {m["traj_idx"] for m in meta} == {0, 1, 2, 3}
    for datum, m in zip(data, meta):
        assert any(isinstance(c, tinker.types.ImageChunk) for c in datum.model_input.chunks)
        inputs = datum.loss_fn_inputs
        adv, mask = inputs["advantages"].to_torch(), inputs["mask"].to_torch()
        assert len(inputs["target_tokens"].to_torch()) == len(inputs["logprobs"].to_torch()) == len(adv) == datum.model_input.length
        assert float(adv[mask > 0].unique()[0]) == pytest.approx(float(advantages[m["traj_idx"]]))
    # every session was closed by cleanup()
    assert all(e._closed for e in builder.envs) and (await env.pool_stats()).active_sessions == before


async def test_an_env_failure_is_dropped_from_its_group_not_scored(stack, env, task_config, renderer):
    from tinker_cookbook.completers import TinkerTokenCompleter
    from tinker_cookbook.rl.rollout_strategy import MinViableGroup
    from tinker_cookbook.rl.rollouts import do_group_rollout

    from halo.trainers.advantages import step_metrics

    builder = HaloBrowserGroupBuilder("playground-signup", 0, 3, task_config)
    broken = []

    async def break_a_session(call: int, group=builder) -> None:
        if call == 1:   # an env that has a session and has not stepped yet (its next step will fail)
            target = next(e for e in group.envs if e.session_id and not e.history)
            broken.append(target)
            await env.close_session(target.session_id)   # the session vanishes under the trainer

    sampler = FakeSamplingClient(renderer.tokenizer, alternating_signup_script(), before_sample=break_a_session)
    policy = TinkerTokenCompleter(sampler, max_tokens=64)
    group = await do_group_rollout(builder, policy, strategy=MinViableGroup(min_successful=2, max_retries=0))

    assert len(group.trajectories_G) == 2
    assert [e.error_type for e in group.rollout_errors] == ["EnvFailure"]
    assert "NotFound" in group.rollout_errors[0].error_message
    (failed,) = broken
    assert [e for e in builder.envs if e.env_failure] == [failed]
    assert failed.env_failure and failed.summary is not None and failed.summary.env_failure
    metrics = step_metrics([builder.summaries()])
    assert metrics["env_failures"] == 1 and metrics["episodes"] == 2

    # with a floor the group cannot meet, the whole group is dropped (AllTrajectoriesFailedError)
    small = HaloBrowserGroupBuilder("playground-signup", 0, 2, task_config)

    async def break_one(call: int) -> None:
        await break_a_session(call, small)

    sampler = FakeSamplingClient(renderer.tokenizer, alternating_signup_script(), before_sample=break_one)
    from tinker_cookbook.exceptions import AllTrajectoriesFailedError

    with pytest.raises(AllTrajectoriesFailedError):
        await do_group_rollout(small, TinkerTokenCompleter(sampler, max_tokens=64), strategy=MinViableGroup(min_successful=2, max_retries=0))
    assert all(e._closed for e in small.envs)

    # the backends' default strategy rolls the lost member out again in a fresh session: the group is whole
    again = HaloBrowserGroupBuilder("playground-signup", 0, 2, task_config)

    async def break_first(call: int) -> None:
        await break_a_session(call, again)

    sampler = FakeSamplingClient(renderer.tokenizer, alternating_signup_script(), before_sample=break_first)
    strategy = env_failure_strategy(2, {})
    assert (strategy.min_successful, strategy.max_retries) == (2, 4)
    group = await do_group_rollout(again, TinkerTokenCompleter(sampler, max_tokens=64), strategy=strategy)
    assert len(group.trajectories_G) == 2 and [e.error_type for e in group.rollout_errors] == ["EnvFailure"]
    assert sum(bool(e.env_failure) for e in again.envs) == 1 and all(e._closed for e in again.envs if e.session_id)
    assert (await env.pool_stats()).active_sessions == 0


async def test_dataset_builder_expands_sites_and_batches_deterministically(stack, task_config):
    dataset_builder = HaloBrowserDatasetBuilder(
        task_refs=["playground"], config=task_config, group_size=3, groups_per_batch=2, num_batches=5, seed=7,
        eval_seeds=[11, 12],
    )
    train, test = await dataset_builder()
    assert len(train) == 5
    assert {t for t in train.tasks} >= {"playground-signup", "playground-name"} and all(t.startswith("playground-") for t in train.tasks)
    batch = train.get_batch(0)
    assert len(batch) == 2 and all(b.group_size == 3 for b in batch)
    again = train.get_batch(0)
    assert [(b.task_id, b.seed) for b in batch] == [(b.task_id, b.seed) for b in again]
    assert [(b.task_id, b.seed) for b in batch] == batch_for_step(train.tasks, 7, 0, 2)
    # the same draw as the embedded GRPO trainer: random.Random(f"{seed}:{step}") for step = index + 1
    rng = random.Random("7:1")
    assert batch_for_step(train.tasks, 7, 0, 2) == [(rng.choice(train.tasks), rng.randrange(1000)) for _ in range(2)]
    assert len({(b.task_id, b.seed) for i in range(5) for b in train.get_batch(i)}) > 2

    # builders are picklable before and after opening their envs (no channels or sessions travel)
    copy = pickle.loads(pickle.dumps(batch[0]))
    assert (copy.task_id, copy.seed, copy.group_size, copy.config) == (batch[0].task_id, batch[0].seed, 3, task_config)
    await batch[0].make_envs()
    reopened = pickle.loads(pickle.dumps(batch[0]))
    assert reopened.envs == [] and reopened._services is None
    await batch[0].cleanup()

    assert test is not None and len(test) == 1
    evaluation = test.get_batch(0)
    assert len(evaluation) == 2 * len(train.tasks) and all(b.group_size == 1 for b in evaluation)
    assert {b.seed for b in evaluation} == {11, 12}


async def test_the_tiny_qwen3_vl_samples_real_tokens_through_the_env(env, task_config, tiny_dir):
    from tinker_cookbook.completers import TinkerTokenCompleter
    from tinker_cookbook.rl.rollouts import do_single_rollout

    from halo.trainers.lora_learner import PeftSampler

    sampler = TinyQwenSamplingClient(await asyncio.to_thread(PeftSampler, tiny_dir))
    builder = HaloBrowserGroupBuilder("playground-signup", 0, 1, task_config)
    (env_,) = await builder.make_envs()
    try:
        trajectory = await do_single_rollout(TinkerTokenCompleter(sampler, max_tokens=12, temperature=1.0), env_)
    finally:
        await builder.cleanup()
    assert len(trajectory.transitions) == 2 and trajectory.transitions[-1].episode_done
    for t in trajectory.transitions:
        assert 1 <= len(t.ac.tokens) <= 12 and len(t.ac.logprobs) == len(t.ac.tokens)
        assert all(lp <= 0 for lp in t.ac.logprobs)
        assert t.metrics["action_parsed"] in (0.0, 1.0)
        if t.metrics["action_parsed"] == 0.0:   # random weights: gibberish, scored as an invalid action
            assert t.metrics["reward/invalid_action"] < 0
    assert sampler.calls == 2


async def test_text_only_mode_asks_the_env_for_no_screenshot_and_renders_no_image(env, task_config, renderer, tmp_path):
    """`halo train --observation text` (extra.screenshots False): the env skips the screenshot
    (skip_screenshot) and the prompt is the AXTree, goal and URL only: no image chunk at all."""
    import dataclasses

    from halo.trainers.tinker_train import build_config
    from halo.runs.context import ServiceTargets
    from halo.runs.spec import RunSpec

    text = dataclasses.replace(task_config, screenshots=False)
    builder = HaloBrowserGroupBuilder("playground-signup", 0, 1, text)
    (env_,) = await builder.make_envs()
    try:
        ob, _ = await env_.initial_observation()
        assert env_._obs.screenshot == b"" and env_._obs.axtree   # the env did not take one
        assert not any(isinstance(c, tinker.types.ImageChunk) for c in ob.chunks)
        prompt = "".join(renderer.tokenizer.decode(c.tokens) for c in ob.chunks)
        assert "<|vision_start|>" not in prompt and "Sign up" in prompt
    finally:
        await builder.cleanup()
    # the flag's path: extra.screenshots reaches the envs' config (True by default)
    spec = RunSpec(backend="tinker", task_ids=["x"], extra={"screenshots": False})
    assert build_config(spec, ServiceTargets("e"), tmp_path).dataset_builder.config.screenshots is False
    assert build_config(RunSpec(backend="tinker", task_ids=["x"]), ServiceTargets("e"), tmp_path).dataset_builder.config.screenshots is True
