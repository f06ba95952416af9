"""One meaning per flag across the `halo` subcommands: the new spellings parse, the old ones still
parse into the same setting with a warning on stderr, and on/off settings come in pairs.
(`halo train`'s flags: tests/trainer/test_train_cli.py.)"""

from __future__ import annotations

import argparse
import os
import re

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
    (("bench", "rollout"), "--model", "--base-model", "base_model", "/models/x"),
    (("bench", "rollout"), "--checkpoint", "--base-model", "base_model", "/models/x"),
    (("bench", "learner"), "--checkpoint", "--base-model", "base_model", "/models/x"),
    (("bench", "learner"), "--options", "--learner-options", "learner_options", '{"micro_batch_tokens": 1}'),
    (("bench", "clicks"), "--options", "--select-options", "select_options", "5"),
    (("bench", "train"), "--max-staleness", "--max-staleness-values", "max_staleness_values", "0,2"),
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
    assert f"{old} is deprecated; use {new} (the old spelling goes in the next release)" in capsys.readouterr().err


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


def test_serve_env_max_actions_old_flag_and_variable_still_work(capsys, monkeypatch):
    from halo.env.config import EnvSettings

    assert EnvSettings.from_cli(["--max-actions", "4"]).max_actions == 4 and capsys.readouterr().err == ""
    assert EnvSettings.from_cli(["--max-steps", "5"]).max_actions == 5
    assert EnvSettings.from_cli(["--max-steps=6"]).max_actions == 6
    assert "--max-steps is deprecated; use --max-actions" in capsys.readouterr().err
    monkeypatch.setenv("HALO_ENV_MAX_STEPS", "7")
    assert EnvSettings.from_cli([]).max_actions == 7
    assert "HALO_ENV_MAX_STEPS is deprecated; use HALO_ENV_MAX_ACTIONS" in capsys.readouterr().err
    assert EnvSettings.from_cli(["--max-actions", "3"]).max_actions == 3    # the new name wins over the old variable
    monkeypatch.setenv("HALO_ENV_MAX_ACTIONS", "8")
    assert EnvSettings.from_cli([]).max_actions == 8
    monkeypatch.delenv("HALO_ENV_MAX_STEPS")
    monkeypatch.delenv("HALO_ENV_MAX_ACTIONS")
    assert EnvSettings(max_steps=9).max_actions == 9                          # the old keyword, as old code passes it
    assert EnvSettings.from_cli([]).max_actions == 70


def test_serve_reward_judge_route_names_a_route(capsys):
    from halo.reward.config import RewardSettings

    assert RewardSettings.from_cli(["--judge-route", "rubric"]).judge_route == "rubric"
    assert RewardSettings.from_cli(["--judge-model", "old"]).judge_route == "old"
    assert "--judge-model is deprecated; use --judge-route" in capsys.readouterr().err


def test_launcher_scrape_interval_in_seconds_vllm_checkpoint_and_push_pair(capsys):
    from halo.cli.launcher import build_parser, prometheus_duration

    parser = build_parser()
    assert parser.parse_args(["up", "--scrape-interval-s", "0.5"]).scrape_interval_s == 0.5
    assert capsys.readouterr().err == ""
    assert parser.parse_args(["up", "--scrape-interval", "1m30s"]).scrape_interval_s == 90.0
    assert "--scrape-interval is deprecated; use --scrape-interval-s" in capsys.readouterr().err
    for bad in ("0", "-1", "fast", "1x"):
        with pytest.raises(SystemExit):
            parser.parse_args(["up", "--scrape-interval-s", bad])
    assert (prometheus_duration(90.0), prometheus_duration(0.5), prometheus_duration(1)) == ("90s", "500ms", "1s")
    assert parser.parse_args(["up", "--vllm-model", "/m"]).vllm_checkpoint == "/m"
    assert "--vllm-model is deprecated; use --vllm-checkpoint" in capsys.readouterr().err
    images = ["deploy", "images", "--registry", "r", "--tag", "t"]
    assert parser.parse_args(images).push is True and parser.parse_args([*images, "--no-push"]).push is False


def test_bench_and_tasks_on_off_flags_are_pairs(halo, capsys):
    env, learner, audit = _sub(halo, "bench", "env"), _sub(halo, "bench", "learner"), _sub(halo, "tasks", "audit")
    assert env.parse_args(["--sites-in-process"]).sites_in_process and not env.parse_args(["--no-sites-in-process"]).sites_in_process
    assert learner.parse_args(["--bf16"]).bf16 and not learner.parse_args(["--no-bf16"]).bf16
    assert audit.parse_args(["--lenient-only"]).lenient_only and not audit.parse_args(["--no-lenient-only"]).lenient_only
    assert env.parse_args(["--agisdk-slow-mo", "5"]).agisdk_slow_mo_ms == 5
    assert "--agisdk-slow-mo is deprecated; use --agisdk-slow-mo-ms" in capsys.readouterr().err
    assert audit.parse_args(["--suite", "real_easy"]).suite == "real-easy"
    assert "--suite real_easy is deprecated; use --suite real-easy" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        audit.parse_args(["--suite", "no-such-suite"])


def _every_parser():
    """(title, parser) of every `halo` subcommand parsed by argparse."""
    from halo.cli import eval as eval_cli
    from halo.cli import launcher
    from halo.cli.main import build_parser

    found, todo = [], [("halo", build_parser()), ("halo", launcher.build_parser()), ("halo eval", eval_cli.run_parser()),
                       ("halo eval compare", eval_cli.compare_parser()), ("halo eval report", eval_cli.report_parser()),
                       ("halo eval list", eval_cli.list_parser())]
    while todo:
        title, parser = todo.pop()
        found.append((title, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{title} {name}", sub) for name, sub in action.choices.items()]
    return found


# Flags that pick what a command does rather than a setting: no --no-x form.
MODE_SWITCHES = {"--check", "--dry-run"}
SECONDS = re.compile(r"(?<!milli)seconds\b")


def test_every_flag_follows_the_conventions():
    """One meaning per flag, in every subcommand: no empty choice, no absolute default, every
    positional described, no visible --model, --checkpoint or --options (a
    route and a base model have their own flags, and so has each kind of options), a flag takes the
    same type of value everywhere, a seconds flag ends in -s, an on/off setting is a --x/--no-x
    pair, --json takes a PATH, every flag has a help line; the services' settings the same."""
    from halo.cli.serve import GRPC_SERVICES
    from halo.sites.server import SitesSettings

    problems, value_types = [], {}
    for title, parser in _every_parser():
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            name = action.option_strings[-1] if action.option_strings else action.dest
            if action.choices is not None and "" in action.choices:
                problems.append(f"{title} {name}: an empty choice shows as {{,...}} in the help (leave '' to the default)")
            if isinstance(action.default, (str, os.PathLike)) and os.path.isabs(action.default):
                problems.append(f"{title} {name}: an absolute default ({action.default}) is this machine's, not the user's")
            if not action.option_strings:
                if not action.help:
                    problems.append(f"{title} {name}: a positional without a description")
                continue
            flag, text = action.option_strings[-1], (action.help or "").lower()
            value_type = getattr(action.type, "__name__", type(action.type).__name__)   # str when None
            if value_types.setdefault(flag, (value_type, title))[0] != value_type:
                problems.append(f"{title} {flag} takes a {value_type}, {value_types[flag][1]} {flag} a {value_types[flag][0]}")
            if flag == "--model" or flag.endswith("-model") and action.metavar == "DIR":
                problems.append(f"{title} {flag}: say --route or --base-model")
            if flag == "--checkpoint" or flag == "--options":
                problems.append(f"{title} {flag}: say what it names (--base-model, --learner-options, --select-options)")
            if SECONDS.search(text) and not flag.endswith("-s"):
                problems.append(f"{title} {flag}: a seconds flag ends in -s")
            if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)) and flag not in MODE_SWITCHES:
                problems.append(f"{title} {flag}: an on/off setting is --x/--no-x")
            if flag == "--json" and action.metavar != "PATH":
                problems.append(f"{title} {flag}: --json PATH")
            if not text:
                problems.append(f"{title} {flag}: no help (the CLI reference would say nothing of it)")
    for settings in [SitesSettings, *(load()[0] for load in GRPC_SERVICES.values())]:
        for name, info in settings.model_fields.items():
            text = (info.description or "").lower()
            if SECONDS.search(text) and not name.endswith("_s"):
                problems.append(f"{settings.__name__}.{name}: a seconds setting ends in _s")
            if name.endswith("_model") and not name.endswith("base_model"):
                problems.append(f"{settings.__name__}.{name}: name what it is (a route, a base model)")
    assert not problems, "\n".join(problems)


async def test_eval_env_reward_and_gateway_each_replace_one_service_as_in_train():
    """`halo eval --env` names the env service only, as `halo train --env` does: services given are
    used as they are (nothing starts when all three are), the others start in this process."""
    from halo.cli.eval import local_services
    from halo.runs.context import ServiceTargets

    given = ServiceTargets("10.0.0.1:50051", "10.0.0.1:50052", "10.0.0.1:50053", token="t")
    async with local_services("embedded", 1, given=given) as targets:
        assert targets == given
