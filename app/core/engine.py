"""The engine's facade: one object opened on a data folder, exposing the contract's operations.

The windows, the `yupana` command and the local HTTP API all go through this object and nothing
else. Operations take and return the contract's models; `call()` is the same thing in JSON
envelopes, for the thin layers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from app.core.contract import (
    CeRecord,
    ChatSendRequest,
    ChatSendResult,
    ChatWebhookRequest,
    ChatWebhookResult,
    ContractModel,
    EnviarRequest,
    EnviarResult,
    FirmarRequest,
    FirmarResult,
    GenerarXmlRequest,
    GenerarXmlResult,
    PlacaRecord,
    RucRecord,
    parse_json,
    parse_model,
    success_envelope,
)
from app.core.errors import ErrorCode, YupanaError, invalid
from app.core.invoicing import soap, statuses, xmldsig
from app.core.invoicing.batches import Batches
from app.core.invoicing.catalog import csvfiles, records
from app.core.invoicing.catalog.customers import Customers
from app.core.invoicing.catalog.products import Products
from app.core.invoicing.certificates import CertificateInfo, CertificateStore
from app.core.invoicing.emission import Emission, Emitter
from app.core.invoicing.generation import Generation
from app.core.invoicing.outbox import Outbox
from app.core.invoicing.printed import Printed
from app.core.invoicing.signing import Signing
from app.core.invoicing.sunat import Submission, SunatClients
from app.core.invoicing.voids import SummaryOutcome, Voids, kind_for
from app.core.invoicing.voucher_store import VoucherStore
from app.core.lookup import padron, providers
from app.core.lookup.registry import Registry
from app.core.messaging import clock as messaging_clock
from app.core.messaging.forwarding import Forwarder
from app.core.messaging.gateways import Media
from app.core.messaging.service import MessagingService
from app.core.platform import environments, events
from app.core.platform.addresses import Addresses
from app.core.platform.companies import Companies, Company, PrintOptions
from app.core.platform.events import EventBus
from app.core.platform.http import api_token
from app.core.platform.logs import close_logging, setup_logging
from app.core.platform.paths import data_home, database_path, private_file
from app.core.platform.secrets import SecretStore
from app.core.platform.settings import Settings
from app.core.platform.storage import Storage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Operation:
    """One contract endpoint: its path, method, request model and engine method."""

    name: str
    method: str
    path: str
    request: type[ContractModel] | None
    handler: str


OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in [
        Operation("xml", "POST", "/api/v1/facturacion/xml", GenerarXmlRequest, "generar_xml"),
        Operation("firmar", "POST", "/api/v1/facturacion/firmar", FirmarRequest, "firmar"),
        Operation("enviar", "POST", "/api/v1/facturacion/enviar", EnviarRequest, "enviar"),
        Operation("chat-send", "POST", "/api/v1/chat/send", ChatSendRequest, "chat_send"),
        Operation("chat-webhook", "POST", "/api/v1/chat/webhook", ChatWebhookRequest, "chat_webhook"),
        Operation("ruc", "GET", "/api/v1/ruc/{numero}", None, "ruc"),
        Operation("ce", "GET", "/api/v1/ce/{numero}", None, "ce"),
        Operation("placa", "GET", "/api/v1/placa/{numero}", None, "placa"),
    ]
}


class Engine:
    """The local engine of one data folder. Thread-safe: the GUI thread, workers and listeners share it."""

    def __init__(self, home: str | Path | None = None) -> None:
        self.home = data_home(home)
        self.log_file = setup_logging(self.home)
        self.storage = Storage.open(database_path(self.home))
        self.settings = Settings(self.storage)
        # Addresses of the sandboxes running for this folder: read by the sandbox environment only.
        self.sandbox_endpoints = environments.SandboxEndpoints(self.storage)
        self.sandbox_endpoints.purge_dead()
        self.companies = Companies(self.storage)
        self.secrets = SecretStore(self.storage)
        self.certificates = CertificateStore(self.storage, self.secrets)
        self.api_tokens = api_token.ApiTokens(self.storage, self.secrets)
        self.events = EventBus()
        self._closers: list[Callable[[], None]] = []
        self._local_api: Any = None  # app.core.platform.http.api.LocalApi once start_local_api() ran
        self.addresses = Addresses(self.settings, self.sandbox_endpoints, self.secrets)
        # Lookups: the offline register, the providers and the cache in front of them.
        self.padron = padron.PadronRegister(self.storage, self.home)
        self.providers = providers.ProviderHub(self.addresses)
        self.registry = Registry(self.storage, self.addresses, self.providers, self.padron)
        self.on_close(self.padron.close)
        self.on_close(self.providers.close)
        logging.getLogger("app").setLevel(self.settings.get("log_level"))
        # Invoicing: the engine wires the pieces; none of them knows the engine.
        self.vouchers = VoucherStore(self.storage, self.addresses.current, self._voucher_changed)
        self.customers = Customers(self.storage)  # the catalogue (docs/catalog.md)
        self.products = Products(self.storage)
        self.generation = Generation(self.vouchers, self.settings, self.companies.get, self._customer_name,
                                     self._remember_customers)
        self.signing = Signing(self.vouchers, self.certificates, self.settings)
        self.batches = Batches(self.generation, self.signing, self._vouchers_signed)
        self.printed = Printed(self.vouchers, self.companies)
        # Submissions to SUNAT: the worker starts at once only when a submission is waiting; one reused
        # HTTP client per SUNAT endpoint, closed after the worker stops.
        self.sunat_http = soap.HttpPool()
        self.on_close(self.sunat_http.close)
        self.sunat_clients = SunatClients(self.addresses, self.secrets, self.sunat_http)
        self.outbox = Outbox(self.storage, self.settings, self.events, self.vouchers, self.addresses.current,
                             self.sunat_clients)
        self.submission = Submission(self.vouchers, self.outbox, self.sunat_clients, self.settings)
        self.emitter = Emitter(self.generation, self.signing, self.submission)
        self.on_close(self.outbox.stop)
        self.outbox.start_if_pending()
        # Voiding (RA, RC): summaries numbered, signed and sent here, their tickets followed to SUNAT's answer.
        self.voids = Voids(self.vouchers, self.storage, self.settings, self.sunat_clients, self.certificates,
                           self._issuer_name, on_change=lambda summary: self.events.emit(events.SUMMARY_CHANGED, summary))
        self.on_close(self.voids.close)
        self.voids.start_if_pending()
        # Messaging: the service, the webhook listener (started by the app and `yupana serve`) and the
        # forwarder, which starts at once only when deliveries are waiting.
        self.messaging = MessagingService(self.storage, self.secrets, self.settings, self.events)
        self._listener: Any = None  # built on first start: FastAPI and uvicorn stay out of the window's start-up
        self.forwarder = Forwarder(self.messaging.store, self.messaging.subscription_secret, self.events)
        self.messaging.listener_base_url = lambda: self._listener.base_url if self._listener else None
        self.messaging.after_ingest = self.forwarder.wake
        self.on_close(self.messaging.close)
        self.on_close(self.forwarder.stop)
        self.on_close(self.stop_listener)
        self.forwarder.start_if_pending()
        log.info("engine opened on %s", self.home)

    # ------------------------------------------------------------ the contract's operations

    def generar_xml(self, request: GenerarXmlRequest | dict) -> GenerarXmlResult:
        return self.generation.generate(self.generation.parse(request))[1]

    def firmar(self, request: FirmarRequest | dict) -> FirmarResult:
        return self.signing.sign_request(parse_model(FirmarRequest, request))

    def enviar(self, request: EnviarRequest | dict) -> EnviarResult:
        return self.submission.submit(parse_model(EnviarRequest, request))

    def chat_send(self, request: ChatSendRequest | dict) -> ChatSendResult:
        return self.messaging.send(parse_model(ChatSendRequest, request))

    def chat_webhook(self, request: ChatWebhookRequest | dict) -> ChatWebhookResult:
        return self.messaging.subscribe(parse_model(ChatWebhookRequest, request))

    def ruc(self, numero: str) -> RucRecord:
        """The registry's record of a RUC; a RUC found is kept among the customers (docs/catalog.md)."""
        record = self.registry.ruc(numero)
        if record.razon_social:
            self.customers.remember_ruc(record.ruc, record.razon_social, record.direccion)
        return record

    def ce(self, numero: str) -> CeRecord:
        return self.registry.ce(numero)

    def placa(self, numero: str) -> PlacaRecord:
        return self.registry.placa(numero)

    def emitir_lote(self, requests: Iterable[Any], certificado_id: str | None = None, *,
                    progress: Callable[[int, int | None], Any] | None = None,
                    cancel: Callable[[], bool] | None = None) -> Iterator[dict[str, Any]]:
        """Operations 1 and 2 for many vouchers at once (app.core.invoicing.batches): one envelope per request, in order."""
        return self.batches.issue(requests, certificado_id, progress=progress, cancel=cancel)

    def emitir(self, request: GenerarXmlRequest | dict, certificado_id: str | None = None,
               step: Callable[[int, str], Any] | None = None) -> Emission:
        """«Emitir» in the windows: generate, sign by id (the issuer's default certificate unless given) and send to
        the current environment; SUNAT's refusal or the queue is part of the outcome (app.core.invoicing.emission)."""
        return self.emitter.emit(request, certificado_id, step)

    def send_voucher_to_sunat(self, voucher_id: int) -> EnviarResult:
        """Operation 3 for a stored, signed voucher by its id (resend from the voucher's detail)."""
        return self.submission.submit_voucher(voucher_id)

    # ------------------------------------------------------------ voiding and summaries (app.core.invoicing.voids)

    def anular(self, voucher_id: int, motivo: str, *, esperar: bool = True, timeout_s: float | None = None,
               progress: Callable[[SummaryOutcome], Any] | None = None) -> SummaryOutcome:
        """Void a voucher with a comunicación de baja (facturas and their notes) or a resumen diario with status 3
        (boletas and theirs); with `esperar`, poll SUNAT's ticket until it answers (or `timeout_s`)."""
        return self.voids.anular(voucher_id, motivo, wait=esperar, timeout_s=timeout_s, progress=progress)

    def resumen_diario(self, fecha: date, *, esperar: bool = True, timeout_s: float | None = None,
                       progress: Callable[[SummaryOutcome], Any] | None = None) -> list[SummaryOutcome]:
        """Report the day's signed boletas (and their notes) not sent one by one: one RC per issuer."""
        return self.voids.resumen(fecha, wait=esperar, timeout_s=timeout_s, progress=progress)

    def consultar_cdr(self, ruc: str, tipo: str, serie: str, numero: int) -> dict[str, Any]:
        """getStatusCdr for any voucher by RUC, type, serie and number; the CDR stored when the voucher is ours."""
        return self.voids.consultar_cdr(ruc, tipo, serie, numero)

    def voucher_summaries(self, voucher_id: int) -> list[dict]:
        """The comunicaciones de baja and resúmenes a voucher was put in (its detail): ident, ticket, state, reason."""
        return self.voids.for_voucher(voucher_id)

    def void_kind(self, tipo: str, serie: str) -> str | None:
        """Which document voids a voucher of this type and series: RA, RC, or None when neither does."""
        try:
            return kind_for(tipo, serie)
        except YupanaError:
            return None

    def summaries(self, limit: int = 200) -> list[dict]:
        """The current environment's comunicaciones de baja and resúmenes diarios, newest first."""
        return self.voids.list(limit)

    # ------------------------------------------------------------ wiring callbacks

    def _voucher_changed(self, voucher_id: int, status: str) -> None:
        self.events.emit(events.VOUCHER_CHANGED, {"id": voucher_id, "status": status})

    def _issuer_name(self, ruc: str) -> str | None:
        company = self.companies.get(ruc)
        return company.razon_social if company else None

    def _vouchers_signed(self, ids: list[int]) -> None:
        self.events.emit(events.VOUCHER_CHANGED, {"ids": ids, "status": statuses.FIRMADO})

    def _remember_customers(self, docs: list) -> None:
        """After vouchers are issued (one, or a batch's block): their customers are kept in the catalogue."""
        self.customers.remember_all((doc.receptor.tipo_documento, doc.receptor.numero_documento, doc.receptor.nombre,
                                     doc.receptor.direccion) for doc in docs)

    def _customer_name(self, ruc: str) -> str | None:
        """A customer's name for the builder, from the lookups (cache, register, providers)."""
        return self.registry.ruc(ruc).razon_social

    def switch_summary(self, target: str) -> str:
        """What changes if the environment becomes `target` (app.core.platform.environments.switch_summary)."""
        return environments.switch_summary(self.addresses.current(), target, self.pending_by_environment())

    # ------------------------------------------------------------ the same in JSON envelopes

    def call(self, operation: str, body: bytes | str | dict | None = None,
             numero: str | None = None) -> tuple[int, dict[str, Any]]:
        """Run one operation from JSON; returns (HTTP status, envelope). Never raises."""
        try:
            op = OPERATIONS.get(operation)
            if op is None:
                raise invalid("operation", f"La operación «{operation}» no existe. Válidas: {', '.join(OPERATIONS)}.")
            handler = getattr(self, op.handler)
            if op.request is None:
                if numero is None or not str(numero).strip():
                    raise invalid("numero", "El campo «numero» es obligatorio.")
                result = handler(str(numero).strip())
            else:
                payload = body if isinstance(body, dict) else parse_json(body)
                result = handler(payload)
            return 200, success_envelope(result)
        except YupanaError as exc:
            log.info("operation %s answered %s: %s", operation, exc.code, exc.message)
            return exc.http_status, exc.to_envelope()
        except Exception:
            log.exception("operation %s failed unexpectedly", operation)
            error = YupanaError(ErrorCode.INTERNAL,
                                f"Error interno de Yupana. Los detalles están en el registro: {self.log_file}")
            return error.http_status, error.to_envelope()

    # ------------------------------------------------------------ what the windows need

    def set_company(self, company: Company) -> Company:
        saved = self.companies.save(company)
        self.events.emit(events.COMPANY_SAVED, {"ruc": saved.ruc})
        return saved

    def company(self, ruc: str) -> Company | None:
        return self.companies.get(ruc)

    def list_companies(self) -> list[Company]:
        return self.companies.all()

    def set_sol_credentials(self, ruc: str, usuario: str, clave: str) -> None:
        """Usuario and clave SOL of a company, kept encrypted in the secret store."""
        self.sunat_clients.set_sol_credentials(ruc, usuario, clave)

    def sol_credentials(self, ruc: str, ambiente: str = "beta") -> tuple[str, str]:
        return self.sunat_clients.sol_credentials(ruc, ambiente)

    def environment(self) -> environments.Environment:
        """The environment in use (setting `environment`): where vouchers go, which list and numbering apply."""
        return environments.get(self.addresses.current())

    def pending_by_environment(self) -> dict[str, int]:
        """Submissions still pending, by environment (only the current environment's are being sent)."""
        return self.outbox.pending_by_environment()

    def list_vouchers(self, search: str | None = None, status: str | None = None, limit: int = 200, *,
                      before_id: int | None = None, offset: int = 0, desde: str | None = None,
                      hasta: str | None = None, tipo: str | None = None, cliente: str | None = None) -> list[dict]:
        """A page of the environment's vouchers, newest first, searched and filtered from indexes (VoucherStore.list)."""
        return self.vouchers.list(search, status, limit, before_id=before_id, offset=offset, desde=desde, hasta=hasta,
                                  tipo=tipo, cliente=cliente)

    def voucher(self, voucher_id: int) -> dict | None:
        return self.vouchers.get(voucher_id)

    def next_numero(self, emisor_ruc: str, tipo: str, serie: str) -> int:
        return self.vouchers.next_numero(emisor_ruc, tipo, serie)

    def import_certificate(self, data: bytes, password: str | bytes | None = None, *,
                           key_data: bytes | None = None) -> CertificateInfo:
        info = self.certificates.import_file(data, password, key_data=key_data)
        self.events.emit(events.CERTIFICATE_SAVED, {"certificado_id": info.certificado_id, "ruc": info.ruc})
        return info

    def create_test_certificate(self, ruc: str) -> CertificateInfo:
        company = self.companies.get(ruc.strip())
        info = (self.certificates.create_test_certificate(ruc, company.razon_social) if company
                else self.certificates.create_test_certificate(ruc))
        self.events.emit(events.CERTIFICATE_SAVED, {"certificado_id": info.certificado_id, "ruc": info.ruc})
        return info

    def list_certificates(self, ruc: str | None = None) -> list[CertificateInfo]:
        return self.certificates.all(ruc)

    def certificate(self, certificado_id: str) -> CertificateInfo:
        return self.certificates.get(certificado_id)

    def delete_certificate(self, certificado_id: str) -> None:
        self.certificates.delete(certificado_id)
        self.events.emit(events.CERTIFICATE_DELETED, {"certificado_id": certificado_id})

    def set_default_certificate(self, ruc: str, certificado_id: str) -> CertificateInfo:
        info = self.certificates.set_default(ruc, certificado_id)
        self.events.emit(events.CERTIFICATE_SAVED, {"certificado_id": info.certificado_id, "ruc": info.ruc})
        return info

    def default_certificate(self, ruc: str) -> CertificateInfo | None:
        return self.certificates.default_for(ruc)

    def voucher_cdr(self, voucher_id: int) -> dict | None:
        """SUNAT's latest answer for a voucher: codigo, descripcion, notas, estado, hash_cdr, cdr_zip."""
        return self.outbox.cdr_for_voucher(voucher_id)

    # ------------------------------------------------------------ the catalogue (app.core.invoicing.catalog, docs/catalog.md)

    def catalog_customers(self, search: str = "", limit: int = 200) -> list[records.Customer]:
        """Customers for «Clientes» and completion: those matching what was typed (document-number prefix, words of
        the name), or the ones updated last when nothing was typed."""
        return self.customers.search(search, limit) if search.strip() else self.customers.latest(limit)

    def customer(self, tipo_documento: str, numero: str | None) -> records.Customer | None:
        """The saved customer of a document (a voucher's receptor): its WhatsApp and e-mail for sending vouchers."""
        return self.customers.get(tipo_documento, numero)

    def save_customer(self, data: dict[str, Any], customer_id: int | None = None) -> records.Customer:
        """Add (or replace by document) a customer, or change the one with `customer_id`; a 400 naming each field."""
        customer = records.customer(**data)
        return self.customers.update(customer_id, customer) if customer_id else self.customers.save(customer)

    def delete_customer(self, customer_id: int) -> bool:
        return self.customers.delete(customer_id)

    def catalog_products(self, search: str = "", limit: int = 200) -> list[records.Product]:
        """Products for «Productos» and completion: exact barcode, code prefix, words of the description; or the
        first by code when nothing was typed."""
        return self.products.search(search, limit) if search.strip() else self.products.first(limit)

    def scanned_product(self, typed: str) -> records.Product | None:
        """The product of a barcode or a code typed whole (a scanner types it and Enter), or None."""
        return self.products.by_barcode(typed) or self.products.by_code(typed) if typed.strip() else None

    def save_product(self, data: dict[str, Any], product_id: int | None = None) -> records.Product:
        product = records.product(**data)
        return self.products.update(product_id, product) if product_id else self.products.save(product)

    def delete_product(self, product_id: int) -> bool:
        return self.products.delete(product_id)

    def _catalog_file(self, kind: str) -> csvfiles.CatalogFile:
        if kind == "clientes":
            return csvfiles.customers_file(self.customers)
        if kind == "productos":
            return csvfiles.products_file(self.products)
        raise invalid("catalogo", f"El catálogo «{kind}» no existe: use «clientes» o «productos».")

    def preview_catalog_csv(self, kind: str, path: str | Path) -> csvfiles.Preview:
        """Read a CSV of «clientes» or «productos» without writing: the rows read and each bad row's problem."""
        return self._catalog_file(kind).preview(Path(path))

    def import_catalog_csv(self, kind: str, path: str | Path) -> csvfiles.ImportReport:
        """Import every row in one transaction, or nothing when any row is bad (the report lists them)."""
        return self._catalog_file(kind).import_file(Path(path))

    def export_catalog_csv(self, kind: str, path: str | Path) -> int:
        return self._catalog_file(kind).export(Path(path))

    # ------------------------------------------------------------ the printed voucher (app.core.invoicing.printed)

    def voucher_pdf(self, voucher_id: int, formato: str | None = None) -> tuple[bytes, str]:
        """(PDF bytes, file name) of a signed voucher, «a4» or «ticket» (None: the company's default). This is
        what a WhatsApp message attaches as its media."""
        return self.printed.voucher_pdf(voucher_id, formato)

    def write_voucher_pdf(self, voucher_id: int, target: str | Path | None = None,
                          formato: str | None = None) -> Path:
        """Write the voucher's PDF to a file (or into a folder under its usual name); returns the file."""
        return self.printed.write_pdf(voucher_id, target, formato)

    def voucher_pages(self, voucher_id: int, formato: str | None = None) -> tuple[list, str, str]:
        """(pages, format, PDF file name): the laid-out pages (app.core.invoicing.printing.layout) the windows paint for
        the preview and the printer."""
        return self.printed.voucher_pages(voucher_id, formato)

    def pdf_from_xml(self, xml_firmado: str | bytes, formato: str | None = None) -> bytes:
        return self.printed.pdf_for_xml(xml_firmado, formato)

    def find_voucher(self, serie_numero: str, emisor_ruc: str | None = None, tipo: str | None = None) -> int:
        return self.printed.find(serie_numero, emisor_ruc, tipo)

    def company_print_options(self, ruc: str) -> PrintOptions:
        return self.companies.print_options(ruc)

    def set_company_print_options(self, ruc: str, formato: str | None = None, logo: bytes | None = None,
                                  clear_logo: bool = False) -> PrintOptions:
        options = self.companies.set_print_options(ruc, formato, logo, clear_logo)
        self.events.emit(events.COMPANY_SAVED, {"ruc": ruc})
        return options

    def company_prices_include_igv(self, ruc: str) -> bool:
        """The company's default for the voucher form's «Precios incluyen IGV» (docs/catalog.md)."""
        return self.companies.prices_include_igv(ruc)

    def set_company_prices_include_igv(self, ruc: str, value: bool) -> bool:
        saved = self.companies.set_prices_include_igv(ruc, value)
        self.events.emit(events.COMPANY_SAVED, {"ruc": ruc})
        return saved

    def company_detraction_account(self, ruc: str) -> str | None:
        """The company's Banco de la Nación account the voucher form fills in the detracción section."""
        return self.companies.detraction_account(ruc)

    def set_company_detraction_account(self, ruc: str, cuenta: str | None) -> str | None:
        saved = self.companies.set_detraction_account(ruc, cuenta)
        self.events.emit(events.COMPANY_SAVED, {"ruc": ruc})
        return saved

    def verify_signature(self, xml: bytes | str) -> xmldsig.Verification:
        return xmldsig.verify_xml(xml)

    def config_get(self, key: str) -> str:
        return self.settings.get(key)

    def config_set(self, key: str, value: str) -> str:
        clean = self.settings.set(key, value)
        if key == "log_level":
            logging.getLogger("app").setLevel(clean)
        if key == "environment":  # the new environment's pending submissions and deliveries are due now; the others wait
            self.outbox.wake()
            if self.forwarder.store.next_due_at() is not None:
                self.forwarder.wake()
        if key in ("listener_host", "listener_port") and self.listener_state()["state"] == "running":
            self._listener.stop()  # a new address takes effect at once
            self.start_listener()
        self.events.emit(events.SETTINGS_CHANGED, {"key": key})
        return clean

    def config_list(self) -> dict[str, str]:
        return self.settings.all()

    def import_padron(self, path: str | Path, progress: Callable[[int, int], Any] | None = None,
                      cancel: Callable[[], bool] | None = None, parallel: bool | None = None) -> dict[str, Any]:
        """Load SUNAT's padrón reducido (zip or txt); lookups use the old data until it is complete."""
        summary = self.padron.import_file(path, progress=progress, cancel=cancel, parallel=parallel)
        self.events.emit(events.PADRON_IMPORTED, summary)
        return summary

    def padron_status(self) -> dict[str, Any]:
        return self.padron.status()

    def secret_state(self) -> str:
        """Whether saved keys can be opened: app.core.platform.secrets.UNLOCKED, NEW_PASSPHRASE, LOCKED or KEYRING_MISSING."""
        return self.secrets.state()

    def unlock_secrets(self, passphrase: str) -> None:
        """Open the saved keys with the passphrase typed by the person (the first one becomes the folder's)."""
        self.secrets.unlock(passphrase)
        self.events.emit(events.SECRETS_UNLOCKED, {})

    def set_provider_token(self, name: str, token: str) -> None:
        """Keep a registry provider's access token in the secret store (never in settings or logs)."""
        if name not in providers.PROVIDERS:
            raise invalid("proveedor", f"El proveedor «{name}» no existe. Válidos: {', '.join(providers.PROVIDERS)}.")
        self.secrets.put(providers.token_secret_name(name), token.strip().encode())

    def api_token(self) -> str:
        """The local HTTP API's token (created on first use); the settings window shows it."""
        return self.api_tokens.current()

    def new_api_token(self) -> str:
        """Replace the local API's token: the previous one stops working at once, also in a running server."""
        token = self.api_tokens.rotate()
        self.events.emit(events.API_TOKEN_CHANGED, {})
        return token

    def start_local_api(self, port: int | None = None) -> str:
        """Serve the local HTTP API from this process, in a background thread (stopped on close); its base URL."""
        from app.core.platform.http.api import LocalApi

        if self._local_api is None or not self._local_api.running:
            self._local_api = LocalApi(self, port=port)
            self._local_api.start()
        return self._local_api.base_url

    def api_token_matches(self, presented: str) -> bool:
        return self.api_tokens.matches(presented)

    # ------------------------------------------------------------ messaging (docs/messaging.md)

    def messaging_save_instance(self, name: str, gateway: str, base_url: str,
                                credentials: dict[str, str] | None = None,
                                options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Create or update an instance; credentials go to the secret store, never to settings or logs."""
        return self.messaging.save_instance(name, gateway, base_url, credentials, options)

    def messaging_instances(self) -> list[dict[str, Any]]:
        return self.messaging.instances()

    def messaging_test_connection(self, name: str) -> str:
        """«Probar conexión»: the instance's state at its gateway (open, close, connecting)."""
        return self.messaging.test_connection(name)

    def messaging_register_webhook(self, name: str) -> str:
        """Tell the instance's gateway to post its events to our listener; returns that URL."""
        return self.messaging.register_webhook(name)

    def send_message(self, instance: str, to: str, text: str, *, media_path: str | Path | None = None,
                     media_url: str | None = None) -> ChatSendResult:
        """Operation 4 with a local attachment (a voucher's PDF or XML) as well as a URL."""
        media = Media(path=Path(media_path)) if media_path else Media(url=media_url) if media_url else None
        return self.messaging.send_message(instance, to, text, media)

    def send_voucher(self, voucher_id: int, instance: str, to: str, text: str,
                     formato: str | None = None) -> ChatSendResult:
        """Operation 4 with the voucher's PDF attached (written under the data folder's «enviados», kept as
        the copy that was sent)."""
        pdf, name = self.voucher_pdf(voucher_id, formato)
        folder = self.home / "enviados"
        folder.mkdir(exist_ok=True)
        path = folder / name
        private_file(path)  # like every data file: the owner's only
        path.write_bytes(pdf)
        return self.send_message(instance, to, text, media_path=path)

    def messaging_messages(self, instance: str | None = None, peer: str | None = None) -> list[dict[str, Any]]:
        return self.messaging.store.messages(instance, peer)

    def messaging_conversations(self) -> list[dict[str, Any]]:
        return self.messaging.store.conversations()

    def messaging_subscriptions(self) -> list[dict[str, Any]]:
        return self.messaging.store.subscriptions()

    def messaging_resend(self, subscription_id: str) -> int:
        """«Reenviar»: waiting and failed deliveries of a subscription are tried again now."""
        count = self.messaging.store.resend(subscription_id, messaging_clock.now())
        self.forwarder.wake()
        return count

    def start_listener(self, host: str | None = None, port: int | None = None) -> str:
        """Start the webhook listener (address and port from settings unless given); returns its URL."""
        if self._listener is None:
            from app.core.messaging.listener import Listener

            self._listener = Listener(self.messaging)
        url = self._listener.start(host or self.settings.get("listener_host"),
                                   self.settings.get_int("listener_port") if port is None else port)
        self.events.emit(events.LISTENER_CHANGED, self._listener.state())
        return url

    def stop_listener(self) -> None:
        if self._listener is not None and self._listener.server.running:
            self._listener.stop()
            self.events.emit(events.LISTENER_CHANGED, self._listener.state())

    def messaging_check_listener(self) -> dict[str, Any]:
        """Whether the address given to gateways reaches this listener: {url, reachable, local_only}."""
        return self.messaging.check_reachability()

    def listener_state(self) -> dict[str, Any]:
        """{state: running|stopped|error, url, exposed (bound beyond this PC), error}."""
        if self._listener is None:
            return {"state": "stopped", "url": None, "exposed": False, "error": None}
        return self._listener.state()

    def listener_status(self) -> str:
        """The status bar's words for the listener."""
        state = self.listener_state()
        if state["state"] == "running":
            return f"receptor activo en {state['url']}" + (" (expuesto a la red)" if state["exposed"] else "")
        return "receptor con error" if state["state"] == "error" else "receptor detenido"

    def on_close(self, closer: Callable[[], None]) -> None:
        """Register something (a listener thread, a worker) to stop when the engine closes."""
        self._closers.append(closer)

    def close(self) -> None:
        for closer in reversed(self._closers):
            try:
                closer()
            except Exception:
                log.exception("closing a component failed")
        self._closers.clear()
        self.storage.close()
        close_logging(self.home)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
