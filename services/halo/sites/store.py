"""Per-browser-context state of every replica, keyed by a cookie.

A browser context (one env session) carries one `halo_sid` cookie; each (sid, site) pair has its
own `SiteSession`, so parallel rollouts on the same site never see each other's state.
Snapshots deep-copy the state so tree search can branch and come back.
"""

from __future__ import annotations

import copy
import itertools
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from halo.sites.diff import detailed_diff

SESSION_COOKIE = "halo_sid"
#: Response header naming the epoch and task of the state a replica served ("<epoch>;<task_id>").
STATE_HEADER = "x-halo-state"


@dataclass
class SiteSession:
    site: str
    task_id: str
    run_id: str
    seed: int
    initial: dict[str, Any]
    state: dict[str, Any]
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: new at every /config: a state that was lost and started again (same task) has another epoch
    epoch: str = field(default_factory=lambda: secrets.token_hex(4))

    @property
    def state_tag(self) -> str:
        return f"{self.epoch};{self.task_id}"   # the epoch first: a header value cannot start with a space

    def finish_payload(self, differences: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON REAL's /finish page shows (the eval scripts' input)."""
        return {
            "initialfinaldiff": detailed_diff(self.initial, self.state),
            "differences": differences if differences is not None else {},
            "task_id": self.task_id,
            "run_id": self.run_id,
        }


class SessionStore:
    """Thread-safe map (sid, site) -> SiteSession. Threads: uvicorn may run sync handlers in a pool."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], SiteSession] = {}
        self._lock = threading.Lock()
        self._snapshot_ids = itertools.count(1)

    @staticmethod
    def new_sid() -> str:
        return secrets.token_urlsafe(12)

    def start(self, sid: str, site: str, task_id: str, run_id: str, seed: int, initial: dict[str, Any]) -> SiteSession:
        session = SiteSession(site, task_id, run_id, seed, copy.deepcopy(initial), copy.deepcopy(initial))
        with self._lock:
            self._sessions[(sid, site)] = session
        return session

    def get(self, sid: str, site: str) -> SiteSession | None:
        with self._lock:
            return self._sessions.get((sid, site))

    def snapshot(self, session: SiteSession) -> str:
        snap_id = f"s{next(self._snapshot_ids)}"
        session.snapshots[snap_id] = copy.deepcopy(session.state)
        return snap_id

    def restore(self, session: SiteSession, snapshot_id: str) -> bool:
        saved = session.snapshots.get(snapshot_id)
        if saved is None:
            return False
        session.state = copy.deepcopy(saved)
        return True

    def drop(self, sid: str) -> int:
        """Forget every site session of a browser context (called when an env session closes)."""
        with self._lock:
            keys = [k for k in self._sessions if k[0] == sid]
            for key in keys:
                del self._sessions[key]
        return len(keys)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
