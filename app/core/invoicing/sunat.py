"""Operation 3: submission of a signed voucher to SUNAT (SOAP sendBill), answered with its CDR.

The answer is final and stored before the caller hears it: accepted (`"0"`), accepted with
observations, or rejected, each with the CDR. A SOAP fault is an error envelope with SUNAT's code
and the catalogue's text. When SUNAT cannot be reached the submission stays in the outbox
(app/core/invoicing/outbox.py) and the caller gets a 503 saying so; calling again with the same voucher
returns the final answer once there is one. docs/sunat.md explains the choices.
"""

from __future__ import annotations

import logging
from typing import Any

from lxml import etree

from app.core.contract import ENVIAR_PATH, GUIAS_ENVIAR_PATH, EnviarRequest, EnviarResult
from app.core.errors import ErrorCode, ErrorDetail, YupanaError, conflict, invalid, not_configured
from app.core.invoicing import sunat_errors
from app.core.invoicing.cdr import Cdr, safe_parser
from app.core.invoicing.documents import registry
from app.core.invoicing.documents.kind import Channel
from app.core.invoicing.outbox import Attempt, Outbox, stored_digest
from app.core.invoicing.soap import HttpPool, SunatClient
from app.core.invoicing.ubl_identity import DocumentId, IdentityNotPlain, check_plain_identity, identify
from app.core.invoicing.voucher_store import VoucherStore
from app.core.invoicing.xmldsig import verify_xml
from app.core.platform import environments, xml_limits
from app.core.platform.addresses import Addresses
from app.core.platform.identifiers import check_ruc
from app.core.platform.secrets import SecretStore
from app.core.platform.settings import Settings

log = logging.getLogger(__name__)

# SUNAT's public test credentials for beta (the user is RUC + MODDATOS).
BETA_USUARIO, BETA_CLAVE = "MODDATOS", "moddatos"


# ---------------------------------------------------------------- SOL credentials

def _secret_names(ruc: str) -> tuple[str, str]:
    return f"sol.{ruc}.usuario", f"sol.{ruc}.clave"


class SunatClients:
    """SOL credentials and SUNAT clients: a client for one submission of an environment, at that environment's
    addresses only, its HTTP connections from one pool (one client per endpoint). The outbox's client factory."""

    def __init__(self, addresses: Addresses, secrets: SecretStore, http: HttpPool) -> None:
        self.addresses = addresses
        self.settings = addresses.settings
        self.secrets = secrets
        self.http = http
        self.gre: Any = None  # the guías' channels (gre_clients.GreClients), set by the engine

    def set_sol_credentials(self, ruc: str, usuario: str, clave: str) -> None:
        """Keep a company's usuario and clave SOL in the secret store (encrypted; never a setting)."""
        check_ruc(ruc)
        usuario, clave = usuario.strip().upper(), clave
        if not usuario:
            raise invalid("usuario", "El campo «usuario» (usuario SOL) es obligatorio.")
        if not clave:
            raise invalid("clave", "El campo «clave» (clave SOL) es obligatorio.")
        user_name, password_name = _secret_names(ruc)
        self.secrets.put(user_name, usuario.encode("utf-8"))
        self.secrets.put(password_name, clave.encode("utf-8"))

    def sol_credentials(self, ruc: str, ambiente: str = "beta") -> tuple[str, str]:
        """(usuario, clave) of a company; beta falls back to SUNAT's public test credentials."""
        user_name, password_name = _secret_names(ruc)
        usuario, clave = self.secrets.get(user_name), self.secrets.get(password_name)
        if usuario is not None and clave is not None:
            return usuario.decode("utf-8"), clave.decode("utf-8")
        if ambiente == "beta":
            return BETA_USUARIO, BETA_CLAVE
        raise not_configured(f"La empresa {ruc} no tiene usuario y clave SOL guardados: regístrelos antes de enviar "
                             "a SUNAT producción.")

    def __call__(self, environment: str, ruc: str) -> SunatClient:
        """A client for one submission of `environment`, at that environment's addresses only; its HTTP connections
        come from the shared pool (one client per endpoint)."""
        ambiente = environments.ambiente_of(environment)
        url = self.addresses.endpoint(f"sunat_url_{ambiente}", environment)
        if not url and environment == environments.SANDBOX:
            raise environments.sandbox_not_running("el SUNAT de prueba")
        usuario, clave = self.sol_credentials(ruc, ambiente)
        return SunatClient(url, f"{ruc}{usuario}", clave, timeout=float(self.settings.get("sunat_timeout_s")),
                           consult_url=self.addresses.endpoint("sunat_url_consulta", environment),
                           http=self.http)


# ---------------------------------------------------------------- the voucher

def _read_voucher(xml: bytes) -> tuple[etree._Element, DocumentId]:
    """Parse within the size limits and read the identity, which must be plain text (what the signature covers)."""
    try:
        xml_limits.check_bytes(xml)
        root = etree.fromstring(xml, safe_parser())
        xml_limits.check_tree(root)
    except etree.XMLSyntaxError as exc:
        raise invalid("xml_firmado", f"El campo «xml_firmado» no es XML válido: {exc.msg}.", "0306") from None
    except xml_limits.LimitExceeded as exc:
        raise invalid("xml_firmado", f"El campo «xml_firmado» no se procesa: {exc}.") from None
    try:
        check_plain_identity(root)
    except IdentityNotPlain as exc:
        raise invalid("xml_firmado", f"El campo «xml_firmado» no es válido: «{exc.label}» debe ser texto simple, "
                                     "sin comentarios, instrucciones de procesamiento ni elementos dentro (la firma "
                                     "no los cubre, y cambiarían qué comprobante es).") from None
    doc = identify(root)
    if doc is None:
        raise invalid("xml_firmado", "El campo «xml_firmado» no es un comprobante UBL con RUC del emisor, tipo, "
                                     "serie y número.", "0301")
    return root, doc


def _refuse_other_environments(origin: str | None, doc: DocumentId, environment: str) -> None:
    """A voucher Yupana generated in another environment is not sent here: its number belongs to that one."""
    if origin is not None and origin != environment:
        raise conflict("xml_firmado", f"El comprobante {doc.serie}-{doc.numero} se generó en el entorno "
                                      f"«{environments.get(origin).label}» y Yupana trabaja ahora en "
                                      f"«{environments.get(environment).label}»: no se envía a otro entorno. Vuelva "
                                      f"al entorno {origin} para enviarlo, o genere uno nuevo en este.")


def _check_signature(xml: bytes) -> str:
    """A voucher Yupana did not generate is accepted only when its signature verifies; returns its digest."""
    result = verify_xml(xml)
    if not result.valid or not result.digest_value:
        raise invalid("xml_firmado", f"La firma del campo «xml_firmado» no es válida ({result.reason}): SUNAT lo "
                                     "rechazaría con el código 2335.", "2335")
    return result.digest_value


def _check_route(doc: DocumentId, guias: bool) -> None:
    """A guía goes to SUNAT's GRE platform by its own route, a voucher by operation 3: the wrong one says which."""
    if registry.is_guia(doc.tipo) == guias:
        return
    if guias:
        raise invalid("xml_firmado", f"El campo «xml_firmado» es el comprobante {doc.serie}-{doc.numero} (tipo "
                                     f"{doc.tipo}), no una guía de remisión: envíelo por POST {ENVIAR_PATH}.")
    raise invalid("xml_firmado", f"El campo «xml_firmado» es la guía de remisión {doc.serie}-{doc.numero} (tipo "
                                 f"{doc.tipo}): las guías se envían a SUNAT por su propia ruta, POST "
                                 f"{GUIAS_ENVIAR_PATH}, no por {ENVIAR_PATH}.")


def _other_content(doc: DocumentId) -> YupanaError:
    return conflict("xml_firmado", f"El comprobante {doc.serie}-{doc.numero} (RUC {doc.ruc}, tipo {doc.tipo}) ya fue "
                                   "enviado a SUNAT con otro contenido: el «xml_firmado» recibido no es el documento "
                                   "firmado de ese envío (su resumen no coincide). Un comprobante distinto necesita "
                                   "otro número.")


# ---------------------------------------------------------------- operation 3

class Submission:
    """Operation 3 over the voucher store and the durable outbox."""

    def __init__(self, store: VoucherStore, outbox: Outbox, clients: SunatClients, settings: Settings) -> None:
        self.store = store
        self.outbox = outbox
        self.clients = clients
        self.settings = settings

    def submit(self, request: EnviarRequest, *, guias: bool = False) -> EnviarResult:
        """Operation 3 (`guias` False) or the guías' own route (True): each refuses the other's documents."""
        xml = request.xml_firmado.encode("utf-8")
        environment = self.clients.addresses.current()
        environments.check_ambiente(environment, request.ambiente)  # sent where the app works, never elsewhere
        _, doc = _read_voucher(xml)
        _check_route(doc, guias)
        channel = self.channel(environment, doc)  # no credentials, or no sandbox running: say so now, queue nothing
        known = self.store.find_by_signed_xml(request.xml_firmado)
        if known is None:
            _refuse_other_environments(self.store.environment_of_signed(request.xml_firmado), doc, environment)
        digest = known["digest_value"] if known else _check_signature(xml)
        return self._send(doc, xml, environment, known["id"] if known else None, digest, channel)

    def submit_signed(self, row: dict, xml_firmado: str | None, digest: str) -> EnviarResult:
        """Send a stored voucher whose signed text the caller holds (it just read or signed it: «Emitir»), from its
        row as read: nothing is read again. It goes to the current environment, which must be its own."""
        doc = DocumentId(row["emisor_ruc"], row["tipo"], row["serie"], str(row["numero"]))
        if not xml_firmado:
            raise invalid("xml_firmado", f"El comprobante {doc.serie}-{doc.numero} aún no está firmado.")
        environment = self.clients.addresses.current()
        _refuse_other_environments(row["environment"], doc, environment)
        channel = self.channel(environment, doc)  # no credentials, or no sandbox running: say so now, queue nothing
        return self._send(doc, xml_firmado.encode("utf-8"), environment, row["id"], digest, channel, own=True)

    def channel(self, environment: str, doc: DocumentId) -> Channel:
        """The channel of the voucher's document type for this submission (SUNAT's: one client, used to the end)."""
        return registry.sender_for(doc.tipo).channel(self.clients, environment, doc.ruc)

    def _send(self, doc: DocumentId, xml: bytes, environment: str, voucher_id: int | None,
              digest: str, channel: Channel, own: bool = False) -> EnviarResult:
        """Queue the submission (once per serie-número) and attempt it now, through `channel`, unless it waits out
        its backoff. `own`: `xml` is the voucher's own stored signed text."""
        row = self.outbox.enqueue(doc, xml, environment, voucher_id, digest, own)
        if stored_digest(row) != digest:  # the same serie-número with other signed content: not this one's CDR
            raise _other_content(doc)
        stored = self.outbox.stored_cdr(row["id"])
        if stored is not None:
            log.info("submission %s already has its CDR: not sent again", doc.stem)
            return result_from(stored)
        if row["next_attempt_at"] > self.outbox.clock():  # waiting out its backoff: asking again does not hurry SUNAT
            self.outbox.wake()
            raise queued_error(doc)
        attempt = self.outbox.attempt(row["id"], channel, (voucher_id, xml) if own and voucher_id is not None else None)
        return self.answer_of(doc, row["id"], attempt)

    def answer_of(self, doc: DocumentId, submission_id: int, attempt: Attempt) -> EnviarResult:
        """What an attempt comes to for its caller: SUNAT's CDR; its fault, the queue or another attempt's flight
        raised."""
        if attempt.kind == "cdr" and attempt.cdr is not None:
            return result_from(attempt.cdr)
        if attempt.kind == "fault":
            raise fault_error(self.settings, attempt.fault_code, attempt.fault_text)
        if attempt.in_flight:  # single flight: another attempt (thread or process) has it; never a second send
            stored = self.outbox.stored_cdr(submission_id)
            if stored is not None:  # it finished meanwhile
                return result_from(stored)
            raise in_flight_error(doc)
        raise queued_error(doc)


def result_from(answer: Cdr) -> EnviarResult:
    return EnviarResult(codigo_respuesta=answer.codigo, descripcion=answer.descripcion, cdr=answer.zip_base64,
                        hash_cdr=answer.hash_cdr, estado=answer.estado, observaciones=answer.notas)


def fault_error(settings: Settings, code: str, sunat_text: str) -> YupanaError:
    """A SOAP fault (or an exception code in a CDR): SUNAT's code and the catalogue's Spanish text."""
    text = sunat_errors.describe(code, settings.get("sunat_rules_dir")) if code else sunat_text
    message = f"SUNAT no aceptó el envío del campo «xml_firmado» (código {code or 'sin código'}): {text}."
    detail = ErrorDetail("xml_firmado", f"{text}. Respuesta de SUNAT: {sunat_text}" if sunat_text else text,
                         sunat_code=code or None)
    return YupanaError(ErrorCode.UPSTREAM_REJECTED, message, [detail])


def in_flight_error(doc: DocumentId) -> YupanaError:
    message = (f"El comprobante {doc.stem} se está enviando a SUNAT en este momento (otra ventana, proceso o la "
               "cola de envíos): no se envía dos veces. Vuelva a enviar el mismo «xml_firmado» en unos segundos "
               "para obtener la respuesta final.")
    return YupanaError(ErrorCode.QUEUED, message, [ErrorDetail("xml_firmado", message)])


def queued_error(doc: DocumentId) -> YupanaError:
    message = (f"SUNAT no respondió al envío de {doc.stem}: quedó en cola y se reintentará automáticamente. "
               "Vuelva a enviar el mismo «xml_firmado» para obtener la respuesta final.")
    return YupanaError(ErrorCode.QUEUED, message, [ErrorDetail("xml_firmado", message)])
