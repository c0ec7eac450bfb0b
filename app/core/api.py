"""The engine's published surface: the windows (app/gui), the commands (app/cli.py, app/commands), the HTTP API
(app/api) and the self-test import this module and nothing else of app.core (tests/core/test_package_layout.py).

What is here: the engine and its five group services (their Protocols), the records and events they hand out, the
contract's models and errors, and the vocabulary a window or a command needs to speak about vouchers (statuses,
SUNAT's codes, environments, settings, formatting). Everything else under app.core is private to the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from app.core.platform.environments import (
        BETA,
        ENVIRONMENTS,
        NAMES,
        PRODUCCION,
        SANDBOX,
        Environment,
        process_owner,
    )
    from app.core.platform.events import Event, HeldEvents, Listener
    from app.core.platform.http.asgi_server import AsgiServerThread
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

    SERIE_LETTER: dict[str, str]  # the series letter of facturas (F) and boletas (B): a note takes its voucher's

# Each published name and where it lives: (module, attribute). A name's module is imported when the name is first
# read (PEP 562), then the name is kept here like an ordinary global (issue 33, start-up): the main window is built
# and painted with the few light modules its frame needs (errors, settings, events) while the engine itself
# (app.core.engine, ~360 ms of imports) loads on a worker. The type checker reads the imports above.
_PUBLISHED: dict[str, tuple[str, str]] = {
    "MAX_BODY_BYTES": ("app.core.contract", "MAX_BODY_BYTES"),
    "CeRecord": ("app.core.contract", "CeRecord"),
    "ChatSendRequest": ("app.core.contract", "ChatSendRequest"),
    "ChatSendResult": ("app.core.contract", "ChatSendResult"),
    "ChatWebhookRequest": ("app.core.contract", "ChatWebhookRequest"),
    "ChatWebhookResult": ("app.core.contract", "ChatWebhookResult"),
    "ContractModel": ("app.core.contract", "ContractModel"),
    "EnviarRequest": ("app.core.contract", "EnviarRequest"),
    "EnviarResult": ("app.core.contract", "EnviarResult"),
    "FirmarRequest": ("app.core.contract", "FirmarRequest"),
    "FirmarResult": ("app.core.contract", "FirmarResult"),
    "GenerarXmlRequest": ("app.core.contract", "GenerarXmlRequest"),
    "GenerarXmlResult": ("app.core.contract", "GenerarXmlResult"),
    "PlacaRecord": ("app.core.contract", "PlacaRecord"),
    "RucRecord": ("app.core.contract", "RucRecord"),
    "ValidarRequest": ("app.core.contract", "ValidarRequest"),
    "ValidarResult": ("app.core.contract", "ValidarResult"),
    "OPERATIONS": ("app.core.engine", "OPERATIONS"),
    "CallResult": ("app.core.engine", "CallResult"),
    "Engine": ("app.core.engine", "Engine"),
    "Operation": ("app.core.engine", "Operation"),
    "HTTP_STATUS": ("app.core.errors", "HTTP_STATUS"),
    "ErrorCode": ("app.core.errors", "ErrorCode"),
    "ErrorDetail": ("app.core.errors", "ErrorDetail"),
    "YupanaError": ("app.core.errors", "YupanaError"),
    "invalid": ("app.core.errors", "invalid"),
    "invalid_many": ("app.core.errors", "invalid_many"),
    "not_configured": ("app.core.errors", "not_configured"),
    "not_found": ("app.core.errors", "not_found"),
    "unreadable_file": ("app.core.errors", "unreadable_file"),
    "backups": ("app.core.invoicing", "backups"),
    "statuses": ("app.core.invoicing", "statuses"),
    "sunat_catalogues": ("app.core.invoicing", "sunat_catalogues"),
    "sunat_codes": ("app.core.invoicing", "sunat_codes"),
    "IGV_RATE": ("app.core.invoicing.amounts", "IGV_RATE"),
    "icbper_rate": ("app.core.invoicing.amounts", "icbper_rate"),
    "round_money": ("app.core.invoicing.amounts", "money"),
    "BackupRun": ("app.core.invoicing.backup_schedule", "BackupRun"),
    "BackupStatus": ("app.core.invoicing.backup_schedule", "BackupStatus"),
    "BackupCheck": ("app.core.invoicing.backups", "BackupCheck"),
    "BackupInfo": ("app.core.invoicing.backups", "BackupInfo"),
    "prices": ("app.core.invoicing.catalog", "prices"),
    "ImportReport": ("app.core.invoicing.catalog.csvfiles", "ImportReport"),
    "Preview": ("app.core.invoicing.catalog.csvfiles", "Preview"),
    "Customer": ("app.core.invoicing.catalog.records", "Customer"),
    "Product": ("app.core.invoicing.catalog.records", "Product"),
    "TransportEntry": ("app.core.invoicing.catalog.records", "TransportEntry"),
    "normalise_whatsapp": ("app.core.invoicing.catalog.records", "whatsapp"),
    "Cdr": ("app.core.invoicing.cdr", "Cdr"),
    "read_zip": ("app.core.invoicing.cdr", "read_zip"),
    "CertificateInfo": ("app.core.invoicing.certificates", "CertificateInfo"),
    "LineAmounts": ("app.core.invoicing.documents.preview", "LineAmounts"),
    "TotalsPreview": ("app.core.invoicing.documents.preview", "TotalsPreview"),
    "VoucherDraft": ("app.core.invoicing.drafts", "VoucherDraft"),
    "STEPS": ("app.core.invoicing.emission", "STEPS"),
    "NumberingCheck": ("app.core.invoicing.numbering", "NumberingCheck"),
    "SerieFinding": ("app.core.invoicing.numbering", "SerieFinding"),
    "write_bytes": ("app.core.invoicing.printed", "write_bytes"),
    "pdf_file_name": ("app.core.invoicing.printing", "file_name"),
    "BOLD_STROKE": ("app.core.invoicing.printing.fonts", "BOLD_STROKE"),
    "PT": ("app.core.invoicing.printing.fonts", "PT"),
    "FONT_FILE": ("app.core.invoicing.printing.fonts", "FILE"),
    "Box": ("app.core.invoicing.printing.layout", "Box"),
    "Page": ("app.core.invoicing.printing.layout", "Page"),
    "Picture": ("app.core.invoicing.printing.layout", "Picture"),
    "Qr": ("app.core.invoicing.printing.layout", "Qr"),
    "Rule": ("app.core.invoicing.printing.layout", "Rule"),
    "Text": ("app.core.invoicing.printing.layout", "Text"),
    "zip_document": ("app.core.invoicing.soap", "zip_document"),
    "MAX_REASON": ("app.core.invoicing.summaries", "MAX_REASON"),
    "CREDIT_REASONS": ("app.core.invoicing.sunat_catalogues", "CREDIT_NOTE_REASONS"),
    "DEBIT_REASONS": ("app.core.invoicing.sunat_catalogues", "DEBIT_NOTE_REASONS"),
    "FREE_AFFECTATIONS": ("app.core.invoicing.sunat_catalogues", "FREE_AFFECTATIONS"),
    "FREE_GRAVADO": ("app.core.invoicing.sunat_catalogues", "FREE_GRAVADO"),
    "INSTALMENTS_REASON": ("app.core.invoicing.sunat_catalogues", "INSTALMENTS_REASON"),
    "DETRACCION_OPERATION": ("app.core.invoicing.sunat_codes", "DETRACCION_OPERATION"),
    "DETRACCION_THRESHOLD": ("app.core.invoicing.sunat_codes", "DETRACCION_THRESHOLD"),
    "DETRACCIONES": ("app.core.invoicing.sunat_codes", "DETRACCIONES"),
    "OPERATION_TYPES": ("app.core.invoicing.sunat_codes", "OPERATION_TYPES"),
    "SummaryOutcome": ("app.core.invoicing.voids", "SummaryOutcome"),
    "VoucherOutcome": ("app.core.invoicing.voids", "VoucherOutcome"),
    "Verification": ("app.core.invoicing.xmldsig", "Verification"),
    "verify_xml": ("app.core.invoicing.xmldsig", "verify_xml"),
    "CONTRACT_EVENTS": ("app.core.messaging.events", "CONTRACT_EVENTS"),
    "STREAM_CONNECTED": ("app.core.messaging.evolution_stream", "CONNECTED"),
    "STREAM_CONNECTING": ("app.core.messaging.evolution_stream", "CONNECTING"),
    "STREAM_STOPPED": ("app.core.messaging.evolution_stream", "STOPPED"),
    "STREAM_WAITING": ("app.core.messaging.evolution_stream", "WAITING"),
    "GatewayDescription": ("app.core.messaging.gateways", "GatewayDescription"),
    "GatewayField": ("app.core.messaging.gateways", "GatewayField"),
    "VIA_WEBHOOK": ("app.core.messaging.gateways.evolution", "VIA_WEBHOOK"),
    "CONNECT": ("app.core.messaging.gateways.evolution_pairing", "CONNECT"),
    "CREATE": ("app.core.messaging.gateways.evolution_pairing", "CREATE"),
    "EvolutionPairing": ("app.core.messaging.gateways.evolution_pairing", "EvolutionPairing"),
    "PairingState": ("app.core.messaging.gateways.evolution_pairing", "PairingState"),
    "QrCode": ("app.core.messaging.gateways.evolution_pairing", "QrCode"),
    "case_text": ("app.core.messaging.gateways.evolution_pairing", "case_text"),
    "pairing_case": ("app.core.messaging.gateways.evolution_pairing", "pairing_case"),
    "META_GRAPH_URL": ("app.core.messaging.gateways.meta", "DEFAULT_BASE_URL"),
    "MetaNumber": ("app.core.messaging.gateways.meta_setup", "MetaNumber"),
    "check_meta_number": ("app.core.messaging.gateways.meta_setup", "check_meta_number"),
    "normalise_phone": ("app.core.messaging.phone", "normalise"),
    "clock": ("app.core.platform", "clock"),
    "environments": ("app.core.platform", "environments"),
    "events": ("app.core.platform", "events"),
    "ubigeo": ("app.core.platform", "ubigeo"),
    "fmt": ("app.core.platform", "formatting"),
    "hash_matches": ("app.core.platform.api_token", "hash_matches"),
    "token_hash": ("app.core.platform.api_token", "token_hash"),
    "Company": ("app.core.platform.companies", "Company"),
    "PrintOptions": ("app.core.platform.companies", "PrintOptions"),
    "BETA": ("app.core.platform.environments", "BETA"),
    "ENVIRONMENTS": ("app.core.platform.environments", "ENVIRONMENTS"),
    "NAMES": ("app.core.platform.environments", "NAMES"),
    "PRODUCCION": ("app.core.platform.environments", "PRODUCCION"),
    "SANDBOX": ("app.core.platform.environments", "SANDBOX"),
    "Environment": ("app.core.platform.environments", "Environment"),
    "process_owner": ("app.core.platform.environments", "process_owner"),
    "Event": ("app.core.platform.events", "Event"),
    "HeldEvents": ("app.core.platform.events", "HeldEvents"),
    "Listener": ("app.core.platform.events", "Listener"),
    "check_ruc": ("app.core.platform.identifiers", "check_ruc"),
    "data_home": ("app.core.platform.paths", "data_home"),
    "log_dir": ("app.core.platform.paths", "log_dir"),
    "package_data": ("app.core.platform.paths", "package_data"),
    "KEYRING_MISSING": ("app.core.platform.secrets", "KEYRING_MISSING"),
    "LOCKED": ("app.core.platform.secrets", "LOCKED"),
    "MIN_PASSPHRASE_CHARS": ("app.core.platform.secrets", "MIN_PASSPHRASE_CHARS"),
    "NEW_PASSPHRASE": ("app.core.platform.secrets", "NEW_PASSPHRASE"),
    "RECOVERY_ENV": ("app.core.platform.secrets", "RECOVERY_ENV"),
    "UNLOCKED": ("app.core.platform.secrets", "UNLOCKED"),
    "GROUPS": ("app.core.platform.settings", "GROUPS"),
    "SETTINGS": ("app.core.platform.settings", "SETTINGS"),
    "Setting": ("app.core.platform.settings", "Setting"),
    "SettingValue": ("app.core.platform.settings", "SettingValue"),
    "checked_setting": ("app.core.platform.settings", "checked"),
    "BatchItem": ("app.core.records", "BatchItem"),
    "BatchRequests": ("app.core.records", "BatchRequests"),
    "ConsultedCdr": ("app.core.records", "ConsultedCdr"),
    "Conversation": ("app.core.records", "Conversation"),
    "DatabaseCheck": ("app.core.records", "DatabaseCheck"),
    "Emission": ("app.core.records", "Emission"),
    "EmissionOutcome": ("app.core.records", "EmissionOutcome"),
    "EmissionStep": ("app.core.records", "EmissionStep"),
    "EventHandle": ("app.core.records", "EventHandle"),
    "ExportProgress": ("app.core.records", "ExportProgress"),
    "GuiaPrefill": ("app.core.records", "GuiaPrefill"),
    "Instance": ("app.core.records", "Instance"),
    "ListenerState": ("app.core.records", "ListenerState"),
    "Message": ("app.core.records", "Message"),
    "PadronImport": ("app.core.records", "PadronImport"),
    "PadronProgress": ("app.core.records", "PadronProgress"),
    "PadronStatus": ("app.core.records", "PadronStatus"),
    "PdfFile": ("app.core.records", "PdfFile"),
    "PendingCount": ("app.core.records", "PendingCount"),
    "PeriodExport": ("app.core.records", "PeriodExport"),
    "PrintedPages": ("app.core.records", "PrintedPages"),
    "Reachability": ("app.core.records", "Reachability"),
    "SignedVoucher": ("app.core.records", "SignedVoucher"),
    "StreamState": ("app.core.records", "StreamState"),
    "Subscription": ("app.core.records", "Subscription"),
    "Summary": ("app.core.records", "Summary"),
    "TokenState": ("app.core.records", "TokenState"),
    "Voucher": ("app.core.records", "Voucher"),
    "VoucherCdr": ("app.core.records", "VoucherCdr"),
    "VoucherDetail": ("app.core.records", "VoucherDetail"),
    "VoucherSummary": ("app.core.records", "VoucherSummary"),
    "VoucherValidity": ("app.core.records", "VoucherValidity"),
    "Administration": ("app.core.services.protocols", "Administration"),
    "Catalog": ("app.core.services.protocols", "Catalog"),
    "Invoicing": ("app.core.services.protocols", "Invoicing"),
    "Lookups": ("app.core.services.protocols", "Lookups"),
    "Messaging": ("app.core.services.protocols", "Messaging"),
    "shared_database": ("app.core.storage", "shared"),
    "GroupCommit": ("app.core.storage.group_commit", "GroupCommit"),
    "GroupCommitHandle": ("app.core.storage.group_commit", "GroupCommitHandle"),
    "Undo": ("app.core.storage.group_commit", "Undo"),
    "AsgiServerThread": ("app.core.platform.http.asgi_server", "AsgiServerThread"),  # uvicorn: the local HTTP API
}


def __getattr__(name: str) -> Any:
    """A published name, loaded from its module at its first reading."""
    if name == "SERIE_LETTER":
        from app.core.invoicing.documents.registry import serie_letters

        value: Any = serie_letters()
    elif name in _PUBLISHED:
        module_name, attribute = _PUBLISHED[name]
        module = importlib.import_module(module_name)
        try:
            value = getattr(module, attribute)
        except AttributeError:  # a subpackage's module (`from app.core.invoicing import backups`) not imported yet
            value = importlib.import_module(f"{module_name}.{attribute}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def registry_now() -> float:
    """The lookups' clock (app.core.lookup.registry.now), looked up at each call: a test that moves that clock moves
    the local API's memory of lookups with it."""
    from app.core.lookup import registry

    return registry.now()


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
