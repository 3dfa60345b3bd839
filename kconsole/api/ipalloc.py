"""Service ClusterIP allocation over the service CIDR (10.96.0.0/12 by default).

Like upstream's allocator, a free address is found from a pseudo-random offset (seeded, so the
same cluster seed hands out the same addresses) and the first address (10.96.0.1) is reserved for
the ``kubernetes`` Service. The allocated set is rebuilt from the stored Services at start.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterable
from typing import Any


class RangeFullError(Exception):
    def __init__(self, cidr: str) -> None:
        super().__init__(f"range is full: no free IP in the service CIDR {cidr}")


class AllocatedError(Exception):
    def __init__(self, ip: str) -> None:
        super().__init__(f"failed to allocate IP {ip}: provided IP is already allocated")


class NotInRangeError(Exception):
    def __init__(self, ip: str, cidr: str) -> None:
        super().__init__(f"failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. "
                         f"The range of valid IPs is {cidr}")


class ClusterIPAllocator:
    def __init__(self, cidr: str = "10.96.0.0/12", rng: random.Random | None = None) -> None:
        self.cidr = cidr
        self.network = ipaddress.IPv4Network(cidr)
        self._base = int(self.network.network_address)
        # Usable offsets: not the network address, not the broadcast address.
        self._size = self.network.num_addresses - 2
        self._rng = rng or random.Random(1)
        self._used: set[int] = set()

    @property
    def kubernetes_ip(self) -> str:
        """The first address, for the ``kubernetes`` Service in ``default``."""
        return str(ipaddress.IPv4Address(self._base + 1))

    def _offset(self, ip: str) -> int:
        try:
            value = int(ipaddress.IPv4Address(ip))
        except ValueError:
            raise NotInRangeError(ip, self.cidr) from None
        offset = value - self._base
        if not 1 <= offset <= self._size:
            raise NotInRangeError(ip, self.cidr)
        return offset

    def allocate(self) -> str:
        """A free address; never the reserved first one."""
        if len(self._used) >= self._size:
            raise RangeFullError(self.cidr)
        start = self._rng.randrange(2, self._size + 1)
        offset = start
        while offset in self._used:
            offset = offset + 1 if offset < self._size else 2
            if offset == start:
                raise RangeFullError(self.cidr)
        self._used.add(offset)
        return str(ipaddress.IPv4Address(self._base + offset))

    def allocate_specific(self, ip: str) -> None:
        offset = self._offset(ip)
        if offset in self._used:
            raise AllocatedError(ip)
        self._used.add(offset)

    def release(self, ip: str) -> None:
        try:
            self._used.discard(self._offset(ip))
        except NotInRangeError:
            pass

    def is_allocated(self, ip: str) -> bool:
        try:
            return self._offset(ip) in self._used
        except NotInRangeError:
            return False

    def rebuild(self, services: Iterable[dict[str, Any]]) -> None:
        """Mark every ClusterIP the stored Services hold."""
        self._used.clear()
        for svc in services:
            for ip in service_ips(svc):
                try:
                    self._used.add(self._offset(ip))
                except NotInRangeError:
                    continue

    def __len__(self) -> int:
        return len(self._used)


def service_ips(svc: dict[str, Any]) -> list[str]:
    """The ClusterIPs a Service holds (none for headless Services)."""
    spec = svc.get("spec") or {}
    ips = list(spec.get("clusterIPs") or [])
    ip = spec.get("clusterIP")
    if ip and ip not in ips:
        ips.append(ip)
    return [i for i in ips if i and i != "None"]
