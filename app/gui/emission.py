"""«Emitir»: generate → sign → send, run on a worker, reporting each step; also resend and export."""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.api import ErrorCode, YupanaError, statuses, sunat_codes

if TYPE_CHECKING:
    from app.core.api import EmissionStep, Engine, EnviarResult, Voucher

ACEPTADO, NO_ENVIADO, OBSERVADO, PENDIENTE = (statuses.ACEPTADO, statuses.NO_ENVIADO, statuses.OBSERVADO,
                                              statuses.PENDIENTE)


def emit(engine: Engine, request: dict[str, Any], report: Callable[[Any], None]) -> dict[str, Any]:
    """«Emitir» through the engine (generate, sign by id, send to the environment in use at this moment), each
    step told to `report` as `(index, words)` as it starts; the outcome says how far it got (a rejection is an
    outcome, not a crash)."""
    last: EmissionStep | None = None
    for last in engine.invoicing.issue_steps(request):
        if last.outcome is None:
            report((last.index, last.words))
    emission = last.outcome if last is not None else None
    assert last is not None and emission is not None  # the last step carries the outcome (a problem is raised)
    outcome: dict[str, Any] = {"nombre_archivo": emission.nombre_archivo, "digest_value": emission.digest_value}
    exc = emission.refusal
    if exc is not None:
        if exc.code == ErrorCode.UPSTREAM_REJECTED:
            outcome.update(rejection(exc))
            return outcome
        if exc.code in PENDING_REASONS:
            # The API's message tells a client to send the same XML again; in the windows the queue does it.
            outcome.update(estado=PENDIENTE, descripcion=PENDING_REASONS[exc.code], observaciones=[])
            return outcome
        raise exc
    sent = emission.sent
    assert sent is not None  # no refusal: SUNAT answered
    report((last.index, last.words))  # «Listo»
    outcome.update(sent_outcome(sent))
    return outcome


def sent_outcome(sent: EnviarResult) -> dict[str, Any]:
    """Operation 3's answer as the windows keep it: the CDR's fields and its `estado` (always set: a CDR
    that says neither accepted, observed nor rejected comes back from operation 3 as an error)."""
    return sent.model_dump()


def rejection(exc: YupanaError) -> dict[str, Any]:
    """SUNAT refused the submission: a rejection spends the number; an exception (0100-1999) leaves it unsent."""
    codes = [d.sunat_code for d in exc.details if d.sunat_code]
    code = codes[0] if codes else ""
    return {"estado": sunat_codes.refusal_status(code), "codigo_respuesta": code,
            "descripcion": exc.message, "observaciones": [d.message for d in exc.details if d.message != exc.message]}


# Why a voucher is waiting for SUNAT, said once, for the windows (the outbox resends it by itself).
PENDING_REASONS = {
    ErrorCode.QUEUED: "SUNAT no respondió todavía (o ya se está enviando desde otra ventana)",
    ErrorCode.UPSTREAM_UNAVAILABLE: "SUNAT no está disponible en este momento",
    ErrorCode.UPSTREAM_TIMEOUT: "SUNAT tardó demasiado en responder",
}


def plain_outcome(outcome: dict[str, Any]) -> tuple[str, str]:
    """(headline, explanation) in plain words for the shop owner."""
    estado = outcome.get("estado", "")
    code = outcome.get("codigo_respuesta") or ""
    description = outcome.get("descripcion") or ""
    observations = outcome.get("observaciones") or []
    name = outcome.get("nombre_archivo", "El comprobante")
    if estado == ACEPTADO:
        return "Aceptado por SUNAT", f"{name}: {description or 'SUNAT aceptó el comprobante.'} (código {code or 0})"
    if estado == OBSERVADO:
        lines = "\n".join(f"• {o}" for o in observations)
        return "Aceptado con observaciones", (f"{name}: SUNAT aceptó el comprobante pero anotó observaciones que "
                                              f"conviene corregir en los próximos:\n{lines}")
    if estado == PENDIENTE:
        return "Pendiente de envío", (f"{name} quedó firmado y guardado. Yupana lo enviará a SUNAT por su cuenta "
                                      "y su estado cambiará aquí: no hace falta volver a enviarlo. "
                                      f"Motivo: {description}.")
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


def resend(engine: Engine, voucher: Voucher) -> dict[str, Any]:
    """Operation 3 again for a signed voucher, by its id, in the environment in use (the only one it may go to)."""
    outcome = {"nombre_archivo": voucher.nombre_archivo, "digest_value": voucher.digest_value}
    try:
        outcome.update(sent_outcome(engine.invoicing.resend(voucher.id)))
    except YupanaError as exc:
        if exc.code != ErrorCode.UPSTREAM_REJECTED:
            raise
        outcome.update(rejection(exc))
    return outcome


def cdr_bytes(record: dict[str, Any]) -> bytes | None:
    cdr = record.get("cdr")
    if not cdr:
        return None
    if isinstance(cdr, bytes):
        return cdr
    try:
        return base64.b64decode(cdr, validate=True)
    except ValueError:
        return cdr.encode("utf-8")


def cdr_text(record: dict[str, Any]) -> str:
    """The CDR's XML for reading (it arrives zipped and base64-encoded)."""
    if record.get("cdr_xml"):
        return record["cdr_xml"]
    data = cdr_bytes(record)
    if not data:
        return ""
    if data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [n for n in archive.namelist() if n.lower().endswith(".xml")]
            return archive.read(names[0]).decode("utf-8", errors="replace") if names else ""
    return data.decode("utf-8", errors="replace")


def export(record: dict[str, Any], folder: str | Path, what: str) -> Path:
    """Write the signed XML, the CDR or the zip SUNAT receives into `folder`; returns the file. `record` holds the
    voucher's `id`, `nombre_archivo`, `xml_firmado` (or `xml`) and its `cdr` (app.gui.voucher_detail.export_files)."""
    folder = Path(folder)
    name = record.get("nombre_archivo") or f"comprobante-{record.get('id')}"
    xml = record.get("xml_firmado") or record.get("xml") or ""
    if what == "xml":
        target = folder / f"{name}.xml"
        target.write_text(xml, encoding="utf-8")
    elif what == "cdr":
        data = cdr_bytes(record)
        if not data:
            raise YupanaError(ErrorCode.NOT_FOUND, "Este comprobante todavía no tiene CDR de SUNAT.")
        target = folder / (f"R-{name}.zip" if data[:2] == b"PK" else f"R-{name}.xml")
        target.write_bytes(data)
    else:
        target = folder / f"{name}.zip"
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(f"{name}.xml", xml)
    return target
