"""SQLite repositories of the platform's aggregates: settings, companies, secrets, the API token, sandbox endpoints,
the desks' turns."""

from __future__ import annotations

from typing import Any

from app.core.storage.sqlite.database import DB_NOW, Storage

_PROFILE = "ruc, razon_social, nombre_comercial, ubigeo, direccion, codigo_establecimiento"


class SqliteSettingsRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def all(self) -> dict[str, str]:
        return {row["key"]: row["value"] for row in self._db.query("SELECT key, value FROM settings")}

    def put(self, key: str, value: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))


class SqliteCompanyRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def save(self, profile: dict[str, Any]) -> None:
        with self._db.write() as conn:
            conn.execute(
                f"""INSERT INTO companies ({_PROFILE}) VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT (ruc) DO UPDATE SET razon_social = excluded.razon_social,
                     nombre_comercial = excluded.nombre_comercial, ubigeo = excluded.ubigeo,
                     direccion = excluded.direccion, codigo_establecimiento = excluded.codigo_establecimiento""",
                tuple(profile[column.strip()] for column in _PROFILE.split(",")))

    def get(self, ruc: str) -> dict[str, Any] | None:
        return self._db.query_one(f"SELECT {_PROFILE} FROM companies WHERE ruc = ?", (ruc,))

    def all(self) -> list[dict[str, Any]]:
        return self._db.query(f"SELECT {_PROFILE} FROM companies ORDER BY razon_social")

    def print_options(self, ruc: str) -> dict[str, Any] | None:
        return self._db.query_one("SELECT formato_impresion, logo FROM companies WHERE ruc = ?", (ruc,))

    def set_print_options(self, ruc: str, formato: str | None, logo: bytes | None, change_logo: bool) -> bool:
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM companies WHERE ruc = ?", (ruc,)).fetchone() is None:
                return False
            if formato is not None:
                conn.execute("UPDATE companies SET formato_impresion = ? WHERE ruc = ?", (formato, ruc))
            if change_logo:
                conn.execute("UPDATE companies SET logo = ? WHERE ruc = ?", (logo, ruc))
        return True

    def prices_include_igv(self, ruc: str) -> bool:
        row = self._db.query_one("SELECT precios_incluyen_igv FROM companies WHERE ruc = ?", (ruc,))
        return bool(row and row["precios_incluyen_igv"])

    def set_prices_include_igv(self, ruc: str, value: bool) -> bool:
        with self._db.write() as conn:
            return bool(conn.execute("UPDATE companies SET precios_incluyen_igv = ? WHERE ruc = ?",
                                     (int(bool(value)), ruc)).rowcount)

    def detraction_account(self, ruc: str) -> str | None:
        row = self._db.query_one("SELECT cuenta_detracciones FROM companies WHERE ruc = ?", (ruc,))
        return row["cuenta_detracciones"] if row else None

    def set_detraction_account(self, ruc: str, cuenta: str | None) -> bool:
        with self._db.write() as conn:
            return bool(conn.execute("UPDATE companies SET cuenta_detracciones = ? WHERE ruc = ?",
                                     (cuenta, ruc)).rowcount)

    def delete(self, ruc: str) -> bool:
        with self._db.write() as conn:
            return conn.execute("DELETE FROM companies WHERE ruc = ?", (ruc,)).rowcount > 0


class SqliteSecretRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def meta(self, key: str) -> str | None:
        row = self._db.query_one("SELECT value FROM secret_meta WHERE key = ?", (key,))
        return row["value"] if row else None

    def set_meta_once(self, key: str, value: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO secret_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                         (key, value))

    def set_meta(self, key: str, value: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO secret_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET"
                         " value = excluded.value", (key, value))

    def put(self, name: str, blob: bytes, updated_at: str) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO secrets (name, blob) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
                         "blob = excluded.blob, updated_at = ?", (name, blob, updated_at))

    def get(self, name: str) -> bytes | None:
        row = self._db.query_one("SELECT blob FROM secrets WHERE name = ?", (name,))
        return bytes(row["blob"]) if row else None

    def delete(self, name: str) -> bool:
        with self._db.write() as conn:
            return conn.execute("DELETE FROM secrets WHERE name = ?", (name,)).rowcount > 0


class SqliteApiTokenRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def stored(self) -> tuple[bytes, bytes] | None:
        row = self._db.query_one("SELECT hash, blob FROM api_token WHERE id = 1")
        return (bytes(row["hash"]), bytes(row["blob"])) if row else None

    def propose(self, token_hash: bytes, blob: bytes) -> None:
        with self._db.write() as conn:  # the first writer's token wins, inside the write transaction
            conn.execute("INSERT INTO api_token (id, hash, blob) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING",
                         (token_hash, blob))

    def replace(self, token_hash: bytes, blob: bytes) -> None:
        with self._db.write() as conn:
            conn.execute("INSERT INTO api_token (id, hash, blob) VALUES (1, ?, ?) "
                         "ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, blob = excluded.blob",
                         (token_hash, blob))


class SqliteDeskTurnRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def hold(self, name: str, holder: str, seconds: float, replacing: str | None = None) -> bool:
        with self._db.write() as conn:
            return conn.execute(
                f"INSERT INTO desk_turns (name, holder, until) VALUES (?, ?, {DB_NOW} + ?) ON CONFLICT (name) DO UPDATE"
                " SET holder = excluded.holder, until = excluded.until WHERE desk_turns.holder = excluded.holder"
                f" OR desk_turns.until <= {DB_NOW} OR desk_turns.holder = ?",
                (name, holder, float(seconds), replacing)).rowcount > 0

    def current(self, name: str) -> tuple[str, bool] | None:
        row = self._db.conn().execute(f"SELECT holder, until > {DB_NOW} FROM desk_turns WHERE name = ?",
                                      (name,)).fetchone()
        return None if row is None else (row[0], bool(row[1]))

    def release(self, name: str, holder: str) -> None:
        with self._db.write() as conn:
            conn.execute("DELETE FROM desk_turns WHERE name = ? AND holder = ?", (name, holder))


class SqliteSandboxEndpointRepository:
    def __init__(self, db: Storage) -> None:
        self._db = db

    def put(self, values: dict[str, str], owner: str) -> None:
        with self._db.write() as conn:
            conn.executemany("INSERT INTO sandbox_endpoints (key, value, owner) VALUES (?, ?, ?) ON CONFLICT (key) "
                             "DO UPDATE SET value = excluded.value, owner = excluded.owner",
                             [(key, value, owner) for key, value in values.items()])

    def remove(self, keys: list[str], owner: str) -> None:
        with self._db.write() as conn:
            conn.executemany("DELETE FROM sandbox_endpoints WHERE key = ? AND owner = ?", [(key, owner) for key in keys])

    def owners(self) -> set[str]:
        return {row["owner"] for row in self._db.query("SELECT DISTINCT owner FROM sandbox_endpoints")}

    def remove_owners(self, owners: set[str]) -> None:
        with self._db.write() as conn:
            conn.executemany("DELETE FROM sandbox_endpoints WHERE owner = ?", [(owner,) for owner in sorted(owners)])

    def all(self) -> dict[str, str]:
        return {row["key"]: row["value"] for row in self._db.query("SELECT key, value FROM sandbox_endpoints")}
