"""Normalisation of kubectl output, so one scenario's output compares across clusters and runs.

What legitimately differs between two runs (generated names, uids, resourceVersions, times, ages,
IPs, the scenario's own namespace) becomes a placeholder; everything else is compared byte for byte.
One ordered table of regexes does it: add a row, not a code path.
"""

from __future__ import annotations

import re

#: (pattern, replacement), applied in order. Earlier rows win over later, more general ones.
RULES: list[tuple[re.Pattern[str], str]] = [(re.compile(p, f), r) for p, r, f in [
    # go-cmp diffs (immutable-spec refusals) indent with plain or no-break spaces, chosen per process
    ("\u00a0", " ", 0),
    # uids (8-4-4-4-12 hex)
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uid>", 0),
    # RFC 3339 timestamps (metadata.creationTimestamp, conditions, managedFields)
    (r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", "<time>", 0),
    # resourceVersion / generation-like numbers in YAML and JSON
    (r'(resourceVersion"?:\s*)"?\d+"?', r"\1<rv>", 0),
    # Deployment pods: web-7d4b9c5f8d-x2k4p; ReplicaSets: web-7d4b9c5f8d
    (r"\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)-[bcdfghjklmnpqrstvwxz2456789]{8,10}-[bcdfghjklmnpqrstvwxz2456789]{5}\b",
     r"\1-<hash>-<id>", 0),
    (r"\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)-[bcdfghjklmnpqrstvwxz2456789]{8,10}\b(?![-.])", r"\1-<hash>", 0),
    # IPv4 addresses (pod, Service, node IPs)
    (r"\b(?:\d{1,3}\.){3}\d{1,3}\b", "<ip>", 0),
    # ages as kubectl prints them in tables: 5s, 2m3s, 4h, 3d5h, <unknown>
    (r"(?<=\s)(\d+[smhdy]){1,2}(?=\s|$)", "<age>", re.M),
    # table padding: column widths move with the names above
    (r"(?<=\S) {2,}(?=\S)", "   ", 0),
    (r"[ \t]+$", "", re.M),
]]


def normalize(text: str, namespace: str | None = None) -> str:
    """``text`` with the run-specific parts replaced by placeholders; ``namespace`` becomes ``<ns>``."""
    if namespace:
        text = re.sub(rf"\b{re.escape(namespace)}\b", "<ns>", text)
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text
