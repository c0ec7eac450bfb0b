"""The vehicles, drivers and carriers of the guías de remisión (issue 36, point 4), remembered in the catalogue.

Each guía issued leaves its vehicles (plate and TUC), drivers (document, names, licence) and public transport's
carrier (RUC, name, MTC registration) here, keyed by the plate, the driver's document and the carrier's RUC; the
guía's window offers them as one types in the next guía. A later guía's data replaces an entry's (a new TUC, a
corrected name), and the entries used last come first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.invoicing.catalog.records import CONDUCTOR, TRANSPORTISTA, VEHICULO, TransportEntry
from app.core.invoicing.documents.guia_ubl import Despatch
from app.core.storage.ports.catalog import TransportRepository
from app.core.storage.ports.database import Database

SEARCH_LIMIT = 200


def entries_of(doc: Despatch) -> list[TransportEntry]:
    """What a guía says of its vehicles, drivers and carrier (a transportista's guía names no carrier: itself)."""
    found = [TransportEntry(VEHICULO, vehicle.placa, tuc=vehicle.tuc or "") for vehicle in doc.vehiculos]
    found += [TransportEntry(CONDUCTOR, driver.numero_documento, tipo_documento=driver.tipo_documento,
                             nombres=driver.nombres, apellidos=driver.apellidos, licencia=driver.licencia)
              for driver in doc.conductores]
    carrier = doc.transportista
    if carrier is not None and carrier.ruc:
        found.append(TransportEntry(TRANSPORTISTA, carrier.ruc, nombres=carrier.razon_social or "",
                                    registro_mtc=carrier.registro_mtc or ""))
    return found


class TransportCatalogue:
    def __init__(self, db: Database, repository: TransportRepository) -> None:
        self._db = db
        self._repository = repository

    def remember_guias(self, docs: Iterable[Any]) -> None:
        """Keep the vehicles, drivers and carriers of the guías among `docs` (other documents are passed over)."""
        entries = [entry for doc in docs if isinstance(doc, Despatch) for entry in entries_of(doc)]
        if entries:
            with self._db.transaction():
                self._repository.remember(entries)

    def entries(self, kind: str, search: str = "", limit: int = SEARCH_LIMIT) -> list[TransportEntry]:
        """The entries of `kind` whose key begins with what was typed (case aside), or those used last."""
        typed = search.strip().upper().replace("-", "")
        return self._repository.by_key_prefix(kind, typed, limit) if typed else self._repository.latest(kind, limit)
