"""Issuing a batch of vouchers: generate and sign many at once (operations 1 and 2 in bulk).

For a point of sale's end-of-day boletas or an accountant's month of facturas, sent as one JSON Lines file
(`yupana lote`) or one list. Each voucher goes through the same checks, generator and signer as operations 1
and 2; what changes is the bookkeeping: a block of vouchers is stored, already signed, in one durable
transaction instead of two per voucher, and the signing certificate is checked once per issuer. A block is
committed before any of its results is handed out, so an interrupted batch loses nothing that was answered;
running the same file again answers every stored voucher from the store (operation 1's idempotency).

On every core (issue 33): a batch of POOL_FROM requests or more is made by the engine's worker processes
(app.core.invoicing.workers: one per core, started at the first such batch and kept), each block split between
them, while this process writes the block before it. The workers hold two blocks at a time, the one they make and
the next (each part pickled before it is handed out): a worker goes from one part to the next without waiting for
this process, even while it commits. The requests are read from their stream a block at a time (at most AHEAD + 1
blocks in memory). The workers also pack the texts against the stored dictionaries (a few hundred bytes through
the pipe instead of 14 kB, nothing left to compress for the writer); the first texts of a new scope come unpacked
and the writer packs them, storing their dictionary once, before the block, in a commit of its own. A block is
stored only once every worker gave back its whole part, in the writer's one transaction, where its numbers are
taken: a worker that dies mid-block leaves nothing of the block behind (its transaction never began), and the block
is made again by new workers, with the one queued behind it (then, should those fail too, by this process): no gap,
no number used twice. A smaller batch, or one that finds the workers busy with another, is
made in this process, the same way.

Anything that is not the plain case (a number issued before, a refusal, a race with another writer) goes
through operations 1 and 2 one voucher at a time (`issue_one`: generate, then sign by id, the same pieces the
engine's «emitir» uses), so a batch answers exactly as those operations would.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, overload

from app.core.contract import GenerarXmlRequest, parse_json
from app.core.errors import ErrorCode, YupanaError, invalid, unreadable_file
from app.core.invoicing.generation import Generation
from app.core.invoicing.signing import Signing
from app.core.invoicing.voucher_store import NumberTaken, VoucherStore
from app.core.invoicing.workers import Fallback, Issuer, Made, Maker, Material, Outcome, Part, SigningPool, WorkerLost
from app.core.invoicing.xmldsig import CanonicalSignature
from app.core.records import BatchItem, SignedVoucher

log = logging.getLogger(__name__)

BLOCK = 250  # vouchers per transaction: large enough to make a commit's cost vanish, small for progress
POOL_FROM = 64  # a smaller batch is made in this process: starting the workers (about a second) costs more
ATTEMPTS = 2  # times a block is given to the workers before this process makes it itself
AHEAD = 2  # blocks in the workers' hands: the one they make and the next, waiting in each one's pipe
PUMP_EVERY = 8  # vouchers stored (or items handed out) between two looks at what the workers sent meanwhile


# ---------------------------------------------------------------- the batch file

def read_requests(path: str | os.PathLike[str]) -> Sequence[Any]:
    """The requests of a batch file: a JSON array's items, or the non-blank lines of a JSON Lines file as text
    (each line is parsed, and a bad one refused, on its own). A JSON Lines file is checked whole now (UTF-8) but its
    lines are read when they are issued (`RequestLines`): 300,000 of them are never in memory at once."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        raise unreadable_file("archivo", path, exc) from None
    if head.startswith(b"["):
        return _json_array(path)
    return RequestLines(path)


def _json_array(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except OSError as exc:
        raise unreadable_file("archivo", path, exc) from None
    try:
        items = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise invalid("archivo", f"El archivo {path.name} no es un arreglo JSON válido (línea "
                                 f"{exc.lineno}, columna {exc.colno}).") from None
    return list(items)


def _not_utf8(path: Path) -> YupanaError:
    return invalid("archivo", f"El archivo {path.name} no está en UTF-8: guárdelo como UTF-8.")


class RequestLines(Sequence[Any]):
    """The non-blank lines of a JSON Lines file, each read when it is asked for. Opening scans the file once (every
    line decoded, so a file that is not UTF-8 is refused before anything is issued) and keeps where each non-blank
    line starts (8 bytes a line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._starts = array("q")
        try:
            with path.open("rb") as handle:
                position = 0
                for line in handle:
                    text = line[3:] if position == 0 and line.startswith(b"\xef\xbb\xbf") else line
                    text.decode("utf-8")
                    if text.strip():
                        self._starts.append(position + len(line) - len(text))
                    position += len(line)
        except UnicodeDecodeError:
            raise _not_utf8(path) from None
        except OSError as exc:
            raise unreadable_file("archivo", path, exc) from None

    def __len__(self) -> int:
        return len(self._starts)

    def __iter__(self) -> Iterator[str]:
        return self._read(0, len(self._starts))

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            first, stop, step = index.indices(len(self._starts))
            lines = list(self._read(first, stop)) if first < stop else []
            return lines[::step] if step != 1 else lines
        if index < 0:
            index += len(self._starts)
        if not 0 <= index < len(self._starts):
            raise IndexError(index)
        return next(self._read(index, index + 1))

    def _read(self, first: int, stop: int) -> Iterator[str]:
        """Lines first..stop-1 (non-blank ones), from where the first starts."""
        if first >= stop:
            return
        wanted = set(self._starts[first:stop]) if stop - first < len(self._starts) else None
        with self.path.open("rb") as handle:
            handle.seek(self._starts[first])
            position, left = self._starts[first], stop - first
            for line in handle:
                if wanted is None or position in wanted:
                    if line.strip():
                        yield line.decode("utf-8").rstrip("\r\n")
                        left -= 1
                        if not left:
                            return
                position += len(line)


# ---------------------------------------------------------------- issuing

class Batches:
    def __init__(self, generation: Generation, signing: Signing, on_stored: Callable[[list[int]], None],
                 pool: SigningPool | None = None) -> None:
        self.generation = generation
        self.signing = signing
        self.store: VoucherStore = generation.store
        self.on_stored = on_stored  # told of the ids a block stored, already signed
        self.pool = pool or SigningPool()  # started at the first batch of POOL_FROM requests or more

    def close(self) -> None:
        """The workers end (the engine's close)."""
        self.pool.close()

    def issue(self, requests: Iterable[Any], certificado_id: str | None = None) -> Iterator[BatchItem]:
        """Generate and sign every request; yields one item per request, in order: the signed voucher (operations
        1 and 2's answers joined: `nombre_archivo`, `hash`, `xml_firmado`, `digest_value`, `signature_value`, and
        `observaciones`, `certificado_por_vencer` when they apply) or the refusal.

        `certificado_id` None: each issuer's default certificate. A block is stored before any of its items is
        handed out, so a caller that stops iterating (to cancel) loses nothing it was given. The requests are taken
        from `requests` a block at a time (a generator, a file's lines: never all at once).
        """
        stream = iter(requests)
        blocks = ((first, block) for first, block in
                  zip(itertools.count(0, BLOCK), iter(lambda: list(itertools.islice(stream, BLOCK)), []),
                      strict=False))
        opening = next(blocks, None)
        if opening is None:
            return
        signer = _Signer(self.signing, certificado_id)
        every = itertools.chain([opening], blocks)
        if len(opening[1]) >= POOL_FROM and self.pool.in_use.acquire(blocking=False):
            try:
                if self._workers_ready():
                    yield from self._on_workers(signer, every)
                    return
            finally:
                self.pool.in_use.release()
        for first, block in every:
            yield from self._finish(signer, block, first, self._made_here(signer, block, first))

    # ------------------------------------------------------------ made here or by the workers

    def _made_here(self, signer: _Signer, block: list[Any], first: int) -> list[Outcome]:
        maker = Maker(self.generation, signer.material, signer.algorithm)
        with self.store.storage.steady_reads():  # the issuer and settings are read once for the block, not per voucher
            return [maker.make(first + offset, raw) for offset, raw in enumerate(block)]

    def _workers_ready(self) -> bool:
        """The workers running (started now at the first batch); False, and the batch made here, when they cannot
        start (the engine is closing, the system refuses a process)."""
        try:
            self.pool.start()
        except (WorkerLost, OSError, RuntimeError):
            log.warning("batch: the signing workers could not start; the batch is made in this process",
                        exc_info=True)
            return False
        return True

    def _on_workers(self, signer: _Signer, blocks: Iterator[tuple[int, list[Any]]]) -> Iterator[BatchItem]:
        """Each block made by the workers while this process stores the one before it."""
        pool = self.pool
        pool.configure(signer.algorithm, self.generation.settings.get("sunat_rules_dir"))
        pool.forget_issuers()  # each batch checks its certificates again (a default changed, one expired)
        ahead: deque[tuple[int, list[Any]]] = deque([next(blocks)])  # in the workers' hands, oldest first
        self._learn_issuer(signer, _issuer_ruc(_payload(ahead[0][1][0])))
        lost = self._hand_out(*ahead[0])
        lost = self._top_up(ahead, blocks) or lost
        try:
            while ahead:
                first, block = ahead[0]
                made = self._gather(signer, ahead, lost)
                ahead.popleft()
                lost = self._top_up(ahead, blocks)  # the workers get the next block before this one is stored
                yield from self._finish(signer, block, first, made, pool.pump)
                pool.set_dictionaries(self.store.kept_dictionaries())  # new scopes: packed by the workers from now on
            log.info("batch of %d requests made by %d signing processes: %s", first + len(block), len(pool.workers),
                     pool.describe())
        finally:
            self._drain()

    def _top_up(self, ahead: deque[tuple[int, list[Any]]], blocks: Iterator[tuple[int, list[Any]]]) -> bool:
        """Hand the workers the blocks that follow until they hold AHEAD; True when one was found gone."""
        lost = False
        while len(ahead) < AHEAD and (following := next(blocks, None)) is not None:
            ahead.append(following)
            lost = self._hand_out(*following) or lost
        return lost

    def _shares(self, count: int, first: int) -> list[tuple[int, int]]:
        """A block of `count` requests from `first` split between the workers: (first index, size) each, in order."""
        workers = len(self.pool.workers)
        share = -(-count // workers) if workers else 0
        return [(first + number * share, max(0, min(share, count - number * share))) for number in range(workers)]

    def _hand_out(self, first: int, block: list[Any]) -> bool:
        """Give each worker its part of `block`; True when it could not (a worker was found gone)."""
        if not self.pool.workers:  # closed meanwhile (the engine's close)
            return True
        try:
            for worker, (part_first, size) in zip(self.pool.workers, self._shares(len(block), first), strict=True):
                if size:
                    offset = part_first - first
                    self.pool.send(worker, Part.of(part_first, block[offset:offset + size]))
        except WorkerLost:
            log.warning("batch: a signing worker was gone when handed its part", exc_info=True)
            return True
        return False

    def _gather(self, signer: _Signer, ahead: deque[tuple[int, list[Any]]], lost: bool) -> list[Outcome]:
        """The oldest block's vouchers as the workers made them. A block whose worker was lost is made again whole
        by new workers, who are handed the blocks behind it too."""
        first, block = ahead[0]
        for attempt in range(ATTEMPTS):
            if attempt or lost:
                if not self._restarted():
                    break
                if any([self._hand_out(*handed) for handed in ahead]):  # a list: every block handed, even after a loss
                    continue
            try:
                made = self._collect(first, block)
                if len(made) != len(block):
                    raise WorkerLost(f"{len(made)} of {len(block)} vouchers came back")
            except WorkerLost:
                log.warning("batch: a signing worker was lost mid-block (vouchers %d-%d): nothing of the block was "
                            "stored; it is made again", first + 1, first + len(block), exc_info=True)
                continue
            for outcome in made:
                if isinstance(outcome, Fallback) and outcome.unknown_ruc:
                    self._learn_issuer(signer, outcome.unknown_ruc)  # for the blocks that follow
            return made
        log.error("batch: the signing workers failed on vouchers %d-%d: made in this process", first + 1,
                  first + len(block))
        if self._restarted():  # for the blocks that follow
            for handed in list(ahead)[1:]:
                self._hand_out(*handed)
        return self._made_here(signer, block, first)

    def _collect(self, first: int, block: list[Any]) -> list[Outcome]:
        """The block's parts, each taken as soon as its worker sent it whole, in order of the requests."""
        parts = [(worker, part_first, size) for worker, (part_first, size)
                 in zip(self.pool.workers, self._shares(len(block), first), strict=True) if size]
        for worker, part_first, size in parts:
            if not worker.holds(part_first):
                raise WorkerLost(f"vouchers {part_first + 1}-{part_first + size} are in no worker's hands")
        holding = {worker: part_first for worker, part_first, _size in parts}  # each worker, its part's first index
        made: dict[int, list[Outcome]] = {}
        while holding:
            worker = self.pool.first_finished(list(holding))
            made[holding.pop(worker)] = self.pool.receive(worker)
        return [outcome for part_first in sorted(made) for outcome in made[part_first]]

    def _restarted(self) -> bool:
        try:
            self.pool.restart()
        except (WorkerLost, OSError, RuntimeError):
            log.warning("batch: the signing workers could not start again", exc_info=True)
            return False
        return True

    def _drain(self) -> None:
        """A batch stopped early (cancelled, interrupted, a block that could not be stored): a worker still making
        its part is let go (its pipe may be half read); the next batch starts another."""
        for worker in self.pool.workers:
            if worker.busy:
                self.pool.discard(worker)

    def _learn_issuer(self, signer: _Signer, ruc: str | None) -> None:
        """Tell the workers of an issuer and its certificate, when both can sign now (else its vouchers are left to
        operations 1 and 2, which say why); each RUC is looked at once per batch."""
        if ruc is None or ruc in signer.looked_at:
            return
        signer.looked_at.add(ruc)
        company = self.generation.company_of(ruc)
        material = signer.material(ruc)
        if company is None or material is None:
            return
        certificado_id, key, certificate, por_vencer = material
        self.pool.add_issuer(ruc, Issuer(company, certificado_id, por_vencer), key, certificate)

    # ------------------------------------------------------------ the writer

    def _finish(self, signer: _Signer, block: list[Any], first: int, outcomes: list[Outcome],
                pump: Callable[[], None] = lambda: None) -> Iterator[BatchItem]:
        """Store the block's vouchers and hand out its items, in order. `pump`: the workers' pieces taken now and
        then meanwhile (they make the next block)."""
        made = [outcome for outcome in outcomes if isinstance(outcome, Made)]
        stored = self._store(made, pump)
        results: list[BatchItem | None] = [None] * len(block)
        for item in made:
            signed = stored.get(item.index)
            if signed is not None:
                results[item.index - first] = _success(item, signed)
        for offset, result in enumerate(results):
            if result is None:  # a refusal, a number issued before, an issuer the workers did not know
                results[offset] = self.issue_one(block[offset], signer.certificado_id, first + offset)
        for number, result in enumerate(results, 1):
            if result is not None:
                yield result
            if number % PUMP_EVERY == 0:
                pump()  # the caller may take its time with each item (a line printed, a PDF written)

    def _store(self, made: list[Made], pump: Callable[[], None] = lambda: None) -> dict[int, CanonicalSignature]:
        """One transaction for the block; the signatures of the indexes stored. A number already taken is left to
        operation 1."""
        stored: dict[int, CanonicalSignature] = {}
        if not made:
            return stored
        self.store.keep_dictionaries(_dictionary_samples(made))  # before the block: written once, not per text
        ids, docs = [], []
        # One sync for the block's numbers; the environment and settings each insert reads, looked up once for it
        storage = self.store.storage
        with storage.steady_reads(), storage.transaction(durable=True):
            block = self.store.block_stamp()
            for number, item in enumerate(made, 1):
                if number % PUMP_EVERY == 0:
                    pump()
                signed = item.signed(self._unpacked)
                try:
                    voucher_id = self.store.add(item.doc, name=item.name, xml_hash=item.xml_hash,
                                                xml_sha256=item.xml_sha256, content_key=item.content_key,
                                                request_json=item.request, xml=item.xml, signed=signed,
                                                certificado_id=item.certificado_id,
                                                packed_signature=item.packed_signature, block=block)
                except NumberTaken:  # issued before, or by another writer meanwhile
                    continue
                stored[item.index] = signed
                ids.append(voucher_id)
                docs.append(item.doc)
        if ids:
            self.on_stored(ids)
            self.generation.issued(docs)
        return stored

    def _unpacked(self, packed: bytes) -> bytes:
        text = self.store.unpack_bytes(packed)
        assert text is not None  # packed bytes unpack to bytes
        return text

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


def _success(item: Made, signed: CanonicalSignature) -> BatchItem:
    return BatchItem(item.index, SignedVoucher(item.name, item.xml_hash, signed.xml, signed.digest_value,
                                               signed.signature_value, list(item.observaciones), item.por_vencer))


def _dictionary_samples(made: list[Made]) -> Iterator[tuple[str, bytes]]:
    """(scope, a text of it) for each packing scope of the block that came unpacked, once (the store's
    dictionaries: the workers are sent them for the blocks that follow)."""
    seen: set[tuple[str, str, str]] = set()
    for item in made:
        kind = (item.doc.emisor_ruc, item.doc.tipo, item.certificado_id)
        if kind in seen:
            continue
        seen.add(kind)
        request_scope, xml_scope, signature_scope = VoucherStore.scopes_of(item.doc, item.certificado_id)
        if isinstance(item.request, str):
            yield request_scope, item.request.encode("utf-8")
        if isinstance(item.xml, str):
            yield xml_scope, item.xml.encode("utf-8")
        if signature_scope is not None and item.packed_signature is None:
            yield signature_scope, item.signature.encode("utf-8")


def _payload(raw: Any) -> Any:
    try:
        return parse_json(raw) if isinstance(raw, str | bytes) else _as_payload(raw)
    except YupanaError:
        return None


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
        self._by_ruc: dict[str, Material | None] = {}
        self.looked_at: set[str] = set()  # issuers the workers were told of (or that cannot sign)

    def material(self, ruc: str) -> Material | None:
        """(certificado_id, key, certificate, por_vencer) that may sign `ruc`'s vouchers now; None when none can
        (operation 2 then says why, voucher by voucher)."""
        if ruc not in self._by_ruc:
            try:
                chosen = self.signing.chosen_certificate(self.certificado_id, ruc)
                info, key, certificate = self.signing.certificate_for(chosen, ruc)
            except YupanaError:
                self._by_ruc[ruc] = None
            else:
                self._by_ruc[ruc] = (info.certificado_id, key, certificate, info.por_vencer())
        return self._by_ruc[ruc]
