"""The administration group service (protocols.Administration): the data folder, settings, companies, secrets,
environments, the local API's token, the sandboxes' addresses and the event bus."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from pathlib import Path

from app.core.errors import YupanaError, invalid
from app.core.invoicing import backup_schedule, backups
from app.core.invoicing.backup_schedule import BackupScheduler, BackupStatus
from app.core.invoicing.backups import BackupCheck
from app.core.invoicing.outbox import Outbox
from app.core.platform import environments, events
from app.core.platform.addresses import Addresses
from app.core.platform.api_token import ApiTokens
from app.core.platform.companies import Companies, Company, PrintOptions
from app.core.platform.events import EventBus, Listener
from app.core.platform.secrets import LOCKED, SecretStore
from app.core.platform.settings import Settings, SettingValue
from app.core.records import DatabaseCheck, EventHandle, TokenState
from app.core.storage.group_commit import MAX_BATCH, GroupCommit, GroupCommitHandle
from app.core.storage.ports.database import Database


class AdministrationGroup:
    def __init__(self, *, home: Path, log_file: Path, storage: Database, settings: Settings, addresses: Addresses,
                 sandbox_endpoints: environments.SandboxEndpoints, companies: Companies, secrets: SecretStore,
                 api_tokens: ApiTokens, outbox: Outbox, bus: EventBus,
                 setting_changed: Callable[[str, str], None], on_close: Callable[[Callable[[], None]], None],
                 backup_scheduler: BackupScheduler, backup_snapshot: Callable[[Path], None] | None = None) -> None:
        self._home = home
        self._backup_snapshot = backup_snapshot  # a consistent copy of the database into a path (storage.engines)
        self._log_file = log_file
        self._storage = storage
        self._settings = settings
        self._addresses = addresses
        self._sandbox_endpoints = sandbox_endpoints
        self._companies = companies
        self._secrets = secrets
        self._api_tokens = api_tokens
        self._outbox = outbox
        self._bus = bus
        self._setting_changed = setting_changed  # the engine's: what else a new value changes at once
        self._on_close = on_close
        self._backup_scheduler = backup_scheduler  # the scheduled backups' loop (issue 35)

    # ------------------------------------------------------------ the data folder

    def home(self) -> Path:
        return self._home

    def log_file(self) -> Path:
        return self._log_file

    def database_file(self) -> Path:
        return self._storage.path

    def backup_status(self) -> BackupStatus:
        """The scheduled backups' folder, the newest backup in it, this desk's last try and a warning when the
        folder is unreachable or the newest backup is older than 7 days (backup_schedule.status)."""
        found = backup_schedule.status(self._settings.get("backup_folder"), self._backup_scheduler.last)
        if found.folder and not found.warning and self._secrets.needs_recovery():
            return dataclasses.replace(found, warning=backup_schedule.NO_RECOVERY_WARNING)
        return found

    def backup_now(self) -> None:
        """«Hacer copia ahora»: a backup into the settings' folder on the backups' loop (never this thread); its
        result comes in `backup_status().last_run`."""
        if not self._settings.get("backup_folder"):
            raise invalid("backup_folder", "Elija primero la carpeta de las copias de seguridad.")
        self._backup_scheduler.start()
        self._backup_scheduler.request_now()

    def create_backup(self, folder: str | Path, recovery_passphrase: str | None = None) -> BackupCheck:
        """A verified backup of this folder's SQLite database in `folder`, made while everything runs
        (app.core.invoicing.backups); a 400 naming the problem when it cannot be made or does not verify.
        `recovery_passphrase` becomes the folder's recovery passphrase when its keys are the keyring's and it has
        none yet (`needs_recovery_passphrase`): the master key goes into the backup wrapped by it."""
        if recovery_passphrase:
            self._secrets.set_recovery(recovery_passphrase)
        keys = {"origen": self._secrets.key_source(), "frase_recuperacion": self._secrets.has_recovery()}
        source = self._backup_snapshot if self._backup_snapshot is not None else self._storage.path
        return backups.create(source, folder, self._home, keys=keys, environment=self._addresses.current())

    def set_recovery_passphrase(self, passphrase: str) -> None:
        """Choose the recovery passphrase of a folder whose keys the keyring keeps (once; the same one again is
        accepted, another refused): the master key is kept wrapped by it, so every backup carries it."""
        self._secrets.set_recovery(passphrase)

    def change_recovery_passphrase(self, passphrase: str) -> None:
        """Replace the recovery passphrase (chosen the first time when there is none) where the keys are open: the
        backups made from now on open with the new one, those made before still with the old one."""
        self._secrets.change_recovery(passphrase)

    def has_recovery_passphrase(self) -> bool:
        """True once a recovery passphrase was chosen (the window then offers to change it)."""
        return self._secrets.has_recovery()

    def needs_recovery_passphrase(self) -> bool:
        """True when this folder's keys live in the keyring and no recovery passphrase was chosen yet: a backup
        without one opens its certificates and SOL password on no other PC (docs/backups.md)."""
        return self._secrets.needs_recovery()

    def check_database(self, budget_s: float, *, clock: Callable[[], float] | None = None,
                       every: int = 10_000) -> DatabaseCheck:
        """SQLite's quick_check within a time budget (Storage.quick_check), with the file's size and table count."""
        findings, finished = self._storage.quick_check(budget_s, clock=clock or time.monotonic, every=every)
        return DatabaseCheck(findings, finished, self._storage.path, self._storage.path.stat().st_size,
                             self._storage.table_count())

    def change_counter(self) -> int:
        return self._storage.change_counter()

    # ------------------------------------------------------------ settings and environments

    def config_get(self, key: str) -> str:
        return self._settings.get(key)

    def config_set(self, key: str, value: str) -> str:
        clean = self._settings.set(key, value)
        if key == "log_level":
            logging.getLogger("app").setLevel(clean)
        self._setting_changed(key, clean)
        self._bus.emit(events.SettingsChanged(key))
        return clean

    def config_list(self) -> list[SettingValue]:
        return self._settings.values()

    def environment(self) -> environments.Environment:
        """The environment in use (setting `environment`): where vouchers go, which list and numbering apply."""
        return environments.get(self._addresses.current())

    def switch_summary(self, target: str) -> str:
        """What changes if the environment becomes `target`: pending submissions stay with their environment."""
        return environments.switch_summary(self._addresses.current(), target, self._outbox.pending_by_environment())

    # ------------------------------------------------------------ companies

    def set_company(self, company: Company) -> Company:
        saved = self._companies.save(company)
        self._bus.emit(events.CompanySaved(saved.ruc))
        return saved

    def company(self, ruc: str) -> Company | None:
        return self._companies.get(ruc)

    def companies(self) -> list[Company]:
        return self._companies.all()

    def print_options(self, ruc: str) -> PrintOptions:
        return self._companies.print_options(ruc)

    def set_print_options(self, ruc: str, formato: str | None = None, logo: bytes | None = None,
                          clear_logo: bool = False) -> PrintOptions:
        options = self._companies.set_print_options(ruc, formato, logo, clear_logo)
        self._bus.emit(events.CompanySaved(ruc))
        return options

    def prices_include_igv(self, ruc: str) -> bool:
        """The company's default for the voucher form's «Precios incluyen IGV» (docs/catalog.md)."""
        return self._companies.prices_include_igv(ruc)

    def set_prices_include_igv(self, ruc: str, value: bool) -> bool:
        saved = self._companies.set_prices_include_igv(ruc, value)
        self._bus.emit(events.CompanySaved(ruc))
        return saved

    def detraction_account(self, ruc: str) -> str | None:
        """The company's Banco de la Nación account the voucher form fills in the detracción section."""
        return self._companies.detraction_account(ruc)

    def set_detraction_account(self, ruc: str, cuenta: str | None) -> str | None:
        saved = self._companies.set_detraction_account(ruc, cuenta)
        self._bus.emit(events.CompanySaved(ruc))
        return saved

    # ------------------------------------------------------------ secrets

    def secret_state(self) -> str:
        """Whether saved keys can be opened: app.core.platform.secrets.UNLOCKED, NEW_PASSPHRASE, LOCKED or
        KEYRING_MISSING."""
        return self._secrets.state()

    def unlock_secrets(self, passphrase: str) -> None:
        """Open the saved keys with the passphrase typed by the person (the first one becomes the folder's)."""
        self._secrets.unlock(passphrase)
        self._bus.emit(events.SecretsUnlocked())

    def open_locked_secrets(self, ask: Callable[[str], str | None]) -> bool:
        """Keys only a passphrase opens here (a restored backup's: the other PC's keyring stayed behind), asked until
        right or declined: `ask(why the last one typed failed, "" at first)` gives the passphrase, None or "" to stop.
        True unless they stay locked (`yupana respaldo restaurar` and the restore window)."""
        error = ""
        while self.secret_state() == LOCKED:
            typed = ask(error)
            if not typed:
                return False
            try:
                self.unlock_secrets(typed)
            except YupanaError as exc:
                error = exc.message
        return True

    def set_passphrase_prompt(self, prompt: Callable[[bool], str | None] | None) -> None:
        """How the secret store asks for the passphrase when it needs one (the command line asks in the terminal)."""
        self._secrets.passphrase_prompt = prompt

    # ------------------------------------------------------------ the local API's token

    def api_token(self) -> str:
        """The local HTTP API's token (created on first use); the settings window shows it."""
        return self._api_tokens.current()

    def new_api_token(self) -> str:
        """Replace the local API's token: the previous one stops working at once, also in a running server."""
        token = self._api_tokens.rotate()
        self._bus.emit(events.ApiTokenChanged())
        return token

    def api_token_matches(self, presented: str) -> bool:
        return self._api_tokens.matches(presented)

    def token_state(self) -> TokenState:
        """The database's change counter and the stored token's hash, read together (other writers checked once)."""
        with self._storage.steady_reads():
            return TokenState(self._storage.change_counter(), self._api_tokens.stored_hash())

    # ------------------------------------------------------------ sandboxes, events, closing

    def register_sandbox(self, endpoints: dict[str, str]) -> None:
        """A sandbox running for this folder: its addresses, read by the sandbox environment only."""
        self._sandbox_endpoints.put(endpoints)

    def unregister_sandbox(self, keys: list[str]) -> None:
        self._sandbox_endpoints.remove(keys)

    def subscribe(self, listener: Listener) -> EventHandle:
        """`listener(name, payload)` for every event (payloads in app.core.platform.events) until cancelled."""
        return EventHandle(self._bus.subscribe(listener))

    def on_close(self, closer: Callable[[], None]) -> None:
        """Something (a server, a sandbox) to stop when the engine closes."""
        self._on_close(closer)

    # ------------------------------------------------------------ requests sharing commits

    def group_commit(self, name: str, max_batch: int = MAX_BATCH) -> GroupCommitHandle:
        """A writer thread on this folder's database whose requests, arriving together, share one commit
        (app.core.storage.group_commit); its owner closes it before the engine closes."""
        return GroupCommitHandle(GroupCommit(self._storage, name, max_batch=max_batch))

    def held_events(self) -> events.HeldEvents:
        """Events emitted on this thread inside its `with` block kept until `release()` (after a group commit)."""
        return events.HeldEvents(self._bus)
