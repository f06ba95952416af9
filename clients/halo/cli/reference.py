"""`halo docs cli [--check]`: docs/reference/cli.md, written from the `halo` parsers themselves.

Every subcommand's flags come from the argparse parser that parses them (and `halo serve`'s from
each service's settings class), so the reference says what the code accepts; `--check` (and
tests/test_docs.py) fails when the committed page differs from what the parsers give.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REFERENCE = Path("docs/reference/cli.md")

INTRO = """# The `halo` command

Generated from the parsers by `halo docs cli` (`halo docs cli --check` and `tests/test_docs.py`
fail when this page drifts from them): edit the `help=` text in `clients/halo/cli/`, then rerun it.

Conventions, the same in every subcommand:

- a flag has one meaning: `--steps` counts training steps, `--max-actions` caps an episode's
  actions, `--route` names a policy-gateway route, `--base-model` the base model a run trains (a
  Tinker model, a local model folder); `--env`, `--reward` and `--gateway` each name one running
  service used instead of starting it here; `--max-staleness` is one K, a list of them
  `--max-staleness-values`; a JSON value's flag says what it holds (`--extra`, `--learner-options`);
- `--json PATH` writes what a command measured or found as JSON to PATH (`halo status --json`
  without a PATH: to standard output);
- a duration in seconds ends in `-s` (`--timeout-s`, `--reconnect-s`), in milliseconds in `-ms`;
- an on/off setting is a pair, `--x` / `--no-x`;
- names have one spelling: suites with hyphens (`real-easy`), backends and modes with
  underscores (`local_lora`, `qwen3vl_grpo`);
- an old spelling of a flag or a name still works, prints which one replaces it on stderr, and is
  listed under "old spellings" below (for a service's setting, its old environment variable too);
- `kill -USR1 <pid>` makes any `halo` process print the stacks of its threads and asyncio tasks to
  stderr and go on: where a command or service that does not answer is waiting.
"""


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


#: The checkout this module runs from: defaults that are paths inside it are shown relative to it,
#: so the page is the same in every clone.
_ROOT = Path(__file__).resolve().parents[3]


def _portable(default):
    if isinstance(default, (str, Path)) and Path(default).is_absolute():
        try:
            return str(Path(default).resolve().relative_to(_ROOT))
        except ValueError:
            return default
    return default


def _default(action: argparse.Action) -> str:
    default = _portable(action.default)
    if default is None or default is argparse.SUPPRESS or default == "" or default == []:
        return ""
    if isinstance(default, bool):
        return "on" if default else "off"
    return f"`{default}`"


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    spelled = " / ".join(f"`{o}`" for o in action.option_strings)
    takes_value = action.nargs != 0 and not isinstance(action, argparse.BooleanOptionalAction)
    if takes_value:
        metavar = action.metavar or (action.dest.upper() if not action.choices else "{" + ",".join(map(str, action.choices)) + "}")
        spelled += f" {_cell(metavar)}"
    return spelled


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((name, helps.get(name) or "", sub))
    return found


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        spellings = [f"`{o}`" for o in getattr(action, "old_spellings", [])]
        spellings += [f"`{a}` = `{b}`" for a, b in getattr(action.type, "old", {}).items()]   # a Spelling's old names
        old = ", ".join(spellings)
        rows.append(f"| {_flags(action)} | {_default(action)} | {_cell(action.help or '')} | {old} |")
    if not rows:
        return []
    return ["| flag | default | meaning | old spellings |", "| --- | --- | --- | --- |", *rows, ""]


def _parser_section(title: str, parser: argparse.ArgumentParser, summary: str = "") -> list[str]:
    lines = [f"## `{title}`", ""]
    text = summary or parser.description or ""
    if text:
        lines += [_cell(text), ""]
    lines += _options_table(parser)
    if parser.epilog:
        lines += [_cell(parser.epilog), ""]
    for name, help_text, sub in _subcommands(parser):
        lines += _parser_section(f"{title} {name}", sub, help_text)
    return lines


def _settings_section(name: str, settings_cls) -> list[str]:
    prefix = settings_cls.model_config.get("env_prefix", "")
    lines = [f"## `halo serve {name}`", "",
             f"Each flag is also an environment variable, `{prefix}<FLAG>` (`--port` = `{prefix}PORT`); "
             "a flag wins over the variable.", "",
             "| flag | default | meaning | old spellings |", "| --- | --- | --- | --- |"]
    renamed = getattr(settings_cls, "renamed", {})   # the SitesSettings are no ServiceSettings
    old_names = {new: old for old, new in renamed.items()}
    for field, info in settings_cls.model_fields.items():
        flag = "--" + field.replace("_", "-")
        if info.annotation is bool:
            flag = f"{flag}` / `--no-{flag.removeprefix('--')}"
        default = _portable(info.get_default(call_default_factory=True))
        if isinstance(default, bool):
            default = "true" if default else "false"
        shown = "" if default in ("", None) else f"`{default}`"
        old = old_names.get(field)
        spelled = f"`--{old.replace('_', '-')}`, `{settings_cls.env_variable(old)}`" if old else ""
        lines.append(f"| `{flag}` | {shown} | {_cell(info.description or '')} | {spelled} |")
    return [*lines, ""]


def reference(top: argparse.ArgumentParser) -> str:
    """The page for `top`, the `halo` parser (halo.cli.main.build_parser, which hands itself to
    `halo docs cli` as `args.top_parser`)."""
    from halo.cli import eval as eval_cli
    from halo.cli import launcher
    from halo.cli.serve import GRPC_SERVICES
    from halo.sites.server import SitesSettings

    lines = [INTRO, "## `halo`", "", "| subcommand | what it does |", "| --- | --- |"]
    commands = _subcommands(top)
    lines += [f"| [`halo {name}`](#halo-{name}) | {_cell(help_text)} |" for name, help_text, _ in commands]
    lines.append("")
    own = {"eval": [("halo eval", eval_cli.run_parser()), ("halo eval compare", eval_cli.compare_parser()),
                    ("halo eval report", eval_cli.report_parser()), ("halo eval list", eval_cli.list_parser())]}
    launched = {name: sub for name, _, sub in _subcommands(launcher.build_parser())}
    for name, help_text, parser in commands:
        if name == "serve":
            lines += [f"## `halo serve`", "", _cell(help_text), ""]
            lines += _settings_section("sites", SitesSettings)
            for service, load in GRPC_SERVICES.items():
                lines += _settings_section(service, load()[0])
        elif name in own:
            for title, sub in own[name]:
                lines += _parser_section(title, sub, help_text if title == "halo eval" else "")
        elif name in launched:
            lines += _parser_section(f"halo {name}", launched[name], help_text)
        else:
            lines += _parser_section(f"halo {name}", parser, help_text)
    return "\n".join(lines).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    text = reference(args.top_parser)
    out = Path(args.out)
    if args.check:
        if not out.exists() or out.read_text() != text:
            print(f"{out} drifts from the halo parsers: run `halo docs cli` and commit it", file=sys.stderr)
            return 1
        print(f"{out} matches the halo parsers")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(out)
    return 0


def add_parser(sub) -> None:
    docs = sub.add_parser("docs", help="generated documentation (halo docs cli)")
    docs_sub = docs.add_subparsers(dest="docs_command", required=True)
    cli = docs_sub.add_parser("cli", help="write docs/reference/cli.md from the halo parsers")
    cli.add_argument("--check", action="store_true", help="only check that the committed page matches the parsers")
    cli.add_argument("--out", default=str(REFERENCE), metavar="PATH", help="the page to write or check")
    cli.set_defaults(run=run)
