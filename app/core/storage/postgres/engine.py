"""The PostgreSQL engine's way in (app/core/storage/engines.py and shared.py load it, and psycopg with it, only for a
desk whose `database_url` names a shared database): opening the database, its repositories, and the schema's
commands (`schema`)."""

from __future__ import annotations

import getpass
import os
import re
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

from app import __version__
from app.core.errors import ErrorCode, YupanaError, not_configured
from app.core.platform.processes import HOST
from app.core.storage.postgres import (
    catalog,
    certificates,
    drafts,
    gre_tickets,
    messaging,
    platform,
    registry,
    schema,
    submissions,
    summaries,
    vouchers,
)
from app.core.storage.postgres.changes import PostgresChangeFeed
from app.core.storage.postgres.common import as_common
from app.core.storage.postgres.database import PostgresStorage
from app.core.storage.repositories import Repositories

__all__ = ["DatabaseError", "PostgresStorage", "change_feed", "driver", "open_reachable", "open_shared", "repositories",
           "schema"]

DatabaseError = psycopg.Error  # anything the server or the driver refused, once connected


def driver() -> str:
    """psycopg's version, the implementation it loaded and its libpq, e.g. «psycopg 3.3.9 (binary, libpq 17.2)».

    "binary" is psycopg-binary's compiled part with its own libpq (what the Windows bundle carries: a shop's PC has
    no libpq); "c" is built against the system's libpq, "python" reaches it through ctypes."""
    libpq = psycopg.pq.version()  # e.g. 170002 for 17.2 (major × 10,000 + minor since PostgreSQL 10)
    return f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}, libpq {libpq // 10000}.{libpq % 100})"


# The oldest PostgreSQL the schema runs on (issue 34: 13; Debian 12 ships 15), as `server_version_num` counts.
MIN_SERVER_VERSION = 130000
PGPASS = ("el archivo de contraseñas de PostgreSQL (en Windows %APPDATA%\\postgresql\\pgpass.conf, en Linux "
          "~/.pgpass), una línea servidor:puerto:base:usuario:contraseña")

# What the server said when it refused a connection, in English and in the Spanish of PostgreSQL's own translation
# (a server installed in Spanish answers in Spanish), and what the user reads; libpq gives no SQLSTATE for a refused
# connection. Anything else: the server is out of reach (UNREACHABLE).
_REFUSALS = (
    (re.compile(r"password authentication failed|autenti(fi)?caci[oó]n password fall[oó]", re.I),
     "El servidor {place} rechazó la contraseña del usuario «{user}»: corríjala en {pgpass}."),
    (re.compile(r"fe_sendauth: no password supplied", re.I),
     "El servidor {place} pide la contraseña del usuario «{user}» y este equipo no tiene una guardada: escríbala en "
     "{pgpass}."),
    (re.compile(r"role \"[^\"]*\" does not exist|no existe el rol", re.I),
     "El servidor {place} no tiene el usuario «{user}»: créelo (createuser -P {user}) o corrija la dirección."),
    (re.compile(r"database \"[^\"]*\" does not exist|no existe la base de datos", re.I),
     "El servidor {place} no tiene la base de datos «{database}»: créela (createdb -O {user} {database}) o corrija la "
     "dirección."),
    (re.compile(r"could not translate host name|failed to resolve host|could not resolve host", re.I),
     "No se encontró el equipo «{host}» en la red: revise el nombre del servidor en la dirección (o use su número IP, "
     "p. ej. 192.168.1.10)."),
)
UNREACHABLE = ("No se pudo conectar con la base de datos compartida en {place}: revise que el equipo del servidor esté "
               "encendido y en la red, y que PostgreSQL esté en marcha ({said}).")
# libpq's own wording around the reason: «connection failed: connection to server at "h", port p failed: …» and its
# hint «Is the server running on that host…?», left out of what the user reads.
_LIBPQ_FRAME = re.compile(r"^connection failed:\s*|connection to server at [^:]*? failed:\s*|\s*Is the server running.*$",
                          re.I)


def _default_user() -> str:
    """The user libpq logs in as when the address names none."""
    return os.environ.get("PGUSER") or getpass.getuser()


def _unreachable(exc: BaseException, url: str) -> YupanaError:
    """psycopg's failure to connect, said in Spanish for what the user can do about it (the server's own words
    follow when they add something)."""
    said = _LIBPQ_FRAME.sub("", " ".join(str(exc).split())).strip()
    parts = conninfo_to_dict(url)
    host = parts.get("host") or "localhost"
    template = next((words for refusal, words in _REFUSALS if refusal.search(said)), UNREACHABLE)
    if template is UNREACHABLE:  # the server may come back: UPSTREAM_UNAVAILABLE (Engine.open_waiting tries again)
        return YupanaError(ErrorCode.UPSTREAM_UNAVAILABLE, UNREACHABLE.format(
            place=f"{host}:{parts.get('port') or 5432}", said=said))
    return not_configured(template.format(place=f"{host}:{parts.get('port') or 5432}", host=host, said=said,
                                          user=parts.get("user") or _default_user(), database=parts.get("dbname") or "",
                                          pgpass=PGPASS))


def _too_old(storage: PostgresStorage) -> YupanaError | None:
    found = storage.conn().execute("SHOW server_version_num").fetchone()
    number = int(found[0]) if found else 0
    if number >= MIN_SERVER_VERSION:
        return None
    return not_configured(f"El servidor tiene PostgreSQL {schema.server_version(storage)}, demasiado antiguo: Yupana "
                          f"necesita PostgreSQL {MIN_SERVER_VERSION // 10000} o más nuevo.")


def change_feed(storage: PostgresStorage) -> PostgresChangeFeed:
    """The desks' change feed of the shared database (LISTEN/NOTIFY on connections of its own)."""
    return PostgresChangeFeed(storage.url)


def open_reachable(url: str, path: Path | None = None) -> PostgresStorage:
    """The database at `url`, its first connection made: a server out of reach, a refused login or a server too old
    is said in Spanish at once."""
    storage = PostgresStorage(url, path)
    try:
        storage.conn()
        refusal = _too_old(storage)
    except YupanaError as exc:  # the connection refused (`database_unavailable`, psycopg's words in its context)
        storage.close()
        raise _unreachable(exc.__context__ or exc, url) from None
    if refusal is not None:
        storage.close()
        raise refusal
    return storage


def open_shared(url: str, path: Path | None = None) -> PostgresStorage:
    """The business's shared database for this desk, refused (Spanish) unless its schema is this desk's version; the
    desk is recorded as seen (`yupana db estado`)."""
    shared = open_reachable(url, path)
    try:
        schema.require_current(shared)
        shared.see_desk(HOST, __version__)
    except BaseException:
        shared.close()
        raise
    return shared


def repositories(storage: PostgresStorage) -> Repositories:
    db = as_common(storage)
    return Repositories(
        platform.PostgresSettingsRepository(db), platform.PostgresCompanyRepository(db),
        platform.PostgresSecretRepository(db), platform.PostgresApiTokenRepository(db),
        platform.PostgresSandboxEndpointRepository(db), certificates.PostgresCertificateRepository(db),
        catalog.PostgresCustomerRepository(db), catalog.PostgresProductRepository(db),
        drafts.PostgresDraftRepository(db), messaging.PostgresMessagingRepository(db),
        registry.PostgresPadronPointerRepository(db), registry.PostgresRegistryCacheRepository(db),
        submissions.PostgresSubmissionRepository(db), summaries.PostgresSummaryRepository(db),
        vouchers.PostgresVoucherRepository(db), platform.PostgresDeskTurnRepository(db),
        gre_tickets.PostgresGreTicketRepository(db), catalog.PostgresTransportRepository(db))
