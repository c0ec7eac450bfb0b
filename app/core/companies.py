"""Issuer profiles: the companies that issue vouchers, chosen by `emisor.ruc` of a request."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from . import ubigeo
from .errors import invalid
from .identifiers import check_ruc
from .storage import Storage


@dataclass(frozen=True)
class Company:
    ruc: str
    razon_social: str
    ubigeo: str
    direccion: str
    nombre_comercial: str | None = None
    codigo_establecimiento: str = "0000"

    @property
    def place(self) -> ubigeo.Place | None:
        return ubigeo.lookup(self.ubigeo)

    def to_json(self) -> dict:
        data = asdict(self)
        place = self.place
        if place:
            data.update(place._asdict())
        return data


def validate(company: Company) -> Company:
    check_ruc(company.ruc, "ruc")
    if not company.razon_social.strip():
        raise invalid("razon_social", "El campo «razon_social» es obligatorio.")
    if ubigeo.lookup(company.ubigeo) is None:
        raise invalid("ubigeo", f"El ubigeo «{company.ubigeo}» no existe en la tabla de SUNAT (6 dígitos, p. ej. 150101).")
    if not company.direccion.strip():
        raise invalid("direccion", "El campo «direccion» es obligatorio.")
    code = company.codigo_establecimiento
    if not (code.isdigit() and len(code) == 4):
        raise invalid("codigo_establecimiento",
                      f"El código de establecimiento «{code}» debe tener 4 dígitos (0000 para el domicilio fiscal).")
    return company


class Companies:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def save(self, company: Company) -> Company:
        company = validate(company)
        with self._storage.write() as conn:
            conn.execute(
                """INSERT INTO companies (ruc, razon_social, nombre_comercial, ubigeo, direccion, codigo_establecimiento)
                   VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT(ruc) DO UPDATE SET razon_social = excluded.razon_social,
                     nombre_comercial = excluded.nombre_comercial, ubigeo = excluded.ubigeo,
                     direccion = excluded.direccion, codigo_establecimiento = excluded.codigo_establecimiento""",
                (company.ruc, company.razon_social.strip(), company.nombre_comercial, company.ubigeo,
                 company.direccion.strip(), company.codigo_establecimiento),
            )
        return company

    def get(self, ruc: str) -> Company | None:
        row = self._storage.query_one(
            "SELECT ruc, razon_social, nombre_comercial, ubigeo, direccion, codigo_establecimiento "
            "FROM companies WHERE ruc = ?", (ruc,))
        return Company(**row) if row else None

    def all(self) -> list[Company]:
        rows = self._storage.query(
            "SELECT ruc, razon_social, nombre_comercial, ubigeo, direccion, codigo_establecimiento "
            "FROM companies ORDER BY razon_social")
        return [Company(**row) for row in rows]

    def delete(self, ruc: str) -> bool:
        with self._storage.write() as conn:
            return conn.execute("DELETE FROM companies WHERE ruc = ?", (ruc,)).rowcount > 0
