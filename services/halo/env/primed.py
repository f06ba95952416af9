"""Sessions prepared ahead for the task a client keeps asking for: CreateSession without page work.

A warm context (contexts.py) saves Chromium's context; what is left of a create is page work that
needs the task: the replica's /config, the start page, the first observation (`halo bench env
--modes create`: ~90% of a warm create). `PrimedSessions` does that work ahead, in the quiet
moments between creates, for one key: the exact (task, seed, source, run_id, observation
options) of a create that recurs (asked for again after an earlier create of it had finished:
bursts of a benchmark, a GRPO group rolled out in waves of `extra.concurrency`, retries, the same
task and seed searched again). A create whose key matches takes one and answers with the
observation made when its page was ready.

Isolation is a warm context's: a primed session's context was set up by /config for exactly the
key asked for (its own `halo_sid` cookie and site state, its run's id), is handed to one session
only and closed with it. One that nobody takes is disposed (its site state forgotten, its context
closed), never handed to another key: when the wanted key changes, when nobody asked for it for
IDLE_S, or when it is older than IDLE_S. A primed page whose Chromium died or whose site failed
under it is not handed out. A sites server restarted after the priming no longer holds the
primed state: the session's first Step sees that (faults.STATE_HEADER) and ends as an
environment failure, never as a task outcome.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from halo.env.contexts import cancel_filler, quiet_moment
from halo.env.observe import ObserveOptions, PageObservation
from halo.runtime.logging import get_logger

# session.py owns Session and Source and uses this module: they are not imported here (no cycle)
Session = Any

log = get_logger("halo.env.primed")


@dataclass(frozen=True)
class SessionKey:
    """What makes two creates interchangeable: same task, seed, site source, run and observation."""
    task_id: str
    seed: int
    source: Enum          # halo.env.session.Source
    run_id: str
    options: ObserveOptions


@dataclass(eq=False)
class Prepared:
    """A session set up ahead (context, /config, start page) with its first observation; no id yet."""
    key: SessionKey
    session: Session
    observation: PageObservation
    made_at: float = field(default_factory=time.monotonic)

    def usable(self, now: float, max_age_s: float) -> bool:
        s = self.session
        return (now - self.made_at < max_age_s and s.slot.alive and s.slot.browser.is_connected()
                and not s.env_failure and not s.faults.fault and not s.page.is_closed())


class PrimedSessions:
    """Up to `size` sessions prepared for the recurring key a create asked for last."""

    #: a key nobody asked for this long is dropped, and so is a primed page this old
    IDLE_S = 30.0
    #: longest priming waits for the creates under way (as WarmContexts.MAX_DEFER_S)
    MAX_DEFER_S = 3.0
    #: keys remembered for recurrence
    REMEMBERED = 256

    def __init__(self, size: int, prepare: Callable[[SessionKey], Awaitable[Prepared]],
                 dispose: Callable[[Session], Awaitable[None]], busy: Callable[[], bool] = lambda: False) -> None:
        self.size = size
        self._prepare, self._dispose, self._busy = prepare, dispose, busy
        self._ready: deque[Prepared] = deque()
        self._key: SessionKey | None = None       # the key primed for
        self._asked_at = 0.0                      # when a create last asked for it
        self._finished: OrderedDict[SessionKey, float] = OrderedDict()   # key -> when its last create finished
        self._wanted = asyncio.Event()
        self._filler: asyncio.Task | None = None
        self.taken = 0      # sessions that started primed
        self.disposed = 0   # primed sessions closed unused

    @property
    def ready(self) -> int:
        return len(self._ready)

    @property
    def key(self) -> SessionKey | None:
        return self._key

    def start(self) -> None:
        if self.size > 0:
            self._filler = asyncio.get_running_loop().create_task(self._fill_forever())

    def resize(self, size: int) -> None:
        """Prime up to `size` from now on (0: off; what is primed beyond it is disposed)."""
        self.size = size
        while len(self._ready) > size:
            self._drop(self._ready.pop())
        if size > 0 and self._filler is None:
            self.start()
        self._wanted.set()

    def asked(self, key: SessionKey, started_at: float) -> None:
        """A create for `key` began at `started_at` (monotonic): prime for it when it recurs."""
        if self.size <= 0:
            return
        finished = self._finished.get(key)
        if key == self._key:
            self._asked_at = started_at
        elif finished is not None and finished < started_at:   # asked again after an earlier one was done
            self._key, self._asked_at = key, started_at
        self._wanted.set()

    def finished(self, key: SessionKey) -> None:
        if self.size <= 0:
            return
        self._finished[key] = time.monotonic()
        self._finished.move_to_end(key)
        while len(self._finished) > self.REMEMBERED:
            self._finished.popitem(last=False)

    def take(self, key: SessionKey) -> Prepared | None:
        if key != self._key:
            return None
        now = time.monotonic()
        while self._ready:
            prepared = self._ready.popleft()
            # the key the pool primes for may have changed before the filler pruned: check each one's own
            if prepared.key == key and prepared.usable(now, self.IDLE_S):
                self.taken += 1
                self._wanted.set()
                return prepared
            self._drop(prepared)
        return None

    def _drop(self, prepared: Prepared) -> None:
        self.disposed += 1
        asyncio.get_running_loop().create_task(self._dispose(prepared.session))

    def _prune(self) -> None:
        """Dispose what no create will take: another key's, a stale page, or all when nobody asks."""
        now = time.monotonic()
        if self._key is not None and now - self._asked_at > self.IDLE_S:
            self._key = None
        keep: deque[Prepared] = deque()
        for prepared in self._ready:
            if prepared.key == self._key and prepared.usable(now, self.IDLE_S):
                keep.append(prepared)
            else:
                self._drop(prepared)
        self._ready = keep

    async def _fill_forever(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wanted.wait(), timeout=self.IDLE_S / 3)
            except TimeoutError:
                pass
            self._wanted.clear()
            self._prune()
            while self._key is not None and len(self._ready) < self.size:
                await quiet_moment(self._busy, self.MAX_DEFER_S)
                key = self._key
                if key is None:
                    break
                try:
                    prepared = await self._prepare(key)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:   # the site or Chromium is away: no priming until asked again
                    log.warning("could not prime a session", task=key.task_id, error=str(exc).splitlines()[0] if str(exc) else repr(exc))
                    break
                if key != self._key:   # the wanted key changed while this one was prepared
                    self._drop(prepared)
                    continue
                self._ready.append(prepared)

    async def close(self) -> None:
        await cancel_filler(self._filler)
        while self._ready:
            await self._dispose(self._ready.popleft().session)
