"""Every setting Yupana knows, with its default and meaning (docs/configuration.md lists them).

Settings are plain values kept in the `settings` table; secrets (keys, SOL passwords, tokens) are
never settings: they live in the secret store (`app.core.platform.secrets`).

Each setting's check is the one place its values are judged: `yupana config set` and Ajustes (through
`Settings.set`) refuse what `yupana serve` and the windows could not use, and those check the value again with
`checked` when they use it (a value stored before a check existed). A refusal is Spanish and names the value and
why.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

from app.core.errors import invalid
from app.core.platform.environments import NAMES as ENVIRONMENT_NAMES
from app.core.platform.paths import PrivateJsonFile
from app.core.storage.ports.database import Database
from app.core.storage.ports.platform import SettingsRepository
from app.core.storage.read_cache import ReadCache


def _choice(*allowed: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"valores válidos: {', '.join(allowed)}")
        return value

    return check


def _integer(low: int, high: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not re.fullmatch(r"-?[0-9]+", value) or not low <= int(value) <= high:
            raise ValueError(f"debe ser un número entero entre {low} y {high}")
        return str(int(value))

    return check


def _port(value: str) -> str:
    """A TCP port: 1 to 65535, or 0 for one the system picks when the server starts (its address is shown then)."""
    if not re.fullmatch(r"[0-9]+", value) or not 0 <= int(value) <= 65535:
        raise ValueError("un puerto es un número entero entre 1 y 65535 (o 0: uno libre que el sistema elige al "
                         "iniciar)")
    return str(int(value))


def _seconds(low: float, high: float) -> Callable[[str], str]:
    def check(value: str) -> str:
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not low <= number <= high:
            raise ValueError(f"debe ser un número de segundos entre {low:g} y {high:g}")
        return f"{number:g}"

    return check


def _split(value: str) -> SplitResult | None:
    """The address's parts; None when it cannot be read (a port out of range or not a number)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError:
        return None
    return parts


def _url(value: str) -> str:
    """Empty, or an http(s) address with a host (and a valid port, if it names one)."""
    if not value:
        return value
    parts = _split(value)
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in value):
        raise ValueError("debe ser una dirección completa que empiece por http:// o https://, p. ej. "
                         "https://api.ejemplo.pe/v1")
    return value.rstrip("/")


def _providers(value: str) -> str:
    names = [name.strip().lower() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in ("yupana", "factiliza")]
    if unknown:
        raise ValueError(f"proveedor desconocido {', '.join(unknown)}; válidos: yupana, factiliza")
    return ",".join(names)


def _text(value: str) -> str:
    return value


def is_loopback(host: str) -> bool:
    """An address only this computer reaches: localhost, 127.0.0.0/8 or ::1."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _loopback_host(value: str) -> str:
    if not is_loopback(value):
        raise ValueError("la API local solo escucha en este equipo (127.0.0.1, ::1 o localhost): su token viaja sin "
                         "cifrar y en otra dirección cualquiera en la red podría leerlo o probarlo (docs/security.md); "
                         "para llegar desde otro equipo use un túnel o un proxy con HTTPS")
    return value


def _listen_host(value: str) -> str:
    """An address a server of this computer can listen on: an IP address (127.0.0.1 for this computer only, the
    local network's, 0.0.0.0 for every one) or localhost."""
    if value != "localhost":
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError("debe ser una dirección IP de este equipo (127.0.0.1: solo este equipo; la de la red "
                             "local, p. ej. 192.168.1.20) o localhost") from None
    return value


def _yes_no(value: str) -> str:
    answer = {"si": "si", "sí": "si", "no": "no"}.get(value.lower())
    if answer is None:
        raise ValueError("valores válidos: si, no")
    return answer


def _log_level(value: str) -> str:
    return _choice("DEBUG", "INFO", "WARNING", "ERROR")(value.upper())


def _database_url(value: str) -> str:
    """Empty (SQLite in the data folder), or the address of a PostgreSQL database without a password in it: this
    desk's settings are a plain file, so a password goes in PostgreSQL's own password file (pgpass)."""
    if not value:
        return value
    parts = _split(value)
    if parts is None or parts.scheme not in ("postgresql", "postgres") or not parts.path.strip("/") \
            or any(c.isspace() for c in value):
        raise ValueError("debe ser la dirección de una base de datos PostgreSQL, p. ej. "
                         "postgresql://yupana@caja1/tienda")
    if parts.password is not None:
        raise ValueError("no escriba la contraseña en la dirección: guárdela en el archivo de contraseñas de "
                         "PostgreSQL (pgpass.conf en Windows, ~/.pgpass en Linux)")
    return value


def _folder(value: str) -> str:
    """Empty, or a folder that exists."""
    if value and not os.path.isdir(value):
        raise ValueError("no es una carpeta que exista en este equipo" if not os.path.exists(value)
                         else "es un archivo, no una carpeta")
    return value


@dataclass(frozen=True)
class Setting:
    key: str
    default: str
    description: str  # the help text shown under the field and in docs/configuration.md
    check: Callable[[str], str] = _text
    label: str = ""  # what Ajustes calls it, in a shop owner's words
    group: str = "Otros"  # the Ajustes tab it lives in
    advanced: bool = False  # behind «Avanzado»: addresses, time-outs, diagnostics
    # A running sandbox stands in for it: in the sandbox environment the value comes from the sandbox
    # (app.core.platform.environments.SandboxEndpoints), never from here, and a sandbox never writes it here.
    sandboxed: bool = False
    # This desk's own: kept in its data folder (DeskSettings), not in the database the desks may share (issue 34).
    desk: bool = False


# The Ajustes tabs that hold settings, in order.
GROUPS = ["Entorno", "SUNAT", "Consultas", "Mensajería", "API local", "Datos y registro", "Copias de seguridad",
          "Base de datos compartida"]


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        Setting("environment", "sandbox",
                "Dónde van los comprobantes: sandbox (todo en este equipo, para aprender), beta (el servidor de "
                "pruebas de SUNAT) o produccion (comprobantes reales).",
                _choice(*ENVIRONMENT_NAMES),
                label="Entorno de trabajo", group="Entorno", desk=True),
        Setting("sunat_rules_dir", "",
                "Carpeta con las reglas oficiales de SUNAT (la carpeta VALI del Facturador SUNAT). "
                "Vacío: solo las validaciones propias de Yupana.", _folder,
                label="Reglas oficiales de SUNAT (carpeta VALI)", group="SUNAT", advanced=True, desk=True),
        Setting("signature_algorithm", "rsa-sha1",
                "Algoritmo de firma XML: rsa-sha1 (el que usa SUNAT) o rsa-sha256.",
                _choice("rsa-sha1", "rsa-sha256"),
                label="Algoritmo de firma", group="SUNAT", advanced=True),
        Setting("sunat_url_beta", "https://e-beta.sunat.gob.pe/ol-ti-itcpfegem-beta/billService",
                "Servicio billService de SUNAT beta.", _url,
                label="Dirección de SUNAT beta", group="SUNAT", advanced=True, sandboxed=True),
        Setting("sunat_url_produccion", "https://e-factura.sunat.gob.pe/ol-ti-itcpfegem/billService",
                "Servicio billService de SUNAT producción.", _url,
                label="Dirección de SUNAT producción", group="SUNAT", advanced=True, sandboxed=True),
        Setting("sunat_url_consulta", "https://e-factura.sunat.gob.pe/ol-it-wsconscpegem/billConsultService",
                "Servicio billConsultService (consulta de CDR) de SUNAT.", _url,
                label="Dirección de consulta de CDR", group="SUNAT", advanced=True, sandboxed=True),
        Setting("sunat_gre_url", "https://api-cpe.sunat.gob.pe/v1",
                "Plataforma REST de SUNAT para guías de remisión (envío y consulta de tickets).", _url,
                label="Dirección de guías de remisión", group="SUNAT", advanced=True, sandboxed=True),
        Setting("sunat_gre_auth_url", "https://api-seguridad.sunat.gob.pe/v1",
                "Servicio de autenticación (token OAuth) de la plataforma de guías de SUNAT.", _url,
                label="Dirección de autenticación de guías", group="SUNAT", advanced=True, sandboxed=True),
        Setting("sunat_validez_url", "https://api.sunat.gob.pe/v1",
                "API REST de SUNAT para la consulta integrada de validez de comprobantes.", _url,
                label="Dirección de la consulta de validez", group="SUNAT", advanced=True, sandboxed=True),
        Setting("sunat_validez_auth_url", "https://api-seguridad.sunat.gob.pe/v1",
                "Servicio de autenticación (token OAuth) de la consulta de validez de SUNAT.", _url,
                label="Dirección de autenticación de la consulta de validez", group="SUNAT", advanced=True,
                sandboxed=True),
        Setting("sunat_gre_url_beta", "",
                "SUNAT no tiene beta para guías: vacío, las guías de beta van al sandbox; una dirección, a ese "
                "servidor de pruebas de un tercero (no es SUNAT).", _text,
                label="Servidor de pruebas de guías (no es SUNAT)", group="SUNAT", advanced=True),
        Setting("sunat_gre_wait_s", "5",
                "Espera máxima por la respuesta de un ticket de guía al emitir, en segundos; después se consulta en "
                "segundo plano.", _seconds(0, 600),
                label="Espera del ticket de una guía (segundos)", group="SUNAT", advanced=True),
        Setting("sunat_timeout_s", "30", "Tiempo máximo de espera de una respuesta de SUNAT, en segundos.",
                _integer(1, 600),
                label="Espera máxima de SUNAT (segundos)", group="SUNAT", advanced=True),
        Setting("sunat_retry_base_s", "5",
                "Espera antes del primer reintento de un envío a SUNAT sin respuesta, en segundos; se duplica en "
                "cada reintento (con variación al azar).", _seconds(0.001, 3600),
                label="Primer reintento tras (segundos)", group="SUNAT", advanced=True),
        Setting("sunat_retry_max_s", "900", "Espera máxima entre reintentos de un envío a SUNAT, en segundos.",
                _seconds(0.001, 86400),
                label="Reintento más espaciado (segundos)", group="SUNAT", advanced=True),
        Setting("registry_cache_ttl_s", "86400",
                "Vigencia de una consulta (RUC, CE, placa) guardada en caché, en segundos.", _integer(0, 10 ** 8),
                label="Guardar cada consulta durante (segundos)", group="Consultas", advanced=True),
        Setting("registry_providers", "",
                "Proveedores de consultas, en orden, separados por comas (p. ej. yupana,factiliza).", _providers,
                label="Proveedores de consultas", group="Consultas", sandboxed=True),
        Setting("registry_yupana_url", "",
                "Dirección base de otro servicio Yupana (o compatible con este contrato) para consultas; "
                "su token se guarda cifrado.", _url,
                label="Dirección del servicio Yupana", group="Consultas", advanced=True, sandboxed=True),
        Setting("registry_factiliza_url", "https://api.factiliza.com/v1",
                "Dirección base de un proveedor de consultas con la forma de Factiliza (/ruc/info/…); "
                "su token se guarda cifrado.", _url,
                label="Dirección del proveedor tipo Factiliza", group="Consultas", advanced=True, sandboxed=True),
        Setting("registry_timeout_s", "8", "Tiempo máximo de espera de un proveedor de consultas, en segundos.",
                _integer(1, 120),
                label="Espera máxima de un proveedor (segundos)", group="Consultas", advanced=True),
        Setting("api_host", "127.0.0.1",
                "Dirección de la API local: solo este equipo (127.0.0.1, ::1 o localhost); otra se rechaza.",
                _loopback_host, label="Dirección de la API local", group="API local", advanced=True, desk=True),
        Setting("api_port", "8787", "Puerto de la API local (1 a 65535; 0 elige uno libre al iniciar).", _port,
                label="Puerto de la API local", group="API local", desk=True),
        Setting("api_autostart", "no",
                "Iniciar la API local junto con la aplicación (si o no); sin ventanas se inicia con «yupana serve».",
                _yes_no, label="Iniciar la API local con Yupana", group="API local", desk=True),
        Setting("api_docs", "no",
                "Página de documentación interactiva de la API local en /docs: si o no (la descripción "
                "/openapi.json se sirve siempre). La página carga Swagger UI desde internet.", _choice("no", "si"),
                label="Documentación interactiva (/docs)", group="API local", advanced=True, desk=True),
        Setting("listener_host", "127.0.0.1",
                "Dirección del receptor de webhooks de mensajería. 127.0.0.1: solo este equipo; la dirección de "
                "la red local si la pasarela corre en otro equipo (se muestra una advertencia).", _listen_host,
                label="Dirección del receptor de webhooks", group="Mensajería", advanced=True, desk=True),
        Setting("listener_port", "8788",
                "Puerto del receptor de webhooks de mensajería; se conserva entre inicios. 0 elige uno libre y lo "
                "guarda. Si otro programa lo ocupa, se toma uno libre y se actualiza el webhook de las instancias "
                "de Evolution (la URL en Meta y en un túnel se cambian a mano).",
                _port, label="Puerto del receptor de webhooks", group="Mensajería", desk=True),
        Setting("listener_public_url", "",
                "Dirección pública con la que la pasarela llega al receptor (un túnel o la IP de la red local); "
                "vacío: la dirección y el puerto del receptor.", _url,
                label="Dirección pública del receptor", group="Mensajería", desk=True),
        Setting("messaging_timeout_s", "15", "Tiempo máximo de espera de la pasarela de mensajería, en segundos.",
                _integer(1, 120), label="Espera máxima de la pasarela (segundos)", group="Mensajería", advanced=True),
        Setting("backup_folder", "",
                "Carpeta donde Yupana deja sus copias de seguridad programadas, fuera de la carpeta de datos (una "
                "memoria USB o una carpeta sincronizada con OneDrive, Google Drive o Dropbox). Vacío: sin copias "
                "programadas. Es de este puesto; con una base compartida, las copias programadas y los archivos de cada "
                "comprobante los hace un solo puesto con carpeta (el que tiene el turno de las copias), en la suya: "
                "elija la misma en todos.", _folder,
                label="Carpeta de las copias", group="Copias de seguridad", desk=True),
        Setting("backup_hour", "20",
                "Hora del día (0 a 23, hora de Perú) de la copia diaria; si Yupana no estaba abierto a esa hora, la "
                "copia se hace al abrirlo.", _integer(0, 23),
                label="Hora de la copia diaria", group="Copias de seguridad", desk=True),
        Setting("backup_every_vouchers", "50",
                "Además de la diaria, una copia después de cada tantos comprobantes emitidos en este puesto, o en "
                "todos si comparten una base (0: solo la diaria). Nunca más de una copia cada 10 minutos: lo emitido "
                "mientras tanto va en la siguiente.", _integer(0, 100_000),
                label="Copia cada N comprobantes", group="Copias de seguridad", desk=True),
        Setting("database_url", "",
                "Base de datos PostgreSQL que comparten los puestos de un negocio, p. ej. "
                "postgresql://yupana@caja1/tienda (la contraseña va en el archivo pgpass de PostgreSQL). Vacío: los "
                "datos quedan en este equipo (SQLite en la carpeta de datos). Es de este puesto; se usa al abrir.",
                _database_url, label="Dirección de la base de datos", group="Base de datos compartida", desk=True),
        Setting("log_level", "INFO", "Nivel de detalle del registro: DEBUG, INFO, WARNING o ERROR.",
                _log_level,
                label="Detalle del registro", group="Datos y registro", advanced=True, desk=True),
    ]
}


def checked(key: str, value: str) -> str:
    """`value` as setting `key` keeps it (spaces around it dropped, its spelling normalised), or a 400 naming the
    value and why it cannot be used. The one check of a setting's values: `Settings.set` runs it, and so do the
    servers that use a value (a value stored before its check existed is refused there, not used)."""
    definition = SETTINGS.get(key)
    if definition is None:
        raise invalid("key", f"La configuración «{key}» no existe. Vea `yupana config list`.")
    typed = value.strip()
    try:
        return definition.check(typed)
    except ValueError as exc:
        raise invalid(key, f"No se puede usar «{typed}» en «{key}»: {exc}.") from None


@dataclass(frozen=True)
class SettingValue:
    """A setting's current value with its definition (label, group, help text)."""

    key: str
    value: str
    setting: Setting


DESK_FILE = "puesto.json"


class DeskSettings:
    """The settings of this desk alone (`Setting.desk`), in a private file of its data folder: read before any
    database is opened (`database_url` says which one), and never shared with the other desks."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / DESK_FILE
        # Read on every operation (the environment): parsed again only when it changed, by this process or another
        # (`yupana config set` beside the open windows).
        self._file = PrivateJsonFile(self.path)
        # (the file's JSON as read, the values made of it): one object, so threads never pair one's with another's
        self._made: tuple[object, dict[str, str]] = (None, {})

    def all(self) -> dict[str, str]:
        """The desk's settings (a dict the caller must not change: it is kept until the file changes). «Emitir» reads
        six of them and a batch one per voucher: made again only from a new reading of the file (issue 33)."""
        stored = self._file.read()
        parsed, values = self._made
        if stored is not parsed:
            values = {str(k): str(v) for k, v in stored.items()} if isinstance(stored, dict) else {}
            self._made = (stored, values)
        return values

    def get(self, key: str) -> str:
        return self.all().get(key, SETTINGS[key].default)

    def own(self, key: str) -> str | None:
        """The value this desk set, or None when it never did."""
        return self.all().get(key)

    def put(self, key: str, value: str) -> None:
        self._file.write(self.all() | {key: value})


# What the app remembers for itself in the settings table, beside the settings: never shown in Ajustes, `yupana
# config` or docs/configuration.md, never set by the user. Key → what it is.
LISTENER_TOLD_PORT = "listener_told_port"
FACTS: dict[str, str] = {
    LISTENER_TOLD_PORT: "the listener's port the Evolution instances receiving by webhook were last given",
}


class Settings:
    """Typed access to the settings table, with defaults for what was never set; a desk's own settings
    (`Setting.desk`) are read from and written to its DeskSettings. Beside them, the app's own FACTS."""

    def __init__(self, database: Database, repository: SettingsRepository, desk: DeskSettings | None = None) -> None:
        self._repository = repository
        self._cache = ReadCache(database)  # read on every operation: kept in memory until written
        self._desk = desk

    @staticmethod
    def _definition(key: str) -> Setting:
        if key not in SETTINGS:
            raise invalid("key", f"La configuración «{key}» no existe. Vea `yupana config list`.")
        return SETTINGS[key]

    def get(self, key: str) -> str:
        definition = self._definition(key)
        if definition.desk and self._desk is not None:
            own = self._desk.own(key)
            if own is not None:
                return own
            # Never set on this desk: what a folder from before the split (issue 34) kept in its database, or the
            # default. A desk writes its own from then on, never the database's.
        return self._cache.get("settings", self._repository.all).get(key, definition.default)

    def _stored(self) -> dict[str, str]:
        """The stored values: the database's, and this desk's own (a file, read only when all are listed)."""
        stored = self._cache.get("settings", self._repository.all)
        return stored if self._desk is None else stored | self._desk.all()

    def get_int(self, key: str) -> int:
        return int(self.get(key))

    def set(self, key: str, value: str) -> str:
        self._definition(key)
        clean = checked(key, value)
        if SETTINGS[key].desk and self._desk is not None:
            self._desk.put(key, clean)
        else:
            self._repository.put(key, clean)
        self._cache.clear()
        return clean

    def all(self) -> dict[str, str]:
        stored = self._stored()
        return {key: stored.get(key, s.default) for key, s in SETTINGS.items()}

    def fact(self, key: str) -> str | None:
        """One of FACTS as last remembered; None if never."""
        assert key in FACTS, key
        return self._cache.get("settings", self._repository.all).get(key)

    def remember(self, key: str, value: str) -> None:
        if self.fact(key) != value:
            self._repository.put(key, value)
            self._cache.clear()

    def values(self) -> list[SettingValue]:
        """Every setting with its value, in the order of SETTINGS."""
        stored = self._stored()
        return [SettingValue(key, stored.get(key, s.default), s) for key, s in SETTINGS.items()]


def markdown() -> str:
    """docs/configuration.md, generated from SETTINGS so the two never disagree."""
    lines = ["# Configuración", "",
             "Generado con `python -m app.core.platform.settings > docs/configuration.md`; un test comprueba que está al día.",
             "", "Se leen y cambian con `yupana config get|set|list` o en la ventana Ajustes, donde cada una aparece "
             "con su nombre en la pestaña indicada (las marcadas «avanzado» detrás del botón «Avanzado»). Las marcadas "
             "«de este puesto» se guardan en `puesto.json` de la carpeta de datos: con varios puestos sobre una base "
             "compartida cada puesto tiene las suyas (su entorno, sus puertos); las demás son del "
             "negocio y las ven todos los puestos.", "",
             "| clave | en Ajustes | por defecto | significado |", "|---|---|---|---|"]
    for s in SETTINGS.values():
        where = f"{s.group} → {s.label}" + (" (avanzado)" if s.advanced else "")
        where += " (en sandbox: la del sandbox en marcha)" if s.sandboxed else ""
        where += " (de este puesto)" if s.desk else ""
        lines.append(f"| `{s.key}` | {where} | `{s.default}` | {s.description} |")
    lines += ["", "Los secretos (claves privadas, clave SOL, tokens) no son configuración: se guardan cifrados "
              "(ver docs/security.md).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
