"""The docs stay navigable and true: every relative link in README.md and docs/ resolves to a file
inside the repository, every #anchor to a heading of the page it names (GitHub's heading slugs),
and docs/reference/cli.md is what the `halo` parsers give (`halo docs cli`)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

# [text](target) and ![alt](target), outside code blocks and inline code; the target ends at the
# first space (an optional "title" may follow) or the closing parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def prose(text: str) -> str:
    """The page without fenced code blocks and inline code, where brackets are not links."""
    lines, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            inside = not inside
            continue
        if not inside:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(lines)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, inline markup dropped, punctuation other than
    hyphens and underscores removed, spaces turned into hyphens."""
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found = set()
    inside = False
    for line in page.read_text().splitlines():
        if FENCE.match(line.lstrip()):
            inside = not inside
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if inside or not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(prose(page.read_text())) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def test_the_docs_exist_and_have_links():
    assert (REPO / "docs" / "design.md").exists() and (REPO / "docs" / "benchmarks.md").exists()
    assert sum(len(relative_links(page)) for page in PAGES) > 50


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves_inside_the_repository(page: Path):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if REPO not in resolved.parents and resolved != REPO:
            broken.append(f"{target}: outside the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(REPO)}:\n" + "\n".join(broken)


def test_the_slugs_follow_github():
    assert slug("The playground run (`halo train`, `make demo`)") == "the-playground-run-halo-train-make-demo"
    assert slug("REAL tasks (`halo train --suite real-easy`)") == "real-tasks-halo-train---suite-real-easy"


def test_the_readme_is_a_first_page():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert readme.split("```bash\n", 1)[1].startswith("make demo ") and "\nmake test " in readme.split("```")[1]


def test_the_cli_reference_matches_the_parsers():
    from halo.cli.main import build_parser
    from halo.cli.reference import REFERENCE, reference

    committed = (REPO / REFERENCE).read_text()
    assert committed == reference(build_parser()), "docs/reference/cli.md drifts from the halo parsers: run `halo docs cli` and commit it"


def test_the_cli_reference_check_fails_on_drift(tmp_path: Path, capsys):
    from halo.cli.main import main

    page = tmp_path / "cli.md"
    assert main(["docs", "cli", "--out", str(page)]) == 0
    assert main(["docs", "cli", "--check", "--out", str(page)]) == 0
    page.write_text(page.read_text().replace("--group-size", "--group-sise"))
    assert main(["docs", "cli", "--check", "--out", str(page)]) == 1
    assert "drifts from the halo parsers" in capsys.readouterr().err


def test_halo_help_lists_every_subcommand_on_one_line(capsys):
    from halo.cli.main import build_parser

    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    listing = capsys.readouterr().out.split("COMMAND\n", 2)[-1].split("\noptions:")[0]
    lines = [line for line in listing.splitlines() if line.strip()]
    names = [line.split()[0] for line in lines]
    for name in ("serve", "eval", "up", "status", "down", "health", "deploy", "train", "demo", "tasks", "sites",
                 "bench", "protos", "docs"):
        assert names.count(name) == 1, name
    assert all(line.startswith("    ") and len(line.split(maxsplit=1)) == 2 for line in lines), lines


def _make(*args: str) -> str:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is absent")
    done = subprocess.run(["make", "-C", str(REPO), "--no-print-directory", *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_help_lists_every_target():
    phony = re.search(r"^\.PHONY:(.*)$", (REPO / "Makefile").read_text(), re.M).group(1).split()
    listed = [line.split()[1] for line in _make("help").splitlines() if line.startswith("  make ")]
    assert sorted(listed) == sorted(phony)


def test_the_demo_sets_up_only_the_venv_and_chromium_and_the_tests_everything():
    """`make demo` runs the demo tier of scripts/setup.sh, which stops before the test tools;
    `make test` the test tier and the vLLM environment (dry runs: nothing is installed here)."""
    demo, test = _make("-n", "demo"), _make("-n", "test")
    assert "bash scripts/setup.sh\n" in demo and "--test" not in demo and "setup_vllm" not in demo
    assert "bash scripts/setup.sh --test" in test and "bash scripts/setup_vllm.sh" in test
    setup = (REPO / "scripts" / "setup.sh").read_text()
    before_the_demo_exit = setup.split('if [ "$TIER" = demo ]; then', 1)[0]
    code = "\n".join(line for line in before_the_demo_exit.splitlines() if not line.lstrip().startswith("#"))
    for tool in ("prometheus", "nodejs", "npm_ci_once", "golang-go", "protobuf-compiler", "apt_install"):
        assert tool not in code, tool
    tiers = code.split('if [ "$TIER" = test ]; then', 1)[1].split("\nelif ", 1)
    assert "install_lock requirements/test.lock all,test" in tiers[0]          # the test extras: test tier only
    assert "test" not in tiers[1].split("\nfi\n", 1)[0].replace("stamp_test", "").replace("test.lock", "")


async def test_the_readmes_python_snippet_runs_against_an_env_service(stack):
    """The README's Python block, as a user would paste it, against the session's env service."""
    import asyncio
    import json
    import sys

    (snippet,) = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert "127.0.0.1:50051" in snippet
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", snippet.replace("127.0.0.1:50051", stack.env_target),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, err.decode()
    ok_line, state = out.decode().split("\n", 1)
    assert ok_line.startswith("True ") and "playground" in ok_line
    assert isinstance(json.loads(state), dict)   # the site's /finish state


def _guide_block(page: str, fence: str, marker: str) -> str:
    """The one code block of `fence` on docs/<page> that holds `marker`."""
    (block,) = [b for b in re.findall(rf"```{fence}\n(.*?)```", (REPO / "docs" / page).read_text(), re.S) if marker in b]
    return block


def _json_documents(text: str) -> list:
    """The JSON values printed one after another (jq and grpcurl print one per call)."""
    import json

    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text.rstrip()):
        value, end = decoder.raw_decode(text, at)
        found.append(value)
        at = end
        while at < len(text) and text[at].isspace():
            at += 1
    return found


async def _run(argv: list[str], timeout: float = 120) -> str:
    import asyncio

    process = await asyncio.create_subprocess_exec(*argv, cwd=REPO, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), timeout=timeout)
    assert process.returncode == 0, err.decode()
    return out.decode()


def _on_stack(snippet: str, stack) -> str:
    assert "127.0.0.1:50051" in snippet and "127.0.0.1:50052" in snippet
    return snippet.replace("127.0.0.1:50051", stack.env_target).replace("127.0.0.1:50052", stack.reward_target)


async def test_the_grpcurl_episode_reads_the_bid_from_the_observation_and_is_scored(stack):
    """docs/guides/other-languages.md's grpcurl + jq script, as written, against the session's env and
    reward services: the click finds "Sign up" in the observation and Evaluate scores the state 1."""
    import shutil
    import sys

    grpcurl = shutil.which("grpcurl") or str(Path(sys.executable).parent / "grpcurl")
    if shutil.which("jq") is None or not Path(grpcurl).exists():
        pytest.fail("jq or grpcurl is missing (scripts/setup.sh --test installs jq; the test extra, grpcurl)")
    script = _on_stack(_guide_block("guides/other-languages.md", "bash", "RewardService/Evaluate"), stack)
    assert '"bid": "' not in script and "bid: '" not in script    # no id written into the request by hand
    out = await _run(["bash", "-euo", "pipefail", "-c", f'PATH="{Path(grpcurl).parent}:$PATH"\n{script}'])
    stepped, scored, closed = _json_documents(out)
    assert stepped == {"action_ok": True, "done": False}
    assert scored == {"success": True, "score": 1, "success_strict": True}
    assert closed["was_open"] is True


async def test_the_node_episode_reads_the_bid_from_the_observation_and_is_scored(stack):
    """docs/guides/other-languages.md's Node.js episode, as written, with @grpc/grpc-js over protos/."""
    import json
    import shutil

    if shutil.which("node") is None or not (REPO / "clients" / "node" / "node_modules" / "@grpc" / "grpc-js").exists():
        pytest.fail("node or clients/node/node_modules is missing (scripts/setup.sh --test)")
    script = _on_stack(_guide_block("guides/other-languages.md", "js", "'Evaluate'"), stack)
    assert "bid: '" not in script
    out = await _run(["node", "-e", script])
    assert json.loads(out) == {"success": True, "score": 1, "success_strict": True}
