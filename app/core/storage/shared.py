"""The desk's database as `yupana db init|estado|actualizar` see it (issue 34): which engine, which server, which
schema version, and the desks seen on a shared one. psycopg is loaded only when a shared database is named."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from app import __version__
from app.core.errors import YupanaError, conflict, not_configured
from app.core.platform import api_token
from app.core.platform.paths import database_path
from app.core.platform.processes import HOST
from app.core.platform.secrets import PASSPHRASE_ENV, SOURCE_KEYRING, SecretStore
from app.core.platform.settings import SETTINGS, DeskSettings, checked
from app.core.storage import schema
from app.core.storage.engines import is_postgres_url, open_database
from app.core.storage.sqlite.snapshot import read_only


@dataclass(frozen=True)
class DeskSeen:
    host: str
    app_version: str
    seconds_ago: float


@dataclass(frozen=True)
class DatabaseState:
    engine: str  # "SQLite" or "PostgreSQL"
    where: str  # the data folder's file, or the shared database's address
    server_version: str  # PostgreSQL's version ("" for SQLite: the library's is the app's)
    schema_version: int | None  # None: a shared database not initialised yet
    known_version: int  # the schema version this desk's Yupana uses
    desks: tuple[DeskSeen, ...] = ()  # seen recently on a shared database, the latest first
    driver: str = ""  # the shared database's driver, its implementation and libpq ("" for SQLite)

    @property
    def current(self) -> bool:
        return self.schema_version == self.known_version


def database_url(home: Path) -> str:
    """This desk's `database_url` ("" for SQLite in its data folder)."""
    return DeskSettings(home).get("database_url")


def _shared_url(home: Path) -> str:
    url = database_url(home)
    if not url:
        raise not_configured("Este puesto usa SQLite en su carpeta de datos: no hay base de datos compartida. "
                             "Para compartir una, configure «database_url» (yupana config set database_url "
                             "postgresql://usuario@servidor/base).")
    if not is_postgres_url(url):
        raise not_configured(f"«{url}» no es la dirección de una base de datos PostgreSQL.")
    return url


def _shared(home: Path):  # noqa: ANN202 - the PostgreSQL engine's module, loaded here only (psycopg with it)
    from app.core.storage.postgres import engine  # about 0.2 s: only a desk with a shared database pays it

    return engine, engine.open_reachable(_shared_url(home))


def initialise(home: Path) -> bool:
    """`yupana db init`: create the schema on the desk's (empty) shared database; False when it had it already."""
    engine, storage = _shared(home)
    try:
        created = engine.schema.create(storage)
        storage.see_desk(HOST, __version__)
        return created
    finally:
        storage.close()


def upgrade(home: Path) -> list[int]:
    """`yupana db actualizar`: bring the shared schema to this desk's version; the versions run."""
    engine, storage = _shared(home)
    try:
        return engine.schema.upgrade(storage)
    finally:
        storage.close()


def state(home: Path) -> DatabaseState:
    """`yupana db estado`: the desk's engine, the server's version, the schema's and the desks seen recently."""
    url = database_url(home)
    if not url:
        local = open_database(database_path(home))
        try:
            version = local.query_one("SELECT MAX(version) AS v FROM schema_version")
        finally:
            local.close()
        return DatabaseState("SQLite", str(database_path(home)), "", int(version["v"]) if version else None,
                             schema.VERSION)
    engine, storage = _shared(home)
    try:
        found = engine.schema.version(storage)
        desks = tuple(DeskSeen(d.host, d.app_version, d.last_seen_s) for d in engine.schema.desks(storage)) \
            if found is not None else ()
        return DatabaseState("PostgreSQL", _without_password(url), engine.schema.server_version(storage), found,
                             schema.VERSION, desks, engine.driver())
    finally:
        storage.close()


def _without_password(url: str) -> str:
    """The address as it may be shown (a password, should one be there, left out)."""
    scheme, _, rest = url.partition("://")
    credentials, at, place = rest.rpartition("@")
    return f"{scheme}://{credentials.split(':', 1)[0]}{at}{place}" if at else url


def use(home: Path, url: str) -> str:
    """`yupana db usar`: set this desk's `database_url` (checked; "" for SQLite) without opening any database, so a
    desk whose shared database is out of reach can still be pointed elsewhere. The value kept."""
    clean = checked("database_url", url)
    DeskSettings(home).put("database_url", clean)
    return clean


# ---------------------------------------------------------------- `yupana db migrar` (issue 34, item 4)

# What the end of a copy counts, by table, in the words of a shop owner; the other tables (settings, secrets, the
# API token, the registry cache…) are counted together as «otros datos».
COUNTED = {
    "vouchers": "comprobantes",
    "sunat_cdrs": "constancias de SUNAT (CDR)",
    "sunat_submissions": "envíos a SUNAT",
    "sunat_summaries": "resúmenes diarios y comunicaciones de baja",
    "sunat_consulted_cdrs": "CDR consultados",
    "customers": "clientes",
    "products": "productos",
    "companies": "empresas",
    "certificates": "certificados",
    "messaging_instances": "instancias de mensajería",
    "messages": "mensajes",
    "webhook_events": "eventos recibidos de las pasarelas",
    "subscriptions": "suscripciones",
    "deliveries": "entregas a suscriptores",
    "voucher_drafts": "borradores",
}


@dataclass(frozen=True)
class CopiedCount:
    label: str  # Spanish, e.g. «comprobantes»
    rows: int


@dataclass(frozen=True)
class SerieNumbering:
    """A serie's last number in the shared database: the next voucher of the serie takes the one after it."""

    environment: str
    emisor_ruc: str
    tipo: str
    serie: str
    last: int


@dataclass(frozen=True)
class Migration:
    """What `yupana db migrar` copied."""

    where: str  # the shared database's address, without a password
    source: Path  # the folder's database file, left as it was
    counts: tuple[CopiedCount, ...]  # every table of COUNTED, in its order
    other_rows: int  # the rows of the other tables
    numbering: tuple[SerieNumbering, ...]
    # What the folder's keyring protected, not copied (its ciphertexts open on no other desk): to enter again, in
    # Spanish; empty when the keys were the passphrase's and came along.
    to_enter_again: tuple[str, ...] = ()
    desk_settings: tuple[str, ...] = ()  # the folder's settings that are each desk's own: kept for this desk alone
    # What the folder's keyring protected, opened with it on this computer and wrapped again under the business
    # passphrase (copied: nothing to enter again).
    rewrapped: bool = False


def _nothing_to_copy(path: Path) -> YupanaError:
    return not_configured(f"No hay datos que copiar: {path} no existe (este puesto nunca guardó nada en su carpeta).")


def _source_version_refusal(found: int | None, path: Path) -> YupanaError | None:
    if found is None:
        return not_configured(f"La carpeta {path.parent} es de una versión anterior de Yupana: ábrala una vez con "
                              "esta versión (se pone al día sola) y vuelva a ejecutar «yupana db migrar».")
    if found > schema.VERSION:
        return not_configured(f"La carpeta {path.parent} tiene el esquema {found}, más nuevo que el que conoce esta "
                              f"versión de Yupana ({schema.VERSION}): copie la carpeta con la versión que la creó.")
    return None


# What a folder's keyring protects when its keys were stored under it (`key_source`): the secrets, the API token and
# the certificates whose keys they are. A shared database's keys are the business passphrase's (docs/security.md), so
# these are left out and entered again on the shared database.
KEYRING_PROTECTED = ("secret_meta", "secrets", "api_token", "certificates", "default_certificates")


Rows = tuple[tuple[str, ...], list[tuple]]  # a table's columns and rows, given instead of the folder's


@dataclass(frozen=True)
class _Plan:
    left_out: tuple[str, ...]
    desk_settings: dict[str, str]  # the folder's values of each desk's own settings (a folder from before the split)
    to_enter_again: tuple[str, ...]
    replaced: dict[str, Rows] | None = None  # the keyring's secrets wrapped again under the business passphrase


class _HeldSecrets:
    """A SecretRepository in memory: a folder's secret store opened from its snapshot, or the shared database's made
    before it is written (`_rewrapped`)."""

    def __init__(self, meta: dict[str, str], blobs: dict[str, bytes] | None = None) -> None:
        self.metas, self.blobs = dict(meta), dict(blobs or {})

    def meta(self, key: str) -> str | None:
        return self.metas.get(key)

    def set_meta_once(self, key: str, value: str) -> None:
        self.metas.setdefault(key, value)

    def set_meta(self, key: str, value: str) -> None:
        self.metas[key] = value

    def put(self, name: str, blob: bytes, updated_at: str) -> None:
        self.blobs[name] = blob

    def get(self, name: str) -> bytes | None:
        return self.blobs.get(name)

    def delete(self, name: str) -> bool:
        return self.blobs.pop(name, None) is not None


def _rewrapped(snapshot, passphrase: str) -> dict[str, Rows] | None:  # noqa: ANN001 - a Snapshot
    """The folder's secrets and API token, opened with this computer's keyring (where `yupana db migrar` runs: the
    folder's own) and encrypted again under a key derived from the business passphrase, with that key's salt and
    probe (and the folder's id, so this desk remembers the business key under it): the rows of `secret_meta`,
    `secrets` and `api_token` for the shared database. None when the keyring does not open them."""
    meta = dict(_rows(snapshot, "secret_meta", ("key", "value")))
    secrets = _rows(snapshot, "secrets", ("name", "blob", "updated_at"))
    tokens = _rows(snapshot, "api_token", ("id", "hash", "blob", "created_at"))
    folder = SecretStore(_HeldSecrets(meta))
    held = _HeldSecrets({"folder_id": meta["folder_id"]} if "folder_id" in meta else {})
    business = SecretStore(held, shared=True)
    business.unlock(passphrase)  # its salt and probe made (a passphrase too short refused); kept in this desk's keyring
    try:
        folder.master_key(ask=False)
        wrapped = [(name, business.encrypt(folder.decrypt(bytes(blob), name), name), updated_at)
                   for name, blob, updated_at in secrets]
        token_rows = [(ident, bytes(digest), business.encrypt(folder.decrypt(bytes(blob), api_token.PURPOSE),
                                                              api_token.PURPOSE), created)
                      for ident, digest, blob, created in tokens]
    except YupanaError:  # the keyring away or refusing: they are entered again on the shared database
        return None
    return {"secret_meta": (("key", "value"), sorted(held.metas.items())),
            "secrets": (("name", "blob", "updated_at"), wrapped),
            "api_token": (("id", "hash", "blob", "created_at"), token_rows)}


def _rows(snapshot, table: str, columns: tuple[str, ...]) -> list[tuple]:  # noqa: ANN001 - a Snapshot
    if table not in snapshot.tables():
        return []
    return [row for batch in snapshot.rows(table, columns) for row in batch]


def _plan(snapshot, passphrase: Callable[[], str | None]) -> _Plan:  # noqa: ANN001 - a Snapshot
    settings = dict(_rows(snapshot, "settings", ("key", "value")))
    desk = {key: value for key, value in settings.items() if key in SETTINGS and SETTINGS[key].desk}
    if dict(_rows(snapshot, "secret_meta", ("key", "value"))).get("key_source") != SOURCE_KEYRING:
        return _Plan((), desk, ())
    typed = passphrase()
    replaced = _rewrapped(snapshot, typed) if typed else None
    if replaced is not None:
        return _Plan((), desk, (), replaced)
    certificates = _rows(snapshot, "certificates", ("subject", "ruc"))
    again = [f"el certificado digital {subject} (RUC {ruc}): impórtelo de nuevo" for subject, ruc in certificates]
    if len(_rows(snapshot, "secrets", ("name",))) > len(certificates):
        again.append("la clave SOL y los tokens de las pasarelas y de los proveedores de consultas: guárdelos de nuevo")
    if _rows(snapshot, "api_token", ("id",)):
        again.append("el token de la API local: se genera otro (cópielo en los programas que la usan)")
    return _Plan(KEYRING_PROTECTED, desk, tuple(again))


def migrate(home: Path, url: str, passphrase: Callable[[], str | None] | None = None) -> Migration:
    """`yupana db migrar URL`: copy this desk's SQLite folder into the empty shared database at `url` (creating its
    tables when it has none), then make it this desk's database. The folder's file is only read. Refused, in Spanish,
    when the shared database holds data already — this very folder copied before, or anything else.

    Keys the folder's keyring protects are opened with it and wrapped again under the business passphrase
    (`YUPANA_PASSPHRASE`, else `passphrase()` asked only then); without one they are left out, to enter again."""
    asked = passphrase or (lambda: None)
    clean = checked("database_url", url)
    if not clean:
        raise not_configured("Falta la dirección de la base de datos compartida, p. ej. "
                             "yupana db migrar postgresql://yupana@caja1/tienda")
    source = database_path(home)
    if not source.is_file():
        raise _nothing_to_copy(source)
    with read_only(source) as snapshot:
        refusal = _source_version_refusal(snapshot.schema_version(), source)
        if refusal is not None:
            raise refusal
        plan = _plan(snapshot, lambda: os.environ.get(PASSPHRASE_ENV) or asked())
        copied, numbering = _copy_into(snapshot, clean, plan, already_used=database_url(home) == clean)
    desk = DeskSettings(home)
    for key, value in plan.desk_settings.items():
        if desk.own(key) is None:
            desk.put(key, value)
    use(home, clean)
    return Migration(_without_password(clean), source,
                     tuple(CopiedCount(label, copied.get(table, 0)) for table, label in COUNTED.items()),
                     sum(rows for table, rows in copied.items() if table not in COUNTED), numbering,
                     plan.to_enter_again, tuple(sorted(plan.desk_settings)), plan.replaced is not None)


def _copy_into(snapshot, url: str, plan: _Plan, *,  # noqa: ANN001 - a Snapshot
               already_used: bool) -> tuple[dict[str, int], tuple[SerieNumbering, ...]]:
    """The folder's rows into the shared database at `url` (its tables created when it has none): rows by table, and
    the numbering it continues from."""
    from app.core.storage.postgres import engine, transfer

    target = engine.open_reachable(url)
    try:
        if engine.schema.version(target) is None:
            engine.schema.create(target)
        engine.schema.require_current(target)
        _require_empty(target, snapshot, url, transfer, already_used)
        try:
            copied = {c.table: c.rows for c in transfer.copy(snapshot, target, left_out=plan.left_out,
                                                             desk_settings=plan.desk_settings,
                                                             replaced=plan.replaced or {})}
        except engine.DatabaseError as exc:  # one transaction: nothing of the folder stayed
            raise not_configured(f"La copia se detuvo y la base compartida quedó sin nada de esta carpeta: "
                                 f"{' '.join(str(exc).split())}") from None
        target.see_desk(HOST, __version__)
        return copied, tuple(SerieNumbering(*serie) for serie in transfer.last_numbers(target))
    finally:
        target.close()


def _require_empty(target, snapshot, url: str, transfer, already_used: bool) -> None:  # noqa: ANN001 - PostgreSQL's
    counts = transfer.row_counts(target)
    if not any(counts.values()):
        return
    shown = _without_password(url)
    if transfer.holds(target, snapshot):
        raise conflict(None, f"Esta carpeta ya se copió a {shown}: no se copió nada otra vez. "
                       + ("Este puesto ya usa esa base." if already_used
                          else f"Para que este puesto la use: yupana db usar {shown}"))
    held = ", ".join(f"{counts[table]} {label}" for table, label in COUNTED.items() if counts.get(table)) \
        or f"{sum(counts.values())} filas"
    raise conflict(None, f"La base de datos {shown} no está vacía (tiene {held}): «yupana db migrar» solo copia a una "
                   "base de datos vacía, para no mezclar dos negocios. Cree una base nueva (p. ej. createdb -O "
                   "yupana tienda) y copie ahí.")


# ---------------------------------------------------------------- Ajustes → «Base de datos compartida» (issue 34, item 7)

@dataclass(frozen=True)
class ConnectionCheck:
    """What «Probar la conexión» found: whether this desk can use the database at the address, and why (Spanish)."""

    ok: bool
    message: str


def check(url: str, rucs: Iterable[str] = ()) -> ConnectionCheck:
    """Connect to the shared database at `url` and say whether this desk, which issues for the companies `rucs`, can
    use it: the server out of reach, a refused password, a server too old, a database of another business or program,
    or a schema other than this desk's are each said in Spanish. Nothing is written (not even the desk's visit)."""
    try:
        clean = checked("database_url", url)
    except YupanaError as exc:
        return ConnectionCheck(False, exc.message)
    if not clean:
        return ConnectionCheck(False, "Escriba la dirección de la base de datos compartida, p. ej. "
                                      "postgresql://yupana@caja1/tienda.")
    from app.core.storage.postgres import engine  # psycopg: only when a shared database is tried

    try:
        storage = engine.open_reachable(clean)
    except YupanaError as exc:
        return ConnectionCheck(False, exc.message)
    try:
        return _judged(engine, storage, _without_password(clean), set(rucs))
    except YupanaError as exc:
        return ConnectionCheck(False, exc.message)
    except engine.DatabaseError as exc:  # e.g. a user without the right to read Yupana's tables
        return ConnectionCheck(False, f"La base de datos respondió con un error: {str(exc).strip()}")
    finally:
        storage.close()


def _judged(engine, storage, where: str, rucs: set[str]) -> ConnectionCheck:  # noqa: ANN001 - PostgreSQL's engine
    server = f"PostgreSQL {engine.schema.server_version(storage)}"
    found = engine.schema.version(storage)
    if found is None:
        if storage.table_count():
            return ConnectionCheck(False, f"La base de datos {where} tiene tablas que no son de Yupana: es de otro "
                                          "programa. Use una base de datos nueva (p. ej. createdb -O yupana tienda).")
        return ConnectionCheck(True, f"Conexión correcta ({server}). La base de datos está vacía: copie ahí los datos "
                                     f"de este puesto con «yupana db migrar {where}», o cree sus tablas con "
                                     "«yupana db init».")
    engine.schema.require_current(storage)  # a newer or older schema: refused, saying what to do
    theirs = {row["ruc"]: row["razon_social"] for row in engine.repositories(storage).companies.all()}
    names = ", ".join(f"{name} (RUC {ruc})" for ruc, name in sorted(theirs.items()))
    if rucs and theirs and not rucs & set(theirs):
        return ConnectionCheck(False, f"La base de datos {where} es de otro negocio: emite para {names}, y este "
                                      f"puesto para RUC {', '.join(sorted(rucs))}. Revise la dirección.")
    return ConnectionCheck(True, f"Conexión correcta ({server}): base de datos de Yupana"
                                 + (f" de {names}" if names else "")
                                 + ". Guarde y vuelva a abrir Yupana para trabajar sobre ella.")
