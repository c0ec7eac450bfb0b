"""What a user reads when operation 1 refuses a request: for each kind of mistake the builder knows, the whole answer
(field, SUNAT's code, the Spanish message naming what was typed), kept in `golden/problems.json` and compared exactly.

The other error tests check the field and the code; these check every word, so a message that loses the value the
user typed, or names the wrong field, fails here. `YUPANA_UPDATE_GOLDEN=1 pytest <this file>` writes the file again
after a deliberate change of wording; review its diff like code.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from app.core.contract import GenerarXmlRequest
from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing.builder import build_document, parse_request
from tests.helpers.golden import UPDATE, company_of, fixed_request
from tests.helpers.voucher_matrix import DNI_CUSTOMER, item, variant

GOLDEN = Path(__file__).parent / "golden" / "problems.json"
KNOWN = {"20601030013": "DISTRIBUIDORA ANDINA S.A.C.", "20100070970": "SUPERMERCADOS PERUANOS S.A."}
BROKEN_REGISTRY = "20131312955"  # the registry fails for this one (a provider down): the name is asked for


def _name_of(ruc: str) -> str | None:
    if ruc == BROKEN_REGISTRY:
        raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE, "proveedor caído")
    return KNOWN.get(ruc)




D = Decimal
CUOTA = {"monto": D("10.00"), "fecha_vencimiento": "2026-04-01"}
SPOT = {"codigo": "022", "cuenta": "00-741-123456"}
BIG = [item("Servicio de consultoría empresarial", "1", "1271.19", codigo_detraccion="022")]

CASES: dict[str, dict] = {
    # the issuer and the type
    "emisor-ruc-invalido": variant("factura-simple", emisor={"ruc": "20100066604"}),
    "emisor-no-registrado": variant("factura-simple", emisor={"ruc": "20601030013"}),
    "tipo-desconocido": variant("factura-simple", tipo="09"),
    "moneda-desconocida": variant("factura-simple", moneda="eur"),
    "sin-items": variant("factura-simple", items=[]),
    # the customer
    "factura-sin-ruc": variant("factura-simple", receptor={"razon_social": "ALGUIEN"}),
    "tipo-documento-desconocido": variant("boleta-dni", receptor__tipo_documento="9"),
    "factura-a-dni": variant("factura-simple", receptor=DNI_CUSTOMER),
    "exportacion-a-ruc": variant("factura-exportacion", receptor={"ruc": "20601030013", "razon_social": "X S.A.C."}),
    "ruc-cliente-invalido": variant("factura-simple", receptor={"ruc": "20601030014", "razon_social": "XYZ S.A.C."}),
    "ruc-cliente-en-numero-documento": variant("factura-simple", receptor={"tipo_documento": "6",
                                                                           "numero_documento": "2060103001"}),
    "ruc-sin-nombre-desconocido": variant("factura-simple", receptor={"ruc": "20100066603"}),
    "ruc-sin-nombre-registro-caido": variant("factura-simple", receptor={"ruc": BROKEN_REGISTRY}),
    "dni-sin-numero": variant("boleta-dni", receptor={"tipo_documento": "1", "razon_social": "ANA"}),
    "dni-sin-nombre": variant("boleta-dni", receptor={"tipo_documento": "1", "numero_documento": "45678912"}),
    "dni-corto": variant("boleta-dni", receptor__numero_documento="4567891"),
    "direccion-con-control": variant("factura-direccion-cliente", receptor__direccion="AV. LOS OLIVOS\x01 123"),
    "razon-social-con-control": variant("factura-simple", receptor__razon_social="DISTRIBUIDORA\x07 ANDINA"),
    "numero-documento-con-control": variant("boleta-dni", receptor__numero_documento="4567\x0b8912"),
    "ruc-con-control": variant("factura-simple", receptor__ruc="2060103\x0c0013"),
    "boleta-grande-sin-cliente": variant("boleta-sin-documento", items=[item("Refrigeradora", "1", "800")]),
    # lines and their prices
    "codigo-con-control": variant("factura-simple", items__0__codigo="P\x01"),
    "precio-con-igv-e-igv-equivocado": variant("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                                         "precio_con_igv": D("118"), "igv": D("20")}]),
    "linea-sin-valor": variant("factura-simple", items=[item("Nada", "1", "0")]),
    "igv-equivocado": variant("factura-simple", items__0__igv=D("20.00")),
    "igv-equivocado-en-bolsas": variant("boleta-restaurante-bolsas", items__1__igv=D("5.00"),
                                        items__1__cantidad=D("2.5")),
    "nc-linea-sin-valor": variant("nc-anulacion-factura", items=[item("Nada", "1", "0")]),
    "dos-lineas-malas": variant("factura-simple", items=[{"descripcion": "Sin precio", "cantidad": D("1")},
                                                         item("Unidad rara", "1", "10", unidad="QQQ")]),
    "sin-precio": variant("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1")}]),
    "dos-precios": variant("factura-simple", items__0__precio_con_igv=D("118")),
    "precio-con-igv-negativo": variant("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                                 "precio_con_igv": D("-1")}]),
    "precio-con-igv-imposible": variant("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("123456789"),
                                                                  "precio_con_igv": D("7.77")}]),
    "precio-con-igv-cantidad-cero": variant("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("0"),
                                                                      "precio_con_igv": D("118")}]),
    "precio-con-igv-cero": variant("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                             "precio_con_igv": D("0")}]),
    "precio-con-igv-en-el-limite": variant("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                                     "precio_con_igv": D("1E12")}]),
    "precio-con-igv-cantidad-en-el-limite": variant("factura-simple", items=[{"descripcion": "Servicio",
                                                                              "cantidad": D("1E12"),
                                                                              "precio_con_igv": D("1")}]),
    "cantidad-negativa": variant("factura-simple", items__0__cantidad=D("-1")),
    "exportacion-mezclada": variant("factura-simple", items=[item("Servicio", "1", "100"),
                                                             item("Café", "1", "100", "40")]),
    # free transfers
    "gratuita-sin-valor": variant("factura-muestra-gratuita", items=[item("Muestra", "1", "0", "13")]),
    "gratuita-con-descuento": variant("factura-muestra-gratuita", items=[item("Muestra", "1", "10", "13",
                                                                              descuento=D("1.00"))]),
    "gratuita-con-descuento-e-igv": variant("factura-muestra-gratuita", items=[item("Muestra", "1", "10", "13",
                                                                                   descuento=D("1.00"), igv=D("5.00"))]),
    # discounts
    "descuento-tres-decimales": variant("factura-simple", items__0__descuento=D("1.005")),
    "descuento-negativo": variant("factura-simple", items__0__descuento=D("-1")),
    "descuento-mayor": variant("factura-simple", items__0__descuento=D("100.01")),
    "descuento-igual": variant("factura-simple", items__0__descuento=D("100.00")),
    "descuento-global-en-nota": variant("nc-anulacion-factura", descuento_global=D("1.00")),
    "descuento-global-negativo": variant("factura-simple", descuento_global=D("-1")),
    "descuento-global-mayor": variant("factura-simple", descuento_global=D("100.00")),
    "descuento-global-sin-gravadas": variant("factura-exonerada", descuento_global=D("1.00")),
    # bags
    "bolsas-antes-de-2019": variant("factura-bolsas-2021", fecha_emision="2019-07-31"),
    "bolsas-exportacion": variant("factura-exportacion", items__0__icbper=True),
    "bolsas-fraccion": variant("boleta-restaurante-bolsas", items__1__cantidad=D("2.5")),
    "bolsas-demasiadas": variant("boleta-restaurante-bolsas", items__1__cantidad=D("100000")),
    "bolsas-en-dolares": variant("boleta-restaurante-bolsas", moneda="USD"),
    # payment
    "contado-con-cuotas": variant("factura-simple", forma_pago={"tipo": "Contado", "cuotas": [CUOTA]}),
    "credito-sin-cuotas": variant("factura-simple", forma_pago={"tipo": "Credito"}),
    "cuota-cero": variant("factura-simple", forma_pago={"tipo": "Credito", "cuotas": [{**CUOTA, "monto": D("0")}]}),
    "cuota-tres-decimales": variant("factura-simple", forma_pago={"tipo": "Credito",
                                                                  "cuotas": [{**CUOTA, "monto": D("1.005")}]}),
    "cuota-el-mismo-dia": variant("factura-simple", forma_pago={"tipo": "Credito",
                                                                "cuotas": [{**CUOTA, "fecha_vencimiento": "2026-03-02"}]}),
    "cuotas-mayores-al-total": variant("factura-simple", forma_pago={"tipo": "Credito",
                                                                     "cuotas": [{**CUOTA, "monto": D("118.01")}]}),
    "nota-13-sin-cuotas": variant("nc-cuotas", forma_pago=None),
    "nota-13-contado": variant("nc-cuotas", forma_pago={"tipo": "Contado"}),
    "nota-13-contado-con-cuotas": variant("nc-cuotas", forma_pago={"tipo": "Contado", "cuotas": [CUOTA]}),
    "nota-13-con-monto": variant("nc-cuotas", items__0__precio_unitario=D("10")),
    "nota-13-a-boleta": variant("nc-cuotas", documento_referencia={"tipo": "03", "serie": "B001", "numero": 1}),
    # detracción
    "detraccion-en-boleta": variant("boleta-dni", detraccion=SPOT),
    "detraccion-codigo-desconocido": variant("factura-detraccion", detraccion={**SPOT, "codigo": "999"}),
    "detraccion-porcentaje-100": variant("factura-detraccion", detraccion={**SPOT, "porcentaje": D("100")}),
    "detraccion-porcentaje-cero": variant("factura-detraccion", detraccion={**SPOT, "porcentaje": D("0")}),
    "detraccion-porcentaje-decimales": variant("factura-detraccion", detraccion={**SPOT, "porcentaje": D("12.125")}),
    "detraccion-cuenta-corta": variant("factura-detraccion", detraccion={**SPOT, "cuenta": "1234567"}),
    "detraccion-medio-desconocido": variant("factura-detraccion", detraccion={**SPOT, "medio_pago": "099"}),
    "detraccion-usd-sin-cambio": variant("factura-detraccion-usd", tipo_cambio=None),
    "detraccion-usd-cambio-cero": variant("factura-detraccion-usd", tipo_cambio=D("0")),
    "detraccion-usd-cambio-cuatro-decimales": variant("factura-detraccion-usd", tipo_cambio=D("3.7451")),
    "detraccion-faltante": variant("factura-detraccion", detraccion=None),
    "detraccion-faltante-codigo-desconocido": variant("factura-detraccion", detraccion=None,
                                                      items__0__codigo_detraccion="999"),
    "detraccion-faltante-usd-sin-cambio": variant("factura-usd", items__0__codigo_detraccion="022",
                                                  items__0__precio_unitario=D("500")),
    "detraccion-faltante-usd": variant("factura-usd", items__0__codigo_detraccion="022", tipo_cambio=D("3.75"),
                                       items__0__precio_unitario=D("500")),
    "detraccion-faltante-tercera-linea": variant("factura-simple", items=[item("Servicio", "1", "100"),
                                                                          item("Otro servicio", "1", "50"), *BIG]),
    "detraccion-faltante-usd-cambio-cero": variant("factura-usd", items__0__codigo_detraccion="022", tipo_cambio=D("0"),
                                                   items__0__precio_unitario=D("500")),
    "operacion-1001-sin-detraccion": variant("factura-simple", tipo_operacion="1001"),
    # operation types
    "operacion-en-nota": variant("nc-anulacion-factura", tipo_operacion="0200"),
    "operacion-desconocida": variant("factura-simple", tipo_operacion="0112"),
    "operacion-exportacion-con-gravadas": variant("factura-simple", tipo_operacion="0201"),
    "operacion-exportacion-con-gravada-segunda": variant("factura-exportacion", tipo_operacion="0201",
                                                         items=[item("Asesoría", "1", "100", "40"),
                                                                item("Servicio local", "1", "100")]),
    "operacion-interna-en-exportacion": variant("factura-exportacion", tipo_operacion="0101"),
    "operacion-interna-con-detraccion": variant("factura-detraccion", tipo_operacion="0101"),
    # references
    "guia-invalida": variant("factura-dos-guias", guias=[{"serie": "X001", "numero": 1}]),
    "guia-repetida": variant("factura-dos-guias", guias=[{"serie": "T001", "numero": 1},
                                                         {"serie": "T001", "numero": 1}]),
    "orden-con-espacio": variant("nc-orden-compra", orden_compra="OC 1"),
    "orden-larga": variant("nc-orden-compra", orden_compra="O" * 21),
    "orden-vacia": variant("nc-orden-compra", orden_compra=""),
    # notes
    "nota-sin-referencia": variant("nc-anulacion-factura", documento_referencia=None),
    "nota-referencia-a-nota": variant("nc-anulacion-factura", documento_referencia={"tipo": "07", "serie": "F001",
                                                                                    "numero": 1}),
    "nd-referencia-a-nota": variant("nd-intereses", documento_referencia={"tipo": "08", "serie": "F001", "numero": 1}),
    "nota-referencia-serie-mala": variant("nc-anulacion-factura", documento_referencia={"tipo": "01", "serie": "B001",
                                                                                        "numero": 1}),
    "nd-referencia-numero-cero": variant("nd-intereses", documento_referencia={"tipo": "01", "serie": "F001",
                                                                               "numero": 0}),
    "nota-motivo-ivap": variant("nc-anulacion-factura", codigo_motivo="12"),
    "nota-motivo-desconocido": variant("nc-anulacion-factura", codigo_motivo="99"),
    "nd-motivo-desconocido": variant("nd-intereses", codigo_motivo="99"),
    "nota-sin-motivo": variant("nc-anulacion-factura", codigo_motivo=""),
    "nota-descripcion-dos-lineas": variant("nc-anulacion-factura", descripcion_motivo="Anulación\npor error"),
    "nota-descripcion-retorno": variant("nc-anulacion-factura", descripcion_motivo="Anulación\rpor error"),
    "nota-motivo-desconocido-descripcion-dos-lineas": variant("nc-anulacion-factura", codigo_motivo="99",
                                                              descripcion_motivo="Otro\nmotivo"),
    "nota-descripcion-larga": variant("nc-anulacion-factura", descripcion_motivo="x" * 500),
    "nd-motivo-13": variant("nd-intereses", codigo_motivo="13"),
    "nd-11-no-exportacion": variant("nd-ajuste-exportacion", items=[item("Ajuste", "1", "10")],
                                    receptor={"ruc": "20601030013", "razon_social": "X S.A.C."}),
    "detraccion-faltante-usd-pequena-sin-cambio": variant("factura-usd", items=[item("Servicio", "1", "10",
                                                                                     codigo_detraccion="022")]),
    "nota-11-no-exportacion": variant("nc-ajuste-exportacion", items=[item("Ajuste", "1", "10")],
                                      receptor={"ruc": "20601030013", "razon_social": "X S.A.C."}),
    "serie-y-numero": variant("factura-simple", serie="B001", numero=0),
}


# Requests at the edge of a rule that must be accepted (each next to the case it borders on).
ACCEPTED: dict[str, dict] = {
    "detraccion-porcentaje-medio": variant("factura-detraccion", detraccion={**SPOT, "porcentaje": D("0.50")}),
    "detraccion-porcentaje-dos-decimales": variant("factura-detraccion", detraccion={**SPOT, "porcentaje": D("12.25")}),
    "detraccion-usd-cambio-bajo": variant("factura-detraccion-usd", tipo_cambio=D("0.5")),
    "orden-de-un-caracter": variant("nc-orden-compra", orden_compra="7"),
    "orden-de-20-caracteres": variant("nc-orden-compra", orden_compra="O" * 20),
    "operacion-0101-explicita": variant("factura-simple", tipo_operacion="0101"),
    "cuota-de-un-sol": variant("factura-simple", forma_pago={"tipo": "Credito",
                                                             "cuotas": [{**CUOTA, "monto": D("1.00")}]}),
    "nota-referencia-numero-maximo": variant("nc-anulacion-factura", documento_referencia={"tipo": "01", "serie": "F001",
                                                                                           "numero": 99999999}),
    "marcada-justo-700-soles": variant("factura-simple",
                                       items=[item("Servicio", "1", "593.22", codigo_detraccion="022")]),
    "boleta-justo-700-sin-cliente": variant("boleta-sin-documento", items=[item("Refrigeradora", "1", "593.22")]),
    "igv-un-centimo-de-diferencia": variant("factura-simple", items__0__igv=D("18.01")),
    "usd-marcada-justo-700-soles": variant("factura-usd", items=[item("Servicio", "1", "169.49", codigo_detraccion="022")],
                                           tipo_cambio=D("3.5")),  # 200.00 × 3.5 = 700.00: not above
    "usd-marcada-cambio-bajo": variant("factura-usd", items=[item("Servicio", "1", "500", codigo_detraccion="022")],
                                       tipo_cambio=D("0.9")),  # 590.00 × 0.9 = 531.00
}


def _answer(request: dict) -> list[list]:
    try:
        build_document(GenerarXmlRequest.model_validate(fixed_request(request)), company_of, _name_of)
    except YupanaError as exc:
        return [[exc.code.value, exc.message], *([d.field, d.sunat_code, d.message] for d in exc.details)]
    return []


@pytest.fixture(scope="module")
def golden():
    answers = {name: _answer(request) for name, request in CASES.items()} if UPDATE else None
    if answers is not None:
        GOLDEN.write_text(json.dumps(answers, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", list(CASES))
def test_the_answer_is_the_golden_one(golden, name):
    answer = _answer(CASES[name])
    assert answer, f"{name}: the request was accepted"
    assert answer == golden[name]
    assert _answer(CASES[name]) == answer  # the same again: nothing kept from the first time hides a problem


def test_the_golden_file_has_every_case_and_no_other(golden):
    assert list(golden) == list(CASES)


def test_type_errors_and_content_problems_come_in_one_answer():
    # `cantidad` is not a number and the serie is of a boleta: both said at once; the line's IGV (computed from a
    # stand-in quantity) and the boleta threshold (from the stand-in total) are not.
    payload = fixed_request(variant("factura-simple", serie="B001", items__0__cantidad="muchos", items__0__igv=D("99")))
    with pytest.raises(YupanaError) as caught:
        parse_request(payload, company_of, _name_of)
    fields = [d.field for d in caught.value.details]
    assert fields == ["items[0].cantidad", "serie"]
    assert "«B001»" in caught.value.details[1].message


def test_a_type_error_inside_a_replaced_object_hides_what_depends_on_it():
    payload = fixed_request(variant("factura-credito", forma_pago__cuotas__0__monto="mucho"))
    with pytest.raises(YupanaError) as caught:
        parse_request(payload, company_of, _name_of)
    assert [d.field for d in caught.value.details] == ["forma_pago.cuotas[0].monto"]


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_a_request_at_the_edge_of_a_rule_is_accepted(name):
    assert _answer(ACCEPTED[name]) == []
