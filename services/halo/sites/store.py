"""Per-browser-context state of every replica, keyed by a cookie, durable across restarts.

A browser context (one env session) carries one `halo_sid` cookie; each (sid, site) pair has its
own `SiteSession`, so parallel rollouts on the same site never see each other's state.
Snapshots deep-copy the state so tree search can branch and come back.

With a data directory (`halo serve sites --data-dir`, `.halo/sites` by default) every session
and snapshot is also kept in SQLite (WAL mode, one row per (sid, site), written after each
request that changed it), so a sites server killed mid-episode and started again on the same
directory serves every open session exactly where it was. Without one (in-process stacks of
tests and the demo) the state lives in memory only.
"""

from __future__ import annotations

import copy
import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halo.sites.diff import detailed_diff

SESSION_COOKIE = "halo_sid"
#: Response header naming the epoch and task of the state a replica served ("<epoch>;<task_id>").
STATE_HEADER = "x-halo-state"
#: Sessions untouched for this long are deleted when a store opens (an env that died never said "forget").
STALE_AFTER_S = 24 * 3600

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    sid TEXT NOT NULL, site TEXT NOT NULL, task_id TEXT NOT NULL, run_id TEXT NOT NULL, seed INTEGER NOT NULL,
    epoch TEXT NOT NULL, initial TEXT NOT NULL, state TEXT NOT NULL, updated REAL NOT NULL,
    PRIMARY KEY (sid, site));
CREATE TABLE IF NOT EXISTS snapshots (
    sid TEXT NOT NULL, site TEXT NOT NULL, snapshot_id TEXT NOT NULL, state TEXT NOT NULL,
    PRIMARY KEY (sid, site, snapshot_id));
"""


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
    #: the state as last written to the database ("" = never): a request that changed nothing writes nothing
    saved_state: str = field(default="", repr=False, compare=False)

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
    """Thread-safe map (sid, site) -> SiteSession, backed by SQLite when given a data directory.
    Threads: uvicorn may run sync handlers in a pool."""

    def __init__(self, data_dir: str | Path | None = None) -> None:
        self._sessions: dict[tuple[str, str], SiteSession] = {}
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        if data_dir:
            path = Path(data_dir)
            path.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path / "sessions.sqlite", check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")   # WAL + NORMAL: a killed process loses nothing committed
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
            self._prune(time.time() - STALE_AFTER_S)

    @property
    def durable(self) -> bool:
        return self._db is not None

    @staticmethod
    def new_sid() -> str:
        return secrets.token_urlsafe(12)

    def start(self, sid: str, site: str, task_id: str, run_id: str, seed: int, initial: dict[str, Any]) -> SiteSession:
        session = SiteSession(site, task_id, run_id, seed, copy.deepcopy(initial), copy.deepcopy(initial))
        with self._lock:
            self._sessions[(sid, site)] = session
            if self._db is not None:
                self._db.execute("DELETE FROM snapshots WHERE sid = ? AND site = ?", (sid, site))
                self._db.execute(
                    "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (sid, site, task_id, run_id, seed, session.epoch, json.dumps(session.initial),
                     self._dump(session), time.time()),
                )
        return session

    def get(self, sid: str, site: str) -> SiteSession | None:
        with self._lock:
            session = self._sessions.get((sid, site))
            if session is None and self._db is not None:
                session = self._load(sid, site)
                if session is not None:
                    self._sessions[(sid, site)] = session
            return session

    def save(self, sid: str, site: str) -> None:
        """Write the session's state if a request changed it (called after every request)."""
        if self._db is None:
            return
        with self._lock:
            session = self._sessions.get((sid, site))
            if session is None:
                return
            state = json.dumps(session.state)
            if state == session.saved_state:
                return
            self._db.execute("UPDATE sessions SET state = ?, updated = ? WHERE sid = ? AND site = ?",
                             (state, time.time(), sid, site))
            session.saved_state = state

    def snapshot(self, session: SiteSession) -> str:
        snap_id = f"s{secrets.token_hex(6)}"   # unique across restarts, unlike a counter
        session.snapshots[snap_id] = copy.deepcopy(session.state)
        if self._db is not None:
            key = self._key_of(session)
            if key is not None:
                with self._lock:
                    self._db.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?)",
                                     (*key, snap_id, json.dumps(session.state)))
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
            if self._db is not None:
                dropped = self._db.execute("DELETE FROM sessions WHERE sid = ?", (sid,)).rowcount
                self._db.execute("DELETE FROM snapshots WHERE sid = ?", (sid,))
                return max(dropped, len(keys))
        return len(keys)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __len__(self) -> int:
        with self._lock:
            if self._db is not None:
                return self._db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
            return len(self._sessions)

    # --- persistence -------------------------------------------------------------------------

    def _dump(self, session: SiteSession) -> str:
        session.saved_state = json.dumps(session.state)
        return session.saved_state

    def _key_of(self, session: SiteSession) -> tuple[str, str] | None:
        with self._lock:
            return next((k for k, s in self._sessions.items() if s is session), None)

    def _load(self, sid: str, site: str) -> SiteSession | None:
        assert self._db is not None
        row = self._db.execute(
            "SELECT task_id, run_id, seed, epoch, initial, state FROM sessions WHERE sid = ? AND site = ?", (sid, site)
        ).fetchone()
        if row is None:
            return None
        task_id, run_id, seed, epoch, initial, state = row
        snapshots = {
            snap_id: json.loads(snap)
            for snap_id, snap in self._db.execute(
                "SELECT snapshot_id, state FROM snapshots WHERE sid = ? AND site = ?", (sid, site)
            )
        }
        return SiteSession(site, task_id, run_id, seed, json.loads(initial), json.loads(state), snapshots, epoch, state)

    def _prune(self, older_than: float) -> None:
        assert self._db is not None
        stale = self._db.execute("SELECT sid, site FROM sessions WHERE updated < ?", (older_than,)).fetchall()
        for sid, site in stale:
            self._db.execute("DELETE FROM snapshots WHERE sid = ? AND site = ?", (sid, site))
        self._db.execute("DELETE FROM sessions WHERE updated < ?", (older_than,))
