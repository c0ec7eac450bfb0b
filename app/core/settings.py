"""Every setting Yupana knows, with its default and meaning (docs/configuration.md lists them).

Settings are plain values kept in the `settings` table; secrets (keys, SOL passwords, tokens) are
never settings: they live in the secret store (`app.core.secrets`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import invalid
from .storage import ReadCache, Storage


def _choice(*allowed: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"valores válidos: {', '.join(allowed)}")
        return value

    return check


def _integer(low: int, high: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value.strip().lstrip("-").isdigit() or not low <= int(value) <= high:
            raise ValueError(f"debe ser un número entero entre {low} y {high}")
        return str(int(value))

    return check


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


def _url(value: str) -> str:
    if value and not value.startswith(("http://", "https://")):
        raise ValueError("debe empezar por http:// o https://")
    return value.rstrip("/") if value else value


def _providers(value: str) -> str:
    names = [name.strip().lower() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in ("yupana", "factiliza")]
    if unknown:
        raise ValueError(f"proveedor desconocido {', '.join(unknown)}; válidos: yupana, factiliza")
    return ",".join(names)


def _text(value: str) -> str:
    return value


@dataclass(frozen=True)
class Setting:
    key: str
    default: str
    description: str
    check: Callable[[str], str] = _text


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        Setting("environment", "sandbox",
                "Entorno de trabajo de la aplicación: sandbox (todo local), beta o produccion.",
                _choice("sandbox", "beta", "produccion")),
        Setting("sunat_rules_dir", "",
                "Carpeta con las reglas oficiales de SUNAT (la carpeta VALI del Facturador SUNAT). "
                "Vacío: solo las validaciones propias de Yupana."),
        Setting("signature_algorithm", "rsa-sha1",
                "Algoritmo de firma XML: rsa-sha1 (el que usa SUNAT) o rsa-sha256.",
                _choice("rsa-sha1", "rsa-sha256")),
        Setting("sunat_url_beta", "https://e-beta.sunat.gob.pe/ol-ti-itcpfegem-beta/billService",
                "Servicio billService de SUNAT beta.", _url),
        Setting("sunat_url_produccion", "https://e-factura.sunat.gob.pe/ol-ti-itcpfegem/billService",
                "Servicio billService de SUNAT producción.", _url),
        Setting("sunat_url_consulta", "https://e-factura.sunat.gob.pe/ol-it-wsconscpegem/billConsultService",
                "Servicio billConsultService (consulta de CDR) de SUNAT.", _url),
        Setting("sunat_timeout_s", "30", "Tiempo máximo de espera de una respuesta de SUNAT, en segundos.",
                _integer(1, 600)),
        Setting("sunat_retry_base_s", "5",
                "Espera antes del primer reintento de un envío a SUNAT sin respuesta, en segundos; se duplica en "
                "cada reintento (con variación al azar).", _seconds(0.001, 3600)),
        Setting("sunat_retry_max_s", "900", "Espera máxima entre reintentos de un envío a SUNAT, en segundos.",
                _seconds(0.001, 86400)),
        Setting("registry_cache_ttl_s", "86400",
                "Vigencia de una consulta (RUC, CE, placa) guardada en caché, en segundos.", _integer(0, 10 ** 8)),
        Setting("registry_providers", "",
                "Proveedores de consultas, en orden, separados por comas (p. ej. yupana,factiliza).", _providers),
        Setting("registry_yupana_url", "",
                "Dirección base de otro servicio Yupana (o compatible con este contrato) para consultas; "
                "su token se guarda cifrado.", _url),
        Setting("registry_factiliza_url", "https://api.factiliza.com/v1",
                "Dirección base de un proveedor de consultas con la forma de Factiliza (/ruc/info/…); "
                "su token se guarda cifrado.", _url),
        Setting("registry_timeout_s", "8", "Tiempo máximo de espera de un proveedor de consultas, en segundos.",
                _integer(1, 120)),
        Setting("api_host", "127.0.0.1", "Dirección de la API local (solo este equipo)."),
        Setting("api_port", "8787", "Puerto de la API local.", _integer(0, 65535)),
        Setting("listener_host", "127.0.0.1",
                "Dirección del receptor de webhooks de mensajería. 127.0.0.1: solo este equipo; la dirección de "
                "la red local si la pasarela corre en otro equipo (se muestra una advertencia)."),
        Setting("listener_port", "8788", "Puerto del receptor de webhooks de mensajería (0 elige uno libre).",
                _integer(0, 65535)),
        Setting("listener_public_url", "",
                "Dirección pública con la que la pasarela llega al receptor (un túnel o la IP de la red local); "
                "vacío: la dirección y el puerto del receptor.", _url),
        Setting("messaging_timeout_s", "15", "Tiempo máximo de espera de la pasarela de mensajería, en segundos.",
                _integer(1, 120)),
        Setting("log_level", "INFO", "Nivel de detalle del registro: DEBUG, INFO, WARNING o ERROR.",
                _choice("DEBUG", "INFO", "WARNING", "ERROR")),
    ]
}


class Settings:
    """Typed access to the settings table, with defaults for what was never set."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._cache = ReadCache(storage)  # read on every operation: kept in memory until written

    @staticmethod
    def _definition(key: str) -> Setting:
        if key not in SETTINGS:
            raise invalid("key", f"La configuración «{key}» no existe. Vea `yupana config list`.")
        return SETTINGS[key]

    def get(self, key: str) -> str:
        definition = self._definition(key)
        return self._stored().get(key, definition.default)

    def _stored(self) -> dict[str, str]:
        return self._cache.get("settings", lambda: {
            r["key"]: r["value"] for r in self._storage.query("SELECT key, value FROM settings")})

    def get_int(self, key: str) -> int:
        return int(self.get(key))

    def set(self, key: str, value: str) -> str:
        definition = self._definition(key)
        try:
            clean = definition.check(value.strip())
        except ValueError as exc:
            raise invalid(key, f"Valor no válido para «{key}»: {exc}.") from None
        with self._storage.write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, clean))
        self._cache.clear()
        return clean

    def all(self) -> dict[str, str]:
        stored = self._stored()
        return {key: stored.get(key, s.default) for key, s in SETTINGS.items()}


def markdown() -> str:
    """docs/configuration.md, generated from SETTINGS so the two never disagree."""
    lines = ["# Configuración", "",
             "Generado con `python -m app.core.settings > docs/configuration.md`; un test comprueba que está al día.",
             "", "Se leen y cambian con `yupana config get|set|list` o en la ventana Ajustes.", "",
             "| clave | por defecto | significado |", "|---|---|---|"]
    for s in SETTINGS.values():
        lines.append(f"| `{s.key}` | `{s.default}` | {s.description} |")
    lines += ["", "Los secretos (claves privadas, clave SOL, tokens) no son configuración: se guardan cifrados "
              "(ver docs/security.md).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
