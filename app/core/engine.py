"""The engine: one object opened on a data folder that wires the parts and exposes five group services.

`engine.invoicing`, `engine.catalog`, `engine.messaging`, `engine.lookups` and `engine.admin` (each described by a
Protocol in app/core/services/protocols.py) are its whole face, with `call()` (the contract's eight operations in
JSON envelopes, for the thin layers) and `close()`. The parts (stores, outbox, workers) are private: the windows,
the `yupana` command and the local HTTP API reach the engine through app/core/api.py only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.contract import (
    ENVIAR_PATH,
    GUIAS_ENVIAR_PATH,
    VALIDAR_PATH,
    ChatSendRequest,
    ChatWebhookRequest,
    ContractModel,
    EnviarRequest,
    FirmarRequest,
    GenerarXmlRequest,
    ValidarRequest,
    parse_json,
    success_envelope,
)
from app.core.errors import ErrorCode, YupanaError, invalid
from app.core.invoicing import cdr, soap, statuses
from app.core.invoicing.backup_files import VoucherFileWriter
from app.core.invoicing.backup_schedule import BackupScheduler
from app.core.invoicing.batches import Batches
from app.core.invoicing.catalog.customers import Customers
from app.core.invoicing.catalog.products import Products
from app.core.invoicing.catalog.transport import TransportCatalogue
from app.core.invoicing.certificates import CertificateStore
from app.core.invoicing.drafts import Drafts
from app.core.invoicing.emission import Emitter
from app.core.invoicing.generation import Generation
from app.core.invoicing.gre_clients import GreClients
from app.core.invoicing.numbering import Numbering
from app.core.invoicing.outbox import Outbox
from app.core.invoicing.printed import Printed
from app.core.invoicing.signing import Signing
from app.core.invoicing.sunat import Submission, SunatClients
from app.core.invoicing.validity import ValidityQueries
from app.core.invoicing.voids import Voids
from app.core.invoicing.voucher_store import VoucherStore
from app.core.lookup import padron, providers
from app.core.lookup.registry import Registry
from app.core.messaging.forwarding import Forwarder
from app.core.messaging.service import SANDBOX_INSTANCE, MessagingService, desk_sandbox_instance
from app.core.platform import environments, events
from app.core.platform.addresses import Addresses
from app.core.platform.api_token import ApiTokens
from app.core.platform.companies import Companies
from app.core.platform.desk_events import DeskRelay
from app.core.platform.events import EventBus
from app.core.platform.logs import close_logging, setup_logging
from app.core.platform.paths import data_home, database_path
from app.core.platform.processes import HOST
from app.core.platform.secrets import SecretStore
from app.core.platform.settings import DeskSettings, Settings
from app.core.platform.turns import DeskTurn
from app.core.services.administration import AdministrationGroup
from app.core.services.catalog import CatalogGroup
from app.core.services.invoicing import InvoicingGroup
from app.core.services.lookups import LookupsGroup
from app.core.services.messaging import MessagingGroup
from app.core.services.protocols import Administration, Catalog, Invoicing, Lookups, Messaging
from app.core.storage.engines import backup_snapshot, change_feed, is_shared, open_desk_database, repositories
from app.core.storage.sqlite.padron import SqlitePadronFiles

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Operation:
    """One contract endpoint: its path, method, request model and the group service's method that runs it."""

    name: str
    method: str
    path: str
    request: type[ContractModel] | None
    group: str
    handler: str


OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in [
        Operation("xml", "POST", "/api/v1/facturacion/xml", GenerarXmlRequest, "invoicing", "generate_xml"),
        Operation("firmar", "POST", "/api/v1/facturacion/firmar", FirmarRequest, "invoicing", "sign"),
        Operation("enviar", "POST", ENVIAR_PATH, EnviarRequest, "invoicing", "send"),
        Operation("guia-enviar", "POST", GUIAS_ENVIAR_PATH, EnviarRequest, "invoicing", "send_guia"),
        Operation("validar", "POST", VALIDAR_PATH, ValidarRequest, "invoicing", "validate"),
        Operation("chat-send", "POST", "/api/v1/chat/send", ChatSendRequest, "messaging", "send"),
        Operation("chat-webhook", "POST", "/api/v1/chat/webhook", ChatWebhookRequest, "messaging", "subscribe"),
        Operation("ruc", "GET", "/api/v1/ruc/{numero}", None, "lookups", "ruc"),
        Operation("ce", "GET", "/api/v1/ce/{numero}", None, "lookups", "ce"),
        Operation("placa", "GET", "/api/v1/placa/{numero}", None, "lookups", "placa"),
    ]
}


@dataclass(frozen=True)
class CallResult:
    """`Engine.call`'s answer: the HTTP status and the contract's envelope (`status, envelope = engine.call(...)`)."""

    status: int
    envelope: dict[str, Any]

    def __iter__(self) -> Iterator[Any]:
        return iter((self.status, self.envelope))


OPEN_RETRY_FIRST_S, OPEN_RETRY_MAX_S = 1.0, 10.0  # Engine.open_waiting: the shared database off at start


class Engine:
    """The local engine of one data folder. Thread-safe: the GUI thread, workers and listeners share it."""

    invoicing: Invoicing
    catalog: Catalog
    messaging: Messaging
    lookups: Lookups
    admin: Administration

    @classmethod
    def open_waiting(cls, home: str | Path | None = None, *, waiting: Callable[[str, float], None],
                     stopped: Callable[[float], bool]) -> Engine | None:
        """The engine, opened once its shared database answers (issue 34, item 8: the server may be off when the app
        or `yupana serve` starts). While the server is out of reach, `waiting(message, seconds)` is told why in
        Spanish (naming the server) and when the next try comes, and `stopped(seconds)` waits that long (an event's
        `wait`): True gives up (None). Any other refusal (a wrong password, a schema too new) raises at once."""
        delay = OPEN_RETRY_FIRST_S
        while True:
            try:
                return cls(home)
            except YupanaError as exc:
                if exc.code != ErrorCode.UPSTREAM_UNAVAILABLE:
                    raise
                log.info("shared database out of reach at start, trying again in %s s: %s", delay, exc.message)
                waiting(exc.message, delay)
            if stopped(delay):
                return None
            delay = min(delay * 2, OPEN_RETRY_MAX_S)

    def __init__(self, home: str | Path | None = None) -> None:
        self._home = data_home(home)
        self._log_file = setup_logging(self._home)
        self._closers: list[Callable[[], None]] = []
        desk = DeskSettings(self._home)  # `database_url`: SQLite in the folder, or the desks' shared PostgreSQL
        self._storage = open_desk_database(database_path(self._home), desk.get("database_url"))
        self._repositories = repos = repositories(self._storage)
        self._settings = Settings(self._storage, repos.settings, desk)
        self._events = EventBus()
        self._relay_desks()
        self._wire_platform()
        self._wire_lookups()
        self._wire_invoicing()
        self._wire_messaging()
        self._wire_backups()
        self.admin = AdministrationGroup(
            home=self._home, log_file=self._log_file, storage=self._storage, settings=self._settings,
            addresses=self._addresses, sandbox_endpoints=self._sandbox_endpoints, companies=self._companies,
            secrets=self._secrets, api_tokens=self._api_tokens, outbox=self._outbox, bus=self._events,
            setting_changed=self._setting_changed, on_close=self._closers.append,
            backup_scheduler=self._backup_scheduler,
            backup_snapshot=lambda target: backup_snapshot(self._storage, target))
        self._start_workers()
        log.info("engine opened on %s", self._home)

    # ------------------------------------------------------------ wiring (no part knows the engine)

    def _relay_desks(self) -> None:
        """Several desks on one shared database: what one tells on its bus, the others hear (desk_events)."""
        feed = change_feed(self._storage)
        if feed is not None:
            self._closers.append(DeskRelay(self._events, feed).close)

    def _desk_turn(self, job: str) -> DeskTurn | None:
        """On a shared database, the turn to run `job`'s rounds (one desk at a time, under a lease: platform.turns),
        given up when the engine closes (after the job stops: closers run last first); None on a data folder's own
        database."""
        if getattr(self._storage, "engine", "sqlite") != "postgres":
            return None
        turn = DeskTurn(self._repositories.desk_turns, job)
        self._closers.append(turn.give_up)
        return turn

    def _wire_platform(self) -> None:
        # Addresses of the sandboxes running for this folder: read by the sandbox environment only.
        # On a shared database each desk's own (its data folder), never the table the desks share.
        endpoints = (environments.DeskSandboxEndpoints(self._home) if is_shared(self._storage)
                     else self._repositories.sandbox_endpoints)
        self._sandbox_endpoints = environments.SandboxEndpoints(self._storage, endpoints)
        self._sandbox_endpoints.purge_dead()
        repos = self._repositories
        self._companies = Companies(self._storage, repos.companies)
        # On a database several desks share, the keys open with the business's passphrase (issue 34, item 3).
        self._secrets = SecretStore(repos.secrets, shared=is_shared(self._storage), database=self._storage)
        self._certificates = CertificateStore(self._storage, repos.certificates, self._secrets)
        self._api_tokens = ApiTokens(self._storage, repos.api_tokens, self._secrets)
        self._addresses = Addresses(self._settings, self._sandbox_endpoints, self._secrets)
        logging.getLogger("app").setLevel(self._settings.get("log_level"))

    def _wire_lookups(self) -> None:
        # Lookups: the offline register, the providers and the cache in front of them.
        self._padron = padron.PadronRegister(self._repositories.padron_pointer, SqlitePadronFiles(),
                                             self._home)
        self._providers = providers.ProviderHub(self._addresses)
        self._registry = Registry(self._repositories.registry_cache, self._addresses, self._providers,
                                  self._padron)
        self._closers += [self._padron.close, self._providers.close]
        self._customers = Customers(self._storage, self._repositories.customers)  # docs/catalog.md
        self._products = Products(self._storage, self._repositories.products)
        self._transport = TransportCatalogue(self._storage, self._repositories.transport)
        self.catalog = CatalogGroup(self._customers, self._products, self._transport)
        self.lookups = LookupsGroup(registry=self._registry, padron=self._padron, customers=self._customers,
                                    secrets=self._secrets, bus=self._events)

    def _wire_invoicing(self) -> None:
        self._vouchers = VoucherStore(self._storage, self._repositories.vouchers, self._addresses.current,
                                      self._voucher_changed)
        self._generation = Generation(self._vouchers, self._settings, self._companies.get, self._customer_name,
                                      self._remember_customers)
        self._signing = Signing(self._vouchers, self._certificates, self._settings)
        self._batches = Batches(self._generation, self._signing, self._vouchers_signed)
        self._closers.append(self._batches.close)  # its signing workers (started at the first large batch)
        self._printed = Printed(self._vouchers, self._companies, self._guia_link)
        # Submissions to SUNAT: one reused HTTP client per SUNAT endpoint, closed after the worker stops.
        self._sunat_http = soap.HttpPool()
        self._closers.append(self._sunat_http.close)
        self._sunat_clients = SunatClients(self._addresses, self._secrets, self._sunat_http)
        self._gre_clients = GreClients(self._addresses, self._secrets, self._sunat_clients.sol_credentials,
                                       self._repositories.gre_tickets)
        self._sunat_clients.gre = self._gre_clients
        self._closers.append(self._gre_clients.close)
        self._validity = ValidityQueries(self._addresses, self._secrets)
        self._closers.append(self._validity.close)
        # One path per boleta: the outbox reads the summaries' lines, the resumen diario the outbox's rows.
        submissions, summaries = self._repositories.submissions, self._repositories.summaries
        self._outbox = Outbox(self._storage, submissions, self._settings, self._events,
                              self._vouchers, self._addresses.current, self._sunat_clients, summaries=summaries)
        self._submission = Submission(self._vouchers, self._outbox, self._sunat_clients, self._settings)
        self._emitter = Emitter(self._generation, self._signing, self._submission)
        self._closers.append(self._outbox.stop)
        # Voiding (RA, RC): summaries numbered, signed and sent here, their tickets followed to SUNAT's answer.
        self._voids = Voids(self._vouchers, summaries, self._storage, self._settings,
                            self._sunat_clients, self._certificates, self._issuer_name,
                            on_change=self._summary_changed, submissions=submissions,
                            turn=self._desk_turn("summary-poller"))
        self._closers.append(self._voids.close)
        self.invoicing = InvoicingGroup(
            vouchers=self._vouchers, generation=self._generation, signing=self._signing, batches=self._batches,
            submission=self._submission, emitter=self._emitter, outbox=self._outbox, voids=self._voids,
            printed=self._printed, certificates=self._certificates, sunat_clients=self._sunat_clients,
            companies=self._companies, bus=self._events, drafts=Drafts(self._repositories.drafts),
            numbering=Numbering(self._vouchers, summaries, self._sunat_clients, self._home, lambda: self._voids.today()),
            validity=self._validity)

    def _sandbox_instance(self) -> str:
        """This desk's gateway sandbox instance: «demo» in a folder's own database, one of its own on a shared one."""
        return desk_sandbox_instance(self._home, HOST) if is_shared(self._storage) else SANDBOX_INSTANCE

    def _wire_messaging(self) -> None:
        # The service, the webhook listener (started by the app and `yupana serve`) and the forwarder.
        self._messaging = MessagingService(self._storage, self._repositories.messaging, self._secrets,
                                           self._settings, self._events,
                                           listener_base_url=lambda: self._messaging_group.listener_base_url(),
                                           after_ingest=lambda: self._forwarder.wake(),
                                           sandbox_instance=self._sandbox_instance(), shared=is_shared(self._storage))
        self._forwarder = Forwarder(self._messaging.store, self._messaging.subscription_secret, self._events,
                                    turn=self._desk_turn("forwarder"))
        self.messaging = self._messaging_group = MessagingGroup(
            service=self._messaging, forwarder=self._forwarder, printed=self._printed, settings=self._settings,
            bus=self._events, home=self._home)
        self._closers += [self._messaging.close, self._forwarder.stop, self._messaging_group.stop_listener]

    def _wire_backups(self) -> None:
        """The scheduled backups (issue 35): their loop counts the vouchers signed from the events; another loop
        writes each voucher's signed XML and CDR into the backup folder as they are made (backup_files). On a shared
        database, the desk holding the backups' turn does both (the writer's loop keeps the turn)."""
        files = self._backup_files = VoucherFileWriter(lambda: self._settings.get("backup_folder"),
                                                       self.invoicing.voucher, self.invoicing.voucher_cdr,
                                                       self._voids.outcome, turn=self._desk_turn("backups"))
        scheduler = self._backup_scheduler = BackupScheduler(lambda folder: self.admin.create_backup(folder),
                                                             self._settings.get, files.holding)

        def on_voucher(_name: str, payload: events.Event) -> None:
            if isinstance(payload, events.SummaryChanged):
                files.summaries_changed([payload.id])  # the RA/RC's signed XML (and answer) into the folder too
            if isinstance(payload, events.VoucherChanged):
                files.changed(payload.ids)  # signed XML and CDR into the backup folder, on its own loop
                if payload.status == statuses.FIRMADO:
                    scheduler.vouchers_signed(len(payload.ids))

        self._closers += [self._events.subscribe(on_voucher), scheduler.stop, files.stop]

    def _start_workers(self) -> None:
        """The background workers start at once only when something waits for them."""
        self._backup_scheduler.start()
        self._backup_files.start()
        self._outbox.start_if_pending()
        self._voids.start_if_pending()
        self._forwarder.start_if_pending()

    def _setting_changed(self, key: str, value: str) -> None:
        if key == "environment":  # the new environment's pending submissions and deliveries are due now
            self._outbox.wake()
            if self._forwarder.store.next_due_at() is not None:
                self._forwarder.wake()
        if key.startswith("backup_"):  # a new folder or schedule: looked at now
            self._backup_scheduler.start()
            self._backup_scheduler.wake()
            self._backup_files.start()
        if key in ("listener_host", "listener_port"):
            self._messaging_group.restart_listener_if_running()

    def _voucher_changed(self, voucher_id: int, status: str) -> None:
        self._events.emit(events.VoucherChanged((voucher_id,), status))

    def _vouchers_signed(self, ids: list[int]) -> None:
        self._events.emit(events.VoucherChanged(tuple(ids), statuses.FIRMADO))

    def _summary_changed(self, row: dict[str, Any]) -> None:
        self._events.emit(events.SummaryChanged(row["id"], row["ident"], row["state"], row["ticket"]))

    def _issuer_name(self, ruc: str) -> str | None:
        company = self._companies.get(ruc)
        return company.razon_social if company else None

    def _remember_customers(self, docs: list) -> None:
        """After vouchers are issued (one, or a batch's block): their customers are kept in the catalogue (and a
        guía's vehicles, drivers and carrier)."""
        self._customers.remember_all((doc.receptor.tipo_documento, doc.receptor.numero_documento, doc.receptor.nombre,
                                      doc.receptor.direccion) for doc in docs)
        self._transport.remember_guias(docs)  # a guía's vehicles, drivers and carrier, offered in the next one

    def _guia_link(self, voucher_id: int) -> str | None:
        """The link an accepted guía's CDR gives it (its printed QR); None while SUNAT has not accepted it."""
        row = self._outbox.cdr_for_voucher(voucher_id)
        if row is None or row.get("estado") not in (statuses.ACEPTADO, statuses.OBSERVADO):
            return None
        return cdr.document_link(cdr.xml_text(row.get("cdr_zip")))

    def _customer_name(self, ruc: str) -> str | None:
        """A customer's name for the builder, from the lookups (cache, register, providers)."""
        return self._registry.ruc(ruc).razon_social

    # ------------------------------------------------------------ the contract's operations in JSON envelopes

    def call(self, operation: str, body: bytes | str | dict[str, Any] | None = None,
             numero: str | None = None) -> CallResult:
        """Run one operation from JSON; its HTTP status and envelope. Never raises."""
        try:
            op = OPERATIONS.get(operation)
            if op is None:
                raise invalid("operation", f"La operación «{operation}» no existe. Válidas: {', '.join(OPERATIONS)}.")
            handler = getattr(getattr(self, op.group), op.handler)
            with self._storage.steady_reads():  # settings, token, company: other writers checked once per call
                if op.request is None:
                    if numero is None or not str(numero).strip():
                        raise invalid("numero", "El campo «numero» es obligatorio.")
                    result = handler(str(numero).strip())
                else:
                    result = handler(body if isinstance(body, dict) else parse_json(body))
            return CallResult(200, success_envelope(result))
        except YupanaError as exc:
            log.info("operation %s answered %s: %s", operation, exc.code, exc.message)
            return CallResult(exc.http_status, exc.to_envelope())
        except Exception:
            log.exception("operation %s failed unexpectedly", operation)
            error = YupanaError(ErrorCode.INTERNAL,
                                f"Error interno de Yupana. Los detalles están en el registro: {self._log_file}")
            return CallResult(error.http_status, error.to_envelope())

    # ------------------------------------------------------------ closing

    def close(self) -> None:
        for closer in reversed(self._closers):
            try:
                closer()
            except Exception:
                log.exception("closing a component failed")
        self._closers.clear()
        self._storage.close()
        close_logging(self._home)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
