"""Where one Step's time goes inside the env service: a lap clock and the phases it fills.

`execute` fills the action and settle phases, `observe` the AXTree and screenshot phases, the
session the state phase and the total. Cheap (a `perf_counter` per phase) so it runs on every
step; `halo bench env` prints the percentiles and the env service exports them as the
`halo_env_step_phase_seconds` histogram.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar


@dataclass
class StepTimings:
    """Seconds of each phase of one Step (0 for a phase the step did not run)."""
    action_s: float = 0.0       # marking the page's requests, then the action itself (dispatch)
    settle_s: float = 0.0       # waiting for the navigation or the requests the action started
    axtree_s: float = 0.0       # the AXTree (and the title) read in the page
    screenshot_s: float = 0.0   # the screenshot, encoded by Chromium at the requested format
    observe_s: float = 0.0      # the whole observation (AXTree, screenshot, tabs)
    state_s: float = 0.0        # the replica's state JSON (include_state), read while the page is observed
    total_s: float = 0.0        # the whole step inside the service (gRPC and serialisation excluded)

    PHASES: ClassVar[tuple[str, ...]] = ("action", "settle", "axtree", "screenshot", "observe", "state", "total")


class Lap:
    """Seconds since the previous lap."""

    def __init__(self) -> None:
        self.started = self._last = time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        elapsed, self._last = now - self._last, now
        return elapsed

    def total(self) -> float:
        return time.perf_counter() - self.started
