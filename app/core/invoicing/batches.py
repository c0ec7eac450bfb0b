"""Issuing a batch of vouchers: generate and sign many at once (operations 1 and 2 in bulk).

For a point of sale's end-of-day boletas or an accountant's month of facturas, sent as one JSON Lines file
(`yupana lote`) or one list. Each voucher goes through the same checks, generator and signer as operations 1
and 2; what changes is the bookkeeping: a block of vouchers is stored, already signed, in one durable
transaction instead of two per voucher, and the signing certificate is checked once per issuer. A block is
committed before any of its results is handed out, so an interrupted batch loses nothing that was answered;
running the same file again answers every stored voucher from the store (operation 1's idempotency).

Anything that is not the plain case (a number issued before, a refusal, a race with another writer) goes
through operations 1 and 2 one voucher at a time (`issue_one`: generate, then sign by id, the same pieces the
engine's «emitir» uses), so a batch answers exactly as those operations would.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import padding

from app.core.contract import GenerarXmlRequest, parse_json, parse_model
from app.core.errors import ErrorCode, YupanaError, invalid, unreadable_file
from app.core.invoicing import ubl, xmldsig
from app.core.invoicing.generation import Generation
from app.core.invoicing.signing import Signing
from app.core.invoicing.voucher_keys import bytes_hashes, content_key_of, request_json
from app.core.invoicing.voucher_store import NumberTaken
from app.core.records import BatchItem, SignedVoucher

log = logging.getLogger(__name__)

BLOCK = 250  # vouchers per transaction: large enough to make a commit's cost vanish, small for progress

@dataclass(slots=True)
class _Prepared:
    """A voucher generated, and signed in memory, waiting for its block's transaction."""
    index: int
    doc: ubl.Document
    content_key: str
    canonical_request: str
    xml: str
    name: str
    xml_hash: str
    xml_sha256: str
    material: tuple  # (CertificateInfo, private key, certificate)
    pending: xmldsig.PendingSignature
    observaciones: list[str]
    signed: xmldsig.CanonicalSignature | None = None


def read_requests(path: str | os.PathLike[str]) -> list[Any]:
    """The requests of a batch file: a JSON array's items, or the non-blank lines of a JSON Lines file as text
    (each line is parsed, and a bad one refused, on its own)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise invalid("archivo", f"El archivo {Path(path).name} no está en UTF-8: guárdelo como UTF-8.") from None
    except OSError as exc:
        raise unreadable_file("archivo", path, exc) from None
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text, parse_float=Decimal)
        except json.JSONDecodeError as exc:
            raise invalid("archivo", f"El archivo {Path(path).name} no es un arreglo JSON válido (línea "
                                     f"{exc.lineno}, columna {exc.colno}).") from None
        return list(items)
    return [line for line in text.splitlines() if line.strip()]


class Batches:
    def __init__(self, generation: Generation, signing: Signing, on_stored: Callable[[list[int]], None]) -> None:
        self.generation = generation
        self.signing = signing
        self.store = generation.store
        self.on_stored = on_stored  # told of the ids a block stored, already signed

    def issue(self, requests: Iterable[Any], certificado_id: str | None = None) -> Iterator[BatchItem]:
        """Generate and sign every request; yields one item per request, in order: the signed voucher (operations
        1 and 2's answers joined: `nombre_archivo`, `hash`, `xml_firmado`, `digest_value`, `signature_value`, and
        `observaciones`, `certificado_por_vencer` when they apply) or the refusal.

        `certificado_id` None: each issuer's default certificate. A block is stored before any of its items is
        handed out, so a caller that stops iterating (to cancel) loses nothing it was given.
        """
        items = requests if isinstance(requests, list) else list(requests)
        signer = _Signer(self.signing, certificado_id)
        for first in range(0, len(items), BLOCK):
            yield from self._issue_block(signer, items[first:first + BLOCK], first)

    def _issue_block(self, signer: _Signer, block: list[Any], first: int) -> Iterator[BatchItem]:
        # In stages (all generation, then every RSA operation, then the transaction): each stage's code and data
        # stay in the processor's caches, measurably faster than voucher after voucher.
        prepared: list[_Prepared] = []
        one_by_one: list[int] = []
        with self.store.storage.steady_reads():  # the issuer and settings are read once for the block, not per voucher
            for offset, raw in enumerate(block):
                try:
                    prepared.append(self._prepare(signer, first + offset, raw))
                except YupanaError:  # a refusal: operations 1 and 2 answer it below, as they would alone
                    one_by_one.append(offset)
                except Exception:  # one odd voucher must not sink its block; operations 1 and 2 answer it below
                    log.exception("batch: voucher %d could not be prepared; issued one by one", first + offset + 1)
                    one_by_one.append(offset)
        for item in prepared:
            _info, key, certificate = item.material
            pending = item.pending
            item.signed = pending.complete(key.sign(pending.signed_info, padding.PKCS1v15(), pending.algorithm.hash()),
                                           certificate)
        stored = self._store(prepared)
        results: list[BatchItem | None] = [None] * len(block)
        for item in prepared:
            if item.index in stored:
                results[item.index - first] = _success(item)
            else:
                one_by_one.append(item.index - first)
        for offset in sorted(one_by_one):
            results[offset] = self.issue_one(block[offset], signer.certificado_id, first + offset)
        yield from (result for result in results if result is not None)

    def _prepare(self, signer: _Signer, index: int, raw: Any) -> _Prepared:
        request = parse_model(GenerarXmlRequest, parse_json(raw) if isinstance(raw, str | bytes) else raw)
        canonical_request = request_json(request)
        doc = self.generation.build(request)
        xml, name = self.generation.render(doc)
        observaciones = self.generation.run_sunat_rules(xml, name)
        material = signer.material(doc.emisor_ruc)
        encoded = xml.encode("utf-8")
        xml_hash, xml_sha256 = bytes_hashes(encoded)
        pending = xmldsig.prepare_canonical(xml, algorithm=signer.algorithm, encoded=encoded)
        return _Prepared(index, doc, content_key_of(canonical_request), canonical_request, xml, name,
                         xml_hash, xml_sha256, material, pending, observaciones)

    def _store(self, prepared: list[_Prepared]) -> set[int]:
        """One transaction for the block; the indexes stored. A number already taken is left to operation 1."""
        stored: set[int] = set()
        if not prepared:
            return stored
        ids, docs = [], []
        with self.store.storage.transaction(durable=True):  # one sync for the block's numbers
            for item in prepared:
                assert item.signed is not None
                try:
                    voucher_id = self.store.add(item.doc, name=item.name, xml_hash=item.xml_hash,
                                                xml_sha256=item.xml_sha256, content_key=item.content_key,
                                                request_json=item.canonical_request, xml=item.xml, signed=item.signed,
                                                certificado_id=item.material[0].certificado_id)
                except NumberTaken:  # issued before, or by another writer meanwhile
                    continue
                stored.add(item.index)
                ids.append(voucher_id)
                docs.append(item.doc)
        if ids:
            self.on_stored(ids)
            self.generation.issued(docs)
        return stored

    def issue_one(self, raw: Any, certificado_id: str | None, index: int = 0) -> BatchItem:
        """One voucher through operations 1 and 2 (generate, then sign by its id), as a batch item (never raises).
        Without a certificate to sign with, nothing is generated."""
        try:
            payload = parse_json(raw) if isinstance(raw, str | bytes) else _as_payload(raw)
            ruc = _issuer_ruc(payload)
            chosen = self.signing.chosen_certificate(certificado_id, ruc)
            if ruc is not None:  # a certificate that cannot sign (unknown, expired, another RUC's) is said first
                self.signing.certificate_for(chosen, ruc)
            voucher_id, generated = self.generation.generate(self.generation.parse(payload))
            signed = self.signing.sign_voucher(voucher_id, chosen)
        except YupanaError as exc:
            return BatchItem(index, refusal=exc)
        except Exception:  # one voucher's unexpected failure is its own answer, as Engine.call gives it
            log.exception("batch: voucher failed unexpectedly")
            return BatchItem(index, refusal=YupanaError(
                ErrorCode.INTERNAL, "Error interno de Yupana: los detalles están en el registro."))
        return BatchItem(index, SignedVoucher(
            generated.nombre_archivo, generated.hash, signed.xml_firmado, signed.digest_value, signed.signature_value,
            list(generated.observaciones or []), bool(signed.certificado_por_vencer)))


def _success(item: _Prepared) -> BatchItem:
    signed = item.signed
    assert signed is not None
    return BatchItem(item.index, SignedVoucher(item.name, item.xml_hash, signed.xml, signed.digest_value,
                                               signed.signature_value, list(item.observaciones),
                                               item.material[0].por_vencer()))


def _as_payload(raw: Any) -> Any:
    return raw.model_dump(mode="json", exclude_none=True) if isinstance(raw, GenerarXmlRequest) else raw


def _issuer_ruc(payload: Any) -> str | None:
    emisor = payload.get("emisor") if isinstance(payload, dict) else None
    ruc = emisor.get("ruc") if isinstance(emisor, dict) else None
    return ruc.strip() if isinstance(ruc, str) and ruc.strip() else None


class _Signer:
    """Signing material per issuer, checked once per batch (expiry, RUC) as operation 2 checks it."""

    def __init__(self, signing: Signing, certificado_id: str | None) -> None:
        self.signing = signing
        self.certificado_id = certificado_id
        self.algorithm = signing.settings.get("signature_algorithm")
        self._by_ruc: dict[str, tuple] = {}

    def material(self, ruc: str) -> tuple:
        material = self._by_ruc.get(ruc)
        if material is None:
            chosen = self.signing.chosen_certificate(self.certificado_id, ruc)
            material = self._by_ruc[ruc] = self.signing.certificate_for(chosen, ruc)
        return material
