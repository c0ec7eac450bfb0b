"""The invoicing group service (protocols.Invoicing): the engine's parts for vouchers behind one face."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from app.core.contract import (
    EnviarRequest,
    EnviarResult,
    FirmarRequest,
    FirmarResult,
    GenerarXmlRequest,
    GenerarXmlResult,
    ValidarRequest,
    ValidarResult,
    parse_model,
)
from app.core.errors import YupanaError, invalid
from app.core.invoicing import builder, sunat_catalogues, xmldsig
from app.core.invoicing.accountant import PAGE, PeriodExporter
from app.core.invoicing.batches import Batches, read_requests
from app.core.invoicing.certificates import CertificateInfo, CertificateStore
from app.core.invoicing.documents.preview import TotalsPreview
from app.core.invoicing.drafts import Drafts, VoucherDraft
from app.core.invoicing.emission import Emitter
from app.core.invoicing.generation import Generation
from app.core.invoicing.numbering import Confirm, Numbering, NumberingCheck
from app.core.invoicing.outbox import Outbox
from app.core.invoicing.printed import Printed
from app.core.invoicing.signing import Signing
from app.core.invoicing.sunat import Submission, SunatClients
from app.core.invoicing.validity import ValidityQueries, ValidityQuery
from app.core.invoicing.voids import SummaryOutcome, Voids, kind_for
from app.core.invoicing.voucher_store import VoucherStore
from app.core.platform import events
from app.core.platform.companies import Companies
from app.core.platform.events import EventBus
from app.core.platform.identifiers import check_ruc
from app.core.records import (
    BatchItem,
    BatchRequests,
    ConsultedCdr,
    Emission,
    EmissionStep,
    ExportProgress,
    GuiaPrefill,
    PdfFile,
    PendingCount,
    PrintedPages,
    Summary,
    Voucher,
    VoucherCdr,
    VoucherDetail,
    VoucherSummary,
    VoucherValidity,
    rows_to,
)


class InvoicingGroup:
    def __init__(self, *, vouchers: VoucherStore, generation: Generation, signing: Signing, batches: Batches,
                 submission: Submission, emitter: Emitter, outbox: Outbox, voids: Voids, printed: Printed,
                 certificates: CertificateStore, sunat_clients: SunatClients, companies: Companies,
                 bus: EventBus, drafts: Drafts, validity: ValidityQueries, numbering: Numbering | None = None) -> None:
        self._drafts = drafts
        self._validity = validity
        self._numbering = numbering
        self._vouchers = vouchers
        self._generation = generation
        self._signing = signing
        self._batches = batches
        self._submission = submission
        self._emitter = emitter
        self._outbox = outbox
        self._voids = voids
        self._printed = printed
        self._certificates = certificates
        self._sunat_clients = sunat_clients
        self._companies = companies
        self._bus = bus

    # ------------------------------------------------------------ the contract's operations 1-3

    def generate_xml(self, request: GenerarXmlRequest | dict[str, Any]) -> GenerarXmlResult:
        return self._generation.generate(self._generation.parse(request))[1]

    def sign(self, request: FirmarRequest | dict[str, Any]) -> FirmarResult:
        return self._signing.sign_request(parse_model(FirmarRequest, request))

    def send(self, request: EnviarRequest | dict[str, Any]) -> EnviarResult:
        return self._submission.submit(parse_model(EnviarRequest, request))

    def send_guia(self, request: EnviarRequest | dict[str, Any]) -> EnviarResult:
        """Beyond the contract: operation 3 for a signed guía de remisión, to SUNAT's GRE platform through the GRE
        outbox (POST /api/v1/guias/enviar; operation 3 refuses a guía naming this route)."""
        return self._submission.submit(parse_model(EnviarRequest, request), guias=True)

    def preview_totals(self, request: GenerarXmlRequest | dict[str, Any]) -> TotalsPreview:
        """The amounts operation 1 would build `request` with, for a request that may be partial (one being typed):
        the builder's own functions, nothing stored read or written, so it may run at each keystroke
        (app.core.invoicing.builder.preview_totals)."""
        return builder.preview_totals(request)

    # ------------------------------------------------------------ issuing

    def issue(self, request: GenerarXmlRequest | dict[str, Any], certificado_id: str | None = None, *,
              next_number: bool = False) -> Emission:
        """«Emitir»: generate, sign by id (the issuer's default certificate unless given) and send to the current
        environment; SUNAT's refusal or the queue is part of the outcome (app.core.invoicing.emission).
        `next_number`: numbered with the serie's next number when stored, whatever the request's (several desks on
        one serie: no number twice, no gap)."""
        return self._emitter.emit(request, certificado_id, next_number=next_number)

    def issue_steps(self, request: GenerarXmlRequest | dict[str, Any], certificado_id: str | None = None, *,
                    next_number: bool = False) -> Iterator[EmissionStep]:
        """«Emitir» as it goes: one item as each step starts (generate, sign, send), then one with the outcome.
        Each step runs when the item after it is asked for. `next_number` as for `issue`."""
        return self._emitter.steps(request, certificado_id, next_number=next_number)

    def read_batch(self, path: str | Path) -> BatchRequests:
        """The requests of a batch file (a JSON array, or JSON Lines), each parsed when it is issued."""
        return BatchRequests(read_requests(path))

    def issue_batch(self, requests: BatchRequests | Iterable[Any],
                    certificado_id: str | None = None) -> Iterator[BatchItem]:
        """Operations 1 and 2 for many vouchers (app.core.invoicing.batches): one item per request, in order. Stop
        iterating to cancel: what was handed out is stored, the rest is not issued."""
        items = requests.requests if isinstance(requests, BatchRequests) else requests
        return self._batches.issue(items, certificado_id)

    def resend(self, voucher_id: int) -> Emission:
        """Operation 3 for a stored, signed voucher by its id (resend from the voucher's detail): the same result as
        «Emitir», its outcome decided in the core (app.core.invoicing.emission); a problem on this side raises."""
        return self._emitter.resend(voucher_id)

    # ------------------------------------------------------------ the stored vouchers

    def vouchers(self, search: str | None = None, status: str | None = None, limit: int = 200, *,
                 before_id: int | None = None, offset: int = 0, desde: str | None = None, hasta: str | None = None,
                 tipo: str | None = None, cliente: str | None = None) -> list[Voucher]:
        """A page of the environment's vouchers, newest first, searched and filtered from indexes."""
        rows = self._vouchers.list(search, status, limit, before_id=before_id, offset=offset, desde=desde,
                                   hasta=hasta, tipo=tipo, cliente=cliente)
        return rows_to(Voucher, self._voids.marked(rows))  # «Baja por confirmar», an unconfirmed baja's warning

    def voucher(self, voucher_id: int) -> VoucherDetail | None:
        row = self._vouchers.get(voucher_id)
        return None if row is None else VoucherDetail.from_row(self._voids.marked([row])[0])

    def find_voucher(self, serie_numero: str, emisor_ruc: str | None = None, tipo: str | None = None) -> int:
        return self._printed.find(serie_numero, emisor_ruc, tipo)

    def guia_request_from_voucher(self, voucher_id: int) -> GuiaPrefill:
        """«Guía desde un comprobante»: a remitente's guía request (type 09, motive 01 venta) prefilled from a stored
        factura or boleta: its customer as the destinatario, the issuer's address as the departure point, the
        customer's address as the arrival, its lines (code, description, quantity, unit) and the voucher as the
        related document. Transport, dates and weight are left for the user."""
        detail = self.voucher(voucher_id)
        if detail is None:
            raise invalid("voucher_id", f"No hay un comprobante con id {voucher_id}.")
        if detail.tipo not in sunat_catalogues.SALES:
            raise invalid("tipo", f"{detail.serie_numero} no es una factura ni una boleta: la guía se emite desde "
                                  "una de ellas.")
        source = detail.request()
        company = self._companies.get(detail.emisor_ruc)
        return GuiaPrefill({
            "tipo": sunat_catalogues.GUIA_REMITENTE, "serie": "T001", "emisor": {"ruc": detail.emisor_ruc},
            "destinatario": _destinatario(source.get("receptor") or {}),
            "motivo_traslado": sunat_catalogues.MOTIVO_VENTA,
            "partida": {"ubigeo": company.ubigeo if company else "", "direccion": company.direccion if company else ""},
            "llegada": {"ubigeo": "", "direccion": (source.get("receptor") or {}).get("direccion") or ""},
            "documentos_relacionados": [{"tipo": detail.tipo, "numero": detail.serie_numero}],
            "items": [_guia_line(line) for line in source.get("items") or []],
        })

    def next_number(self, emisor_ruc: str, tipo: str, serie: str) -> int:
        return self._vouchers.next_numero(emisor_ruc, tipo, serie)

    def voucher_cdr(self, voucher_id: int) -> VoucherCdr | None:
        """SUNAT's latest answer for a voucher: its CDR from a submission, or one asked with `query_cdr`."""
        row = self._outbox.cdr_for_voucher(voucher_id)
        if row is None:
            consulted = self._voids.consulted_cdr(voucher_id)
            if consulted is None:
                return None
            row = {**consulted, "estado": consulted.get("estado") or "", "notas": []}
        return VoucherCdr.from_row(row)

    def export_period_steps(self, desde: dt.date, hasta: dt.date, salida: str | Path) -> Iterator[ExportProgress]:
        """The period's zip for the accountant (app.core.invoicing.accountant): every signed XML and CDR of the
        vouchers issued from `desde` to `hasta` (both included) and the sales register (.csv and .xlsx, in SIRE's
        RVIE order). One item every few vouchers; the last has the result. Stop iterating to cancel (no file left)."""
        exporter = PeriodExporter(
            page=lambda desde_, hasta_, before: self.vouchers(limit=PAGE, before_id=before, desde=desde_,
                                                              hasta=hasta_),
            detail=self.voucher, cdr_of=self.voucher_cdr, issue_date=self._issue_date)
        return exporter.steps(desde, hasta, salida)

    def _issue_date(self, emisor_ruc: str, tipo: str, serie: str, numero: int) -> str | None:
        row = self._vouchers.find(emisor_ruc, tipo, serie, numero)
        return None if row is None else str(row["fecha_emision"])

    def pending_by_environment(self) -> list[PendingCount]:
        return [PendingCount(name, count) for name, count in self._outbox.pending_by_environment().items()]

    def verify_signature(self, xml: bytes | str) -> xmldsig.Verification:
        return xmldsig.verify_xml(xml)

    # ------------------------------------------------------------ voids and daily summaries

    def void(self, voucher_id: int, motivo: str, *, wait: bool = True,
             timeout_s: float | None = None) -> SummaryOutcome:
        """Void a voucher with a comunicación de baja (facturas and their notes) or a resumen diario with status 3
        (boletas and theirs); with `wait`, poll SUNAT's ticket until it answers (or `timeout_s`). Each change of the
        summary is told on the bus (SummaryChanged)."""
        return self._voids.anular(voucher_id, motivo, wait=wait, timeout_s=timeout_s)

    def daily_summary(self, fecha: dt.date, *, wait: bool = True,
                      timeout_s: float | None = None) -> list[SummaryOutcome]:
        """Report the day's signed boletas (and their notes) not sent one by one: one RC per issuer."""
        return self._voids.resumen(fecha, wait=wait, timeout_s=timeout_s)

    def watch_summaries(self) -> None:
        """For a long-lived process (`yupana serve`, the windows): follow to SUNAT's answer also the RA/RC that other
        processes sent and left pending (`yupana anular --no-esperar`, `yupana resumen --no-esperar`)."""
        self._voids.watch()

    def void_kind(self, tipo: str, serie: str) -> str | None:
        """Which document voids a voucher of this type and series: RA, RC, or None when neither does."""
        try:
            return kind_for(tipo, serie)
        except YupanaError:
            return None

    def summaries(self, limit: int = 200) -> list[Summary]:
        return rows_to(Summary, self._voids.list(limit))

    def voucher_summaries(self, voucher_id: int) -> list[VoucherSummary]:
        return rows_to(VoucherSummary, self._voids.for_voucher(voucher_id))

    def check_numbering(self, files_folder: str | Path | None = None, confirm: Confirm | None = None, *,
                        after_restore: bool = False) -> NumberingCheck:
        """Where each serie of the current environment goes on (app.core.invoicing.numbering): the database, the
        backup folder's voucher files, SUNAT's status query for F series, `confirm` (the last number printed) for the
        others; the numbering raised to match. `after_restore`: today's RA/RC counters also skip 10."""
        if self._numbering is None:
            raise invalid(None, "La verificación de la numeración no está disponible aquí.")
        return self._numbering.check(files_folder, confirm, after_restore)

    def query_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> ConsultedCdr:
        """getStatusCdr for any voucher by RUC, type, serie and number; the CDR stored when the voucher is ours."""
        return ConsultedCdr.from_row(self._voids.consultar_cdr(ruc, tipo, serie, numero))

    def check_validity(self, ruc: str, tipo: str, serie: str, numero: int, fecha: dt.date,
                       total: Decimal | None = None, consultante: str | None = None) -> VoucherValidity:
        """SUNAT's consulta integrada de validez of any voucher (ours or a supplier's), asked by `consultante` (one
        of our companies; by default the only one). Nothing is stored."""
        ruc, serie = ruc.strip(), serie.strip().upper()
        check_ruc(ruc)
        if tipo not in sunat_catalogues.VALIDITY_DOCUMENT_TYPES:
            raise invalid("tipo", f"SUNAT no consulta comprobantes de tipo «{tipo}»: use uno de "
                                  f"{', '.join(sunat_catalogues.VALIDITY_DOCUMENT_TYPES)}.")
        if not (len(serie) == 4 and serie.isalnum()):
            raise invalid("serie", f"La serie «{serie}» no es válida: son 4 letras o números (p. ej. F001).")
        if not 1 <= int(numero) <= 99_999_999:
            raise invalid("numero", f"El número {numero} no es válido: de 1 a 99999999.")
        if total is not None and total < 0:
            raise invalid("total", f"El importe total {total} no puede ser negativo.")
        company = self._querying_company(consultante)
        query = ValidityQuery(ruc, tipo, serie, int(numero), fecha, total)
        answer = self._validity.check(company, query)
        name, detail = sunat_catalogues.VOUCHER_VALIDITY[answer.estado_cp]
        return VoucherValidity(
            consultante=company, ruc=ruc, tipo=tipo, serie=serie, numero=int(numero), fecha=fecha, total=total,
            estado_cp=answer.estado_cp, estado=name, detalle=detail, estado_ruc=answer.estado_ruc,
            estado_ruc_nombre=sunat_catalogues.TAXPAYER_STATES.get(answer.estado_ruc, "-"),
            cond_domicilio=answer.cond_domicilio,
            cond_domicilio_nombre=sunat_catalogues.ADDRESS_CONDITIONS.get(answer.cond_domicilio, "-"),
            observaciones=answer.observaciones, valido=answer.estado_cp in sunat_catalogues.VALID_VOUCHER_STATES)

    def validate(self, request: ValidarRequest | dict[str, Any]) -> ValidarResult:
        """Beyond the contract: `check_validity` as the local API asks it (POST /api/v1/facturacion/validar)."""
        asked = parse_model(ValidarRequest, request)
        answer = self.check_validity(asked.ruc, asked.tipo, asked.serie, asked.numero, asked.fecha, asked.total,
                                     asked.consultante)
        return ValidarResult.model_validate(dataclasses.asdict(answer))

    def set_validity_credentials(self, ruc: str, client_id: str, client_secret: str) -> None:
        """The company's API credentials for SUNAT's consulta de validez (client_id and client_secret generated in
        SOL, «Credenciales de API SUNAT»), kept encrypted in the secret store."""
        self._validity.set_api_credentials(ruc, client_id, client_secret)

    def _querying_company(self, consultante: str | None) -> str:
        if consultante:
            check_ruc(consultante.strip())
            if self._companies.get(consultante.strip()) is None:
                raise invalid("consultante", f"El RUC {consultante} no es de una empresa registrada en Yupana.")
            return consultante.strip()
        companies = self._companies.all()
        if len(companies) != 1:
            raise invalid("consultante", "Indique con qué empresa se consulta (hay "
                                         f"{len(companies) or 'ninguna'} registrada{'s' if len(companies) != 1 else ''}).")
        return companies[0].ruc

    # ------------------------------------------------------------ the printed voucher

    def pdf(self, voucher_id: int, formato: str | None = None) -> PdfFile:
        """The PDF of a signed voucher, «a4» or «ticket» (None: the company's default), its file name and the
        warnings to show with it (characters printed as □)."""
        printout, name = self._printed.voucher_printout(voucher_id, formato)
        return PdfFile(printout.content, name, printout.avisos)

    def printed_pages(self, voucher_id: int, formato: str | None = None) -> PrintedPages:
        pages, chosen, name, warnings = self._printed.voucher_laid_out(voucher_id, formato)
        return PrintedPages(list(pages), chosen, name, warnings)

    def pdf_from_xml(self, xml_firmado: str | bytes, formato: str | None = None) -> bytes:
        return self._printed.pdf_for_xml(xml_firmado, formato)

    # ------------------------------------------------------------ certificates and SOL credentials

    def import_certificate(self, data: bytes, password: str | bytes | None = None, *,
                           key_data: bytes | None = None) -> CertificateInfo:
        return self._saved(self._certificates.import_file(data, password, key_data=key_data))

    def create_test_certificate(self, ruc: str) -> CertificateInfo:
        company = self._companies.get(ruc.strip())
        info = (self._certificates.create_test_certificate(ruc, company.razon_social) if company
                else self._certificates.create_test_certificate(ruc))
        return self._saved(info)

    def certificates(self, ruc: str | None = None) -> list[CertificateInfo]:
        return self._certificates.all(ruc)

    def certificate(self, certificado_id: str) -> CertificateInfo:
        return self._certificates.get(certificado_id)

    def delete_certificate(self, certificado_id: str) -> None:
        self._certificates.delete(certificado_id)
        self._bus.emit(events.CertificateDeleted(certificado_id))

    def set_default_certificate(self, ruc: str, certificado_id: str) -> CertificateInfo:
        return self._saved(self._certificates.set_default(ruc, certificado_id))

    def default_certificate(self, ruc: str) -> CertificateInfo | None:
        return self._certificates.default_for(ruc)

    def _saved(self, info: CertificateInfo) -> CertificateInfo:
        self._bus.emit(events.CertificateSaved(info.certificado_id, info.ruc))
        return info

    def set_sol_credentials(self, ruc: str, usuario: str, clave: str) -> None:
        """Usuario and clave SOL of a company, kept encrypted in the secret store."""
        self._sunat_clients.set_sol_credentials(ruc, usuario, clave)

    def sol_credentials(self, ruc: str, ambiente: str = "beta") -> tuple[str, str]:
        return self._sunat_clients.sol_credentials(ruc, ambiente)

    def set_gre_credentials(self, ruc: str, client_id: str, client_secret: str) -> None:
        """The company's API credentials for SUNAT's guías (client_id and client_secret generated in SOL), kept
        encrypted in the secret store; the guías also use the SOL user and password."""
        self._sunat_clients.gre.set_api_credentials(ruc, client_id, client_secret)

    # ------------------------------------------------------------ the voucher form's drafts

    def drafts(self) -> list[VoucherDraft]:
        return self._drafts.list()

    def save_draft(self, content: dict[str, Any], *, cliente: str = "", total: Decimal | str = "0.00",
                   moneda: str = "PEN", draft_id: int | None = None) -> VoucherDraft:
        return self._drafts.save(content, cliente=cliente, total=total, moneda=moneda, draft_id=draft_id)

    def discard_draft(self, draft_id: int) -> bool:
        return self._drafts.discard(draft_id)




def _destinatario(receptor: dict[str, Any]) -> dict[str, str]:
    """A voucher's receptor as a guía's destinatario (a factura's receptor may carry only `ruc`)."""
    numero = receptor.get("numero_documento") or receptor.get("ruc") or ""
    identity = sunat_catalogues.RUC if receptor.get("ruc") else sunat_catalogues.DNI
    tipo = receptor.get("tipo_documento") or identity
    return {"tipo_documento": tipo, "numero_documento": numero, "razon_social": receptor.get("razon_social") or ""}


def _guia_line(item: dict[str, Any]) -> dict[str, str]:
    line = {"descripcion": str(item.get("descripcion", "")), "cantidad": str(item.get("cantidad", "")),
            "unidad": str(item.get("unidad") or sunat_catalogues.UNIDAD)}
    if item.get("codigo"):
        line["codigo"] = str(item["codigo"])
    return line
