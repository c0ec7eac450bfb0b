"""The batch's signing processes (issue 33): generating and signing on every core.

RSA and the builder hold the interpreter: a thread beside the signer cut RSA from 4,009/s to 338/s, so the second
core needs a second process. `SigningPool` keeps one worker process per core, started at the first batch that is
large enough and reused by every later one until the engine closes. A worker gets raw requests (JSON texts or
objects) and gives back each voucher generated and signed in memory (`Made`), or `Fallback` for one it must leave to
the engine (a refusal, an issuer or certificate it was not given, a customer whose name must be looked up): the
engine then answers it through operations 1 and 2, exactly as alone. Workers never touch the database: the engine's
writer stores each block in one transaction, where its numbers are taken (app.core.invoicing.batches).

What a worker knows comes through its pipe, never through its arguments, the environment or a file: the issuers'
profiles, the stored dictionaries it packs the texts against, and each certificate's private key once (DER, sent
to that worker the first time one of its vouchers needs it). Workers are spawned (never forked: the parent has threads and maybe Qt) and import only the invoicing
core, never Qt; a frozen Windows app dispatches them in its entry point (multiprocessing.freeze_support). They
ignore Ctrl-C: the engine cancels a batch, and a worker ends when its pipe closes.

`Maker` is the per-voucher work itself, the same in a worker and in the engine's own process (a small batch, or a
block whose worker died twice).
"""

from __future__ import annotations

import logging
import multiprocessing
import operator
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import date
from decimal import Decimal
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import TYPE_CHECKING, Any, cast

from app.core.contract import GenerarXmlRequest, parse_json, parse_model
from app.core.errors import YupanaError, invalid
from app.core.invoicing import packed_texts, ubl, xmldsig
from app.core.invoicing.generation import Generation
from app.core.invoicing.voucher_keys import bytes_hashes, content_key_of, request_json, splice_signature
from app.core.invoicing.voucher_store import VoucherStore
from app.core.platform.crypto import padding, rsa, serialization, x509

if TYPE_CHECKING:
    from app.core.invoicing.xmldsig import CanonicalSignature
    from app.core.platform.companies import Company

log = logging.getLogger(__name__)

SEND_EVERY = 25  # vouchers per message back: a worker's part of a block arrives in pieces, as it is made
STOP_WAIT_S = 5.0


class WorkerLost(Exception):
    """A worker ended (killed, crashed) or failed before it gave back its whole part of a block."""


# ---------------------------------------------------------------- what travels between the processes

@dataclass(frozen=True, slots=True)
class Issuer:
    """What a worker needs to make an issuer's vouchers: its profile and the certificate that signs them (checked
    by the engine as operation 2 checks it: the issuer's own, valid now)."""

    company: Company
    certificado_id: str
    por_vencer: bool


@dataclass(slots=True)
class Setup:
    """A worker's knowledge, sent whole when it changes (small: a few issuers); `keys` holds only the certificates
    that worker was not sent before: certificado_id → (private key as DER, certificate as PEM)."""

    issuers: dict[str, Issuer]
    algorithm: str
    rules_dir: str | None
    keys: dict[str, tuple[bytes, bytes]] = field(default_factory=dict, repr=False)  # never in a log
    dictionaries: dict[str, packed_texts.Dictionary] = field(default_factory=dict)  # scope → stored dictionary


@dataclass(slots=True)
class IssuedDoc:
    """What the store and the customer catalogue read of a built document (documents.kind.Built), without the rest
    of it: a worker sends this back instead of the whole document."""

    tipo: str
    serie: str
    numero: int
    emisor_ruc: str
    receptor: ubl.Party
    moneda: str
    total: Decimal
    fecha: date


@dataclass(slots=True)
class Made:
    """A voucher generated and signed in memory, waiting for its block's transaction."""

    index: int
    doc: IssuedDoc
    name: str
    xml_hash: str
    xml_sha256: str
    content_key: str
    # The texts to store: as text, or packed (bytes) by a worker against its scope's stored dictionary. A packed XML
    # is a few hundred bytes where the text is 14 kB: through the pipe, and for the writer, which packs the rest.
    request: str | bytes
    xml: str | bytes
    # The ds:Signature element (2.3 kB, two thirds of what a worker sends of a voucher): "" when it comes packed
    # (a few hundred bytes), unpacked by the writer; the less a worker sends, the less it waits on a full pipe.
    signature: str
    packed_signature: bytes | None
    offset: int  # where the Signature goes in the text
    signed_sha256: str
    digest_value: str
    signature_value: str
    certificado_id: str
    por_vencer: bool
    observaciones: list[str]

    def signed(self, unpack: Callable[[bytes], bytes]) -> CanonicalSignature:
        """The signature with its signed document, the texts unpacked when they came packed."""
        xml = self.xml if isinstance(self.xml, str) else unpack(self.xml).decode("utf-8")
        signature = self.signature
        if not signature and self.packed_signature is not None:
            signature = unpack(self.packed_signature).decode("utf-8")
        return xmldsig.CanonicalSignature(signature, self.offset, splice_signature(xml, self.offset, signature),
                                          self.digest_value, self.signature_value, self.signed_sha256)


@dataclass(frozen=True, slots=True)
class Fallback:
    """A voucher left to the engine (operations 1 and 2 one at a time); `unknown_ruc`: the issuer the worker had no
    profile or certificate for (the engine looks for them, for the blocks that follow)."""

    index: int
    unknown_ruc: str | None = None


Outcome = Made | Fallback


@dataclass(frozen=True, slots=True)
class Part:
    """A worker's part of a block: requests `first` onwards, already pickled as the message the worker receives.
    Made by `Part.of` before the worker is free: pickling a part of 125 requests takes 2-4 ms, which the worker
    would spend waiting (issue 33)."""

    first: int
    size: int
    message: bytes = field(repr=False)

    @classmethod
    def of(cls, first: int, raws: list[Any]) -> Part:
        return cls(first, len(raws), bytes(ForkingPickler.dumps(("make", first, raws))))


Material = tuple[str, "rsa.RSAPrivateKey", "x509.Certificate", bool]  # (certificado_id, key, certificate, por_vencer)


# Through the pipe an outcome travels as a plain tuple, its amount and date as text: pickling the dataclasses (a
# generic state per object, a reduce per Decimal and date) cost both processes about 25 µs per voucher, the tuples
# about 7 (issue 33). `outcome_of(wire(outcome)) == outcome`, held by tests/core/invoicing/test_batch_workers.py.
_MADE_FIELDS = tuple(f.name for f in fields(Made))
_made_values = operator.attrgetter(*_MADE_FIELDS)
_DOC_AT = _MADE_FIELDS.index("doc")
_PARTY_FIELDS = tuple(f.name for f in fields(ubl.Party))
_party_values = operator.attrgetter(*_PARTY_FIELDS)
Wire = tuple[Any, ...]


def wire(outcome: Outcome) -> Wire:
    """`outcome` as the tuple a worker sends: a Fallback's two values, or a Made's fields with its document flat."""
    if isinstance(outcome, Fallback):
        return outcome.index, outcome.unknown_ruc
    doc = outcome.doc
    values = list(_made_values(outcome))
    values[_DOC_AT] = (doc.tipo, doc.serie, doc.numero, doc.emisor_ruc, _party_values(doc.receptor), doc.moneda,
                       str(doc.total), doc.fecha.isoformat())
    return tuple(values)


def outcome_of(values: Wire) -> Outcome:
    """The outcome a worker sent as `wire(outcome)`."""
    if len(values) == 2:
        return Fallback(*values)
    tipo, serie, numero, emisor_ruc, receptor, moneda, total, fecha = values[_DOC_AT]
    doc = IssuedDoc(tipo, serie, numero, emisor_ruc, ubl.Party(*receptor), moneda, Decimal(total),
                    date.fromisoformat(fecha))
    return cast(Made, cast(Any, Made)(*values[:_DOC_AT], doc, *values[_DOC_AT + 1:]))


# ---------------------------------------------------------------- the per-voucher work

class Maker:
    """Generate and sign one request: parse, build, render, SUNAT's sheets when configured, hash, sign."""

    def __init__(self, generation: Generation, material_for: Callable[[str], Material | None], algorithm: str,
                 dictionaries: dict[str, packed_texts.Dictionary] | None = None) -> None:
        self.generation = generation
        self.material_for = material_for  # None: this issuer's vouchers are left to the engine
        self.algorithm = algorithm
        self.dictionaries = dictionaries or {}  # a worker packs the texts of these scopes (the writer, the others)
        self.unknown_ruc: str | None = None  # set by a worker's look-ups that found nothing

    def make(self, index: int, raw: Any) -> Outcome:
        self.unknown_ruc = None
        try:
            return self._make(index, raw)
        except Exception as exc:  # a refusal or anything odd: operations 1 and 2 answer it, as they would alone
            if not isinstance(exc, YupanaError):
                log.debug("batch: voucher %d is left to operations 1 and 2", index + 1, exc_info=True)
            return Fallback(index, self.unknown_ruc)

    def _make(self, index: int, raw: Any) -> Outcome:
        request = parse_model(GenerarXmlRequest, parse_json(raw) if isinstance(raw, str | bytes) else raw)
        canonical_request = request_json(request)
        doc = self.generation.build(request)
        xml, name = self.generation.render(doc)
        observaciones = self.generation.run_sunat_rules(xml, name)
        material = self.material_for(doc.emisor_ruc)
        if material is None:
            return Fallback(index, doc.emisor_ruc)
        certificado_id, key, certificate, por_vencer = material
        encoded = xml.encode("utf-8")
        xml_hash, xml_sha256 = bytes_hashes(encoded)
        pending = xmldsig.prepare_canonical(xml, algorithm=self.algorithm, encoded=encoded)
        signed = pending.complete(key.sign(pending.signed_info, padding.PKCS1v15(), pending.algorithm.hash()),
                                  certificate)
        issued = IssuedDoc(doc.tipo, doc.serie, doc.numero, doc.emisor_ruc, doc.receptor, doc.moneda, doc.total,
                           doc.fecha)
        request_scope, xml_scope, signature_scope = VoucherStore.scopes_of(doc, certificado_id)
        signature_dictionary = self.dictionaries.get(signature_scope or "")
        packed_signature = (signature_dictionary.pack_bytes(signed.signature.encode("utf-8"))
                            if signature_dictionary else None)
        return Made(index, issued, name, xml_hash, xml_sha256, content_key_of(canonical_request),
                    self._packed(request_scope, canonical_request), self._packed(xml_scope, xml, encoded),
                    "" if packed_signature is not None else signed.signature, packed_signature, signed.offset,
                    signed.sha256, signed.digest_value, signed.signature_value, certificado_id, por_vencer,
                    observaciones)

    def _packed(self, scope: str, text: str, encoded: bytes | None = None) -> str | bytes:
        dictionary = self.dictionaries.get(scope)
        if dictionary is None:
            return text
        return dictionary.pack_bytes(encoded if encoded is not None else text.encode("utf-8"))


# ---------------------------------------------------------------- inside a worker

class _Settings:
    """The two settings the builder's path reads, as the engine sent them."""

    def __init__(self, setup: Setup) -> None:
        self._values = {"sunat_rules_dir": setup.rules_dir, "signature_algorithm": setup.algorithm}

    def get(self, key: str) -> Any:
        return self._values[key]


class _WorkerState:
    def __init__(self) -> None:
        self.issuers: dict[str, Issuer] = {}
        self.material: dict[str, tuple[rsa.RSAPrivateKey, x509.Certificate]] = {}
        self.maker: Maker | None = None

    def update(self, setup: Setup) -> None:
        for certificado_id, (der_key, pem) in setup.keys.items():
            key = serialization.load_der_private_key(der_key, None)
            self.material[certificado_id] = (cast(rsa.RSAPrivateKey, key), x509.load_pem_x509_certificate(pem))
        self.issuers = dict(setup.issuers)
        # The builder's own path (Generation's parse, build, render and sheets) without a store: a worker only makes.
        generation = Generation(cast(Any, None), cast(Any, _Settings(setup)), self._company_of, _name_unknown)
        self.maker = Maker(generation, self._material_for, setup.algorithm, setup.dictionaries)

    def _company_of(self, ruc: str) -> Company | None:
        issuer = self.issuers.get(ruc)
        if issuer is None and self.maker is not None:
            self.maker.unknown_ruc = ruc
        return issuer.company if issuer else None

    def _material_for(self, ruc: str) -> Material | None:
        issuer = self.issuers.get(ruc)
        material = self.material.get(issuer.certificado_id) if issuer else None
        if issuer is None or material is None:
            return None
        return issuer.certificado_id, material[0], material[1], issuer.por_vencer


def _name_unknown(ruc: str) -> str | None:
    """A customer's name must be looked up (the register, the providers): the engine does it, one voucher at a
    time; the builder reads this refusal as «unknown», and the voucher comes back as a Fallback."""
    raise invalid("receptor.razon_social", "Nombre por consultar en el proceso principal.")


def serve(conn: Connection) -> None:
    """A worker's life: answer the engine's messages, in order, until the pipe closes or it says stop.

    The engine gives a worker its next part while it makes the current one, so that it never waits for the engine
    between two parts. A thread of the worker reads every message as it comes (`_read`): the engine's send of a
    part larger than a pipe holds ends even while this worker is blocked sending a piece the engine has not read
    yet (each would otherwise wait for the other to read; test_batch_workers.py). The thread sleeps in the pipe's
    read and holds the interpreter only to unpickle a message, once per part."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the engine's to handle (it cancels the batch)
    state = _WorkerState()
    inbox: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
    threading.Thread(target=_read, args=(conn, inbox), name="yupana-firma-lectura", daemon=True).start()
    try:
        while (message := inbox.get()) is not None and _answer(conn, state, message):
            pass
    except (EOFError, OSError):  # the engine closed the pipe (it ended, or let this worker go mid-part)
        return


def _read(conn: Connection, inbox: queue.SimpleQueue[tuple[Any, ...] | None]) -> None:
    """Put each of the engine's messages in `inbox` as it arrives; None once the pipe is closed or after stop."""
    try:
        while True:
            message = conn.recv()
            inbox.put(message)
            if message[0] == "stop":
                return
    except (EOFError, OSError):
        inbox.put(None)


def _answer(conn: Connection, state: _WorkerState, message: tuple[Any, ...]) -> bool:
    """Answer one message; False to stop."""
    kind = message[0]
    if kind == "setup":
        state.update(message[1])
    elif kind == "make":
        _make_part(conn, state, message[1], message[2])
    elif kind == "about":
        conn.send(("about", {"pid": os.getpid(), "peak_rss_bytes": peak_rss_bytes(), "cpu_s": time.process_time(),
                             "qt_loaded": any(name.startswith("PySide6") for name in sys.modules),
                             "qt_modules": qt_modules()}))
    return kind != "stop"


def _make_part(conn: Connection, state: _WorkerState, first: int, raws: list[Any]) -> None:
    """Make a part, sending it back a few vouchers at a time (a pipe holds 64 KiB, about three vouchers: the engine
    reads them as they come, `SigningPool.pump`, so that this process seldom waits on a full pipe)."""
    if state.maker is None:
        conn.send(("failed", "the worker was not set up"))
        return
    made: list[Outcome] = []
    for offset, raw in enumerate(raws):
        try:
            made.append(state.maker.make(first + offset, raw))
        except Exception as exc:  # a bug outside the voucher's own work: the engine makes this part again
            conn.send(("failed", repr(exc)))
            return
        if len(made) == SEND_EVERY:
            conn.send(("made", [wire(outcome) for outcome in made]))
            made = []
    conn.send(("done", [wire(outcome) for outcome in made]))


def qt_modules() -> list[str]:
    """The Qt modules this process imported, short names (["PySide6", "QtCore"]). A window needs QtGui: a frozen app's
    every process has QtCore, which PyInstaller's PySide6 runtime hook imports at start (it registers an embedded
    qt.conf) before the entry point dispatches a worker; a worker itself imports none."""
    return sorted(name.removeprefix("PySide6.") for name in sys.modules
                  if name == "PySide6" or (name.startswith("PySide6.Qt") and name.count(".") == 1))


def peak_rss_bytes() -> int | None:
    """This process's peak resident memory, from Linux's VmHWM (None elsewhere). Not getrusage: a spawned process's
    ru_maxrss starts at its parent's peak at the fork."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# ---------------------------------------------------------------- the pool, in the engine's process

class _Worker:
    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.keys_sent: set[str] = set()
        self.setup_version = -1
        self.parts: deque[Part] = deque()  # given and not taken back yet, oldest first: the one it makes, the next
        self.pieces: list[list[Outcome]] = []  # what it sent so far of the oldest part not sent whole
        self.finished: deque[list[Outcome]] = deque()  # the oldest parts, sent whole, not taken back yet
        self.lost: str | None = None  # why its parts will never come whole
        self.signed = 0  # vouchers it generated and signed since it started (the batch's log line, the Wine smoke)

    @property
    def busy(self) -> bool:
        """Given a part the engine has not taken back yet."""
        return bool(self.parts)

    def holds(self, first: int) -> bool:
        """Its oldest part not taken back is the one that starts at request `first`."""
        return bool(self.parts) and self.parts[0].first == first

    def expecting(self) -> bool:
        """It still has to send (part of) a part it was given."""
        return self.lost is None and len(self.finished) < len(self.parts)

    def alive(self) -> bool:
        return bool(self.process.is_alive())


class SigningPool:
    """One worker process per core, started at the first batch and kept until `close` (the engine's)."""

    def __init__(self, processes: int | None = None) -> None:
        self.size = max(1, processes or os.cpu_count() or 1)
        self._workers: list[_Worker] = []
        self._issuers: dict[str, Issuer] = {}
        self._keys: dict[str, tuple[bytes, bytes]] = {}
        self._algorithm = "rsa-sha1"
        self._rules_dir: str | None = None
        self._dictionaries: dict[str, packed_texts.Dictionary] = {}
        self._version = 0
        self.in_use = threading.Lock()  # one batch at a time uses the workers; another is made in its own process
        self._closed = False

    @property
    def workers(self) -> list[_Worker]:
        return self._workers

    def start(self) -> None:
        """Start the workers that are not running (the first batch; after one died or was let go)."""
        if self._closed:
            raise WorkerLost("the signing workers were closed with the engine")
        context = multiprocessing.get_context("spawn")  # never fork: the engine has threads (and maybe Qt)
        for number, worker in enumerate(self._workers):
            if not worker.alive() or worker.conn.closed:
                self.discard(worker)
                self._workers[number] = self._spawn(context, number)
        while len(self._workers) < self.size:
            self._workers.append(self._spawn(context, len(self._workers)))

    @staticmethod
    def _spawn(context: Any, number: int) -> _Worker:
        ours, theirs = context.Pipe(duplex=True)
        process = context.Process(target=serve, args=(theirs,), name=f"yupana-firma-{number + 1}", daemon=True)
        process.start()
        theirs.close()  # only the worker holds its end: its death is an end of file here
        return _Worker(process, ours)

    # ------------------------------------------------------------ what the workers know

    def configure(self, algorithm: str, rules_dir: str | None) -> None:
        if (algorithm, rules_dir) != (self._algorithm, self._rules_dir):
            self._algorithm, self._rules_dir = algorithm, rules_dir
            self._version += 1

    def knows(self, ruc: str) -> bool:
        return ruc in self._issuers

    def set_dictionaries(self, dictionaries: dict[str, packed_texts.Dictionary]) -> None:
        """The stored dictionaries (committed: a text packed against one can always be read) the workers pack with."""
        if dictionaries != self._dictionaries:
            self._dictionaries = dict(dictionaries)
            self._version += 1

    def add_issuer(self, ruc: str, issuer: Issuer, key: rsa.RSAPrivateKey, certificate: x509.Certificate) -> None:
        if issuer.certificado_id not in self._keys:
            der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
            self._keys[issuer.certificado_id] = (der, certificate.public_bytes(serialization.Encoding.PEM))
        if self._issuers.get(ruc) != issuer:
            self._issuers[ruc] = issuer
            self._version += 1

    def forget_issuers(self) -> None:
        """A new batch checks its issuers again (a default certificate may have changed, another may expire)."""
        if self._issuers:
            self._issuers = {}
            self._version += 1

    def _send_setup(self, worker: _Worker) -> None:
        if worker.setup_version == self._version:
            return
        needed = {issuer.certificado_id for issuer in self._issuers.values()} - worker.keys_sent
        keys = {certificado_id: self._keys[certificado_id] for certificado_id in needed}
        worker.conn.send(("setup", Setup(dict(self._issuers), self._algorithm, self._rules_dir, keys,
                                         self._dictionaries)))
        worker.keys_sent |= needed
        worker.setup_version = self._version

    # ------------------------------------------------------------ parts of a block

    def send(self, worker: _Worker, part: Part) -> None:
        """Give `worker` a part of a block, after those it has (it makes them in order); WorkerLost if it is gone."""
        if worker.lost is not None:
            raise WorkerLost(worker.lost)
        try:
            self._send_setup(worker)
            worker.conn.send_bytes(part.message)
        except (OSError, ValueError) as exc:  # a closed or broken pipe
            raise WorkerLost(f"{worker.process.name}: {exc!r}") from exc
        worker.parts.append(part)

    def pump(self) -> None:
        """Take what the workers have sent so far, without waiting: the writer calls it between its inserts, so that
        a worker never waits long on a full pipe while the block before is stored."""
        for worker in self._workers:
            while worker.expecting() and worker.conn.poll():
                self._take(worker)

    def first_finished(self, candidates: list[_Worker]) -> _Worker:
        """The first of `candidates` (busy workers) to have sent its oldest part whole or to be lost, waiting for it:
        each part is taken back as soon as it is whole, whichever worker finishes first."""
        while True:
            for worker in candidates:
                while worker.expecting() and not worker.finished and worker.conn.poll():
                    self._take(worker)
                if worker.finished or worker.lost is not None:
                    return worker
            # A message, or a process's end
            wait([handle for worker in candidates for handle in (worker.conn, worker.process.sentinel)])

    def receive(self, worker: _Worker) -> list[Outcome]:
        """`worker`'s oldest part, once it has sent it whole; WorkerLost when it ended or failed first."""
        self.first_finished([worker])
        if not worker.finished:
            raise WorkerLost(worker.lost)
        worker.parts.popleft()
        return worker.finished.popleft()

    @staticmethod
    def _take(worker: _Worker) -> None:
        """One message of `worker`'s oldest part not sent whole."""
        try:
            kind, payload = worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(STOP_WAIT_S)  # its exit code, for the log
            worker.lost = f"{worker.process.name} ended (exit code {worker.process.exitcode})"
            return
        if kind == "failed":
            worker.lost = f"{worker.process.name}: {payload}"
            return
        piece = [outcome_of(values) for values in payload]
        worker.pieces.append(piece)
        worker.signed += sum(isinstance(outcome, Made) for outcome in piece)
        if kind == "done":
            pieces, worker.pieces = worker.pieces, []
            worker.finished.append([outcome for piece in pieces for outcome in piece])

    def about(self) -> list[dict[str, Any]]:
        """Each running worker's pid, peak memory, processor time so far, whether Qt got into it and how many
        vouchers it signed since it started (benchmarks, tests, the batch's log line)."""
        found = []
        for worker in self._workers:
            worker.conn.send(("about", None))
            found.append({**worker.conn.recv()[1], "signed": worker.signed})
        return found

    def describe(self) -> str:
        """The workers in one line for the log: each one's pid, the vouchers it signed, the Qt modules in it (a
        worker without QtGui never opens a window: the frozen app's freeze_support at work)."""
        try:
            found = self.about()
        except (OSError, ValueError, EOFError) as exc:  # one ended meanwhile: the pids the engine knows
            return f"{len(self._workers)} processes (not asked: {exc!r})"
        return ", ".join(f"pid {about['pid']} signed {about['signed']} (Qt: {', '.join(about['qt_modules']) or 'none'})"
                         for about in found)

    # ------------------------------------------------------------ the end

    def discard(self, worker: _Worker) -> None:
        """Let `worker` go: its pipe closed (it ends at its next message), killed if it has not in a few seconds."""
        worker.parts.clear()
        worker.finished.clear()
        try:
            worker.conn.close()
        except OSError:
            pass
        worker.process.join(STOP_WAIT_S)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(STOP_WAIT_S)

    def restart(self) -> None:
        """After a worker was lost mid-block: every worker ends (their pipes may hold a half-sent part) and new ones
        start; they are told everything again."""
        for worker in self._workers:
            self.discard(worker)
        self._workers = []
        self.start()

    def close(self) -> None:
        self._closed = True
        for worker in self._workers:
            try:
                worker.conn.send(("stop", None))
            except (OSError, ValueError):
                pass
        for worker in self._workers:
            self.discard(worker)
        self._workers = []
