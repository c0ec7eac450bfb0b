"""«Emitir»: one voucher generated, signed and submitted, the way the windows issue a sale.

The contract's operations 1-3 pass texts between them (a client holds only what the API returns); inside the
app a voucher is built and signed in memory with the issuer's default certificate (the same rule as batches), then
stored with its submission in one durable commit (issue 33: the voucher, signed, its outbox row claimed and marked
as sending), and sent from memory: nothing written is read back, one SUNAT client for its one sendBill, one commit
with the CDR. A refusal from SUNAT or a submission left in the queue is part of the outcome, not an exception: the
voucher exists, signed, whatever SUNAT said. A number issued before with the same request goes by its id.

The outcome's state is decided here, once, for «Emitir» and for a resend alike (`outcome_of`): the windows show it
as it comes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from app.core.contract import EnviarResult
from app.core.errors import ErrorCode, YupanaError, not_found
from app.core.invoicing import statuses, sunat_codes
from app.core.invoicing.documents.kind import Channel
from app.core.invoicing.generation import Draft, Generation, Stored
from app.core.invoicing.outbox import Held
from app.core.invoicing.signing import Signing
from app.core.invoicing.statuses import ENVIADO, FIRMADO
from app.core.invoicing.sunat import Submission
from app.core.invoicing.ubl_identity import DocumentId
from app.core.invoicing.voucher_store import NumberTaken
from app.core.invoicing.xmldsig import CanonicalSignature, sign_canonical
from app.core.records import Emission, EmissionOutcome, EmissionStep

T = TypeVar("T")

STEPS = ("Generando el XML…", "Firmando…", "Enviando a SUNAT…")
DONE = "Listo"

# Why a voucher waits for SUNAT, in the words the windows show (the outbox sends it by itself). Operation 3's
# message tells an API client to send the same XML again; a person has nothing to do.
PENDING_REASONS = {
    ErrorCode.QUEUED: "SUNAT no respondió todavía (o ya se está enviando desde otra ventana)",
    ErrorCode.UPSTREAM_UNAVAILABLE: "SUNAT no está disponible en este momento",
    ErrorCode.UPSTREAM_TIMEOUT: "SUNAT tardó demasiado en responder",
}


def outcome_of(nombre_archivo: str, digest_value: str, sent: EnviarResult | None,
               refusal: YupanaError | None = None) -> EmissionOutcome | None:
    """What a submission came to: SUNAT's CDR (its `estado` is the one the outbox stored on the voucher), a SOAP
    fault (a rejection spends the number, an exception leaves it unsent), or the queue. None for a problem on this
    side (no clave SOL, no sandbox running: nothing went out)."""
    if sent is not None:
        assert sent.estado is not None  # a CDR that is neither accepted, observed nor rejected comes as a fault
        return EmissionOutcome(sent.estado, nombre_archivo, digest_value, sent.codigo_respuesta, sent.descripcion,
                               list(sent.observaciones))
    assert refusal is not None  # no answer: the reason why
    if refusal.code == ErrorCode.UPSTREAM_REJECTED:
        code = next((d.sunat_code for d in refusal.details if d.sunat_code), "")
        return EmissionOutcome(sunat_codes.refusal_status(code), nombre_archivo, digest_value, code, refusal.message,
                               [d.message for d in refusal.details if d.message != refusal.message])
    if refusal.code in PENDING_REASONS:
        return EmissionOutcome(statuses.PENDIENTE, nombre_archivo, digest_value,
                               motivo_pendiente=PENDING_REASONS[refusal.code])
    return None


# How many numbers «Emitir» with the serie's next number tries while operation 1 keeps storing them meanwhile.
_RENUMBER_TRIES = 5


@dataclass(frozen=True)
class Signed:
    """A draft and its signature, made in memory: what «Emitir» stores."""

    draft: Draft
    signature: CanonicalSignature


def _numbered(request: Any, numero: int) -> Any:
    """The request (the contract's model, or a document type's own) with another number."""
    return request.model_copy(update={"numero": numero})


def _identity(doc: Any) -> DocumentId:
    return DocumentId(doc.emisor_ruc, doc.tipo, doc.serie, str(doc.numero))


def _outcome(voucher_id: int, nombre_archivo: str, digest_value: str,
             send: Callable[[], EnviarResult]) -> EmissionStep:
    """The last step: what `send` came to (SUNAT's refusal and the queue included)."""
    try:
        sent = send()
    except YupanaError as exc:
        return EmissionStep(len(STEPS), DONE, emission_of(voucher_id, nombre_archivo, digest_value, None, exc))
    return EmissionStep(len(STEPS), DONE, emission_of(voucher_id, nombre_archivo, digest_value, sent))


def emission_of(voucher_id: int, nombre_archivo: str, digest_value: str, sent: EnviarResult | None,
                refusal: YupanaError | None = None) -> Emission:
    return Emission(voucher_id, nombre_archivo, digest_value, sent, refusal,
                    outcome_of(nombre_archivo, digest_value, sent, refusal))


class Emitter:
    def __init__(self, generation: Generation, signing: Signing, submission: Submission) -> None:
        self.generation = generation
        self.signing = signing
        self.submission = submission

    def steps(self, payload: Any, certificado_id: str | None = None, *,
              next_number: bool = False) -> Iterator[EmissionStep]:
        """Generate, sign and send, one item as each step starts and a last one with the outcome. Generation and
        signing problems raise (nothing to send, nothing stored); the submission's outcome is the last item either
        way. A new voucher is built and signed in memory, then stored in one durable commit with its submission,
        claimed and marked as sending, and posted: nothing written is read back (docs/architecture.md, «One
        voucher, from the form to the CDR»).

        `next_number`: the request's number is replaced by the serie's next one, handed out in the commit that stores
        the voucher (desks issuing on one serie at once: no number twice, no gap). The voucher is built and signed
        first with the number after the serie's last stored one, and again, under the serie's lock, only when another
        desk took that number meanwhile."""
        yield EmissionStep(0, STEPS[0])
        # The issuer, the settings and the default certificate are read as a batch's block reads them: other writers
        # checked once per step, not at every read (Database.steady_reads)
        with self.generation.store.storage.steady_reads():
            request = self.generation.parse(payload)
            if next_number:  # a guess, checked when stored
                request = _numbered(request, self.generation.store.next_numero(request.emisor.ruc, request.tipo,
                                                                             request.serie))
            doc = self.generation.build(request)  # the request's own problems first, named by field, then the certificate
            chosen = self.signing.chosen_certificate(certificado_id, request.emisor.ruc)  # none: nothing is stored
            draft = self.generation.draft(request, doc, numbered=next_number)
        if isinstance(draft, Stored):  # issued before with this same request: signed and sent by its id
            yield from self._by_id(draft.voucher_id, draft.result.nombre_archivo, chosen)
            return
        yield EmissionStep(1, STEPS[1])
        try:
            with self.generation.store.storage.steady_reads():
                voucher_id, held, channel, made = self._sign_and_store(draft, chosen,
                                                                       request if next_number else None)
        except NumberTaken as taken:  # issued by another thread meanwhile: that voucher answers, by its id
            stored = self.generation.stored_or_raise(request, draft.content_key, taken)
            yield from self._by_id(stored.voucher_id, stored.result.nombre_archivo, chosen)
            return
        draft, signed = made.draft, made.signature
        yield EmissionStep(2, STEPS[2])
        if held is not None and channel is not None:
            outbox, ident = self.submission.outbox, _identity(draft.doc)
            yield _outcome(voucher_id, draft.name, signed.digest_value, lambda: self._steadily(
                lambda: self.submission.answer_of(ident, held.row["id"], outbox.send_held(held, channel))))
            return
        row = {"id": voucher_id, "emisor_ruc": draft.doc.emisor_ruc, "tipo": draft.doc.tipo, "serie": draft.doc.serie,
               "numero": draft.doc.numero, "environment": self.generation.store.environment()}
        yield _outcome(voucher_id, draft.name, signed.digest_value,  # no channel (said by submit_signed) or a rare race
                       lambda: self._steadily(lambda: self.submission.submit_signed(row, signed.xml,
                                                                                    signed.digest_value)))

    def _steadily(self, send: Callable[[], T]) -> T:
        """The send step with other writers checked once (the SOL credentials, the addresses, the time-outs are read
        as the other steps read theirs), not at each read: on PostgreSQL each check is a round trip to the server."""
        with self.generation.store.storage.steady_reads():
            return send()

    def _sign_and_store(self, draft: Draft, chosen: str,
                        numbered: Any = None) -> tuple[int, Held | None, Channel | None, Signed]:
        """The draft signed in memory with `chosen` (checked first: it may sign this issuer's vouchers now), then
        stored (`_store`). `numbered`: the request, numbered when stored with the serie's next number (built and
        signed again when that is not the draft's)."""
        info, key, certificate = self.signing.certificate_for(chosen, draft.doc.emisor_ruc)
        algorithm = self.signing.settings.get("signature_algorithm")

        def sign(numero: int | None = None) -> Signed:
            current = draft
            if numero is not None and numero != draft.doc.numero:  # another desk took the guessed number
                request = _numbered(numbered, numero)
                renumbered = self.generation.draft(request, self.generation.build(request), numbered=True)
                assert isinstance(renumbered, Draft)  # numbered: never a stored voucher
                current = renumbered
            return Signed(current, sign_canonical(current.xml, key, certificate, algorithm=algorithm,
                                                  encoded=current.encoded))

        return self._store(sign, info.certificado_id, numbered is not None)

    def _store(self, sign: Callable[[int | None], Signed], certificado_id: str,
               numbered: bool = False) -> tuple[int, Held | None, Channel | None, Signed]:
        """One durable commit: the voucher, signed, with its submission claimed and marked as sending (and its
        customer remembered). (voucher id, the held submission, its channel, what was stored); no submission when
        there is no channel (no clave SOL, no sandbox running: said when sending) or the serie-número has one
        (operation 3 before). `sign(numero)`: the draft signed (numbered `numero` unless None); `numbered`: the
        number is taken from the serie inside the commit (`_add_numbered`)."""
        environment = self.submission.clients.addresses.current()
        signed = sign(None)
        ident = _identity(signed.draft.doc)
        try:
            channel: Channel | None = self.submission.channel(environment, ident)
        except YupanaError:
            channel = None
        store, outbox = self.generation.store, self.submission.outbox
        held: Held | None = None
        sending = channel is not None and store.environment() == environment
        try:
            with store.keeping(), store.storage.transaction(durable=True):  # number, signature, submission at once
                status = ENVIADO if sending else FIRMADO
                if numbered:
                    voucher_id, signed = self._add_numbered(sign, signed.draft.doc, certificado_id, status)
                    ident = _identity(signed.draft.doc)
                else:
                    voucher_id = self.generation.add(signed.draft, signed.signature, certificado_id, status)
                held = outbox.hold_new(ident, voucher_id, environment, signed.signature.digest_value,
                                       signed.signature.xml.encode("utf-8")) if sending else None
                if sending and held is None:  # the serie-número's submission exists: sent by `submit_signed`
                    store.write_status(voucher_id, FIRMADO)
                self.generation.issued([signed.draft.doc])  # customers remembered in the same commit
        except BaseException:
            if held is not None:
                outbox.let_go(held)
            raise
        store.on_change(voucher_id, ENVIADO if held is not None else FIRMADO)
        return voucher_id, held, channel, signed

    def _add_numbered(self, sign: Callable[[int | None], Signed], guess: Any, certificado_id: str,
                      status: str) -> tuple[int, Signed]:
        """Inside the storing transaction: the serie's next number taken (its row locked until the commit), the
        draft numbered and signed with it, stored. A number stored meanwhile by operation 1 with the caller's own
        number (outside the numbering) moves the serie on: the next one is taken."""
        for _ in range(_RENUMBER_TRIES):
            signed = sign(self.generation.store.take_numero(guess.emisor_ruc, guess.tipo, guess.serie))
            try:
                return self.generation.add(signed.draft, signed.signature, certificado_id, status), signed
            except NumberTaken:
                continue
        raise NumberTaken(guess.serie, guess.numero)

    def _by_id(self, voucher_id: int, nombre_archivo: str, chosen: str) -> Iterator[EmissionStep]:
        """A stored voucher signed by its id (its stored signature when it has one) and sent."""
        yield EmissionStep(1, STEPS[1])
        signed, row = self.signing.sign_stored(voucher_id, chosen)  # the voucher's texts, read once
        yield EmissionStep(2, STEPS[2])
        yield _outcome(voucher_id, nombre_archivo, signed.digest_value,
                       lambda: self.submission.submit_signed(row, signed.xml_firmado, signed.digest_value))

    def emit(self, payload: Any, certificado_id: str | None = None, *, next_number: bool = False) -> Emission:
        """The steps run to the end: the outcome."""
        outcome = None
        for step in self.steps(payload, certificado_id, next_number=next_number):
            outcome = step.outcome
        assert outcome is not None  # the last step carries it (or a problem was raised)
        return outcome

    def resend(self, voucher_id: int) -> Emission:
        """Operation 3 again for a stored, signed voucher, by its id, to the current environment (its own): the same
        result as «Emitir», SUNAT's refusal and the queue included. A problem on this side (not signed, no clave
        SOL, no sandbox running, another environment's voucher) is raised: nothing went out."""
        row = self.submission.store.get(voucher_id)
        if row is None:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        try:
            sent = self.submission.submit_signed(row, row.get("xml_firmado"), row["digest_value"])
        except YupanaError as exc:
            emission = emission_of(voucher_id, row["nombre_archivo"], row["digest_value"], None, exc)
            if emission.outcome is None:
                raise
            return emission
        return emission_of(voucher_id, row["nombre_archivo"], row["digest_value"], sent)
