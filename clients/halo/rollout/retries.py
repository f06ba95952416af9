"""Episodes lost to an environment failure are rolled out again, up to a limit.

With an env fleet, one replica that dies takes only its own sessions; the same episode started
again gets a new session on a replica that serves (the fleet client stops placing sessions on one
that failed a call). The failed attempts are dropped entirely, never scored (no fake zero reward),
and counted on the episode that is kept (`Episode.env_retries`), so a step's metrics show how many
rollouts were lost. The episode policy's seed is the same for every attempt, so an attempt that
succeeds draws the actions the lost one would have.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from halo.rollout.episode import Episode

#: attempts after the first, per episode (`extra.episode_retries` for GRPO)
DEFAULT_EPISODE_RETRIES = 2


async def with_env_retries(attempt: Callable[[], Awaitable[Episode]], retries: int = DEFAULT_EPISODE_RETRIES) -> Episode:
    """The first attempt that does not end in an environment failure, or the last one."""
    lost = 0
    while True:
        episode = await attempt()
        if not episode.env_failure or lost >= retries:
            episode.env_retries = lost
            return episode
        lost += 1
