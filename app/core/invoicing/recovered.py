"""After a restore, the vouchers signed after the backup read back from the files the backup folder received as they
were made (backup_files: `comprobantes/ENTORNO/AAAAMM/RUC-TIPO-SERIE-NUMERO.xml` and the CDR `R-….xml` beside it;
issue 35, item 2).

Each file is read back into the environment it was recorded in (the folder it was written to,
backup_files.recorded_voucher_files): a sandbox or beta trial's files in the same backup folder are never read back
into production, nor production's into the sandbox (the environment a restored folder starts in, the setting being
the desk's). Files written before the environment was recorded (`comprobantes/AAAAMM/`) are read as the current
environment's, as always. Each file whose serie-número the restored database does not have in its environment is
stored as a voucher of that environment, byte for byte (named «SERIE-NÚMERO (entorno)» when not the current one): the signed text split back into the canonical XML and its Signature (as operation 2 stores a signed
voucher), its signature verified first (a file that does not verify is left out and named). Its CDR, when the file is
there, is kept as a consulted CDR (as `yupana cdr` keeps one), and the voucher takes the status the CDR says; without
one it is `firmado` (SUNAT's answer unknown: sending it again is answered by SUNAT as already registered, and the
CDR asked). The request a voucher was generated from is not in its XML: the stored request says only where the
voucher came from.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from lxml import etree

from app.core.invoicing import cdr as cdr_module
from app.core.invoicing.cdr import safe_parser
from app.core.invoicing.statuses import FIRMADO
from app.core.invoicing.voucher_keys import bytes_hashes
from app.core.invoicing.xmldsig import verify_xml
from app.core.storage.ports.vouchers import NewVoucher, NumberTaken

log = logging.getLogger(__name__)

_FILE = re.compile(r"^(\d{11})-(\d{2})-([A-Z0-9]{4})-(\d{1,8})\.xml$")
_SIGNATURE = re.compile(r"<ext:ExtensionContent>(<ds:Signature[\s>].*?</ds:Signature>)", re.DOTALL)


@dataclass
class RecoveredFiles:
    """What the read-back stored (serie-número by serie-número) and what it left out, with why (Spanish); of the
    RA/RC files (recovered_summaries), those recorded with SUNAT's answer, the vouchers they voided and those whose
    outcome is unknown."""

    stored: list[str] = field(default_factory=list)
    with_cdr: int = 0
    skipped: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)  # «RA-20261207-2 (aceptada)»
    voided: list[str] = field(default_factory=list)  # serie-número of the vouchers voided again
    unknown_summaries: list[str] = field(default_factory=list)  # Spanish: a RA/RC without SUNAT's answer


def _local(root: etree._Element, path: str) -> str:
    """The text of the first element at a path of local names («AccountingCustomerParty/Party/…»), "" if none."""
    query = "/".join(f"*[local-name()='{step}']" for step in path.split("/"))
    found = root.xpath(query)
    return str(found[0].text or "").strip() if found else ""


def _id_scheme(root: etree._Element) -> tuple[str, str]:
    found = root.xpath("*[local-name()='AccountingCustomerParty']/*[local-name()='Party']/"
                       "*[local-name()='PartyIdentification']/*[local-name()='ID']")
    if not found:
        return "", ""
    return str(found[0].get("schemeID") or ""), str(found[0].text or "").strip()


def voucher_of_file(environment: str, path: Path, status: str) -> NewVoucher | str:
    """The voucher a signed file holds, ready to store (texts not packed yet), or why it cannot be read back."""
    match = _FILE.match(path.name)
    if not match:
        return f"«{path.name}» no tiene el nombre de un comprobante"
    ruc, tipo, serie, numero = match.group(1), match.group(2), match.group(3), int(match.group(4))
    data = path.read_bytes()
    signed = data.decode("utf-8")
    outcome = verify_xml(signed)
    if not outcome.valid:
        return f"la firma de {serie}-{numero} no es válida ({outcome.reason})"
    found = _SIGNATURE.search(signed)
    if found is None:
        return f"no se encontró la firma de {serie}-{numero} donde Yupana la pone"
    offset = found.start(1)
    xml = signed[:offset] + signed[found.end(1):]
    root = etree.fromstring(data, safe_parser())
    total = (_local(root, "LegalMonetaryTotal/PayableAmount") or _local(root, "RequestedMonetaryTotal/PayableAmount")
             or "0")
    scheme, document = _id_scheme(root)
    xml_hash, xml_sha256 = bytes_hashes(xml.encode("utf-8"))
    _, signed_sha256 = bytes_hashes(data)
    request = json.dumps({"recuperado_de": path.name, "origen": "archivo escrito al emitir (copias de seguridad)"},
                         ensure_ascii=False)
    return NewVoucher(
        environment, ruc, tipo, serie, numero, path.name, xml_hash, xml_sha256, f"recuperado:{signed_sha256}", status,
        scheme or None, document or None, _local(root, "AccountingCustomerParty/Party/PartyLegalEntity/RegistrationName")
        or None, _local(root, "DocumentCurrencyCode") or "PEN", f"{Decimal(total):.2f}", _local(root, "IssueDate"),
        request.encode("utf-8"), xml.encode("utf-8"), signature=found.group(1).encode("utf-8"),
        signature_offset=offset, signed_sha256=signed_sha256, digest_value=outcome.digest_value,
        signature_value=_local(root, "UBLExtensions/UBLExtension/ExtensionContent/Signature/SignatureValue") or None)


def read_back(store: Any, consulted: Any, recorded: list[tuple[str, Path]]) -> RecoveredFiles:
    """Store the vouchers of a backup folder's files (`backup_files.recorded_voucher_files`, of the current
    environment) that the database lacks (module doc). `store` is the VoucherStore, `consulted` the repository that
    keeps consulted CDRs."""
    result = RecoveredFiles()
    current = store.environment()
    for environment, path in recorded:
        match = _FILE.match(path.name)
        if match is None:
            continue  # a CDR (R-…), or another file
        ruc, tipo, serie, numero = match.group(1), match.group(2), match.group(3), int(match.group(4))
        if store.id_of(ruc, tipo, serie, numero, environment) is not None:
            continue  # in the backup already
        received = _cdr_of(path)
        status = (received.estado if received is not None and received.estado else FIRMADO)
        try:
            voucher = voucher_of_file(environment, path, status)
        except (ValueError, ArithmeticError, etree.XMLSyntaxError, OSError) as exc:  # unreadable: named, left out
            voucher = f"«{path.name}» no se puede leer ({exc})"
        if isinstance(voucher, str):
            result.skipped.append(voucher)
            continue
        try:
            with store.storage.transaction(durable=True):
                voucher_id = store.add_recovered(voucher)
                if received is not None:
                    consulted.add_consulted_cdr(
                        voucher_id=voucher_id, environment=environment, codigo=received.codigo,
                        descripcion=received.descripcion,
                        cdr_xml=store.pack_bytes(f"cdr-xml:{environment}", received.xml),
                        cdr_member=f"R-{path.name}")
        except NumberTaken:
            continue
        result.stored.append(f"{serie}-{numero}" if environment == current else f"{serie}-{numero} ({environment})")
        if received is not None:
            result.with_cdr += 1
    return result


def _cdr_of(path: Path) -> cdr_module.Cdr | None:
    beside = path.with_name(f"R-{path.name}")
    if not beside.is_file():
        return None
    try:
        return cdr_module.read_xml(beside.read_bytes())
    except Exception as exc:  # a damaged CDR file: the voucher comes back without it
        log.warning("CDR file %s not read: %s", beside, exc)
        return None
