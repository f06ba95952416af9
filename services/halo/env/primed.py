"""Sessions prepared ahead for creates that are known to come: CreateSession without page work.

A warm context (contexts.py) saves Chromium's context; what is left of a create is page work that
needs the task: the replica's /config, the start page, the first observation (`halo bench env
--modes create`: ~90% of a warm create). `PrimedSessions` does that work ahead, in the quiet
moments between creates, for the keys (the exact task, seed, source, run_id and observation
options of a create) that are wanted:

- a hinted key: a client said it will create `count` sessions of it soon (PrimeSessions; a GRPO
  trainer hints the next step's groups while the current step runs), wanted until its TTL ends or
  `count` creates claimed one;
- the recurring key (`--primed-sessions N`, off by default): the key of a create that was asked
  for again after an earlier create of it had finished (bursts of a benchmark, a GRPO group rolled
  out in waves of `extra.concurrency`, retries); one at a time, up to N ready, wanted until
  nobody asked for it for IDLE_S.

A create whose key matches takes one and answers with the observation made when its page was
ready. Priming never takes a slot a create needs: a primed session holds one of the pool's session
slots (claimed only while one is free and no create waits for one), the create that claims it
takes that slot over, and a create of another key that finds the pool full closes the oldest
primed session to get its slot (`evict`).

Isolation is a warm context's: a primed session's context was set up by /config for exactly the
key asked for (its own `halo_sid` cookie and site state, its run's id), is handed to one session
only and closed with it. One that nobody takes is disposed (its site state forgotten, its context
closed), never handed to another key: when its key is no longer wanted (TTL, claims used up,
another recurring key), when its page is older than the want allows, or when the pool needs the
room. A primed page whose Chromium died or whose site failed under it is not handed out. A sites
server restarted after the priming no longer holds the primed state: the session's first Step
sees that (faults.STATE_HEADER) and ends as an environment failure, never as a task outcome.
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
    expires_at: float = float("inf")   # set when it joins the ready ones: its want's page age limit

    def usable(self, now: float) -> bool:
        s = self.session
        return (now < self.expires_at and s.slot.alive and s.slot.browser.is_connected()
                and not s.env_failure and not s.faults.fault and not s.page.is_closed())


@dataclass
class Want:
    """A key to keep sessions ready for."""
    count: int        # ready sessions wanted (a hint: the creates still to come; recurring: the size)
    until: float      # monotonic: no longer wanted after this (and no page of it is handed out later)
    hinted: bool      # from PrimeSessions (else the recurring key)


async def _always() -> bool:
    return True


class PrimedSessions:
    """Sessions prepared for the hinted keys and the recurring one (see the module's docstring)."""

    #: a recurring key nobody asked for this long is dropped, and so is a primed page of it this old
    IDLE_S = 30.0
    #: longest priming waits for the creates under way (as WarmContexts.MAX_DEFER_S)
    MAX_DEFER_S = 3.0
    #: keys remembered for recurrence
    REMEMBERED = 256
    #: sessions prepared at once: a GRPO step's next groups (8 and more) must be ready within a step
    #: that lasts seconds, and one at a time took longer than the step (`halo bench env --modes
    #: create-grpo-hinted`); the creates they stand for would have run as many at once anyway
    PARALLEL = 4

    def __init__(self, size: int, prepare: Callable[[SessionKey], Awaitable[Prepared]],
                 dispose: Callable[[Session], Awaitable[None]], busy: Callable[[], bool] = lambda: False,
                 claim_slot: Callable[[], Awaitable[bool]] | None = None, release_slot: Callable[[], None] = lambda: None,
                 hint_limit: int = 0) -> None:
        self.size = size                  # the recurring key's ready sessions (--primed-sessions)
        self.hint_limit = hint_limit      # a hint's count is capped at this (the pool's size; 0: hints prime nothing)
        self._prepare, self._dispose, self._busy = prepare, dispose, busy
        # a primed session holds a session slot of the pool from before its preparation until a
        # create takes it over (with the session) or it is disposed
        self._claim_slot, self._release_slot = claim_slot or _always, release_slot
        self._ready: deque[Prepared] = deque()
        self._wants: dict[SessionKey, Want] = {}
        self._recurring: SessionKey | None = None
        self._preparing: dict[asyncio.Task, SessionKey] = {}   # sessions being prepared, each on its claimed slot
        self._finished: OrderedDict[SessionKey, float] = OrderedDict()   # key -> when its last create finished
        self._wanted = asyncio.Event()
        self._filler: asyncio.Task | None = None
        self.taken = 0      # sessions that started primed
        self.disposed = 0   # primed sessions closed unclaimed

    @property
    def ready(self) -> int:
        return len(self._ready)

    @property
    def key(self) -> SessionKey | None:
        """The recurring key primed for (None when there is none)."""
        return self._recurring

    def ready_for(self, key: SessionKey) -> int:
        """Sessions of `key` ready, or being prepared (each will be ready or dropped)."""
        return sum(p.key == key for p in self._ready) + sum(k == key for k in self._preparing.values())

    def start(self) -> None:
        if self._filler is None:
            self._filler = asyncio.get_running_loop().create_task(self._fill_forever())

    def resize(self, size: int) -> None:
        """Prime up to `size` for the recurring key from now on (0: off; what is primed beyond it is disposed)."""
        self.size = size
        if self._recurring is not None:
            if size > 0:
                self._wants[self._recurring].count = size
            else:
                self._unwant(self._recurring)
        self._prune()
        if size > 0:
            self.start()
        self._wanted.set()

    def hint(self, key: SessionKey, count: int, ttl_s: float) -> int:
        """A client will create `count` sessions of `key` within `ttl_s`: keep up to that many ready
        until then. Returns the count accepted (capped at `hint_limit`). A new hint of a key replaces
        the earlier one (a trainer re-sending its step's hints does not double them)."""
        count = min(count, self.hint_limit)
        if count <= 0:
            return 0
        if key == self._recurring:
            self._recurring = None   # the hint owns it now (its count and TTL)
        self._wants[key] = Want(count, time.monotonic() + ttl_s, hinted=True)
        self.start()
        self._wanted.set()
        return count

    def asked(self, key: SessionKey, started_at: float) -> None:
        """A create for `key` began at `started_at` (monotonic): prime for it when it recurs."""
        if self.size <= 0:
            return
        want = self._wants.get(key)
        if want is not None:
            if not want.hinted:
                want.until = started_at + self.IDLE_S
            return
        finished = self._finished.get(key)
        if finished is not None and finished < started_at:   # asked again after an earlier one was done
            if self._recurring is not None:
                self._unwant(self._recurring)
            self._recurring = key
            self._wants[key] = Want(self.size, started_at + self.IDLE_S, hinted=False)
            self._wanted.set()

    def finished(self, key: SessionKey) -> None:
        if self.size <= 0:
            return
        self._finished[key] = time.monotonic()
        self._finished.move_to_end(key)
        while len(self._finished) > self.REMEMBERED:
            self._finished.popitem(last=False)

    def take(self, key: SessionKey) -> Prepared | None:
        """A primed session for a create of `key`, or None. Every create of a hinted key counts
        against its hint, claimed or not: once the creates it announced have come, nothing more is
        primed for it (a create that found none ready does not leave one to be primed for nobody)."""
        want = self._wants.get(key)
        if want is None:
            return None
        now = time.monotonic()
        found: Prepared | None = None
        for prepared in [p for p in self._ready if p.key == key]:
            self._ready.remove(prepared)
            if prepared.usable(now):
                found = prepared
                break
            self._drop(prepared)
        if want.hinted:
            want.count -= 1
            if want.count <= 0:   # every create the hint announced has come
                self._unwant(key)
        if found is not None:
            self.taken += 1
        self._wanted.set()
        return found

    def evict(self) -> bool:
        """A create of another key needs a slot and the pool has none free: close the oldest primed
        session, its slot free now (a hint never costs a create its slot). With none ready, the oldest
        preparation under way is cancelled: it gives its slot back as the cancellation lands (before,
        it went on, became ready and kept the slot while the create timed out waiting for one).
        False when nothing is primed or being primed."""
        if self._ready:
            self._drop(self._ready.popleft())
            return True
        for task in self._preparing:   # oldest first
            if not task.done() and not task.cancelling():
                task.cancel()
                return True
        return False

    def _unwant(self, key: SessionKey) -> None:
        self._wants.pop(key, None)
        if key == self._recurring:
            self._recurring = None

    def _drop(self, prepared: Prepared) -> None:
        self.disposed += 1
        self._release_slot()   # now, not when the context is closed: a create may be waiting for it
        asyncio.get_running_loop().create_task(self._dispose(prepared.session))

    def _prune(self) -> None:
        """Forget expired wants; dispose what no create will take (unwanted, stale, beyond its want)."""
        now = time.monotonic()
        for key in [k for k, w in self._wants.items() if now > w.until]:
            self._unwant(key)
        keep: deque[Prepared] = deque()
        kept: dict[SessionKey, int] = {}
        for prepared in reversed(self._ready):   # newest first: a want that shrank keeps its freshest pages
            want = self._wants.get(prepared.key)
            if want is not None and prepared.usable(now) and kept.get(prepared.key, 0) < want.count:
                kept[prepared.key] = kept.get(prepared.key, 0) + 1
                keep.appendleft(prepared)
            else:
                self._drop(prepared)
        self._ready = keep

    def _next_key(self) -> SessionKey | None:
        """The wanted key furthest from its count (hinted first, then the recurring one)."""
        short = [(self.ready_for(k) / w.count, not w.hinted, i, k) for i, (k, w) in enumerate(self._wants.items())
                 if self.ready_for(k) < w.count]
        return min(short)[3] if short else None

    def _page_expiry(self, key: SessionKey, want: Want, now: float) -> float:
        # a recurring key's page is stale after IDLE_S; a hinted one lives as long as its hint
        return want.until if want.hinted else now + self.IDLE_S

    async def _fill_forever(self) -> None:
        while True:
            # wake at the next expiry too: an unclaimed hinted session is closed when its TTL ends
            now = time.monotonic()
            next_expiry = min([w.until for w in self._wants.values()] + [p.expires_at for p in self._ready], default=now + 60)
            try:
                await asyncio.wait_for(self._wanted.wait(), timeout=max(0.05, min(self.IDLE_S / 3, next_expiry - now + 0.01)))
            except TimeoutError:
                pass
            self._wanted.clear()
            self._prune()
            while len(self._preparing) < self.PARALLEL and self._next_key() is not None:
                await quiet_moment(self._busy, self.MAX_DEFER_S)
                self._prune()
                key = self._next_key()
                if key is None or not await self._claim_slot():   # no free slot (or creates wait for one): not now
                    break
                task = asyncio.get_running_loop().create_task(self._prepare_one(key))
                self._preparing[task] = key

    async def _prepare_one(self, key: SessionKey) -> None:
        """One session for `key`, on the slot claimed for it: ready, or dropped if no longer wanted."""
        try:
            prepared = await self._prepare(key)
        except BaseException as exc:
            self._release_slot()
            if isinstance(exc, asyncio.CancelledError):
                raise
            # the site or Chromium is away: no priming of it until asked again
            log.warning("could not prime a session", task=key.task_id, error=str(exc).splitlines()[0] if str(exc) else repr(exc))
            self._unwant(key)
            return
        finally:
            self._preparing.pop(asyncio.current_task(), None)
            self._wanted.set()   # the filler may start the next one
        want, now = self._wants.get(key), time.monotonic()
        if want is None or self.ready_for(key) >= want.count:
            self._drop(prepared)   # the want changed while it was prepared
            return
        prepared.expires_at = self._page_expiry(key, want, now)
        self._ready.append(prepared)

    async def close(self) -> None:
        await cancel_filler(self._filler)
        self._filler = None
        for task in list(self._preparing):   # each gives its slot back and closes what it had set up
            await cancel_filler(task)
        while self._ready:
            self._release_slot()
            await self._dispose(self._ready.popleft().session)
