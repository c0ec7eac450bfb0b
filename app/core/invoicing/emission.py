"""«Emitir»: one voucher generated, signed by its id and submitted, the way the windows issue a sale.

The contract's operations 1-3 pass texts between them (a client holds only what the API returns); inside the
app a voucher goes by its id: generated once, signed by id with the issuer's default certificate (the same rule
as batches), sent by id. A refusal from SUNAT or a submission left in the queue is part of the outcome, not an
exception: the voucher exists, signed, whatever SUNAT said.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.core.errors import YupanaError
from app.core.invoicing.generation import Generation
from app.core.invoicing.signing import Signing
from app.core.invoicing.sunat import Submission
from app.core.records import Emission, EmissionStep

STEPS = ("Generando el XML…", "Firmando…", "Enviando a SUNAT…")
DONE = "Listo"


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
        signed = self.signing.sign_voucher(voucher_id, chosen)
        yield EmissionStep(2, STEPS[2])
        try:
            sent = self.submission.submit_voucher(voucher_id)
        except YupanaError as exc:
            yield EmissionStep(len(STEPS), DONE, Emission(voucher_id, generated.nombre_archivo, signed.digest_value,
                                                          None, exc))
            return
        yield EmissionStep(len(STEPS), DONE, Emission(voucher_id, generated.nombre_archivo, signed.digest_value, sent))

    def emit(self, payload: Any, certificado_id: str | None = None) -> Emission:
        """The steps run to the end: the outcome."""
        outcome = None
        for step in self.steps(payload, certificado_id):
            outcome = step.outcome
        assert outcome is not None  # the last step carries it (or a problem was raised)
        return outcome
