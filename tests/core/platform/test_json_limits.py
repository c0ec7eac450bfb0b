"""The JSON parser's limits: nesting depth and integer size answer a 400 envelope, never a 500.

Reported: a body nested 100k deep raised RecursionError and `"numero": 10**40` an OverflowError, both
answered 500, also through `yupana call`.
"""

from __future__ import annotations

import json

import pytest

from app.core import contract
from app.core.contract import parse_json
from app.core.errors import ErrorCode, YupanaError
from tests.helpers.base import ISSUER_RUC, run_cli


def voucher(numero: object) -> str:
    return ('{"tipo": "01", "serie": "F001", "numero": ' + str(numero) + ', "emisor": {"ruc": "' + ISSUER_RUC
            + '"}, "items": [{"descripcion": "x", "cantidad": 1, "precio_unitario": 10}]}')


@pytest.mark.parametrize("body", [
    "[" * 100_000 + "]" * 100_000,  # deeper than Python's recursion limit
    "[" * (contract.MAX_JSON_DEPTH + 1) + "]" * (contract.MAX_JSON_DEPTH + 1),  # just past Yupana's own limit
    '{"a": ' * 200 + "1" + "}" * 200,
])
def test_deep_nesting_is_a_400(body):
    with pytest.raises(YupanaError) as caught:
        parse_json(body)
    assert caught.value.code == ErrorCode.INVALID_JSON
    assert str(contract.MAX_JSON_DEPTH) in caught.value.message


def test_nesting_within_the_limit_is_read():
    depth = contract.MAX_JSON_DEPTH
    assert parse_json("[" * depth + "]" * depth) is not None


@pytest.mark.parametrize("number", [str(10 ** 40), "-" + str(10 ** 40), "1" * 5000])
def test_huge_integers_are_a_400_that_names_the_limit(number):
    with pytest.raises(YupanaError) as caught:
        parse_json(voucher(number))
    assert caught.value.code == ErrorCode.INVALID_JSON
    assert f"{contract.MAX_INT_DIGITS} cifras" in caught.value.message


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_constants_are_refused(constant):
    with pytest.raises(YupanaError) as caught:
        parse_json(voucher(1).replace('"cantidad": 1', f'"cantidad": {constant}'))
    assert caught.value.code == ErrorCode.INVALID_JSON


@pytest.mark.parametrize("number", ["1e999999999", "1e-999999999", "1.5e18"])
def test_numbers_out_of_range_are_a_400(number):
    with pytest.raises(YupanaError) as caught:
        parse_json(voucher(number))
    assert caught.value.code == ErrorCode.INVALID_JSON
    assert "fuera de rango" in caught.value.message


def test_largest_allowed_integer_is_read_exactly():
    largest = int("9" * contract.MAX_INT_DIGITS)
    assert parse_json(f'{{"n": {largest}}}') == {"n": largest}


@pytest.mark.parametrize("body, code", [
    (voucher(10 ** 40), "INVALID_JSON"),
    ("[" * 100_000 + "]" * 100_000, "INVALID_JSON"),
    (voucher("1e999999999"), "INVALID_JSON"),  # int(Decimal("1e999999999")) would run for minutes
    (voucher(1).replace('"cantidad": 1', '"cantidad": "1e999999999"'), "INVALID_INPUT"),  # the same as a string
    (voucher(1).replace('"cantidad": 1', '"cantidad": "1e-999999999"'), "INVALID_INPUT"),
])
def test_yupana_call_answers_400_envelopes_for_them(body, code, home):
    done = run_cli("call", "xml", "-", stdin=body, home=home)
    envelope = json.loads(done.stdout)
    assert done.returncode == 1
    assert envelope["error"]["code"] == code, envelope
    assert b"Traceback" not in done.stderr
