import random

from kconsole.objects.names import (
    NAME_ALPHABET,
    generate_name,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    is_valid_path_segment_name,
    pod_template_hash,
    validate_annotations,
    validate_labels,
)


def test_dns1123_subdomain_message_is_upstreams():
    assert is_dns1123_subdomain("example.com") == []
    assert is_dns1123_subdomain("Example") == [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    assert is_dns1123_subdomain("a" * 254)[0] == "must be no more than 253 characters"


def test_dns1123_label():
    assert is_dns1123_label("my-name") == []
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_dns1123_label("-x") == [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
        "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]
    assert is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]


def test_dns1035_label_for_services():
    assert is_dns1035_label("web") == []
    assert is_dns1035_label("1web")[0].startswith("a DNS-1035 label must consist of lower case alphanumeric")


def test_qualified_names_and_label_values():
    assert is_qualified_name("app.kubernetes.io/name") == []
    assert is_qualified_name("MyName") == []
    assert is_qualified_name("/name") == ["prefix part must be non-empty"]
    assert is_qualified_name("a/") == [
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]
    assert is_qualified_name("a/b/c")[0].startswith("a qualified name must consist of")
    assert is_qualified_name("Bad_Prefix/x")[0].startswith("prefix part a lowercase RFC 1123 subdomain")
    assert is_valid_label_value("") == []
    assert is_valid_label_value("v1.2_x-y") == []
    assert len(is_valid_label_value("-bad-")) == 1
    assert is_valid_label_value("x" * 64)[0] == "must be no more than 63 characters"


def test_path_segment_names():
    assert is_valid_path_segment_name("ok") == []
    assert is_valid_path_segment_name("..") == ["may not be '..'"]
    assert is_valid_path_segment_name("a/b%c") == ["may not contain '/'", "may not contain '%'"]


def test_validate_labels_and_annotation_size():
    assert validate_labels({"app": "web"}) == []
    errs = validate_labels({"bad key": "v", "ok": "bad value"})
    assert len(errs) == 2 and all(e.startswith("metadata.labels: Invalid value:") for e in errs)
    assert validate_annotations({"note": "x" * 1000}) == []
    assert validate_annotations({"note": "x" * (256 * 1024)}) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_generate_name_is_seeded_and_uses_the_alphabet():
    a = generate_name("web-", random.Random(7))
    b = generate_name("web-", random.Random(7))
    assert a == b and a.startswith("web-") and len(a) == 9
    assert all(c in NAME_ALPHABET for c in a[4:])
    assert generate_name("web-", random.Random(8)) != a or generate_name("web-", random.Random(9)) != a
    long = generate_name("x" * 80, random.Random(1))
    assert len(long) == 63


def test_pod_template_hash_is_stable_and_sensitive():
    t1 = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
    t1_reordered = {"spec": {"containers": [{"image": "nginx:1.27", "name": "c"}]}, "metadata": {"labels": {"app": "web"}}}
    t2 = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.28"}]}}
    h = pod_template_hash(t1)
    assert h == pod_template_hash(t1_reordered)
    assert h != pod_template_hash(t2)
    assert pod_template_hash(t1, 1) != h
    assert pod_template_hash(t1, 1) != pod_template_hash(t1, 2)
    assert 1 <= len(h) <= 10 and all(c in NAME_ALPHABET for c in h)
    assert h == "6f5954ff8d"  # pinned: names must not change between releases
    # Go's zero creationTimestamp (null in a stored template) hashes as absent
    nulled = {"metadata": {"creationTimestamp": None, "labels": {"app": "web"}}, "spec": t1["spec"]}
    assert pod_template_hash(nulled) == h
