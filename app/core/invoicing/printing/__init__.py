"""The printed representation of a voucher (PDF, A4 or 80 mm ticket), built from its signed XML.

Pure: no storage, no engine. `render_pdf(xml_firmado, formato, issuer)` gives the PDF's bytes;
`pages(...)` gives the laid-out pages the windows paint for the preview and the printer.
"""

from __future__ import annotations

from app.core.errors import invalid
from app.core.invoicing.printing.document import PrintedVoucher, parse
from app.core.invoicing.printing.layout import FORMATS, Issuer, Page, lay_out


def check_format(formato: str | None) -> str:
    chosen = (formato or "a4").strip().lower()
    if chosen not in FORMATS:
        raise invalid("formato", f"El formato «{formato}» no existe: use «a4» o «ticket».")
    return chosen


def pages(xml_firmado: bytes | str, formato: str = "a4", issuer: Issuer | None = None) -> list[Page]:
    return lay_out(parse(xml_firmado), check_format(formato), issuer)


def render_pdf(xml_firmado: bytes | str, formato: str = "a4", issuer: Issuer | None = None) -> bytes:
    """The voucher's PDF in «a4» or «ticket» format."""
    from app.core.invoicing.printing.pdf import write  # fpdf2 is loaded with the first PDF, not at start-up

    voucher = parse(xml_firmado)
    return write(lay_out(voucher, check_format(formato), issuer), f"{voucher.title} {voucher.serie_numero}")


def file_name(voucher_name: str, formato: str) -> str:
    """«20100066603-01-F001-1.pdf» (A4) or «…-ticket.pdf»."""
    stem = voucher_name.removesuffix(".xml")
    return f"{stem}-ticket.pdf" if formato == "ticket" else f"{stem}.pdf"


__all__ = ["FORMATS", "Issuer", "Page", "PrintedVoucher", "check_format", "file_name", "pages", "parse",
           "render_pdf"]
