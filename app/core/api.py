"""The engine's published surface: the windows (app/gui), the commands (app/cli.py, app/commands), the HTTP API
(app/api) and the self-test import this module and nothing else of app.core (tests/core/test_package_layout.py).

What is here: the engine and its five group services (their Protocols), the records and events they hand out, the
contract's models and errors, and the vocabulary a window or a command needs to speak about vouchers (statuses,
SUNAT's codes, environments, settings, formatting). Everything else under app.core is private to the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.contract import (
    MAX_BODY_BYTES,
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
    ValidarRequest,
    ValidarResult,
)
from app.core.engine import OPERATIONS, CallResult, Engine, Operation
from app.core.errors import (
    HTTP_STATUS,
    ErrorCode,
    ErrorDetail,
    YupanaError,
    invalid,
    invalid_many,
    not_configured,
    not_found,
    unreadable_file,
)
from app.core.invoicing import backups, statuses, sunat_catalogues, sunat_codes
from app.core.invoicing.amounts import IGV_RATE, icbper_rate
from app.core.invoicing.amounts import money as round_money
from app.core.invoicing.backup_schedule import BackupRun, BackupStatus
from app.core.invoicing.backups import BackupCheck, BackupInfo
from app.core.invoicing.catalog import prices
from app.core.invoicing.catalog.csvfiles import ImportReport, Preview
from app.core.invoicing.catalog.records import Customer, Product, TransportEntry
from app.core.invoicing.catalog.records import whatsapp as normalise_whatsapp
from app.core.invoicing.cdr import Cdr, read_zip
from app.core.invoicing.certificates import CertificateInfo
from app.core.invoicing.documents.preview import LineAmounts, TotalsPreview
from app.core.invoicing.documents.registry import serie_letters
from app.core.invoicing.drafts import VoucherDraft
from app.core.invoicing.emission import STEPS
from app.core.invoicing.numbering import NumberingCheck, SerieFinding
from app.core.invoicing.printed import write_bytes
from app.core.invoicing.printing import file_name as pdf_file_name
from app.core.invoicing.printing.fonts import BOLD_STROKE, PT
from app.core.invoicing.printing.fonts import FILE as FONT_FILE
from app.core.invoicing.printing.layout import Box, Page, Picture, Qr, Rule, Text
from app.core.invoicing.soap import zip_document
from app.core.invoicing.summaries import MAX_REASON
from app.core.invoicing.sunat_catalogues import CREDIT_NOTE_REASONS as CREDIT_REASONS
from app.core.invoicing.sunat_catalogues import DEBIT_NOTE_REASONS as DEBIT_REASONS
from app.core.invoicing.sunat_catalogues import FREE_AFFECTATIONS, FREE_GRAVADO, INSTALMENTS_REASON
from app.core.invoicing.sunat_codes import DETRACCION_OPERATION, DETRACCION_THRESHOLD, DETRACCIONES, OPERATION_TYPES
from app.core.invoicing.voids import SummaryOutcome, VoucherOutcome
from app.core.invoicing.xmldsig import Verification, verify_xml
from app.core.lookup import registry as _registry
from app.core.messaging.events import CONTRACT_EVENTS
from app.core.messaging.evolution_stream import CONNECTED as STREAM_CONNECTED
from app.core.messaging.evolution_stream import CONNECTING as STREAM_CONNECTING
from app.core.messaging.evolution_stream import STOPPED as STREAM_STOPPED
from app.core.messaging.evolution_stream import WAITING as STREAM_WAITING
from app.core.messaging.gateways import GatewayDescription, GatewayField
from app.core.messaging.gateways.evolution import VIA_WEBHOOK
from app.core.messaging.gateways.evolution_pairing import (
    CONNECT,
    CREATE,
    EvolutionPairing,
    PairingState,
    QrCode,
    case_text,
    pairing_case,
)
from app.core.messaging.gateways.meta import DEFAULT_BASE_URL as META_GRAPH_URL
from app.core.messaging.gateways.meta_setup import MetaNumber, check_meta_number
from app.core.messaging.phone import normalise as normalise_phone
from app.core.platform import clock, environments, events, ubigeo
from app.core.platform import formatting as fmt
from app.core.platform.api_token import hash_matches, token_hash
from app.core.platform.companies import Company, PrintOptions
from app.core.platform.environments import BETA, ENVIRONMENTS, NAMES, PRODUCCION, SANDBOX, Environment, process_owner
from app.core.platform.events import Event, HeldEvents, Listener
from app.core.platform.identifiers import check_ruc
from app.core.platform.paths import data_home, log_dir, package_data
from app.core.platform.secrets import (
    KEYRING_MISSING,
    LOCKED,
    MIN_PASSPHRASE_CHARS,
    NEW_PASSPHRASE,
    RECOVERY_ENV,
    UNLOCKED,
)
from app.core.platform.settings import GROUPS, SETTINGS, Setting, SettingValue
from app.core.platform.settings import checked as checked_setting
from app.core.records import (
    BatchItem,
    BatchRequests,
    ConsultedCdr,
    Conversation,
    DatabaseCheck,
    Emission,
    EmissionOutcome,
    EmissionStep,
    EventHandle,
    ExportProgress,
    GuiaPrefill,
    Instance,
    ListenerState,
    Message,
    PadronImport,
    PadronProgress,
    PadronStatus,
    PdfFile,
    PendingCount,
    PeriodExport,
    PrintedPages,
    Reachability,
    SignedVoucher,
    StreamState,
    Subscription,
    Summary,
    TokenState,
    Voucher,
    VoucherCdr,
    VoucherDetail,
    VoucherSummary,
    VoucherValidity,
)
from app.core.services.protocols import Administration, Catalog, Invoicing, Lookups, Messaging
from app.core.storage import shared as shared_database
from app.core.storage.group_commit import GroupCommit, GroupCommitHandle, Undo

if TYPE_CHECKING:
    from app.core.platform.http.asgi_server import AsgiServerThread


def __getattr__(name: str) -> object:
    """Names whose modules load on first use (PEP 562): the ASGI server thread brings uvicorn (~24 ms), which the
    windows and most commands never need; the local HTTP API asks for it."""
    if name == "AsgiServerThread":
        from app.core.platform.http.asgi_server import AsgiServerThread

        return AsgiServerThread
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SERIE_LETTER = serie_letters()  # the series letter of facturas (F) and boletas (B): a note takes its voucher's


def registry_now() -> float:
    """The lookups' clock (app.core.lookup.registry.now), looked up at each call: a test that moves that clock moves
    the local API's memory of lookups with it."""
    return _registry.now()


__all__ = [
    # the engine and its face
    "Engine", "CallResult", "OPERATIONS", "Operation", "Invoicing", "Catalog", "Messaging", "Lookups", "Administration",
    "GroupCommit", "GroupCommitHandle", "Undo",
    # records
    "BatchItem", "BatchRequests", "ConsultedCdr", "Conversation", "DatabaseCheck", "Emission", "EmissionOutcome", "GuiaPrefill",
    "EmissionStep", "EventHandle", "ExportProgress", "PeriodExport", "Instance", "ListenerState", "Message", "PadronImport", "PadronProgress",
    "PadronStatus", "PdfFile", "PendingCount", "PrintedPages", "Reachability", "SignedVoucher", "Subscription",
    "Summary", "TokenState",
    "Voucher", "VoucherCdr", "VoucherDetail", "VoucherSummary", "VoucherValidity", "SummaryOutcome", "VoucherOutcome",
    "Verification", "CertificateInfo", "Customer", "Product", "TransportEntry", "Preview", "ImportReport", "Company",
    "PrintOptions", "Cdr",
    "TotalsPreview", "LineAmounts", "VoucherDraft",
    # the contract
    "MAX_BODY_BYTES", "ContractModel", "GenerarXmlRequest", "GenerarXmlResult", "FirmarRequest", "FirmarResult",
    "EnviarRequest", "EnviarResult", "ChatSendRequest", "ChatSendResult", "ChatWebhookRequest", "ChatWebhookResult",
    "RucRecord", "CeRecord", "PlacaRecord", "ValidarRequest", "ValidarResult",
    # errors
    "HTTP_STATUS", "ErrorCode", "ErrorDetail", "YupanaError", "invalid", "invalid_many", "not_configured", "not_found",
    "unreadable_file",
    # events
    "events", "Event", "Listener", "CONTRACT_EVENTS",
    # vouchers' vocabulary
    "statuses", "sunat_codes", "sunat_catalogues", "prices", "IGV_RATE", "icbper_rate", "round_money", "STEPS", "CREDIT_REASONS",
    "DEBIT_REASONS", "FREE_AFFECTATIONS", "FREE_GRAVADO", "INSTALMENTS_REASON", "SERIE_LETTER", "MAX_REASON",
    "DETRACCION_OPERATION", "DETRACCION_THRESHOLD", "DETRACCIONES", "OPERATION_TYPES", "read_zip",
    "zip_document",
    "verify_xml",
    # the printed voucher
    "write_bytes", "pdf_file_name", "BOLD_STROKE", "PT", "FONT_FILE", "Box", "Page", "Picture", "Qr", "Rule", "Text",
    # platform
    "clock", "environments", "ubigeo", "fmt", "hash_matches", "token_hash", "BETA", "ENVIRONMENTS", "NAMES",
    "PRODUCCION", "SANDBOX", "Environment", "process_owner", "HeldEvents", "check_ruc", "data_home", "log_dir", "package_data", "KEYRING_MISSING",
    "LOCKED", "MIN_PASSPHRASE_CHARS", "NEW_PASSPHRASE", "RECOVERY_ENV", "UNLOCKED", "GROUPS", "SETTINGS", "Setting", "SettingValue", "checked_setting",
    "shared_database", "backups", "BackupCheck", "BackupInfo", "NumberingCheck", "SerieFinding", "BackupRun", "BackupStatus",
    # messaging
    "GatewayDescription", "GatewayField", "normalise_phone", "normalise_whatsapp", "StreamState",
    "STREAM_CONNECTED", "STREAM_CONNECTING", "STREAM_WAITING", "STREAM_STOPPED", "VIA_WEBHOOK",
    # «Conectar WhatsApp»: pairing an Evolution instance by QR, Meta's connection test
    "EvolutionPairing", "PairingState", "QrCode", "CREATE", "CONNECT", "case_text", "pairing_case", "MetaNumber",
    "check_meta_number", "META_GRAPH_URL",
    # what the local HTTP API is built on: the ASGI server thread the webhook listener uses too, the lookups' clock
    "AsgiServerThread", "registry_now",
]
