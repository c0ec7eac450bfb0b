"""The document types Yupana issues, resolved by code (catalogue 01), by XML root or by file name: the one map of
types the engine's paths ask (the builder, the renderer, the voucher store's reading of a text, the signer's check of
a root, SUNAT's sheets, the outbox's sender, the printed voucher).

Yupana's own four are registered here; another type is registered with `register` (or, for a while, `registered`),
as the test of a toy type does (tests/core/invoicing/test_document_plugin.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from app.core.invoicing.documents.credit_note import NOTA_CREDITO_TYPE
from app.core.invoicing.documents.debit_note import NOTA_DEBITO_TYPE
from app.core.invoicing.documents.guia import GUIA_REMITENTE_TYPE, GUIA_TRANSPORTISTA_TYPE
from app.core.invoicing.documents.invoice import BOLETA_TYPE, FACTURA_TYPE
from app.core.invoicing.documents.kind import SEND_BILL, DocumentType, Sender

BUILT_IN = (FACTURA_TYPE, BOLETA_TYPE, NOTA_CREDITO_TYPE, NOTA_DEBITO_TYPE)  # what SUNAT receives by sendBill
GUIAS = (GUIA_REMITENTE_TYPE, GUIA_TRANSPORTISTA_TYPE)  # what SUNAT receives by its GRE REST API
OWN = BUILT_IN + GUIAS
FILE_STEM = re.compile(r"^(?P<ruc>\d{11})-(?P<tipo>[0-9A-Z]{2})-(?P<serie>[A-Z0-9]{4})-(?P<numero>\d{1,8})$")

_types: dict[str, DocumentType] = {kind.code: kind for kind in OWN}
_lock = threading.Lock()


def register(kind: DocumentType) -> None:
    """Add a document type. Its code must be free, and its root its own unless the types sharing it say which is
    which (an element naming the type, as a factura's and a boleta's cbc:InvoiceTypeCode)."""
    with _lock:
        if kind.code in _types:
            raise ValueError(f"the document type {kind.code} is registered already")
        for other in _types.values():
            if other.identity.root == kind.identity.root and not (other.identity.type_code and kind.identity.type_code):
                raise ValueError(f"the root {kind.identity.root} is the document type {other.code}'s")
        _types[kind.code] = kind


def unregister(code: str) -> None:
    """Remove a document type registered with `register` (Yupana's own stay)."""
    with _lock:
        if any(kind.code == code for kind in OWN):
            raise ValueError(f"the document type {code} is one of Yupana's own")
        _types.pop(code, None)


@contextmanager
def registered(kind: DocumentType) -> Iterator[DocumentType]:
    """`kind` registered while the block runs."""
    register(kind)
    try:
        yield kind
    finally:
        unregister(kind.code)


def get(code: str) -> DocumentType | None:
    return _types.get(code)


def kinds() -> tuple[DocumentType, ...]:
    return tuple(_types.values())


def codes() -> tuple[str, ...]:
    return tuple(_types)


def with_root(root: str) -> tuple[DocumentType, ...]:
    """The types whose XML has this root element (local name)."""
    return tuple(kind for kind in _types.values() if kind.identity.root == root)


def code_of_root(root: str) -> str | None:
    """The type a root element alone names (a CreditNote is a 07); None when the root is shared (an Invoice says
    01 or 03 in cbc:InvoiceTypeCode) or nobody's."""
    found = with_root(root)
    if len(found) == 1 and found[0].identity.type_code is None:
        return found[0].code
    return None


def is_document_root(namespace: str | None, root: str) -> bool:
    """Whether an XML whose root is `root` in `namespace` is a document of a registered type."""
    return any(kind.identity.namespace == namespace for kind in with_root(root))


def by_file_name(name: str) -> DocumentType | None:
    """The type of a file named as SUNAT names vouchers (RUC-TT-SERIE-NUMERO, with .xml or .zip or without)."""
    stem = name.removesuffix(".xml").removesuffix(".zip")
    found = FILE_STEM.match(stem)
    return get(found["tipo"]) if found else None


def sender_for(code: str) -> Sender:
    """How a submission of this type is sent: its type's sender; SUNAT's sendBill for a type Yupana does not
    issue (operation 3 sends any signed voucher SUNAT names)."""
    kind = get(code)
    return kind.sender if kind is not None else SEND_BILL


def is_guia(code: str) -> bool:
    """A guía de remisión: sent to SUNAT's GRE REST platform, by its own route of the local API."""
    return any(kind.code == code for kind in GUIAS)


def sheet_for(code: str) -> str | None:
    """The SUNAT rule sheet a type is judged by (None: none)."""
    kind = get(code)
    return kind.sheet if kind is not None else None


def serie_letters() -> dict[str, str]:
    """The types whose series start with their own letter (facturas F, boletas B): a note takes its voucher's."""
    return {kind.code: kind.numbering.letter for kind in BUILT_IN if kind.numbering.letter}
