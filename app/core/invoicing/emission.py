"""«Emitir»: one voucher generated, signed by its id and submitted, the way the windows issue a sale.

The contract's operations 1-3 pass texts between them (a client holds only what the API returns); inside the
app a voucher goes by its id: generated once, signed by id with the issuer's default certificate (the same rule
as batches), sent from what signing read and wrote (its texts read once, one SUNAT client for its one sendBill).
A refusal from SUNAT or a submission left in the queue is part of the outcome, not an exception: the voucher
exists, signed, whatever SUNAT said.

The outcome's state is decided here, once, for «Emitir» and for a resend alike (`outcome_of`): the windows show it
as it comes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.core.contract import EnviarResult
from app.core.errors import ErrorCode, YupanaError, not_found
from app.core.invoicing import statuses, sunat_codes
from app.core.invoicing.generation import Generation
from app.core.invoicing.signing import Signing
from app.core.invoicing.sunat import Submission
from app.core.records import Emission, EmissionOutcome, EmissionStep

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


def emission_of(voucher_id: int, nombre_archivo: str, digest_value: str, sent: EnviarResult | None,
                refusal: YupanaError | None = None) -> Emission:
    return Emission(voucher_id, nombre_archivo, digest_value, sent, refusal,
                    outcome_of(nombre_archivo, digest_value, sent, refusal))


class Emitter:
    def __init__(self, generation: Generation, signing: Signing, submission: Submission) -> None:
        self.generation = generation
        self.signing = signing
        self.submission = submission

    def steps(self, payload: Any, certificado_id: str | None = None) -> Iterator[EmissionStep]:
        """Generate, sign and send, one item as each step starts and a last one with the outcome. Generation and
        signing problems raise (nothing to send); the submission's outcome is the last item either way."""
        yield EmissionStep(0, STEPS[0])
        request = self.generation.parse(payload)
        doc = self.generation.build(request)  # the request's own problems first, named by field, then the certificate
        chosen = self.signing.chosen_certificate(certificado_id, request.emisor.ruc)  # none: nothing is stored
        voucher_id, generated = self.generation.generate(request, doc)
        yield EmissionStep(1, STEPS[1])
        signed, row = self.signing.sign_stored(voucher_id, chosen)  # the voucher's texts, read once
        yield EmissionStep(2, STEPS[2])
        try:
            sent = self.submission.submit_signed(row, signed.xml_firmado, signed.digest_value)
        except YupanaError as exc:
            yield EmissionStep(len(STEPS), DONE, emission_of(voucher_id, generated.nombre_archivo,
                                                             signed.digest_value, None, exc))
            return
        yield EmissionStep(len(STEPS), DONE, emission_of(voucher_id, generated.nombre_archivo, signed.digest_value,
                                                         sent))

    def emit(self, payload: Any, certificado_id: str | None = None) -> Emission:
        """The steps run to the end: the outcome."""
        outcome = None
        for step in self.steps(payload, certificado_id):
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
