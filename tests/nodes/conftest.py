"""Fixtures for the nodes tests (helpers live in node_env.py)."""

from node_env import env  # noqa: F401
