"""What the engine's services hand out besides the contract's models: plain frozen dataclasses, never database rows.

The windows, the commands and the HTTP API read these by attribute; the parts below the services (stores, outbox,
summaries, messaging) still speak in rows, and each record is built from one with `from_row`, which takes the
columns it names and ignores the rest. Field names are the contract's and the columns' (Spanish where the contract
is Spanish), so a record reads like the row it replaced.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Self, TypeVar

from app.core.contract import EnviarResult
from app.core.errors import YupanaError
from app.core.invoicing import cdr, statuses


def _pick(cls: type, row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's values for the dataclass's fields (a missing column takes the field's default)."""
    return {f.name: row[f.name] for f in dataclasses.fields(cls) if f.name in row}


class _FromRow:
    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        return cls(**_pick(cls, row))


# ---------------------------------------------------------------- invoicing

@dataclass(frozen=True)
class Voucher(_FromRow):
    """A voucher as the Comprobantes list shows it (no texts)."""

    id: int
    environment: str
    emisor_ruc: str
    tipo: str
    serie: str
    numero: int
    nombre_archivo: str
    status: str
    moneda: str
    total: Decimal
    fecha_emision: str
    hash: str | None = None
    receptor_tipo_documento: str | None = None
    receptor_numero_documento: str | None = None
    receptor_nombre: str | None = None
    digest_value: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    void_pending: str | None = None  # the RA/RC voiding it whose outcome is not known yet: «Baja por confirmar»
    void_warning: str | None = None  # what «Anular» warns of: an earlier baja SUNAT received, taken as not made

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        values = _pick(cls, row)
        values["total"] = Decimal(str(row["total"]))
        return cls(**values)

    @property
    def serie_numero(self) -> str:
        return f"{self.serie}-{self.numero}"

    @property
    def shown_status(self) -> str:
        """The status the windows show: «Baja por confirmar» while its void's outcome is unknown, else `status`."""
        return statuses.shown(self.status, self.void_pending)


@dataclass(frozen=True)
class VoucherDetail(Voucher):
    """A voucher with its texts: the generated XML, the request it came from and, once signed, the signed XML."""

    xml: str | None = None
    request_json: str | None = None
    xml_firmado: str | None = None
    certificado_id: str | None = None
    signature_value: str | None = None

    def request(self) -> dict[str, Any]:
        """The request the voucher was generated from (operation 1's JSON), as the form reads it back."""
        return json.loads(self.request_json) if self.request_json else {}


@dataclass(frozen=True)
class VoucherCdr(_FromRow):
    """SUNAT's latest answer for a voucher: the CDR's code, words, notes, state, digest and zip."""

    codigo: str
    descripcion: str
    estado: str
    notas: list[str] = field(default_factory=list)
    hash_cdr: str | None = None
    cdr_zip: bytes | None = None
    received_at: str | None = None

    @property
    def xml_text(self) -> str:
        """The CDR's XML for reading, taken out of its zip by the core ("" without one)."""
        return cdr.xml_text(self.cdr_zip)


@dataclass(frozen=True)
class ConsultedCdr(_FromRow):
    """getStatusCdr for any voucher: SUNAT's status code and message, and the CDR when there is one."""

    status_code: str
    status_message: str
    codigo: str | None = None
    descripcion: str | None = None
    estado: str | None = None
    notas: list[str] = field(default_factory=list)
    cdr_zip: bytes | None = None
    voucher_id: int | None = None
    guardado: bool = False

    @property
    def xml_text(self) -> str:
        """The CDR's XML for reading, taken out of its zip by the core ("" without one)."""
        return cdr.xml_text(self.cdr_zip)


@dataclass(frozen=True)
class VoucherValidity:
    """SUNAT's consulta integrada de validez of a voucher (ours or a supplier's): what was asked, SUNAT's codes and
    their names (catalogue home: VOUCHER_VALIDITY, TAXPAYER_STATES, ADDRESS_CONDITIONS)."""

    consultante: str
    ruc: str
    tipo: str
    serie: str
    numero: int
    fecha: dt.date
    total: Decimal | None
    estado_cp: str
    estado: str  # «ACEPTADO», «ANULADO», «NO EXISTE»…
    detalle: str
    estado_ruc: str
    estado_ruc_nombre: str
    cond_domicilio: str
    cond_domicilio_nombre: str
    observaciones: list[str] = field(default_factory=list)
    valido: bool = False  # ACEPTADO or AUTORIZADO


@dataclass(frozen=True)
class Summary(_FromRow):
    """A comunicación de baja (RA) or resumen diario (RC) of the current environment (its list, newest first)."""

    id: int
    kind: str
    ident: str
    state: str
    emisor_ruc: str | None = None
    issue_date: str | None = None
    reference_date: str | None = None
    ticket: str | None = None
    codigo: str | None = None
    descripcion: str | None = None
    comprobantes: str | None = None  # the vouchers it covers, «F001-7, F001-8»
    created_at: str | None = None
    updated_at: str | None = None


@dataclass(frozen=True)
class VoucherSummary(_FromRow):
    """A RA/RC a voucher was put in (its detail): what the summary says of that voucher."""

    id: int
    kind: str
    ident: str
    state: str
    ticket: str | None = None
    codigo: str | None = None
    descripcion: str | None = None
    condition: str | None = None
    motivo: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


@dataclass(frozen=True)
class PdfFile:
    """A printed voucher: the PDF's bytes, the file name it is saved or attached under, and the warnings to show with
    it in Spanish (characters no font has, printed as □)."""

    content: bytes
    name: str
    avisos: tuple[str, ...] = ()


@dataclass(frozen=True)
class PrintedPages:
    """The laid-out pages of a printed voucher (app.core.invoicing.printing.layout.Page) for the preview and the
    printer, with the format used and the PDF's file name."""

    pages: list[Any]
    formato: str
    file_name: str
    avisos: tuple[str, ...] = ()  # as PdfFile's


@dataclass(frozen=True)
class SignedVoucher:
    """One voucher of a batch, generated and signed: operations 1 and 2's answers joined."""

    nombre_archivo: str
    hash: str
    xml_firmado: str
    digest_value: str
    signature_value: str
    observaciones: list[str] = field(default_factory=list)
    certificado_por_vencer: bool = False

    def data(self) -> dict[str, Any]:
        """The contract's `data` of the two operations joined (what `yupana lote` prints)."""
        values = dataclasses.asdict(self)
        if not self.observaciones:
            values.pop("observaciones")
        if not self.certificado_por_vencer:
            values.pop("certificado_por_vencer")
        return values


@dataclass(frozen=True)
class BatchItem:
    """One request of a batch, in order: the signed voucher, or why it was refused (the contract's error)."""

    index: int
    voucher: SignedVoucher | None = None
    refusal: YupanaError | None = None

    @property
    def success(self) -> bool:
        return self.voucher is not None

    def envelope(self) -> dict[str, Any]:
        """The contract's envelope for this request (JSON Lines of `yupana lote`)."""
        if self.voucher is not None:
            return {"success": True, "data": self.voucher.data()}
        assert self.refusal is not None
        return self.refusal.to_envelope()


@dataclass(frozen=True)
class GuiaPrefill:
    """A remitente's guía request prefilled from a factura or boleta («Guía desde un comprobante»): partial, as
    operation 1 takes it once the user adds the transport, the dates and the weight."""

    request: dict[str, Any]


@dataclass(frozen=True)
class EmissionOutcome:
    """What became of a voucher sent to SUNAT, decided once in the core (app.core.invoicing.emission): the windows
    show it as it is. `estado` is aceptado, observado or rechazado (SUNAT's CDR, the status stored on the voucher),
    rechazado or no_enviado (a SOAP fault: 2000-3999 spends the number, 0100-1999 leaves it to be sent again), or
    pendiente (no answer yet: the outbox sends it by itself; `motivo_pendiente` says why)."""

    estado: str
    nombre_archivo: str
    digest_value: str
    codigo_respuesta: str = ""  # SUNAT's code: "0", a CDR's 2xxx/4xxx, a fault's; "" while pending
    descripcion: str = ""  # SUNAT's words (a fault's: the catalogue's text)
    observaciones: list[str] = field(default_factory=list)  # a CDR's notes, or the fault's further details
    motivo_pendiente: str = ""  # why there is no answer yet (only when pendiente)


@dataclass(frozen=True)
class Emission:
    """«Emitir»'s (or a resend's) result: the voucher generated and signed, SUNAT's answer or why there is none yet,
    and the outcome those say (None only for a problem on this side: no clave SOL, no sandbox running)."""

    voucher_id: int
    nombre_archivo: str
    digest_value: str
    sent: EnviarResult | None  # SUNAT's answer (accepted, observed or rejected in a CDR)
    refusal: YupanaError | None = None  # or why there is none yet: a fault, the queue, SUNAT out of reach
    outcome: EmissionOutcome | None = None


@dataclass(frozen=True)
class EmissionStep:
    """«Emitir» as it goes: the step under way (0 generate, 1 sign, 2 send) and its words; the last item carries
    the outcome."""

    index: int
    words: str
    outcome: Emission | None = None


@dataclass(frozen=True)
class PendingCount:
    """Submissions to SUNAT still waiting in one environment."""

    environment: str
    pending: int


@dataclass(frozen=True)
class BatchRequests:
    """The requests of a batch file, in order (each a JSON text or an object), read before anything is issued."""

    requests: Sequence[Any]  # a JSON Lines file's lines are read as they are issued (batches.RequestLines)

    def __len__(self) -> int:
        return len(self.requests)


# ---------------------------------------------------------------- lookups

@dataclass(frozen=True)
class PadronImport(_FromRow):
    """What an import of SUNAT's padrón reducido loaded (a cancelled import loaded nothing)."""

    rows_loaded: int
    rows_skipped: int
    seconds: float
    cancelled: bool = False


@dataclass(frozen=True)
class PadronProgress:
    """An import of the padrón as it goes: lines read of the total (when known); the last item has `result`."""

    done: int
    total: int | None
    result: PadronImport | None = None


@dataclass(frozen=True)
class PeriodExport:
    """A period's zip for the accountant (issue 35): where it was written, what it holds, the register's total."""

    path: str
    vouchers: int
    cdrs: int
    total: Decimal  # the sum of the register's «Total CP» (credit notes negative, voided vouchers in zero)
    register: str  # the CSV's name inside the zip (the .xlsx has the same stem)


@dataclass(frozen=True)
class ExportProgress:
    """A period's export as it goes: `done` of `total` vouchers written; the last item has `result`."""

    done: int
    total: int
    result: PeriodExport | None = None


@dataclass(frozen=True)
class PadronStatus(_FromRow):
    """The padrón in use for lookups without internet: whether one is loaded, its rows and when."""

    loaded: bool
    rows: int = 0
    skipped: int | None = None
    seconds: float | None = None
    loaded_at: str | None = None
    source: str | None = None
    file: str | None = None


# ---------------------------------------------------------------- messaging

@dataclass(frozen=True)
class Instance(_FromRow):
    """A messaging instance (one WhatsApp number at a gateway) and which of its credentials are saved."""

    name: str
    gateway: str
    base_url: str
    environment: str
    options: dict[str, Any] = field(default_factory=dict)
    state: str | None = None
    state_at: str | None = None
    owner: str | None = None
    credentials: dict[str, bool] = field(default_factory=dict)
    created_at: str | None = None


@dataclass(frozen=True)
class Message(_FromRow):
    id: str
    instance: str
    direction: str
    peer: str
    status: str
    timestamp: int
    gateway_id: str | None = None
    name: str | None = None
    type: str | None = None
    body: str | None = None
    media: Any = None
    environment: str | None = None


@dataclass(frozen=True)
class Conversation(_FromRow):
    instance: str
    peer: str
    last_id: int
    last_at: int | None = None
    name: str | None = None
    messages: int = 0


@dataclass(frozen=True)
class Subscription(_FromRow):
    """An operation-5 subscription and how its deliveries stand."""

    id: str
    instance: str
    url: str
    events: list[str] = field(default_factory=list)
    state: str | None = None
    pending: int = 0
    delivered: int = 0
    next_attempt_at: float | None = None
    last_attempt_at: float | None = None
    last_status: int | None = None
    last_error: str | None = None
    created_at: str | None = None
    environment: str | None = None


@dataclass(frozen=True)
class ListenerState:
    """The webhook listener: running, stopped or failed (its error), its URL and whether it is bound beyond this PC;
    `notice`: what the user must do by hand since its port changed (Meta's URL, a tunnel), None when nothing."""

    state: str
    url: str | None = None
    exposed: bool = False
    error: str | None = None
    notice: str | None = None

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ListenerState:
        return cls(**_pick(cls, values))


@dataclass(frozen=True)
class StreamState:
    """An instance's event stream (Evolution's Socket.IO, app.core.messaging.evolution_stream), in the words Mensajes
    shows: `state` is connected, connecting (`reconnecting`: after a connection was lost), waiting (the last attempt
    failed: `detail` says why, in Spanish; the next one comes by itself) or stopped (the receiver stopped, or the
    instance no longer streams); `caught_up` how many missed messages the last catch-up stored."""

    instance: str
    state: str
    detail: str = ""
    caught_up: int = 0
    reconnecting: bool = False


@dataclass(frozen=True)
class Reachability(_FromRow):
    """Whether the address given to gateways reaches this very listener."""

    url: str
    reachable: bool
    local_only: bool


# ---------------------------------------------------------------- administration

@dataclass(frozen=True)
class DatabaseCheck:
    """SQLite's quick_check of the data folder's database: what it found, and whether it checked every page within
    its budget; the file and its size."""

    findings: list[str]
    finished: bool
    path: Path
    size_bytes: int
    tables: int


@dataclass(frozen=True)
class TokenState:
    """What the local API checks before answering from memory: the database's change counter and the stored token's
    hash (None before a token exists)."""

    change_counter: int
    token_hash: bytes | None


@dataclass(frozen=True)
class EventHandle:
    """A subscription to the engine's events; `cancel()` ends it."""

    _cancel: Callable[[], None]

    def cancel(self) -> None:
        self._cancel()


R = TypeVar("R", bound=_FromRow)


def rows_to(cls: type[R], rows: list[dict[str, Any]]) -> list[R]:
    """Each row as a record of `cls` (its `from_row`)."""
    return [cls.from_row(row) for row in rows]
