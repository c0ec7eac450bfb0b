"""A printed voucher that adds up (issue 32, item 3), read back with poppler's pdftotext (-layout keeps each printed
row on one line): boletas with prices including IGV whose lines, less the printed discounts and anticipos, plus the
printed ICBPER and charges, are the printed total; a free line at 0.00 with its reference value beside it; a
factura's unit value with as many decimals as round(quantity × unit value, 2) = the line needs; units by their
Spanish names; the customer's address; «ANULADO» on a voided voucher; «SIN VALOR TRIBUTARIO» outside production."""

from __future__ import annotations

import re
import shutil
import subprocess
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from app.core.invoicing import printing
from tests.core.invoicing.test_pdf import issue
from tests.helpers.voids_support import issued
from tests.helpers.voucher_matrix import MATRIX, boleta, factura, item

needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils is installed by .ci/run")
CENT = Decimal("0.01")
NUMBER = r"-?[\d,]+\.\d+"
# A line's row: the ticket writes «quantity unit x unit price    amount»; the A4 table «quantity unit [code]
# description … [unit value] unit price amount». The unit price is the last but one number on a boleta's row; on a
# factura's A4 row the unit value comes before the unit price with IGV.
TICKET_ROW = re.compile(rf"^\s*(?P<qty>{NUMBER}|[\d,]+)\s+(?P<unit>.+?)\s+x\s+(?P<price>{NUMBER})\s+(?P<amount>{NUMBER})\s*$")
A4_BOLETA_ROW = re.compile(rf"^\s*(?P<qty>{NUMBER}|[\d,]+)\s+(?P<rest>\S.*?)\s+(?P<price>{NUMBER})\s+"
                           rf"(?P<amount>{NUMBER})\s*$")
A4_FACTURA_ROW = re.compile(rf"^\s*(?P<qty>{NUMBER}|[\d,]+)\s+(?P<rest>\S.*?)\s+(?P<price>{NUMBER})\s+"
                            rf"(?P<with_igv>{NUMBER})\s+(?P<amount>{NUMBER})\s*$")
TOTAL_ROW = re.compile(r"^\s*(?P<label>Subtotal|Descuentos|Anticipos|ICBPER|Cargos|Redondeo|IMPORTE TOTAL):?\s+"
                       r"(?P<minus>- )?(?:S/|US\$) (?P<amount>[\d,]+\.\d{2})\s*$")
BOLETA_ROWS = {"a4": A4_BOLETA_ROW, "ticket": TICKET_ROW}
FACTURA_ROWS = {"a4": A4_FACTURA_ROW, "ticket": TICKET_ROW}


def number(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def layout_text(content: bytes, tmp_path: Path) -> list[str]:
    path = tmp_path / "printed.pdf"
    path.write_bytes(content)
    out = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, check=True).stdout
    return out.decode("utf-8").splitlines()


def printed_totals(lines: list[str]) -> dict[str, Decimal]:
    found: dict[str, Decimal] = {}
    for line in lines:
        match = TOTAL_ROW.match(line)
        if match:
            amount = number(match["amount"])
            found[match["label"]] = -amount if match["minus"] else amount
    return found


def row_amounts(lines: list[str], pattern: re.Pattern) -> list[re.Match]:
    return [match for line in lines if (match := pattern.match(line))]


def with_igv_in_prices(request: dict) -> bool:
    return request["tipo"] == "03" or (request.get("documento_referencia") or {}).get("tipo") == "03"


@needs_poppler
@pytest.mark.slow  # every boleta of the matrix, two formats
def test_every_matrix_boleta_adds_up_on_paper(engine, certificado_id, tmp_path):
    checked = 0
    for name, request in MATRIX:
        if not with_igv_in_prices(request):
            continue
        voucher_id = issue(engine, certificado_id, request)
        record = engine.invoicing.voucher(voucher_id)
        for formato in printing.FORMATS:
            lines = layout_text(engine.invoicing.pdf(voucher_id, formato).content, tmp_path)
            rows = row_amounts(lines, BOLETA_ROWS[formato])
            assert len(rows) == len(request["items"]), (name, formato, lines)
            amounts = [number(row["amount"]) for row in rows]
            for row in rows:  # prices with IGV, and each line is its quantity times its printed price
                assert (number(row["qty"]) * number(row["price"])).quantize(CENT, ROUND_HALF_UP) == \
                    number(row["amount"]), (name, formato, row.group(0))
            totals = printed_totals(lines)
            assert totals["Subtotal"] == sum(amounts), (name, formato, totals, amounts)
            payable = (sum(amounts) + totals.get("Descuentos", 0) + totals.get("Anticipos", 0)
                       + totals.get("ICBPER", 0) + totals.get("Cargos", 0) + totals.get("Redondeo", 0))
            assert payable == totals["IMPORTE TOTAL"] == Decimal(record.total), (name, formato, totals, amounts)
            checked += 1
    assert checked >= 2 * 20


@needs_poppler
def test_a_soda_prints_at_the_price_the_customer_paid(engine, certificado_id, tmp_path):
    """The issue's example: a 2.50 soda printed as 2.12 (its value without IGV) on a boleta."""
    voucher_id = issue(engine, certificado_id, boleta("B201", 1, [item("Gaseosa 500 ml", "1", "2.1186440678"),
                                                                  item("Galletas", "3", "0.85")]))
    lines = layout_text(engine.invoicing.pdf(voucher_id, "a4").content, tmp_path)
    rows = row_amounts(lines, A4_BOLETA_ROW)
    assert [(row["price"], row["amount"]) for row in rows] == [("2.50", "2.50"), ("1.003", "3.01")]
    assert printed_totals(lines) == {"Subtotal": Decimal("5.51"), "IMPORTE TOTAL": Decimal("5.51")}


@needs_poppler
def test_a_free_line_prints_zero_with_its_reference_value(engine, certificado_id, tmp_path):
    cases = {"boleta-restaurante-bolsas-postre-gratis": ("Postre de cortesía", "S/ 5.08"),
             "factura-muestra-gratuita": ("Muestra de shampoo", "S/ 45.00")}
    for name, (description, reference) in cases.items():
        voucher_id = issue(engine, certificado_id, dict(MATRIX)[name])
        for formato in printing.FORMATS:
            lines = layout_text(engine.invoicing.pdf(voucher_id, formato).content, tmp_path)
            at = next(index for index, line in enumerate(lines) if description in line)
            row = next(line for line in lines[at:at + 2] if re.search(r"\bx\b|\d\s*$", line))
            assert row.split()[-1] == "0.00", (name, formato, row)
            assert any(f"Gratuito: valor referencial {reference}" in line for line in lines[at:at + 3]), \
                (name, formato, lines[at:at + 3])


@needs_poppler
@pytest.mark.slow  # every factura of the matrix, two formats
def test_every_factura_line_is_its_quantity_times_its_printed_unit_value(engine, certificado_id, tmp_path):
    extra = [("factura-redondeo", factura("F201", 1, [item("Cuaderno", "2", "8.305"), item("Lapicero", "10", "25.339"),
                                                      item("Tornillo", "3", "0.3333333333")]))]
    checked = 0
    for name, request in [*MATRIX, *extra]:
        if request["tipo"] != "01":
            continue
        voucher_id = issue(engine, certificado_id, request)
        for formato in printing.FORMATS:
            lines = layout_text(engine.invoicing.pdf(voucher_id, formato).content, tmp_path)
            rows = row_amounts(lines, FACTURA_ROWS[formato])
            assert len(rows) == len(request["items"]), (name, formato, lines)
            for row in rows:
                price = row["price"]
                decimals = len(price.partition(".")[2])
                assert 2 <= decimals <= 10, (name, formato, price)
                assert (number(row["qty"]) * number(price)).quantize(CENT, ROUND_HALF_UP) == number(row["amount"]), \
                    (name, formato, row.group(0))
            checked += 1
        if name == "factura-redondeo":
            assert [(row["price"], row["amount"]) for row in row_amounts(lines, TICKET_ROW)] == [
                ("8.305", "16.61"), ("25.339", "253.39"), ("0.333", "1.00")]  # the fewest decimals that hold
    assert checked >= 2 * 30


@needs_poppler
def test_units_print_by_their_spanish_names_and_other_codes_as_the_code(engine, certificado_id, tmp_path):
    cases = {"factura-inafecta": "kilogramo", "factura-exportacion-servicios": "hora", "factura-simple": "unidad",
             "boleta-numeros-con-ruido": "galón", "factura-exportacion-carga-ruc": "día"}
    for name, unit in cases.items():
        voucher_id = issue(engine, certificado_id, dict(MATRIX)[name])
        for formato in printing.FORMATS:
            text = "\n".join(layout_text(engine.invoicing.pdf(voucher_id, formato).content, tmp_path))
            assert re.search(rf"\b{unit}\b", text), (name, formato, text)
            assert not re.search(r"\b(NIU|KGM|HUR|GLL|DAY|ZZ)\b", text), (name, formato)
    xml = engine.invoicing.voucher(engine.invoicing.find_voucher("F001-1")).xml_firmado
    other = printing.render_pdf(xml.replace('unitCode="NIU"', 'unitCode="XYZ"'), "ticket")
    assert any(re.match(r"^\s*1 XYZ x ", line) for line in layout_text(other, tmp_path))


@needs_poppler
def test_the_customer_s_address_is_printed(engine, certificado_id, tmp_path):
    for name, address in (("factura-direccion-cliente", "AV. JAVIER PRADO ESTE 4200, SURCO"),
                          ("boleta-direccion-cliente", "JR. HUALLAGA 320 - CERCADO DE LIMA")):
        voucher_id = issue(engine, certificado_id, dict(MATRIX)[name])
        for formato in printing.FORMATS:
            text = " ".join(" ".join(layout_text(engine.invoicing.pdf(voucher_id, formato).content,
                                                 tmp_path)).split())
            assert f"Dirección: {address}" in text, (name, formato, text)


@needs_poppler
def test_vouchers_outside_production_say_they_have_no_tax_value(engine, certificado_id, tmp_path):
    marks = {}
    for number_, environment in enumerate(("sandbox", "beta", "produccion"), start=1):
        engine.admin.config_set("environment", environment)
        voucher_id = issue(engine, certificado_id, factura("F202", number_, [item("Pan", "1", "10")]))
        for formato in printing.FORMATS:
            text = " ".join(layout_text(engine.invoicing.pdf(voucher_id, formato).content, tmp_path))
            marks[environment, formato] = [mark for mark in ("SIN VALOR TRIBUTARIO — SANDBOX",
                                                             "SIN VALOR TRIBUTARIO — BETA", "ANULADO") if mark in text]
    assert marks == {("sandbox", "a4"): ["SIN VALOR TRIBUTARIO — SANDBOX"],
                     ("sandbox", "ticket"): ["SIN VALOR TRIBUTARIO — SANDBOX"],
                     ("beta", "a4"): ["SIN VALOR TRIBUTARIO — BETA"], ("beta", "ticket"): ["SIN VALOR TRIBUTARIO — BETA"],
                     ("produccion", "a4"): [], ("produccion", "ticket"): []}


@needs_poppler
@pytest.mark.sunat_files
def test_a_voided_voucher_prints_anulado_across_it(voiding, tmp_path):
    voucher_id = issued(voiding, factura("F203", 1, [item("Servicio de consultoría", "1", "100")]))
    before = layout_text(voiding.invoicing.pdf(voucher_id, "a4").content, tmp_path)
    assert not any("ANULADO" in line for line in before)
    outcome = voiding.invoicing.void(voucher_id, "ERROR EN EL RUC DEL CLIENTE")
    assert voiding.invoicing.voucher(voucher_id).status == "anulado", outcome
    for formato in printing.FORMATS:
        lines = layout_text(voiding.invoicing.pdf(voucher_id, formato).content, tmp_path)
        assert any(line.strip() == "ANULADO" for line in lines), (formato, lines)  # its own band, across the page
        pages = voiding.invoicing.printed_pages(voucher_id, formato).pages
        assert any(mark.text == "ANULADO" and mark.size >= 18 for mark in pages[0].marks
                   if hasattr(mark, "text")), formato
