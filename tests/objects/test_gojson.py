"""Go's decoder messages for bad base64 and bad JSON, as clients see them in upstream's errors."""

from __future__ import annotations

import pytest

from kconsole.objects import gojson


@pytest.mark.parametrize(("text", "message"), [
    ("", "unexpected end of JSON input"),
    ('{"a":', "unexpected end of JSON input"),
    ('"abc', "unexpected end of JSON input"),
    ("x", "invalid character 'x' looking for beginning of value"),
    ('{"a" 1}', "invalid character '1' after object key"),
    ('{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    ('[1 2]', "invalid character '2' after array element"),
    ('{"a":[1 2]}', "invalid character '2' after array element"),
    ('{"a":"[",1}', "invalid character '1' looking for beginning of object key string"),
    ('{"a":1}x', "invalid character 'x' after top-level value"),
    ("{a:1}", "invalid character 'a' looking for beginning of object key string"),
])
def test_json_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        gojson.loads(text)
    assert str(err.value) == message


@pytest.mark.parametrize(("text", "message"), [
    ("abc=", "illegal base64 data at input byte 3"),
    ("abcde", "illegal base64 data at input byte 4"),
    ("a+b", "illegal base64 data at input byte 1"),
])
def test_raw_url_base64_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        gojson.b64decode_raw_url(text)
    assert str(err.value) == message


def test_raw_url_base64_decodes_unpadded() -> None:
    assert gojson.b64decode_raw_url("YWJj") == b"abc"
    assert gojson.b64decode_raw_url("YQ") == b"a"
