from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.objects.quantity import (
    FORMAT_WRONG,
    SUFFIX_WRONG,
    QuantityError,
    add_resource_lists,
    cpu_millis,
    fits,
    format_quantity,
    insufficient_resources,
    is_quantity,
    max_resource_lists,
    memory_bytes,
    milli_value,
    parse_quantity,
    quantity_format,
    subtract_resource_lists,
    value,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        ("2", 2),
        ("1k", 1000),
        ("1M", 10**6),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("1n", Fraction(1, 10**9)),
        ("1u", Fraction(1, 10**6)),
        ("1Ki", 1024),
        ("1Mi", 2**20),
        ("1.5Gi", 3 * 2**29),
        ("1Ti", 2**40),
        ("1Pi", 2**50),
        ("1Ei", 2**60),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1e-3", Fraction(1, 1000)),
        ("12e+2", 1200),
        ("-1.5", Fraction(-3, 2)),
        ("+3", 3),
        ("007", 7),
        # "things written by trolls" from upstream's tests
        (".001", Fraction(1, 1000)),
        (".0001k", Fraction(1, 10)),
        ("1.", 1),
        ("1.G", 10**9),
        ("0.000000000001Ki", Fraction(2, 10**9)),
    ],
)
def test_parse_matches_upstream_values(text, expected):
    assert parse_quantity(text) == expected


def test_values_below_a_nano_round_up_away_from_zero():
    assert parse_quantity("0.1n") == Fraction(1, 10**9)
    assert parse_quantity("-0.1n") == Fraction(-1, 10**9)
    assert parse_quantity("1e-30") == Fraction(1, 10**9)


def test_binary_values_are_capped_at_int64_max():
    assert parse_quantity("9Ei") == 2**63 - 1
    assert parse_quantity("12E") == 12 * 10**18  # decimal values are not capped


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("", FORMAT_WRONG),
        ("aoeu", FORMAT_WRONG),
        ("1.1.M", FORMAT_WRONG),
        ("1+1.0M", FORMAT_WRONG),
        (" 1", FORMAT_WRONG),
        ("1 ", FORMAT_WRONG),
        ("1KiB", FORMAT_WRONG),
        ("1e1.5", FORMAT_WRONG),
        ("0.1mi", SUFFIX_WRONG),
        ("0.1am", FORMAT_WRONG),
        (".5i", SUFFIX_WRONG),
        ("1i", SUFFIX_WRONG),
        ("-3.01e-", SUFFIX_WRONG),
        ("1e", SUFFIX_WRONG),
        ("1ki", SUFFIX_WRONG),
    ],
)
def test_bad_input_is_rejected_with_upstream_reason_and_the_input(bad, reason):
    with pytest.raises(QuantityError) as info:
        parse_quantity(bad)
    assert info.value.reason == reason
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, ValueError)
    assert not is_quantity(bad)


def test_format_wrong_message_is_upstreams_regex_text():
    with pytest.raises(ValueError, match=r"quantities must match the regular expression '\^\(\[\+-\]\?\[0-9\.\]\+\)"):
        parse_quantity("abc")


def test_json_numbers_parse_like_their_text():
    assert parse_quantity(1) == 1
    assert parse_quantity(0.5) == Fraction(1, 2)
    assert parse_quantity(1e-7) == Fraction(1, 10**7)
    for bad in (True, float("nan"), float("inf"), None, [1]):
        with pytest.raises(ValueError):
            parse_quantity(bad)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1500m", "1500m"),
        ("1.5", "1500m"),
        ("0.5", "500m"),
        ("1000", "1k"),
        ("1000000", "1M"),
        ("10000000", "10M"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("2048Ki", "2Mi"),
        ("512", "512"),
        ("1Ki", "1Ki"),
        ("0.5Ki", "512"),
        ("1e3", "1e3"),
        ("1E3", "1e3"),
        ("1.5e3", "1500"),
        ("100m", "100m"),
        ("0.1", "100m"),
        ("-1.5Gi", "-1536Mi"),
        ("0Ki", "0"),
        ("9Ei", "9223372036854775807"),
        ("0.000000000001Ki", "2n"),
    ],
)
def test_canonical_strings_match_upstream(text, canonical):
    assert format_quantity(text) == canonical


def test_numbers_format_binary_when_whole_multiples_of_1024():
    assert format_quantity(1073741824) == "1Gi"
    assert format_quantity(0.5) == "500m"
    assert format_quantity(Fraction(3, 2)) == "1500m"
    assert format_quantity(1500) == "1500"
    assert format_quantity(3000) == "3k"
    assert format_quantity(1024, "DecimalSI") == "1024"
    assert format_quantity("1Gi", "DecimalSI") == "1073741824"
    with pytest.raises(ValueError, match="unknown quantity format 'Roman'"):
        format_quantity("1", "Roman")


def test_quantity_format_follows_the_suffix():
    assert quantity_format("1Gi") == "BinarySI"
    assert quantity_format("1G") == "DecimalSI"
    assert quantity_format("1e9") == "DecimalExponent"
    assert quantity_format("0.5Ki") == "BinarySI"


def test_milli_value_and_value_round_up():
    assert milli_value("1.5") == 1500
    assert milli_value("1n") == 1
    assert milli_value("100m") == 100
    assert value("1.5") == 2
    assert value("1Ki") == 1024
    assert value("100m") == 1
    assert cpu_millis("250m") == 250
    assert cpu_millis("2") == 2000
    assert cpu_millis(0.1) == 100
    assert memory_bytes("128Mi") == 134217728
    assert memory_bytes("1G") == 10**9
    assert memory_bytes("1e3") == 1000


def test_resource_list_arithmetic():
    total = add_resource_lists({"cpu": "100m", "memory": "1Gi"}, {"cpu": "1.9"}, None, {"nvidia.com/gpu": "1"})
    assert total == {"cpu": 2, "memory": 2**30, "nvidia.com/gpu": 1}
    assert subtract_resource_lists({"cpu": "2"}, {"cpu": "500m", "memory": "1Mi"}) == {
        "cpu": Fraction(3, 2),
        "memory": -(2**20),
    }
    assert max_resource_lists({"cpu": "1", "memory": "1Gi"}, {"cpu": "2"}) == {"cpu": 2, "memory": 2**30}


def test_fits_needs_every_requested_resource_allocatable():
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert fits({"cpu": "4", "memory": "8Gi"}, alloc)
    assert not fits({"cpu": "4001m"}, alloc)
    assert insufficient_resources({"cpu": "5", "memory": "9Gi", "ephemeral-storage": "1"}, alloc) == [
        "cpu",
        "ephemeral-storage",
        "memory",
    ]
    assert fits({"example.com/dongle": "0"}, alloc)  # zero requests need nothing


nanos = st.integers(min_value=-(10**25), max_value=10**25)


@settings(deadline=None, max_examples=80)
@given(nanos, st.sampled_from([None, "DecimalSI", "BinarySI", "DecimalExponent"]))
def test_format_then_parse_round_trips(n, fmt):
    q = Fraction(n, 10**9)
    text = format_quantity(q, fmt)
    assert parse_quantity(text) == q
    again = format_quantity(text)
    assert format_quantity(again) == again  # canonical strings are fixed points
    if not (fmt == "BinarySI" and text.lstrip("-").isdigit()):
        assert again == text
    # A BinarySI whole number that is no multiple of 1024 prints bare ("125000", as upstream's
    # String()), and a bare number reads back as DecimalSI ("125k"): not its own fixed point.


def test_binary_si_whole_numbers_print_bare_and_read_back_decimal():
    assert format_quantity(Fraction(125000), "BinarySI") == "125000"
    assert format_quantity("125000") == "125k"
    assert format_quantity(Fraction(2048), "BinarySI") == "2Ki"


@settings(deadline=None, max_examples=80)
@given(
    st.decimals(min_value=-(10**12), max_value=10**12, allow_nan=False, allow_infinity=False, places=9),
    st.decimals(min_value=-(10**12), max_value=10**12, allow_nan=False, allow_infinity=False, places=9),
)
def test_parsing_preserves_order_of_decimal_text(a: Decimal, b: Decimal):
    qa, qb = parse_quantity(format(a, "f")), parse_quantity(format(b, "f"))
    assert (qa < qb) == (a < b)
    assert (qa == qb) == (a == b)


@settings(deadline=None, max_examples=80)
@given(st.integers(min_value=0, max_value=2**40), st.sampled_from(["Ki", "Mi", "Gi"]))
def test_binary_suffixes_multiply_exactly_up_to_the_int64_cap(n, suffix):
    factor = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}[suffix]
    assert memory_bytes(f"{n}{suffix}") == min(n * factor, 2**63 - 1)
