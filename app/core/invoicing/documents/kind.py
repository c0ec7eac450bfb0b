"""What a document type brings (issue 29): its request model, builder, renderer, identity, SUNAT rule sheet,
numbering, sender and printed layout, in one `DocumentType` that app.core.invoicing.documents.registry resolves by
code, XML root or file name, as Greenter resolves a builder per document class. The engine's paths (generation and
numbering, signing, the voucher store, the outbox's sender, printing) ask the registry instead of assuming a type.

Pure: nothing here reaches storage, and nothing here imports the registry, the engine's parts or the printed voucher
(which reads vouchers through app.core.invoicing.ubl_identity, which asks the registry): a type's printed layout and
its built document are described by what the engine calls, not by their classes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from app.core.contract import ContractModel, parse_model

if TYPE_CHECKING:
    from app.core.invoicing.cdr import Cdr
    from app.core.invoicing.ubl import Party

CompanyOf = Callable[[str], Any]  # the issuer's profile by RUC (app.core.platform.companies.Company), None unknown
NameOf = Callable[[str], str | None]  # a customer's name by RUC (the registry), None when unknown


class Built(Protocol):
    """What the engine reads of a built document: its number, issuer, customer, currency, total and date (the
    voucher store keeps them as columns; the catalogue remembers the customer)."""

    tipo: str
    serie: str
    numero: int
    emisor_ruc: str
    receptor: Party
    moneda: str
    total: Decimal
    fecha: date


Build = Callable[[Any, CompanyOf, NameOf, bool], Any]  # (request, company_of, name_of, checks) -> a Built document
# (signed XML, format «a4» or «ticket», the issuer's print options: printing.Issuer) -> (pages: printing.Page, title)
PrintedLayout = Callable[[str, str, Any], tuple[list[Any], str]]
ClientFactory = Callable[[str, str], Any]  # SUNAT's clients: (environment, ruc) -> soap.SunatClient


@dataclass(frozen=True)
class Identity:
    """Which document an XML is: its root element and namespace, and, when types share a root (a factura and a
    boleta are both an Invoice), the element whose text names the type."""

    root: str
    namespace: str
    type_code: str | None = None  # e.g. cbc:InvoiceTypeCode; None: the root alone names the type


@dataclass(frozen=True)
class Numbering:
    """A type's series: what one looks like and the first one a company uses."""

    serie: re.Pattern[str]
    example: str  # the first serie, shown in messages and proposed by the windows
    letter: str | None = None  # the serie's first letter (F, B); None when it follows another document (notes)
    max_numero: int = 99_999_999  # 1 to 8 digits

    def accepts(self, serie: str, numero: int) -> bool:
        return bool(self.serie.match(serie)) and 1 <= numero <= self.max_numero


class Channel(Protocol):
    """One submission's way to the receiver of a document type (soap.SunatClient is SUNAT's, by sendBill). Raises
    soap.TransportFailure when no usable answer came (retried), soap.SoapFault when the receiver refused it."""

    zipped: bool  # the receiver takes the XML inside a zip named like it (SUNAT), or as it is
    send_operation: str  # for the outbox's log: «sendBill»
    status_operation: str  # «getStatusCdr»

    def send_document(self, name: str, content: bytes) -> Cdr:
        """Send one document (`name`: the zip's or the XML's file name); its answer, read as a CDR."""
        ...

    def document_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> Cdr | None:
        """The answer the receiver keeps for a document sent before (asked before any resend), or None."""
        ...


class Sender(Protocol):
    def channel(self, sunat: ClientFactory, environment: str, ruc: str) -> Channel:
        """The channel for one submission of `ruc`'s document in `environment`; raises YupanaError (nothing is sent
        or queued) when it cannot be built now: no SOL credentials, the sandbox not running. `sunat` is the engine's
        SUNAT client factory, for the types SUNAT receives."""
        ...


class SendBill:
    """SUNAT's sendBill, the sender of facturas, boletas and their notes: the SUNAT client of the environment's
    addresses with the company's SOL credentials is the channel."""

    def channel(self, sunat: ClientFactory, environment: str, ruc: str) -> Channel:
        client: Channel = sunat(environment, ruc)
        return client


SEND_BILL = SendBill()


@dataclass(frozen=True)
class DocumentType:
    """One type of document, everything Yupana knows of it. `build(request, company_of, name_of, checks)` gives the
    built document (`Built`), `render(built)` its XML: canonical (app.core.invoicing.ubl's precondition: the XML
    declaration, then its own inclusive C14N, with ds and ext declared on the root and one empty
    ext:ExtensionContent), so it is signed without being parsed."""

    code: str  # catalogue 01 (or the type's own)
    name: str  # in Spanish
    identity: Identity
    numbering: Numbering
    build: Build
    render: Callable[[Any], str]
    sender: Sender = SEND_BILL
    sheet: str | None = None  # SUNAT's rule sheet (app.core.invoicing.sunat_rules), None: none judges it
    request: type[ContractModel] | None = None  # None: the contract's GenerarXmlRequest (operation 1)
    # The idempotency key's input; None: the contract's (amounts by value), or pydantic's JSON of the type's own model.
    request_json: Callable[[Any], str] | None = None
    printed: PrintedLayout | None = None  # None: the printed voucher of SUNAT's vouchers (app.core.invoicing.printing)
    # The totals' preview: (request, its items, None where one could not be read) -> preview.TotalsPreview, by the
    # type's own builder functions; None: the type offers none (app.core.invoicing.builder.preview_totals refuses).
    preview: Callable[[Any, list[Any]], Any] | None = None

    def parse(self, payload: Any) -> Any:
        """A request of this type's own model (a type with the contract's model is parsed by operation 1)."""
        assert self.request is not None, "the contract's requests are parsed by app.core.invoicing.builder"
        return parse_model(self.request, payload)

    def file_name(self, ruc: str, serie: str, numero: int | str) -> str:
        """RUC-TT-SERIE-NUMERO.xml, as SUNAT names a voucher's file."""
        return f"{ruc}-{self.code}-{serie}-{numero}.xml"
