"""«Emitir»: generate → sign → send, run on a worker, reporting each step; also resend and export.

The outcome (its state, SUNAT's code and words, why it is pending) is decided by the core and shown here as it
comes (app.core.api.EmissionOutcome); the CDR's XML for reading comes from the core too (VoucherCdr.xml_text).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.api import ErrorCode, YupanaError, statuses, zip_document

if TYPE_CHECKING:
    from app.core.api import Emission, EmissionOutcome, EmissionStep, Engine, Voucher

ACEPTADO, NO_ENVIADO, OBSERVADO, PENDIENTE = (statuses.ACEPTADO, statuses.NO_ENVIADO, statuses.OBSERVADO,
                                              statuses.PENDIENTE)


def emit(engine: Engine, request: dict[str, Any], report: Callable[[Any], None], *,
         next_number: bool = False) -> EmissionOutcome:
    """«Emitir» through the engine (generate, sign by id, send to the environment in use at this moment), each
    step told to `report` as `(index, words)` as it starts; the outcome says how far it got (a rejection is an
    outcome, not a crash). `next_number`: numbered with the serie's next number when stored (the form's proposal)."""
    last: EmissionStep | None = None
    for last in engine.invoicing.issue_steps(request, next_number=next_number):
        if last.outcome is None:
            report((last.index, last.words))
    assert last is not None and last.outcome is not None  # the last step carries the outcome (a problem is raised)
    outcome = shown(last.outcome)
    if last.outcome.sent is not None:
        report((last.index, last.words))  # «Listo»: SUNAT answered with its CDR
    return outcome


def shown(emission: Emission) -> EmissionOutcome:
    """The core's outcome of a submission; a problem on this side (no clave SOL, no sandbox running) is raised."""
    if emission.outcome is None:
        assert emission.refusal is not None  # the core says why there is no outcome
        raise emission.refusal
    return emission.outcome


def plain_outcome(outcome: EmissionOutcome) -> tuple[str, str]:
    """(headline, explanation) in plain words for the shop owner."""
    estado = outcome.estado
    code = outcome.codigo_respuesta
    description = outcome.descripcion
    observations = outcome.observaciones
    name = outcome.nombre_archivo or "El comprobante"
    if estado == ACEPTADO:
        return "Aceptado por SUNAT", f"{name}: {description or 'SUNAT aceptó el comprobante.'} (código {code or 0})"
    if estado == OBSERVADO:
        lines = "\n".join(f"• {o}" for o in observations)
        return "Aceptado con observaciones", (f"{name}: SUNAT aceptó el comprobante pero anotó observaciones que "
                                              f"conviene corregir en los próximos:\n{lines}")
    if estado == PENDIENTE:
        return "Pendiente de envío", (f"{name} quedó firmado y guardado. Yupana lo enviará a SUNAT por su cuenta "
                                      "y su estado cambiará aquí: no hace falta volver a enviarlo. "
                                      f"Motivo: {outcome.motivo_pendiente}.")
    reason = description or "SUNAT no indicó el motivo."
    if estado == NO_ENVIADO:
        return "SUNAT no lo recibió", (f"{name} está firmado pero SUNAT no lo registró.\n"
                                       f"Motivo{f' (código {code})' if code else ''}: {reason}\n"
                                       "Corrija lo indicado y reenvíelo desde el detalle del comprobante; "
                                       "no necesita un número nuevo.")
    extra = "".join(f"\n• {o}" for o in observations)
    return "Rechazado por SUNAT", (f"{name} no es válido y no debe entregarse al cliente.\n"
                                   f"Motivo{f' (código {code})' if code else ''}: {reason}{extra}\n"
                                   "Corrija el dato y emita un comprobante nuevo.")


def resend(engine: Engine, voucher: Voucher) -> EmissionOutcome:
    """Operation 3 again for a signed voucher, by its id, in the environment in use (the only one it may go to)."""
    return shown(engine.invoicing.resend(voucher.id))


def export(record: dict[str, Any], folder: str | Path, what: str) -> Path:
    """Write the signed XML, the CDR or the zip SUNAT receives into `folder`; returns the file. `record` holds the
    voucher's `id`, `nombre_archivo`, `xml_firmado` (or `xml`) and its CDR's zip as stored, `cdr`
    (app.gui.voucher_detail.export_files)."""
    folder = Path(folder)
    name = record.get("nombre_archivo") or f"comprobante-{record.get('id')}"
    xml = record.get("xml_firmado") or record.get("xml") or ""
    if what == "xml":
        target = folder / f"{name}.xml"
        target.write_text(xml, encoding="utf-8")
    elif what == "cdr":
        data = record.get("cdr")
        if not data:
            raise YupanaError(ErrorCode.NOT_FOUND, "Este comprobante todavía no tiene CDR de SUNAT.")
        target = folder / f"R-{name}.zip"
        target.write_bytes(data)
    else:
        zip_name, data = zip_document(f"{name}.xml", xml.encode("utf-8"))
        target = folder / zip_name
        target.write_bytes(data)
    return target
