"""Issuer profiles: the companies that issue vouchers, chosen by `emisor.ruc` of a request."""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass

from sqlite_utils import Migrations

from app.core.errors import invalid, not_found
from app.core.platform import ubigeo
from app.core.platform.identifiers import check_ruc
from app.core.platform.storage import ReadCache, Storage, register_migrations
from app.core.platform.ubigeo import Place

PRINT_FORMATS = ("a4", "ticket")
MAX_LOGO_BYTES = 1024 * 1024

migrations = register_migrations(Migrations("yupana.companies"))


@migrations()
def m001_print_options(db) -> None:
    """How a company's vouchers are printed: A4 or 80 mm ticket by default, and an optional logo (PNG or JPEG).
    Kept apart from the profile's columns: saving the profile never changes them."""
    db.execute("ALTER TABLE companies ADD COLUMN formato_impresion TEXT NOT NULL DEFAULT 'a4'")
    db.execute("ALTER TABLE companies ADD COLUMN logo BLOB")


@migrations()
def m002_prices_include_igv(db) -> None:
    """Whether the windows take this company's prices with IGV by default («Precios incluyen IGV»); kept apart from
    the profile like the print options. Off by default: the voucher form took values without IGV before."""
    db.execute("ALTER TABLE companies ADD COLUMN precios_incluyen_igv INTEGER NOT NULL DEFAULT 0")


@migrations()
def m003_detraction_account(db) -> None:
    """The company's Banco de la Nación account for detracciones (SPOT), remembered by the voucher form after a
    factura with detracción; kept apart from the profile like the print options."""
    db.execute("ALTER TABLE companies ADD COLUMN cuenta_detracciones TEXT")


@dataclass(frozen=True)
class Company:
    ruc: str
    razon_social: str
    ubigeo: str
    direccion: str
    nombre_comercial: str | None = None
    codigo_establecimiento: str = "0000"

    @property
    def place(self) -> Place | None:
        return ubigeo.lookup(self.ubigeo)

    def to_json(self) -> dict:
        data = asdict(self)
        place = self.place
        if place:
            data.update(place._asdict())
        return data


@dataclass(frozen=True)
class PrintOptions:
    formato: str = "a4"  # «a4» or «ticket»
    logo: bytes | None = None  # PNG or JPEG
    logo_px: tuple[int, int] | None = None  # its width and height in pixels


def check_logo(data: bytes) -> tuple[int, int]:
    """The logo's size in pixels; a 400 when it is not a PNG or JPEG image of at most 1 MiB."""
    if len(data) > MAX_LOGO_BYTES:
        raise invalid("logo", f"El logo pesa {len(data) // 1024} KiB: el máximo es {MAX_LOGO_BYTES // 1024} KiB.")
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            kind, size = image.format, image.size
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        raise invalid("logo", "El logo no es una imagen PNG o JPEG que se pueda leer.") from None
    if kind not in ("PNG", "JPEG"):
        raise invalid("logo", f"El logo es una imagen {kind}: use PNG o JPEG.")
    return size


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
        self._cache = ReadCache(storage)  # every generation reads its issuer: kept in memory until written

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
        self._cache.clear()
        return company

    def get(self, ruc: str) -> Company | None:
        return self._cache.get(ruc, lambda: self._read(ruc))

    def _read(self, ruc: str) -> Company | None:
        row = self._storage.query_one(
            "SELECT ruc, razon_social, nombre_comercial, ubigeo, direccion, codigo_establecimiento "
            "FROM companies WHERE ruc = ?", (ruc,))
        return Company(**row) if row else None

    def all(self) -> list[Company]:
        rows = self._storage.query(
            "SELECT ruc, razon_social, nombre_comercial, ubigeo, direccion, codigo_establecimiento "
            "FROM companies ORDER BY razon_social")
        return [Company(**row) for row in rows]

    def print_options(self, ruc: str) -> PrintOptions:
        row = self._storage.query_one("SELECT formato_impresion, logo FROM companies WHERE ruc = ?", (ruc,))
        if row is None:
            return PrintOptions()
        logo = bytes(row["logo"]) if row["logo"] else None
        return PrintOptions(row["formato_impresion"] or "a4", logo, check_logo(logo) if logo else None)

    def set_print_options(self, ruc: str, formato: str | None = None, logo: bytes | None = None,
                          clear_logo: bool = False) -> PrintOptions:
        """Change what is given: the default format, the logo (or remove it with `clear_logo`)."""
        if formato is not None and formato not in PRINT_FORMATS:
            raise invalid("formato_impresion", f"El formato de impresión «{formato}» no existe: use «a4» o «ticket».")
        if logo is not None:
            check_logo(logo)
        with self._storage.write() as conn:
            found = conn.execute("SELECT 1 FROM companies WHERE ruc = ?", (ruc,)).fetchone()
            if found is None:
                raise not_found("ruc", f"No hay una empresa emisora con RUC «{ruc}».")
            if formato is not None:
                conn.execute("UPDATE companies SET formato_impresion = ? WHERE ruc = ?", (formato, ruc))
            if logo is not None or clear_logo:
                conn.execute("UPDATE companies SET logo = ? WHERE ruc = ?", (logo, ruc))
        return self.print_options(ruc)

    def prices_include_igv(self, ruc: str) -> bool:
        """The company's default for «Precios incluyen IGV» in the voucher form (False for an unknown RUC)."""
        row = self._storage.query_one("SELECT precios_incluyen_igv FROM companies WHERE ruc = ?", (ruc,))
        return bool(row and row["precios_incluyen_igv"])

    def set_prices_include_igv(self, ruc: str, value: bool) -> bool:
        with self._storage.write() as conn:
            if not conn.execute("UPDATE companies SET precios_incluyen_igv = ? WHERE ruc = ?",
                                (int(bool(value)), ruc)).rowcount:
                raise not_found("ruc", f"No hay una empresa emisora con RUC «{ruc}».")
        return bool(value)

    def detraction_account(self, ruc: str) -> str | None:
        """The company's Banco de la Nación account for detracciones, None when none was remembered."""
        row = self._storage.query_one("SELECT cuenta_detracciones FROM companies WHERE ruc = ?", (ruc,))
        return row["cuenta_detracciones"] if row else None

    def set_detraction_account(self, ruc: str, cuenta: str | None) -> str | None:
        with self._storage.write() as conn:
            if not conn.execute("UPDATE companies SET cuenta_detracciones = ? WHERE ruc = ?",
                                ((cuenta or "").strip() or None, ruc)).rowcount:
                raise not_found("ruc", f"No hay una empresa emisora con RUC «{ruc}».")
        return self.detraction_account(ruc)

    def delete(self, ruc: str) -> bool:
        with self._storage.write() as conn:
            deleted = conn.execute("DELETE FROM companies WHERE ruc = ?", (ruc,)).rowcount > 0
        self._cache.clear()
        return deleted
