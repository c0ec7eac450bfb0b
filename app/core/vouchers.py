"""Operation 1 (POST /api/v1/facturacion/xml) and the voucher store.

`generate` turns the contract's small request into a complete UBL 2.1 voucher: the issuer from
its company profile, the customer's name from the request or the registry, lines, taxes, totals
and legend computed here in Decimal. A serie-número is issued once: the same request again gets
the stored document back, a different one a 409. See docs/vouchers.md.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sqlite3
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from sqlite_utils import Migrations

from . import clock, ubl
from . import prevalidation as pv
from .amounts import CENT, IGV_RATE, ZERO, amount_in_words, money
from .contract import (
    GenerarXmlRequest,
    GenerarXmlResult,
    Item,
    parse_model,
    repaired_for_checks,
    translate_validation_error,
)
from .environments import NAMES, current
from .errors import YupanaError, conflict, invalid, invalid_many, not_found
from .storage import register_migrations

if TYPE_CHECKING:
    from .companies import Company
    from .engine import Engine

LIMA = timezone(timedelta(hours=-5))  # Peru keeps UTC-5 all year
STATUSES = ("generado", "firmado", "enviado", "aceptado", "observado", "rechazado", "pendiente")
PRICE_PLACES = Decimal("1E-10")

migrations = register_migrations(Migrations("yupana.vouchers"))


@migrations()
def m001_vouchers(db) -> None:
    db.execute(
        """CREATE TABLE vouchers (
            id INTEGER PRIMARY KEY,
            emisor_ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero INTEGER NOT NULL,
            nombre_archivo TEXT NOT NULL, xml TEXT NOT NULL, hash TEXT NOT NULL, xml_sha256 TEXT NOT NULL,
            request_json TEXT NOT NULL, content_key TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'generado',
            receptor_tipo_documento TEXT, receptor_numero_documento TEXT, receptor_nombre TEXT,
            moneda TEXT NOT NULL, total TEXT NOT NULL, fecha_emision TEXT NOT NULL,
            xml_firmado TEXT, signed_sha256 TEXT, digest_value TEXT, signature_value TEXT, certificado_id TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (emisor_ruc, tipo, serie, numero)
        )""")
    db.execute("CREATE INDEX vouchers_xml_sha256 ON vouchers (xml_sha256)")
    db.execute("CREATE INDEX vouchers_signed_sha256 ON vouchers (signed_sha256)")
    db.execute("CREATE INDEX vouchers_status ON vouchers (status, id)")


@migrations()
def m002_texts_apart(db) -> None:
    """The large texts move to their own table, written once; the voucher's row stays small.

    Signing and status changes rewrite the row: with the ~15 kB XML inside, that was ~10 pages through the WAL
    each time. `canonical` marks texts written as ubl.XML_DECLARATION + their own C14N (signed without parsing);
    `signature` + `signature_offset` are the ds:Signature text and where it goes in the XML: the signed XML is
    rebuilt from them when read instead of being stored a second time (docs/signing.md).
    """
    db.execute("CREATE TABLE voucher_texts (voucher_id INTEGER PRIMARY KEY, xml_firmado TEXT,"
               " request_json TEXT NOT NULL, xml TEXT NOT NULL)")
    db.execute("INSERT INTO voucher_texts (voucher_id, xml_firmado, request_json, xml)"
               " SELECT id, xml_firmado, request_json, xml FROM vouchers")
    db.execute(
        """CREATE TABLE vouchers_m002 (
            id INTEGER PRIMARY KEY,
            emisor_ruc TEXT NOT NULL, tipo TEXT NOT NULL, serie TEXT NOT NULL, numero INTEGER NOT NULL,
            nombre_archivo TEXT NOT NULL, hash TEXT NOT NULL, xml_sha256 TEXT NOT NULL,
            content_key TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'generado',
            receptor_tipo_documento TEXT, receptor_numero_documento TEXT, receptor_nombre TEXT,
            moneda TEXT NOT NULL, total TEXT NOT NULL, fecha_emision TEXT NOT NULL,
            signed_sha256 TEXT, digest_value TEXT, signature_value TEXT, certificado_id TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            canonical INTEGER NOT NULL DEFAULT 0, signature TEXT, signature_offset INTEGER,
            UNIQUE (emisor_ruc, tipo, serie, numero)
        )""")
    kept = ("id, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, xml_sha256, content_key, status,"
            " receptor_tipo_documento, receptor_numero_documento, receptor_nombre, moneda, total, fecha_emision,"
            " signed_sha256, digest_value, signature_value, certificado_id, created_at, updated_at")
    db.execute(f"INSERT INTO vouchers_m002 ({kept}) SELECT {kept} FROM vouchers")
    db.execute("DROP TABLE vouchers")
    db.execute("ALTER TABLE vouchers_m002 RENAME TO vouchers")
    db.execute("CREATE INDEX vouchers_xml_sha256 ON vouchers (xml_sha256)")
    # Partial: an unsigned voucher adds no entry (one page less to write per generation).
    db.execute("CREATE INDEX vouchers_signed_sha256 ON vouchers (signed_sha256) WHERE signed_sha256 IS NOT NULL")
    db.execute("CREATE INDEX vouchers_status ON vouchers (status, id)")


@migrations()
def m003_no_hash_indexes_for_new_vouchers(db) -> None:
    """A voucher is found by its text through the serie-número written in it (`key_of_text`) and the hash kept
    in its row, so new vouchers add no entry to an index of hashes (two pages fewer written per voucher: one
    when generated, one when signed). Rows stored before the canonical form keep theirs."""
    db.execute("DROP INDEX vouchers_xml_sha256")
    db.execute("DROP INDEX vouchers_signed_sha256")
    db.execute("CREATE INDEX vouchers_old_xml_sha256 ON vouchers (xml_sha256) WHERE canonical = 0")
    db.execute("CREATE INDEX vouchers_old_signed_sha256 ON vouchers (signed_sha256) WHERE canonical = 0")


@migrations()
def m004_environment(db) -> None:
    """A voucher belongs to the environment it was generated in: its number, its place in the list and where it
    can be sent (docs/architecture.md, «Entornos»). Rows stored before: those sent to SUNAT production are
    production's; the others belong to the folder's environment (sandbox when never set)."""
    row = db.execute("SELECT value FROM settings WHERE key = 'environment'").fetchone()
    folder = row[0] if row else "sandbox"
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'vouchers'").fetchone()[0]
    unique = re.search(r"UNIQUE \(emisor_ruc, tipo, serie, numero\)", sql)
    assert unique is not None, "the vouchers table is not the one m002 made"
    create = (sql[:unique.start()] + "environment TEXT NOT NULL, UNIQUE (environment, emisor_ruc, tipo, serie, numero)"
              + sql[unique.end():])
    create = re.sub(r'^CREATE TABLE "?vouchers"?', "CREATE TABLE vouchers_m004", create)
    db.execute(create)
    columns = ", ".join(r[1] for r in db.execute("PRAGMA table_info(vouchers)").fetchall())
    produced = ("SELECT voucher_id FROM sunat_submissions WHERE ambiente = 'produccion' AND voucher_id IS NOT NULL"
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sunat_submissions'").fetchone()
                else "SELECT NULL WHERE 0")
    db.execute(f"INSERT INTO vouchers_m004 ({columns}, environment) SELECT {columns}, "
               f"CASE WHEN id IN ({produced}) THEN 'produccion' ELSE ? END FROM vouchers", [folder])
    db.execute("DROP TABLE vouchers")
    db.execute("ALTER TABLE vouchers_m004 RENAME TO vouchers")
    db.execute("CREATE INDEX vouchers_status ON vouchers (environment, status, id)")
    db.execute("CREATE INDEX vouchers_old_xml_sha256 ON vouchers (xml_sha256) WHERE canonical = 0")
    db.execute("CREATE INDEX vouchers_old_signed_sha256 ON vouchers (signed_sha256) WHERE canonical = 0")


# ---------------------------------------------------------------- hashes and keys

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
                                     "precio_unitario": by_value(item.precio_unitario),
                                     "igv": None if item.igv is None else by_value(item.igv)})
             if _written_with_zeros(item.cantidad, item.precio_unitario, item.igv) else item
             for item in request.items]
    update: dict = {}
    if any(new is not old for new, old in zip(items, request.items, strict=True)):
        update["items"] = items
    forma = request.forma_pago
    if forma is not None and any(_written_with_zeros(cuota.monto) for cuota in forma.cuotas):
        update["forma_pago"] = forma.model_copy(update={"cuotas": [
            cuota.model_copy(update={"monto": by_value(cuota.monto)}) for cuota in forma.cuotas]})
    return request.model_copy(update=update) if update else request


def _written_with_zeros(*values: Decimal | None) -> bool:
    return any(value is not None and str(by_value(value)) != str(value) for value in values)


def legacy_request_json(request: GenerarXmlRequest) -> str:
    """The key's input before `request_json` (sorted keys): still accepted for rows stored by older versions."""
    data = request.model_dump(mode="json", exclude_none=True)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_key_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- building the document

def _issuer(engine: Engine, problems: pv.Problems, ruc: str) -> Company | None:
    problem = pv.ruc_problem(ruc)
    if problem:
        problems.add("emisor.ruc", f"El RUC «{ruc}» del campo «emisor.ruc» no es válido: {problem}.")
        return None
    company = engine.company(ruc)
    if company is None:
        problems.add("emisor.ruc", f"No hay una empresa emisora con RUC «{ruc}» (campo «emisor.ruc»). "
                     "Regístrela con `yupana company set`.")
    return company


def _registry_name(engine: Engine, ruc: str) -> str | None:
    try:
        record = engine.ruc(ruc)
    except YupanaError:
        return None
    return (record.razon_social or "").strip() or None


def _customer(engine: Engine, request: GenerarXmlRequest, problems: pv.Problems, exportacion: bool) -> ubl.Party:
    """The customer as catalogue 06 type, number and name, checked against the voucher type."""
    receptor = request.receptor
    pv.check_characters(problems, "receptor.razon_social", receptor.razon_social)
    pv.check_characters(problems, "receptor.numero_documento", receptor.numero_documento)
    pv.check_characters(problems, "receptor.ruc", receptor.ruc)
    tipo = request.tipo if request.tipo in ("01", "03") else (
        request.documento_referencia.tipo if request.documento_referencia else "01")
    boleta = tipo == "03"
    tipo_doc = receptor.tipo_documento or ("6" if receptor.ruc else None)
    numero = receptor.ruc if tipo_doc == "6" and receptor.ruc else (receptor.numero_documento or "")
    name = receptor.razon_social or ""
    if tipo_doc is None:
        if not boleta:
            problems.add("receptor.ruc", "El campo «receptor.ruc» es obligatorio en una factura y sus notas.", "2014")
            return ubl.Party("6", "-", name or "-")
        return ubl.Party("0", "-", name or "CLIENTES VARIOS")
    if tipo_doc not in pv.DOCUMENT_TYPES:
        problems.add("receptor.tipo_documento", f"El tipo de documento «{tipo_doc}» del campo "
                     "«receptor.tipo_documento» no es válido: use 1 (DNI), 4 (CE), 6 (RUC), 7 (pasaporte), "
                     "A (cédula diplomática) o 0 (sin documento).", "2800")
        return ubl.Party("0", "-", name or "-")
    if not boleta and (tipo_doc != "6") != exportacion:
        detail = ("una exportación se emite a un cliente no domiciliado (sin RUC)" if exportacion
                  else "una factura y sus notas se emiten a un RUC (tipo 6)")
        problems.add("receptor.tipo_documento", f"El campo «receptor.tipo_documento» no es válido: {detail}.", "2800")
    if tipo_doc == "6":
        pv.check_customer_ruc(problems, numero, "receptor.ruc" if receptor.ruc else "receptor.numero_documento")
        if not name and not problems.details:
            name = _registry_name(engine, numero) or ""
            if not name:
                problems.add("receptor.razon_social", f"No se pudo obtener la razón social del RUC «{numero}»: "
                             "indique el campo «receptor.razon_social».", "2021")
        return ubl.Party("6", numero, name or "-")
    if tipo_doc == "0":
        numero = numero or "-"
    elif not numero:
        problems.add("receptor.numero_documento", "El campo «receptor.numero_documento» es obligatorio para el "
                     f"tipo de documento {tipo_doc}.", "2014")
    pv.check_identity(problems, tipo_doc, numero, boleta)
    if not name:
        if tipo_doc == "0":
            name = "CLIENTES VARIOS"
        else:
            problems.add("receptor.razon_social", "El campo «receptor.razon_social» (nombre del cliente) es "
                         f"obligatorio para el tipo de documento {tipo_doc}.", "2021")
    return ubl.Party(tipo_doc, numero or "-", name or "-")


# Lines repeat: a shop sells the same products in the same quantities all day, and a batch of boletas is made of
# them. A line's values, checks and XML depend only on its item's fields, so a line that passed its checks is kept
# and reused as it is (ubl.Line also keeps its rendered XML). Equal Decimals (1 and 1.00) give the same line: amounts
# are written without trailing zeros. Bounded: emptied when full.
_LINE_CACHE_SIZE = 4096
_line_cache: dict[tuple, ubl.Line] = {}


def _lines(request: GenerarXmlRequest, problems: pv.Problems) -> list[ubl.Line]:
    # Ten of these per ten-line voucher: checks take their fast path when all is fine, no helper calls.
    lines = []
    for index, item in enumerate(request.items):
        key = (item.descripcion, item.cantidad, item.precio_unitario, item.igv, item.codigo, item.unidad,
               item.tipo_afectacion_igv)
        line = _line_cache.get(key)
        if line is None:
            before = len(problems.details)
            line = _new_line(problems, index, item)
            if line is None:
                continue
            if len(problems.details) == before:  # only a line without problems is kept
                if len(_line_cache) >= _LINE_CACHE_SIZE:
                    _line_cache.clear()
                _line_cache[key] = line
        lines.append(line)
    return lines


def _new_line(problems: pv.Problems, index: int, item: Item) -> ubl.Line | None:
    """The line of `item`, or None when its amounts cannot be computed; problems go to `problems`."""
    afectacion = item.tipo_afectacion_igv or "10"
    unidad = item.unidad or "NIU"
    cantidad, valor_unitario = item.cantidad, item.precio_unitario
    pv.check_line(problems, index, item.descripcion, item.codigo, unidad, afectacion)
    if not pv.check_quantity_and_price(problems, index, cantidad, valor_unitario):
        return None
    valor_venta = (cantidad * valor_unitario).quantize(CENT, ROUND_HALF_UP)
    scheme = ubl.SCHEME_BY_AFFECTATION.get(afectacion, ubl.IGV)  # unknown codes are refused anyway
    taxed = scheme is ubl.IGV
    igv = (valor_venta * IGV_RATE).quantize(CENT, ROUND_HALF_UP) if taxed else ZERO
    if item.igv is not None:
        if not item.igv.is_finite() or abs(item.igv - igv) > CENT:
            problems.add(f"items[{index}].igv", f"El IGV del campo «items[{index}].igv» ({item.igv}) no "
                         f"corresponde al calculado ({igv}: 18 % de {valor_venta}).", "3103")
            if not item.igv.is_finite():
                return None
        igv = money(item.igv)
    precio = ((valor_venta + igv) / cantidad).quantize(PRICE_PLACES) if taxed else valor_unitario
    return ubl.Line(item.descripcion, cantidad, unidad, item.codigo, afectacion, valor_unitario, precio,
                    valor_venta, igv, scheme)


def _subtotals(lines: list[ubl.Line]) -> list[tuple[ubl.TaxScheme, Decimal, Decimal]]:
    sums: dict[str, tuple[Decimal, Decimal]] = {}
    for line in lines:
        taxable, tax = sums.get(line.scheme.code, (ZERO, ZERO))
        sums[line.scheme.code] = (taxable + line.valor_venta, tax + line.igv)
    return [(scheme, *sums[scheme.code]) for scheme in ubl.SCHEME_ORDER if scheme.code in sums]


def _payment(request: GenerarXmlRequest, problems: pv.Problems, total: Decimal, fecha: date
             ) -> tuple[str | None, list[tuple[Decimal, date]]]:
    forma = request.forma_pago
    if request.tipo not in ("01", "03"):
        return None, []
    if forma is None:
        return ("Contado" if request.tipo == "01" else None), []
    if forma.tipo == "Contado":
        if forma.cuotas:
            problems.add("forma_pago.cuotas", "El campo «forma_pago.cuotas» solo se admite con pago al Credito.",
                         "3252")
        return "Contado", []
    if not forma.cuotas:
        problems.add("forma_pago.cuotas", "Una venta al Credito necesita al menos una cuota en «forma_pago.cuotas».",
                     "3249")
    cuotas = []
    for index, cuota in enumerate(forma.cuotas):
        if not cuota.monto.is_finite() or cuota.monto <= 0 or pv.decimals(cuota.monto) > 2:
            problems.add(f"forma_pago.cuotas[{index}].monto", f"El campo «forma_pago.cuotas[{index}].monto» debe ser "
                         "mayor que cero, con hasta 2 decimales.", "3253")
        if cuota.fecha_vencimiento <= fecha:
            problems.add(f"forma_pago.cuotas[{index}].fecha_vencimiento", f"El campo «forma_pago.cuotas[{index}]."
                         "fecha_vencimiento» debe ser posterior a la fecha de emisión.", "3267")
        cuotas.append((cuota.monto, cuota.fecha_vencimiento))
    pending = sum((amount for amount, _ in cuotas), ZERO)
    if pending > total:
        problems.add("forma_pago.cuotas", f"La suma de «forma_pago.cuotas» ({pending}) supera el importe total "
                     f"({total}).", "3265")
    return "Credito", cuotas


def _note_reference(request: GenerarXmlRequest, problems: pv.Problems
                    ) -> tuple[tuple[str, str] | None, tuple[str, str] | None, str | None]:
    """(reference, reason, serie letter) of a note; for invoices (None, None, letter of the type)."""
    if request.tipo in pv.SERIE_LETTER:
        return None, None, pv.SERIE_LETTER[request.tipo]
    ref = request.documento_referencia
    reasons = pv.CREDIT_REASONS if request.tipo == "07" else pv.DEBIT_REASONS
    letter = None
    reference = None
    if ref is None:
        problems.add("documento_referencia", "El campo «documento_referencia» (comprobante que modifica la nota) "
                     "es obligatorio.", "2128")
    elif ref.tipo not in pv.SERIE_LETTER:
        problems.add("documento_referencia.tipo", "El campo «documento_referencia.tipo» debe ser 01 (factura) o "
                     "03 (boleta).", "2116" if request.tipo == "07" else "2204")
    else:
        letter = pv.SERIE_LETTER[ref.tipo]
        if not (pv.SERIE_PATTERN.match(ref.serie) and ref.serie[0] == letter and 1 <= ref.numero <= pv.MAX_NUMERO):
            problems.add("documento_referencia.serie", f"«documento_referencia» ({ref.serie}-{ref.numero}) no es "
                         f"una serie-número válida de tipo {ref.tipo}.", "2117" if request.tipo == "07" else "2205")
        reference = (ref.tipo, f"{ref.serie}-{ref.numero}")
    code = request.codigo_motivo
    if code not in reasons:
        catalogue = "09" if request.tipo == "07" else "10"
        problems.add("codigo_motivo", f"El campo «codigo_motivo» debe ser un código del catálogo {catalogue}: "
                     f"{', '.join(reasons)}.", "2172")
        if not code:
            return reference, None, letter
    description = request.descripcion_motivo or reasons.get(code or "", "-")
    pv.check_text(problems, "descripcion_motivo", description, pv.MAX_REASON, "2135")
    if "\n" in description or "\r" in description:
        problems.add("descripcion_motivo", "El campo «descripcion_motivo» debe ser una sola línea.", "2135")
    return reference, (code, description), letter


def _when(request: GenerarXmlRequest) -> tuple[date, time]:
    now = clock.now().astimezone(LIMA)
    return request.fecha_emision or now.date(), (request.hora_emision or now.time()).replace(microsecond=0,
                                                                                               tzinfo=None)


def build_document(engine: Engine, request: GenerarXmlRequest, checks: bool = True) -> ubl.Document:
    """Compute the whole voucher from the request; raise one 400 listing every problem found.

    `checks=False` (tests only) keeps only what is needed to render, so SUNAT's own sheets can be
    asked what they say about a voucher Yupana would have refused.
    """
    problems = pv.Problems()
    if request.tipo not in ubl.LAYOUT:
        raise invalid("tipo", f"El campo «tipo» ({request.tipo}) debe ser 01 (factura), 03 (boleta), "
                      "07 (nota de crédito) u 08 (nota de débito).", "1003")
    company = _issuer(engine, problems, request.emisor.ruc)
    reference, motivo, letter = _note_reference(request, problems)
    pv.check_serie_numero(problems, request.tipo, request.serie, request.numero, letter)
    moneda = (request.moneda or "PEN").upper()
    if moneda not in pv.CURRENCIES:
        problems.add("moneda", f"El campo «moneda» ({moneda}) debe ser PEN o USD.", "3088")
    if not request.items:
        problems.add("items", "El campo «items» debe tener al menos una línea.", "2023")
    lines = _lines(request, problems)
    exportacion = bool(lines) and all(line.afectacion == "40" for line in lines)
    if not exportacion and any(line.afectacion == "40" for line in lines):
        index = next(i for i, line in enumerate(lines) if line.afectacion == "40")
        problems.add(f"items[{index}].tipo_afectacion_igv", "Una exportación (afectación 40) no se mezcla con "
                     "ventas internas en un mismo comprobante.", "2642")
    receptor = _customer(engine, request, problems, exportacion)
    valor_venta = sum((line.valor_venta for line in lines), ZERO)
    igv = sum((line.igv for line in lines), ZERO)
    total = valor_venta + igv
    fecha, hora = _when(request)
    forma_pago, cuotas = _payment(request, problems, total, fecha)
    if (request.tipo == "03" and receptor.tipo_documento == "0" and moneda == "PEN"
            and total > pv.BOLETA_ID_THRESHOLD):
        problems.add("receptor.numero_documento", "Una boleta de más de S/ 700.00 debe identificar al cliente "
                     "(«receptor.tipo_documento» y «receptor.numero_documento»).", "2396")
    if checks:
        problems.raise_if_any()
    if company is None:
        raise invalid("emisor.ruc", f"No hay una empresa emisora con RUC «{request.emisor.ruc}».")
    place = company.place
    return ubl.Document(
        tipo=request.tipo, serie=request.serie, numero=request.numero, fecha=fecha, hora=hora, moneda=moneda,
        tipo_operacion="0200" if exportacion else "0101", emisor_ruc=company.ruc,
        emisor_nombre=company.razon_social, emisor_comercial=company.nombre_comercial,
        emisor_ubigeo=company.ubigeo, emisor_direccion=company.direccion,
        emisor_departamento=place.departamento.upper() if place else "-",
        emisor_provincia=place.provincia.upper() if place else "-",
        emisor_distrito=place.distrito.upper() if place else "-", emisor_establecimiento=company.codigo_establecimiento,
        receptor=receptor, lines=lines, subtotals=_subtotals(lines), valor_venta=valor_venta, igv=igv, total=total,
        leyenda=amount_in_words(total, moneda), forma_pago=forma_pago, cuotas=cuotas, referencia=reference,
        motivo=motivo)


# ---------------------------------------------------------------- operation 1

def _result(row: dict) -> GenerarXmlResult:
    return GenerarXmlResult(xml=row["xml"], hash=row["hash"], nombre_archivo=row["nombre_archivo"])


def _existing(engine: Engine, request: GenerarXmlRequest, content_key: str) -> GenerarXmlResult | None:
    # Asked before every generation, almost always for a new number: one look in the unique index, no texts.
    issued = engine.storage.conn().execute(
        "SELECT id FROM vouchers WHERE environment = ? AND emisor_ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
        (current(engine), request.emisor.ruc, request.tipo, request.serie, request.numero)).fetchone()
    if issued is None:
        return None
    row = get(engine, issued[0])
    if row["content_key"] not in (content_key, content_key_of(written_request_json(request)),
                                  content_key_of(legacy_request_json(request))):
        raise conflict("numero", f"El comprobante {request.serie}-{request.numero} (tipo {request.tipo}) ya fue "
                       "generado con otro contenido: use el siguiente número "
                       f"({next_numero(engine, request.emisor.ruc, request.tipo, request.serie)}).")
    return _result(row)


def run_sunat_rules(engine: Engine, xml: str, name: str) -> list[str]:
    """SUNAT's own sheets, when a rule folder is configured: a rejection is a 400, observations are returned."""
    rules_dir = engine.settings.get("sunat_rules_dir")
    if not rules_dir:
        return []
    from . import sunat_rules

    verdict = sunat_rules.check(rules_dir, xml, name)
    if verdict.rejection:
        raise invalid(None, f"Las reglas de SUNAT rechazan el comprobante con el código {verdict.rejection}: "
                      f"{verdict.message}", verdict.rejection)
    return verdict.observations


def generate(engine: Engine, request: GenerarXmlRequest) -> GenerarXmlResult:
    canonical = request_json(request)
    content_key = content_key_of(canonical)
    # Built first, without asking whether the number was issued (almost never): the unique index answers at the
    # insert, and a refusal on the way also checks, so that an issued number still answers for itself.
    try:
        doc = build_document(engine, request)
        xml = ubl.render(doc)
        name = file_name(doc.emisor_ruc, doc.tipo, doc.serie, doc.numero)
        observations = run_sunat_rules(engine, xml, name)
    except YupanaError:
        stored = _existing(engine, request, content_key)
        if stored is None:
            raise
        return stored
    digest, xml_sha256 = xml_hashes(xml)
    try:
        with engine.storage.write(durable=True) as conn:  # a number handed out must survive a power cut
            voucher_id = conn.execute(
                "INSERT INTO vouchers (environment, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, xml_sha256,"
                " content_key, status, receptor_tipo_documento, receptor_numero_documento,"
                " receptor_nombre, moneda, total, fecha_emision, canonical)"
                " VALUES (?,?,?,?,?,?,?,?,?,'generado',?,?,?,?,?,?,1)",
                (current(engine), doc.emisor_ruc, doc.tipo, doc.serie, doc.numero, name, digest, xml_sha256, content_key,
                 doc.receptor.tipo_documento, doc.receptor.numero_documento, doc.receptor.nombre,
                 doc.moneda, f"{doc.total:.2f}", doc.fecha.isoformat())).lastrowid
            conn.execute("INSERT INTO voucher_texts (voucher_id, request_json, xml) VALUES (?,?,?)",
                         (voucher_id, canonical, xml))
    except sqlite3.IntegrityError:  # issued before, or by another thread meanwhile
        stored = _existing(engine, request, content_key)
        if stored is None:
            raise
        return stored
    engine.events.emit("voucher.changed", {"id": voucher_id, "status": "generado"})
    return GenerarXmlResult(xml=xml, hash=digest, nombre_archivo=name, observaciones=observations)


# ---------------------------------------------------------------- the store, for signing, sending and the GUI

def _complete(row: dict | None) -> dict | None:
    """A stored row as the store API shows it: `xml_firmado` rebuilt when only the Signature was stored."""
    if row is not None and row.get("signature") is not None and row.get("xml_firmado") is None:
        row["xml_firmado"] = splice_signature(row["xml"], row["signature_offset"], row["signature"])
    return row


def splice_signature(xml: str, offset: int, signature: str) -> str:
    return xml[:offset] + signature + xml[offset:]


# A whole voucher: its row and its texts (xml, request_json, xml_firmado).
_VOUCHER = "SELECT v.*, t.xml, t.request_json, t.xml_firmado FROM vouchers v JOIN voucher_texts t ON t.voucher_id = v.id"


def _voucher(engine: Engine, where: str, params: tuple) -> dict | None:
    return _complete(engine.storage.query_one(f"{_VOUCHER} WHERE {where}", params))


def find(engine: Engine, emisor_ruc: str, tipo: str, serie: str, numero: int) -> dict | None:
    """A voucher of the current environment by its serie-número."""
    return _voucher(engine, "v.environment = ? AND v.emisor_ruc = ? AND v.tipo = ? AND v.serie = ? AND v.numero = ?",
                    (current(engine), emisor_ruc, tipo, serie, numero))


def get(engine: Engine, voucher_id: int) -> dict | None:
    return _voucher(engine, "v.id = ?", (voucher_id,))


# Finding a voucher by its text (unsigned or signed): the serie-número written in the text points at one row
# through the unique index, and the text's SHA-256 must equal the stored one. No index of the hashes has to be
# written with every voucher; rows whose text gives no key are older ones (canonical = 0), still indexed by hash.
_SUPPLIER_ID = '<cac:AccountingSupplierParty><cac:Party><cac:PartyIdentification><cbc:ID schemeID="6">'
_INVOICE_TYPE = '<cbc:InvoiceTypeCode listID="'
_TYPE_BY_ROOT = {"<CreditNote ": "07", "<DebitNote ": "08"}


def key_of_text(xml: str) -> tuple[str, str, str, int] | None:
    """(emisor_ruc, tipo, serie, numero) as `ubl.render` writes them in a voucher's text, or None when the text
    is not laid out that way. Only a candidate: the caller compares the text's hash with the row's."""
    start = len(ubl.XML_DECLARATION)
    if not xml.startswith(ubl.XML_DECLARATION):
        return None
    number_at = xml.find("</cbc:CustomizationID><cbc:ID>", start)
    supplier_at = xml.find(_SUPPLIER_ID, number_at)
    if number_at < 0 or supplier_at < 0:
        return None
    number_at += len("</cbc:CustomizationID><cbc:ID>")
    serie, _, numero = xml[number_at:xml.find("<", number_at)].rpartition("-")
    tipo = next((code for root, code in _TYPE_BY_ROOT.items() if xml.startswith(root, start)), None)
    if tipo is None:
        type_at = xml.find(_INVOICE_TYPE, number_at)
        type_at = xml.find(">", type_at) + 1 if type_at >= 0 else -1
        tipo = xml[type_at:xml.find("<", type_at)] if type_at > 0 else ""
    ruc_at = supplier_at + len(_SUPPLIER_ID)
    ruc = xml[ruc_at:xml.find("<", ruc_at)]
    if not (serie and numero.isdigit() and numero.isascii() and tipo and ruc):
        return None
    return ruc, tipo, serie, int(numero)


def _by_text(engine: Engine, columns: str, hash_column: str, text: str, encoded: bytes | None = None,
             environments: tuple[str, ...] | None = None) -> dict | None:
    """The voucher of one of `environments` (the current one by default) whose text is exactly `text`."""
    environments = environments or (current(engine),)
    marks = ", ".join("?" * len(environments))
    digest = hashlib.sha256(encoded if encoded is not None else text.encode("utf-8")).hexdigest()
    key = key_of_text(text)
    if key is not None:
        for row in engine.storage.query(
                f"SELECT {columns}, {hash_column} AS text_sha256 FROM vouchers v"
                f" WHERE environment IN ({marks}) AND emisor_ruc = ? AND tipo = ? AND serie = ? AND numero = ?",
                (*environments, *key)):
            if row.pop("text_sha256") == digest:
                return row
    return engine.storage.query_one(  # rows stored before this scheme (the partial index covers only those)
        f"SELECT {columns} FROM vouchers v WHERE {hash_column} = ? AND canonical = 0 AND environment IN ({marks}) "
        "ORDER BY id DESC LIMIT 1", (digest, *environments))


def find_by_xml(engine: Engine, xml: str) -> dict | None:
    row = _by_text(engine, "id", "xml_sha256", xml)
    return get(engine, row["id"]) if row else None


def find_by_signed_xml(engine: Engine, xml_firmado: str) -> dict | None:
    row = _by_text(engine, "id", "signed_sha256", xml_firmado)
    return get(engine, row["id"]) if row else None


def environment_of_signed(engine: Engine, xml_firmado: str) -> str | None:
    """The environment a signed voucher was generated in, whichever it is; None for one Yupana did not generate."""
    row = _by_text(engine, "environment", "signed_sha256", xml_firmado, environments=NAMES)
    return row["environment"] if row else None


# What operation 2 needs of a voucher found by its text; the text itself is the caller's, so it is not read back.
SIGNING_COLUMNS = ("id, emisor_ruc, tipo, serie, numero, canonical, certificado_id, digest_value, signature_value,"
                   " signature, signature_offset, signed_sha256 IS NOT NULL AS signed")


def find_for_signing(engine: Engine, xml: str, encoded: bytes | None = None) -> dict | None:
    """The voucher whose generated text is exactly `xml` (`encoded`: its UTF-8, when the caller has it), with the
    columns operation 2 needs (not the text)."""
    return _by_text(engine, SIGNING_COLUMNS, "xml_sha256", xml, encoded)


def now_text() -> str:
    """UTC now as «2024-01-31T12:00:00.000000Z» (isoformat: cheaper than strftime, same text)."""
    return datetime.now(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def record_signature(engine: Engine, voucher_id: int, xml_firmado: str, digest_value: str, signature_value: str,
                     certificado_id: str) -> None:
    with engine.storage.write() as conn:
        changed = conn.execute(
            "UPDATE vouchers SET signed_sha256 = ?, digest_value = ?, signature_value = ?, certificado_id = ?,"
            " status = 'firmado', updated_at = ?, signature = NULL, signature_offset = NULL WHERE id = ?",
            (sha256_hex(xml_firmado), digest_value, signature_value, certificado_id, now_text(), voucher_id)).rowcount
        conn.execute("UPDATE voucher_texts SET xml_firmado = ? WHERE voucher_id = ?", (xml_firmado, voucher_id))
    if not changed:
        raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
    engine.events.emit("voucher.changed", {"id": voucher_id, "status": "firmado"})


def record_signature_fragment(engine: Engine, voucher_id: int, signature: str, offset: int, signed_sha256: str,
                              digest_value: str, signature_value: str, certificado_id: str) -> bool:
    """`record_signature` storing only the Signature and where it goes in the stored text (the signed XML is
    `splice_signature(xml, offset, signature)`, of SHA-256 `signed_sha256`). False, and nothing written, when
    the voucher was signed meanwhile (or does not exist)."""
    with engine.storage.write() as conn:
        changed = conn.execute(
            "UPDATE vouchers SET signature = ?, signature_offset = ?, signed_sha256 = ?, digest_value = ?,"
            " signature_value = ?, certificado_id = ?, status = 'firmado', updated_at = ?"
            " WHERE id = ? AND signed_sha256 IS NULL",
            (signature, offset, signed_sha256, digest_value, signature_value, certificado_id, now_text(),
             voucher_id)).rowcount
    if changed:
        engine.events.emit("voucher.changed", {"id": voucher_id, "status": "firmado"})
    return bool(changed)


def set_status(engine: Engine, voucher_id: int, status: str) -> None:
    if status not in STATUSES:
        raise invalid("status", f"El estado «{status}» no es válido: {', '.join(STATUSES)}.")
    with engine.storage.write() as conn:
        changed = conn.execute("UPDATE vouchers SET status = ?, updated_at = ? WHERE id = ?",
                               (status, now_text(), voucher_id)).rowcount
    if not changed:
        raise not_found("voucher_id", f"No existe el comprobante con id {voucher_id}.")
    engine.events.emit("voucher.changed", {"id": voucher_id, "status": status})


LIST_COLUMNS = ("id, environment, emisor_ruc, tipo, serie, numero, nombre_archivo, hash, status, receptor_tipo_documento,"
                " receptor_numero_documento, receptor_nombre, moneda, total, fecha_emision, digest_value,"
                " created_at, updated_at")


def list_vouchers(engine: Engine, search: str | None = None, status: str | None = None,
                  limit: int = 200) -> list[dict]:
    """The current environment's, newest first; `search` matches serie-número, customer number or name, or file
    name."""
    where, params = ["environment = ?"], [current(engine)]  # type: list[str], list[Any]
    if status:
        where.append("status = ?")
        params.append(status)
    if search and search.strip():
        like = f"%{search.strip()}%"
        where.append("(serie || '-' || numero LIKE ? OR receptor_numero_documento LIKE ? OR receptor_nombre LIKE ?"
                     " OR nombre_archivo LIKE ?)")
        params += [like, like, like, like]
    sql = f"SELECT {LIST_COLUMNS} FROM vouchers WHERE " + " AND ".join(where)
    sql += " ORDER BY id DESC LIMIT ?"
    params.append(max(1, int(limit)))
    return engine.storage.query(sql, tuple(params))


def next_numero(engine: Engine, emisor_ruc: str, tipo: str, serie: str) -> int:
    """The next number of a serie in the current environment: sandbox and beta trials never use up real numbers."""
    row = engine.storage.query_one(
        "SELECT MAX(numero) AS last FROM vouchers WHERE environment = ? AND emisor_ruc = ? AND tipo = ? AND serie = ?",
        (current(engine), emisor_ruc, tipo, serie))
    return int(row["last"] or 0) + 1 if row else 1


def find_by_serie_numero(engine: Engine, serie: str, numero: int, emisor_ruc: str | None = None,
                         tipo: str | None = None) -> list[dict]:
    """The vouchers numbered SERIE-NUMERO (a factura and its credit note may share a series), newest first."""
    where, params = ["serie = ?", "numero = ?"], [serie, numero]
    if emisor_ruc:
        where.append("emisor_ruc = ?")
        params.append(emisor_ruc)
    if tipo:
        where.append("tipo = ?")
        params.append(tipo)
    return engine.storage.query(f"SELECT {LIST_COLUMNS} FROM vouchers WHERE {' AND '.join(where)} ORDER BY id DESC",
                                tuple(params))


# ---------------------------------------------------------------- every problem in one answer

def parse_request(engine: Engine, payload: Any) -> GenerarXmlRequest:
    """Operation 1's request; a request with type errors also gets its content problems in the same
    answer (a client fixes its request once), found on a copy with stand-ins for the broken fields."""
    if not isinstance(payload, dict):
        return parse_model(GenerarXmlRequest, payload)
    try:
        return GenerarXmlRequest.model_validate(payload)
    except ValidationError as exc:
        raise _every_problem(engine, payload, exc) from None


def _every_problem(engine: Engine, payload: dict, exc: ValidationError) -> YupanaError:
    typed = translate_validation_error(exc)
    repaired = repaired_for_checks(GenerarXmlRequest, payload, exc)
    if repaired is None:
        return typed
    request, replaced = repaired
    try:
        build_document(engine, request)
    except YupanaError as content:
        more = [d for d in content.details if not _depends_on(d.field or "", replaced)]
        return invalid_many(typed.details + more) if more else typed
    return typed


def _depends_on(field: str, replaced: list[str]) -> bool:
    """Whether a content problem may come from a stand-in: the same field, what is computed from it (the
    line's IGV, the cuotas against the total, the boleta threshold), or inside a replaced object."""
    for path in replaced:
        if field == path or field.startswith((path + ".", path + "[")):
            return True
        line = re.match(r"^(items\[\d+\])\.", path)
        if line and field in (line.group(1), line.group(1) + ".igv"):
            return True
        if path.startswith("items") and field.startswith(("forma_pago", "receptor.numero_documento")):
            return True
        if path.startswith("forma_pago.cuotas") and field == "forma_pago.cuotas":
            return True
    return False
