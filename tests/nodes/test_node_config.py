"""The fleet's node shapes at the scale the project targets."""

from __future__ import annotations

import ipaddress

import pytest

from kconsole.cluster import ClusterConfig, ConfigError
from kconsole.nodes import default_node_configs


def test_five_thousand_nodes_get_unique_valid_pod_ranges_outside_the_service_range() -> None:
    configs = default_node_configs(5000, 3)
    ranges = [ipaddress.ip_network(c.pod_cidr) for c in configs]  # raises on 10.256.0.0/24
    services = ipaddress.ip_network("10.96.0.0/12")
    assert len(set(ranges)) == 5003
    assert not [r for r in ranges if r.overlaps(services)]
    assert str(ranges[0]) == "10.244.0.0/24" and str(ranges[256]) == "10.245.0.0/24"
    addresses = [ipaddress.ip_address(c.address) for c in configs]
    assert len(set(addresses)) == 5003


def test_more_nodes_than_pod_ranges_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="nodes"):
        ClusterConfig(nodes=40_000).validate()
