"""The vehicles, drivers, carriers and places of the guías de remisión (issue 36, point 4), remembered in the
catalogue.

Each guía issued leaves its vehicles (plate and TUC), drivers (document, names, licence), public transport's
carrier (RUC, name, MTC registration) and its departure and arrival points (ubigeo, address, establishment code)
here, keyed by the plate, the driver's document, the carrier's RUC and the point's address, ubigeo and code
(records.point_key); the guía's window offers them as one types in the next guía. A later guía's data replaces an
entry's (a new TUC, a corrected name, an address written otherwise), and the entries used last come first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.invoicing.catalog import text
from app.core.invoicing.catalog.records import (
    CONDUCTOR,
    PUNTO,
    TRANSPORTISTA,
    VEHICULO,
    TransportEntry,
    point_key,
)
from app.core.invoicing.documents.guia_ubl import Address, Despatch
from app.core.storage.ports.catalog import TransportRepository
from app.core.storage.ports.database import Database

SEARCH_LIMIT = 200


def entries_of(doc: Despatch) -> list[TransportEntry]:
    """What a guía says of its vehicles, drivers, carrier (a transportista's guía names no carrier: itself) and
    points (one entry when it leaves and arrives at the same one)."""
    found = [TransportEntry(VEHICULO, vehicle.placa, tuc=vehicle.tuc or "") for vehicle in doc.vehiculos]
    found += [TransportEntry(CONDUCTOR, driver.numero_documento, tipo_documento=driver.tipo_documento,
                             nombres=driver.nombres, apellidos=driver.apellidos, licencia=driver.licencia)
              for driver in doc.conductores]
    carrier = doc.transportista
    if carrier is not None and carrier.ruc:
        found.append(TransportEntry(TRANSPORTISTA, carrier.ruc, nombres=carrier.razon_social or "",
                                    registro_mtc=carrier.registro_mtc or ""))
    points = {entry.clave: entry for entry in (_point(doc.partida), _point(doc.llegada)) if entry is not None}
    return found + list(points.values())


def _point(address: Address) -> TransportEntry | None:
    if not text.key(address.direccion):
        return None
    codigo = address.codigo or ""
    return TransportEntry(PUNTO, point_key(address.direccion, address.ubigeo, codigo), ubigeo=address.ubigeo,
                          direccion=address.direccion, codigo_establecimiento=codigo,
                          ruc=(address.ruc or "") if codigo else "")


class TransportCatalogue:
    def __init__(self, db: Database, repository: TransportRepository) -> None:
        self._db = db
        self._repository = repository

    def remember_guias(self, docs: Iterable[Any]) -> None:
        """Keep the vehicles, drivers, carriers and points of the guías among `docs` (other documents are passed over)."""
        entries = [entry for doc in docs if isinstance(doc, Despatch) for entry in entries_of(doc)]
        if entries:
            with self._db.transaction():
                self._repository.remember(entries)

    def entries(self, kind: str, search: str = "", limit: int = SEARCH_LIMIT) -> list[TransportEntry]:
        """The entries of `kind` whose key begins with what was typed (case aside; a point's address also accents
        and punctuation aside), or those used last."""
        typed = text.key(search) if kind == PUNTO else search.strip().upper().replace("-", "")
        return self._repository.by_key_prefix(kind, typed, limit) if typed else self._repository.latest(kind, limit)
