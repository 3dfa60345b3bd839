"""The simulated peer network between etcd members, on the simulated clock.

Every Raft message between members goes through :class:`Network`. Faults are link properties:
a base delay plus seeded jitter, a drop rate, partitions (members on different sides of a cut do
not hear each other) and per-link overrides. Delivery with no delay is ``loop.call_soon`` (FIFO per
link, and cheap enough for the benchmark); with a delay it is a clock timer, so a virtual clock
orders deliveries deterministically.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kconsole.clock import Clock
from kconsole.store.raft.core import Message


@dataclass(slots=True)
class LinkFault:
    """Extra delay (seconds) and drop probability on the directed link ``src -> dst``."""

    delay: float = 0.0
    drop: float = 0.0


@dataclass(slots=True)
class NetworkStats:
    sent: int = 0
    delivered: int = 0
    dropped: int = 0


class Network:
    """Routes :class:`Message` objects to registered members' ``deliver`` callbacks."""

    def __init__(self, clock: Clock, rng: random.Random, *, delay: float = 0.0, jitter: float = 0.0,
                 drop: float = 0.0) -> None:
        self.clock = clock
        self.rng = rng
        self.delay = delay
        self.jitter = jitter
        self.drop = drop
        self.links: dict[tuple[int, int], LinkFault] = {}
        self.stats = NetworkStats()
        self._side: dict[int, int] = {}  # member -> partition side (absent: side 0)
        self._deliver: dict[int, Callable[[Message], None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def register(self, member_id: int, deliver: Callable[[Message], None]) -> None:
        self._deliver[member_id] = deliver

    def unregister(self, member_id: int) -> None:
        self._deliver.pop(member_id, None)

    # ----- faults ------------------------------------------------------------------------------
    def set_conditions(self, *, delay: float | None = None, jitter: float | None = None,
                       drop: float | None = None) -> None:
        """Change the whole network's delay (s), jitter (s) or drop rate (0..1)."""
        if drop is not None and not 0.0 <= drop <= 1.0:
            raise ValueError(f"drop rate must be within 0..1, got {drop}")
        if (delay is not None and delay < 0) or (jitter is not None and jitter < 0):
            raise ValueError("delay and jitter must not be negative")
        if delay is not None:
            self.delay = delay
        if jitter is not None:
            self.jitter = jitter
        if drop is not None:
            self.drop = drop

    def set_link(self, src: int, dst: int, *, delay: float = 0.0, drop: float = 0.0) -> None:
        if not 0.0 <= drop <= 1.0 or delay < 0:
            raise ValueError("link drop must be within 0..1 and delay not negative")
        self.links[(src, dst)] = LinkFault(delay, drop)

    def partition(self, *groups: Iterable[int]) -> None:
        """Cut the network: each group is one side; members named nowhere form one more side."""
        self._side = {}
        for side, group in enumerate(groups, start=1):
            for member in group:
                self._side[member] = side

    def isolate(self, member_id: int) -> None:
        """Cut one member off from every other."""
        others = [m for m, s in self._side.items() if m != member_id]
        groups: dict[int, list[int]] = {}
        for m in others:
            groups.setdefault(self._side[m], []).append(m)
        self.partition([member_id], *groups.values())

    def heal(self) -> None:
        """Remove partitions and link faults; keep the base delay/jitter/drop."""
        self._side = {}
        self.links = {}

    def connected(self, a: int, b: int) -> bool:
        return self._side.get(a, 0) == self._side.get(b, 0)

    def sides(self) -> list[set[int]]:
        out: dict[int, set[int]] = {}
        for member in self._deliver:
            out.setdefault(self._side.get(member, 0), set()).add(member)
        return [out[k] for k in sorted(out)]

    # ----- delivery ----------------------------------------------------------------------------
    def send(self, msg: Message) -> None:
        self.stats.sent += 1
        if not self.connected(msg.src, msg.dst):
            self.stats.dropped += 1
            return
        link = self.links.get((msg.src, msg.dst))
        drop = self.drop + (link.drop if link else 0.0)
        if drop and self.rng.random() < drop:
            self.stats.dropped += 1
            return
        delay = self.delay + (link.delay if link else 0.0)
        if self.jitter:
            delay += self.rng.random() * self.jitter
        self._dispatch(msg, delay)

    def _dispatch(self, msg: Message, delay: float) -> None:
        """Carry a message the faults let through (in process: on the loop or a clock timer)."""
        if delay <= 0:
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
            self._loop.call_soon(self._arrive, msg)
        else:
            self.clock.call_later(delay, lambda: self._arrive(msg))

    def _arrive(self, msg: Message) -> None:
        # A partition cut while the message was in flight loses it, like a reset connection.
        deliver = self._deliver.get(msg.dst)
        if deliver is None or not self.connected(msg.src, msg.dst):
            self.stats.dropped += 1
            return
        self.stats.delivered += 1
        deliver(msg)
