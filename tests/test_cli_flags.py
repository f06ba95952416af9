"""One meaning per flag across the `halo` subcommands: the new spellings parse, the old ones still
parse into the same setting with a warning on stderr, and on/off settings come in pairs.
(`halo train`'s flags: tests/trainer/test_train_cli.py.)"""

from __future__ import annotations

import argparse

import pytest


def _sub(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = action.choices[name]
    return parser


@pytest.fixture(scope="module")
def halo():
    from halo.cli.main import build_parser

    return build_parser()


@pytest.mark.parametrize("path, old, new, dest, value", [
    (("bench", "env"), "--steps", "--actions", "actions", "7"),
    (("bench", "leak"), "--steps", "--actions", "actions", "3"),
    (("bench", "rollout"), "--max-steps", "--max-actions", "max_actions", "4"),
    (("bench", "rollout"), "--model", "--checkpoint", "checkpoint", "/models/x"),
    (("bench", "train"), "--max-steps", "--max-actions", "max_actions", "3"),
    (("bench", "tinker-sampling"), "--model", "--base-model", "base_model", "/models/tiny"),
])
def test_bench_flags_old_and_new_spellings(halo, capsys, path, old, new, dest, value):
    parser = _sub(halo, *path)
    required = ["--tinker-url", "http://127.0.0.1:1"] if path[-1] == "tinker-sampling" else []
    expected = int(value) if value.isdigit() else value
    assert getattr(parser.parse_args([*required, new, value]), dest) == expected
    assert capsys.readouterr().err == ""
    assert getattr(parser.parse_args([*required, old, value]), dest) == expected
    assert f"{old} is deprecated; use {new}" in capsys.readouterr().err


def test_eval_max_actions_and_screenshots_pair(capsys):
    from halo.cli.eval import _screenshots, run_parser

    parser = run_parser()
    args = parser.parse_args(["--mode", "embedded", "--max-steps", "2"])
    assert args.max_actions == 2 and "--max-steps is deprecated; use --max-actions" in capsys.readouterr().err
    assert _screenshots(parser.parse_args([])) and not _screenshots(parser.parse_args(["--no-screenshots"]))
    assert _screenshots(parser.parse_args(["--screenshots"]))
    assert not _screenshots(parser.parse_args(["--observation", "text"]))


def test_launcher_status_json_path_and_vllm_pair(tmp_path):
    from halo.cli.launcher import build_parser, main

    parser = build_parser()
    assert parser.parse_args(["status", "--json"]).json == "-"
    assert parser.parse_args(["status"]).json is None
    assert parser.parse_args(["up", "--no-with-vllm"]).with_vllm is False
    assert parser.parse_args(["up", "--with-vllm"]).with_vllm is True
    out = tmp_path / "status.json"
    assert main(["status", "--run-dir", str(tmp_path / "nothing"), "--json", str(out)]) == 1   # nothing runs
    assert out.read_text().strip() == '{"services": {}, "skipped": {}}'


def test_tasks_suites_have_one_spelling_and_a_training_suite_lists_its_tasks(halo, capsys):
    from halo.cli.curriculum import suite
    from halo.cli.tasks import list_tasks

    parser = _sub(halo, "tasks", "list")
    assert parser.parse_args(["--suite", "real_v2"]).suite == "real-v2"
    assert "--suite real_v2 is deprecated; use --suite real-v2" in capsys.readouterr().err
    assert parser.parse_args(["--no-replica-only"]).replica_only is False
    assert list_tasks(parser.parse_args(["--suite", "real-easy"])) == 0
    listed = capsys.readouterr().out
    assert all(task in listed for task in suite("real-easy").select()) and "11 tasks" in listed
