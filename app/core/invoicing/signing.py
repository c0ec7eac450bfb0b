"""Operation 2 (POST /api/v1/facturacion/firmar): sign a voucher this folder generated, with a stored
certificate of its issuer, and keep the signature beside it (app.core.invoicing.xmldsig does the signing).

Foreign XML (not generated here) is refused: Yupana signs only what it validated, and the signature is stored
next to its voucher for sending and reprinting. Inside the app a voucher is signed by its id (`sign_voucher`);
the contract's operation finds it by the SHA-256 of its text (`sign_request`). A canonical text (every voucher
written by this version) is signed without parsing; any other is parsed and checked as any XML would be.
"""

from __future__ import annotations

from lxml import etree

from app.core.contract import FirmarRequest, FirmarResult
from app.core.errors import conflict, invalid, not_found
from app.core.invoicing.certificates import CertificateInfo, CertificateStore
from app.core.invoicing.documents import registry
from app.core.invoicing.ubl_identity import issuer_ruc
from app.core.invoicing.voucher_store import VoucherStore
from app.core.invoicing.xmldsig import (
    find_signatures,
    parse_xml,
    sign_canonical,
    sign_tree,
)
from app.core.platform.settings import Settings


def _check_voucher(root: etree._Element) -> None:
    if find_signatures(root):
        raise invalid("xml", "El campo «xml» ya está firmado: contiene una firma (ds:Signature). Envíe el XML sin "
                             "firmar que devolvió /api/v1/facturacion/xml.")
    name = etree.QName(root)
    if not registry.is_document_root(name.namespace, name.localname):
        raise invalid("xml", f"El campo «xml» no es un comprobante (factura, boleta o nota): su raíz es "
                             f"«{etree.QName(root).localname}».")


def check_certificate(info: CertificateInfo, ruc: str) -> None:
    """A certificate signs only its own RUC's vouchers, and only while it is valid."""
    if info.vencido():
        raise invalid("certificado_id", f"El certificado «{info.certificado_id}» (campo «certificado_id») venció el "
                                        f"{info.valido_hasta.date().isoformat()}: no se puede firmar con él.")
    if info.ruc != ruc:
        raise invalid("certificado_id", f"El certificado «{info.certificado_id}» (campo «certificado_id») es del RUC "
                                        f"{info.ruc}, pero el comprobante lo emite el RUC {ruc or '(sin RUC)'}.")


def no_default_certificate(ruc: str | None = None) -> Exception:
    who = f"El emisor (RUC {ruc})" if ruc else "El emisor"
    return invalid("certificado_id", f"{who} no tiene un certificado predeterminado para firmar: indique "
                                     "«certificado_id», o importe uno o cree uno de prueba en Certificados.")


class Signing:
    def __init__(self, store: VoucherStore, certificates: CertificateStore, settings: Settings) -> None:
        self.store = store
        self.certificates = certificates
        self.settings = settings

    def certificate_for(self, certificado_id: str, ruc: str):
        """(info, private key, certificate) of a stored certificate that may sign `ruc`'s vouchers now."""
        info, key, certificate = self.certificates.for_signing(certificado_id)
        check_certificate(info, ruc)
        return info, key, certificate

    def chosen_certificate(self, certificado_id: str | None, ruc: str | None) -> str:
        """The certificate asked for, else the issuer's default (the one rule for the windows and batches)."""
        if certificado_id:
            return certificado_id
        info = self.certificates.default_for(ruc) if ruc else None
        if info is None:
            raise no_default_certificate(ruc)
        return info.certificado_id

    def sign_request(self, request: FirmarRequest) -> FirmarResult:
        """Operation 2: the voucher is found by its text."""
        if not request.xml.strip():
            raise invalid("xml", "El campo «xml» es obligatorio.")
        encoded = request.xml.encode("utf-8")
        row = self.store.find_for_signing(request.xml, encoded)
        if row is None or not row["canonical"]:
            return self._sign_parsed(request)
        return self._sign_canonical(row, request.xml, request.certificado_id, encoded)

    def sign_voucher(self, voucher_id: int, certificado_id: str | None = None) -> FirmarResult:
        """Sign a stored voucher by its id (the windows, batches): no text to find it by."""
        return self.sign_stored(voucher_id, certificado_id)[0]

    def sign_stored(self, voucher_id: int, certificado_id: str | None = None) -> tuple[FirmarResult, dict]:
        """`sign_voucher`, and the voucher's row as it was read to sign it («Emitir» sends it from there: its texts
        are read once)."""
        row = self.store.get(voucher_id)
        if row is None:
            raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
        chosen = self.chosen_certificate(certificado_id, row["emisor_ruc"])
        if not row["canonical"]:
            return self._sign_parsed(FirmarRequest(xml=row["xml"], certificado_id=chosen)), row
        return self._sign_canonical(row, row["xml"], chosen, row["xml"].encode("utf-8")), row

    def _sign_canonical(self, row: dict, xml: str, certificado_id: str, encoded: bytes) -> FirmarResult:
        # A stored canonical text is well-formed, unsigned and a voucher: the checks of _sign_parsed hold.
        info, key, certificate = self.certificate_for(certificado_id, row["emisor_ruc"])
        if row.get("signed") or row.get("signed_sha256"):
            return self._stored_signature(row["id"], info)
        signed = sign_canonical(xml, key, certificate, algorithm=self.settings.get("signature_algorithm"),
                                encoded=encoded)
        if not self.store.record_signature_fragment(row["id"], signed.signature, signed.offset, signed.sha256,
                                                    signed.digest_value, signed.signature_value, info.certificado_id):
            return self._stored_signature(row["id"], info)  # signed by another request meanwhile
        return FirmarResult(xml_firmado=signed.xml, digest_value=signed.digest_value,
                            signature_value=signed.signature_value, certificado_por_vencer=info.por_vencer() or None)

    def _stored_signature(self, voucher_id: int, info: CertificateInfo) -> FirmarResult:
        """Signing again: the stored signature with the same certificate (idempotent), a 409 with another."""
        row = self.store.require(voucher_id)
        if row.get("certificado_id") != info.certificado_id:
            raise conflict("certificado_id", f"El comprobante {row['serie']}-{row['numero']} ya fue firmado con el "
                                             f"certificado «{row['certificado_id']}».")
        return FirmarResult(xml_firmado=row["xml_firmado"], digest_value=row["digest_value"],
                            signature_value=row["signature_value"], certificado_por_vencer=info.por_vencer() or None)

    def _sign_parsed(self, request: FirmarRequest) -> FirmarResult:
        """Operation 2 for a text that is not a canonical stored voucher: parse, check, then sign the tree."""
        tree = parse_xml(request.xml)
        _check_voucher(tree.getroot())
        row = self.store.find_by_xml(request.xml)
        if row is None:
            raise invalid("xml", "El campo «xml» no es un comprobante generado por Yupana en esta carpeta de datos (o "
                                 "fue modificado): genérelo con /api/v1/facturacion/xml y firme exactamente el XML "
                                 "devuelto.")
        info, key, certificate = self.certificate_for(request.certificado_id, issuer_ruc(tree.getroot()))
        if row.get("xml_firmado"):
            return self._stored_signature(row["id"], info)
        signed = sign_tree(tree, key, certificate, algorithm=self.settings.get("signature_algorithm"),
                           source=request.xml)
        xml_firmado = signed.xml.decode("utf-8")
        self.store.record_signature(row["id"], xml_firmado, signed.digest_value, signed.signature_value,
                                    info.certificado_id)
        return FirmarResult(xml_firmado=xml_firmado, digest_value=signed.digest_value,
                            signature_value=signed.signature_value, certificado_por_vencer=info.por_vencer() or None)
