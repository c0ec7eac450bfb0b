"""What must hold after a soak, as pure functions over what was observed (no process, no server, no clock).

Every check takes an `Observed` and returns a `Check`: its violations (the run fails on any) and the cases listed
apart (they pass, but the table names them: a void whose summary's answer the fault injector dropped stays «Baja
por confirmar», as docs/sunat.md says it must). Vouchers are named by `key(tipo, serie, numero)`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.api import statuses

# SUNAT's ticket outcomes as the sandbox reports them, in the soak's words
TICKET_ACCEPTED, TICKET_REJECTED, TICKET_PENDING = "accepted", "rejected", "pending"
VOID, ADD = "3", "1"  # a summary line's ConditionCode: voided (every RA line), added (a boleta reported in a RC)
SUNAT_OUTCOMES = {statuses.ACEPTADO: statuses.ACCEPTED, statuses.OBSERVADO: statuses.ACCEPTED,
                  statuses.RECHAZADO: (statuses.RECHAZADO,), statuses.ANULADO: (statuses.ANULADO,)}
UNFINISHED = (statuses.GENERADO, statuses.FIRMADO, statuses.ENVIADO, statuses.PENDIENTE)
OPEN_SUMMARY = (statuses.SUBMISSION_PENDING,)  # sin_confirmar is an outcome: taken as not made
MEMORY_GROWTH = 1.20  # the app's memory at the end against 30 s into the quiet phase


def key(tipo: str, serie: str, numero: int | str) -> str:
    return f"{tipo}-{serie}-{int(numero)}"


def is_boleta(voucher_key: str) -> bool:
    """Boletas and their notes: the series starts with B (they reach SUNAT alone or in a daily summary)."""
    return voucher_key.split("-")[1].upper().startswith("B")


@dataclass(frozen=True)
class TicketLine:
    key: str
    estado: str  # VOID, ADD, or "2" (modified)


@dataclass(frozen=True)
class SunatTicket:
    """A RA or RC the SUNAT sandbox received (a ticket was issued), whatever became of its answer."""

    ident: str  # RA-YYYYMMDD-N / RC-YYYYMMDD-N
    kind: str
    status: str  # TICKET_ACCEPTED, TICKET_REJECTED, TICKET_PENDING
    lines: tuple[TicketLine, ...]


@dataclass(frozen=True)
class AppVoucher:
    key: str
    status: str
    hash: str | None = None
    void_pending: str | None = None  # the RA/RC whose outcome is unknown: «Baja por confirmar»

    @property
    def name(self) -> str:
        _tipo, serie, numero = self.key.split("-")
        return f"{serie}-{numero}"


@dataclass(frozen=True)
class AppSummary:
    ident: str
    state: str
    vouchers: tuple[str, ...]  # SERIE-NUMERO of each voucher it covers


@dataclass
class Observed:
    """Everything the checks read: SUNAT's side (the sandbox), the app's (its data folder), the soak's own."""

    sendbill_registered: dict[str, int] = field(default_factory=dict)  # key -> registered by sendBill
    sendbill_received: dict[str, int] = field(default_factory=dict)  # key -> sendBill calls received
    tickets: list[SunatTicket] = field(default_factory=list)
    sunat_status: dict[str, str | None] = field(default_factory=dict)  # key -> aceptado/…/anulado, None: unknown
    dropped_summaries: set[str] = field(default_factory=set)  # idents whose sendSummary answer the injector dropped
    app_vouchers: list[AppVoucher] = field(default_factory=list)
    app_summaries: list[AppSummary] = field(default_factory=list)
    outbox_pending: int = 0
    issued: dict[str, str] = field(default_factory=dict)  # key -> hash the app answered when the soak issued it
    reused_numbers: list[str] = field(default_factory=list)  # another content accepted under an issued number
    acked_webhooks: set[str] = field(default_factory=set)  # gateway message ids the listener answered 2xx
    stored_messages: dict[str, list[str]] = field(default_factory=dict)  # gateway id -> stored message ids
    forwarded: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # subscriber -> message id -> webhook-ids
    memory_kb: tuple[int, int] | None = None  # (30 s into the quiet phase, at the end)
    errors: list[str] = field(default_factory=list)  # an INTERNAL 500, a traceback, a worker of the soak that broke


@dataclass
class Check:
    name: str
    what: str
    violations: list[str] = field(default_factory=list)
    apart: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.violations


def _lost_answer(observed: Observed) -> Callable[[AppVoucher], str | None]:
    """The summary with a dropped answer that explains why a voucher is still open, or None."""
    covering = defaultdict(set)
    for summary in observed.app_summaries:
        for name in summary.vouchers:
            covering[name].add(summary.ident)

    def explained(voucher: AppVoucher) -> str | None:
        candidates = {voucher.void_pending} if voucher.void_pending else covering[voucher.name]
        dropped = sorted(c for c in candidates if c in observed.dropped_summaries)
        return dropped[0] if dropped else None

    return explained


def sunat_once(observed: Observed) -> Check:
    check = Check("sunat_once", "cada comprobante aceptado o rechazado una sola vez en SUNAT, con el estado que la app "
                                "guarda")
    explained = _lost_answer(observed)
    in_summaries = Counter(line.key for ticket in observed.tickets if ticket.status == TICKET_ACCEPTED
                           for line in ticket.lines if line.estado in (ADD, "2"))
    known = {voucher.key for voucher in observed.app_vouchers}
    for voucher in observed.app_vouchers:
        if voucher.status not in SUNAT_OUTCOMES:
            continue  # still open: `settled` says so
        times = observed.sendbill_registered.get(voucher.key, 0) + in_summaries[voucher.key]
        if times != 1:
            check.violations.append(f"{voucher.key}: registrado {times} veces en SUNAT")
        at_sunat = observed.sunat_status.get(voucher.key)
        if at_sunat not in SUNAT_OUTCOMES[voucher.status]:
            mismatch = f"{voucher.key}: la app dice {voucher.status}, SUNAT {at_sunat}"
            lost = explained(voucher)  # SUNAT processed a summary whose answer never came: the app cannot know
            if lost:
                check.apart.append(f"{mismatch} ({lost}: respuesta perdida por el inyector)")
            else:
                check.violations.append(mismatch)
    for stem, times in sorted(observed.sendbill_registered.items()):
        if times and stem not in known:
            check.violations.append(f"{stem}: registrado en SUNAT, desconocido en la app")
    return check


def one_void(observed: Observed) -> Check:
    check = Check("one_void", "ningún comprobante en dos bajas (RA/RC con estado 3) no rechazadas")
    voids = defaultdict(list)
    for ticket in observed.tickets:
        if ticket.status == TICKET_REJECTED:
            continue
        for line in ticket.lines:
            if ticket.kind == "RA" or line.estado == VOID:
                voids[line.key].append(ticket.ident)
    check.violations += [f"{k}: en {', '.join(sorted(set(idents)))}" for k, idents in sorted(voids.items())
                         if len(idents) > 1]
    return check


def one_path(observed: Observed) -> Check:
    check = Check("one_path", "ninguna boleta enviada sola y también en un resumen diario (estado 1)")
    summarised = defaultdict(set)
    for ticket in observed.tickets:
        if ticket.kind == "RC":
            for line in ticket.lines:
                if line.estado == ADD:
                    summarised[line.key].add(ticket.ident)
    for boleta, idents in sorted(summarised.items()):
        if is_boleta(boleta) and observed.sendbill_received.get(boleta, 0):
            check.violations.append(f"{boleta}: enviada sola y en {', '.join(sorted(idents))}")
    return check


def numbers(observed: Observed) -> Check:
    check = Check("numbers", "ningún número usado dos veces")
    counts = Counter(voucher.key for voucher in observed.app_vouchers)
    check.violations += [f"{k}: {n} comprobantes con ese número" for k, n in sorted(counts.items()) if n > 1]
    held = {voucher.key: voucher.hash for voucher in observed.app_vouchers}
    for voucher_key, digest in sorted(observed.issued.items()):
        if voucher_key not in held:
            check.violations.append(f"{voucher_key}: emitido, ausente en la app")
        elif held[voucher_key] != digest:
            check.violations.append(f"{voucher_key}: la app guarda otro contenido que el emitido")
    check.violations += [f"{k}: aceptado con otro contenido" for k in observed.reused_numbers]
    return check


def webhooks(observed: Observed) -> Check:
    check = Check("webhooks", "cada webhook confirmado guardado una vez y reenviado a cada suscriptor con un solo "
                              "webhook-id")
    for gateway_id in sorted(observed.acked_webhooks):
        stored = observed.stored_messages.get(gateway_id, [])
        if len(stored) != 1:
            check.violations.append(f"{gateway_id}: guardado {len(stored)} veces")
            if not stored:
                continue
        for subscriber, received in sorted(observed.forwarded.items()):
            ids = received.get(stored[0], set()) | received.get(gateway_id, set())
            if not ids:
                check.violations.append(f"{gateway_id}: nunca llegó a {subscriber}")
            elif len(ids) > 1:
                check.violations.append(f"{gateway_id}: llegó a {subscriber} con {len(ids)} webhook-id distintos")
    return check


def settled(observed: Observed) -> Check:
    check = Check("settled", "nada pendiente: cola de envíos, comprobantes y resúmenes (una baja por confirmar pasa "
                             "solo si el inyector perdió la respuesta de su resumen)")
    explained = _lost_answer(observed)
    if observed.outbox_pending:
        check.violations.append(f"{observed.outbox_pending} envíos a SUNAT aún en cola")
    for voucher in observed.app_vouchers:
        if voucher.status not in UNFINISHED and not voucher.void_pending:
            continue
        what = "baja por confirmar" if voucher.void_pending else voucher.status
        lost = explained(voucher)
        if lost:
            check.apart.append(f"{voucher.key}: {what} ({lost}: respuesta perdida por el inyector)")
        else:
            check.violations.append(f"{voucher.key}: {what}")
    accepted_at_sunat = {t.ident for t in observed.tickets if t.status == TICKET_ACCEPTED}
    for summary in observed.app_summaries:
        if summary.state in OPEN_SUMMARY and summary.ident not in observed.dropped_summaries:
            check.violations.append(f"{summary.ident}: {summary.state}")
        elif summary.state == statuses.SUBMISSION_FAILED and summary.ident in accepted_at_sunat:
            check.violations.append(f"{summary.ident}: fallido en la app, aceptado por SUNAT")
    return check


def memory(observed: Observed) -> Check:
    check = Check("memory", f"memoria final de la app ≤ {MEMORY_GROWTH:.0%} de la de 30 s en la fase tranquila")
    if observed.memory_kb is None:
        check.violations.append("no se midió la memoria de la app")
        return check
    base, end = observed.memory_kb
    if end > base * MEMORY_GROWTH:
        check.violations.append(f"{base / 1024:.1f} MB → {end / 1024:.1f} MB (+{(end / base - 1):.0%})")
    return check


def no_errors(observed: Observed) -> Check:
    check = Check("no_errors", "ninguna respuesta INTERNAL (500) ni traza de error en los comandos")
    check.violations += observed.errors
    return check


CHECKS = (sunat_once, one_void, one_path, numbers, webhooks, settled, memory, no_errors)


def run_all(observed: Observed) -> list[Check]:
    return [check(observed) for check in CHECKS]
