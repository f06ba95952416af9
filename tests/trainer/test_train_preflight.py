"""`halo train` refuses a run that cannot work before it starts anything: no Chromium, no service,
no model load. Each refusal is one line naming the flag the user typed, exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def nothing_starts(monkeypatch):
    """Any attempt to start the local stack fails the test: the refusal must come first."""
    import halo.cli.stack

    class Refused:
        def __init__(self, *args, **kwargs):
            raise AssertionError("the local stack was started before the run was checked")

    monkeypatch.setattr(halo.cli.stack, "LocalStack", Refused)


def qwen3vl_folder(root: Path, model_type: str = "qwen3_vl") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"model_type": model_type}))
    return root


def refusal(capsys, argv: list[str]) -> str:
    from halo.cli.main import main

    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("halo train: ") and "\n" not in err, err
    return err


def test_a_local_lora_run_needs_a_qwen3vl_base_model_folder(nothing_starts, capsys, tmp_path):
    assert "needs --base-model" in refusal(capsys, ["--backend", "local_lora"])
    assert "--base-model /nowhere/qwen: no such folder" in refusal(capsys, ["--backend", "local_lora", "--base-model", "/nowhere/qwen"])
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no readable config.json" in refusal(capsys, ["--backend", "local_lora", "--base-model", str(empty)])
    llama = qwen3vl_folder(tmp_path / "llama", "llama")
    assert "a llama model, not a Qwen3-VL one" in refusal(capsys, ["--backend", "local_lora", "--base-model", str(llama)])


def test_options_device_and_route_are_checked_before_anything_starts(nothing_starts, capsys, tmp_path, monkeypatch):
    import torch

    model = str(qwen3vl_folder(tmp_path / "qwen"))
    base = ["--backend", "local_lora", "--base-model", model]
    assert "does not know extra.tis_capp" in refusal(capsys, [*base, "--extra", '{"tis_capp": 2}'])
    if not torch.cuda.is_available():
        assert "--device cuda: this torch" in refusal(capsys, [*base, "--device", "cuda"])
    assert "--device places the local_lora learner" in refusal(capsys, ["--device", "cuda"])
    assert "--route nope: " in (err := refusal(capsys, [*base, "--route", "nope"])) and "vLLM routes: qwen3vl" in err
    # a route of the table whose vLLM is not there
    table = tmp_path / "gateway.yaml"
    table.write_text("routes:\n  - name: gone\n    backend: vllm\n    base_url: http://127.0.0.1:9/v1\n"
                     "    served_model: qwen3-vl\n    api_key: EMPTY\n")
    monkeypatch.setenv("HALO_GATEWAY_CONFIG", str(table))
    assert "--route gone: no vLLM answers at http://127.0.0.1:9/v1" in refusal(capsys, [*base, "--route", "gone"])


def test_a_tinker_run_without_its_key_is_refused_before_anything_starts(nothing_starts, capsys, monkeypatch):
    monkeypatch.delenv("TINKER_API_KEY", raising=False)
    assert "--backend tinker needs an API key: set TINKER_API_KEY" in refusal(capsys, ["--backend", "tinker"])


def test_the_routes_vllm_must_serve_the_runs_model_from_its_checkpoint(nothing_starts, capsys, tmp_path, monkeypatch,
                                                                          vllm_server, vllm_model_dir):
    """Against the session's real vLLM: a route whose served name vLLM does not list, and a learner
    checkpoint other than the one vLLM serves, are refused; the matching pair passes the check."""
    from halo.cli.preflight import check_local_run
    from halo.runs.spec import RunSpec

    def table(served: str) -> None:
        path = tmp_path / f"{served}.yaml"
        path.write_text(f"routes:\n  - name: local\n    backend: vllm\n    base_url: {vllm_server.base_url}\n"
                        f"    served_model: {served}\n    api_key: EMPTY\n")
        monkeypatch.setenv("HALO_GATEWAY_CONFIG", str(path))

    table("another-model")
    err = refusal(capsys, ["--backend", "local_lora", "--base-model", vllm_model_dir, "--route", "local"])
    assert f"serves {vllm_server.served_model}, not 'another-model'" in err
    table(vllm_server.served_model)
    other = qwen3vl_folder(tmp_path / "other")
    err = refusal(capsys, ["--backend", "local_lora", "--base-model", str(other), "--route", "local"])
    assert "the sampler and the learner must load the same model" in err
    check_local_run(RunSpec(backend="local_lora", model=vllm_model_dir, task_ids=["x"], extra={"serve_route": "local"}),
                    gateway_here=True)   # the pair that fits: no refusal


@pytest.mark.parametrize("argv, message", [
    (["--steps", "0"], "halo train: --steps must be >= 1, got 0"),
    (["--max-actions", "-1"], "halo train: --max-actions must be >= 1, got -1"),
    (["--group-size", "0"], "halo train: --group-size must be >= 1, got 0"),
    (["--lr", "-1"], "halo train: --lr must be a finite number > 0, got -1.0"),
    (["--tasks", "playground-signup,nope-task"], "halo train: --tasks: unknown task or site 'nope-task'"),
])
def test_bad_numbers_and_unknown_tasks_are_named_by_their_flag(nothing_starts, capsys, argv, message):
    assert refusal(capsys, argv).startswith(message)


def test_known_task_ids_sites_and_all_pass_the_task_check():
    from halo.cli.train import unknown_task_refs

    assert unknown_task_refs(["playground-signup", "omnizon", "all", "omnizon-3"]) == []
    assert unknown_task_refs(["omnizon-999", "gomail"]) == ["omnizon-999"]
