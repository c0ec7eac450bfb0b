"""Asking SUNAT for the CDR of any voucher, issued here or elsewhere (getStatusCdr with the company's SOL
credentials); the CDR is kept when the voucher is one of ours (table sunat_consulted_cdrs) and read back later."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.errors import ErrorCode, ErrorDetail, YupanaError
from app.core.invoicing import cdr as cdr_module
from app.core.invoicing import sunat_errors
from app.core.invoicing.soap import SoapFault, TransportFailure
from app.core.invoicing.voids.book import stored_zip
from app.core.invoicing.voucher_store import VoucherStore
from app.core.platform.settings import Settings
from app.core.storage.ports.database import Database
from app.core.storage.ports.summaries import SummaryRepository


class CdrConsultations:
    """getStatusCdr for any voucher, and the CDRs so asked for our own (see the module's doc)."""

    def __init__(self, store: VoucherStore, repository: SummaryRepository, database: Database, settings: Settings,
                 clients: Callable[[str, str], Any]) -> None:
        self.store = store
        self.repository = repository  # the consulted CDRs
        self.storage = database  # the unit of work
        self.settings = settings
        self.clients = clients  # SunatClients: (environment, ruc) → soap.SunatClient

    def consultar_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> dict[str, Any]:
        """getStatusCdr for any voucher (issued here or elsewhere), with the company's SOL credentials. The CDR is
        stored when the voucher is one of ours (table sunat_consulted_cdrs)."""
        environment = self.store.environment()
        name = f"{serie}-{int(numero)}"
        try:
            status = self.clients(environment, ruc).get_status_cdr(ruc, tipo, serie, int(numero))
        except SoapFault as fault:  # e.g. wrong clave SOL (0102): SUNAT's code and the catalogue's words
            text = (sunat_errors.describe(fault.code, self.settings.get("sunat_rules_dir")) if fault.code else ""
                    ) or fault.faultstring
            raise YupanaError(ErrorCode.UPSTREAM_REJECTED,
                              f"SUNAT no respondió la consulta del CDR de {name} (código {fault.code or 'sin código'}):"
                              f" {text}.", [ErrorDetail("numero", text, sunat_code=fault.code or None)]) from fault
        except TransportFailure as failure:
            raise YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE,
                              f"No se pudo consultar a SUNAT el CDR de {name} ({failure.kind}): inténtelo más tarde."
                              ) from failure
        answer = cdr_module.read_zip(status.content) if status.content else None
        voucher_id = self.store.id_of(ruc, tipo, serie, int(numero))
        if answer is not None and voucher_id is not None:
            with self.storage.transaction(durable=True):
                self.repository.add_consulted_cdr(  # kept as its XML: the zip is made again when read (m004)
                    voucher_id=voucher_id, environment=environment, codigo=answer.codigo,
                    descripcion=answer.descripcion, cdr_xml=self.store.pack_bytes(f"cdr-xml:{environment}", answer.xml),
                    cdr_member=answer.member)
        return {"status_code": status.status_code, "status_message": status.status_message,
                "codigo": answer.codigo if answer else None, "descripcion": answer.descripcion if answer else None,
                "estado": answer.estado if answer else None, "notas": answer.notas if answer else [],
                "cdr_zip": status.content, "voucher_id": voucher_id, "guardado": answer is not None and
                voucher_id is not None}

    def consulted_cdr(self, voucher_id: int) -> dict | None:
        """The latest CDR asked of SUNAT for one of our vouchers (`consultar_cdr`), or None."""
        row = self.repository.latest_consulted_cdr(voucher_id)
        if row is not None:
            row["cdr_zip"] = stored_zip(self.store, row)
            del row["cdr_xml"], row["cdr_member"]
        return row
