"""The evaluation harness on real services: episodes saved (steps JSONL + JPEG screenshots), reports,
resume after an interruption, embedded weights loaded as an adapter, configuration errors named."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from PIL import Image

from tests.eval.conftest import SCRIPTED_KINDS, SCRIPTED_SEED, SCRIPTED_TASK


async def test_scripted_episode_is_saved_with_steps_screenshots_and_evaluation(scripted_eval):
    store, spec, outcome = scripted_eval
    assert outcome.ran == 1 and len(outcome.episodes) == 1
    e = outcome.episodes[0]
    assert (e["task_id"], e["seed"], e["site"]) == (SCRIPTED_TASK, SCRIPTED_SEED, "playground")
    assert e["success"] is True and not e["env_failure"], e
    assert e["length"] == len(SCRIPTED_KINDS) and e["valid_actions"] == len(SCRIPTED_KINDS)
    assert e["final_message"] == "The card is in the drop zone."
    assert any("board.dropped" in d and "pass" in d for d in e["eval_details"]), e["eval_details"]
    assert e["return"] > 1.0   # the success bonus plus the shaping rewards

    folder = store.episode_dir(spec.eval_id, SCRIPTED_TASK, SCRIPTED_SEED)
    steps = [json.loads(line) for line in (folder / "steps.jsonl").read_text().splitlines()]
    assert [next(iter(s["action"])) for s in steps] == SCRIPTED_KINDS
    for i, s in enumerate(steps):
        assert s["step"] == i and s["raw_text"].startswith("scripted: ") and s["action_ok"], s
        assert set(s["timing"]) == {"policy_s", "env_s", "reward_s"} and s["timing"]["env_s"] > 0
        assert s["components"] and s["reward"] == pytest.approx(sum(s["components"].values()), abs=1e-6)
        data = (folder / s["screenshot"]).read_bytes()
        assert data[:3] == b"\xff\xd8\xff"   # JPEG
        assert Image.open(io.BytesIO(data)).size == (1280, 720)
    assert steps[0]["action"]["click_at"]["point"]["space"] == "COORDINATE_SPACE_NORMALIZED_1000"
    assert steps[1]["action"] == {"type_text": {"text": "Ada Lovelace"}}
    assert steps[2]["target"]["name"] == "Save" and steps[2]["target"]["width"] > 0   # the bid's element box
    assert any(k.startswith("milestone:") for s in steps for k in s["components"])   # the drop milestone was paid
    assert Image.open(folder / "final.jpg").size == (1280, 720)

    root = store.eval_dir(spec.eval_id)
    report = (root / "report.md").read_text()
    assert "| playground | 1 | 100% | 1/1 | 100% (1/1) | 6.0 | 100% |" in report   # strict success beside agisdk's
    assert f"[steps](episodes/{SCRIPTED_TASK}--s{SCRIPTED_SEED}/index.html)" in report
    for png in ("success_by_site.png", "rewards.png"):
        image = Image.open(root / png)
        assert image.format == "PNG" and image.size[0] >= 400
    assert (root / "index.html").is_file() and (folder / "index.html").is_file()


async def test_interrupted_eval_resumes_without_rerunning_saved_episodes(targets, evals_dir):
    from halo.evaluation.harness import run_eval
    from halo.evaluation.records import EvalSpec
    from halo.evaluation.store import EvalStore

    store = EvalStore(evals_dir)
    spec = EvalSpec(eval_id="resume", mode="embedded", route="embedded", tasks=["playground-signup", "playground-plan"],
                    seeds=[0, 1], max_steps=3, workers=2, screenshots=False)
    first = asyncio.Event()

    def on_event(kind, payload):
        if kind == "episode":
            first.set()

    run = asyncio.create_task(run_eval(spec, store, targets=targets, on_event=on_event))
    await asyncio.wait_for(first.wait(), timeout=240)
    run.cancel()   # what Ctrl-C does to the CLI's loop
    with pytest.raises(asyncio.CancelledError):
        await run
    await asyncio.sleep(0.5)   # a save already in its thread finishes (it is atomic either way)
    saved = {(e["task_id"], e["seed"]): e["finished_at"] for e in store.episodes("resume")}
    assert 1 <= len(saved) < 4, saved

    events: list[tuple[str, dict]] = []
    resumed = store.load_spec("resume")
    assert resumed.task_ids == ["playground-signup", "playground-plan"] and resumed.seeds == [0, 1]
    outcome = await run_eval(resumed, store, targets=targets, on_event=lambda k, p: events.append((k, p)))
    planned = next(p for k, p in events if k == "planned")
    assert planned == {"total": 4, "done": len(saved), "pending": 4 - len(saved)}
    ran = {(p["task_id"], p["seed"]) for k, p in events if k == "episode"}
    assert ran.isdisjoint(saved) and len(ran) == 4 - len(saved) == outcome.ran
    after = {(e["task_id"], e["seed"]): e["finished_at"] for e in store.episodes("resume")}
    assert len(after) == 4 and all(after[k] == v for k, v in saved.items())   # saved episodes untouched
    assert all(e["validity"] > 0 and e["final_screenshot"] == "" for e in outcome.episodes)   # --no-screenshots
    episodes_dir = evals_dir / "resume" / "episodes"
    assert not list(episodes_dir.glob("*/*.jpg")) and not [p for p in episodes_dir.iterdir() if p.name.startswith(".")]
    report = (evals_dir / "resume" / "report.md").read_text()
    assert "4 saved of 4 planned (complete)" in report and "| playground | 4 |" in report


async def test_embedded_weights_are_pushed_to_the_gateway_and_change_the_policy(targets, evals_dir, tmp_path):
    from halo.embedded.policy import ScoringHead, head_to_bytes
    from halo.client.policy import PolicyClient
    from halo.evaluation.harness import run_eval
    from halo.evaluation.modes import resolve_mode
    from halo.evaluation.records import EvalSpec
    from halo.evaluation.store import EvalStore

    run = tmp_path / "runs" / "r1" / "checkpoints"
    for step, seed in ((2, 11), (10, 12)):   # step-10 is the last one (numeric order, not text order)
        (run / f"step-{step}").mkdir(parents=True)
        (run / f"step-{step}" / "head.safetensors").write_bytes(head_to_bytes(ScoringHead(hidden=128, seed=seed)))
    resolved = resolve_mode("embedded", weights=str(tmp_path / "runs" / "r1"))
    assert resolved.weights.endswith("step-10/head.safetensors") and resolved.adapter == "embedded-weights"

    store = EvalStore(evals_dir)
    common = dict(mode="embedded", route="embedded", tasks=["playground-plan"], seeds=[5], max_steps=2, workers=1, screenshots=False)
    await run_eval(EvalSpec(eval_id="base", **common), store, targets=targets)
    await run_eval(EvalSpec(eval_id="weights", adapter=resolved.adapter, weights=resolved.weights, **common), store,
                   targets=targets, resolved=resolved)
    async with PolicyClient(targets.gateway) as gateway:
        route = next(r for r in await gateway.list_models() if r.name == "embedded")
    assert "embedded-weights" in route.adapters
    base, trained = (store.steps(i, "playground-plan--s5")[0] for i in ("base", "weights"))
    assert base["logprob"] != pytest.approx(trained["logprob"], abs=1e-4), (base, trained)
    assert store.load_spec("weights").weights == resolved.weights


async def test_configuration_errors_stop_the_eval_and_name_the_route(targets, broken_gateway, evals_dir):
    from halo.evaluation.harness import EvalAborted, run_eval
    from halo.evaluation.modes import resolve_mode
    from halo.evaluation.records import EvalSpec
    from halo.evaluation.store import EvalStore
    from halo.runs.context import ServiceTargets

    gateway, vllm_url = broken_gateway
    broken = ServiceTargets(targets.env, targets.reward, gateway)
    store = EvalStore(evals_dir / "broken")
    cases = {
        "gpt5_baseline": ["route 'gpt'", "OPENAI_API_KEY"],
        "qwen3vl_base": ["route 'qwen3vl'", vllm_url],
        "qwen3vl_grpo": ["route 'qwen3vl'", "qwen3vl_grpo_lora"],
        "embedded": ["route 'embedded'", "does not serve"],
    }
    for mode, expected in cases.items():
        resolved = resolve_mode(mode)
        spec = EvalSpec(eval_id=f"broken-{mode}", mode=mode, route=resolved.route, adapter=resolved.adapter,
                        adapter_path=resolved.adapter_path, tasks=["playground-signup"], max_steps=2)
        with pytest.raises(EvalAborted) as info:
            await run_eval(spec, store, targets=broken, resolved=resolved)
        message = str(info.value)
        assert f"mode {mode}" in message and all(x in message for x in expected), message
        assert store.episodes(spec.eval_id) == []   # nothing measured, nothing saved

    with pytest.raises(EvalAborted, match="unknown task or site 'nosuchsite'"):
        await run_eval(EvalSpec(eval_id="badtask", mode="embedded", route="embedded", tasks=["nosuchsite"]), store, targets=targets)
