"""Port of the vouchers and their texts: the `vouchers` rows (one per serie-número and environment), their texts
(request, generated XML, signed XML or its Signature, written once and packed) and the dictionaries texts are packed
against (app.core.invoicing.packed_texts). Rows come back as dicts with their texts as stored (packed or not): the
voucher store unpacks them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

# Which text of a voucher a hash names: the generated XML, or the signed one.
TextKind = Literal["xml", "signed"]
# The columns a find by text returns: `id`; `environment`; or what operation 2 needs to sign a voucher found by its
# text, the text itself being the caller's («signing»: id, emisor_ruc, tipo, serie, numero, canonical, certificado_id,
# digest_value, signature_value, signature, signature_offset and `signed`, whether it is signed).
View = Literal["id", "environment", "signing"]


class NumberTaken(Exception):
    """The serie-número was issued before in this environment (or by another writer meanwhile)."""


@dataclass(slots=True)
class NewVoucher:
    """A voucher to store, generated or already signed in memory (a batch); texts already packed."""

    environment: str
    emisor_ruc: str
    tipo: str
    serie: str
    numero: int
    nombre_archivo: str
    hash: str
    xml_sha256: str
    content_key: str
    status: str
    receptor_tipo_documento: str | None
    receptor_numero_documento: str | None
    receptor_nombre: str | None
    moneda: str
    total: str
    fecha_emision: str
    request_json: bytes | None  # None only as a caller's mistake: the store refuses it (NOT NULL)
    xml: bytes | None
    # Signed in memory: the Signature (packed), where it goes in the text, and the signature's facts.
    signature: bytes | None = None
    signature_offset: int | None = None
    signed_sha256: str | None = None
    digest_value: str | None = None
    signature_value: str | None = None
    certificado_id: str | None = None
    updated_at: str | None = None


class VoucherRepository(Protocol):
    # ------------------------------------------------------------ the texts' dictionaries

    def dictionary(self, digest: bytes) -> bytes | None:
        """A stored dictionary by its digest."""
        ...

    def latest_dictionary(self, scope: str) -> bytes | None:
        """The dictionary new texts of `scope` are packed against (the newest of the scope), or None."""
        ...

    def keep_dictionary(self, digest: bytes, scope: str, data: bytes) -> None:
        """Store a dictionary unless stored (inside the caller's transaction: rolled back with the texts using it)."""
        ...

    # ------------------------------------------------------------ the one insert

    def add(self, voucher: NewVoucher) -> int:
        """Store a voucher, its texts and its search entry; its id. NumberTaken when its serie-número is taken in its
        environment."""
        ...

    # ------------------------------------------------------------ finds

    def id_of(self, environment: str, emisor_ruc: str, tipo: str, serie: str, numero: int) -> int | None: ...

    def get(self, voucher_id: int) -> dict[str, Any] | None:
        """The whole voucher: its row and its texts (`xml`, `request_json`, `xml_firmado`)."""
        ...

    def find(self, environment: str, emisor_ruc: str, tipo: str, serie: str, numero: int) -> dict[str, Any] | None:
        """The whole voucher of a serie-número in an environment."""
        ...

    def with_number(self, environments: tuple[str, ...], emisor_ruc: str, tipo: str, serie: str, numero: int,
                    text: TextKind, view: View) -> list[dict[str, Any]]:
        """The vouchers of these environments with this serie-número, in `view`, each with `text_sha256` (the
        SHA-256 of its `text`, or None)."""
        ...

    def legacy_by_hash(self, digest: str, environments: tuple[str, ...], text: TextKind,
                       view: View) -> dict[str, Any] | None:
        """The newest voucher stored before canonical texts whose `text` has this SHA-256, in `view`."""
        ...

    def issuer_and_type(self, voucher_id: int) -> tuple[str, str] | None: ...

    def last_numero(self, environment: str, emisor_ruc: str, tipo: str, serie: str) -> int:
        """The highest number of a serie in an environment (0: none)."""
        ...

    def series(self, environment: str) -> list[dict[str, Any]]:
        """Every serie of an environment with its highest number: {emisor_ruc, tipo, serie, ultimo}, the numbering's
        floor (`raise_numero`) included."""
        ...

    def raise_numero(self, environment: str, emisor_ruc: str, tipo: str, serie: str, at_least: int) -> None:
        """The serie's numbering goes on after `at_least` at the lowest (numbers issued elsewhere: a restore)."""
        ...

    def take_numero(self, environment: str, emisor_ruc: str, tipo: str, serie: str) -> int:
        """The serie's next number, handed out inside the caller's transaction (which must store the voucher): the
        serie's numbering row is locked until it ends, so desks taking numbers at once wait for each other's commit,
        and a rolled-back transaction gives its number back. Never below a number stored without it (operation 1
        with the caller's own number)."""
        ...

    def find_by_serie_numero(self, serie: str, numero: int, emisor_ruc: str | None = None,
                             tipo: str | None = None) -> list[dict[str, Any]]:
        """The vouchers (their rows without texts) numbered SERIE-NUMERO in any environment, newest first."""
        ...

    def list_page(self, environment: str, *, search: str | None, cliente: str | None, status: str | None,
                  tipo: str | None, desde: str | None, hasta: str | None, before_id: int | None, offset: int,
                  limit: int) -> list[dict[str, Any]]:
        """A page of an environment's vouchers (their rows without texts), newest first, always from an index.

        `search`: every word begins the serie-número, the customer's RUC/DNI or a word of their name (accents and
        case ignored); `cliente`: the customer's RUC/DNI exactly; `desde`/`hasta`: issue dates, both included;
        `before_id`: keyset paging (or `offset`)."""
        ...

    # ------------------------------------------------------------ for the outbox and the voids

    def ids_in_status(self, environments: tuple[str, ...], statuses: tuple[str, ...]) -> list[int]:
        """The ids of the vouchers of these environments in one of these statuses (through the status index)."""
        ...

    def statuses_of(self, voucher_ids: Iterable[int]) -> dict[int, str]:
        """The status of each voucher that exists among these ids."""
        ...

    def hold_paths(self, voucher_ids: Iterable[int]) -> None:
        """Inside the caller's transaction, hold these vouchers until it ends: another transaction holding one of
        them waits for this one's commit, and what this one reads afterwards includes what that one committed. The
        outbox and the resumen diario hold a boleta before they check, and record, the one path it goes to SUNAT by
        (sent alone or in a resumen diario), so of two desks choosing at once the second sees the first's choice."""
        ...

    def summary_candidates(self, environment: str, status: str, day: str) -> list[int]:
        """The ids of an environment's boletas and their notes (series B…) in `status`, issued on `day` (ISO date),
        ordered by issuer, type, serie and number: what a resumen diario reports."""
        ...

    # ------------------------------------------------------------ changes

    def mark_signed(self, voucher_id: int, signed_sha256: str, digest_value: str, signature_value: str,
                    certificado_id: str, updated_at: str) -> bool:
        """Record a signature whose signed text is stored whole (`set_signed_text`); False for an unknown id."""
        ...

    def set_signed_text(self, voucher_id: int, xml_firmado: bytes) -> None: ...

    def mark_signed_fragment(self, voucher_id: int, signature: bytes, offset: int, signed_sha256: str,
                             digest_value: str, signature_value: str, certificado_id: str, updated_at: str) -> bool:
        """Record a signature stored as its Signature and where it goes in the text; False (nothing written) when the
        voucher was signed meanwhile or does not exist."""
        ...

    def set_status(self, voucher_id: int, status: str, updated_at: str) -> bool:
        """False for an unknown id."""
        ...
