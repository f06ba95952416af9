"""Evaluation harness fixtures: real services on loopback (sites, env with Chromium, reward, gateway
with the embedded policy), a scripted agent, and one scripted eval shared by the harness and viewer tests."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from halo.agent import actions as A
from halo.agent.context import PageElement, PolicyContext
from halo.rollout.episode import Decision

SCRIPTED_TASK = "playground-drag"
SCRIPTED_SEED = 3
SCRIPTED_KINDS = ["click_at", "type_text", "click_element", "drag", "scroll", "send_message"]


def find(ctx: PolicyContext, name: str, role: str = "") -> PageElement:
    return next(e for e in ctx.page.elements if e.name == name and (not role or e.role == role))


def centre(e: PageElement) -> tuple[float, float]:
    return e.x + e.width / 2, e.y + e.height / 2


@dataclass
class ScriptedPolicy:
    """A deterministic agent using every kind of overlay the viewer draws: a click at a point (Qwen3-VL's
    0-1000 space), typed text, a click by bid, a drag, a scroll, and the final answer. Drags the card
    into the zone, so the episode succeeds."""

    def raw(self, action: A.Action) -> str:
        return f"scripted: {A.describe(action)}"

    async def decide(self, ctx: PolicyContext) -> Decision:
        step = ctx.page.step_index
        w, h = ctx.page.width, ctx.page.height
        if step == 0:
            x, y = centre(next(e for e in ctx.page.elements if e.role == "textbox"))   # the profile's name field
            action: A.Action = A.ClickAt(A.Point(round(x / w * 1000), round(y / h * 1000), A.CoordinateSpace.NORMALIZED_1000))
        elif step == 1:
            action = A.TypeText("Ada Lovelace")
        elif step == 2:
            action = A.ClickElement(find(ctx, "Save", "button").bid)
        elif step == 3:
            (x1, y1), (x2, y2) = centre(find(ctx, "Card", "text")), centre(find(ctx, "Drop here", "text"))
            action = A.Drag(A.Point(x1, y1), A.Point(x2, y2))
        elif step == 4:
            action = A.Scroll(0, 300, A.Point(640, 400))
        else:
            action = A.SendMessage("The card is in the drop zone.")
        return Decision(action, raw_text=self.raw(action), logprob=-0.5)


@pytest.fixture(scope="session")
async def eval_stack():
    from halo.cli.stack import LocalStack

    async with LocalStack(env_overrides={"pool_size": 8, "acquire_timeout_s": 60}, with_reward=True, with_gateway=True) as stack:
        yield stack


@pytest.fixture(scope="session")
def targets(eval_stack):
    from halo.runs.context import ServiceTargets

    return ServiceTargets(eval_stack.env_target, eval_stack.reward_target, eval_stack.gateway_target)


@pytest.fixture(scope="session")
def evals_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("evals")


@pytest.fixture(scope="session")
async def scripted_eval(targets, evals_dir):
    """One scripted episode on the playground's drag task, with screenshots."""
    from halo.evaluation.harness import run_eval
    from halo.evaluation.store import EvalSpec, EvalStore

    store = EvalStore(evals_dir)
    spec = EvalSpec(eval_id="scripted", mode="embedded", route="embedded", tasks=[SCRIPTED_TASK], seeds=[SCRIPTED_SEED],
                    max_steps=8, workers=1)
    outcome = await run_eval(spec, store, targets=targets, policy=ScriptedPolicy())
    return store, spec, outcome


@pytest.fixture(scope="session")
async def broken_gateway(tmp_path_factory):
    """A gateway with the real configs/gateway.yaml routes gpt and qwen3vl, but no OpenAI key and no vLLM."""
    import socket

    import yaml

    from halo.policy.config import DEFAULT_CONFIG_PATH, GatewaySettings
    from halo.policy.server import build_service
    from halo.runtime.server import start_service

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    config = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())
    for route in config["routes"]:
        if route["name"] == "qwen3vl":
            route |= {"base_url": f"http://127.0.0.1:{closed_port}/v1", "retries": 1, "backoff_s": 0.05}
    path = tmp_path_factory.mktemp("gateway") / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    saved_key = os.environ.pop("OPENAI_API_KEY", None)
    settings = GatewaySettings(port=0, metrics_port=0, config=str(path), only_routes=["gpt", "qwen3vl"])
    service = await start_service(build_service(settings), settings)
    try:
        yield service.target, f"http://127.0.0.1:{closed_port}/v1"
    finally:
        await service.stop(grace=1.0)
        if saved_key is not None:
            os.environ["OPENAI_API_KEY"] = saved_key
