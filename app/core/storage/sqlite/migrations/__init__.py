"""The SQLite schema's history: the migration sets of sqlite-utils, in the order a new folder applies them.

Each set keeps the name it was first written under (`yupana.vouchers`, …) and each step its name: the folder's
`_sqlite_migrations` table records what ran, so a folder of any earlier version is brought up to date by running
only its pending steps, and a current one runs none.
"""

from __future__ import annotations

from sqlite_utils import Migrations

from . import (
    api_token,
    certificates,
    companies,
    core,
    customers,
    environments,
    messaging,
    outbox,
    padron,
    products,
    registry,
    secrets,
    voids,
    vouchers,
)

# A later set may read an earlier one's tables (the outbox's m004 reads the vouchers'): the order is part of the history.
SETS: list[Migrations] = [
    core.migrations, environments.migrations, vouchers.migrations, secrets.migrations, certificates.migrations,
    customers.migrations, products.migrations, outbox.migrations, companies.migrations, voids.migrations,
    padron.migrations, registry.migrations, messaging.migrations, api_token.migrations,
]
