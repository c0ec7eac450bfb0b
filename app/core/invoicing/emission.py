"""«Emitir»: one voucher generated, signed by its id and submitted, the way the windows issue a sale.

The contract's operations 1-3 pass texts between them (a client holds only what the API returns); inside the
app a voucher goes by its id: generated once, signed by id with the issuer's default certificate (the same rule
as batches), sent by id. A refusal from SUNAT or a submission left in the queue is part of the outcome, not an
exception: the voucher exists, signed, whatever SUNAT said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.contract import EnviarResult
from app.core.errors import YupanaError
from app.core.invoicing.generation import Generation
from app.core.invoicing.signing import Signing
from app.core.invoicing.sunat import Submission

STEPS = ("Generando el XML…", "Firmando…", "Enviando a SUNAT…")


@dataclass(frozen=True)
class Emission:
    voucher_id: int
    nombre_archivo: str
    digest_value: str
    sent: EnviarResult | None  # SUNAT's answer (accepted, observed or rejected in a CDR)
    refusal: YupanaError | None = None  # or why there is none yet: a fault, the queue, SUNAT out of reach


class Emitter:
    def __init__(self, generation: Generation, signing: Signing, submission: Submission) -> None:
        self.generation = generation
        self.signing = signing
        self.submission = submission

    def emit(self, payload: Any, certificado_id: str | None = None,
             step: Callable[[int, str], Any] | None = None) -> Emission:
        """Generate, sign and send; `step(index, words)` is told as each step starts. Generation and signing
        problems raise (nothing to send); the submission's outcome is returned either way."""
        report = step or (lambda index, words: None)
        report(0, STEPS[0])
        request = self.generation.parse(payload)
        doc = self.generation.build(request)  # the request's own problems first, named by field, then the certificate
        chosen = self.signing.chosen_certificate(certificado_id, request.emisor.ruc)  # none: nothing is stored
        voucher_id, generated = self.generation.generate(request, doc)
        report(1, STEPS[1])
        signed = self.signing.sign_voucher(voucher_id, chosen)
        report(2, STEPS[2])
        try:
            sent = self.submission.submit_voucher(voucher_id)
        except YupanaError as exc:
            return Emission(voucher_id, generated.nombre_archivo, signed.digest_value, None, exc)
        return Emission(voucher_id, generated.nombre_archivo, signed.digest_value, sent)
