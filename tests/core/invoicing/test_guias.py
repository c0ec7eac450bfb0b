"""Guías de remisión (issue 36, point 1): the GRE remitente (09) and transportista (31) are a document type module
each (app/core/invoicing/documents/guia.py), registered and resolved by type, numbered in their own series, built,
signed like the vouchers and judged by ../shared/tools/sunat_check.py --strict (SUNAT's UBL 2.1 DespatchAdvice
schema, its GreRemitente / GreTransportista sheets with no observation, the signature by xmlsec1); and a request
SUNAT would reject is refused before anything is stored or sent, with SUNAT's code — the same code SUNAT's own sheet
gives the guía built without the checks."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
from lxml import etree

from app.core.api import YupanaError
from app.core.invoicing import xmldsig
from app.core.invoicing.documents import registry
from app.core.invoicing.documents.guia import GUIA_REMITENTE_TYPE, GUIA_TRANSPORTISTA_TYPE, GuiaRemisionRequest
from app.core.invoicing.namespaces import CAC, CBC
from app.core.invoicing.ubl_identity import document_type, identify
from app.core.invoicing.voucher_keys import key_of_text
from tests.helpers.base import ISSUER_RUC
from tests.helpers.guia_matrix import CARRIER_RUC, MATRIX, public, remitente, transportista
from tests.helpers.oracles import run_sunat_check

NS = {"cac": CAC, "cbc": CBC}


def _judge(paths: list) -> dict[str, dict]:
    """sunat_check.py --strict --json over many files in one process: its verdict by file name."""
    done = run_sunat_check(paths[0], *map(str, paths[1:]), "--strict", "--json", timeout=600)
    verdicts = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(verdicts) == len(paths), done.stdout + done.stderr
    return {verdict["file"]: verdict for verdict in verdicts}


@pytest.fixture
def signer(engine, company):
    return engine.invoicing.create_test_certificate(company.ruc).certificado_id


# ---------------------------------------------------------------- the matrix

def test_the_matrix_covers_the_acceptance():
    requests = [request for _, request in MATRIX]
    assert len(MATRIX) >= 20
    motives = {request.get("motivo_traslado") for request in requests}
    assert {"01", "02", "04", "05", "06", "08", "09"} <= motives  # venta, compra, entre establecimientos,
    # consignación, devolución, importación, exportación
    assert {request.get("modalidad_transporte") for request in requests} >= {"01", "02"}
    assert any(len(request.get("vehiculos", [])) >= 2 for request in requests)
    assert any(len(request.get("conductores", [])) >= 2 for request in requests)
    assert any(request.get("vehiculo_m1_l") for request in requests)
    assert any(request.get("documentos_relacionados") for request in requests)
    assert any(not request.get("documentos_relacionados") for request in requests)
    assert Counter(request["tipo"] for request in requests)["31"] >= 2


def test_every_guia_of_the_matrix_is_built_signed_and_passes_sunat_check_strict(engine, signer, tmp_path):
    paths, digests = [], {}
    for name, request in MATRIX:
        generated = engine.invoicing.generate_xml(request)
        body = generated.xml.split("\n", 1)[1]  # after the XML declaration
        assert "\n" not in body and "> <" not in body  # no indentation: SUNAT's 4165 reads the root's text
        signed = engine.invoicing.sign({"xml": generated.xml, "certificado_id": signer})
        path = tmp_path / generated.nombre_archivo
        path.write_text(signed.xml_firmado, encoding="utf-8")
        paths.append(path)
        digests[path.name] = (name, signed.digest_value)
        assert xmldsig.verify_xml(signed.xml_firmado).digest_value == signed.digest_value
    verdicts = _judge(paths)
    failed = {digests[file][0]: (v["xsd"]["ok"], v["sunat"]["rejection"], v["sunat"]["observations"],
                                 v["signature"]["ok"]) for file, v in verdicts.items() if not v["ok"]}
    assert failed == {}
    assert all(v["sunat"]["observations"] == [] and v["signature"]["ok"] for v in verdicts.values())
    assert {v["tipo"] for v in verdicts.values()} == {"09", "31"}


def test_a_guia_says_what_its_request_says(engine, signer):
    request = remitente(30, **public(), documentos_relacionados=[{"tipo": "01", "numero": "F001-245"}],
                        vehiculo_m1_l=False)
    root = etree.fromstring(engine.invoicing.generate_xml(request).xml.encode())
    shipment = root.find("cac:Shipment", NS)
    assert root.findtext("cbc:DespatchAdviceTypeCode", namespaces=NS) == "09"
    assert shipment.findtext("cbc:HandlingCode", namespaces=NS) == "01"
    assert shipment.findtext("cac:ShipmentStage/cbc:TransportModeCode", namespaces=NS) == "01"
    assert shipment.findtext("cac:ShipmentStage/cac:CarrierParty/cac:PartyIdentification/cbc:ID",
                             namespaces=NS) == CARRIER_RUC
    assert shipment.find("cbc:GrossWeightMeasure", NS).get("unitCode") == "KGM"
    assert shipment.findtext("cbc:GrossWeightMeasure", namespaces=NS) == "1250.5"
    assert shipment.findtext("cac:Delivery/cac:DeliveryAddress/cbc:ID", namespaces=NS) == "150132"
    related = root.find("cac:AdditionalDocumentReference", NS)
    assert (related.findtext("cbc:ID", namespaces=NS), related.findtext("cbc:DocumentTypeCode", namespaces=NS),
            related.findtext("cac:IssuerParty/cac:PartyIdentification/cbc:ID", namespaces=NS)) == (
        "F001-245", "01", ISSUER_RUC)
    assert [line.findtext("cbc:DeliveredQuantity", namespaces=NS) for line in root.iterfind("cac:DespatchLine", NS)] \
        == ["25", "40"]
    # read back by the engine's one reading of a document's identity
    assert document_type(root) == "09"
    assert identify(root).stem == f"{ISSUER_RUC}-09-T001-30"


def test_guias_are_registered_resolved_and_numbered_in_their_own_series(engine, company, signer):
    assert registry.get("09") is GUIA_REMITENTE_TYPE and registry.get("31") is GUIA_TRANSPORTISTA_TYPE
    assert registry.by_file_name(f"{ISSUER_RUC}-31-V001-4.zip") is GUIA_TRANSPORTISTA_TYPE
    assert engine.invoicing.next_number(ISSUER_RUC, "09", "T001") == 1
    assert engine.invoicing.next_number(ISSUER_RUC, "31", "V001") == 1
    first = engine.invoicing.generate_xml(remitente(1))
    engine.invoicing.generate_xml(transportista(1))
    assert engine.invoicing.next_number(ISSUER_RUC, "09", "T001") == 2
    assert engine.invoicing.next_number(ISSUER_RUC, "31", "V001") == 2
    assert engine.invoicing.next_number(ISSUER_RUC, "01", "F001") == 1  # the vouchers' numbering is untouched
    assert first.nombre_archivo == f"{ISSUER_RUC}-09-T001-1.xml"
    assert key_of_text(first.xml) == (ISSUER_RUC, "09", "T001", 1)
    # the same request again is the same guía; another one under a taken number is a 409
    assert engine.invoicing.generate_xml(remitente(1)).xml == first.xml
    with pytest.raises(YupanaError) as taken:
        engine.invoicing.generate_xml(remitente(1, peso_bruto="99"))
    assert taken.value.code.value == "CONFLICT"
    stored = [voucher for voucher in engine.invoicing.vouchers(tipo="09")]
    assert [(voucher.serie, voucher.numero, voucher.receptor_nombre) for voucher in stored] == [
        ("T001", 1, "FERRETERIA EL CONSTRUCTOR S.A.C.")]


# ---------------------------------------------------------------- refused before sending, with SUNAT's code

BAD = [  # (what, request, the field named, SUNAT's code: the one its sheet gives the guía built without checks)
    ("sin motivo de traslado", remitente(1, motivo_traslado=None), "motivo_traslado", "3404"),
    ("motivo 99", remitente(1, motivo_traslado="99"), "motivo_traslado", "3405"),
    ("ubigeo de llegada inexistente", remitente(1, llegada={"ubigeo": "159999", "direccion": "JR. X 1"}),
     "llegada.ubigeo", "3368"),
    ("conductor sin licencia", remitente(1, conductores=[{"numero_documento": "45678912", "nombres": "JUAN",
                                                          "apellidos": "QUISPE", "licencia": ""}]),
     "conductores[0].licencia", "2572"),
    ("privado sin conductor", remitente(1, conductores=[]), "conductores", "3357"),
    ("privado sin vehículo", remitente(1, vehiculos=[]), "vehiculos", "2566"),
    ("peso cero", remitente(1, peso_bruto="0"), "peso_bruto", "2523"),
    ("inicio antes de la emisión", remitente(1, fecha_inicio_traslado="2026-11-24"), "fecha_inicio_traslado", "3343"),
    ("público sin RUC del transportista", remitente(1, **{**public(), "transportista": {
        "razon_social": "TRANSPORTES X", "registro_mtc": "151234567"}}), "transportista.ruc", "2558"),
    ("público con el remitente como transportista", remitente(1, **public(carrier_ruc=ISSUER_RUC)),
     "transportista.ruc", "2560"),
    ("transportista sin remitente", transportista(1, remitente=None), "remitente", "3383"),
    ("placa con guion", remitente(1, vehiculos=[{"placa": "ABC-123"}]), "vehiculos[0].placa", "2567"),
    ("modalidad 03", remitente(1, modalidad_transporte="03"), "modalidad_transporte", "2773"),
    ("venta a uno mismo", remitente(1, destinatario={"numero_documento": ISSUER_RUC,
                                                     "razon_social": "COMERCIAL YUPANA S.A.C."}),
     "destinatario.numero_documento", "2555"),
    ("serie de factura", remitente(1, serie="F001"), "serie", "1001"),
    ("licencia corta", remitente(1, conductores=[{"numero_documento": "45678912", "nombres": "JUAN",
                                                  "apellidos": "QUISPE", "licencia": "Q1234567"}]),
     "conductores[0].licencia", "2573"),
]


@pytest.mark.parametrize(("what", "request_", "field", "code"), BAD, ids=[case[0] for case in BAD])
def test_a_bad_request_is_refused_before_anything_is_stored(engine, company, what, request_, field, code):
    with pytest.raises(YupanaError) as refused:
        engine.invoicing.generate_xml(request_)
    assert refused.value.code.value == "INVALID_INPUT"
    assert (field, code) in [(detail.field, detail.sunat_code) for detail in refused.value.details], \
        refused.value.details
    assert engine.invoicing.vouchers(tipo=request_["tipo"]) == []


def test_sunat_s_sheets_give_the_same_code_to_the_guias_refused(engine, company, tmp_path):
    """Each bad request built without the checks and judged by SUNAT's sheet: the rejection is the code the builder
    gave (the serie's 1001 is judged under the name the guía would be sent as)."""
    paths, expected = [], {}
    for index, (what, request, _field, code) in enumerate(BAD):
        parsed = GuiaRemisionRequest.model_validate(copy.deepcopy(request))
        kind = registry.get(parsed.tipo)
        doc = kind.build(parsed, engine._companies.get, lambda ruc: None, False)
        path = tmp_path / f"{index:02d}-{kind.file_name(doc.emisor_ruc, doc.serie, doc.numero)}"
        path.write_text(kind.render(doc), encoding="utf-8")
        paths.append(path)
        expected[path.name] = (what, code)
    verdicts = _judge(paths)
    given = {expected[file][0]: verdict["sunat"]["rejection"] for file, verdict in verdicts.items()}
    assert given == {what: code for what, code in expected.values()}
