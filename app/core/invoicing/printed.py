"""The engine's side of the printed voucher: the stored signed XML plus the company's print options, given
to the pure renderer (app.core.invoicing.printing). Used by the windows, `yupana pdf`, `yupana lote --pdf` and the
WhatsApp sending (the PDF as bytes)."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable
from pathlib import Path

from app.core.errors import conflict, invalid, not_found
from app.core.invoicing import printing
from app.core.invoicing.documents import registry
from app.core.invoicing.statuses import ANULADO
from app.core.invoicing.voucher_store import VoucherStore
from app.core.platform import environments
from app.core.platform.companies import Companies

SERIE_NUMERO = re.compile(r"^\s*([A-Za-z0-9]{4})-0*(\d{1,8})\s*$")
LOGO_MM = 24.0  # the logo's height on paper; its width follows its proportions


class Printed:
    """The printed voucher of stored vouchers: their signed XML and their company's print options; for a guía, the
    link SUNAT's CDR gave it (`cdr_link(voucher_id)`: its QR; None while SUNAT has not accepted it)."""

    def __init__(self, store: VoucherStore, companies: Companies,
                 cdr_link: Callable[[int], str | None] = lambda _voucher_id: None) -> None:
        self.store = store
        self.companies = companies
        self.cdr_link = cdr_link

    def issuer(self, ruc: str, record: dict | None = None) -> tuple[printing.Issuer, str]:
        """(what the company and the stored voucher `record` add on paper, the company's default format): the logo;
        «ANULADO» on a voided voucher; «SIN VALOR TRIBUTARIO» on one not issued in production."""
        options = self.companies.print_options(ruc)
        state = voucher_state(record)
        if record is not None and record.get("id") is not None and registry.is_guia(record.get("tipo") or ""):
            state["sunat_link"] = self.cdr_link(int(record["id"]))
        if options.logo and options.logo_px:
            width, height = options.logo_px
            return printing.Issuer(options.logo, (LOGO_MM * width / height, LOGO_MM), **state), options.formato
        return printing.Issuer(**state), options.formato

    def signed_xml(self, voucher_id: int) -> tuple[dict, str]:
        record = self.store.get(voucher_id)
        if record is None:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        xml = record.get("xml_firmado")
        if not xml:
            raise conflict("voucher_id", f"El comprobante {record['serie']}-{record['numero']} todavía no está firmado: "
                           "la representación impresa lleva el código hash de la firma.")
        return record, xml

    def voucher_printout(self, voucher_id: int, formato: str | None = None) -> tuple[printing.Printout, str]:
        """(the PDF with its pages and warnings, file name) of a stored voucher; `formato` None: the company's
        default."""
        record, xml = self.signed_xml(voucher_id)
        company, default = self.issuer(record["emisor_ruc"], record)
        chosen = printed_format(record, formato or default)
        return (printing.printout(xml, chosen, company, layout_of(record["tipo"])),
                printing.file_name(record["nombre_archivo"], chosen))

    def voucher_pdf(self, voucher_id: int, formato: str | None = None) -> tuple[bytes, str]:
        """(PDF bytes, file name) of a stored voucher; `formato` None: the company's default."""
        printout, name = self.voucher_printout(voucher_id, formato)
        return printout.content, name

    def voucher_laid_out(self, voucher_id: int, formato: str | None = None
                         ) -> tuple[list[printing.Page], str, str, tuple[str, ...]]:
        """The laid-out pages the windows paint (preview and printer), the format used, the PDF's file name and the
        warnings to show with them."""
        record, xml = self.signed_xml(voucher_id)
        company, default = self.issuer(record["emisor_ruc"], record)
        chosen = printed_format(record, formato or default)
        found, _, warnings = printing.laid_out(xml, chosen, company, layout_of(record["tipo"]))
        return found, chosen, printing.file_name(record["nombre_archivo"], chosen), warnings

    def voucher_pages(self, voucher_id: int, formato: str | None = None
                      ) -> tuple[list[printing.Page], str, str]:
        """The laid-out pages the windows paint (preview and printer), the format used and the PDF's file name."""
        found, chosen, name, _ = self.voucher_laid_out(voucher_id, formato)
        return found, chosen, name

    def pdf_for_xml(self, xml_firmado: str | bytes, formato: str | None = None) -> bytes:
        """The PDF of a signed voucher given as text (a batch's answer), with its issuer's print options and, when
        it is stored, its state."""
        voucher = printing.parse(xml_firmado)
        text = xml_firmado.decode("utf-8") if isinstance(xml_firmado, bytes) else xml_firmado
        company, default = self.issuer(voucher.emisor_ruc, self.store.find_by_signed_xml(text))
        return printing.render_pdf(xml_firmado, printing.check_format(formato or default), company)

    def write_pdf(self, voucher_id: int, target: str | Path | None = None, formato: str | None = None) -> Path:
        """Write the voucher's PDF to `target` (a file, or a folder for its usual name; default: the current folder)
        through a temporary file, so a half-written PDF is never left under the final name."""
        data, name = self.voucher_pdf(voucher_id, formato)
        path = Path(target) if target else Path.cwd()
        if path.is_dir():
            path = path / name
        return write_bytes(path, data)

    def find(self, serie_numero: str, emisor_ruc: str | None = None, tipo: str | None = None) -> int:
        """The id of the voucher SERIE-NUMERO («F001-123»); a clear error when there is none or more than one."""
        match = SERIE_NUMERO.match(serie_numero or "")
        if not match:
            raise invalid("serie_numero", f"«{serie_numero}» no es una serie-número (p. ej. F001-123).")
        serie, numero = match.group(1).upper(), int(match.group(2))
        rows = self.store.find_by_serie_numero(serie, numero, emisor_ruc, tipo)
        if not rows:
            raise not_found("serie_numero", f"No hay un comprobante {serie}-{numero}"
                            + (f" de tipo {tipo}" if tipo else "") + (f" del RUC {emisor_ruc}" if emisor_ruc else "") + ".")
        if len(rows) > 1:
            options = ", ".join(f"tipo {row['tipo']} del RUC {row['emisor_ruc']}" for row in rows)
            raise invalid("serie_numero", f"Hay {len(rows)} comprobantes {serie}-{numero} ({options}): indique cuál "
                          "con --tipo o --ruc.")
        return int(rows[0]["id"])


def voucher_state(record: dict | None) -> dict:
    """What the stored voucher adds on paper: voided, and the badge of a test environment (None in production)."""
    if record is None:
        return {}
    environment = record.get("environment") or environments.PRODUCCION
    badge = None if environment == environments.PRODUCCION else environments.get(environment).badge
    return {"voided": record.get("status") == ANULADO, "test_environment": badge}


def printed_format(record: dict, formato: str) -> str:
    """The format a stored document prints in: the one asked (or its company's), but a guía always on A4 (it
    travels with the goods on a full page; its layout has no ticket)."""
    chosen = printing.check_format(formato)
    return "a4" if registry.is_guia(record.get("tipo") or "") else chosen


def layout_of(tipo: str) -> printing.Layout:
    """How a voucher of this type is printed: its document type's layout, else the printing package's own for it (a
    guía's A4, SUNAT's printed voucher)."""
    kind = registry.get(tipo)
    return kind.printed if kind is not None and kind.printed is not None else printing.layout_for(tipo)


def write_bytes(path: Path, data: bytes) -> Path:
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        reason = ("la carpeta no existe" if isinstance(exc, FileNotFoundError) else
                  "no hay permiso para escribir ahí" if isinstance(exc, PermissionError) else
                  "el disco está lleno" if exc.errno == errno.ENOSPC else "el sistema no lo permitió")
        raise invalid("salida", f"No se pudo guardar el PDF en «{path}»: {reason}.") from None
    return path
