"""The voucher builder, pure: a request becomes a complete document of its type (app/core/invoicing/documents/:
facturas and boletas, credit and debit notes, and any type registered beside them), resolved by the request's
`tipo`, as Greenter resolves a builder per document class. The contract's requests (operation 1) are parsed here
with every problem in one 400. It knows nothing of storage or the engine (docs/vouchers.md)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from app.core.contract import (
    GenerarXmlRequest,
    parse_model,
    repaired_for_checks,
    translate_validation_error,
)
from app.core.errors import YupanaError, invalid, invalid_many
from app.core.invoicing.documents import preview, registry
from app.core.invoicing.documents.kind import CompanyOf, DocumentType, NameOf
from app.core.invoicing.documents.lines import _line_cache
from app.core.invoicing.documents.preview import TotalsPreview

__all__ = ["CompanyOf", "NameOf", "TotalsPreview", "_line_cache", "build_document", "parse_request", "preview_totals"]


def build_document(request: GenerarXmlRequest, company_of: CompanyOf, name_of: NameOf, checks: bool = True) -> Any:
    """Compute the whole document from the request with its type's builder; raise one 400 listing every problem
    found. `company_of` gives the issuer's profile by RUC (None: not registered), `name_of` a customer's name by RUC
    (None: unknown). For Yupana's own types the answer is a `ubl.Document`.

    `checks=False` (tests only) keeps only what is needed to render, so SUNAT's own sheets can be
    asked what they say about a voucher Yupana would have refused.
    """
    return _kind(request.tipo, contract=isinstance(request, GenerarXmlRequest)).build(request, company_of, name_of,
                                                                                     checks)


def _kind(tipo: str, contract: bool = False) -> DocumentType:
    """The registered type of `tipo`; for operation 1's request (`contract`), only a type built from it: a guía
    (09, 31) has a request of its own and its own command, so operation 1 refuses it like an unknown type."""
    kind = registry.get(tipo)
    if kind is None or (contract and kind.request is not None):
        raise invalid("tipo", f"El campo «tipo» ({tipo}) debe ser 01 (factura), 03 (boleta), "
                      "07 (nota de crédito) u 08 (nota de débito).", "1003")
    return kind


def preview_totals(request: GenerarXmlRequest | dict[str, Any]) -> TotalsPreview:
    """The amounts the builder would compute for `request` — each line's, the totals by tax scheme, the global
    discount, IGV, ICBPER, the payable total and the detracción — by its type's own builder functions, for a
    request that may be partial (one being typed): an item that cannot be read or computed has no amounts and
    `problems` says why; nothing is raised for them. Needs nothing stored (the amounts do not depend on the issuer).
    Raises one 400 only when the type cannot be told or has no preview."""
    request, items, unread = preview.read_partial(request)
    kind = _kind(request.tipo)
    if kind.preview is None:
        raise invalid("tipo", f"Los comprobantes de tipo {kind.code} ({kind.name}) no ofrecen una vista previa de "
                      "sus importes.")
    found = kind.preview(request, items)
    assert isinstance(found, TotalsPreview)
    return replace(found, problems=(*unread, *found.problems)) if unread else found


# ---------------------------------------------------------------- every problem in one answer

def parse_request(payload: Any, company_of: CompanyOf, name_of: NameOf) -> GenerarXmlRequest:
    """Operation 1's request; a request with type errors also gets its content problems in the same
    answer (a client fixes its request once), found on a copy with stand-ins for the broken fields."""
    if not isinstance(payload, dict):
        return parse_model(GenerarXmlRequest, payload)
    try:
        return GenerarXmlRequest.model_validate(payload)
    except ValidationError as exc:
        raise _every_problem(payload, exc, company_of, name_of) from None


def _every_problem(payload: dict, exc: ValidationError, company_of: CompanyOf, name_of: NameOf) -> YupanaError:
    typed = translate_validation_error(exc)
    repaired = repaired_for_checks(GenerarXmlRequest, payload, exc)
    if repaired is None:
        return typed
    request, replaced = repaired
    assert isinstance(request, GenerarXmlRequest)  # repaired as the model it was asked for
    try:
        build_document(request, company_of, name_of)
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
