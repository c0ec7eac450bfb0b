"""The printed voucher (issue 15): PDFs of the whole vouchers matrix read back with poppler's pdftotext, their
QR codes decoded with zbarimg and compared with the voucher; formats, pages, options, refusals."""

from __future__ import annotations

import json
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest
from lxml import etree

from app.core.errors import YupanaError
from app.core.invoicing import printing
from app.core.invoicing.printing import layout
from app.core.invoicing.printing.fonts import printable
from app.core.platform import formatting as fmt
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.oracles import decode_qr, needs_poppler, pdf_text
from tests.helpers.voucher_matrix import MATRIX, factura, item

NS = {"cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
      "cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
      "ds": "http://www.w3.org/2000/09/xmldsig#"}
LEGENDS = {"01": "Representación impresa de la FACTURA ELECTRÓNICA",
           "03": "Representación impresa de la BOLETA DE VENTA ELECTRÓNICA",
           "07": "Representación impresa de la NOTA DE CRÉDITO ELECTRÓNICA",
           "08": "Representación impresa de la NOTA DE DÉBITO ELECTRÓNICA"}


def issue(engine, certificado_id: str, request: dict) -> int:
    generated = engine.invoicing.generate_xml(request)
    engine.invoicing.sign({"xml": generated.xml, "certificado_id": certificado_id})
    return engine.invoicing.find_voucher(f"{request['serie']}-{request['numero']}", tipo=request["tipo"])


def expected_qr(record) -> str:
    """The QR's fields as SUNAT defines them, from the stored voucher and its signed XML (read here with XPath,
    independently of the renderer)."""
    root = etree.fromstring(record.xml_firmado.encode("utf-8"))
    igv = sum((Decimal(node.text) for node in root.xpath(
        "cac:TaxTotal/cac:TaxSubtotal[cac:TaxCategory/cac:TaxScheme/cbc:ID='1000']/cbc:TaxAmount", namespaces=NS)),
        Decimal("0.00"))
    digest = root.xpath("string(//ds:SignedInfo/ds:Reference/ds:DigestValue)", namespaces=NS)
    assert digest == record.digest_value
    fields = [record.emisor_ruc, record.tipo, record.serie, str(record.numero), f"{igv:.2f}",
              str(record.total), record.fecha_emision, record.receptor_tipo_documento,
              record.receptor_numero_documento, digest]
    return "|".join(fields) + "|"


def test_the_matrix_is_large_enough_to_print():
    assert len(MATRIX) >= 25


@needs_poppler
@pytest.mark.parametrize(("name", "request_"), MATRIX, ids=[name for name, _ in MATRIX])
def test_every_matrix_voucher_prints_with_its_data_and_a_qr_that_reads_back(engine, certificado_id, tmp_path, name,
                                                                            request_):
    """One voucher of the matrix a test (the parallel run spreads them over the cores), in both formats."""
    request = request_
    voucher_id = issue(engine, certificado_id, request)
    record = engine.invoicing.voucher(voucher_id)
    checked = 0
    for formato in printing.FORMATS:
        path = tmp_path / f"{name}-{formato}.pdf"
        path.write_bytes(engine.invoicing.pdf(voucher_id, formato).content)
        text = pdf_text(path)
        serie_numero = f"{record.serie}-{record.numero}"
        assert serie_numero in text, formato
        assert fmt.money(Decimal(record.total), record.moneda) in text, (formato, text)
        assert f"Código hash: {record.digest_value}" in text, formato
        assert LEGENDS[record.tipo] in text, formato
        words = etree.fromstring(record.xml_firmado.encode()).xpath("string(cbc:Note[@languageLocaleID='1000'])",
                                                                   namespaces=NS)
        assert f"SON: {words}" in text and "/100 " in words, formato
        if record.tipo in ("07", "08"):
            reference = request["documento_referencia"]
            assert f"{reference['serie']}-{reference['numero']}" in text
        if (request.get("forma_pago") or {}).get("tipo") == "Credito":
            assert "Cuota 001" in text and "Pago al crédito" in text
        assert decode_qr(path, tmp_path) == [expected_qr(record)], formato
        checked += 1
    assert checked == len(printing.FORMATS) == 2


def test_amounts_and_dates_in_peruvian_format():
    assert fmt.money(Decimal("1234.5")) == "S/ 1,234.50"
    assert fmt.money(Decimal("1234567.891"), "USD") == "US$ 1,234,567.89"
    assert fmt.money("0.005", "PEN") == "S/ 0.01"  # half-up, as SUNAT rounds
    assert fmt.money(None) == "" and fmt.money("abc") == "S/ abc"
    assert fmt.day("2026-11-23") == "23/11/2026" and fmt.day("2026-11-23T10:00:00Z") == "23/11/2026"
    assert fmt.quantity(Decimal("1250000.000")) == "1,250,000" and fmt.quantity("37.1230") == "37.123"


def test_text_the_font_lacks_is_printable_and_spanish_is_kept():
    """More in test_pdf_characters.py (issue 31: every character printed, none a silent «?»)."""
    assert printable("Ñandú «ñ» ¿Qué? ¡Sí! €") == "Ñandú «ñ» ¿Qué? ¡Sí! €"
    assert "?" not in printable("Caja 😀 de café")  # the emoji, or □ where Symbola is not installed
    assert printable("n\u0303") == "ñ"  # decomposed input is composed first
    assert printable("ﬁ") == "fi"  # a character no font has becomes its compatibility letters


def test_a_long_voucher_breaks_pages_and_a_ticket_grows(engine, certificado_id):
    lines = [item(f"Producto número {n} con una descripción larga que ocupa dos renglones en la tabla del A4",
                  "1", "2.50") for n in range(1, 81)]
    voucher_id = issue(engine, certificado_id, factura("F050", 1, lines))
    printed = engine.invoicing.printed_pages(voucher_id, "a4")
    pages, formato, name = printed.pages, printed.formato, printed.file_name
    assert formato == "a4" and len(pages) >= 3 and name == f"{ISSUER_RUC}-01-F050-1.pdf"
    headers = [sum(1 for m in page.marks if isinstance(m, layout.Text) and m.text == "Descripción") for page in pages]
    assert headers[:-1] == [1] * (len(pages) - 1)  # the table's header repeats on every page with lines
    footers = [m.text for page in pages for m in page.marks if isinstance(m, layout.Text) and m.text.startswith("Pág")]
    assert footers == [f"Página {n} de {len(pages)}" for n in range(1, len(pages) + 1)]
    assert all(m.y <= page.height for page in pages for m in page.marks if isinstance(m, layout.Text))
    printed = engine.invoicing.printed_pages(voucher_id, "ticket")
    ticket, name = printed.pages, printed.file_name
    assert name == f"{ISSUER_RUC}-01-F050-1-ticket.pdf"
    short_id = issue(engine, certificado_id, factura("F050", 2, lines[:2]))
    short = engine.invoicing.printed_pages(short_id, "ticket").pages
    assert len(ticket) == len(short) == 1 and ticket[0].width == short[0].width == 80
    assert ticket[0].height > short[0].height + 200  # the roll is as long as the content
    assert all(4 <= m.x and m.x + layout.metrics(m.bold).width(m.text, m.size) <= 76.01
               for m in ticket[0].marks if isinstance(m, layout.Text))  # inside the 72 mm printable


def test_the_same_voucher_gives_the_same_file(engine, certificado_id):
    voucher_id = issue(engine, certificado_id, MATRIX[0][1])
    pdf = engine.invoicing.pdf(voucher_id)
    first, name = pdf.content, pdf.name
    assert first.startswith(b"%PDF-") and name == f"{ISSUER_RUC}-01-F001-1.pdf"
    assert engine.invoicing.pdf(voucher_id).content == first


def test_company_print_options_choose_the_format_and_the_logo(engine, certificado_id, tmp_path):
    import io

    from PIL import Image

    voucher_id = issue(engine, certificado_id, MATRIX[0][1])
    assert engine.admin.print_options(ISSUER_RUC).formato == "a4"
    buffer = io.BytesIO()
    Image.new("RGB", (300, 100), (200, 20, 20)).save(buffer, "PNG")
    options = engine.admin.set_print_options(ISSUER_RUC, "ticket", buffer.getvalue())
    assert options.formato == "ticket" and options.logo_px == (300, 100)
    printed = engine.invoicing.printed_pages(voucher_id)
    pages, formato = printed.pages, printed.formato
    assert formato == "ticket" and any(isinstance(m, layout.Picture) for m in pages[0].marks)
    assert engine.invoicing.pdf(voucher_id).name.endswith("-ticket.pdf")
    assert engine.invoicing.pdf(voucher_id, "a4").name.endswith("F001-1.pdf")
    with pytest.raises(YupanaError, match="PNG o JPEG"):
        engine.admin.set_print_options(ISSUER_RUC, logo=b"GIF89a not a logo")
    with pytest.raises(YupanaError, match="«carta» no existe"):
        engine.admin.set_print_options(ISSUER_RUC, "carta")
    assert engine.admin.set_print_options(ISSUER_RUC, clear_logo=True).logo is None
    # Saving the company's profile keeps its print options.
    engine.admin.set_company(engine.admin.company(ISSUER_RUC))
    assert engine.admin.print_options(ISSUER_RUC).formato == "ticket"


def test_unsigned_unknown_and_hostile_input_are_refused_clearly(engine, certificado_id, company):
    generated = engine.invoicing.generate_xml(factura("F060", 1, [item("Pan", "1", "1")]))
    unsigned = engine.invoicing.find_voucher("F060-1")
    with pytest.raises(YupanaError, match="todavía no está firmado"):
        engine.invoicing.pdf(unsigned)
    with pytest.raises(YupanaError, match="No hay un comprobante F060-2"):
        engine.invoicing.find_voucher("F060-2")
    with pytest.raises(YupanaError, match="no es una serie-número"):
        engine.invoicing.find_voucher("F060/2")
    with pytest.raises(YupanaError, match="«carta» no existe"):
        printing.render_pdf(generated.xml, "carta")
    bomb = ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
            '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><x>&b;</x></Invoice>')
    with pytest.raises(YupanaError):
        printing.render_pdf(bomb)
    with pytest.raises(YupanaError, match="tamaño máximo"):
        printing.render_pdf(b"<a>" + b" " * (6 * 1024 * 1024) + b"</a>")


def test_a_factura_and_its_credit_note_share_a_number_and_are_told_apart(engine, certificado_id):
    issue(engine, certificado_id, MATRIX[0][1])  # factura F001-1
    note = next(request for name, request in MATRIX if name == "nc-anulacion-factura")  # nota de crédito F001-1
    issue(engine, certificado_id, note)
    with pytest.raises(YupanaError, match="indique cuál"):
        engine.invoicing.find_voucher("F001-1")
    assert engine.invoicing.voucher(engine.invoicing.find_voucher("F001-1", tipo="07")).tipo == "07"


@needs_poppler
def test_the_pdf_command_prints_the_file_as_its_last_line(engine, certificado_id, home, tmp_path):
    issue(engine, certificado_id, MATRIX[0][1])
    engine.close()
    done = run_cli("pdf", "F001-1", "--salida", str(tmp_path), home=home)
    assert done.returncode == 0, done.stderr.decode()
    path = Path(done.stdout.decode().splitlines()[-1])
    assert path == tmp_path / f"{ISSUER_RUC}-01-F001-1.pdf" and "F001-1" in pdf_text(path)
    ticket = run_cli("pdf", "f001-00000001", "--ticket", "--salida", str(tmp_path / "t.pdf"), home=home)
    assert ticket.returncode == 0 and Path(ticket.stdout.decode().splitlines()[-1]) == tmp_path / "t.pdf"
    width = subprocess.run(["pdfinfo", str(tmp_path / "t.pdf")], capture_output=True).stdout.decode()
    assert "226.77 x" in width  # 80 mm in points
    missing = run_cli("pdf", "F001-9", home=home)
    assert missing.returncode == 1 and "No hay un comprobante F001-9" in missing.stderr.decode()
    nowhere = run_cli("pdf", "F001-1", "--salida", str(tmp_path / "no-existe" / "x.pdf"), home=home)
    assert nowhere.returncode == 1 and "la carpeta no existe" in nowhere.stderr.decode()
    assert not list((tmp_path).glob("**/.x.pdf.tmp"))


def test_the_lote_command_writes_each_pdf(engine, certificado_id, home, tmp_path):
    engine.close()
    source = tmp_path / "lote.jsonl"
    source.write_text("\n".join(json.dumps(factura("F070", n, [item("Pan", "2", "1.5")]), default=str)
                                for n in (1, 2)), encoding="utf-8")
    done = run_cli("lote", str(source), "--salida", str(tmp_path / "out"), "--pdf", "--quiet", home=home)
    assert done.returncode == 0, done.stderr.decode()
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()[:2]]
    for line in lines:
        path = Path(line["pdf"])
        assert path.parent == tmp_path / "out" and path.read_bytes().startswith(b"%PDF-")
    assert [Path(line["pdf"]).name for line in lines] == [f"{ISSUER_RUC}-01-F070-{n}.pdf" for n in (1, 2)]


def test_the_company_print_command_sets_the_default_format_and_logo(engine, company, home, tmp_path):
    import io

    from PIL import Image

    engine.close()
    logo = tmp_path / "logo.png"
    buffer = io.BytesIO()
    Image.new("RGB", (120, 60), (0, 90, 160)).save(buffer, "PNG")
    logo.write_bytes(buffer.getvalue())
    done = run_cli("company", "impresion", ISSUER_RUC, "--formato", "ticket", "--logo", str(logo), home=home)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == {"ruc": ISSUER_RUC, "formato_impresion": "ticket", "logo": "120x60 px"}
    missing = run_cli("company", "impresion", ISSUER_RUC, "--logo", str(tmp_path / "no.png"), home=home)
    assert missing.returncode == 1 and "No se pudo leer el logo" in missing.stderr.decode()
    cleared = run_cli("company", "impresion", ISSUER_RUC, "--sin-logo", home=home)
    assert json.loads(cleared.stdout)["logo"] is None and json.loads(cleared.stdout)["formato_impresion"] == "ticket"


def test_threads_rendering_at_once_give_the_same_files(engine, certificado_id):
    """The parsed font and its cached subsets are shared by every document (printing/embedding.py): workers
    rendering at once must each get their own, complete file."""
    from concurrent.futures import ThreadPoolExecutor

    xmls = []
    for name in ("factura-simple", "factura-texto-especial", "boleta-ce-usd", "nc-devolucion-item"):
        request = next(request for matrix_name, request in MATRIX if matrix_name == name)
        xmls.append(engine.invoicing.voucher(issue(engine, certificado_id, request)).xml_firmado)
    rare = factura("F090", 1, [item("Resistencia de 10 kΩ № 5, ½ W", "1", "1")])  # glyphs outside the common set
    xmls.append(engine.invoicing.voucher(issue(engine, certificado_id, rare)).xml_firmado)
    jobs = [(xml, formato) for xml in xmls for formato in printing.FORMATS] * 5
    alone = {job: printing.render_pdf(*job) for job in set(jobs)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda job: printing.render_pdf(*job), jobs))
    assert together == [alone[job] for job in jobs]
