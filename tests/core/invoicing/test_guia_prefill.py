"""«Guía desde un comprobante» (issue 36, point 4): engine.invoicing.guia_request_from_voucher prefills a
remitente's guía from a stored factura or boleta — the customer as destinatario, the issuer's and the customer's
addresses, the lines, the voucher as related document. Completed with what a voucher does not say (transport,
dates, weight), it is built, signed and judged by ../shared/tools/sunat_check.py --strict; a voucher that is not a
sale is refused naming it."""

from __future__ import annotations

import json

import pytest

from app.core.api import YupanaError
from tests.helpers.guia_matrix import DRIVERS, ISSUED, START, VEHICLES
from tests.helpers.oracles import run_sunat_check
from tests.helpers.voucher_matrix import CUSTOMER_NAME, CUSTOMER_RUC, DNI_CUSTOMER, boleta, factura, item, nota

CUSTOMER_ADDRESS = "JR. LOS OLIVOS 456, SAN JUAN DE LURIGANCHO"


def stored(engine, request: dict) -> int:
    engine.invoicing.generate_xml(request)
    return engine.invoicing.find_voucher(f"{request['serie']}-{request['numero']}", tipo=request["tipo"])


def test_a_boletas_customer_address_and_lines_make_a_guia_sunat_accepts(engine, company, tmp_path):
    certificado_id = engine.invoicing.create_test_certificate(company.ruc).certificado_id
    customer = {**DNI_CUSTOMER, "direccion": CUSTOMER_ADDRESS}
    lines = [item("Zapatillas urbanas talla 40", "2", "105.93", codigo="ZAP-40", unidad="PR"),
             item("Medias deportivas", "3", "8.47")]
    voucher_id = stored(engine, boleta("B001", 7, lines, customer, fecha_emision=ISSUED))
    prefill = engine.invoicing.guia_request_from_voucher(voucher_id).request
    assert prefill["destinatario"] == {"tipo_documento": "1", "numero_documento": DNI_CUSTOMER["numero_documento"],
                                       "razon_social": DNI_CUSTOMER["razon_social"]}
    assert prefill["partida"] == {"ubigeo": company.ubigeo, "direccion": company.direccion}
    assert prefill["llegada"]["direccion"] == CUSTOMER_ADDRESS
    assert prefill["documentos_relacionados"] == [{"tipo": "03", "numero": "B001-7"}]
    assert prefill["items"] == [
        {"codigo": "ZAP-40", "descripcion": "Zapatillas urbanas talla 40", "cantidad": "2", "unidad": "PR"},
        {"descripcion": "Medias deportivas", "cantidad": "3", "unidad": "NIU"}]
    guia = {**prefill, "numero": 1, "fecha_emision": ISSUED, "hora_emision": "11:00:00",
            "fecha_inicio_traslado": START, "modalidad_transporte": "02", "peso_bruto": "4.5", "unidad_peso": "KGM",
            "llegada": {**prefill["llegada"], "ubigeo": "150132"}, "vehiculos": [VEHICLES[0]],
            "conductores": [DRIVERS[0]]}
    generated = engine.invoicing.generate_xml(guia)
    signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
    path = tmp_path / f"{company.ruc}-09-T001-1.xml"
    path.write_text(signed.xml_firmado, encoding="utf-8")
    done = run_sunat_check(path, "--strict", "--json")
    verdict = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("{")))
    assert verdict["ok"] and verdict["sunat"]["observations"] == [], done.stdout


def test_only_a_factura_or_boleta_prefills_a_guia(engine, company):
    factura_id = stored(engine, factura("F001", 3, [item("Arroz extra 5 kg", "2", "18.50")]))
    assert engine.invoicing.guia_request_from_voucher(factura_id).request["destinatario"] == {
        "tipo_documento": "6", "numero_documento": CUSTOMER_RUC, "razon_social": CUSTOMER_NAME}
    note_id = stored(engine, nota("07", "F001", 4, ("01", "F001", 3), "01", [item("Arroz extra 5 kg", "2", "18.50")]))
    with pytest.raises(YupanaError) as caught:
        engine.invoicing.guia_request_from_voucher(note_id)
    assert "F001-4 no es una factura ni una boleta" in str(caught.value)
    with pytest.raises(YupanaError) as missing:
        engine.invoicing.guia_request_from_voucher(999_999)
    assert "999999" in str(missing.value)
