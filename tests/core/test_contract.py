"""The contract's models, envelopes and error model."""

from decimal import Decimal

import pytest

from app.core import contract
from app.core.contract import GenerarXmlRequest, PlacaRecord, RucRecord, parse_json, parse_model, success_envelope
from app.core.errors import HTTP_STATUS, ErrorCode, YupanaError, invalid


def test_every_error_code_maps_to_one_http_status():
    assert set(HTTP_STATUS) == set(ErrorCode)
    expected = {ErrorCode.INVALID_INPUT: 400, ErrorCode.UNAUTHORIZED: 401, ErrorCode.NOT_FOUND: 404,
                ErrorCode.CONFLICT: 409, ErrorCode.PAYLOAD_TOO_LARGE: 413, ErrorCode.UPSTREAM_BAD_RESPONSE: 502,
                ErrorCode.UPSTREAM_UNAVAILABLE: 503, ErrorCode.UPSTREAM_TIMEOUT: 504}
    for code, status in expected.items():
        assert HTTP_STATUS[code] == status


def test_error_envelope_shape():
    error = invalid("items[0].igv", "El campo «items[0].igv» no cuadra.", "3103")
    assert error.http_status == 400
    assert error.to_envelope() == {
        "success": False,
        "error": {"code": "INVALID_INPUT", "message": "El campo «items[0].igv» no cuadra.",
                  "details": [{"field": "items[0].igv", "message": "El campo «items[0].igv» no cuadra.",
                               "sunat_code": "3103"}]},
    }


def test_success_envelope_uses_exact_field_names_and_keeps_contract_nulls():
    record = PlacaRecord(placa="ABC123", marca="TOYOTA", año=2019)
    envelope = success_envelope(record)
    assert envelope["success"] is True
    assert envelope["data"]["año"] == 2019
    assert "modelo" in envelope["data"] and envelope["data"]["modelo"] is None  # contract field: present as null
    assert "fuente" not in envelope["data"]  # empty extra: left out
    ruc = success_envelope(RucRecord(ruc="20100066603", fuente="padron"))["data"]
    assert list(ruc)[:10] == ["ruc", "razon_social", "tipo_contribuyente", "estado", "condicion", "direccion",
                              "departamento", "provincia", "distrito", "actividad_economica"]
    assert ruc["fuente"] == "padron"


def test_json_numbers_become_exact_decimals():
    payload = parse_json(b'{"tipo": "01", "serie": "F001", "numero": 7, "emisor": {"ruc": "20100066603"},'
                         b' "items": [{"descripcion": "x", "cantidad": 0.1, "precio_unitario": 1.005, "igv": 0.18}]}')
    request = parse_model(GenerarXmlRequest, payload)
    item = request.items[0]
    assert item.cantidad == Decimal("0.1") and isinstance(item.cantidad, Decimal)
    assert item.precio_unitario == Decimal("1.005")
    assert request.numero == 7


@pytest.mark.parametrize("body", [b"", b"{", b"[1, 2", b"\xff\xfe", b"nul"])
def test_malformed_json_is_a_clear_400(body):
    with pytest.raises(YupanaError) as caught:
        parse_json(body)
    assert caught.value.http_status == 400
    assert "JSON" in caught.value.message


def test_too_large_body_is_413():
    with pytest.raises(YupanaError) as caught:
        parse_json(b" " * (contract.MAX_BODY_BYTES + 1))
    assert caught.value.http_status == 413


def test_validation_errors_name_each_field_in_spanish():
    with pytest.raises(YupanaError) as caught:
        parse_model(GenerarXmlRequest, {"tipo": "01", "numero": "x", "emisor": {}, "items": [{"descripcion": 3}],
                                        "sobrante": 1})
    fields = {d.field: d.message for d in caught.value.details}
    assert fields["serie"] == "El campo «serie» es obligatorio."
    assert "entero" in fields["numero"]
    assert fields["emisor.ruc"] == "El campo «emisor.ruc» es obligatorio."
    assert "texto" in fields["items[0].descripcion"]
    assert "items[0].cantidad" in fields
    assert "no es un campo reconocido" in fields["sobrante"]


def test_request_must_be_an_object():
    with pytest.raises(YupanaError) as caught:
        parse_model(GenerarXmlRequest, [1, 2])
    assert caught.value.http_status == 400


def test_event_delivery_model_reads_the_from_field():
    data = contract.MessageReceivedData.model_validate(
        {"id": "m1", "from": "+51987654321", "type": "text", "body": "Hola", "name": "Ana"})
    assert data.from_ == "+51987654321"
    assert data.to_json()["from"] == "+51987654321"
