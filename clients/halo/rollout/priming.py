"""Telling the env service which sessions the next rollouts will create (PrimeSessions).

A GRPO step's groups are known before they are rolled out (`batch_for_step`), and each group
creates `group_size` sessions of one key (task, seed, run, observation options). Announced ahead,
the env service prepares those sessions while the current step runs (services/halo/env/primed.py),
so the next step's CreateSession calls are answered without page work. A hint is best effort: it
never fails or delays a step (sent in the background), an env service older than the RPC
(UNIMPLEMENTED) turns the hints off for the run after one debug line, and any other error is
logged and forgotten (the creates then start as they would have without it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from halo.client.env import EnvClient
from halo.errors import HaloError, Unimplemented
from halo.rollout.episode import RolloutConfig, episode_observation

log = logging.getLogger("halo.rollout.priming")

#: a hint's TTL: how long the env keeps unclaimed primed sessions, as a multiple of the last step's
#: wall time (the hint is sent a step ahead), within the env's bounds
TTL_STEPS = 2.0
MIN_TTL_S, MAX_TTL_S = 60.0, 600.0


class SessionPrimer:
    """Sends the hints of the groups a later step will roll out; off for good once the env says
    UNIMPLEMENTED."""

    def __init__(self, env: EnvClient, config: RolloutConfig, enabled: bool = True) -> None:
        self.env, self.config, self.enabled = env, config, enabled
        self.sent = 0        # hints the env answered
        self.accepted = 0    # sessions it accepted to prime, in all
        self._pending: set[asyncio.Task] = set()

    def announce(self, groups: list[tuple[str, int]], group_size: int, ttl_s: float = MIN_TTL_S) -> None:
        """In the background: `group_size` sessions of each (task, seed) will be created within `ttl_s`."""
        if not self.enabled or not groups:
            return
        task = asyncio.get_running_loop().create_task(self._send(groups, group_size, ttl_s))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    @staticmethod
    def ttl_for(step_s: float) -> float:
        """The TTL of hints sent one step ahead, from the wall time of a step (0: not known yet)."""
        return min(MAX_TTL_S, max(MIN_TTL_S, TTL_STEPS * step_s))

    async def _send(self, groups: list[tuple[str, int]], group_size: int, ttl_s: float) -> None:
        observation = episode_observation(self.config)
        for task_id, seed in dict.fromkeys(groups):   # a (task, seed) drawn twice: one hint (the count below covers both)
            if not self.enabled:
                return
            count = group_size * groups.count((task_id, seed))
            try:
                self.accepted += await self.env.prime_sessions(task_id, count, seed=seed, observation=observation,
                                                               run_id=self.config.run_id, ttl_s=ttl_s)
                self.sent += 1
            except Unimplemented:
                log.debug("the env service at %s does not serve PrimeSessions: no hints for this run", self.env.target)
                self.enabled = False
            except HaloError as exc:   # best effort: the creates start as they would have without it
                log.warning("PrimeSessions for %s failed (the step goes on without it): %s", task_id, exc)

    async def close(self) -> None:
        for task in list(self._pending):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
