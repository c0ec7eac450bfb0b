"""The voucher store: the vouchers (one per serie-número and environment) and their texts (the request, the generated
XML and the signed one, written once and packed), over the voucher repository (app/core/storage/ports/vouchers.py).
It only stores: building, signing and sending are elsewhere."""

from __future__ import annotations

import builtins
import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from app.core.errors import invalid, not_found
from app.core.invoicing import packed_texts
from app.core.invoicing.statuses import FIRMADO, GENERADO, VOUCHER_STATUSES
from app.core.invoicing.voucher_keys import key_of_text, now_text, sha256_hex, splice_signature
from app.core.platform.environments import NAMES
from app.core.storage.ports.database import Database
from app.core.storage.ports.vouchers import NewVoucher, NumberTaken, TextKind, View, VoucherRepository

if TYPE_CHECKING:
    from app.core.invoicing.documents.kind import Built
    from app.core.invoicing.xmldsig import CanonicalSignature

__all__ = ["NumberTaken", "VoucherStore", "signed_text_of"]

STATUSES = VOUCHER_STATUSES
_PACKED_COLUMNS = ("xml", "request_json", "xml_firmado", "signature")


def _complete(row: dict | None, dictionary_of: Callable[[bytes], bytes]) -> dict | None:
    """A stored row as the store API shows it: its texts unpacked, `xml_firmado` rebuilt when only the Signature was
    stored."""
    if row is None:
        return None
    for column in _PACKED_COLUMNS:
        if column in row:
            row[column] = packed_texts.unpack(row[column], dictionary_of)
    if "xml" in row and row.get("signature") is not None and row.get("xml_firmado") is None:
        row["xml_firmado"] = splice_signature(row["xml"], row["signature_offset"], row["signature"])
    return row


def signed_text_of(row: dict, dictionary_of: Callable[[bytes], bytes]) -> str | None:
    """A voucher's signed text from its stored columns (`xml`, `xml_firmado`, `signature`, `signature_offset`, packed
    or not), without a store: the outbox's migrations compare it with the copies they drop."""
    complete = _complete(dict(row), dictionary_of)
    return complete["xml_firmado"] if complete else None


class VoucherStore:
    """The vouchers of a data folder and their texts: the one INSERT, finds, signatures and status changes, over the
    voucher repository. `environment` says which environment's vouchers are seen and numbered; `on_change(id,
    status)` is told of every change of status (the engine turns it into an event)."""

    def __init__(self, database: Database, repository: VoucherRepository, environment: Callable[[], str],
                 on_change: Callable[[int, str], None] = lambda voucher_id, status: None) -> None:
        self.storage = database  # the unit of work: callers open transactions the store's writes join
        self.repository = repository
        self.environment = environment
        self.on_change = on_change
        self._dictionaries: dict[bytes, bytes] = {}  # digest → bytes: a digest names its bytes forever
        self._scopes: dict[str, packed_texts.Dictionary] = {}  # scope → what its new texts are packed against
        self._kept: set[bytes] = set()  # digests whose row is known committed (`keep_dictionaries`, or read back)
        self._keeping = threading.local()  # `written`: the digests this thread's `keeping` block wrote

    # ------------------------------------------------------------ packed texts

    def _pack(self, scope: str, text: str | bytes | None) -> bytes | None:
        """`text` packed against its scope's dictionary (the scope's first text becomes it), inside the caller's
        transaction: the dictionary's row is written there too unless it is known stored, so a rollback that takes
        it away takes away the rows that need it. Bytes are a text packed already (a batch's worker, against one of
        `kept_dictionaries`); None stays None (the table's constraints decide)."""
        if text is None or isinstance(text, bytes):
            return text
        return self.pack_bytes(scope, text.encode("utf-8"))

    def pack_bytes(self, scope: str, data: bytes) -> bytes:
        """`_pack` for bytes kept as they came (a submission's signed XML, a CDR's zip), for the parts that keep
        them (the outbox, the voids), inside their transaction: one set of dictionaries per data folder; read back
        with `unpack_bytes`."""
        dictionary = self._dictionary_for(scope, data)
        if dictionary.digest not in self._kept:  # in the caller's transaction: a rollback takes it with the texts
            self.repository.keep_dictionary(dictionary.digest, scope, dictionary.data)
            unsure = getattr(self._keeping, "written", None)
            if unsure is not None:
                unsure.add(dictionary.digest)
        return dictionary.pack_bytes(data)

    @contextmanager
    def keeping(self) -> Iterator[None]:
        """Around a transaction of this thread that packs texts (outside it, never nested in another): once it has
        committed, the dictionaries written in it are known stored and never written again (one statement less per
        text: a round trip on a shared PostgreSQL). Nothing is kept when the block raises."""
        written: set[bytes] = set()
        self._keeping.written = written
        try:
            yield
        finally:
            self._keeping.written = None
        self._kept.update(written)  # reached only when the block (its commit included) went through

    def _dictionary_for(self, scope: str, data: bytes) -> packed_texts.Dictionary:
        """The dictionary of `scope` (its newest stored one, else `data` becomes it), its digest worked out once."""
        dictionary = self._scopes.get(scope)
        if dictionary is None:
            stored = self.repository.latest_dictionary(scope)
            dictionary = packed_texts.Dictionary.of(stored or data)
            self._scopes[scope] = dictionary
            if stored is not None:  # committed before (this store writes a scope's only once it knows the scope):
                self._kept.add(dictionary.digest)  # never written again, one statement less per text packed
            self._dictionaries[dictionary.digest] = dictionary.data
        return dictionary

    def keep_dictionaries(self, samples: Iterable[tuple[str, bytes]]) -> None:
        """Before a transaction that packs many texts (a batch's block): the dictionary of each (scope, a text of it)
        stored in a commit of its own, outside any transaction, once per data folder; the block's texts then pack
        without writing its row again. Committed first, it can never be rolled back under the texts that need it
        (the WAL keeps commits in order: the block's durable commit syncs it too)."""
        fresh = {}
        for scope, sample in samples:
            dictionary = self._dictionary_for(scope, sample)
            if dictionary.digest not in self._kept:
                fresh[dictionary.digest] = (scope, dictionary)
        if not fresh:
            return
        with self.storage.transaction():
            for scope, dictionary in fresh.values():
                self.repository.keep_dictionary(dictionary.digest, scope, dictionary.data)
        self._kept.update(fresh)

    def kept_dictionaries(self) -> dict[str, packed_texts.Dictionary]:
        """scope → its dictionary, for the scopes whose dictionary is known stored (`keep_dictionaries`): what may
        pack texts elsewhere (a batch's workers) and reach `add` as bytes."""
        return {scope: dictionary for scope, dictionary in self._scopes.items() if dictionary.digest in self._kept}

    @staticmethod
    def scopes_of(doc: Built, certificado_id: str | None = None) -> tuple[str, str, str | None]:
        """The packing scopes of a voucher's request, XML and (signed with `certificado_id`) Signature."""
        return (f"request:{doc.emisor_ruc}", f"xml:{doc.emisor_ruc}:{doc.tipo}",
                f"signature:{certificado_id}" if certificado_id else None)

    def unpack_bytes(self, value: bytes | None) -> bytes | None:
        """What `pack_bytes` packed, byte for byte; a value stored before packing as it is."""
        return packed_texts.unpack_bytes(value, self._dictionary_of)

    def signed_bytes(self, voucher_id: int) -> bytes | None:
        """A voucher's signed XML as operation 3 sends it (UTF-8), or None while it is not signed (or not stored)."""
        row = self.get(voucher_id)
        return row["xml_firmado"].encode("utf-8") if row and row.get("xml_firmado") else None

    def _dictionary_of(self, digest: bytes) -> bytes:
        data = self._dictionaries.get(digest)
        if data is None:
            data = self.repository.dictionary(digest)
            if data is None:
                raise KeyError(digest.hex())
            self._dictionaries[digest] = data
        return data

    # ------------------------------------------------------------ the one INSERT

    def add(self, doc: Built, *, name: str, xml_hash: str, xml_sha256: str, content_key: str,
            request_json: str | bytes, xml: str | bytes, signed: CanonicalSignature | None = None,
            certificado_id: str | None = None, status: str | None = None,
            packed_signature: bytes | None = None, block: tuple[str, str] | None = None) -> int:
        """Insert a voucher inside the caller's transaction (`transaction(durable=True)`: a number handed out must
        survive a power cut): generated, or already signed in memory (a batch, «Emitir»); `doc` is the document as its
        type built it; a text given as bytes (and `packed_signature`) was packed already (`_pack`); `status` when it is not the plain one («Emitir» stores it on its way to SUNAT). Raises
        NumberTaken when its serie-número was issued in this environment (any other failure as it comes). `block`: the
        (environment, updated_at) of a batch's block, worked out once for all of its vouchers (`block_stamp`)."""
        environment, updated_at = block or self.block_stamp()
        request_scope, xml_scope, _signature_scope = self.scopes_of(doc)
        voucher = NewVoucher(
            environment, doc.emisor_ruc, doc.tipo, doc.serie, doc.numero, name, xml_hash, xml_sha256,
            content_key, status or (FIRMADO if signed else GENERADO), doc.receptor.tipo_documento, doc.receptor.numero_documento,
            doc.receptor.nombre, doc.moneda, f"{doc.total:.2f}", doc.fecha.isoformat(),
            self._pack(request_scope, request_json), self._pack(xml_scope, xml))
        if signed is not None:
            voucher.signature = packed_signature or self._pack(f"signature:{certificado_id}", signed.signature)
            voucher.signature_offset, voucher.signed_sha256 = signed.offset, signed.sha256
            voucher.digest_value, voucher.signature_value = signed.digest_value, signed.signature_value
            voucher.certificado_id, voucher.updated_at = certificado_id, updated_at
        return self.repository.add(voucher)

    def block_stamp(self) -> tuple[str, str]:
        """(the current environment, now as stored): what `add` writes in every voucher of one transaction."""
        return self.environment(), now_text()

    def add_recovered(self, voucher: NewVoucher) -> int:
        """Insert a signed voucher read back from a file (app.core.invoicing.recovered) inside the caller's
        transaction, its texts packed here. Raises NumberTaken when its serie-número is stored already."""
        voucher.request_json = self._pack(f"request:{voucher.emisor_ruc}", voucher.request_json.decode("utf-8")
                                          if voucher.request_json else None)
        voucher.xml = self._pack(f"xml:{voucher.emisor_ruc}:{voucher.tipo}", voucher.xml.decode("utf-8")
                                 if voucher.xml else None)
        voucher.signature = self._pack("signature:recuperado", voucher.signature.decode("utf-8")
                                       if voucher.signature else None)
        voucher.updated_at = now_text()
        return self.repository.add(voucher)

    # ------------------------------------------------------------ finds

    def id_of(self, emisor_ruc: str, tipo: str, serie: str, numero: int, environment: str | None = None) -> int | None:
        """The id of a serie-número in the current environment (or `environment`): one look in the unique index, no
        texts."""
        return self.repository.id_of(environment or self.environment(), emisor_ruc, tipo, serie, numero)

    def find(self, emisor_ruc: str, tipo: str, serie: str, numero: int) -> dict | None:
        """A voucher of the current environment by its serie-número."""
        return _complete(self.repository.find(self.environment(), emisor_ruc, tipo, serie, numero),
                         self._dictionary_of)

    def get(self, voucher_id: int) -> dict | None:
        return _complete(self.repository.get(voucher_id), self._dictionary_of)

    def require(self, voucher_id: int) -> dict:
        """The whole voucher, or a 404 naming its id."""
        row = self.get(voucher_id)
        if row is None:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        return row

    def _by_text(self, view: View, text_kind: TextKind, text: str, encoded: bytes | None = None,
                 environments: tuple[str, ...] | None = None) -> dict | None:
        """The voucher of one of `environments` (the current one by default) whose text is exactly `text`."""
        environments = environments or (self.environment(),)
        digest = hashlib.sha256(encoded if encoded is not None else text.encode("utf-8")).hexdigest()
        key = key_of_text(text)
        if key is not None:
            for row in self.repository.with_number(environments, *key, text=text_kind, view=view):
                if row.pop("text_sha256") == digest:
                    return _complete(row, self._dictionary_of)
        return _complete(self.repository.legacy_by_hash(digest, environments, text_kind, view), self._dictionary_of)

    def find_by_xml(self, xml: str) -> dict | None:
        row = self._by_text("id", "xml", xml)
        return self.get(row["id"]) if row else None

    def find_by_signed_xml(self, xml_firmado: str) -> dict | None:
        row = self._by_text("id", "signed", xml_firmado)
        return self.get(row["id"]) if row else None

    def environment_of_signed(self, xml_firmado: str) -> str | None:
        """The environment a signed voucher was generated in, whichever it is; None for one Yupana did not generate."""
        row = self._by_text("environment", "signed", xml_firmado, environments=NAMES)
        return row["environment"] if row else None

    def find_for_signing(self, xml: str, encoded: bytes | None = None) -> dict | None:
        """The voucher whose generated text is exactly `xml` (`encoded`: its UTF-8, when the caller has it), with the
        columns operation 2 needs (not the text)."""
        return self._by_text("signing", "xml", xml, encoded)

    def record_signature(self, voucher_id: int, xml_firmado: str, digest_value: str, signature_value: str,
                         certificado_id: str) -> None:
        with self.storage.transaction():
            changed = self.repository.mark_signed(voucher_id, sha256_hex(xml_firmado), digest_value, signature_value,
                                                  certificado_id, now_text())
            issuer = self.repository.issuer_and_type(voucher_id) if changed else None
            if issuer is not None:
                emisor_ruc, tipo = issuer
                packed = self._pack(f"xml:{emisor_ruc}:{tipo}", xml_firmado)
                assert packed is not None  # a text packs to bytes
                self.repository.set_signed_text(voucher_id, packed)
        if not changed:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        self.on_change(voucher_id, FIRMADO)

    def record_signature_fragment(self, voucher_id: int, signature: str, offset: int, signed_sha256: str,
                                  digest_value: str, signature_value: str, certificado_id: str) -> bool:
        """`record_signature` storing only the Signature and where it goes in the stored text (the signed XML is
        `splice_signature(xml, offset, signature)`, of SHA-256 `signed_sha256`). False, and nothing written, when
        the voucher was signed meanwhile (or does not exist)."""
        with self.storage.transaction():
            changed = self.repository.mark_signed_fragment(
                voucher_id, self.pack_bytes(f"signature:{certificado_id}", signature.encode("utf-8")), offset,
                signed_sha256, digest_value, signature_value, certificado_id, now_text())
        if changed:
            self.on_change(voucher_id, FIRMADO)
        return changed

    def set_status(self, voucher_id: int, status: str) -> None:
        if not self.write_status(voucher_id, status):
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        self.on_change(voucher_id, status)

    def write_status(self, voucher_id: int, status: str) -> bool:
        """`set_status` inside the caller's transaction, untold: the caller tells `on_change` once it committed (the
        outbox, with the CDR). False when there is no such voucher."""
        if status not in STATUSES:
            raise invalid("status", f"El estado «{status}» no es válido: {', '.join(STATUSES)}.")
        return bool(self.repository.set_status(voucher_id, status, now_text()))

    def list(self, search: str | None = None, status: str | None = None, limit: int = 200, *,
             before_id: int | None = None, offset: int = 0, desde: str | None = None, hasta: str | None = None,
             tipo: str | None = None, cliente: str | None = None) -> builtins.list[dict]:
        """A page of the current environment's vouchers, newest first, always from an index (never a scan of the table).

        `search`: every word begins the serie-número («F001-12», «F001-00000123»), the customer's RUC/DNI or a word of
        their name (accents and case ignored). Filters: `status`, `tipo` (catalogue 01 code), `cliente` (the customer's
        RUC/DNI, exactly), `desde`/`hasta` (fecha de emisión, ISO dates, both included). Paging: `before_id` (the
        last id of the previous page: keyset, the same cost for any page) or `offset`."""
        return self.repository.list_page(self.environment(), search=search, cliente=cliente, status=status, tipo=tipo,
                                         desde=desde, hasta=hasta, before_id=before_id, offset=offset, limit=limit)

    def next_numero(self, emisor_ruc: str, tipo: str, serie: str) -> int:
        """The next number of a serie in the current environment: sandbox and beta trials never use up real numbers."""
        return self.repository.last_numero(self.environment(), emisor_ruc, tipo, serie) + 1

    def series(self) -> builtins.list[dict]:
        """The current environment's series with their highest number ({emisor_ruc, tipo, serie, ultimo})."""
        return self.repository.series(self.environment())

    def raise_numero(self, emisor_ruc: str, tipo: str, serie: str, at_least: int) -> None:
        """The serie goes on after `at_least` at the lowest, in the current environment (after a restore)."""
        self.repository.raise_numero(self.environment(), emisor_ruc, tipo, serie, at_least)

    def take_numero(self, emisor_ruc: str, tipo: str, serie: str) -> int:
        """The serie's next number in the current environment, handed out inside the caller's transaction (which
        stores the voucher): desks issuing on one serie at once get each their own, with no gap (ports.vouchers)."""
        return self.repository.take_numero(self.environment(), emisor_ruc, tipo, serie)

    def find_by_serie_numero(self, serie: str, numero: int, emisor_ruc: str | None = None,
                             tipo: str | None = None) -> builtins.list[dict]:
        """The vouchers numbered SERIE-NUMERO (a factura and its credit note may share a series), newest first."""
        return self.repository.find_by_serie_numero(serie, numero, emisor_ruc, tipo)

    # ------------------------------------------------------------ for the outbox and the voids

    def ids_in_status(self, *statuses: str) -> builtins.list[int]:
        """The vouchers of every environment in one of these statuses (repair on open: those still on their way)."""
        return self.repository.ids_in_status(NAMES, statuses)

    def statuses_of(self, voucher_ids: builtins.list[int]) -> dict[int, str]:
        """The status of each of these vouchers that exists."""
        return self.repository.statuses_of(voucher_ids)

    def hold_paths(self, voucher_ids: Iterable[int]) -> None:
        """Hold these vouchers to the end of the caller's transaction, before choosing their path to SUNAT
        (ports.vouchers)."""
        self.repository.hold_paths(voucher_ids)

    def summary_candidates(self, status: str, day: str) -> builtins.list[int]:
        """The current environment's boletas and their notes in `status` issued on `day` (a resumen diario's)."""
        return self.repository.summary_candidates(self.environment(), status, day)
