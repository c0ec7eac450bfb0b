"""The rules of voiding, without storage or SUNAT: which document voids a voucher (RA or RC), when it may be voided
(the motivo, its status, the 7 days), the RC line of a stored boleta or note, SUNAT's codes the workers act on, and
the outcomes handed to the engine."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from lxml import etree

from app.core.errors import ErrorCode, ErrorDetail, YupanaError, conflict, invalid, not_found
from app.core.invoicing import summaries
from app.core.invoicing.cdr import safe_parser
from app.core.invoicing.namespaces import CAC, CBC
from app.core.invoicing.statuses import ACCEPTED, ACEPTADO, ANULADO, SUBMISSION_DONE, SUBMISSION_PENDING
from app.core.invoicing.sunat_catalogues import FACTURA, NOTES
from app.core.platform.environments import PRODUCCION, SANDBOX

# sendSummary of a name SUNAT already has: 2403 while its ticket is pending, then 2324 (RA) / 2223 (RC). Sent again
# (the same ID, the same bytes) after an answer was lost, it means SUNAT holds the summary: its ticket is lost, its
# outcome is learnt from the voucher status query or the ticket SUNAT names (app.core.invoicing.voids.lost).
ALREADY_RECEIVED = ("2403", "2324", "2223")
# Of those, the one SUNAT gives while it still processes the summary (its ticket «en estado 98»); 2324/2223 come once
# it is processed, and name its ticket in their detail («… - Detalle: ticket: 201…»), so the outcome is learnt from it.
STILL_PROCESSING = "2403"
_TICKET_NAMED = re.compile(r"ticket:\s*([0-9A-Fa-f][0-9A-Fa-f-]{5,})(?![\w:])")
# A RC refused whole because a boleta (or a note) it adds is one SUNAT has already («Existe documento ya informado
# anteriormente», CatalogoErrores.xml): SUNAT does not say which.
INFORMED_BEFORE = "2282"
# SUNAT's voucher status query (billConsultService getStatus): its statusCode for a voucher it holds.
QUERY_ACCEPTED, QUERY_REJECTED, QUERY_VOIDED = "0001", "0002", "0003"
# Where SUNAT answers that query: production only (beta has no billConsultService); the sandbox stands in for it.
STATUS_QUERY_ENVIRONMENTS = frozenset({SANDBOX, PRODUCCION})
# A summary SUNAT received whose vouchers the query still says accepted this long after it was first sent: its void
# is taken as not made (SUNAT processes a RA or RC within minutes; it never voids one days later).
UNCONFIRMED_AFTER = dt.timedelta(hours=48)
# getStatus of a ticket SUNAT does not know (0127) or that is another RUC's (0126): asking again will not help.
TICKET_LOST = ("0126", "0127")
DEADLINE_DAYS = 7  # SUNAT takes a RA, and a RC, up to 7 days after the vouchers' issue date
# Affectation schemes of a voucher's TaxSubtotal → the RC's kind of operations (summaries.PAYMENT_KINDS).
_SCHEME_KINDS = {"1000": "gravadas", "1016": "gravadas", "9997": "exoneradas", "9998": "inafectas",
                 "9995": "exportacion", "9996": "gratuitas"}


@dataclass(frozen=True)
class VoucherOutcome:
    voucher_id: int
    serie_numero: str
    status: str


@dataclass(frozen=True)
class SummaryOutcome:
    """Where a RA/RC stands: pendiente (ticket waiting), terminado (accepted) or fallido (rejected or refused)."""

    summary_id: int
    emisor_ruc: str
    ident: str
    kind: str
    ticket: str | None
    state: str
    codigo: str | None
    descripcion: str | None
    xml_firmado: str
    vouchers: list[VoucherOutcome] = field(default_factory=list)
    cdr_zip: bytes | None = None
    aviso: str | None = None  # a warning in Spanish: an earlier baja of the voucher whose outcome was never learnt
    environment: str = ""  # the environment it was made in (its backup file's folder, backup_files)

    @property
    def accepted(self) -> bool:
        return self.state == SUBMISSION_DONE

    @property
    def received_without_ticket(self) -> bool:
        """SUNAT holds it (it answered 2403, 2324 or 2223 to the same summary sent again) and its ticket was lost:
        the outcome is learnt from the voucher status query."""
        return received_without_ticket(self.state, self.ticket, self.codigo)


def received_without_ticket(state: str, ticket: str | None, codigo: str | None) -> bool:
    """A pending summary without a ticket whose last answer says SUNAT holds it (ALREADY_RECEIVED)."""
    return state == SUBMISSION_PENDING and not ticket and codigo in ALREADY_RECEIVED


def ticket_named(text: str | None) -> str | None:
    """The ticket SUNAT names in a fault's text («… - Detalle: ticket: 201…, error: …»), or None (SUNAT's 2403 says
    «ticket: error: …», naming none)."""
    found = _TICKET_NAMED.search(text or "")
    return found.group(1) if found else None


def reports_vouchers(lines: list[dict]) -> bool:
    """Whether a summary's lines report vouchers to SUNAT (a RC's status 1 or 2), rather than only void them."""
    return any(line["condition"] != summaries.CONDITION_VOID for line in lines)


def status_once_accepted(condition: str) -> str:
    """The status a voucher takes once SUNAT accepted a RA/RC line of this condition: status 3 voids it; a boleta
    added (1) or modified (2) is informed to SUNAT."""
    return ANULADO if condition == summaries.CONDITION_VOID else ACEPTADO


def status_query_answers(tipo: str, serie: str) -> bool:
    """Whether SUNAT's voucher status query answers for this voucher: facturas and their notes of an F series only
    (0009/0010 for anything else), so a boleta's void is learnt from its ticket only."""
    return tipo in (FACTURA, *NOTES) and serie.upper().startswith("F")


def status_query_available(environment: str) -> bool:
    """Whether the environment has SUNAT's voucher status query (STATUS_QUERY_ENVIRONMENTS)."""
    return environment in STATUS_QUERY_ENVIRONMENTS


def unconfirmed_warning(name: str, kind: str, ident: str) -> str:
    """What «Anular» says of a voucher whose earlier baja SUNAT received but whose outcome was never learnt."""
    return (f"Atención: la {document_name(kind)} {ident} de {name} llegó a SUNAT, pero no se pudo confirmar si la "
            "aceptó (su respuesta se perdió), y se tomó como no hecha. Si SUNAT la aceptó, rechazará la nueva; "
            "compruébelo en SUNAT Operaciones en Línea antes de anular otra vez.")


def kind_for(tipo: str, serie: str) -> str:
    """RA for facturas and their notes (series F…), RC for boletas and their notes (series B…)."""
    if tipo == "01" or (tipo in ("07", "08") and serie.upper().startswith("F")):
        return "RA"
    if tipo == "03" or (tipo in ("07", "08") and serie.upper().startswith("B")):
        return "RC"
    raise invalid("voucher_id", f"El comprobante {serie} (tipo {tipo}) no se anula con una comunicación de baja ni "
                                "con un resumen diario.")


def document_name(kind: str) -> str:
    """The Spanish name of a RA or RC, as messages say it."""
    return "comunicación de baja" if kind == "RA" else "resumen diario"


def check_voidable(row: dict, motivo: str, pending_ident: str | None, today: dt.date) -> str:
    """The kind of document that voids this voucher, or the Spanish reason it cannot be voided now. `pending_ident`:
    the summary still waiting for SUNAT the voucher is in, if any."""
    name = f"{row['serie']}-{row['numero']}"
    if not motivo.strip():
        raise invalid("motivo", "El campo «motivo» es obligatorio: SUNAT pide el motivo de la baja.")
    if len(motivo.strip()) > summaries.MAX_REASON:
        raise invalid("motivo", f"El campo «motivo» tiene {len(motivo.strip())} caracteres: SUNAT acepta hasta "
                                f"{summaries.MAX_REASON}.")
    kind = kind_for(row["tipo"], row["serie"])
    if row["status"] == ANULADO:
        raise conflict("voucher_id", f"El comprobante {name} ya está anulado.")
    if pending_ident:  # a voucher SUNAT accepted is in a pending summary only to be voided: «Baja por confirmar»
        waiting = (": su baja está por confirmar («Baja por confirmar») y no se envía otra hasta conocerla"
                   if row["status"] in ACCEPTED else "")
        raise conflict("voucher_id", f"El comprobante {name} ya está en {pending_ident}, que espera la respuesta de "
                                     f"SUNAT{waiting}.")
    if row["status"] not in ACCEPTED:
        document = "una comunicación de baja" if kind == "RA" else "un resumen diario"
        raise conflict("voucher_id", f"El comprobante {name} no fue aceptado por SUNAT (estado «{row['status']}»): "
                                     f"no se puede anular con {document}.")
    issued = dt.date.fromisoformat(row["fecha_emision"][:10])
    age = (today - issued).days
    if age > DEADLINE_DAYS:
        raise conflict("voucher_id", f"El comprobante {name} se emitió el {issued:%d/%m/%Y}, hace {age} días: SUNAT "
                                     f"acepta la {document_name(kind)} solo hasta {DEADLINE_DAYS} días después de la "
                                     "emisión. Anúlelo con una nota de crédito.")
    return kind


def check_summary_day(fecha: dt.date, today: dt.date) -> None:
    """A day whose boletas can still be reported in a resumen diario: not in the future, at most 7 days ago."""
    age = (today - fecha).days
    if age > DEADLINE_DAYS:
        raise conflict("fecha", f"El {fecha:%d/%m/%Y} fue hace {age} días: SUNAT acepta el resumen diario de las "
                                f"boletas solo hasta {DEADLINE_DAYS} días después de su emisión.")
    if age < 0:
        raise invalid("fecha", f"La fecha {fecha:%d/%m/%Y} (campo «fecha») es futura.")


def nothing_to_report(fecha: dt.date) -> YupanaError:
    return not_found("fecha", f"No hay boletas firmadas del {fecha:%d/%m/%Y} por informar a SUNAT en un resumen "
                              "diario.")


def refused(outcome: SummaryOutcome) -> YupanaError:
    """The error of a RA/RC SUNAT refused at the front door (sendSummary answered a fault)."""
    text = outcome.descripcion or "sin descripción"
    return YupanaError(ErrorCode.UPSTREAM_REJECTED,
                       f"SUNAT no aceptó la {document_name(outcome.kind)} {outcome.ident} (código "
                       f"{outcome.codigo or 'sin código'}): {text}.",
                       [ErrorDetail("voucher_id", text, sunat_code=outcome.codigo or None)])


def _money(text: str | None) -> Decimal:
    try:
        return Decimal((text or "0").strip())
    except InvalidOperation:
        return Decimal(0)


def summary_line(row: dict, condition: str = summaries.CONDITION_VOID) -> summaries.SummaryLine:
    """The RC line of a stored boleta or note (status 3 voids it, 1 adds it): its totals read from its signed XML."""
    root = etree.fromstring(row["xml_firmado"].encode("utf-8"), safe_parser())
    cbc, cac = f"{{{CBC}}}", f"{{{CAC}}}"
    total_tax = root.find(f"{cac}TaxTotal")
    montos: dict[str, Decimal] = {}
    taxes: dict[str, Decimal] = {}  # by scheme: the IGV (1000) apart from the bag tax (7152) the total also holds
    for subtotal in (total_tax.findall(f"{cac}TaxSubtotal") if total_tax is not None else []):
        scheme = (subtotal.findtext(f"{cac}TaxCategory/{cac}TaxScheme/{cbc}ID") or "").strip()
        taxes[scheme] = taxes.get(scheme, Decimal(0)) + _money(subtotal.findtext(f"{cbc}TaxAmount"))
        kind = _SCHEME_KINDS.get(scheme)
        if kind:
            montos[kind] = montos.get(kind, Decimal(0)) + _money(subtotal.findtext(f"{cbc}TaxableAmount"))
    referencia = None
    reference = root.find(f"{cac}BillingReference/{cac}InvoiceDocumentReference")
    if reference is not None:
        serie, _, numero = (reference.findtext(f"{cbc}ID") or "").strip().partition("-")
        if numero.isdigit():
            referencia = summaries.Reference((reference.findtext(f"{cbc}DocumentTypeCode") or "03").strip(), serie,
                                             int(numero))
    return summaries.SummaryLine(row["tipo"], row["serie"], int(row["numero"]), condition,
                                 _money(row["total"]), taxes.get(summaries.IGV.code, Decimal(0)),
                                 row.get("receptor_tipo_documento") or "0", row.get("receptor_numero_documento") or "-",
                                 row["moneda"], montos, referencia, taxes.get(summaries.ICBPER.code, Decimal(0)))
