"""The printed guía de remisión (issue 36, point 4): an A4 PDF read back with pdftotext (what the guía says: motive,
transport, vehicles, drivers, points, lines, weight) whose QR, decoded by zbarimg, is the link SUNAT returned in the
guía's CDR (cbc:DocumentDescription) — here the GRE sandbox's, whose CDRs carry that link as SUNAT's do. A guía SUNAT
has not accepted yet prints without a QR and says «pendiente de SUNAT»."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lxml import etree

from app.core.api import statuses
from app.sandbox.sunat_gre import QR_LINK
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.guia_matrix import CARRIER_RUC, DRIVERS, FACTURA, VEHICLES, public, remitente, transportista
from tests.helpers.oracles import decode_qr, needs_poppler, pdf_text

pytestmark = needs_poppler
CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"


def _cdr_link(engine, voucher_id: int) -> str:
    cdr = engine.invoicing.voucher_cdr(voucher_id)
    return etree.fromstring(cdr.xml_text.encode()).findtext(f".//{{{CBC}}}DocumentDescription")


def _written(engine, voucher_id: int, tmp_path):
    pdf = engine.invoicing.pdf(voucher_id, "a4")
    path = tmp_path / pdf.name
    path.write_bytes(pdf.content)
    return path


def test_an_accepted_guia_prints_its_data_and_the_cdr_link_as_its_qr(guias, tmp_path):
    emission = guias.invoicing.issue(remitente(1, vehiculos=VEHICLES[:2], conductores=DRIVERS[:2],
                                               documentos_relacionados=[FACTURA]))
    assert emission.sent is not None and emission.sent.estado == statuses.ACEPTADO, emission.refusal
    path = _written(guias, emission.voucher_id, tmp_path)
    text = pdf_text(path)
    for expected in ("GUÍA DE REMISIÓN REMITENTE ELECTRÓNICA", "T001-1", "FERRETERIA EL CONSTRUCTOR S.A.C.",
                     "01 - Venta", "02 - Transporte privado", "1250.5 KGM", "ABC123 (principal)",
                     "T4X987 (secundario)", "JUAN CARLOS QUISPE MAMANI", "licencia Q45678912",
                     "ROSA HUAMAN TORRES", "AV. ABANCAY 123, LIMA (ubigeo 150101)",
                     "JR. LOS OLIVOS 456, SAN JUAN DE LURIGANCHO (ubigeo 150132)", "Factura F001-245", "CEM-42",
                     "Cemento Portland tipo I, bolsa de 42.5 kg", "25 BG", "40 NIU",
                     "Representación impresa de la GUÍA DE REMISIÓN REMITENTE ELECTRÓNICA", "SIN VALOR TRIBUTARIO"):
        assert expected in text, expected
    assert "pendiente de SUNAT" not in text
    link = _cdr_link(guias, emission.voucher_id)
    assert link.startswith(QR_LINK)
    assert decode_qr(path, tmp_path) == [link]
    assert link in text.replace(" ", "")  # also printed (pdftotext may break it across lines)


def test_a_public_transport_guia_prints_its_carrier_and_a_transportista_its_sender(guias, tmp_path):
    carried = guias.invoicing.issue(remitente(2, **public()))
    text = pdf_text(_written(guias, carried.voucher_id, tmp_path))
    assert "01 - Transporte público" in text and f"RUC {CARRIER_RUC}" in text and "registro MTC 151234567" in text
    own = guias.invoicing.issue(transportista(1))
    text = pdf_text(_written(guias, own.voucher_id, tmp_path))
    assert "GUÍA DE REMISIÓN TRANSPORTISTA ELECTRÓNICA" in text and "V001-1" in text
    assert "AGRICOLA VALLE VERDE S.A." in text and "3.2 TNE" in text and "Cajas de palta Hass" in text


def test_a_guia_sunat_has_not_accepted_prints_without_a_qr_and_says_pending(guias, gre, home, tmp_path):
    gre.stop()  # SUNAT unreachable: the guía waits signed in the outbox
    emission = guias.invoicing.issue(remitente(3))
    assert guias.invoicing.voucher(emission.voucher_id).status != statuses.ACEPTADO
    path = _written(guias, emission.voucher_id, tmp_path)
    text = pdf_text(path)
    assert "pendiente de SUNAT" in text and "T001-3" in text
    assert decode_qr(path, tmp_path) == []
    guias.close()
    done = run_cli("pdf", "T001-3", "--ticket", "--salida", str(tmp_path), home=home)  # a guía is always A4
    assert done.returncode == 0, done.stderr.decode()
    printed = Path(done.stdout.decode().splitlines()[-1])
    assert printed.name == f"{ISSUER_RUC}-09-T001-3.pdf" and "pendiente de SUNAT" in pdf_text(printed)
    assert "595.2" in subprocess.run(["pdfinfo", str(printed)], capture_output=True).stdout.decode()  # A4 width
