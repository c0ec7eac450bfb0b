"""The printed representation of a voucher (PDF, A4 or 80 mm ticket), built from its signed XML.

Pure: no storage, no engine. `render_pdf(xml_firmado, formato, issuer)` gives the PDF's bytes;
`pages(...)` gives the laid-out pages the windows paint for the preview and the printer; `printout(...)` and
`laid_out(...)` give the same with the warnings the caller shows (characters no font has, printed as □).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.errors import invalid
from app.core.invoicing.printing.document import PrintedVoucher, parse
from app.core.invoicing.printing.fonts import noting_unprintable, unprintable_warning
from app.core.invoicing.printing.guia import GUIA_TYPES, print_guia
from app.core.invoicing.printing.layout import FORMATS, Issuer, Page, lay_out

# (signed XML, format, the issuer's print options) -> (pages, title): how a document type is printed.
Layout = Callable[[Any, str, Any], tuple[list[Page], str]]


def layout_for(code: str) -> Layout:
    """How the printing package lays out a document type of its own knowing: the guías de remisión their A4
    (printing.guia), SUNAT's vouchers the printed voucher (`standard`)."""
    return print_guia if code in GUIA_TYPES else standard


def check_format(formato: str | None) -> str:
    chosen = (formato or "a4").strip().lower()
    if chosen not in FORMATS:
        raise invalid("formato", f"El formato «{formato}» no existe: use «a4» o «ticket».")
    return chosen


def standard(xml_firmado: bytes | str, formato: str, issuer: Issuer | None) -> tuple[list[Page], str]:
    """The printed voucher of SUNAT's vouchers (facturas, boletas and their notes): (its pages, its title). A
    document type may bring its own layout of the same shape (app.core.invoicing.documents.kind.PrintedLayout)."""
    voucher = parse(xml_firmado)
    return lay_out(voucher, check_format(formato), issuer), f"{voucher.title} {voucher.serie_numero}"


@dataclass(frozen=True)
class Printout:
    """A printed voucher: its PDF (or its pages) and the warnings to show with it, in Spanish."""

    content: bytes
    pages: list[Page]
    avisos: tuple[str, ...] = ()


def laid_out(xml_firmado: bytes | str, formato: str = "a4", issuer: Issuer | None = None,
             layout: Layout = standard) -> tuple[list[Page], str, tuple[str, ...]]:
    """(pages, title, warnings): the characters no font has are printed as □ and named in a warning."""
    with noting_unprintable() as missing:
        found, title = layout(xml_firmado, check_format(formato), issuer)
    warning = unprintable_warning(missing)
    return found, title, (warning,) if warning else ()


def pages(xml_firmado: bytes | str, formato: str = "a4", issuer: Issuer | None = None,
          layout: Layout = standard) -> list[Page]:
    return laid_out(xml_firmado, formato, issuer, layout)[0]


def printout(xml_firmado: bytes | str, formato: str = "a4", issuer: Issuer | None = None,
             layout: Layout = standard) -> Printout:
    """The voucher's PDF in «a4» or «ticket» format, laid out by `layout` (SUNAT's printed voucher by default),
    with its pages and its warnings."""
    from app.core.invoicing.printing.pdf import write  # fpdf2 is loaded with the first PDF, not at start-up

    found, title, warnings = laid_out(xml_firmado, formato, issuer, layout)
    return Printout(write(found, title), found, warnings)


def render_pdf(xml_firmado: bytes | str, formato: str = "a4", issuer: Issuer | None = None,
               layout: Layout = standard) -> bytes:
    """The voucher's PDF in «a4» or «ticket» format (`printout` also gives its warnings)."""
    return printout(xml_firmado, formato, issuer, layout).content


def file_name(voucher_name: str, formato: str) -> str:
    """«20100066603-01-F001-1.pdf» (A4) or «…-ticket.pdf»."""
    stem = voucher_name.removesuffix(".xml")
    return f"{stem}-ticket.pdf" if formato == "ticket" else f"{stem}.pdf"


__all__ = ["FORMATS", "Issuer", "Layout", "Page", "PrintedVoucher", "Printout", "check_format", "file_name",
           "laid_out", "layout_for", "pages", "parse", "printout", "render_pdf", "standard"]
