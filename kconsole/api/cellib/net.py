"""Kubernetes' IP and CIDR libraries (1.30+): ``ip("10.0.0.1")``, ``isIP``, ``ip.isCanonical``,
``family``, ``isUnspecified``, ``isLoopback``, ``isLinkLocalMulticast``, ``isLinkLocalUnicast``,
``isGlobalUnicast``; ``cidr("10.0.0.0/8")``, ``isCIDR``, ``containsIP``, ``containsCIDR``, ``ip()``,
``masked``, ``prefixLength``; ``string()`` of either."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any, Union

from celpy import celtypes
from celpy.evaluation import CELEvalError

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]


class IP:
    """A CEL IP value; ``string()`` gives its canonical form."""

    __slots__ = ("address",)

    def __init__(self, address: Address) -> None:
        self.address = address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and self.address == other.address

    def __hash__(self) -> int:
        return hash(self.address)

    def __str__(self) -> str:
        return str(self.address)


class CIDR:
    """A CEL CIDR value: an address and a prefix length (the address need not be masked)."""

    __slots__ = ("address", "network")

    def __init__(self, address: Address, network: Network) -> None:
        self.address = address
        self.network = network

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and (self.address, self.network) == (other.address, other.network)

    def __hash__(self) -> int:
        return hash((self.address, self.network))

    def __str__(self) -> str:
        return f"{self.address}/{self.network.prefixlen}"


def _parse_ip(text: str) -> Address | None:
    if "%" in text:  # upstream refuses zones
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return None
    return address


def _parse_cidr(text: str) -> CIDR | None:
    address_text, _, prefix = text.partition("/")
    address = _parse_ip(address_text)
    if address is None or not prefix.isdigit():
        return None
    try:
        return CIDR(address, ipaddress.ip_network(f"{address_text}/{prefix}", strict=False))
    except ValueError:
        return None


def _ip(value: Any) -> Any:
    """``ip(string)``, or ``cidr.ip()``: the CIDR's address."""
    if isinstance(value, CIDR):
        return IP(value.address)
    address = _parse_ip(str(value))
    if address is None:
        return CELEvalError(f"IP Address {str(value)!r} parse error during conversion from string")
    return IP(address)


def _cidr(value: Any) -> Any:
    found = _parse_cidr(str(value))
    if found is None:
        return CELEvalError(f"network address {str(value)!r} parse error during conversion from string")
    return found


def _is_canonical(*args: Any) -> Any:
    """``ip.isCanonical("::ffff:1")``: celpy hands the ``ip`` function over as the receiver."""
    text = str(args[-1])
    address = _parse_ip(text)
    if address is None:
        return CELEvalError(f"IP Address {text!r} parse error during conversion from string")
    return celtypes.BoolType(str(address) == text)


def _contains_ip(network: Any, value: Any) -> Any:
    address = value.address if isinstance(value, IP) else _parse_ip(str(value))
    if not isinstance(network, CIDR) or address is None:
        return CELEvalError("no such overload")
    return celtypes.BoolType(address.version == network.network.version and address in network.network)


def _contains_cidr(network: Any, value: Any) -> Any:
    other = value if isinstance(value, CIDR) else _parse_cidr(str(value))
    if not isinstance(network, CIDR) or other is None:
        return CELEvalError("no such overload")
    inner, outer = other.network, network.network
    return celtypes.BoolType(inner.version == outer.version and inner.subnet_of(outer))  # type: ignore[arg-type]


def _address(value: Any) -> Address:
    if not isinstance(value, IP):
        raise TypeError("no such overload")
    return value.address


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ip": _ip,
    "isIP": lambda text: celtypes.BoolType(_parse_ip(str(text)) is not None),
    "isCanonical": _is_canonical,
    "family": lambda value: celtypes.IntType(_address(value).version),
    "isUnspecified": lambda value: celtypes.BoolType(_address(value).is_unspecified),
    "isLoopback": lambda value: celtypes.BoolType(_address(value).is_loopback),
    "isLinkLocalMulticast": lambda value: celtypes.BoolType(
        _address(value) in (ipaddress.ip_network("224.0.0.0/24") if _address(value).version == 4
                            else ipaddress.ip_network("ff02::/16"))),
    "isLinkLocalUnicast": lambda value: celtypes.BoolType(_address(value).is_link_local),
    "isGlobalUnicast": lambda value: celtypes.BoolType(
        not (_address(value).is_unspecified or _address(value).is_loopback or _address(value).is_multicast
             or _address(value).is_link_local or str(_address(value)) == "255.255.255.255")),
    "cidr": _cidr,
    "isCIDR": lambda text: celtypes.BoolType(_parse_cidr(str(text)) is not None),
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "masked": lambda value: CIDR(value.network.network_address, value.network),
    "prefixLength": lambda value: celtypes.IntType(value.network.prefixlen),
}
