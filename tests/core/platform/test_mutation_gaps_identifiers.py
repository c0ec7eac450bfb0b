"""Identifiers (RUC, carnet de extranjería, plate): exact results and exact Spanish messages, found by `make mutation`."""

from __future__ import annotations

import pytest

from app.core.errors import ErrorCode, YupanaError
from app.core.platform.identifiers import check_ruc, normalize_ce, normalize_plate, ruc_check_digit, ruc_problem


@pytest.mark.parametrize(("first10", "digit"), [
    ("2010006660", "3"),  # the demo issuer 20100066603
    ("2000000001", "0"),  # 11 - (sum % 11) is 10: written 0
    ("2000000006", "1"),  # 11 - (sum % 11) is 11: written 1
    ("1000000001", "4"), ("1500000001", "6"), ("1600000001", "2"), ("1700000001", "9"), ("2000000001", "0")])
def test_check_digit(first10, digit):
    assert ruc_check_digit(first10) == digit


def test_check_digit_needs_exactly_ten_digits():
    with pytest.raises(ValueError):
        ruc_check_digit("201000666")


@pytest.mark.parametrize("ruc", ["20100066603", "10000000014", "15000000016", "16000000012", "17000000019",
                                 "20000000010"])
def test_valid_rucs_have_no_problem(ruc):
    assert ruc_problem(ruc) is None
    assert check_ruc(f"  {ruc} ") == ruc


@pytest.mark.parametrize(("value", "problem"), [
    ("2010006660A", "debe tener solo dígitos"),
    ("٢٠١٠٠٠٦٦٦٠٣", "debe tener solo dígitos"),  # digits, but not ASCII ones
    ("", "debe tener solo dígitos"),
    ("2010006660", "debe tener 11 dígitos (tiene 10)"),
    ("201000666031", "debe tener 11 dígitos (tiene 12)"),
    ("30100066603", "debe empezar por 10, 15, 16, 17 o 20"),
    ("11000000014", "debe empezar por 10, 15, 16, 17 o 20"),
    ("20100066604", "tiene un dígito verificador incorrecto"),
])
def test_ruc_problems(value, problem):
    assert ruc_problem(value) == problem


def _error(call) -> YupanaError:
    with pytest.raises(YupanaError) as caught:
        call()
    error = caught.value
    assert error.code == ErrorCode.INVALID_INPUT and error.http_status == 400
    assert len(error.details) == 1 and error.details[0].message == error.message
    return error


def test_check_ruc_messages_name_the_field():
    error = _error(lambda: check_ruc("20100066604"))
    assert error.message == ("El RUC «20100066604» del campo «ruc» no es válido: tiene un dígito verificador "
                             "incorrecto.")
    assert error.details[0].field == "ruc" and error.details[0].sunat_code is None
    error = _error(lambda: check_ruc(" 123 ", "emisor.ruc", "2800"))
    assert error.message == "El RUC «123» del campo «emisor.ruc» no es válido: debe tener 11 dígitos (tiene 3)."
    assert error.details[0].field == "emisor.ruc" and error.details[0].sunat_code == "2800"
    for empty in (None, "", "   "):
        error = _error(lambda value=empty: check_ruc(value, "receptor.ruc"))
        assert error.message == "El campo «receptor.ruc» es obligatorio."
        assert error.details[0].field == "receptor.ruc"
    assert _error(lambda: check_ruc(None)).message == "El campo «ruc» es obligatorio."
    assert check_ruc(20100066603) == "20100066603"


@pytest.mark.parametrize(("value", "normal"), [
    ("12345678", "012345678"),  # eight digits: written with nine
    ("123456789", "123456789"),
    ("001234567", "001234567"),
    ("000012345678", "012345678"),  # leading zeros dropped down to nine digits
    ("0001234567890", None),  # thirteen digits: refused even with zeros in front
    ("123456789012", "123456789012"),
    ("1234567890", "1234567890"),
    (" 12.345-678 9 ", "123456789"),
    (123456789, "123456789"),
])
def test_carnet_de_extranjeria(value, normal):
    if normal is None:
        _error(lambda: normalize_ce(value))
    else:
        assert normalize_ce(value) == normal


def test_carnet_de_extranjeria_messages():
    error = _error(lambda: normalize_ce(None))
    assert error.message == "El campo «numero» (carnet de extranjería) es obligatorio."
    assert error.details[0].field == "numero"
    assert _error(lambda: normalize_ce(" - . ", "ce")).message == \
        "El campo «ce» (carnet de extranjería) es obligatorio."
    error = _error(lambda: normalize_ce("12A45678", "receptor.numero_documento"))
    assert error.message == ("El carnet de extranjería «12A45678» del campo «receptor.numero_documento» no es válido: "
                             "debe tener solo dígitos.")
    assert error.details[0].field == "receptor.numero_documento"
    assert "solo dígitos" in _error(lambda: normalize_ce("１２３４５６７８")).message  # full-width digits
    error = _error(lambda: normalize_ce(" 1234567 "))
    assert error.message == ("El carnet de extranjería «1234567» del campo «numero» no es válido: debe tener de 8 a "
                             "12 dígitos (tiene 7).")
    error = _error(lambda: normalize_ce("1234567890123"))
    assert error.message.endswith("debe tener de 8 a 12 dígitos (tiene 13).")


@pytest.mark.parametrize(("value", "plate"), [
    ("ABC123", "ABC123"), ("abc-123", "ABC123"), (" a1b 234 ", "A1B234"), ("AB-1234", "AB1234"),
    ("1234-ab", "1234AB"), ("ab123c", "AB123C"), ("A-B-C-1-2-3", "ABC123")])
def test_plates(value, plate):
    assert normalize_plate(value) == plate


FORMS = "ABC123, A1B234, AB1234, 1234AB, AB123C"


@pytest.mark.parametrize("value", ["ABC12", "ABC1234", "ÁBC123", "AB12C3", "123ABC", "ABCD12", "A1B23"])
def test_plates_outside_the_forms_are_refused(value):
    error = _error(lambda: normalize_plate(value, "placa"))
    assert error.message == (f"La placa «{value}» del campo «placa» no es válida: debe tener uno de los formatos "
                             f"{FORMS} (con o sin guion, p. ej. ABC-123).")
    assert error.details[0].field == "placa"


def test_plate_messages():
    for empty in (None, "", " - "):
        error = _error(lambda value=empty: normalize_plate(value))
        assert error.message == "El campo «numero» (placa) es obligatorio."
        assert error.details[0].field == "numero"
    assert _error(lambda: normalize_plate(" abc12 ")).message.startswith("La placa «abc12» del campo «numero»")
