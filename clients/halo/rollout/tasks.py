"""Which tasks a run's references name, asked of the env service's task registry."""

from __future__ import annotations

from halo.client.env import EnvClient


async def expand_tasks(env: EnvClient, refs: list[str]) -> list[str]:
    """Task ids from ids or site names (a site name means its replica tasks)."""
    out: list[str] = []
    for ref in refs:
        site_tasks = [t.id for t in await env.list_tasks(site=ref, replica_only=True)]
        out += site_tasks if site_tasks else [(await env.get_task(ref)).id]
    return list(dict.fromkeys(out))
