"""The generator writes vouchers already in canonical form (inclusive C14N 1.0) after the XML declaration.

That is what lets operation 2 hash a stored voucher as it is, without parsing it (docs/signing.md,
«Velocidad»). The oracle is lxml's own C14N of the parsed text.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from app.core.errors import YupanaError
from app.core.invoicing import ubl
from tests.helpers.voucher_matrix import MATRIX

PARSER = etree.XMLParser(resolve_entities=False, no_network=True)


def assert_canonical(xml: str) -> None:
    assert xml.startswith(ubl.XML_DECLARATION)
    body = xml[len(ubl.XML_DECLARATION):].encode("utf-8")
    tree = etree.ElementTree(etree.fromstring(xml.encode("utf-8"), PARSER))
    assert body == etree.tostring(tree, method="c14n", with_comments=False)


@pytest.mark.parametrize("name,request_", MATRIX, ids=[name for name, _ in MATRIX])
def test_matrix_vouchers_are_canonical(engine, company, name, request_):
    assert_canonical(engine.invoicing.generate_xml(request_).xml)


# Printable text plus what C14N escapes or keeps: markup, quotes, tabs, new lines, carriage returns.
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from('<&>"\'\t\n\r ñ😀'),
                min_size=1, max_size=40).filter(lambda s: s.strip())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(descripcion=texts, nombre=texts, codigo=texts, motivo=texts)
def test_any_text_is_written_canonically(engine, company, descripcion, nombre, codigo, motivo):
    factura = {"tipo": "01", "serie": "F001", "numero": 1, "emisor": {"ruc": "20100066603"},
               "receptor": {"ruc": "20601030013", "razon_social": nombre},
               "items": [{"descripcion": descripcion, "cantidad": Decimal("1.5"), "precio_unitario": Decimal("2"),
                          "codigo": codigo}]}
    nota = {"tipo": "07", "serie": "F001", "numero": 1, "emisor": {"ruc": "20100066603"},
            "receptor": {"ruc": "20601030013", "razon_social": nombre},
            "documento_referencia": {"tipo": "01", "serie": "F001", "numero": 1},
            "codigo_motivo": "07", "descripcion_motivo": motivo.replace("\n", " ").replace("\r", " ").strip() or "x",
            "items": [{"descripcion": descripcion, "cantidad": Decimal("1"), "precio_unitario": Decimal("2")}]}
    for request in (factura, nota):
        try:
            xml = ubl.render(_document(engine, request))
        except YupanaError:
            continue  # refused texts (too long…) are not written at all
        assert_canonical(xml)


def _document(engine, request: dict) -> ubl.Document:
    from app.core.contract import GenerarXmlRequest, parse_model

    return engine._generation.build(parse_model(GenerarXmlRequest, request))


@pytest.mark.parametrize("field,value", [("receptor.razon_social", "ACME\x01 S.A."),
                                         ("items[0].codigo", "P\x0b1")])
def test_control_characters_are_refused_before_writing(engine, company, field, value):
    request = {"tipo": "01", "serie": "F001", "numero": 1, "emisor": {"ruc": "20100066603"},
               "receptor": {"ruc": "20601030013", "razon_social": "CLIENTE S.A.C."},
               "items": [{"descripcion": "x", "cantidad": Decimal("1"), "precio_unitario": Decimal("2"),
                          "codigo": "P1"}]}
    if field == "receptor.razon_social":
        request["receptor"]["razon_social"] = value
    else:
        request["items"][0]["codigo"] = value
    status, envelope = engine.call("xml", request)
    assert status == 400
    assert field in {d["field"] for d in envelope["error"]["details"]}, envelope
