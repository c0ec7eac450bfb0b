"""After a restore, the RA and RC made after the backup read back from the files the backup folder received as they
were made (backup_files: `resumenes/ENTORNO/RUC-RA-AAAAMMDD-N.xml`, SUNAT's answer `R-….xml` beside it once there is
one; issue 35, item 2), so a void made on the lost PC is not undone by the restore.

Read after the vouchers' files (recovered.py: a voucher issued after the backup is there by then), each in the
environment it was recorded in, as the vouchers are (the legacy `resumenes/RUC-….xml` as the current environment's):

- one the restored database holds with its outcome is left alone; one it holds still waiting for SUNAT takes the
  answer in the folder, when there is one (else its ticket is followed as any pending one is);
- one it lacks, whose answer is in the folder, is stored again (its signature verified first, byte for byte, its
  lines naming the vouchers of the database) with that answer: accepted, its vouchers take the status an accepted
  RA/RC gives (`rules.status_once_accepted`: `anulado` for a void) as when its ticket is answered; rejected, it is
  `fallido` with SUNAT's code. Stored, it counts for the day's RA/RC numbering too;
- one without an answer in the folder (sent and the PC died before SUNAT's answer was written, or never sent) is not
  stored nor guessed: it is named for the person, whose vouchers stay as the backup has them.

The answer is the CDR's ApplicationResponse (cdr.read_xml), accepted as a ticket's is (its code aceptado or
observado), and only when it answers that very RA/RC (its ReferenceID).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lxml import etree

from app.core.errors import YupanaError
from app.core.invoicing import cdr as cdr_module
from app.core.invoicing import summaries
from app.core.invoicing.backup_files import summary_files
from app.core.invoicing.recovered import RecoveredFiles
from app.core.invoicing.statuses import ACCEPTED, SUBMISSION_DONE, SUBMISSION_FAILED, SUBMISSION_PENDING
from app.core.invoicing.voids.book import record_answer
from app.core.invoicing.voids.rules import document_name, status_once_accepted
from app.core.invoicing.xmldsig import verify_xml
from app.core.platform.environments import NAMES
from app.core.storage.ports.summaries import SummaryEntry

log = logging.getLogger(__name__)

SUMMARY_FILE = re.compile(r"^(\d{11})-(RA|RC)-(\d{8})-(\d{1,5})\.xml$")


def recorded_summary_files(folder: str | Path | None, current: str) -> list[tuple[str, Path]]:
    """The RA/RC files of a backup folder with the environment each was recorded in (the legacy ones with none as
    `current`'s), oldest counter first."""
    found = [(current, path) for path in summary_files(folder, current)]
    for name in NAMES:
        if name != current:
            found += [(name, path) for path in summary_files(folder, name) if path.parent.name == name]
    return sorted(((environment, path) for environment, path in found if SUMMARY_FILE.match(path.name)),
                  key=_order)


def _order(item: tuple[str, Path]) -> tuple[str, str, str, str, int]:
    """Environment, RUC, day, kind, then the counter as a number (RA-…-10 after RA-…-9)."""
    match = SUMMARY_FILE.match(item[1].name)
    assert match is not None  # only those are sorted
    return item[0], match.group(1), match.group(3), match.group(2), int(match.group(4))


def read_back_summaries(store: Any, repository: Any, recorded: list[tuple[str, Path]], result: RecoveredFiles) -> None:
    """Store the RA/RC of a backup folder's files (`recorded_summary_files`) that the database lacks or holds
    unanswered (module doc), adding to `result` what was recorded, the vouchers voided and what is unknown. `store` is
    the VoucherStore, `repository` the SummaryRepository."""
    current = store.environment()
    for environment, path in recorded:
        match = SUMMARY_FILE.match(path.name)
        if match is None:
            continue
        ruc, ident = match.group(1), f"{match.group(2)}-{match.group(3)}-{int(match.group(4))}"
        suffix = "" if environment == current else f" ({environment})"
        name = ident + suffix
        known = repository.find(environment, ruc, ident)
        if known is not None and known["state"] != SUBMISSION_PENDING:
            continue  # the backup has its outcome
        answer, why = _answer_of(path, ident)
        if known is not None:
            if answer is not None:  # waiting in the backup, answered after it
                with store.storage.transaction(durable=True):
                    _record(store, repository, known["id"], ruc, ident, answer)
                _told(result, name, suffix, answer, repository.lines(known["id"]))
            continue
        try:
            data = path.read_bytes()
            read = _read(data, ruc, ident)
        except (ValueError, etree.XMLSyntaxError, OSError) as exc:
            result.skipped.append(f"{name}: el archivo no se puede leer ({exc})")
            continue
        if isinstance(read, str):
            result.skipped.append(f"{name}: {read}")
            continue
        if answer is None:
            result.unknown_summaries.append(_unknown(name, read, why))
            continue
        entries = _entries(store, environment, ruc, read, name, result)
        if not entries:
            continue
        with store.storage.transaction(durable=True):
            summary_id = repository.add(
                environment=environment, emisor_ruc=ruc, kind=read.kind, ident=ident,
                issue_date=read.issue_date.isoformat(), counter=int(match.group(4)),
                reference_date=read.reference_date.isoformat(), xml_firmado=data.decode("utf-8"),
                lines=entries)
            _record(store, repository, summary_id, ruc, ident, answer)
        _told(result, name, suffix, answer, repository.lines(summary_id))


def _answer_of(path: Path, ident: str) -> tuple[cdr_module.Cdr | None, str]:
    """SUNAT's answer beside a RA/RC file, or None and why (Spanish)."""
    beside = path.with_name(f"R-{path.name}")
    if not beside.is_file():
        return None, "no llegó a escribirse"
    try:
        answer = cdr_module.read_xml(beside.read_bytes())
    except (YupanaError, OSError) as exc:
        log.warning("answer file %s not read: %s", beside, exc)
        return None, "el archivo de la respuesta no se puede leer"
    if answer.referencia and answer.referencia != ident:
        return None, f"el archivo de la respuesta es de {answer.referencia}"
    return answer, ""


def _unknown(name: str, read: summaries.ReadSummary, why: str) -> str:
    """A RA/RC without SUNAT's answer in the folder, for the person (Spanish): its vouchers stay as the backup has
    them."""
    vouchers = ", ".join(f"{line.serie}-{line.numero}" for line in read.lines)
    told = (f"{name} ({vouchers}): sin la respuesta de SUNAT en la carpeta ({why}), no se sabe si SUNAT aceptó "
            f"{'esta' if read.kind == 'RA' else 'este'} {document_name(read.kind)}; ")
    if any(line.condition == summaries.CONDITION_VOID for line in read.lines):
        return told + ("consulte en SUNAT Operaciones en Línea si esos comprobantes están de baja y, si no, vuelva a "
                       "anularlos")
    return told + "sus boletas quedan como las tiene la copia y se informan en el siguiente resumen diario"


def _read(data: bytes, ruc: str, ident: str) -> summaries.ReadSummary | str:
    """The RA/RC a file holds, or why it is not taken (Spanish)."""
    outcome = verify_xml(data)
    if not outcome.valid:
        return f"la firma no es válida ({outcome.reason})"
    read = summaries.read_summary(data)
    if (read.ident, read.emisor_ruc) != (ident, ruc):
        return f"el archivo tiene {read.emisor_ruc}-{read.ident}, no lo que dice su nombre"
    return read


def _entries(store: Any, environment: str, ruc: str, read: summaries.ReadSummary, name: str,
             result: RecoveredFiles) -> list[SummaryEntry]:
    """The summary's lines with the vouchers of the database they name; one it lacks is named in `result`."""
    entries = []
    for line in read.lines:
        voucher_id = store.id_of(ruc, line.tipo, line.serie, line.numero, environment)
        if voucher_id is None:
            result.skipped.append(f"{name}: {line.serie}-{line.numero} no está en la copia ni en los archivos")
        else:
            entries.append(SummaryEntry(voucher_id, line.tipo, line.serie, line.numero, line.condition, line.motivo))
    return entries


def _record(store: Any, repository: Any, summary_id: int, ruc: str, ident: str, answer: cdr_module.Cdr) -> None:
    """SUNAT's answer recorded on a summary inside the caller's transaction and, accepted, its vouchers' new status,
    as when its ticket is answered (voids.tickets)."""
    accepted = answer.estado in ACCEPTED
    record_answer(store, repository, summary_id, SUBMISSION_DONE if accepted else SUBMISSION_FAILED, answer.codigo,
                  answer.descripcion, dataclasses.replace(answer, member=f"R-{ruc}-{ident}.xml"))
    if accepted:
        for line in repository.lines(summary_id):
            store.write_status(line["voucher_id"], status_once_accepted(line["condition"]))


def _told(result: RecoveredFiles, name: str, suffix: str, answer: cdr_module.Cdr,
          lines: Sequence[dict[str, Any]]) -> None:
    """What a summary recorded from the files did, for the person."""
    ending = "a" if name.startswith("RA") else "o"  # la comunicación de baja, el resumen diario
    if answer.estado not in ACCEPTED:
        result.summaries.append(f"{name} (rechazad{ending} por SUNAT: {answer.codigo} {answer.descripcion})")
        return
    result.summaries.append(f"{name} (aceptad{ending})")
    result.voided += [f"{line['serie']}-{line['numero']}{suffix}" for line in lines
                      if line["condition"] == summaries.CONDITION_VOID]
