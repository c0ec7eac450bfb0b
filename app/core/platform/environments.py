"""The three environments Yupana works in, and what keeps them apart (docs/architecture.md, «Entornos»).

- sandbox: everything on this computer; the local stand-ins (app/sandbox) answer for SUNAT and the lookup
  providers. It speaks SUNAT beta's protocol, so its contract `ambiente` is "beta".
- beta: SUNAT's test service, at the addresses of the settings.
- produccion: SUNAT for real.

The `environment` setting says which one is in use. Each voucher, submission, cached lookup and messaging
instance (with its messages and subscriptions) records the environment it belongs to and is only ever seen,
numbered and sent there. The addresses of a running sandbox
are not settings: they live in the `sandbox_endpoints` table while the sandbox runs (`SandboxEndpoints`), are
read only in the sandbox environment and are cleared when it stops; beta and production read the settings. On a
database several desks share, each desk's sandboxes are its own (on its own computer): their addresses are kept in
the desk's data folder instead (`DeskSandboxEndpoints`, beside puesto.json), never in the shared table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from app.core.errors import YupanaError, invalid, not_configured
from app.core.platform.file_lock import exclusive_file_lock
from app.core.platform.paths import PrivateJsonFile
from app.core.platform.processes import owner_alive, owner_of_this_process
from app.core.storage.ports.database import Database
from app.core.storage.ports.platform import SandboxEndpointRepository
from app.core.storage.read_cache import ReadCache


class SettingsReader(Protocol):
    """What this module reads of the settings (app.core.platform.settings.Settings, which imports this module)."""

    def get(self, key: str) -> str: ...


SANDBOX, BETA, PRODUCCION = "sandbox", "beta", "produccion"


@dataclass(frozen=True)
class Environment:
    name: str  # the `environment` setting's value
    ambiente: str  # the contract's `ambiente`: which SUNAT service (and protocol) it speaks
    label: str  # how a shop owner reads it
    badge: str  # the short form of the status bar and the banner
    destination: str  # where its vouchers go, in a sentence


ENVIRONMENTS: dict[str, Environment] = {e.name: e for e in [
    Environment(SANDBOX, BETA, "Sandbox (todo en este equipo, para aprender)", "SANDBOX",
                "a los servidores de prueba de este equipo: nada sale a internet ni llega a SUNAT"),
    Environment(BETA, BETA, "SUNAT beta (pruebas con SUNAT)", "BETA",
                "al servidor de pruebas de SUNAT (beta): no tienen valor tributario"),
    Environment(PRODUCCION, PRODUCCION, "SUNAT producción (comprobantes reales)", "PRODUCCIÓN",
                "a SUNAT producción: son comprobantes reales, con valor tributario"),
]}
NAMES = tuple(ENVIRONMENTS)


def get(name: str) -> Environment:
    try:
        return ENVIRONMENTS[name]
    except KeyError:
        raise invalid("environment", f"El entorno «{name}» no existe. Válidos: {', '.join(NAMES)}.") from None


def ambiente_of(name: str) -> str:
    """The contract's `ambiente` of an environment: the sandbox stands in for SUNAT beta."""
    return get(name).ambiente


def in_settings(settings: SettingsReader) -> str:
    """The environment in use (setting `environment`), for the parts given the settings (messaging, addresses)."""
    return settings.get("environment")


def check_ambiente(environment: str, ambiente: str) -> None:
    """Operation 3 sends to the current environment only: an `ambiente` of another one is refused, not redirected."""
    if ambiente_of(environment) != ambiente:
        raise invalid("ambiente", f"El campo «ambiente» dice «{ambiente}», pero Yupana trabaja en el entorno "
                                  f"«{get(environment).label}» (ambiente «{ambiente_of(environment)}»): "
                                  "cambie el entorno en Ajustes → Entorno (o `yupana config set environment …`) "
                                  "antes de enviar.")


def _envios(count: int) -> str:
    return f"{count} envío pendiente" if count == 1 else f"{count} envíos pendientes"


def switch_summary(current: str, target: str, pending: dict[str, int]) -> str:
    """What changes when the environment becomes `target`, in a shop owner's words (`pending`: submissions still
    pending by environment): the windows ask with it before changing, `yupana config set environment` prints it
    after."""
    old, new = get(current), get(target)
    lines = [f"Pasar de «{old.label}» a «{new.label}»:", "",
             f"• Los comprobantes que emita irán {new.destination}.",
             f"• La lista y la numeración de comprobantes serán las de {new.badge}; las de {old.badge} quedan "
             "guardadas y vuelven cuando regrese a ese entorno."]
    if pending.get(old.name):
        lines.append(f"• {_envios(pending[old.name])} de {old.badge} esperan: no se envían a {new.badge}; se "
                     f"reanudan al volver a {old.badge}.")
    if pending.get(new.name):
        lines.append(f"• {_envios(pending[new.name])} de {new.badge} se reanudan ahora.")
    if new.name == SANDBOX:
        lines.append("• Los servidores de prueba se usan mientras estén en marcha en este equipo.")
    elif old.name == SANDBOX:
        lines.append("• Los servidores de prueba dejan de usarse; las consultas usan los proveedores de Ajustes → "
                     "Consultas.")
    if new.name == PRODUCCION:
        lines.append("• Necesita el certificado digital real de la empresa y su usuario y clave SOL.")
    return "\n".join(lines)


# ---------------------------------------------------------------- the running sandboxes' addresses


def process_owner() -> str:
    return owner_of_this_process("sandbox")


DESK_SANDBOX_FILE = "puesto-sandbox.json"  # beside puesto.json (settings.DESK_FILE)


class DeskSandboxEndpoints:
    """The SandboxEndpointRepository of a desk on a shared database: its own sandboxes' addresses in a private file
    of its data folder ({key: {"value", "owner"}}), so two desks' sandboxes never take each other's place. Written
    under a lock the desk's processes share (the app and `yupana sandbox --configure` beside it), replaced whole;
    read again only when the file changed (a stat per read: PrivateJsonFile)."""

    def __init__(self, home: Path) -> None:
        self._file = PrivateJsonFile(Path(home) / DESK_SANDBOX_FILE)
        self._lock = self._file.path.with_name(DESK_SANDBOX_FILE + ".lock")

    def _entries(self) -> dict[str, dict[str, str]]:
        try:
            stored = self._file.read()
        except ValueError:  # not JSON (edited by hand): no sandbox known, written whole at the next change
            return {}
        if not isinstance(stored, dict):
            return {}
        return {str(key): {"value": str(entry.get("value", "")), "owner": str(entry.get("owner", ""))}
                for key, entry in stored.items() if isinstance(entry, dict)}

    def _change(self, change: Callable[[dict[str, dict[str, str]]], None]) -> None:
        with exclusive_file_lock(self._lock):
            entries = self._entries()
            change(entries)
            self._file.write(entries)

    def put(self, values: dict[str, str], owner: str) -> None:
        self._change(lambda entries: entries.update({key: {"value": value, "owner": owner}
                                                     for key, value in values.items()}))

    def remove(self, keys: list[str], owner: str) -> None:
        def forget(entries: dict[str, dict[str, str]]) -> None:
            for key in keys:
                if entries.get(key, {}).get("owner") == owner:
                    del entries[key]
        self._change(forget)

    def owners(self) -> set[str]:
        return {entry["owner"] for entry in self._entries().values()}

    def remove_owners(self, owners: set[str]) -> None:
        def forget(entries: dict[str, dict[str, str]]) -> None:
            for key in [key for key, entry in entries.items() if entry["owner"] in owners]:
                del entries[key]
        self._change(forget)

    def all(self) -> dict[str, str]:
        return {key: entry["value"] for key, entry in self._entries().items()}


class SandboxEndpoints:
    """Addresses (and the public test tokens) of the sandboxes running for this data folder, by setting key or
    secret name. Written by `Sandbox.configure`, removed by `Sandbox.unconfigure`; the sandbox environment reads
    them instead of the settings. Never in the settings table, so beta and production never see them. In the
    database's table (read through a ReadCache), or a desk's own file (`DeskSandboxEndpoints`, read as it is)."""

    def __init__(self, database: Database, repository: SandboxEndpointRepository | DeskSandboxEndpoints) -> None:
        self._repository = repository
        self._cache = None if isinstance(repository, DeskSandboxEndpoints) else ReadCache(database)

    def _forget(self) -> None:
        if self._cache is not None:
            self._cache.clear()

    def put(self, values: dict[str, str], owner: str | None = None) -> None:
        self._repository.put(values, owner or process_owner())
        self._forget()

    def remove(self, keys: list[str], owner: str | None = None) -> None:
        """Forget these keys when `owner` wrote them last (another process's newer sandbox keeps its own)."""
        self._repository.remove(keys, owner or process_owner())
        self._forget()

    def purge_dead(self) -> int:
        """Drop what a process killed without stopping its sandboxes left behind; returns how many owners."""
        dead = {owner for owner in self._repository.owners() if not owner_alive(owner)}
        if dead:
            self._repository.remove_owners(dead)
            self._forget()
        return len(dead)

    def all(self) -> dict[str, str]:
        if self._cache is None:
            return self._repository.all()
        return self._cache.get("sandbox_endpoints", self._repository.all)

    def get(self, key: str) -> str | None:
        return self.all().get(key)


def sandbox_not_running(what: str) -> YupanaError:
    return not_configured(f"El entorno sandbox usa {what} de este equipo, y no está en marcha: abra Yupana (lo "
                          "inicia solo) o ejecute `yupana sandbox --configure` en otra terminal. Nada se envió.")
