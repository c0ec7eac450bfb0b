"""Written from the builder's surviving mutants (builder.py and ubl.py, docs/testing.md): which content problems are
kept beside a request's type errors (`_depends_on`), the answer to a request with type errors only, and escaping."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time

import pytest

from app.core.contract import GenerarXmlRequest, parse_model
from app.core.errors import YupanaError
from app.core.invoicing import builder, ubl
from app.core.invoicing.builder import _depends_on, build_document, parse_request
from app.core.platform import clock
from tests.helpers.golden import COMPANY, company_of, fixed_request, rendered
from tests.helpers.voucher_matrix import MATRIX, factura, item, nota

FACTURA = dict(MATRIX)["factura-simple"]


@pytest.mark.parametrize(("field", "replaced", "depends"), [
    ("serie", ["serie"], True),  # the field itself
    ("receptor.ruc", ["receptor"], True),  # inside a replaced object
    ("forma_pago.cuotas[0].monto", ["forma_pago.cuotas"], True),  # inside a replaced list
    ("receptorx", ["receptor"], False),  # a longer name is another field
    ("items[0]", ["items[0].cantidad"], True),  # the line computed from it
    ("items[0].igv", ["items[0].cantidad"], True),  # its IGV
    ("items[0].descripcion", ["items[0].cantidad"], False),  # not computed from it
    ("items[1].igv", ["items[0].cantidad"], False),  # another line
    ("forma_pago.cuotas", ["items[1].precio_unitario"], True),  # the instalments against the total
    ("receptor.numero_documento", ["items[1].precio_unitario"], True),  # the boleta threshold
    ("serie", ["items[1].precio_unitario"], False),
    ("forma_pago.cuotas", ["moneda"], False),
    ("forma_pago.cuotas", ["forma_pago.cuotas[0].monto"], True),  # their sum against the total
    ("forma_pago.tipo", ["forma_pago.cuotas[0].monto"], False),
    ("forma_pago.cuotas[1].monto", ["forma_pago.cuotas[0].monto"], False),  # another instalment
    ("moneda", ["serie", "moneda"], True),  # any of several
    ("moneda", [], False),
])
def test_what_a_content_problem_depends_on(field, replaced, depends):
    assert _depends_on(field, replaced) is depends


def test_a_request_with_type_errors_only_gets_pydantics_answer_unchanged():
    payload = fixed_request({**FACTURA, "items": [{**FACTURA["items"][0], "cantidad": "muchos"}]})
    with pytest.raises(YupanaError) as direct:
        parse_model(GenerarXmlRequest, payload)
    with pytest.raises(YupanaError) as caught:
        parse_request(payload, company_of, lambda ruc: None)
    assert caught.value == direct.value


def test_the_content_checks_beside_type_errors_ask_the_registry_for_the_name():
    # the customer's name comes from the registry; the only problem is the quantity
    payload = fixed_request({**FACTURA, "receptor": {"ruc": "20601030013"},
                             "items": [{**FACTURA["items"][0], "cantidad": "muchos"}]})
    with pytest.raises(YupanaError) as caught:
        parse_request(payload, company_of, {"20601030013": "DISTRIBUIDORA ANDINA S.A.C."}.get)
    assert [d.field for d in caught.value.details] == ["items[0].cantidad"]


def test_text_and_attribute_values_are_escaped_as_c14n_writes_them():
    # element text escapes & < > and CR; an attribute value & < " TAB LF CR (the signed text is its own C14N)
    assert ubl.esc("a&b<c>d\re\"f'") == "a&amp;b&lt;c&gt;d&#xD;e\"f'"
    assert ubl.esc_attr("a&b<c>d\"e\tf\ng\rh'") == "a&amp;b&lt;c>d&quot;e&#x9;f&#xA;g&#xD;h'"
    assert ubl.esc("sin nada") == "sin nada" and ubl.esc_attr("PEN") == "PEN"


def test_a_request_that_is_not_an_object_is_refused_by_name():
    with pytest.raises(YupanaError) as caught:
        parse_request([FACTURA], company_of, lambda ruc: None)
    assert caught.value.message == "La solicitud debe ser un objeto JSON ({...})."


def test_without_date_and_time_the_voucher_is_issued_now_in_lima_to_the_second():
    request = {key: value for key, value in FACTURA.items() if key not in ("fecha_emision", "hora_emision")}
    with clock.frozen(datetime(2026, 3, 3, 4, 5, 6, 789000, tzinfo=UTC)):  # 23:05:06.789 of the 2nd in Lima
        doc = build_document(GenerarXmlRequest.model_validate(request), company_of, lambda ruc: None)
    assert (doc.fecha, doc.hora) == (date(2026, 3, 2), time(23, 5, 6))
    assert doc.hora.tzinfo is None


def test_a_kept_line_is_written_anew_for_another_currency_or_voucher_type():
    # the builder keeps a line (with its XML) between vouchers; the same item in a factura in soles, one in dollars
    # and a credit note must each read as if built alone
    same = item("Servicio de consultoría", "1", "100")
    requests = [factura("F020", 1, [same]), factura("F020", 2, [same], moneda="USD"),
                nota("07", "F020", 3, ("01", "F020", 1), "01", [same])]
    together = [rendered(request) for request in requests]
    apart = []
    for request in requests:
        builder._line_cache.clear()
        apart.append(rendered(request))
    assert together == apart


def test_an_issuer_without_a_trade_name_has_no_party_name():
    plain = replace(COMPANY, nombre_comercial=None)
    doc = build_document(GenerarXmlRequest.model_validate(fixed_request(FACTURA)), lambda ruc: plain, lambda ruc: None)
    supplier = ubl.render(doc).split("<cac:AccountingSupplierParty>")[1].split("</cac:AccountingSupplierParty>")[0]
    assert "<cac:PartyName>" not in supplier and "20100066603" in supplier
    assert "<cac:PartyName><cbc:Name>YUPANA</cbc:Name></cac:PartyName>" in rendered(FACTURA)  # with one
