"""The lookups group service (protocols.Lookups): RUC, carnet de extranjería and plate, and SUNAT's padrón."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from app.core.contract import CeRecord, PlacaRecord, RucRecord
from app.core.errors import invalid
from app.core.invoicing.catalog.customers import Customers
from app.core.lookup import providers
from app.core.lookup.padron import PadronRegister
from app.core.lookup.registry import MODELS as KINDS
from app.core.lookup.registry import Kind, Registry
from app.core.platform import events
from app.core.platform.events import EventBus
from app.core.platform.secrets import SecretStore
from app.core.records import PadronImport, PadronProgress, PadronStatus


class LookupsGroup:
    def __init__(self, *, registry: Registry, padron: PadronRegister, customers: Customers, secrets: SecretStore,
                 bus: EventBus) -> None:
        self._registry = registry
        self._padron = padron
        self._customers = customers
        self._secrets = secrets
        self._bus = bus

    def ruc(self, numero: str) -> RucRecord:
        """The registry's record of a RUC; a RUC found is kept among the customers (docs/catalog.md)."""
        record = self._registry.ruc(numero)
        if record.razon_social:
            self._customers.remember_ruc(record.ruc, record.razon_social, record.direccion)
        return record

    def ce(self, numero: str) -> CeRecord:
        return self._registry.ce(numero)

    def placa(self, numero: str) -> PlacaRecord:
        return self._registry.placa(numero)

    def fresh_until(self, kind: str, numero: str) -> float | None:
        """When the cached answer for `numero` stops being fresh (registry clock seconds), or None without one: the
        local API keeps a copy in memory no longer than that."""
        if kind not in KINDS:
            return None
        return self._registry.cache_fresh_until(cast(Kind, kind), numero)

    # ------------------------------------------------------------ the padrón

    def import_padron(self, path: str | Path, parallel: bool | None = None) -> PadronImport:
        """Load SUNAT's padrón reducido (zip or txt); lookups use the old data until it is complete."""
        return self._imported(self._padron.import_file(path, parallel=parallel))

    def import_padron_steps(self, path: str | Path, parallel: bool | None = None) -> Iterator[PadronProgress]:
        """The same, as it goes: lines read of the total, and a last item with the result. The import waits while
        the reader holds an item, and goes on when the next one is asked for; stop iterating to cancel (the previous
        padrón stays in use)."""
        updates: queue.Queue[PadronProgress | BaseException] = queue.Queue()
        asked = threading.Semaphore(0)  # released when the reader asks for the next item, or stops
        stop = threading.Event()

        def progressed(done: int, total: int | None) -> None:
            updates.put(PadronProgress(done, total))
            asked.acquire()  # the import's cancel check comes after: a reader that stopped here cancels it

        def run() -> None:
            try:
                summary = self._padron.import_file(path, progress=progressed, cancel=stop.is_set, parallel=parallel)
                result = self._imported(summary)
                updates.put(PadronProgress(result.rows_loaded + result.rows_skipped, None, result))
            except BaseException as exc:  # handed to the reader, who raises it
                updates.put(exc)

        worker = threading.Thread(target=run, name="padron-import", daemon=True)
        worker.start()
        try:
            while True:
                item = updates.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
                if item.result is not None:
                    return
                asked.release()
        finally:
            stop.set()
            asked.release()
            worker.join()

    def _imported(self, summary: dict[str, object]) -> PadronImport:
        result = PadronImport.from_row(summary)
        if not result.cancelled:
            self._bus.emit(events.PadronImported(result))
        return result

    def padron_status(self) -> PadronStatus:
        return PadronStatus.from_row(self._padron.status())

    def set_provider_token(self, name: str, token: str) -> None:
        """Keep a registry provider's access token in the secret store (never in settings or logs)."""
        if name not in providers.PROVIDERS:
            raise invalid("proveedor", f"El proveedor «{name}» no existe. Válidos: {', '.join(providers.PROVIDERS)}.")
        self._secrets.put(providers.token_secret_name(name), token.strip().encode())
