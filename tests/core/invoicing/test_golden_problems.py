"""What a user reads when operation 1 refuses a request: for each kind of mistake the builder knows, the whole answer
(field, SUNAT's code, the Spanish message naming what was typed), kept in `golden/problems.json` and compared exactly.

The other error tests check the field and the code; these check every word, so a message that loses the value the
user typed, or names the wrong field, fails here. `YUPANA_UPDATE_GOLDEN=1 pytest <this file>` writes the file again
after a deliberate change of wording; review its diff like code.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path

import pytest

from app.core.contract import GenerarXmlRequest
from app.core.errors import ErrorCode, YupanaError
from app.core.invoicing.builder import build_document, parse_request
from tests.helpers.golden import UPDATE, company_of, fixed_request
from tests.helpers.voucher_matrix import DNI_CUSTOMER, MATRIX, item

GOLDEN = Path(__file__).parent / "golden" / "problems.json"
BASE = dict(MATRIX)
KNOWN = {"20601030013": "DISTRIBUIDORA ANDINA S.A.C.", "20100070970": "SUPERMERCADOS PERUANOS S.A."}
BROKEN_REGISTRY = "20131312955"  # the registry fails for this one (a provider down): the name is asked for


def _name_of(ruc: str) -> str | None:
    if ruc == BROKEN_REGISTRY:
        raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE, "proveedor caído")
    return KNOWN.get(ruc)


def _v(base: str, **changes) -> dict:
    """The matrix voucher `base` with dotted paths (`items.0.igv`, with `__` for `.`) set; None removes a key."""
    request = copy.deepcopy(BASE[base])
    for path, value in changes.items():
        keys = path.split("__")
        target = request
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target.setdefault(key, {})
        if value is None:
            target.pop(keys[-1], None)
        else:
            target[keys[-1]] = value
    return request


D = Decimal
CUOTA = {"monto": D("10.00"), "fecha_vencimiento": "2026-04-01"}
SPOT = {"codigo": "022", "cuenta": "00-741-123456"}
BIG = [item("Servicio de consultoría empresarial", "1", "1271.19", codigo_detraccion="022")]

CASES: dict[str, dict] = {
    # the issuer and the type
    "emisor-ruc-invalido": _v("factura-simple", emisor={"ruc": "20100066604"}),
    "emisor-no-registrado": _v("factura-simple", emisor={"ruc": "20601030013"}),
    "tipo-desconocido": _v("factura-simple", tipo="09"),
    "moneda-desconocida": _v("factura-simple", moneda="eur"),
    "sin-items": _v("factura-simple", items=[]),
    # the customer
    "factura-sin-ruc": _v("factura-simple", receptor={"razon_social": "ALGUIEN"}),
    "tipo-documento-desconocido": _v("boleta-dni", receptor__tipo_documento="9"),
    "factura-a-dni": _v("factura-simple", receptor=DNI_CUSTOMER),
    "exportacion-a-ruc": _v("factura-exportacion", receptor={"ruc": "20601030013", "razon_social": "X S.A.C."}),
    "ruc-cliente-invalido": _v("factura-simple", receptor={"ruc": "20601030014", "razon_social": "X"}),
    "ruc-cliente-en-numero-documento": _v("factura-simple", receptor={"tipo_documento": "6",
                                                                      "numero_documento": "2060103001"}),
    "ruc-sin-nombre-desconocido": _v("factura-simple", receptor={"ruc": "20100066603"}),
    "ruc-sin-nombre-registro-caido": _v("factura-simple", receptor={"ruc": BROKEN_REGISTRY}),
    "dni-sin-numero": _v("boleta-dni", receptor={"tipo_documento": "1", "razon_social": "ANA"}),
    "dni-sin-nombre": _v("boleta-dni", receptor={"tipo_documento": "1", "numero_documento": "45678912"}),
    "dni-corto": _v("boleta-dni", receptor__numero_documento="4567891"),
    "direccion-con-control": _v("factura-direccion-cliente", receptor__direccion="AV. LOS OLIVOS\x01 123"),
    "razon-social-con-control": _v("factura-simple", receptor__razon_social="DISTRIBUIDORA\x07 ANDINA"),
    "numero-documento-con-control": _v("boleta-dni", receptor__numero_documento="4567\x0b8912"),
    "ruc-con-control": _v("factura-simple", receptor__ruc="2060103\x0c0013"),
    "boleta-grande-sin-cliente": _v("boleta-sin-documento", items=[item("Refrigeradora", "1", "800")]),
    # lines and their prices
    "codigo-con-control": _v("factura-simple", items__0__codigo="P\x01"),
    "precio-con-igv-e-igv-equivocado": _v("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                                    "precio_con_igv": D("118"), "igv": D("20")}]),
    "linea-sin-valor": _v("factura-simple", items=[item("Nada", "1", "0")]),
    "igv-equivocado": _v("factura-simple", items__0__igv=D("20.00")),
    "igv-equivocado-en-bolsas": _v("boleta-restaurante-bolsas", items__1__igv=D("5.00"), items__1__cantidad=D("2.5")),
    "nc-linea-sin-valor": _v("nc-anulacion-factura", items=[item("Nada", "1", "0")]),
    "dos-lineas-malas": _v("factura-simple", items=[{"descripcion": "Sin precio", "cantidad": D("1")},
                                                    item("Unidad rara", "1", "10", unidad="QQQ")]),
    "sin-precio": _v("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1")}]),
    "dos-precios": _v("factura-simple", items__0__precio_con_igv=D("118")),
    "precio-con-igv-negativo": _v("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                            "precio_con_igv": D("-1")}]),
    "precio-con-igv-imposible": _v("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("123456789"),
                                                             "precio_con_igv": D("7.77")}]),
    "precio-con-igv-cantidad-cero": _v("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("0"),
                                                                 "precio_con_igv": D("118")}]),
    "precio-con-igv-cero": _v("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                        "precio_con_igv": D("0")}]),
    "precio-con-igv-en-el-limite": _v("factura-simple", items=[{"descripcion": "Servicio", "cantidad": D("1"),
                                                                "precio_con_igv": D("1E12")}]),
    "precio-con-igv-cantidad-en-el-limite": _v("factura-simple", items=[{"descripcion": "Servicio",
                                                                         "cantidad": D("1E12"),
                                                                         "precio_con_igv": D("1")}]),
    "cantidad-negativa": _v("factura-simple", items__0__cantidad=D("-1")),
    "exportacion-mezclada": _v("factura-simple", items=[item("Servicio", "1", "100"),
                                                        item("Café", "1", "100", "40")]),
    # free transfers
    "gratuita-sin-valor": _v("factura-muestra-gratuita", items=[item("Muestra", "1", "0", "13")]),
    "gratuita-con-descuento": _v("factura-muestra-gratuita", items=[item("Muestra", "1", "10", "13",
                                                                         descuento=D("1.00"))]),
    "gratuita-con-descuento-e-igv": _v("factura-muestra-gratuita", items=[item("Muestra", "1", "10", "13",
                                                                              descuento=D("1.00"), igv=D("5.00"))]),
    # discounts
    "descuento-tres-decimales": _v("factura-simple", items__0__descuento=D("1.005")),
    "descuento-negativo": _v("factura-simple", items__0__descuento=D("-1")),
    "descuento-mayor": _v("factura-simple", items__0__descuento=D("100.01")),
    "descuento-igual": _v("factura-simple", items__0__descuento=D("100.00")),
    "descuento-global-en-nota": _v("nc-anulacion-factura", descuento_global=D("1.00")),
    "descuento-global-negativo": _v("factura-simple", descuento_global=D("-1")),
    "descuento-global-mayor": _v("factura-simple", descuento_global=D("100.00")),
    "descuento-global-sin-gravadas": _v("factura-exonerada", descuento_global=D("1.00")),
    # bags
    "bolsas-antes-de-2019": _v("factura-bolsas-2021", fecha_emision="2019-07-31"),
    "bolsas-exoneradas": _v("boleta-restaurante-bolsas", items__1__tipo_afectacion_igv="20"),
    "bolsas-inafectas": _v("boleta-restaurante-bolsas", items__1__tipo_afectacion_igv="30"),
    "bolsas-exportacion": _v("factura-exportacion", items__0__icbper=True),
    "bolsas-fraccion": _v("boleta-restaurante-bolsas", items__1__cantidad=D("2.5")),
    "bolsas-demasiadas": _v("boleta-restaurante-bolsas", items__1__cantidad=D("100000")),
    "bolsas-en-dolares": _v("boleta-restaurante-bolsas", moneda="USD"),
    # payment
    "contado-con-cuotas": _v("factura-simple", forma_pago={"tipo": "Contado", "cuotas": [CUOTA]}),
    "credito-sin-cuotas": _v("factura-simple", forma_pago={"tipo": "Credito"}),
    "cuota-cero": _v("factura-simple", forma_pago={"tipo": "Credito", "cuotas": [{**CUOTA, "monto": D("0")}]}),
    "cuota-tres-decimales": _v("factura-simple", forma_pago={"tipo": "Credito",
                                                             "cuotas": [{**CUOTA, "monto": D("1.005")}]}),
    "cuota-el-mismo-dia": _v("factura-simple", forma_pago={"tipo": "Credito",
                                                           "cuotas": [{**CUOTA, "fecha_vencimiento": "2026-03-02"}]}),
    "cuotas-mayores-al-total": _v("factura-simple", forma_pago={"tipo": "Credito",
                                                                "cuotas": [{**CUOTA, "monto": D("118.01")}]}),
    "nota-13-sin-cuotas": _v("nc-cuotas", forma_pago=None),
    "nota-13-contado": _v("nc-cuotas", forma_pago={"tipo": "Contado"}),
    "nota-13-contado-con-cuotas": _v("nc-cuotas", forma_pago={"tipo": "Contado", "cuotas": [CUOTA]}),
    "nota-13-con-monto": _v("nc-cuotas", items__0__precio_unitario=D("10")),
    "nota-13-a-boleta": _v("nc-cuotas", documento_referencia={"tipo": "03", "serie": "B001", "numero": 1}),
    # detracción
    "detraccion-en-boleta": _v("boleta-dni", detraccion=SPOT),
    "detraccion-codigo-desconocido": _v("factura-detraccion", detraccion={**SPOT, "codigo": "999"}),
    "detraccion-porcentaje-100": _v("factura-detraccion", detraccion={**SPOT, "porcentaje": D("100")}),
    "detraccion-porcentaje-cero": _v("factura-detraccion", detraccion={**SPOT, "porcentaje": D("0")}),
    "detraccion-porcentaje-decimales": _v("factura-detraccion", detraccion={**SPOT, "porcentaje": D("12.125")}),
    "detraccion-cuenta-corta": _v("factura-detraccion", detraccion={**SPOT, "cuenta": "1234567"}),
    "detraccion-medio-desconocido": _v("factura-detraccion", detraccion={**SPOT, "medio_pago": "099"}),
    "detraccion-usd-sin-cambio": _v("factura-detraccion-usd", tipo_cambio=None),
    "detraccion-usd-cambio-cero": _v("factura-detraccion-usd", tipo_cambio=D("0")),
    "detraccion-usd-cambio-cuatro-decimales": _v("factura-detraccion-usd", tipo_cambio=D("3.7451")),
    "detraccion-faltante": _v("factura-detraccion", detraccion=None),
    "detraccion-faltante-codigo-desconocido": _v("factura-detraccion", detraccion=None,
                                                 items__0__codigo_detraccion="999"),
    "detraccion-faltante-usd-sin-cambio": _v("factura-usd", items__0__codigo_detraccion="022",
                                             items__0__precio_unitario=D("500")),
    "detraccion-faltante-usd": _v("factura-usd", items__0__codigo_detraccion="022", tipo_cambio=D("3.75"),
                                  items__0__precio_unitario=D("500")),
    "detraccion-faltante-tercera-linea": _v("factura-simple", items=[item("Servicio", "1", "100"),
                                                                     item("Otro servicio", "1", "50"), *BIG]),
    "detraccion-faltante-usd-cambio-cero": _v("factura-usd", items__0__codigo_detraccion="022", tipo_cambio=D("0"),
                                              items__0__precio_unitario=D("500")),
    "operacion-1001-sin-detraccion": _v("factura-simple", tipo_operacion="1001"),
    # operation types
    "operacion-en-nota": _v("nc-anulacion-factura", tipo_operacion="0200"),
    "operacion-desconocida": _v("factura-simple", tipo_operacion="0112"),
    "operacion-exportacion-con-gravadas": _v("factura-simple", tipo_operacion="0201"),
    "operacion-exportacion-con-gravada-segunda": _v("factura-exportacion", tipo_operacion="0201",
                                                    items=[item("Asesoría", "1", "100", "40"),
                                                           item("Servicio local", "1", "100")]),
    "operacion-interna-en-exportacion": _v("factura-exportacion", tipo_operacion="0101"),
    "operacion-interna-con-detraccion": _v("factura-detraccion", tipo_operacion="0101"),
    # references
    "guia-invalida": _v("factura-dos-guias", guias=[{"serie": "X001", "numero": 1}]),
    "guia-repetida": _v("factura-dos-guias", guias=[{"serie": "T001", "numero": 1}, {"serie": "T001", "numero": 1}]),
    "orden-con-espacio": _v("nc-orden-compra", orden_compra="OC 1"),
    "orden-larga": _v("nc-orden-compra", orden_compra="O" * 21),
    "orden-vacia": _v("nc-orden-compra", orden_compra=""),
    # notes
    "nota-sin-referencia": _v("nc-anulacion-factura", documento_referencia=None),
    "nota-referencia-a-nota": _v("nc-anulacion-factura", documento_referencia={"tipo": "07", "serie": "F001",
                                                                               "numero": 1}),
    "nd-referencia-a-nota": _v("nd-intereses", documento_referencia={"tipo": "08", "serie": "F001", "numero": 1}),
    "nota-referencia-serie-mala": _v("nc-anulacion-factura", documento_referencia={"tipo": "01", "serie": "B001",
                                                                                   "numero": 1}),
    "nd-referencia-numero-cero": _v("nd-intereses", documento_referencia={"tipo": "01", "serie": "F001",
                                                                          "numero": 0}),
    "nota-motivo-ivap": _v("nc-anulacion-factura", codigo_motivo="12"),
    "nota-motivo-desconocido": _v("nc-anulacion-factura", codigo_motivo="99"),
    "nd-motivo-desconocido": _v("nd-intereses", codigo_motivo="99"),
    "nota-sin-motivo": _v("nc-anulacion-factura", codigo_motivo=""),
    "nota-descripcion-dos-lineas": _v("nc-anulacion-factura", descripcion_motivo="Anulación\npor error"),
    "nota-descripcion-retorno": _v("nc-anulacion-factura", descripcion_motivo="Anulación\rpor error"),
    "nota-motivo-desconocido-descripcion-dos-lineas": _v("nc-anulacion-factura", codigo_motivo="99",
                                                         descripcion_motivo="Otro\nmotivo"),
    "nota-descripcion-larga": _v("nc-anulacion-factura", descripcion_motivo="x" * 500),
    "nd-motivo-13": _v("nd-intereses", codigo_motivo="13"),
    "nd-11-no-exportacion": _v("nd-ajuste-exportacion", items=[item("Ajuste", "1", "10")],
                               receptor={"ruc": "20601030013", "razon_social": "X S.A.C."}),
    "detraccion-faltante-usd-pequena-sin-cambio": _v("factura-usd", items=[item("Servicio", "1", "10",
                                                                                codigo_detraccion="022")]),
    "nota-11-no-exportacion": _v("nc-ajuste-exportacion", items=[item("Ajuste", "1", "10")],
                                 receptor={"ruc": "20601030013", "razon_social": "X S.A.C."}),
    "serie-y-numero": _v("factura-simple", serie="B001", numero=0),
}


# Requests at the edge of a rule that must be accepted (each next to the case it borders on).
ACCEPTED: dict[str, dict] = {
    "detraccion-porcentaje-medio": _v("factura-detraccion", detraccion={**SPOT, "porcentaje": D("0.50")}),
    "detraccion-porcentaje-dos-decimales": _v("factura-detraccion", detraccion={**SPOT, "porcentaje": D("12.25")}),
    "detraccion-usd-cambio-bajo": _v("factura-detraccion-usd", tipo_cambio=D("0.5")),
    "orden-de-un-caracter": _v("nc-orden-compra", orden_compra="7"),
    "orden-de-20-caracteres": _v("nc-orden-compra", orden_compra="O" * 20),
    "operacion-0101-explicita": _v("factura-simple", tipo_operacion="0101"),
    "cuota-de-un-sol": _v("factura-simple", forma_pago={"tipo": "Credito", "cuotas": [{**CUOTA, "monto": D("1.00")}]}),
    "nota-referencia-numero-maximo": _v("nc-anulacion-factura", documento_referencia={"tipo": "01", "serie": "F001",
                                                                                      "numero": 99999999}),
    "marcada-justo-700-soles": _v("factura-simple", items=[item("Servicio", "1", "593.22", codigo_detraccion="022")]),
    "boleta-justo-700-sin-cliente": _v("boleta-sin-documento", items=[item("Refrigeradora", "1", "593.22")]),
    "igv-un-centimo-de-diferencia": _v("factura-simple", items__0__igv=D("18.01")),
    "usd-marcada-justo-700-soles": _v("factura-usd", items=[item("Servicio", "1", "169.49", codigo_detraccion="022")],
                                      tipo_cambio=D("3.5")),  # 200.00 × 3.5 = 700.00: not above
    "usd-marcada-cambio-bajo": _v("factura-usd", items=[item("Servicio", "1", "500", codigo_detraccion="022")],
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
    payload = fixed_request(_v("factura-simple", serie="B001", items__0__cantidad="muchos", items__0__igv=D("99")))
    with pytest.raises(YupanaError) as caught:
        parse_request(payload, company_of, _name_of)
    fields = [d.field for d in caught.value.details]
    assert fields == ["items[0].cantidad", "serie"]
    assert "«B001»" in caught.value.details[1].message


def test_a_type_error_inside_a_replaced_object_hides_what_depends_on_it():
    payload = fixed_request(_v("factura-credito", forma_pago__cuotas__0__monto="mucho"))
    with pytest.raises(YupanaError) as caught:
        parse_request(payload, company_of, _name_of)
    assert [d.field for d in caught.value.details] == ["forma_pago.cuotas[0].monto"]


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_a_request_at_the_edge_of_a_rule_is_accepted(name):
    assert _answer(ACCEPTED[name]) == []
