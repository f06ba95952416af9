"""`halo demo`: start the sites + env services locally and solve a playground task through gRPC.

A scripted agent reads each observation's element list, picks the element it needs by role and
name, and steps until the task's state says it is done; every screenshot is written to --out.
It shows the whole env loop (create -> observe -> step -> state -> close) on any machine.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jmespath
from rich.console import Console

from halo.agent import actions as A
from halo.client.env import EnvClient
from halo.v1 import common_pb2 as cpb

console = Console()

# The scripted agent's plan per playground task: (role, name) of what to click, or a fill.
PLANS: dict[str, list[tuple[str, str, str]]] = {
    "playground-signup": [("click", "button", "Sign up")],
    "playground-name": [("fill", "textbox", "Name"), ("click", "button", "Save")],
    "playground-plan": [("select", "combobox", "Plan"), ("click", "button", "Apply plan")],
    "playground-finish": [("click", "link", "Go to page 2"), ("click", "button", "Finish")],
}
ARGUMENTS = {"playground-name": "Ada Lovelace", "playground-plan": "pro"}


def find(obs: cpb.Observation, role: str, name: str) -> cpb.Element:
    for el in obs.elements:
        if el.role == role and el.name == name:
            return el
    raise LookupError(f"no {role} named {name!r} on {obs.url}")


async def run_demo(task_id: str, out_dir: str) -> int:
    from halo.cli.stack import LocalStack

    if task_id not in PLANS:
        console.print(f"[red]demo knows these tasks: {', '.join(PLANS)}[/red]")
        return 2
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with console.status("starting sites + env services (Chromium)…"):
        stack = await LocalStack().__aenter__()
    try:
        async with EnvClient(stack.env_target) as env:
            console.print(f"env service at [bold]{stack.env_target}[/bold], sites at {stack.sites.url}")
            created = await env.create_session(task_id)
            task, obs = created.task, created.observation
            console.print(f"task [bold]{task.id}[/bold]: {task.goal}")
            (out / "step-00.png").write_bytes(obs.screenshot)
            for i, (verb, role, name) in enumerate(PLANS[task_id], start=1):
                el = find(obs, role, name)
                action = {
                    "click": lambda: A.ClickElement(el.bid),
                    "fill": lambda: A.Fill(el.bid, ARGUMENTS[task_id]),
                    "select": lambda: A.SelectOption(el.bid, (ARGUMENTS[task_id],)),
                }[verb]()
                result = await env.step(created.session_id, action)
                obs = result.observation
                (out / f"step-{i:02d}.png").write_bytes(obs.screenshot)
                status = "[green]ok[/green]" if result.action_ok else f"[red]{result.action_error}[/red]"
                console.print(f"step {i}: {A.describe(action)} -> {status}  ({obs.url})")
            state = json.loads((await env.get_state(created.session_id)).state_json)
            await env.close_session(created.session_id)
        from halo.tasks.registry import default_registry

        ev = default_registry().get(task_id).evals[0]
        value = jmespath.search(ev.query, state)
        passed = value == ev.expected_value
        console.print(f"eval {ev.query} = {value!r} -> {'[green]SUCCESS[/green]' if passed else '[red]FAILURE[/red]'}")
        console.print(f"screenshots in {out}/")
        return 0 if passed else 1
    finally:
        await stack.__aexit__(None, None, None)


def add_parser(sub) -> None:
    demo = sub.add_parser("demo", help="one scripted episode on the playground through the env service")
    demo.add_argument("--task", default="playground-finish", choices=list(PLANS), help="the scripted playground task to play")
    demo.add_argument("--out", default="artifacts/demo", help="folder for the screenshots")
    demo.set_defaults(run=lambda args: asyncio.run(run_demo(args.task, args.out)))
