"""Acceptance 2: bad requests get a 400 (or 409) naming the field, with the code SUNAT's own rules
give for the equivalent XML (built with Yupana's checks off and judged by the oracle's sheets)."""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from app.core.contract import GenerarXmlRequest
from app.core.errors import YupanaError
from app.core.invoicing import ubl, voucher_keys
from tests.helpers.oracles import load_sunat_check
from tests.helpers.voucher_matrix import DNI_CUSTOMER, MATRIX, item, variant

BASE = dict(MATRIX)


# (case, request, field named in the answer, Yupana's code, whether SUNAT's sheets give the same code)
CASES = [
    ("serie-de-boleta-en-factura", variant("factura-simple", serie="B001"), "serie", "1001", True),
    ("numero-de-9-digitos", variant("factura-simple", numero=123456789), "numero", "1001", True),
    ("igv-equivocado", variant("factura-simple", items__0__igv=Decimal("20.00")), "items[0].igv",
     "3103", True),
    ("factura-a-dni", variant("factura-simple", receptor=DNI_CUSTOMER), "receptor.tipo_documento",
     "2800", True),
    ("ruc-cliente-corto", variant("factura-simple", receptor__ruc="2060103001"), "receptor.ruc",
     "2017", True),
    ("credito-sin-cuotas", variant("factura-simple", forma_pago={"tipo": "Credito"}),
     "forma_pago.cuotas", "3249", True),
    ("cuotas-mayores-al-total", variant("factura-credito", forma_pago__cuotas__0__monto=Decimal("100.00")),
     "forma_pago.cuotas", "3265", True),
    ("cuota-vencida", variant("factura-credito", forma_pago__cuotas__0__fecha_vencimiento="2020-01-01"),
     "forma_pago.cuotas[0].fecha_vencimiento", "3267", True),
    ("moneda-desconocida", variant("factura-simple", moneda="XYZ"), "moneda", "3088", True),
    ("unidad-desconocida", variant("factura-simple", items__0__unidad="QQQ"), "items[0].unidad",
     "2936", True),
    ("afectacion-desconocida", variant("factura-simple", items__0__tipo_afectacion_igv="99"),
     "items[0].tipo_afectacion_igv", "2040", False),  # SUNAT's sheet fails on its catalogue look-up
    ("descripcion-larga", variant("factura-simple", items__0__descripcion="x" * 501),
     "items[0].descripcion", "2027", True),
    ("exportacion-a-ruc", variant("factura-exportacion", receptor={"ruc": "20601030013",
                                                                            "razon_social": "X S.A.C."}),
     "receptor.tipo_documento", "2800", True),
    ("dni-corto-en-boleta", variant("boleta-dni", receptor__numero_documento="4567891"),
     "receptor.numero_documento", "4207", True),
    ("nc-sin-motivo-valido", variant("nc-anulacion-factura", codigo_motivo="99"), "codigo_motivo",
     "2172", True),
    ("nd-sin-motivo-valido", variant("nd-intereses", codigo_motivo="09"), "codigo_motivo", "2172", True),
    ("nc-sin-documento", variant("nc-anulacion-factura", documento_referencia=None),
     "documento_referencia", "2128", True),
    ("nc-sustento-largo", variant("nc-anulacion-factura", descripcion_motivo="y" * 501),
     "descripcion_motivo", "2135", True),
    ("nc-serie-de-otra-letra", variant("nc-anulacion-factura", serie="B001"), "serie", "1001", False),
    ("boleta-grande-sin-documento", variant("boleta-sin-documento", items=[item("TV", "1", "800")]),
     "receptor.numero_documento", "2396", False),
    ("cantidad-cero", variant("factura-simple", items__0__cantidad=Decimal("0")), "items[0].cantidad",
     "2780", False),
    ("emisor-desconocido", variant("factura-simple", emisor__ruc="20601030013"), "emisor.ruc", None,
     False),
    ("ruc-cliente-digito-malo", variant("factura-simple", receptor__ruc="20601030014"), "receptor.ruc",
     None, False),
]


@pytest.fixture(scope="module")
def sheets():
    return load_sunat_check()


def _sunat_verdict(sheets, engine, request: dict, tmp_path) -> dict:
    doc = engine._generation.build(GenerarXmlRequest.model_validate(request), checks=False)
    path = tmp_path / "bad.xml"
    path.write_text(ubl.render(doc), encoding="utf-8")
    tree = sheets.etree.parse(str(path))
    local, tipo, *_ = sheets.describe(tree)
    name = voucher_keys.file_name(doc.emisor_ruc, doc.tipo, doc.serie, doc.numero)
    return sheets.check_rules(tree, local, tipo, name)


def test_enough_cases():
    assert len(CASES) >= 15
    assert sum(1 for case in CASES if case[4]) >= 15


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_request_answer(case, engine, company, sheets, tmp_path):
    _, request, field, code, sunat_agrees = case
    status, envelope = engine.call("xml", request)
    assert status == 400 and not envelope["success"]
    details = envelope["error"]["details"]
    matching = [d for d in details if d["field"] == field]
    assert matching, details
    assert f"«{field.split('[')[0]}" in matching[0]["message"] or field in matching[0]["message"]
    assert matching[0].get("sunat_code") == code
    assert engine.invoicing.vouchers() == []  # nothing stored
    if sunat_agrees:
        verdict = _sunat_verdict(sheets, engine, request, tmp_path)
        assert code in ([verdict["rejection"]] + verdict["observations"]), verdict


def test_same_number_other_content_is_409(engine, company):
    request = BASE["factura-simple"]
    first = engine.invoicing.generate_xml(request)
    assert engine.invoicing.generate_xml(copy.deepcopy(request)).xml == first.xml  # idempotent
    status, envelope = engine.call("xml", variant("factura-simple",
                                                          items__0__precio_unitario=Decimal("101")))
    assert status == 409 and envelope["error"]["code"] == "CONFLICT"
    assert envelope["error"]["details"][0]["field"] == "numero"
    assert "(2)" in envelope["error"]["message"]  # suggests the next number
    with pytest.raises(YupanaError):
        engine.invoicing.generate_xml(variant("factura-simple", receptor__razon_social="OTRO"))


# ------------------------------------------------------------------ every problem in one answer

def _five_mistakes(company) -> dict:
    return {"tipo": "01", "serie": "F001", "numero": "siete",  # type error
            "emisor": {"ruc": company.ruc},
            "receptor": {"ruc": "123", "razon_social": "CLIENTE S.A.C."},  # content: a bad RUC
            "moneda": "EUR",  # content: not PEN or USD
            "items": [{"descripcion": "Arroz", "cantidad": "mucho", "precio_unitario": "10"},  # type error
                      {"descripcion": "Azúcar", "cantidad": "1", "precio_unitario": "-2"}]}  # content


def test_type_errors_do_not_hide_the_other_problems(engine, company):
    status, envelope = engine.call("xml", _five_mistakes(company))
    assert status == 400
    fields = [d["field"] for d in envelope["error"]["details"]]
    assert sorted(fields) == sorted(["numero", "items[0].cantidad", "receptor.ruc", "moneda",
                                     "items[1].precio_unitario"])
    assert envelope["error"]["message"].endswith("(y 4 problemas más).")
    assert engine.invoicing.vouchers() == []  # the stand-ins never reach the store


def test_stand_ins_raise_no_problem_of_their_own(engine, company):
    request = {"tipo": "01", "serie": "F001", "numero": 1, "emisor": {"ruc": company.ruc},
               "receptor": {"ruc": "20601030013", "razon_social": "BODEGA S.A.C."},
               "items": [{"descripcion": "Arroz", "cantidad": "x", "precio_unitario": "10", "igv": "1.80"}],
               "forma_pago": {"tipo": "Credito", "cuotas": [{"monto": "11.80", "fecha_vencimiento": "2099-01-01"}]}}
    status, envelope = engine.call("xml", request)
    assert status == 400
    assert [d["field"] for d in envelope["error"]["details"]] == ["items[0].cantidad"]


def test_a_broken_structure_still_answers_with_its_type_errors(engine, company):
    request = dict(_five_mistakes(company), items="una lista")
    status, envelope = engine.call("xml", request)
    assert status == 400
    assert {d["field"] for d in envelope["error"]["details"]} == {"numero", "items"}
