"""The `yupana.companies` migrations of SQLite data folders, as they were written in app/core/platform/companies.py (moved here
unchanged: a folder records each step by this set's name and the step's, so names and order never change)."""

from __future__ import annotations

from sqlite_utils import Migrations

migrations = Migrations("yupana.companies")


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
