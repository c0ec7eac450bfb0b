"""After a restore, where each serie's numbering goes on, so a restored folder never gives a number twice (issue 35,
item 2; `yupana numeracion verificar` runs it on demand).

After a restore, the vouchers signed after the backup are first read back from those files (recovered.py), then the
RA/RC made after it with SUNAT's answers, so the vouchers they voided are `anulado` again (recovered_summaries.py). For each
serie of the current environment, the last number known is the highest of the database and of that environment's
voucher files the backup folder received as they were made (backup_files: `comprobantes/ENTORNO/AAAAMM/RUC-TIPO-SERIE-
NUMERO.xml`, and the older ones with no environment, `backup_files.recorded_voucher_files`): a sandbox or beta
trial never pushes production's numbering.
Then:

- an F serie of facturas and their notes, where SUNAT's voucher status query answers (billConsultService getStatus;
  production, and the sandbox standing in for it): the numbers after that one are asked until `MARGIN` (50) in a row
  are unknown (0011), so at least 50 past the first unknown; every number SUNAT holds (0001 accepted, 0002 rejected,
  0003 voided) is listed, its CDR recovered with getStatusCdr (written into the data folder's `recuperados/`), the
  unknown numbers inside the found range listed as «números dudosos» (they may have been printed), and the serie
  goes on after the highest found;
- a B serie (boletas and their notes: the query answers 0009/0010), any serie where SUNAT cannot be asked (beta, no
  connection, SUNAT in trouble): the highest number of the backup and the files is proposed, the person confirms the
  last number printed (`confirm`), and the serie goes on after the larger. Without anybody to ask, the proposal
  stands and the finding says it was not confirmed.

The RA and RC counters of today (SUNAT cannot be asked for them) go on after the highest of the backup and of the
RA/RC files of the environment the backup folder received as they were made (`resumenes/ENTORNO/RUC-RA-AAAAMMDD-N.xml`,
and the older `resumenes/RUC-RA-AAAAMMDD-N.xml`), plus `SUMMARY_MARGIN`
(10): one made after the backup on the lost PC is never numbered again.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.invoicing.backup_files import recorded_voucher_files
from app.core.invoicing.recovered import RecoveredFiles, read_back
from app.core.invoicing.recovered_summaries import SUMMARY_FILE, read_back_summaries, recorded_summary_files
from app.core.invoicing.soap import SoapFault, TransportFailure
from app.core.invoicing.voids import rules
from app.core.platform.paths import private_file

log = logging.getLogger(__name__)

MARGIN = 50  # unknown numbers in a row after which SUNAT is asked no further
SUMMARY_MARGIN = 10  # RA/RC counters skipped after a restore
RECOVERED = "recuperados"  # the data folder's folder of the CDRs recovered from SUNAT
SUMMARY_KINDS = ("RA", "RC")
_FILE = re.compile(r"^(\d{11})-(\d{2})-([A-Z0-9]{4})-(\d{1,8})\.xml$")
HELD = (rules.QUERY_ACCEPTED, rules.QUERY_REJECTED, rules.QUERY_VOIDED)

# confirm(finding) → the last number printed the person typed (None: they did not answer)
Confirm = Callable[["SerieFinding"], int | None]


@dataclass(frozen=True)
class SerieFinding:
    """What the check found of one serie and where it goes on."""

    emisor_ruc: str
    tipo: str
    serie: str
    en_base: int  # the highest number in the database
    en_archivos: int  # the highest number in the backup folder's files (0: none)
    consultado: bool  # SUNAT's status query was asked
    encontrados: list[dict[str, Any]] = field(default_factory=list)  # {numero, estado_sunat, cdr}
    dudosos: list[int] = field(default_factory=list)
    motivo: str = ""  # why SUNAT was not asked (Spanish), when it was not
    confirmado: int | None = None  # the last number printed, as the person confirmed it
    sigue_en: int = 1

    @property
    def propuesto(self) -> int:
        """The last number known here (database, files, SUNAT's answers)."""
        return max([self.en_base, self.en_archivos, *(int(item["numero"]) for item in self.encontrados)])

    def line(self, unconfirmed_hint: str) -> str:
        """The finding in one Spanish line, as the restore's command and window list it; `unconfirmed_hint` says
        where an unconfirmed last number is confirmed (a command's option, a window's place)."""
        line = f"{self.serie} (tipo {self.tipo}, RUC {self.emisor_ruc}): sigue en {self.sigue_en}"
        if self.en_archivos > self.en_base:
            line += f"; archivos escritos al emitir hasta el {self.en_archivos}"
        if self.consultado:
            numbers = ", ".join(str(item["numero"]) for item in self.encontrados)
            line += f"; en SUNAT después de la copia: {numbers}" if numbers else "; SUNAT no tiene números posteriores"
            if self.dudosos:
                line += f"; números dudosos (pueden estar impresos): {', '.join(map(str, self.dudosos))}"
        elif self.confirmado is not None:
            line += f"; último impreso confirmado: {self.confirmado} ({self.motivo})"
        else:
            line += f"; SIN CONFIRMAR el último número impreso ({self.motivo}): {unconfirmed_hint}"
        return line


@dataclass(frozen=True)
class NumberingCheck:
    series: list[SerieFinding]
    resumenes: list[dict[str, Any]]  # {emisor_ruc, tipo: RA|RC, dia, sigue_en}
    archivos: RecoveredFiles = field(default_factory=RecoveredFiles)  # vouchers read back from the files (restore)

    def lines(self, unconfirmed_hint: Callable[[SerieFinding], str]) -> list[str]:
        """What the check found, in Spanish, as the restore's command and window list it: the vouchers read back
        from the files, serie by serie where each goes on (`SerieFinding.line`), and today's RA/RC counters."""
        files, lines = self.archivos, []
        if files.stored:
            more = " …" if len(files.stored) > 20 else ""
            lines.append(f"Comprobantes recuperados de los archivos escritos al emitir: {len(files.stored)} "
                         f"({files.with_cdr} con su CDR): {', '.join(files.stored[:20])}{more}")
        lines.extend(f"  No recuperado: {problem}" for problem in files.skipped)
        if files.summaries:
            lines.append(f"Bajas y resúmenes diarios recuperados de los archivos escritos al emitir, con la respuesta "
                         f"de SUNAT: {', '.join(files.summaries)}")
        if files.voided:
            lines.append(f"Comprobantes anulados después de la copia (bajas aceptadas por SUNAT): "
                         f"{', '.join(files.voided)}")
        lines.extend(f"  Resultado desconocido: {summary}" for summary in files.unknown_summaries)
        lines.append("Numeración:")
        for finding in self.series:
            lines.append("  " + finding.line(unconfirmed_hint(finding)))
            lines.extend(f"    {finding.serie}-{item['numero']}: CDR recuperado en {item['cdr']}"
                         for item in finding.encontrados if item["cdr"])
        lines.extend(f"  {row['tipo']} del {row['dia']} (RUC {row['emisor_ruc']}): sigue en {row['sigue_en']} "
                     f"({SUMMARY_MARGIN} números de margen: SUNAT no permite consultarlos)" for row in self.resumenes)
        return lines


def file_numbers(recorded: list[tuple[str, Path]], environment: str) -> dict[tuple[str, str, str], int]:
    """The highest number of each (RUC, tipo, serie) among the voucher files of `environment` in a backup folder's
    `recorded_voucher_files`."""
    found: dict[tuple[str, str, str], int] = {}
    for path in (path for where, path in recorded if where == environment):
        match = _FILE.match(path.name)
        if match:
            key = (match.group(1), match.group(2), match.group(3))
            found[key] = max(found.get(key, 0), int(match.group(4)))
    return found


def summary_counters(recorded: list[tuple[str, Path]], environment: str) -> dict[tuple[str, str, str], int]:
    """The highest counter of each (RUC, RA|RC, day as AAAA-MM-DD) among the RA/RC files of `environment` in a
    backup folder's `recorded_summary_files`."""
    found: dict[tuple[str, str, str], int] = {}
    for path in (path for where, path in recorded if where == environment):
        match = SUMMARY_FILE.match(path.name)
        if match:
            day = f"{match.group(3)[:4]}-{match.group(3)[4:6]}-{match.group(3)[6:]}"
            key = (match.group(1), match.group(2), day)
            found[key] = max(found.get(key, 0), int(match.group(4)))
    return found


class Numbering:
    """The check over one engine's vouchers, summaries and SUNAT clients (see the module's doc)."""

    def __init__(self, store: Any, summaries: Any, clients: Callable[[str, str], Any], data_home: Path,
                 today: Callable[[], dt.date]) -> None:
        self.store = store  # VoucherStore
        self.summaries = summaries  # SummaryRepository
        self.clients = clients  # (environment, ruc) → soap.SunatClient
        self.data_home = data_home
        self.today = today

    def check(self, files_folder: str | Path | None, confirm: Confirm | None = None,
              after_restore: bool = True) -> NumberingCheck:
        environment = self.store.environment()
        recorded = recorded_voucher_files(files_folder, environment)  # the folders walked once for both
        recorded_summaries = recorded_summary_files(files_folder, environment)
        recovered = RecoveredFiles()
        if after_restore:
            recovered = read_back(self.store, self.summaries, recorded)
            read_back_summaries(self.store, self.summaries, recorded_summaries, recovered)  # after their vouchers
        files = file_numbers(recorded, environment)
        known = {(row["emisor_ruc"], row["tipo"], row["serie"]): int(row["ultimo"]) for row in self.store.series()}
        findings = []
        for ruc, tipo, serie in sorted(set(known) | set(files)):
            key = (ruc, tipo, serie)
            finding = self._serie(environment, ruc, tipo, serie, known.get(key, 0), files.get(key, 0), confirm)
            self.store.raise_numero(finding.emisor_ruc, finding.tipo, finding.serie, finding.sigue_en - 1)
            findings.append(finding)
        counters = summary_counters(recorded_summaries, environment)
        rucs = {key[0] for key in known} | {key[0] for key in files} | {key[0] for key in counters}
        summaries = self._summaries(environment, rucs, counters) if after_restore else []
        return NumberingCheck(findings, summaries, recovered)

    def _serie(self, environment: str, ruc: str, tipo: str, serie: str, in_db: int, in_files: int,
               confirm: Confirm | None) -> SerieFinding:
        base = SerieFinding(ruc, tipo, serie, in_db, in_files, False)
        reason = self._why_not_asked(environment, ruc, tipo, serie)
        if not reason:
            try:
                return self._asked(environment, base)
            except (TransportFailure, SoapFault) as exc:
                log.warning("status query of %s %s failed: %s", ruc, serie, exc)
                reason = "SUNAT no respondió la consulta (sin conexión o con problemas)"
        typed = confirm(SerieFinding(ruc, tipo, serie, in_db, in_files, False, motivo=reason,
                                     sigue_en=max(in_db, in_files) + 1)) if confirm else None
        last = max(in_db, in_files, typed or 0)
        return SerieFinding(ruc, tipo, serie, in_db, in_files, False, motivo=reason, confirmado=typed,
                            sigue_en=last + 1)

    def _why_not_asked(self, environment: str, ruc: str, tipo: str, serie: str) -> str:
        if not rules.status_query_answers(tipo, serie):
            return ("SUNAT no responde la consulta del estado de boletas ni de sus notas" if serie[:1].upper() == "B"
                    else "SUNAT no responde la consulta del estado de este tipo de comprobante")
        if not rules.status_query_available(environment):
            return f"la consulta del estado de SUNAT no existe en {environment}"
        try:
            client = self.clients(environment, ruc)
        except Exception as exc:  # no SOL credentials: SUNAT cannot be asked
            return f"no se puede consultar a SUNAT ({getattr(exc, 'message', exc)})"
        return "" if client.consult_url else "no hay dirección del servicio de consulta de SUNAT"

    def _asked(self, environment: str, base: SerieFinding) -> SerieFinding:
        client = self.clients(environment, base.emisor_ruc)
        numero, misses, found, unknown = max(base.en_base, base.en_archivos), 0, [], []
        while misses < MARGIN:
            numero += 1
            status = client.get_voucher_status(base.emisor_ruc, base.tipo, base.serie, numero)
            if status.status_code in HELD:
                found.append({"numero": numero, "estado_sunat": status.status_code,
                              "cdr": self._recover_cdr(client, base, numero)})
                misses = 0
            else:
                unknown.append(numero)
                misses += 1
        highest = max((int(item["numero"]) for item in found), default=0)
        doubtful = [number for number in unknown if number < highest]
        last = max(base.en_base, base.en_archivos, highest)
        return SerieFinding(base.emisor_ruc, base.tipo, base.serie, base.en_base, base.en_archivos, True, found,
                            doubtful, sigue_en=last + 1)

    def _recover_cdr(self, client: Any, base: SerieFinding, numero: int) -> str | None:
        """getStatusCdr of a number SUNAT holds, its zip written into `recuperados/`; None when SUNAT has none."""
        try:
            status = client.get_status_cdr(base.emisor_ruc, base.tipo, base.serie, numero)
        except (TransportFailure, SoapFault) as exc:
            log.warning("CDR of %s-%s not recovered: %s", base.serie, numero, exc)
            return None
        if not status.content:
            return None
        folder = self.data_home / RECOVERED
        folder.mkdir(exist_ok=True)
        target = folder / f"R-{base.emisor_ruc}-{base.tipo}-{base.serie}-{numero}.zip"
        private_file(target)
        target.write_bytes(status.content)
        return str(target)

    def _summaries(self, environment: str, rucs: Iterable[str],
                   files: dict[tuple[str, str, str], int]) -> list[dict[str, Any]]:
        """Today's RA and RC counters of every issuer go on after the highest known (the database, the backup
        folder's RA/RC files) plus SUMMARY_MARGIN."""
        day = self.today().isoformat()
        out = []
        for ruc in sorted(rucs):
            for kind in SUMMARY_KINDS:
                last = max(self.summaries.last_counter(environment, ruc, kind, day),
                           files.get((ruc, kind, day), 0)) + SUMMARY_MARGIN
                self.summaries.raise_counter(environment, ruc, kind, day, last)
                out.append({"emisor_ruc": ruc, "tipo": kind, "dia": day, "sigue_en": last + 1})
        return out

