"""Issuer profiles: the companies that issue vouchers, chosen by `emisor.ruc` of a request."""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass

from app.core.errors import invalid, not_found
from app.core.platform import ubigeo
from app.core.platform.identifiers import check_ruc
from app.core.platform.ubigeo import Place
from app.core.storage.ports.database import Database
from app.core.storage.ports.platform import CompanyRepository
from app.core.storage.read_cache import ReadCache

PRINT_FORMATS = ("a4", "ticket")
MAX_LOGO_BYTES = 1024 * 1024


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
    def __init__(self, database: Database, repository: CompanyRepository) -> None:
        self._repository = repository
        self._cache = ReadCache(database)  # every generation reads its issuer: kept in memory until written

    def save(self, company: Company) -> Company:
        company = validate(company)
        self._repository.save({"ruc": company.ruc, "razon_social": company.razon_social.strip(),
                               "nombre_comercial": company.nombre_comercial, "ubigeo": company.ubigeo,
                               "direccion": company.direccion.strip(),
                               "codigo_establecimiento": company.codigo_establecimiento})
        self._cache.clear()
        return company

    def get(self, ruc: str) -> Company | None:
        return self._cache.get(ruc, lambda: self._read(ruc))

    def _read(self, ruc: str) -> Company | None:
        row = self._repository.get(ruc)
        return Company(**row) if row else None

    def all(self) -> list[Company]:
        return [Company(**row) for row in self._repository.all()]

    def print_options(self, ruc: str) -> PrintOptions:
        row = self._repository.print_options(ruc)
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
        if not self._repository.set_print_options(ruc, formato, logo, change_logo=logo is not None or clear_logo):
            raise not_found("ruc", f"No hay una empresa emisora con RUC «{ruc}».")
        return self.print_options(ruc)

    def prices_include_igv(self, ruc: str) -> bool:
        """The company's default for «Precios incluyen IGV» in the voucher form (False for an unknown RUC)."""
        return self._repository.prices_include_igv(ruc)

    def set_prices_include_igv(self, ruc: str, value: bool) -> bool:
        if not self._repository.set_prices_include_igv(ruc, bool(value)):
            raise not_found("ruc", f"No hay una empresa emisora con RUC «{ruc}».")
        return bool(value)

    def detraction_account(self, ruc: str) -> str | None:
        """The company's Banco de la Nación account for detracciones, None when none was remembered."""
        return self._repository.detraction_account(ruc)

    def set_detraction_account(self, ruc: str, cuenta: str | None) -> str | None:
        if not self._repository.set_detraction_account(ruc, (cuenta or "").strip() or None):
            raise not_found("ruc", f"No hay una empresa emisora con RUC «{ruc}».")
        return self.detraction_account(ruc)

    def delete(self, ruc: str) -> bool:
        deleted = self._repository.delete(ruc)
        self._cache.clear()
        return deleted
