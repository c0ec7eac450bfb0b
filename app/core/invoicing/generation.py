"""Operation 1 (POST /api/v1/facturacion/xml): a request becomes a stored, numbered voucher of its type.

The request's document type (app/core/invoicing/documents/, resolved by its `tipo`) parses, builds and renders it;
SUNAT's own sheets are asked when a rule folder is configured; the store keeps it. A serie-número is issued once: the
same request again gets the stored document back, a different one a 409. See docs/vouchers.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.contract import GenerarXmlRequest, GenerarXmlResult
from app.core.errors import YupanaError, conflict, invalid
from app.core.invoicing import sunat_rules
from app.core.invoicing.builder import CompanyOf, NameOf, build_document, parse_request
from app.core.invoicing.documents import registry
from app.core.invoicing.documents.kind import Built
from app.core.invoicing.statuses import GENERADO
from app.core.invoicing.voucher_keys import (
    bytes_hashes,
    content_key_of,
    legacy_request_json,
    request_json,
    written_request_json,
)
from app.core.invoicing.voucher_store import NumberTaken, VoucherStore
from app.core.platform.settings import Settings

if TYPE_CHECKING:
    from app.core.invoicing.xmldsig import CanonicalSignature

log = logging.getLogger(__name__)

Issued = Callable[[list[Any]], None]  # the built documents (documents.kind.Built) just stored


@dataclass(slots=True)
class Draft:
    """A request built, rendered and checked, not stored yet: what operation 1 and «Emitir» store."""

    doc: Built
    canonical: str  # the request's idempotency text
    content_key: str
    xml: str
    encoded: bytes  # `xml` in UTF-8, encoded once for its hashes and its signature
    name: str
    xml_hash: str
    xml_sha256: str
    observations: list[str]

    def result(self) -> GenerarXmlResult:
        return GenerarXmlResult(xml=self.xml, hash=self.xml_hash, nombre_archivo=self.name,
                                observaciones=self.observations)


@dataclass(frozen=True, slots=True)
class Stored:
    """A request whose serie-número was issued before with the same content: the stored voucher answers."""

    voucher_id: int
    result: GenerarXmlResult


class Generation:
    def __init__(self, store: VoucherStore, settings: Settings, company_of: CompanyOf, name_of: NameOf,
                 on_issued: Issued | None = None) -> None:
        self.store = store
        self.settings = settings
        self.company_of = company_of
        self.name_of = name_of
        self.on_issued = on_issued  # told of every new voucher once stored (the engine remembers its customer)

    def issued(self, docs: list[Any]) -> None:
        """Tell `on_issued` of vouchers just stored (by `generate`, or by a batch's block). Never raises: a voucher
        issued stays issued whatever its listener does."""
        if self.on_issued is None or not docs:
            return
        try:
            self.on_issued(docs)
        except Exception:
            log.exception("after issuing %d voucher(s): the listener failed", len(docs))

    def parse(self, payload: Any) -> Any:
        """The request of the type `payload` names: its own model's, or the contract's (every problem in one 400)."""
        tipo = payload.get("tipo") if isinstance(payload, dict) else None
        kind = registry.get(tipo) if isinstance(tipo, str) else None
        if kind is not None and kind.request is not None:
            return kind.parse(payload)
        return parse_request(payload, self.company_of, self.name_of)

    def build(self, request: Any, checks: bool = True) -> Any:
        """The request's document, built by its type (documents.kind.Built)."""
        return build_document(request, self.company_of, self.name_of, checks)

    def render(self, doc: Built) -> tuple[str, str]:
        """(the document's XML, its file name), written by its type."""
        kind = registry.get(doc.tipo)
        assert kind is not None  # it was built by its type
        return kind.render(doc), kind.file_name(doc.emisor_ruc, doc.serie, doc.numero)

    def run_sunat_rules(self, xml: str, name: str) -> list[str]:
        """SUNAT's own sheets, when a rule folder is configured: a rejection is a 400, observations are returned."""
        rules_dir = self.settings.get("sunat_rules_dir")
        if not rules_dir:
            return []
        verdict = sunat_rules.check(rules_dir, xml, name)
        if verdict.rejection:
            raise invalid(None, f"Las reglas de SUNAT rechazan el comprobante con el código {verdict.rejection}: "
                          f"{verdict.message}", verdict.rejection)
        return verdict.observations

    def existing(self, request: Any, content_key: str) -> GenerarXmlResult | None:
        """The stored answer for this request's serie-número, or None when the number is free; a 409 when it was
        issued with other content."""
        voucher_id = self.store.id_of(request.emisor.ruc, request.tipo, request.serie, request.numero)
        if voucher_id is None:
            return None
        row = self.store.get(voucher_id)
        if row is None:  # gone since the look-up (a restore): the number is free again
            return None
        if row["content_key"] not in (content_key, content_key_of(written_request_json(request)),
                                      content_key_of(legacy_request_json(request))):
            following = self.store.next_numero(request.emisor.ruc, request.tipo, request.serie)
            raise conflict("numero", f"El comprobante {request.serie}-{request.numero} (tipo {request.tipo}) ya fue "
                           f"generado con otro contenido: use el siguiente número ({following}).")
        return GenerarXmlResult(xml=row["xml"], hash=row["hash"], nombre_archivo=row["nombre_archivo"])

    def generate(self, request: GenerarXmlRequest | Any,
                 doc: Built | None = None) -> tuple[int, GenerarXmlResult]:
        """(voucher id, result): a new voucher, or the stored one when this same request was issued before.
        `doc` is the request already built by a caller that had to check it first, so not built twice."""
        draft = self.draft(request, doc)
        if isinstance(draft, Stored):
            return draft.voucher_id, draft.result
        try:
            with self.store.storage.transaction(durable=True):  # a number handed out must survive a power cut
                voucher_id = self.add(draft)
        except NumberTaken as taken:  # issued before, or by another thread meanwhile
            stored = self.stored_or_raise(request, draft.content_key, taken)
            return stored.voucher_id, stored.result
        self.store.on_change(voucher_id, GENERADO)
        self.issued([draft.doc])
        return voucher_id, draft.result()

    def draft(self, request: GenerarXmlRequest | Any, doc: Built | None = None, *,
              numbered: bool = False) -> Draft | Stored:
        """The request built (unless `doc` is given), rendered and checked by SUNAT's sheets, ready to store; or the
        stored voucher when a refusal on the way meets a number issued before with this same request (never when
        `numbered`: the number is the serie's next, handed out when stored, so the request is not a retry)."""
        canonical = _canonical_json(request)
        content_key = content_key_of(canonical)
        # Built first, without asking whether the number was issued (almost never): the unique index answers at the
        # insert, and a refusal on the way also checks, so that an issued number still answers for itself.
        try:
            doc = doc or self.build(request)
            xml, name = self.render(doc)
            observations = self.run_sunat_rules(xml, name)
        except YupanaError as refusal:
            if numbered:
                raise
            return self.stored_or_raise(request, content_key, refusal)
        encoded = xml.encode("utf-8")
        xml_hash, xml_sha256 = bytes_hashes(encoded)
        return Draft(doc, canonical, content_key, xml, encoded, name, xml_hash, xml_sha256, observations)

    def add(self, draft: Draft, signed: CanonicalSignature | None = None, certificado_id: str | None = None,
            status: str | None = None) -> int:
        """Store a draft inside the caller's durable transaction (signed in memory when `signed` is given); raises
        NumberTaken when its serie-número was issued."""
        return self.store.add(draft.doc, name=draft.name, xml_hash=draft.xml_hash, xml_sha256=draft.xml_sha256,
                              content_key=draft.content_key, request_json=draft.canonical, xml=draft.xml,
                              signed=signed, certificado_id=certificado_id, status=status)

    def stored_or_raise(self, request: Any, content_key: str, error: Exception) -> Stored:
        """An issued number answers for itself (or 409s); a free one gets `error`."""
        stored = self.existing(request, content_key)
        voucher_id = self.store.id_of(request.emisor.ruc, request.tipo, request.serie, request.numero)
        if stored is None or voucher_id is None:
            raise error
        return Stored(voucher_id, stored)

def _canonical_json(request: Any) -> str:
    """The idempotency key's input: the type's own, a request of the type's own model as pydantic writes it, or
    the contract's (amounts by value: voucher_keys.request_json)."""
    kind = registry.get(request.tipo)
    if kind is not None and kind.request_json is not None:
        return kind.request_json(request)
    if kind is not None and kind.request is not None:
        return str(request.model_dump_json(exclude_none=True))
    return request_json(request)
