"""Name and label validation in upstream's exact wording, plus generated names and template hashes.

The validators return lists of error strings (empty when valid), worded as
k8s.io/apimachinery/pkg/util/validation words them, so the API server can put them straight
into an Invalid Status and kubectl users read the messages they know.

``generate_name`` and ``pod_template_hash`` draw from upstream's alphabet without vowels
(``bcdfghjklmnpqrstvwxz2456789``) so generated names never spell words. The template hash is
FNV-1a (32 bit) over the template's canonical JSON (sorted keys, compact) followed by the
collision count as four little-endian bytes when given, then upstream's SafeEncodeString of
the decimal digits: stable across runs and machines, up to 10 characters. Upstream hashes a
spew dump of the Go struct instead, so the strings differ from a real cluster's, but the
properties that matter (same template -> same hash, collision count changes it) hold.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from typing import Any

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT + r"\Z")
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT + r"\Z")
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT + r"\Z")
_QNAME_RE = re.compile(_QNAME_FMT + r"\Z")
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT + r"\Z")

#: upstream's rand alphabet: no vowels, no 0/1/3 that read like letters
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
_MAX_GENERATED_PREFIX = 63 - GENERATED_SUFFIX_LENGTH


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """upstream RegexError, including its double space before ``or`` when there are two examples."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            out += " or "
        out += f"'{ex}', "
    return out + f"regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.match(value):
        if _DNS1123_SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


_WILDCARD_DNS1123_SUBDOMAIN_FMT = "\\*\\." + _DNS1123_SUBDOMAIN_FMT
_WILDCARD_DNS1123_SUBDOMAIN_RE = re.compile(_WILDCARD_DNS1123_SUBDOMAIN_FMT + r"\Z")
_WILDCARD_DNS1123_SUBDOMAIN_MSG = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist "
    "of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character")


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """upstream IsWildcardDNS1123Subdomain: ``*`` only as the whole first label (``*.example.com``)."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _WILDCARD_DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(regex_error(_WILDCARD_DNS1123_SUBDOMAIN_MSG, _WILDCARD_DNS1123_SUBDOMAIN_FMT, "*.example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.match(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """Label and annotation keys: ``[prefix/]name``, prefix a DNS subdomain, name ≤ 63."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QNAME_RE.match(name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_path_segment_name(value: str) -> list[str]:
    """Names end up in URL paths: upstream forbids ``.``, ``..``, ``/`` and ``%``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in value]


def validate_labels(labels: Mapping[str, Any] | None) -> list[str]:
    """Errors as ``metadata.labels: Invalid value: "<k or v>": <why>`` lines."""
    errs = []
    for k, v in (labels or {}).items():
        for m in is_qualified_name(k):
            errs.append(f'metadata.labels: Invalid value: "{k}": {m}')
        if not isinstance(v, str):
            errs.append(f'metadata.labels: Invalid value: "{v}": label values must be strings')
            continue
        for m in is_valid_label_value(v):
            errs.append(f'metadata.labels: Invalid value: "{v}": {m}')
    return errs


def validate_annotations(annotations: Mapping[str, Any] | None) -> list[str]:
    """Keys must be qualified names (checked lower-cased); all keys+values ≤ 256 KiB together."""
    errs = []
    total = 0
    for k, v in (annotations or {}).items():
        for m in is_qualified_name(k.lower()):
            errs.append(f'metadata.annotations: Invalid value: "{k}": {m}')
        total += len(k.encode()) + len(str(v).encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(f"metadata.annotations: Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes")
    return errs


def generate_name(prefix: str, rng: random.Random) -> str:
    """``generateName`` as the API server does it: prefix (cut to 58) + 5 random alphabet chars."""
    base = prefix[:_MAX_GENERATED_PREFIX]
    return base + "".join(rng.choice(NAME_ALPHABET) for _ in range(GENERATED_SUFFIX_LENGTH))


def safe_encode_string(s: str) -> str:
    """upstream rand.SafeEncodeString: maps each byte into the name alphabet."""
    return "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in s.encode())


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def without_null_timestamp(template: Mapping[str, Any]) -> Mapping[str, Any]:
    """``template`` less a ``metadata.creationTimestamp: null`` (a shallow copy only when it has one)."""
    meta = template.get("metadata")
    if type(meta) is not dict or "creationTimestamp" not in meta or meta["creationTimestamp"] is not None:
        return template
    return {**template, "metadata": {k: v for k, v in meta.items() if k != "creationTimestamp"}}


def pod_template_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` label value for a Deployment's pod template (see module doc). Go's
    zero ``creationTimestamp`` (written ``null``) hashes as absent, so stored templates written with
    and without it hash alike."""
    template = without_null_timestamp(template)
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little")
    return safe_encode_string(str(fnv32a(data)))
