"""What identifies a voucher and its texts, pure: the contract's hash, the store's SHA-256, the file name, the
idempotency key of a request, and the serie-número as `ubl.render` writes it in a voucher's text."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime
from decimal import Decimal

from app.core.contract import GenerarXmlRequest
from app.core.invoicing import ubl
from app.core.invoicing.documents import registry


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def xml_hash(xml: str) -> str:
    """The contract's `hash`: base64 of the SHA-256 of the returned XML's UTF-8 bytes."""
    return base64.b64encode(hashlib.sha256(xml.encode("utf-8")).digest()).decode("ascii")


def xml_hashes(xml: str) -> tuple[str, str]:
    """(`hash` of the contract, hex `xml_sha256` of the store) from one SHA-256 of the text."""
    return bytes_hashes(xml.encode("utf-8"))


def bytes_hashes(encoded: bytes) -> tuple[str, str]:
    """`xml_hashes` of a text already in UTF-8."""
    digest = hashlib.sha256(encoded).digest()
    return base64.b64encode(digest).decode("ascii"), digest.hex()


def file_name(emisor_ruc: str, tipo: str, serie: str, numero: int) -> str:
    return f"{emisor_ruc}-{tipo}-{serie}-{numero}.xml"


def request_json(request: GenerarXmlRequest) -> str:
    """The validated request as JSON, fields in the model's order, `None` left out and amounts by value (50.0 and
    50.00 alike): equal content gives equal text (the idempotency key's input). Serialised by pydantic's core, a
    few times cheaper than a dump to a dict re-encoded by `json`."""
    text = request.model_dump_json(exclude_none=True)
    if not _written_with_zeros_in(text):  # the usual case: every amount already written by value
        return text
    return _amounts_by_value(request).model_dump_json(exclude_none=True)


def _written_with_zeros_in(text: str) -> bool:
    """Whether pydantic wrote an amount with trailing decimal zeros ("50.00") or an exponent ("5E+1") in `text`.
    A description that looks like one only costs the slower path; an amount that needs it always answers True.
    Substring searches, a few times cheaper than a regular expression over the whole text."""
    at = text.find('0"')
    while at >= 0:
        start = at
        while start > 0 and text[start - 1].isdigit():
            start -= 1
        if text[start - 1] == ".":
            return True
        at = text.find('0"', at + 2)
    return "E+" in text or "E-" in text


def written_request_json(request: GenerarXmlRequest) -> str:
    """The key's input before amounts were compared by value: still accepted for rows stored that way."""
    return request.model_dump_json(exclude_none=True)


def by_value(value: Decimal) -> Decimal:
    """An amount without trailing zeros (50.00 -> 50, 2.50 -> 2.5): how equal amounts are written in the key."""
    try:
        if not value.is_finite():
            return value
        return value.quantize(Decimal(1)) if value == value.to_integral_value() else value.normalize()
    except ArithmeticError:  # more digits than the context holds: kept as written
        return value


def _amounts_by_value(request: GenerarXmlRequest) -> GenerarXmlRequest:
    """`request` with each amount written by value; the same object when every amount already is (the usual case)."""
    items = [item.model_copy(update={"cantidad": by_value(item.cantidad),
                                     "precio_unitario": _by_value(item.precio_unitario),
                                     "igv": _by_value(item.igv), "precio_con_igv": _by_value(item.precio_con_igv)})
             if _written_with_zeros(item.cantidad, item.precio_unitario, item.igv, item.precio_con_igv) else item
             for item in request.items]
    update: dict = {}
    if any(new is not old for new, old in zip(items, request.items, strict=True)):
        update["items"] = items
    forma = request.forma_pago
    if forma is not None and any(_written_with_zeros(cuota.monto) for cuota in forma.cuotas):
        update["forma_pago"] = forma.model_copy(update={"cuotas": [
            cuota.model_copy(update={"monto": by_value(cuota.monto)}) for cuota in forma.cuotas]})
    return request.model_copy(update=update) if update else request


def _by_value(value: Decimal | None) -> Decimal | None:
    return None if value is None else by_value(value)


def _written_with_zeros(*values: Decimal | None) -> bool:
    return any(value is not None and str(by_value(value)) != str(value) for value in values)


def legacy_request_json(request: GenerarXmlRequest) -> str:
    """The key's input before `request_json` (sorted keys): still accepted for rows stored by older versions."""
    data = request.model_dump(mode="json", exclude_none=True)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_key_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def splice_signature(xml: str, offset: int, signature: str) -> str:
    return xml[:offset] + signature + xml[offset:]


def now_text() -> str:
    """UTC now as «2024-01-31T12:00:00.000000Z» (isoformat: cheaper than strftime, same text)."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


# Finding a voucher by its text (unsigned or signed): the serie-número written in the text points at one row
# through the unique index, and the text's SHA-256 must equal the stored one. No index of the hashes has to be
# written with every voucher; rows whose text gives no key are older ones (canonical = 0), still indexed by hash.
_SUPPLIER_ID = '<cac:AccountingSupplierParty><cac:Party><cac:PartyIdentification><cbc:ID schemeID="6">'
_DESPATCH_SUPPLIER_ID = '<cac:DespatchSupplierParty><cac:Party><cac:PartyIdentification><cbc:ID schemeID="6">'
_INVOICE_TYPE = '<cbc:InvoiceTypeCode listID="'
_DESPATCH_TYPE = "<cbc:DespatchAdviceTypeCode"  # a guía (GRE): 09 or 31


def key_of_text(xml: str) -> tuple[str, str, str, int] | None:
    """(emisor_ruc, tipo, serie, numero) as `ubl.render` writes them in a voucher's text, or None when the text
    is not laid out that way. Only a candidate: the caller compares the text's hash with the row's."""
    start = len(ubl.XML_DECLARATION)
    if not xml.startswith(ubl.XML_DECLARATION):
        return None
    number_at = xml.find("</cbc:CustomizationID><cbc:ID>", start)
    supplier_id, type_mark = _SUPPLIER_ID, _INVOICE_TYPE
    supplier_at = xml.find(supplier_id, number_at)
    if supplier_at < 0:  # a guía names its issuer and type elsewhere
        supplier_id, type_mark = _DESPATCH_SUPPLIER_ID, _DESPATCH_TYPE
        supplier_at = xml.find(supplier_id, number_at)
    if number_at < 0 or supplier_at < 0:
        return None
    number_at += len("</cbc:CustomizationID><cbc:ID>")
    serie, _, numero = xml[number_at:xml.find("<", number_at)].rpartition("-")
    root_end = xml.find(" ", start + 1, number_at)
    tipo = registry.code_of_root(xml[start + 1:root_end]) if root_end > 0 else None  # a CreditNote is a 07…
    if tipo is None:  # …an Invoice says 01 or 03, a DespatchAdvice 09 or 31
        type_at = xml.find(type_mark, number_at)
        type_at = xml.find(">", type_at) + 1 if type_at >= 0 else -1
        tipo = xml[type_at:xml.find("<", type_at)] if type_at > 0 else ""
    ruc_at = supplier_at + len(supplier_id)
    ruc = xml[ruc_at:xml.find("<", ruc_at)]
    if not (serie and numero.isdigit() and numero.isascii() and tipo and ruc):
        return None
    return ruc, tipo, serie, int(numero)
