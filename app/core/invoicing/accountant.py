"""The month for the accountant (issue 35, item 3): one zip with every signed XML and CDR of a period under SUNAT's
file names, and the sales register as .csv and .xlsx.

The register's columns follow, in order, the file SIRE takes to replace its proposal of the Registro de Ventas e
Ingresos Electrónico (RVIE, which replaced PLE 14.1 for sales): Anexo 3 of Resolución de Superintendencia
N.° 112-2021/SUNAT, fields 1 to 33 as SUNAT's sheet names them («RUC», «Apellidos y Nombres o Razón social»,
«Periodo», «CAR SUNAT», … «ID Proyecto Operadores Atribución»), then the taxpayer's free-use field (CLU), where
Yupana writes the voucher's status. Read from public copies of SUNAT's layout (the RVIE headers reproduced in
several open-source SIRE readers); docs/backups.md names it too.

- Amounts are read from the signed XML (the source of truth), as numbers; a credit note's are negative.
- A voided voucher (RA or RC accepted) keeps its row with its amounts in zero and «Anulado» in its status, as the
  registers have always listed voided vouchers.
- Text cells a spreadsheet would run as a formula are guarded (app.core.platform.spreadsheet_text).
- Rejected and unsigned vouchers are left out: SUNAT has no valid voucher for them.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path

from app.core.errors import invalid
from app.core.invoicing import statuses
from app.core.invoicing.amounts import ZERO
from app.core.invoicing.cdr import cdr_member
from app.core.invoicing.printing import document
from app.core.invoicing.sunat_catalogues import NOTA_CREDITO
from app.core.platform.paths import private_file
from app.core.platform.spreadsheet_text import guarded, looks_like_formula
from app.core.records import ExportProgress, PeriodExport, Voucher, VoucherCdr, VoucherDetail

TEXT, AMOUNT, RATE = "text", "amount", "rate"

# (header as SUNAT's RVIE sheet writes it, kind), in the import file's order.
RVIE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("RUC", TEXT), ("Apellidos y Nombres o Razón social", TEXT), ("Periodo", TEXT), ("CAR SUNAT", TEXT),
    ("Fecha de emisión", TEXT), ("Fecha Vcto/Pago", TEXT), ("Tipo CP/Doc.", TEXT), ("Serie del CDP", TEXT),
    ("Nro CP o Doc. Nro Inicial (Rango)", TEXT), ("Nro Final (Rango)", TEXT), ("Tipo Doc Identidad", TEXT),
    ("Nro Doc Identidad", TEXT), ("Apellidos Nombres/ Razón Social", TEXT), ("Valor Facturado Exportación", AMOUNT),
    ("BI Gravada", AMOUNT), ("Dscto BI", AMOUNT), ("IGV / IPM", AMOUNT), ("Dscto IGV / IPM", AMOUNT),
    ("Mto Exonerado", AMOUNT), ("Mto Inafecto", AMOUNT), ("ISC", AMOUNT), ("BI Grav IVAP", AMOUNT), ("IVAP", AMOUNT),
    ("ICBPER", AMOUNT), ("Otros Tributos", AMOUNT), ("Total CP", AMOUNT), ("Moneda", TEXT), ("Tipo Cambio", RATE),
    ("Fecha Emisión Doc Modificado", TEXT), ("Tipo CP Modificado", TEXT), ("Serie CP Modificado", TEXT),
    ("Nro CP Modificado", TEXT), ("ID Proyecto Operadores Atribución", TEXT), ("CLU: Estado en Yupana", TEXT),
)
HEADERS = tuple(header for header, _ in RVIE_COLUMNS)
KINDS = tuple(kind for _, kind in RVIE_COLUMNS)
TOTAL_COLUMN = HEADERS.index("Total CP")
IVAP = "1016"  # catalogue 05: the rice tax (Impuesto a la Venta del Arroz Pilado)
PAGE = 500
EXCLUDED = (statuses.GENERADO, statuses.RECHAZADO)
Cell = str | Decimal | None


class PeriodExporter:
    """Writes a period's zip from the engine's own finds (the stored vouchers, their texts and CDRs)."""

    def __init__(self, *, page: Callable[[str, str, int | None], list[Voucher]],
                 detail: Callable[[int], VoucherDetail | None], cdr_of: Callable[[int], VoucherCdr | None],
                 issue_date: Callable[[str, str, str, int], str | None]) -> None:
        self._page = page
        self._detail = detail
        self._cdr_of = cdr_of
        self._issue_date = issue_date  # of a voucher a note modifies: (ruc, tipo, serie, numero) -> ISO date

    def steps(self, desde: dt.date, hasta: dt.date, salida: str | Path) -> Iterator[ExportProgress]:
        if hasta < desde:
            raise invalid("hasta", f"La fecha final {hasta:%d/%m/%Y} es anterior a la inicial {desde:%d/%m/%Y}.")
        target = Path(salida)
        if not target.parent.is_dir():
            raise invalid("salida", f"La carpeta «{target.parent}» no existe.")
        vouchers = self._vouchers(desde, hasta)
        yield ExportProgress(0, len(vouchers))
        partial = target.with_name(target.name + ".partial")
        private_file(partial)  # customers' names and amounts: the owner's only (POSIX)
        rows: list[list[Cell]] = []
        cdrs = 0
        stem = f"RegistroVentas-{desde:%Y%m%d}-{hasta:%Y%m%d}"
        try:
            with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                for done, voucher in enumerate(vouchers, start=1):
                    row, has_cdr = self._add(archive, voucher)
                    rows.append(row)
                    cdrs += has_cdr
                    if done % 10 == 0 or done == len(vouchers):
                        yield ExportProgress(done, len(vouchers))
                archive.writestr(f"{stem}.csv", register_csv(rows))
                archive.writestr(f"{stem}.xlsx", register_xlsx(rows))
            os.replace(partial, target)
        except BaseException:  # a failure, or the caller stopped iterating (cancel): no half-written zip is left
            partial.unlink(missing_ok=True)
            raise
        total = sum((cell for row in rows if isinstance(cell := row[TOTAL_COLUMN], Decimal)), ZERO)
        yield ExportProgress(len(vouchers), len(vouchers), PeriodExport(
            path=str(target), vouchers=len(vouchers), cdrs=cdrs, total=total, register=f"{stem}.csv"))

    def _vouchers(self, desde: dt.date, hasta: dt.date) -> list[Voucher]:
        """The period's signed, not rejected vouchers, in the register's order (date, type, serie, number)."""
        found: list[Voucher] = []
        before: int | None = None
        while True:
            page = self._page(desde.isoformat(), hasta.isoformat(), before)
            found += [v for v in page if v.status not in EXCLUDED]
            if len(page) < PAGE:
                break
            before = page[-1].id
        return sorted(found, key=lambda v: (v.fecha_emision, v.emisor_ruc, v.tipo, v.serie, v.numero))

    def _add(self, archive: zipfile.ZipFile, voucher: Voucher) -> tuple[list[Cell], bool]:
        detail = self._detail(voucher.id)
        if detail is None or not detail.xml_firmado:
            raise invalid("comprobante", f"El comprobante {voucher.serie_numero} no tiene su XML firmado.")
        signed = detail.xml_firmado.encode("utf-8")
        archive.writestr(f"XML/{voucher.nombre_archivo}", signed)
        cdr = self._cdr_of(voucher.id)
        if cdr is not None and cdr.cdr_zip:
            with zipfile.ZipFile(io.BytesIO(cdr.cdr_zip)) as received:
                member = cdr_member(received)
                archive.writestr(f"CDR/{member.filename.rsplit('/', 1)[-1]}", received.read(member))
        return self._row(voucher, document.parse(signed)), bool(cdr is not None and cdr.cdr_zip)

    def _row(self, voucher: Voucher, printed: document.PrintedVoucher) -> list[Cell]:
        voided = voucher.status == statuses.ANULADO
        sign = Decimal(-1) if printed.tipo == NOTA_CREDITO else Decimal(1)

        def amount(value: Decimal) -> Decimal:
            return ZERO if voided else (sign * value).quantize(Decimal("0.01"))

        ref_serie, _, ref_numero = printed.referencia.partition("-")
        ref_date = self._issue_date(printed.emisor_ruc, printed.referencia_tipo, ref_serie, int(ref_numero)) \
            if ref_numero.isdigit() else None
        return [
            printed.emisor_ruc, printed.emisor_nombre, f"{printed.fecha:%Y%m}", "", f"{printed.fecha:%d/%m/%Y}",
            _due_date(printed), printed.tipo, printed.serie, printed.numero, "", printed.receptor_tipo,
            printed.receptor_numero, printed.receptor_nombre,
            amount(printed.taxable.get(document.EXPORTACION, ZERO)), amount(printed.taxable.get(document.GRAVADAS, ZERO)),
            ZERO, amount(printed.taxes.get(document.GRAVADAS, ZERO)), ZERO,
            amount(printed.taxable.get(document.EXONERADAS, ZERO)), amount(printed.taxable.get(document.INAFECTAS, ZERO)),
            amount(printed.taxes.get(document.ISC, ZERO)), amount(printed.taxable.get(IVAP, ZERO)),
            amount(printed.taxes.get(IVAP, ZERO)), amount(printed.taxes.get(document.ICBPER, ZERO)),
            amount(printed.taxes.get(document.OTROS, ZERO)), amount(printed.total), printed.moneda,
            Decimal("1.000") if printed.moneda == "PEN" else None,
            _sunat_date(ref_date), printed.referencia_tipo, ref_serie if ref_numero else "", ref_numero, "",
            statuses.label(voucher.status),
        ]


def _due_date(printed: document.PrintedVoucher) -> str:
    """The last instalment's date of a sale on credit (Fecha Vcto/Pago), empty for a cash sale."""
    return f"{printed.cuotas[-1].vencimiento:%d/%m/%Y}" if printed.cuotas else ""


def _sunat_date(iso: str | None) -> str:
    return dt.date.fromisoformat(iso[:10]).strftime("%d/%m/%Y") if iso else ""


def _csv_cell(value: Cell, kind: str) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return f"{value:.3f}" if kind == RATE else f"{value:.2f}"
    return guarded(value)


def register_csv(rows: Iterable[list[Cell]]) -> bytes:
    """The register as CSV: UTF-8 with BOM, `,` between fields, `.` in amounts, CRLF; a header row."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(HEADERS)
    for row in rows:
        writer.writerow([_csv_cell(value, kind) for value, kind in zip(row, KINDS, strict=True)])
    return out.getvalue().encode("utf-8-sig")


def register_xlsx(rows: Iterable[list[Cell]]) -> bytes:
    """The register as an Excel book with the same columns: amounts as numbers (two decimals shown), every text a
    string cell (never a formula, whatever it begins with)."""
    from openpyxl import Workbook  # only an export needs it

    book = Workbook()
    sheet = book.active
    sheet.title = "Registro de ventas"
    for column, header in enumerate(HEADERS, start=1):
        sheet.cell(row=1, column=column, value=header)
    for number, row in enumerate(rows, start=2):
        for column, (value, kind) in enumerate(zip(row, KINDS, strict=True), start=1):
            cell = sheet.cell(row=number, column=column)
            if isinstance(value, Decimal):
                cell.value = value
                cell.number_format = "0.000" if kind == RATE else "#,##0.00"
            elif value:
                cell.value = value
                if looks_like_formula(value):
                    cell.data_type = "s"  # openpyxl took the «=» for a formula: it is the customer's name
                    cell.quotePrefix = True  # and Excel keeps showing it as text when the cell is edited
    sheet.freeze_panes = "A2"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
